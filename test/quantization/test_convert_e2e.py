"""End to end: a model with convs, linears, residual adds, cat, pooling and activations, quantized
by torch_qplugin (and by torch for comparison): outputs, profiler trace, interop, errors."""

import copy
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

taq = pytest.importorskip("torch.ao.quantization")
tnnq = pytest.importorskip("torch.ao.nn.quantized")

from torch_oracle import model_engine, torch_engine  # noqa: E402


class Net(nn.Module):
    def __init__(self, stubs=tq):
        super().__init__()
        self.quant = stubs.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.relu2 = nn.ReLU()
        ff = nnq.FloatFunctional if stubs is tq else tnnq.FloatFunctional
        self.add = ff()
        self.cat = ff()
        self.pool = nn.MaxPool2d(2)
        self.conv3 = nn.Conv2d(16, 12, 1)
        self.hs = nn.Hardswish()
        self.avg = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(12, 16)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.dequant = stubs.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu1(self.bn1(self.conv1(x)))
        z = self.relu2(self.conv2(y))
        r = self.add.add(y, z)
        c = self.cat.cat([r, y], 1)
        c = self.pool(c)
        c = self.hs(self.conv3(c))
        c = self.gap(self.avg(c)).flatten(1)
        return self.dequant(self.fc2(self.relu3(self.fc1(c))))


FUSE = [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]]


def _model(stubs=tq):
    torch.manual_seed(0)
    m = Net(stubs)
    m.bn1.running_mean.uniform_(-0.5, 0.5)
    m.bn1.running_var.uniform_(0.5, 2)
    return m.eval()


def _calib():
    g = torch.Generator().manual_seed(1)
    return [torch.randn(4, 3, 16, 16, generator=g) for _ in range(4)]


def _ours(m=None):
    m = tq.fuse_modules(m or _model(), FUSE)
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    tq.calibrate(p, _calib())
    return tq.convert(p)


def _torch_qconfig():
    return taq.QConfig(
        activation=taq.MinMaxObserver.with_args(dtype=torch.quint8, qscheme=torch.per_tensor_affine),
        weight=taq.PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric),
    )


def _torch_prepared():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = taq.fuse_modules(_model(taq), FUSE)
        m.qconfig = _torch_qconfig()
        p = taq.prepare(m)
    with torch.no_grad():
        for x in _calib():
            p(x)
    return p


def test_converted_model_uses_qplugin_modules_and_matches_torch():
    q = _ours()
    assert isinstance(q.quant, nnq.Quantize) and isinstance(q.conv1, nnq.ConvReLU2d)
    assert isinstance(q.add, nnq.QFunctional) and isinstance(q.pool, nnq.MaxPool2d)
    assert isinstance(q.fc1, nnq.LinearReLU) and isinstance(q.hs, nnq.Hardswish)
    assert not any(hasattr(m, "qconfig") for m in q.modules())
    assert not any(isinstance(getattr(m, "activation_post_process", None), tq.ObserverBase) for m in q.modules())
    engine = model_engine()  # torch's engine that is exact on this CPU (fbgemm saturates on AVX2)
    x = torch.randn(2, 3, 16, 16)
    with torch_engine(engine.why), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = taq.convert(_torch_prepared())
        out_t = t(x)
    out_q, out_f = q(x), _model()(x)
    scale = q.fc2.scale
    assert scale == pytest.approx(t.fc2.scale, rel=1e-6)
    # "within a few output steps" of torch's int8 model on its exact engine here
    assert (out_q - out_t).abs().max() <= 3 * scale, f"vs torch's {engine.why} engine"
    assert (out_q - out_f).abs().max() < 0.1 * out_f.abs().max() + 5 * scale


