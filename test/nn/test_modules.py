"""torch_qplugin.nn.quantized modules vs torch.ao.nn.quantized: state_dicts load across, outputs
within a quantization step, reprs, deepcopy / torch.save, errors."""

import copy
import io
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.nn.quantized.dynamic as nnqd
import torch_qplugin.nn.quantized.functional as qF
import torch_qplugin.quantization as tq

tnnq = pytest.importorskip("torch.ao.nn.quantized")
tnnqd = pytest.importorskip("torch.ao.nn.quantized.dynamic")
tnniq = pytest.importorskip("torch.ao.nn.intrinsic.quantized")

import reference as ref  # noqa: E402
from torch_oracle import (  # noqa: E402
    assert_matches_torch_where_exact,
    assert_quantize_matches_torch,
    int8_gemm_exact,
    quantize_exact,
    seven_bit,
)

Q = torch.ops.qplugin


def qx(shape, scale=0.05, zp=120, dtype=torch.quint8, lo=-4.0, hi=4.0):
    x = torch.rand(shape) * (hi - lo) + lo
    return Q.quantize_per_tensor(x, scale, zp, dtype)


def qweight(shape, per_channel):
    w = torch.randn(shape) * 0.3
    if per_channel:
        scales = (w.reshape(shape[0], -1).abs().amax(1) / 127.0).double().clamp_min(1e-4)
        return Q.quantize_per_channel(w, scales, torch.zeros(shape[0], dtype=torch.long), 0, torch.qint8)
    return Q.quantize_per_tensor(w, float(w.abs().max() / 127.0), 0, torch.qint8)


def steps(a, b):
    """Largest difference in output quantization steps (same qparams expected)."""
    # torch stores scales as float32 tensors in state_dicts: equal to 1e-7 relative
    assert a.q_scale() == pytest.approx(b.q_scale(), rel=1e-6) and a.q_zero_point() == b.q_zero_point()
    return int((a.int_repr().int() - b.int_repr().int()).abs().max()) if a.numel() else 0


