"""Shared pieces of the deployment tests (docs/deploy.md): the models, export with a
dynamic batch, the checks on an ExportedProgram, torch.compile with a recompile count, and the
fresh-process runner (deploy_child.py) that loads saved artifacts the way a deployment would.

Every comparison is byte for byte (torch.equal) against the eager model on the same inputs.
"""

import contextlib
import os
import pathlib
import subprocess
import sys
import warnings
import zipfile

import torch
import torch.nn as nn
from torch.utils._python_dispatch import is_traceable_wrapper_subclass

import torch_qplugin
from torch_qplugin import deploy
from torch_qplugin._torch_api import TORCHSCRIPT_DEPRECATION

# torch 2.13's inductor imports torch.utils.mkldnn, whose TorchScript classes warn once at import
# that torch.jit.script_method is deprecated (torch's code, not ours): import it here with that
# one warning silenced, so warnings-as-errors in the tests sees only what the tests do.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=TORCHSCRIPT_DEPRECATION)
    import torch._inductor.compile_fx  # noqa: F401

q = torch.ops.qplugin
aten = torch.ops.aten

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples"))  # examples/models
PKG_PARENT = pathlib.Path(torch_qplugin.__file__).resolve().parent.parent  # the torch_qplugin under test
BATCHES = (1, 8)

# torch's own warning while inductor deep-copies an exported graph (torch 2.13, not ours).
TORCH_TREESPEC_WARNING = "ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning"


# ---- models ------------------------------------------------------------------------------------
# Plain-op models call the plain ops the way a plain module does: integer tensors between layers,
# qparams as Python numbers baked into the graph.
class PlainOpsNet(nn.Module):
    """quantize -> relu -> max_pool -> add_relu -> hardswish -> cat -> adaptive_avg_pool -> dequantize."""

    def forward(self, x):
        a = q.plain_quantize_per_tensor(x, 0.05, 128, torch.uint8)
        r = q.plain_relu(a, 0.05, 128)
        m = q.plain_max_pool2d(r, [2, 2], [2, 2], [0, 0], [1, 1], False)
        s = q.plain_add_relu(m, 0.05, 128, m, 0.05, 128, 0.08, 100)
        h = q.plain_hardswish(s, 0.08, 100, 0.06, 90)
        c = q.plain_cat([s, h], [0.08, 0.06], [100, 90], 1, 0.1, 110)
        p = q.plain_adaptive_avg_pool2d(c, [1, 1])
        return q.plain_dequantize_per_tensor(p, 0.1, 110)


class PlainHeadNet(nn.Module):
    """int8 per-channel input, batch norm, leaky relu, avg pool, upsample, mul, sigmoid, layer norm,
    softmax, mean, comparisons and argmax: three outputs of three dtypes."""

    def __init__(self, channels=6):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.register_buffer("in_scales", torch.rand(channels, generator=g, dtype=torch.float64) * 0.05 + 0.02)
        self.register_buffer("in_zps", torch.randint(-5, 6, (channels,), generator=g))
        self.register_buffer("bn_w", torch.rand(channels, generator=g) + 0.5)
        self.register_buffer("bn_b", torch.randn(channels, generator=g) * 0.1)
        self.register_buffer("bn_mean", torch.randn(channels, generator=g) * 0.1)
        self.register_buffer("bn_var", torch.rand(channels, generator=g) + 0.5)
        self.register_buffer("ln_w", torch.rand(8, generator=g) + 0.5)
        self.register_buffer("ln_b", torch.randn(8, generator=g) * 0.1)

    def forward(self, x):
        qc = q.plain_quantize_per_channel(x, self.in_scales, self.in_zps, 1, torch.int8)
        f = q.plain_dequantize_per_channel(qc, self.in_scales, self.in_zps, 1)
        a = q.plain_quantize_per_tensor(f, 0.04, 3, torch.int8)
        b = q.plain_batch_norm2d(a, 0.04, 3, self.bn_w, self.bn_b, self.bn_mean, self.bn_var, 1e-5, 0.05, -2)
        b = q.plain_leaky_relu(b, 0.05, -2, 0.1, 0.05, -2)
        p = q.plain_avg_pool2d(b, -2, [2, 2], [2, 2], [0, 0], False, True, None)
        u = q.plain_upsample_nearest2d(p, [8, 8])
        m = q.plain_mul(u, 0.05, -2, b, 0.05, -2, 0.03, 0)
        s = q.plain_sigmoid(m, 0.03, 0, 1.0 / 256, -128)
        n = q.plain_layer_norm(s, 1.0 / 256, -128, [8], self.ln_w, self.ln_b, 1e-5, 0.02, 1)
        sm = q.plain_softmax(n, 0.02, 1, 3, 1.0 / 256, -128)
        mean = q.plain_mean(sm, [2, 3], False)
        hot = q.plain_gt.Scalar(n, 0.02, 1, 0.0)
        idx = q.plain_argmax(mean, 1.0 / 256, -128, 1, False)
        return q.plain_dequantize_per_tensor(mean, 1.0 / 256, -128), hot, idx


