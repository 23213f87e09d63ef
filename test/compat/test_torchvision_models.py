"""torchvision's eight quantizable models, unmodified (tv_models.py: random weights, their own
fuse_model(), calibrated on random images), converted three ways: torch_qplugin's prepare /
convert, torch.ao.quantization.prepare / convert with torch_qplugin's mapping, and the plain form
(convert(..., plain=True)). With use_for_aten(True) and every other torch QuantizedCPU kernel
replaced by one that raises (only view ops, the quantized tensors' factories and their qparams
reads stay torch's), each runs eager and scripted (plain: eager, and torch.export for the models
whose forward code calls functions on activations) with outputs bit-identical between routes and
tiers; a dispatch mode records the aten ops the models call on quantized tensors, so the
functional calls in their forward code (mobilenet_v2's adaptive_avg_pool2d, inception_v3's pools,
shufflenet_v2's contiguous and mean) are seen running, and torch.profiler sees qplugin's kernel
run under the aten op (torch's without use_for_aten).

Small images (32 x 32; 75 x 75 for inception_v3, the least its stem takes) and batch 1 keep it fast.
"""

import contextlib
import copy
import warnings

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import torch_qplugin
import torch_qplugin.quantization as tq
from torch_qplugin import _aten

import tv_models

pytestmark = [
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated"),
    # torchvision's own notice when GoogLeNet / Inception-v3 are scripted (their eager
    # forward returns a tensor in eval mode, the scripted one a tuple)
    pytest.mark.filterwarnings(r"ignore:Scripted Quantizable\w+ always returns"),
]

SIDE = {"inception_v3": 75}
# The heaviest model converts through one route (ours) and its plain form; the others all three.
ONE_ROUTE = {"resnext101_32x8d"}
# Exported plain programs: the models whose forward code calls functions on activations.
EXPORTED = {"mobilenet_v2", "shufflenet_v2_x1_0"}
# aten ops the model's own forward code calls on quantized tensors (besides views)
FUNCTIONAL = {
    "mobilenet_v2": {"_adaptive_avg_pool2d"},
    "inception_v3": {"avg_pool2d", "quantized_max_pool2d"},
    "shufflenet_v2_x1_0": {"clone", "mean.dim"},
}

# torch's QuantizedCPU kernels that may run: they view or describe a quantized tensor, or make an
# empty one, and compute nothing.
_TORCH_KEPT = {
    "view",
    "_unsafe_view",
    "_reshape_alias",
    "as_strided",
    "alias",
    "t",
    "transpose.int",
    "permute",
    "select.int",
    "slice.Tensor",
    "unsqueeze",
    "squeeze",
    "squeeze.dim",
    "squeeze.dims",
    "expand",
    "unfold",
    "split.Tensor",
    "split_with_sizes",
    "unbind.int",
    "chunk",
    "narrow",
    "detach",
    "set_.source_Storage_storage_offset",
    "set_.source_Storage",
    "_empty_affine_quantized",
    "_empty_per_channel_affine_quantized",
    "empty_quantized",
    "empty.memory_format",
    "empty_like",
    "q_scale",
    "q_zero_point",
    "q_per_channel_scales",
    "q_per_channel_zero_points",
    "q_per_channel_axis",
    "qscheme",
    "is_contiguous",
    "is_set_to",
    "size.int",
    "stride.int",
}


def _name(func):
    n = func.name().split("::", 1)[1]
    return n[: -len(".default")] if n.endswith(".default") else n


@contextlib.contextmanager
def torch_quantized_kernels_raise():
    """Every torch QuantizedCPU kernel of aten outside _TORCH_KEPT and qplugin's table raises (with
    use_for_aten(False), those in qplugin's table that torch has too)."""
    lib = torch.library.Library("aten", "IMPL")  # noqa: TOR901 - freed on exit, torch's kernels come back
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
        for qualname in torch._C._dispatch_get_all_op_names():
            name = qualname[len("aten::") :]
            ours = name in _aten._MISSING or (name in _aten._TABLE and _aten._OVERRIDE_LIB is not None)
            if (
                not qualname.startswith("aten::")
                or name in _TORCH_KEPT
                or ours
                or not torch._C._dispatch_has_kernel_for_dispatch_key(qualname, "QuantizedCPU")
            ):
                continue
            lib.impl(name, _raiser(qualname), "QuantizedCPU")
    try:
        yield
    finally:
        lib._destroy()


def _raiser(qualname):
    def kernel(*args, **kwargs):
        raise AssertionError(f"torch's QuantizedCPU kernel of {qualname} ran")

    return kernel