def _torch_module(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(*args, **kw)


def _check_gemm_module(ours, theirs, x, expect_int, *args):
    """``ours(x, *args)`` within 1 step of the float64 reference ``expect_int(x)``; equal to torch's
    module within 1 step where torch is exact on this CPU (torch_oracle), and always on the
    7-bit copy of ``x``, where torch cannot saturate."""
    w = ours._weight_bias()[0]
    y = ours(x, *args)
    ref.assert_within_steps(y, expect_int(x), 1, what="vs float64 reference")
    assert_matches_torch_where_exact(y, theirs(x, *args), x, w, what="vs torch")
    x7 = seven_bit(x)
    verdict = int8_gemm_exact(x7, w)
    assert verdict, verdict.why
    assert steps(ours(x7, *args), theirs(x7, *args)) <= 1, verdict.why


def _same_weights(ours, theirs):
    w1, b1 = ours._weight_bias()
    w2, b2 = theirs._weight_bias()
    assert torch.equal(w1.int_repr(), w2.int_repr()) and w1.qscheme() == w2.qscheme()
    assert (b1 is None) == (b2 is None)
    if b1 is not None:
        assert torch.equal(b1, b2)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_loads_torch_state_dict_and_matches(per_channel, bias):
    t = _torch_module(tnnq.Linear, 19, 7, bias_=bias)
    t.set_weight_bias(qweight((7, 19), per_channel), torch.randn(7) if bias else None)
    t.scale, t.zero_point = 0.11, 60
    ours = nnq.Linear(19, 7, bias_=bias)
    ours.load_state_dict(t.state_dict())
    _same_weights(ours, t)
    assert ours.scale == pytest.approx(0.11, rel=1e-6) and ours.zero_point == 60
    w, b = ours._weight_bias()
    expect = lambda x: ref.linear_ref(x, w, b, ours.scale, ours.zero_point)  # noqa: E731
    _check_gemm_module(ours, t, qx((5, 19)), expect)
    x3 = qx((2, 3, 19))
    assert ours(x3).shape == (2, 3, 7)
    _check_gemm_module(ours, t, x3, expect)
    ours.scale = t.scale  # (the state_dict stored it as float32)
    assert repr(ours) == repr(t)
    # and back: torch loads ours
    t2 = _torch_module(tnnq.Linear, 19, 7, bias_=bias)
    t2.load_state_dict(ours.state_dict())
    _same_weights(ours, t2)


@pytest.mark.parametrize(
    "cls_name,wshape,xshape,kw",
    [
        ("Conv1d", (6, 4, 3), (2, 4, 17), dict(stride=2, padding=1)),
        ("Conv2d", (8, 3, 3, 3), (2, 3, 11, 9), dict(stride=1, padding=1)),
        ("Conv2d", (8, 2, 3, 3), (1, 4, 10, 10), dict(stride=2, padding=2, dilation=2, groups=2)),
        ("Conv2d", (6, 1, 3, 3), (1, 6, 9, 9), dict(padding=1, groups=6)),
        ("Conv3d", (4, 3, 3, 3, 3), (1, 3, 6, 7, 5), dict(padding=1)),
    ],
)
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_loads_torch_state_dict_and_matches(cls_name, wshape, xshape, kw, per_channel):
    cin = wshape[1] * kw.get("groups", 1)
    args = (cin, wshape[0], wshape[2:])
    t = _torch_module(getattr(tnnq, cls_name), *args, **kw)
    t.set_weight_bias(qweight(wshape, per_channel), torch.randn(wshape[0]))
    t.scale, t.zero_point = 0.2, 70
    ours = getattr(nnq, cls_name)(*args, **kw)
    ours.load_state_dict(t.state_dict())
    _same_weights(ours, t)
    x = qx(xshape)
    nd = len(xshape) - 2
    w, b = ours._weight_bias()
    geom = [
        tuple(kw.get(k, d) for _ in range(nd)) if isinstance(kw.get(k, d), int) else kw[k]
        for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))
    ]
    _check_gemm_module(
        ours, t, x, lambda x: ref.qconv_ref(x, w, b, *geom, kw.get("groups", 1), ours.scale, ours.zero_point)
    )
    if len(xshape) == 4:
        xcl = x.contiguous(memory_format=torch.channels_last)
        assert torch.equal(ours(xcl).int_repr(), ours(x).int_repr())
    ours.scale = t.scale  # (the state_dict stored it as float32)
    assert repr(ours) == repr(t)


def test_fused_modules_match_torch():
    t = _torch_module(tnniq.LinearReLU, 12, 6)
    t.set_weight_bias(qweight((6, 12), True), torch.randn(6))
    t.scale, t.zero_point = 0.05, 0
    ours = nnq.LinearReLU(12, 6)
    ours.load_state_dict(t.state_dict())
    w, b = ours._weight_bias()
    _check_gemm_module(ours, t, qx((4, 12)), lambda x: ref.linear_ref(x, w, b, ours.scale, ours.zero_point, relu=True))
    for name in ("ConvReLU2d", "ConvAdd2d", "ConvAddReLU2d"):
        t = _torch_module(getattr(tnniq, name), 4, 6, 3, padding=1)
        t.set_weight_bias(qweight((6, 4, 3, 3), True), torch.randn(6))
        t.scale, t.zero_point = 0.1, 64
        ours = getattr(nnq, name)(4, 6, 3, padding=1)
        ours.load_state_dict(t.state_dict())
        x = qx((2, 4, 7, 7))
        if "Add" in name:
            acc = qx((2, 6, 7, 7), scale=0.07, zp=100)
            # torch runs conv2d_add on its onednn engine only: float64 reference instead
            wf = ours.weight().dequantize().double()
            real = torch.nn.functional.conv2d(x.dequantize().double(), wf, ours.bias().double(), padding=1)
            real = real + acc.dequantize().double()
            if "ReLU" in name:
                real = real.relu()
            qref = (real / ours.scale).round() + ours.zero_point
            got = ours(x, acc)
            assert (got.int_repr().double() - qref.clamp(0, 255)).abs().max() <= 1, name
        else:
            w, b = ours._weight_bias()
            _check_gemm_module(
                ours,
                t,
                x,
                lambda x: ref.qconv_ref(x, w, b, (1, 1), (1, 1), (1, 1), 1, ours.scale, ours.zero_point, relu=True),
            )
    for name in ("ConvReLU1d", "ConvReLU3d"):
        k = 3 if name.endswith("1d") else (3, 3, 3)
        t = _torch_module(getattr(tnniq, name), 3, 5, k)
        ours = getattr(nnq, name)(3, 5, k)
        ours.load_state_dict(t.state_dict())
        x = qx((1, 3, 8) if name.endswith("1d") else (1, 3, 5, 5, 5))
        nd = 1 if name.endswith("1d") else 3
        w, b = ours._weight_bias()
        _check_gemm_module(
            ours,
            t,
            x,
            lambda x: ref.qconv_ref(
                x, w, b, (1,) * nd, (0,) * nd, (1,) * nd, 1, ours.scale, ours.zero_point, relu=True
            ),
        )