def plain_ops_case():
    def inputs(batch):
        g = torch.Generator().manual_seed(100 + batch)
        return (torch.randn(batch, 8, 16, 16, generator=g) * 3,)

    return PlainOpsNet().eval(), inputs


def plain_head_case():
    def inputs(batch):
        g = torch.Generator().manual_seed(200 + batch)
        return (torch.randn(batch, 6, 8, 8, generator=g) * 2,)

    return PlainHeadNet().eval(), inputs


def _randn(shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _static(model, fuse, qconfig, calib_shape):
    """Static quantization by torch_qplugin's workflow, plain form (QTensor between layers)."""
    import torch_qplugin.quantization as tq

    torch.manual_seed(0)
    model = fuse(model.eval())
    model.qconfig = getattr(tq, qconfig)
    prepared = tq.prepare(model)
    tq.calibrate(prepared, [_randn(calib_shape, 1 + i) * 2 for i in range(2)])
    return tq.convert(prepared, plain=True).eval()


def _image_inputs(shape):
    return lambda batch: (_randn((batch,) + shape, 300 + batch) * 2,)


def _token_inputs(vocab, length):
    return lambda batch: (
        torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(400 + batch)),
    )


class ResidualBlock(nn.Module):
    """conv-bn-relu, conv-bn, add + relu (FloatFunctional), as ResNet's basic block."""

    def __init__(self, c=16):
        super().__init__()
        from models._stubs import DeQuantStub, FloatFunctional, QuantStub

        self.quant, self.dequant, self.add = QuantStub(), DeQuantStub(), FloatFunctional()
        self.conv1, self.bn1, self.relu = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2)

    def forward(self, x):
        x = self.quant(x)
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.dequant(self.add.add_relu(y, x))

    def fuse_model(self):
        import torch_qplugin.quantization as tq

        return tq.fuse_modules(self, [["conv1", "bn1", "relu"], ["conv2", "bn2"]])


def digits_case():
    from models import DigitsCNN

    torch.manual_seed(0)
    return _static(DigitsCNN(), lambda m: m.fuse_model(), "default_qconfig", (16, 1, 8, 8)), _image_inputs((1, 8, 8))


def residual_case():
    torch.manual_seed(0)
    return (
        _static(ResidualBlock(), lambda m: m.fuse_model(), "default_per_channel_qconfig", (4, 16, 16, 16)),
        _image_inputs((16, 16, 16)),
    )


def mobilenet_case():
    from models import MobileNetV2

    torch.manual_seed(0)
    return (
        _static(MobileNetV2(num_classes=10), lambda m: m.fuse_model(), "default_per_channel_qconfig", (2, 3, 32, 32)),
        _image_inputs((3, 32, 32)),
    )


def _dynamic(model):
    import torch_qplugin.quantization as tq

    return tq.quantize_dynamic(model.eval(), plain=True).eval()


def lstm_case():
    from models import LSTMClassifier

    torch.manual_seed(0)
    return _dynamic(LSTMClassifier(vocab=50, embed=16, hidden=24)), _token_inputs(50, 9)


def transformer_case():
    from models import TransformerClassifier

    torch.manual_seed(0)
    return _dynamic(TransformerClassifier(vocab=50, d_model=32, nhead=4, ff=64, layers=2)), _token_inputs(50, 7)


# name -> () -> (eval-mode model, inputs(batch) -> tuple of args with the batch in dim 0)
CASES = {
    "plain_ops": plain_ops_case,
    "plain_head": plain_head_case,
    "digits_cnn": digits_case,
    "residual_block": residual_case,
    "mobilenet_v2": mobilenet_case,
    "lstm_dynamic": lstm_case,
    "transformer_dynamic": transformer_case,
}


def eager_outputs(model, inputs):
    with torch.no_grad():
        return {b: model(*inputs(b)) for b in BATCHES}


