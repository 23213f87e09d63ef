"""Models written like torchvision's quantizable architectures (tv_patterns.py) go through
torch_qplugin's fuse -> prepare -> calibrate -> convert -> script -> save / load in a fresh
process; their output agrees with fp32 at least as well as torch's own int8 pipeline (its x86
default qconfig) on the same model, and their scripted graph computes every quantized op with a
qplugin:: kernel.

torch is the bar here, not an oracle: on AVX2 CPUs its int8 convs saturate 16-bit intermediates.
Calibration is representative of the test input (same distribution, more samples), as in real use:
torch's default ``reduce_range=True`` leaves 2x headroom above the calibrated range, which hides
out-of-range test inputs; full-range min/max does not need it when calibration is representative.
"""

import copy
import os
import pathlib
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin
import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

import tv_patterns as T
from tv_models import settle as _settle

taq = pytest.importorskip("torch.ao.quantization")
tnnq = pytest.importorskip("torch.ao.nn.quantized")

pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")

PKG_PARENT = pathlib.Path(torch_qplugin.__file__).resolve().parent.parent  # the torch_qplugin under test
OURS = T.toolkit_namespace(tq, nnq.FloatFunctional)
TORCH = T.toolkit_namespace(taq, tnnq.FloatFunctional)

# Every op of a scripted converted model that takes a tensor is a qplugin:: kernel or one of
# these: data movement / metadata on quantized tensors (torchvision's chunk + channel_shuffle,
# flatten), eval-mode dropout (identity), conv's padding_mode path (never taken here, pads the
# plain integer values), and the qparams reads of Quantize.
_DATA_MOVEMENT = {
    "aten::flatten",
    "aten::view",
    "aten::transpose",
    "aten::contiguous",
    "aten::chunk",
    "aten::size",
    "aten::dim",
    "aten::dropout",
    "aten::pad",
    "aten::q_scale",
    "aten::q_zero_point",
    "aten::Float",
    "aten::Int",
}
# Functional calls torchvision makes on quantized tensors in a model's forward: convert never sees
# them, so they stay aten ops and run torch's quantized kernels (docs/migration.md). Here only in
# GoogLeNet's auxiliary head, which eval mode never runs.
_FUNCTIONAL = {"googlenet": {"aten::adaptive_avg_pool2d"}}
# qplugin kernels each pattern must reach (the op that defines the pattern)
_EXPECTED = {
    "resnet18_basicblock": {"qplugin::add_relu", "qplugin::conv2d_relu", "qplugin::conv2d", "qplugin::max_pool2d"},
    "resnet50_bottleneck": {"qplugin::add_relu", "qplugin::conv2d_relu", "qplugin::conv2d"},
    "resnext_grouped": {"qplugin::add_relu", "qplugin::conv2d_relu"},
    "mobilenet_v2": {"qplugin::add", "qplugin::conv2d_relu", "qplugin::conv2d", "qplugin::linear"},
    "mobilenet_v3": {
        "qplugin::mul",
        "qplugin::hardsigmoid",
        "qplugin::hardswish",
        "qplugin::conv2d_relu",
        "qplugin::add",
        "qplugin::adaptive_avg_pool2d",
    },
    "googlenet": {"qplugin::cat", "qplugin::max_pool2d", "qplugin::conv2d_relu"},
    "shufflenet_v2": {"qplugin::cat", "qplugin::conv2d_relu", "qplugin::conv2d"},
}