@pytest.mark.parametrize(
    "make_ours,make_torch",
    [
        (lambda: nnq.ReLU(), lambda: nn.ReLU()),
        (lambda: nnq.ReLU6(), lambda: _torch_module(tnnq.ReLU6)),
        (lambda: nnq.Hardswish(0.04, 10), lambda: _torch_module(tnnq.Hardswish, 0.04, 10)),
        (lambda: nnq.ELU(0.05, 90, 0.7), lambda: _torch_module(tnnq.ELU, 0.05, 90, 0.7)),
        (lambda: nnq.LeakyReLU(0.03, 40, 0.1), lambda: _torch_module(tnnq.LeakyReLU, 0.03, 40, 0.1)),
        (lambda: nnq.Sigmoid(1 / 256.0, 0), lambda: _torch_module(tnnq.Sigmoid, 1 / 256.0, 0)),
        (lambda: nnq.MaxPool2d(3, 2, 1), lambda: nn.MaxPool2d(3, 2, 1)),
        (lambda: nnq.MaxPool2d(2, ceil_mode=True), lambda: nn.MaxPool2d(2, ceil_mode=True)),
        (lambda: nnq.AvgPool2d(3, 2, 1), lambda: nn.AvgPool2d(3, 2, 1)),
        (lambda: nnq.AvgPool2d(2, count_include_pad=False), lambda: nn.AvgPool2d(2, count_include_pad=False)),
        (lambda: nnq.AdaptiveAvgPool2d((3, 2)), lambda: nn.AdaptiveAvgPool2d((3, 2))),
        (lambda: nnq.AdaptiveAvgPool2d(1), lambda: nn.AdaptiveAvgPool2d(1)),
    ],
)
def test_activation_and_pool_modules_match_torch(make_ours, make_torch):
    ours, theirs = make_ours(), make_torch()
    x = qx((2, 3, 9, 8))
    a, b = ours(x), theirs(x)
    assert a.shape == b.shape
    assert steps(a, b) <= 1
    assert repr(ours).replace("Quantized", "") == repr(theirs).replace("Quantized", "")


def test_qfunctional_matches_torch():
    t = _torch_module(tnnq.QFunctional)
    t.scale, t.zero_point = 0.08, 100
    ours = nnq.QFunctional()
    ours.load_state_dict(t.state_dict())
    assert ours.scale == pytest.approx(0.08, rel=1e-6) and ours.zero_point == 100
    a, b = qx((2, 3, 4)), qx((2, 3, 4), scale=0.03, zp=128)
    for op in ("add", "add_relu", "mul"):
        assert steps(getattr(ours, op)(a, b), getattr(t, op)(a, b)) <= 1, op
    assert steps(ours.cat([a, b], 1), t.cat([a, b], 1)) <= 1
    for op in ("add_scalar", "mul_scalar"):
        r1, r2 = getattr(ours, op)(a, 0.7), getattr(t, op)(a, 0.7)
        torch.testing.assert_close(r1.dequantize(), r2.dequantize(), atol=2 * r2.q_scale(), rtol=0)
    ff = nnq.FloatFunctional()
    torch.testing.assert_close(ff.add(a.dequantize(), b.dequantize()), a.dequantize() + b.dequantize())