def assert_same(got, expected, what):
    """Byte-for-byte equality of (nested tuples of) tensors: dtype, shape and every value."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), f"{what}: {type(got)} vs {type(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{what}[{i}]")
        return
    assert got.dtype == expected.dtype and got.shape == expected.shape, (
        f"{what}: {got.dtype}{tuple(got.shape)} vs eager {expected.dtype}{tuple(expected.shape)}"
    )
    assert torch.equal(got, expected), f"{what}: values differ from eager"


# ---- export --------------------------------------------------------------------------------------
def export(model, args, strict=False, oblivious=False):
    """torch.export.export of the plain model itself, dim 0 of every argument one dynamic batch;
    oblivious: size-oblivious, for an AOTI package that takes batch 1 (deploy.export's setting)."""
    batch = torch.export.Dim("batch", min=1, max=1024)
    with torch.no_grad(), deploy.batch_oblivious() if oblivious else contextlib.nullcontext():
        return torch.export.export(model, args, dynamic_shapes=tuple({0: batch} for _ in args), strict=strict)


_QUANTIZED_DTYPE_NAMES = {"torch.quint8", "torch.qint8", "torch.qint32", "torch.quint4x2", "torch.quint2x4"}
# float compute that would mean the int8 kernels are bypassed
FLOAT_COMPUTE = {
    "convolution",
    "_convolution",
    "conv1d",
    "conv2d",
    "conv3d",
    "linear",
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "matmul",
    "lstm",
    "gru",
    "rnn_tanh",
    "rnn_relu",
    "_addmm_activation",
}


def _values(val):
    if isinstance(val, (tuple, list)):
        for v in val:
            yield from _values(v)
    elif val is not None:
        yield val


def graph_problems(ep):
    """What in an ExportedProgram is not plain: quantized dtypes, script objects (torch's packed
    params), ops outside qplugin / aten, float conv / matmul. Empty list when clean."""
    problems = []
    for node in ep.graph.nodes:
        for v in _values(node.meta.get("val")):
            if isinstance(v, torch.Tensor) and str(v.dtype) in _QUANTIZED_DTYPE_NAMES:
                problems.append(f"{node.name}: value of dtype {v.dtype}")
            elif is_traceable_wrapper_subclass(v):
                problems.append(f"{node.name}: value of type {type(v).__name__}")
            elif not isinstance(v, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
                problems.append(f"{node.name}: value of type {type(v).__name__}")
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            ns = node.target.namespace
            name = node.target._schema.name.split("::")[-1]
            if ns not in ("qplugin", "aten"):
                problems.append(f"{node.name}: op {node.target} outside qplugin / aten")
            elif ns == "aten" and name in FLOAT_COMPUTE:
                problems.append(f"{node.name}: float compute {node.target}")
    for name, c in ep.constants.items():
        if not isinstance(c, torch.Tensor):
            problems.append(f"constant {name}: {type(c).__name__}")
    for name, t in ep.state_dict.items():
        if str(t.dtype) in _QUANTIZED_DTYPE_NAMES:
            problems.append(f"state {name}: dtype {t.dtype}")
    return problems


def qplugin_calls(ep):
    """The qplugin ops an ExportedProgram calls, one 'qplugin::<name>' (overload dropped) per call."""
    return [
        n.target._schema.name
        for n in ep.graph.nodes
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) and n.target.namespace == "qplugin"
    ]


# ---- torch.compile -------------------------------------------------------------------------------
def compile_outputs(model, inputs, exact=True, oblivious=True):
    """torch.compile(model, fullgraph=True) of the plain model itself, with deploy.compile's options
    (exact: every op eager's kernel, C++ wrapper; else inductor's default mode), under no_grad, its
    batch dim marked dynamic, compiled at batch 1 (size-oblivious unless told otherwise), then run
    at 8 and 16 with dynamo's error_on_recompile: outputs by batch; raises on a graph break or a
    recompile. Inductor's graph cache is off: a cached graph brings the guards of the compile that
    made it (another version of the code), and this checks the guards of this one."""
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, options=deploy.exact_options(cpp_wrapper=True) if exact else None)
    outs = {}
    with torch.no_grad(), torch._inductor.config.patch(fx_graph_cache=False):
        first = inputs(1)
        for a in first:
            torch._dynamo.mark_dynamic(a, 0)
        with deploy.batch_oblivious() if oblivious else contextlib.nullcontext():
            outs[1] = compiled(*first)
        with torch._dynamo.config.patch(error_on_recompile=True):
            for b in BATCHES[1:] + (16,):
                outs[b] = compiled(*inputs(b))
    return outs


# ---- AOTInductor ---------------------------------------------------------------------------------
def aoti_package(ep, path):
    """deploy.aoti_package: torch._inductor.aoti_compile_and_package of an exported program with
    deploy.exact_options(), under no_grad and size-oblivious (for batch 1 in the package's range,
    with export(..., oblivious=True))."""
    return deploy.aoti_package(ep, path)


def package_sources(path):
    """{name: text} of the generated C++ (wrapper and kernels) and the wrapper's extern-op json."""
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n).decode() for n in z.namelist() if n.endswith((".cpp", ".json"))}


# ---- fresh process -------------------------------------------------------------------------------
def run_fresh(jobs, tmp_path, isa=None, load="import"):
    """Runs deploy_child.py in a new interpreter on jobs [(kind, artifact, inputs_file)]; returns
    its results [{batch: outputs}, ...], the qplugin ops each job's run profiled and the child's
    kernel path. isa: QPLUGIN_ISA for the child (None: this process's setting). load: how the child gets the ops ("import":
    import torch_qplugin; "library": only dlopen the .so, as a C++ deployment would)."""
    spec = tmp_path / "jobs.pt"
    result = tmp_path / "results.pt"
    torch.save(
        {"jobs": [(k, str(a), str(i)) for k, a, i in jobs], "load": load, "library": torch_qplugin._ops.library_path()},
        spec,
    )
    env = dict(os.environ, PYTHONPATH=str(PKG_PARENT), OMP_NUM_THREADS="1", AOTI_RUNTIME_CHECK_INPUTS="1")
    if isa is not None:  # else the child inherits this process's QPLUGIN_ISA cap (or none), so its path is ours
        env["QPLUGIN_ISA"] = isa
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(HERE / "deploy_child.py"), str(spec), str(result)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return torch.load(result)


def save_inputs(inputs, path):
    torch.save({b: inputs(b) for b in BATCHES}, path)
    return path