def _quantize(tk, fp32, data, qconfig):
    m = copy.deepcopy(fp32)
    m.fuse_model(tk.fuse_modules)
    m.qconfig = qconfig
    p = tk.prepare(m)
    with torch.no_grad():
        for x in data:
            p(x)
    return tk.convert(p)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """The models are tiny: a second thread only adds OpenMP barriers (seconds per model on a
    loaded 2-core box)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


_CACHE = {}


def _models(name):
    """(fp32, ours, torch's int8, test input) for one pattern, built once per session."""
    if name not in _CACHE:
        factory, shape = T.MODELS[name]
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(1)
        calib = [torch.randn(8, *shape[1:], generator=g) for _ in range(6)]
        x = torch.randn(*shape, generator=g)
        fp32 = _settle(factory(OURS), calib)
        ours = _quantize(tq, fp32, calib, tq.default_qconfig)
        fp32_t = factory(TORCH)
        fp32_t.load_state_dict(fp32.state_dict())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao's own deprecation notices
            torch.backends.quantized.engine = "x86"
            theirs = _quantize(taq, fp32_t.eval(), calib, taq.get_default_qconfig("x86"))
        _CACHE[name] = (fp32, ours, theirs, x)
    return _CACHE[name]


def _rel_err(a, b):
    return float((a - b).norm() / b.norm())


def _takes_tensors(value):
    t = value.type()
    if isinstance(t, torch._C.ListType):
        t = t.getElementType()
    return isinstance(t, torch._C.TensorType)


def _tensor_op_kinds(graph, out):
    for node in graph.nodes():
        if any(_takes_tensors(v) for v in node.inputs()):
            out.add(node.kind())
        for block in node.blocks():
            _tensor_op_kinds(block, out)
    return out


@pytest.mark.parametrize("name", list(T.MODELS))
def test_pattern_converts_and_agrees_with_fp32_at_least_as_well_as_torch(name):
    fp32, ours, theirs, x = _models(name)
    float_left = [
        n
        for n, m in ours.named_modules()
        if type(m)
        in (
            nn.Conv2d,
            nn.Linear,
            nn.ReLU,
            nn.Hardswish,
            nn.Hardsigmoid,
            nn.MaxPool2d,
            nn.AdaptiveAvgPool2d,
            tnnq.FloatFunctional,
            nnq.FloatFunctional,
        )
    ]
    assert float_left == [], f"{name}: modules left float after convert: {float_left}"
    with torch.no_grad():
        ref = fp32(x)
        err_ours, err_torch = _rel_err(ours(x), ref), _rel_err(theirs(x), ref)
    assert err_ours <= err_torch, f"{name}: |ours - fp32| / |fp32| = {err_ours:.4f}, torch's {err_torch:.4f}"
    assert err_ours < 0.2, f"{name}: relative error {err_ours:.4f}"


@pytest.mark.parametrize("name", list(T.MODELS))
def test_pattern_scripted_graph_computes_on_qplugin_kernels(name):
    _, ours, _, x = _models(name)
    s = torch.jit.script(ours)
    kinds = _tensor_op_kinds(s.inlined_graph, set())
    assert not [k for k in kinds if k.startswith("quantized::")]
    others = {k for k in kinds if not k.startswith(("qplugin::", "prim::"))} - _DATA_MOVEMENT
    assert others == _FUNCTIONAL.get(name, set()), f"{name}: ops outside qplugin:: {sorted(others)}"
    assert _EXPECTED[name] <= kinds, f"{name}: missing {sorted(_EXPECTED[name] - kinds)}"
    with torch.no_grad():
        assert torch.equal(s(x), ours(x))


def test_blocks_without_a_residual_keep_an_uncalibrated_skip_add_that_raises_if_called():
    """torchvision's pattern: every InvertedResidual owns ``skip_add``, only residual ones call it."""
    for name in ("mobilenet_v2", "mobilenet_v3"):
        _, ours, _, x = _models(name)
        blocks = [(n, m) for n, m in ours.named_modules() if hasattr(m, "use_res_connect")]
        assert {m.use_res_connect for _, m in blocks} == {True, False}
        for n, m in blocks:
            is_never = isinstance(m.skip_add, nnq.NeverCalibratedQFunctional)
            assert is_never == (not m.use_res_connect), n
            if is_never:
                qx = torch.ops.qplugin.quantize_per_tensor(torch.randn(1, 4, 2, 2), 0.1, 128, torch.quint8)
                with pytest.raises(RuntimeError, match=rf"'{n}\.skip_add' \(QFunctional"):
                    m.skip_add.add(qx, qx)


def test_googlenet_aux_head_converts_and_raises_naming_it_in_training_mode():
    _, ours, _, x = _models("googlenet")
    q = copy.deepcopy(ours)
    s = torch.jit.script(q)
    q.train()
    with pytest.raises(RuntimeError, match=r"'aux1\.conv\.conv' \(QuantizedConvReLU2d"):
        q(x)
    s.train()
    with pytest.raises(torch.jit.Error, match=r"'aux1\.conv\.conv' \(QuantizedConvReLU2d"):
        s(x)


def test_torch_prepared_mobilenet_v2_converts_with_our_mapping_and_names_the_skip_adds():
    fp32, ours, _, x = _models("mobilenet_v2")
    factory, shape = T.MODELS["mobilenet_v2"]
    m = factory(TORCH)
    m.load_state_dict(fp32.state_dict())
    m.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's own deprecation notices
        m.fuse_model(taq.fuse_modules)
        m.qconfig = tq.default_qconfig
        p = taq.prepare(m)
        with torch.no_grad():
            p(x)
        q = taq.convert(p, mapping=tq.get_default_static_quant_module_mappings())
    never = [n for n, mod in q.named_modules() if isinstance(mod, nnq.NeverCalibratedQFunctional)]
    assert never and all(n.startswith("features.") and n.endswith(".skip_add") for n in never)
    assert f"'{never[0]}'" in q.get_submodule(never[0])._qplugin_uncalibrated
    with torch.no_grad():
        assert torch.isfinite(torch.jit.script(q)(x)).all()


_LOAD = r"""
import sys, torch, torch_qplugin
bad = []
for name, model_path, data_path in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    m = torch.jit.load(model_path)
    x, expected = torch.load(data_path)
    with torch.no_grad():
        got = m(x)
    if not torch.equal(got, expected):
        bad.append(name)
print("BAD:" + ",".join(bad) if bad else "OK")
"""


def test_scripted_patterns_load_in_a_fresh_process_with_identical_outputs(tmp_path):
    args = []
    for name in T.MODELS:
        _, ours, _, x = _models(name)
        s = torch.jit.script(ours)
        torch.jit.save(s, str(tmp_path / f"{name}.pt"))
        with torch.no_grad():
            torch.save((x, s(x)), str(tmp_path / f"{name}.io.pt"))
        args += [name, str(tmp_path / f"{name}.pt"), str(tmp_path / f"{name}.io.pt")]
    env = dict(os.environ, PYTHONPATH=str(PKG_PARENT))
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _LOAD] + args, capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "OK", proc.stdout + proc.stderr[-2000:]