def test_quantize_dequantize_modules():
    q = nnq.Quantize(0.1, 3, torch.quint8)
    x = torch.randn(4, 5)
    y = q(x)
    t = _torch_module(tnnq.Quantize, 0.1, 3, torch.quint8)
    assert torch.equal(
        y.int_repr(), torch.from_numpy(ref.quantize_per_tensor_ref(x.numpy(), 0.1, 3, torch.quint8)).byte()
    )
    assert_quantize_matches_torch(y, t(x), x, torch.quint8, 0.1, what="Quantize vs torch's")
    assert set(q.state_dict()) == set(t.state_dict())
    torch.testing.assert_close(nnq.DeQuantize()(y), y.dequantize())
    with pytest.raises(RuntimeError, match="already quantized"):
        q(y)


def test_dynamic_linear_matches_float_and_loads_torch_state_dict():
    lin = nn.Linear(16, 8)
    t = _torch_module(tnnqd.Linear, 16, 8)
    t.set_weight_bias(qweight((8, 16), True), lin.bias.detach())
    ours = nnqd.Linear(16, 8)
    ours.load_state_dict(t.state_dict())
    _same_weights(ours, t)
    x = torch.randn(5, 16)
    ref = torch.nn.functional.linear(x, t.weight().dequantize(), lin.bias.detach())
    torch.testing.assert_close(ours(x), ref, atol=0.05, rtol=0.05)
    assert ours(x).dtype == torch.float32
    q = nnqd.Linear.from_float(_with_qconfig(lin, tq.default_dynamic_qconfig))
    torch.testing.assert_close(q(x), lin(x), atol=0.05, rtol=0.05)


def _with_qconfig(m, qc):
    m.qconfig = qc
    return m


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True, batch_first=True)])
def test_dynamic_rnn_close_to_float(cls, kw):
    f = cls(6, 5, **kw).eval()
    q = tq.quantize_dynamic(nn.Sequential(f), {cls}).__getitem__(0)
    assert type(q).__module__.startswith("torch_qplugin")
    x = torch.randn(3, 4, 6)
    out_f, h_f = f(x)
    out_q, h_q = q(x)
    torch.testing.assert_close(out_q, out_f, atol=0.05, rtol=0)
    if cls is nn.LSTM:
        torch.testing.assert_close(h_q[0], h_f[0], atol=0.05, rtol=0)
        torch.testing.assert_close(h_q[1], h_f[1], atol=0.05, rtol=0)
    else:
        torch.testing.assert_close(h_q, h_f, atol=0.05, rtol=0)


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell, nn.RNNCell])
def test_dynamic_cells_close_to_float(cls):
    f = cls(6, 5)
    q = tq.quantize_dynamic(nn.Sequential(f), {cls})[0]
    x, h = torch.randn(3, 6), torch.randn(3, 5)
    if cls is nn.LSTMCell:
        hx = (h, torch.randn(3, 5))
        for a, b in zip(q(x, hx), f(x, hx)):
            torch.testing.assert_close(a, b, atol=0.05, rtol=0)
    else:
        torch.testing.assert_close(q(x, h), f(x, h), atol=0.05, rtol=0)