class _QuantizedOps(TorchDispatchMode):
    """Records the aten ops called with a quantized tensor argument."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == "aten" and any(
            isinstance(a, torch.Tensor) and a.is_quantized for a in torch.utils._pytree.tree_leaves((args, kwargs))
        ):
            self.seen.add(_name(func))
        return func(*args, **kwargs)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(autouse=True, scope="module")
def _ours_for_aten():
    was = torch_qplugin.use_for_aten(True)
    yield
    torch_qplugin.use_for_aten(was)


def _data(name):
    """Calibration batches and a test image."""
    side = SIDE.get(name, 32)
    g = torch.Generator().manual_seed(1)
    return [torch.randn(4, 3, side, side, generator=g) for _ in range(2)], torch.randn(1, 3, side, side, generator=g)


def _prepared(tk, fp32, calib):
    m = copy.deepcopy(fp32)
    m.qconfig = tq.default_qconfig
    p = tk.prepare(m)
    with torch.no_grad():
        for x in calib:
            p(x)
    return p


def _run(model, x):
    """model(x) with torch's computing quantized kernels raising; the quantized aten ops seen."""
    mode = _QuantizedOps()
    with torch.no_grad(), torch_quantized_kernels_raise(), mode:
        out = model(x)
    if isinstance(out, tuple):  # scripted GoogLeNet / Inception-v3: (logits, aux logits...)
        out = out[0]
    return out, mode.seen


@pytest.mark.parametrize("name", tv_models.NAMES)
def test_model_runs_on_qplugin_kernels_alone_bit_identical_across_routes_and_tiers(name):
    calib, x = _data(name)
    fp32 = tv_models.settle(tv_models.build(name), calib)
    fp32.fuse_model()
    prepared = _prepared(tq, fp32, calib)
    ours = tq.convert(copy.deepcopy(prepared))
    plain = tq.convert(prepared, plain=True)

    out, seen = _run(ours, x)
    unexpected = seen - _TORCH_KEPT - set(_aten._TABLE)
    assert not unexpected, f"{name}: aten ops on quantized tensors without a qplugin kernel: {sorted(unexpected)}"
    assert FUNCTIONAL.get(name, set()) <= seen, f"{name}: expected {FUNCTIONAL.get(name)} among {sorted(seen)}"
    with torch.no_grad():
        ref = fp32(x)
    # random weights and a few random calibration images: torch's own int8 pipeline is as far from
    # fp32 (test_torchvision_patterns.py holds the accuracy bar); this only catches broken outputs
    assert torch.cosine_similarity(out.flatten(), ref.flatten(), 0) > 0.5, f"{name}: unrelated to fp32"

    scripted = torch.jit.script(ours)
    assert torch.equal(_run(scripted, x)[0], out), f"{name}: scripted differs from eager"
    plain_out, plain_seen = _run(plain, x)
    assert plain_seen == set(), f"{name}: the plain form called aten ops on quantized tensors: {plain_seen}"
    assert torch.equal(plain_out, out), f"{name}: the plain form differs from the quantized form"

    if name not in ONE_ROUTE:
        taq = torch.ao.quantization
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch.ao's own deprecation notices
            theirs = taq.convert(_prepared(taq, fp32, calib), mapping=tq.get_default_static_quant_module_mappings())
        assert torch.equal(_run(theirs, x)[0], out), f"{name}: torch.ao's convert with our mapping differs"
        assert torch.equal(_run(torch.jit.script(theirs), x)[0], out)
    if name in EXPORTED:
        with torch.no_grad():
            ep = torch.export.export(plain, (x,))
        assert torch.equal(_run(ep.module(), x)[0], out), f"{name}: the exported plain form differs"


def _profiled(fn):
    """fn()'s result and the names of the ops torch.profiler saw run."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out = fn()
    return out, {e.name for e in prof.events()}


def test_use_for_aten_false_gives_torch_kernels_back():
    qx = torch.ops.qplugin.quantize_per_tensor(torch.rand(1, 8, 4, 4), 0.01, 3, torch.quint8)
    pool = lambda: torch.nn.functional.adaptive_avg_pool2d(qx, 2)  # noqa: E731
    ours, ran = _profiled(pool)
    assert {"aten::_adaptive_avg_pool2d", "qplugin::adaptive_avg_pool2d"} <= ran
    assert torch.equal(ours.int_repr(), torch.ops.qplugin.adaptive_avg_pool2d(qx, [2, 2]).int_repr())
    assert torch_qplugin.use_for_aten(False) is True
    try:
        _, ran = _profiled(pool)
        assert "aten::_adaptive_avg_pool2d" in ran and not any(n.startswith("qplugin::") for n in ran)
        with pytest.raises(AssertionError, match=r"torch's QuantizedCPU kernel of aten::quantized_max_pool2d ran"):
            with torch_quantized_kernels_raise():
                torch.nn.functional.max_pool2d(qx, 2)
    finally:
        torch_qplugin.use_for_aten(True)