# aten ops allowed in a converted model's trace: views and metadata, never compute on quantized data
_ALLOWED_ATEN = {
    "aten::flatten",
    "aten::view",
    "aten::reshape",
    "aten::_reshape_alias",
    "aten::as_strided",
    "aten::empty",
    "aten::empty_strided",
    "aten::_empty_affine_quantized",
    "aten::q_scale",
    "aten::q_zero_point",
    "aten::item",
    "aten::_local_scalar_dense",
    "aten::is_nonzero",
    "aten::detach",
    "aten::lift_fresh",
    "aten::alias",
    "aten::t",
    "aten::transpose",
    "aten::expand",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::select",
    "aten::slice",
    "aten::size",
    "aten::_unsafe_view",
    "aten::contiguous",
    "aten::qscheme",
    "aten::resize_",
}


# inside a qplugin kernel, layout copies (e.g. NCHW -> NHWC of an input) are data movement
_ALLOWED_NESTED = _ALLOWED_ATEN | {"aten::contiguous", "aten::clone", "aten::copy_", "aten::empty_like"}


def _trace(fn):
    """(top-level op names, op names nested inside qplugin ops) of one call."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    top, nested = set(), set()
    for e in prof.events():
        (top if e.cpu_parent is None else nested).add(e.name)
    return top, nested


def _trace_ops(fn):
    top, nested = _trace(fn)
    return top | nested


def test_profiler_trace_shows_only_qplugin_ops():
    q = _ours()
    x = torch.randn(2, 3, 16, 16)
    top, nested = _trace(lambda: q(x))
    assert not [o for o in top | nested if o.startswith("quantized::")]
    for needed in (
        "qplugin::quantize_per_tensor",
        "qplugin::conv2d_relu",
        "qplugin::add",
        "qplugin::cat",
        "qplugin::max_pool2d",
        "qplugin::hardswish",
        "qplugin::avg_pool2d",
        "qplugin::adaptive_avg_pool2d",
        "qplugin::linear_relu",
        "qplugin::linear",
        "qplugin::dequantize",
        "qplugin::conv2d",
    ):
        assert needed in top, (needed, sorted(top))
    assert not {o for o in top if not o.startswith("qplugin::")} - _ALLOWED_ATEN, sorted(top)
    assert not {o for o in nested if o.startswith("aten::")} - _ALLOWED_NESTED, sorted(nested)
    # the same check catches torch's converted model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = taq.convert(_torch_prepared())
    assert any(o.startswith("quantized::") for o in _trace_ops(lambda: t(x)))


def test_torch_ao_convert_with_our_mapping():
    p = _torch_prepared()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = taq.convert(p, mapping=tq.get_default_static_quant_module_mappings())
    assert isinstance(q.quant, nnq.Quantize) and isinstance(q.conv1, nnq.ConvReLU2d)
    assert isinstance(q.add, nnq.QFunctional) and isinstance(q.fc2, nnq.Linear)
    x = torch.randn(2, 3, 16, 16)
    ops = _trace_ops(lambda: q(x))
    assert not [o for o in ops if o.startswith("quantized::")]
    ours = _ours()
    assert (q(x) - ours(x)).abs().max() <= 3 * ours.fc2.scale


def test_torch_ao_quantize_dynamic_with_our_mapping():
    m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = taq.quantize_dynamic(m, {nn.Linear}, mapping=tq.get_default_dynamic_quant_module_mappings())
    assert type(q[0]).__module__.startswith("torch_qplugin")
    x = torch.randn(4, 8)
    torch.testing.assert_close(q(x), m(x), atol=0.05, rtol=0.05)


def test_quantize_one_call_and_inplace():
    m = tq.fuse_modules(_model(), FUSE)
    m.qconfig = tq.default_qconfig
    q = tq.quantize(m, tq.calibrate, (_calib(),))
    assert q is not m and isinstance(m.conv1, type(tq.fuse_modules(_model(), FUSE).conv1))
    assert isinstance(q.conv1, nnq.ConvReLU2d)
    q2 = tq.quantize(m, tq.calibrate, (_calib(),), inplace=True)
    assert q2 is m and isinstance(m.conv1, nnq.ConvReLU2d)
    x = torch.randn(1, 3, 16, 16)
    assert torch.equal(q(x), q2(x))


def test_histogram_qconfig_end_to_end():
    m = tq.fuse_modules(_model(), FUSE)
    m.qconfig = tq.default_histogram_qconfig
    q = tq.quantize(m, tq.calibrate, (_calib(),))
    x = torch.randn(2, 3, 16, 16)
    f = _model()(x)
    assert (q(x) - f).abs().max() < 0.15 * f.abs().max() + 5 * q.fc2.scale


def test_qat_end_to_end():
    torch.manual_seed(0)
    m = _model().train()
    m = tq.fuse_modules_qat(m, FUSE)
    m.qconfig = tq.default_qat_qconfig
    data = _calib()

    def train(model, batches):
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        for x in tq.progress(batches, enabled=False):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()

    q = tq.quantize_qat(m, train, (data,))
    assert isinstance(q.conv1, nnq.ConvReLU2d) and isinstance(q.fc1, nnq.LinearReLU)
    out = q(data[0])
    assert out.dtype == torch.float32 and torch.isfinite(out).all()


def test_convert_mapping_missing_a_module_raises():
    m = tq.fuse_modules(_model(), FUSE)
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    tq.calibrate(p, _calib())
    mapping = tq.get_default_static_quant_module_mappings()
    del mapping[nn.Hardswish]
    with pytest.raises(RuntimeError, match=r"no quantized module for observed module\(s\) 'hs'.*Hardswish"):
        tq.convert(p, mapping=mapping)


def test_convert_uncalibrated_raises():
    m = tq.fuse_modules(_model(), FUSE)
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    with pytest.raises(RuntimeError, match="has seen no data; run calibration"):
        tq.convert(p)


def test_float_tensor_reaching_quantized_module():
    m = _model()
    del m.quant  # forgot the QuantStub
    m.quant = nn.Identity()
    m = tq.fuse_modules(m, FUSE)
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    tq.calibrate(p, _calib())
    q = tq.convert(p)
    with pytest.raises(RuntimeError, match="insert a QuantStub"):
        q(torch.randn(1, 3, 16, 16))


def test_torch_converted_state_dict_loads_into_ours():
    """Migration path 2: a model quantized by torch, saved as a state_dict, loads into the same
    model converted by torch_qplugin and then computes what torch's did."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = taq.convert(_torch_prepared())
    sd = t.state_dict()
    ours = _ours()
    ours.load_state_dict(sd)
    assert ours.conv1.scale == pytest.approx(t.conv1.scale, rel=1e-6)
    assert torch.equal(ours.fc1.weight().int_repr(), t.fc1.weight().int_repr())
    x = torch.randn(2, 3, 16, 16)
    # torch's own numbers for that state_dict, from its engine that is exact on this CPU (loading
    # the state_dict repacks the weights for the engine in force)
    engine = model_engine()
    with torch_engine(engine.why), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_exact = copy.deepcopy(t)
        t_exact.load_state_dict(sd)
        out_t = t_exact(x)
    assert (ours(x) - out_t).abs().max() <= 3 * t.fc2.scale, f"vs torch's {engine.why} engine"
    bad = dict(sd)
    bad["fc2._packed_params._packed_params"] = (t.fc1.weight(), t.fc1.bias())
    with pytest.raises(RuntimeError, match=r"size mismatch for fc2.weight"):
        ours.load_state_dict(bad)


def test_torch_prepare_qat_then_convert_with_our_mapping():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = taq.fuse_modules_qat(_model(taq).train(), FUSE)
        m.qconfig = taq.get_default_qat_qconfig("x86")
        p = taq.prepare_qat(m)
        for x in _calib():
            p(x).sum().backward()
        p.eval()
        q = taq.convert(p, mapping=tq.get_default_static_quant_module_mappings())
    assert isinstance(q.conv1, nnq.ConvReLU2d) and isinstance(q.fc1, nnq.LinearReLU)
    x = torch.randn(2, 3, 16, 16)
    assert not [o for o in _trace_ops(lambda: q(x)) if o.startswith("quantized::")]
    assert torch.isfinite(q(x)).all()