def _roundtrips(m, *inputs):
    out = m(*inputs)
    m2 = copy.deepcopy(m)
    assert torch.equal(
        m2(*inputs).int_repr() if out.is_quantized else m2(*inputs), out.int_repr() if out.is_quantized else out
    )
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    m3 = torch.load(buf, weights_only=False)
    r = m3(*inputs)
    assert torch.equal(r.int_repr() if out.is_quantized else r, out.int_repr() if out.is_quantized else out)
    m4 = type(m).__new__(type(m))
    return m2, m3, m4


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda: nnq.Linear(8, 4), (3, 8)),
        (lambda: nnq.Conv2d(3, 4, 3), (1, 3, 6, 6)),
        (lambda: nnq.Conv1d(3, 4, 3), (1, 3, 6)),
        (lambda: nnq.Conv3d(3, 4, 3), (1, 3, 4, 4, 4)),
        (lambda: nnq.ConvReLU2d(3, 4, 3), (1, 3, 6, 6)),
        (lambda: nnq.LinearReLU(8, 4), (3, 8)),
    ],
)
def test_deepcopy_and_whole_module_save(make, shape):
    m = make()
    w, b = m._weight_bias()
    m.set_weight_bias(qweight(tuple(w.shape), True), torch.randn(w.shape[0]))
    m.scale, m.zero_point = 0.1, 5
    _roundtrips(m, qx(shape))
    # state_dict round trip between two of ours
    m2 = make()
    m2.load_state_dict(m.state_dict())
    _same_weights(m2, m)


def test_dynamic_modules_deepcopy_and_save():
    lstm = tq.quantize_dynamic(nn.Sequential(nn.LSTM(4, 3)), {nn.LSTM})[0]
    x = torch.randn(2, 1, 4)
    out = lstm(x)[0]
    assert torch.equal(copy.deepcopy(lstm)(x)[0], out)
    buf = io.BytesIO()
    torch.save(lstm, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=False)(x)[0], out)


def test_float_input_error_says_insert_quantstub():
    for m, x in [
        (nnq.Linear(4, 2), torch.randn(2, 4)),
        (nnq.Conv2d(3, 3, 1), torch.randn(1, 3, 4, 4)),
        (nnq.ReLU(), torch.randn(3)),
        (nnq.MaxPool2d(2), torch.randn(1, 1, 4, 4)),
    ]:
        with pytest.raises(RuntimeError, match="got a float tensor.*insert a QuantStub"):
            m(x)


def test_state_dict_wrong_shape_raises():
    src = nnq.Linear(5, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight.*\(3, 5\).*\(4, 5\)"):
        nnq.Linear(5, 4).load_state_dict(src.state_dict())
    with pytest.raises(RuntimeError, match=r"size mismatch for weight"):
        nnq.Conv2d(3, 4, 3).load_state_dict(nnq.Conv2d(3, 4, 5).state_dict())
    with pytest.raises(RuntimeError, match=r"Missing key.*scale"):
        sd = src.state_dict()
        del sd["scale"]
        nnq.Linear(5, 3).load_state_dict(sd)


def test_conv_padding_modes_and_ctor_errors():
    with pytest.raises(ValueError, match="padding_mode"):
        nnq.Conv2d(3, 3, 3, padding_mode="bogus")
    with pytest.raises(ValueError, match="divisible by groups"):
        nnq.Conv2d(3, 4, 3, groups=2)
    for mode in ("reflect", "replicate", "circular"):
        m = nnq.Conv2d(2, 2, 3, padding=1, padding_mode=mode)
        m.set_weight_bias(qweight((2, 2, 3, 3), False), None)
        x = qx((1, 2, 5, 5))
        fm = nn.Conv2d(2, 2, 3, padding=1, padding_mode=mode, bias=False)
        fm.weight.data = m.weight().dequantize()
        ref = fm(x.dequantize()).detach()
        torch.testing.assert_close(
            m(x).dequantize(), Q.dequantize(Q.quantize_per_tensor(ref, 1.0, 0, torch.quint8)), atol=1.0, rtol=0
        )
        assert "padding_mode=" + mode in repr(m)


def test_functional_matches_torch():
    tqF = pytest.importorskip("torch.ao.nn.quantized.functional")
    x = qx((2, 4, 9, 9))
    w = qweight((6, 4, 3, 3), True)
    b = torch.randn(6)
    for xc in (x, seven_bit(x)):
        y = qF.conv2d(xc, w, b, padding=1, scale=0.2, zero_point=10)
        ref.assert_within_steps(y, ref.qconv_ref(xc, w, b, (1, 1), (1, 1), (1, 1), 1, 0.2, 10), 1)
        assert_matches_torch_where_exact(
            y, tqF.conv2d(xc, w, b, padding=1, scale=0.2, zero_point=10), xc, w, what="conv2d vs torch"
        )
    xl, wl = qx((3, 10)), qweight((5, 10), False)
    for xc in (xl, seven_bit(xl)):
        y = qF.linear(xc, wl, None, 0.1, 50)
        ref.assert_within_steps(y, ref.linear_ref(xc, wl, None, 0.1, 50), 1)
        assert_matches_torch_where_exact(y, tqF.linear(xc, wl, None, 0.1, 50), xc, wl, what="linear vs torch")
    assert int8_gemm_exact(seven_bit(x), w) and int8_gemm_exact(seven_bit(xl), wl)
    assert steps(qF.max_pool2d(x, 2), tqF.max_pool2d(x, 2)) == 0
    assert steps(qF.avg_pool2d(x, 3, 2, 1), tqF.avg_pool2d(x, 3, 2, 1)) <= 1
    assert steps(qF.adaptive_avg_pool2d(x, (4, 3)), tqF.adaptive_avg_pool2d(x, (4, 3))) <= 1
    assert steps(qF.interpolate(x, scale_factor=2), tqF.interpolate(x, scale_factor=2)) == 0
    assert steps(qF.interpolate(x, size=(5, 13)), tqF.interpolate(x, size=(5, 13))) == 0
    assert steps(qF.hardswish(x, 0.03, 20), tqF.hardswish(x, 0.03, 20)) <= 1
    assert steps(qF.elu(x, 0.05, 80), tqF.elu(x, 0.05, 80)) <= 1
    assert steps(qF.leaky_relu(x, 0.2), tqF.leaky_relu(x, 0.2)) <= 1
    if quantize_exact(x.dtype):  # torch quantizes relu6's bound by our rule
        assert steps(qF.relu6(x), torch.nn.functional.relu6(x)) == 0
    assert steps(qF.clamp(x, -1.0, 2.0), tqF.clamp(x, -1.0, 2.0)) <= 1
    assert steps(qF.hardsigmoid(x), torch.nn.functional.hardsigmoid(x)) <= 1
    assert (
        steps(
            qF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
            tqF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
        )
        <= 1
    )
    with warnings.catch_warnings():  # torch deprecates its upsample_bilinear
        warnings.simplefilter("ignore")
        theirs = tqF.upsample_bilinear(x, scale_factor=2)
    assert steps(qF.upsample_bilinear(x, scale_factor=2), theirs) <= 1
    with pytest.raises(NotImplementedError, match="mode should be 'nearest' or 'bilinear'"):
        qF.interpolate(x, scale_factor=2, mode="area")


@pytest.mark.parametrize("dtype,zp", [(torch.quint8, 120), (torch.qint8, -5)])
def test_hardsigmoid_module_matches_torchs_quantized_hardsigmoid(dtype, zp):
    """torch's eager convert leaves nn.Hardsigmoid float, running aten's quantized kernel with
    fixed output qparams (1/256, 0 for quint8; 1/256, -128 for qint8): ours gives the same."""
    x = Q.quantize_per_tensor(torch.rand(2, 3, 9, 8) * 10 - 5, 0.05, zp, dtype)
    ours, theirs = nnq.Hardsigmoid()(x), torch.nn.functional.hardsigmoid(x)
    assert (ours.q_scale(), ours.q_zero_point()) == (theirs.q_scale(), theirs.q_zero_point())
    assert steps(ours, theirs) <= 1
    fixed = nnq.Hardsigmoid(0.01, 3)(x)
    assert (fixed.q_scale(), fixed.q_zero_point()) == (0.01, 3)
    with pytest.raises(RuntimeError, match="insert a QuantStub"):
        nnq.Hardsigmoid()(torch.randn(3))
