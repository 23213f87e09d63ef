"""Observers and FakeQuantize: same statistics and qparams as torch.ao.quantization's."""

import pytest
import torch

import torch_qplugin.quantization as tq

taq = pytest.importorskip("torch.ao.quantization")

_SHAPES = [(7,), (3, 5), (4, 3, 6, 5)]


def _batches(shape, n=4, scale=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) * scale + i * 0.5 - 1.0 for i in range(n)]


def _assert_same(ours, theirs, data):
    for x in data:
        ours(x)
        theirs(x)
    for name in ("min_val", "max_val"):
        torch.testing.assert_close(getattr(ours, name), getattr(theirs, name), rtol=0, atol=0)
    s1, z1 = ours.calculate_qparams()
    s2, z2 = theirs.calculate_qparams()
    torch.testing.assert_close(s1, s2, rtol=0, atol=0)
    assert torch.equal(z1.long(), z2.long())


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize(
    "dtype,qscheme",
    [
        (torch.quint8, torch.per_tensor_affine),
        (torch.qint8, torch.per_tensor_symmetric),
        (torch.quint8, torch.per_tensor_symmetric),
        (torch.qint8, torch.per_tensor_affine),
    ],
)
@pytest.mark.parametrize("name", ["MinMaxObserver", "MovingAverageMinMaxObserver"])
def test_per_tensor_observers_match_torch(shape, dtype, qscheme, name):
    kw = dict(dtype=dtype, qscheme=qscheme)
    _assert_same(getattr(tq, name)(**kw), getattr(taq, name)(**kw), _batches(shape))


@pytest.mark.parametrize("shape,axis", [((6, 4), 0), ((4, 3, 6, 5), 1), ((8, 3, 3, 3), 0), ((5, 7), -1)])
@pytest.mark.parametrize("qscheme", [torch.per_channel_symmetric, torch.per_channel_affine])
@pytest.mark.parametrize("name", ["PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver"])
def test_per_channel_observers_match_torch(shape, axis, qscheme, name):
    kw = dict(ch_axis=axis, dtype=torch.qint8, qscheme=qscheme)
    _assert_same(getattr(tq, name)(**kw), getattr(taq, name)(**kw), _batches(shape))


@pytest.mark.parametrize("qscheme", [torch.per_tensor_affine, torch.per_tensor_symmetric])
@pytest.mark.parametrize("growing", [False, True])
def test_histogram_observer_matches_torch(qscheme, growing):
    ours = tq.HistogramObserver(bins=256, qscheme=qscheme)
    theirs = taq.HistogramObserver(bins=256, qscheme=qscheme)
    g = torch.Generator().manual_seed(1)
    for i in range(3):
        x = torch.randn(500, generator=g) * (1 + i * growing)
        x[0] = 8.0 * (1 + growing * i)  # an outlier the search should clip
        ours(x)
        theirs(x)
    torch.testing.assert_close(ours.histogram, theirs.histogram, rtol=1e-6, atol=1e-4)
    s1, z1 = ours.calculate_qparams()
    s2, z2 = theirs.calculate_qparams()
    torch.testing.assert_close(s1, s2, rtol=1e-6, atol=0)
    assert torch.equal(z1.long(), z2.long())
    if qscheme == torch.per_tensor_affine:  # outlier clipped: the range is narrower than min..max
        assert float(s1) * 255 < float(ours.max_val - ours.min_val)


def test_customized_range_and_reduce_range():
    ours = tq.MinMaxObserver(dtype=torch.quint8, quant_min=0, quant_max=15)
    theirs = taq.MinMaxObserver(dtype=torch.quint8, quant_min=0, quant_max=15)
    _assert_same(ours, theirs, _batches((10,)))
    assert tq.MinMaxObserver(dtype=torch.qint8, reduce_range=True).quant_max == 63


def test_observer_bad_args():
    with pytest.raises(ValueError, match="qscheme should be per-tensor"):
        tq.MinMaxObserver(qscheme=torch.per_channel_affine)
    with pytest.raises(ValueError, match="should include 0"):
        tq.MinMaxObserver(quant_min=3, quant_max=10)
    with pytest.raises(ValueError, match="qscheme should be per-channel"):
        tq.PerChannelMinMaxObserver(qscheme=torch.per_tensor_affine)


def test_observer_empty_input_and_uncalibrated():
    obs = tq.MinMaxObserver()
    obs(torch.empty(0))
    with pytest.warns(UserWarning, match="must run observer"):
        s, z = obs.calculate_qparams()
    assert float(s) == 1.0 and int(z) == 0


def test_observer_state_dict_roundtrip():
    a = tq.PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
    a(torch.randn(5, 3))
    b = tq.PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.min_val, b.min_val) and torch.equal(a.max_val, b.max_val)


@pytest.mark.parametrize("per_channel", [False, True])
def test_fake_quantize_matches_torch_forward_and_grad(per_channel):
    if per_channel:
        kw = dict(
            observer=tq.MovingAveragePerChannelMinMaxObserver,
            quant_min=-128,
            quant_max=127,
            dtype=torch.qint8,
            qscheme=torch.per_channel_symmetric,
            ch_axis=0,
        )
        kw_t = dict(kw, observer=taq.MovingAveragePerChannelMinMaxObserver)
    else:
        kw = dict(
            observer=tq.MovingAverageMinMaxObserver,
            quant_min=0,
            quant_max=255,
            dtype=torch.quint8,
            qscheme=torch.per_tensor_affine,
        )
        kw_t = dict(kw, observer=taq.MovingAverageMinMaxObserver)
    ours, theirs = tq.FakeQuantize(**kw), taq.FakeQuantize(**kw_t)
    for x in _batches((4, 6)):
        x1 = x.clone().requires_grad_()
        x2 = x.clone().requires_grad_()
        y1, y2 = ours(x1), theirs(x2)
        assert torch.equal(y1, y2)
        (y1 * torch.arange(y1.numel()).reshape(y1.shape)).sum().backward()
        (y2 * torch.arange(y2.numel()).reshape(y2.shape)).sum().backward()
        assert torch.equal(x1.grad, x2.grad)
        assert x1.grad.abs().sum() > 0
    torch.testing.assert_close(ours.scale, theirs.scale, rtol=0, atol=0)


def test_fake_quantize_toggles():
    fq = tq.default_fake_quant()
    x = torch.randn(10) * 5
    fq(x)
    scale = fq.scale.clone()
    fq.apply(tq.disable_observer)
    fq(x * 100)
    assert torch.equal(fq.scale, scale)
    fq.apply(tq.disable_fake_quant)
    assert torch.equal(fq(x * 100), x * 100)
    fq.apply(tq.enable_fake_quant)
    assert not torch.equal(fq(x * 100), x * 100)


def test_qconfig_defaults_full_range_per_channel():
    qc = tq.default_qconfig
    act, w = qc.activation(), qc.weight()
    assert (act.dtype, act.quant_min, act.quant_max) == (torch.uint8, 0, 255)
    assert (w.dtype, w.qscheme) == (torch.int8, torch.per_channel_symmetric)
    assert not act.reduce_range and not w.reduce_range
    qat = tq.default_qat_qconfig
    assert qat.weight().qscheme == torch.per_channel_symmetric
    assert (qat.activation().quant_min, qat.activation().quant_max) == (0, 255)
    assert tq.default_dynamic_qconfig.activation().is_dynamic
    with pytest.raises(ValueError, match="observer instance"):
        tq.QConfig(activation=tq.MinMaxObserver(), weight=tq.default_weight_observer)
    # two calls make two observers
    assert qc.activation() is not qc.activation()


@pytest.mark.parametrize(
    "quantized, plain, qrange",
    [
        ("quint8", torch.uint8, (0, 255)),
        ("qint8", torch.int8, (-128, 127)),
        ("qint32", torch.int32, (-(2**31), 2**31 - 1)),
        ("quint4x2", torch.uint4, (0, 15)),
    ],
)
def test_observers_speak_plain_dtypes_and_read_the_quantized_ones_as_aliases(quantized, plain, qrange):
    """The observers (and so the qconfigs and fake quantizers) hold torch.uint8 / int8 / int32 /
    uint4; the quantized dtype torch names the same range is read as its alias."""
    for dtype in (plain, getattr(torch, quantized)):
        obs = (
            tq.MinMaxObserver(dtype=dtype)
            if plain != torch.uint4
            else tq.PerChannelMinMaxObserver(dtype=dtype, qscheme=torch.per_channel_affine_float_qparams)
        )
        assert obs.dtype == plain and (obs.quant_min, obs.quant_max) == qrange
    with pytest.raises(
        ValueError,
        match=r"observer: dtype should be torch.uint8, torch.int8, torch.int32 or "
        r"torch.uint4 .*got torch.float16",
    ):
        tq.MinMaxObserver(dtype=torch.float16)
    assert tq.default_float_qparams_observer_4bit().dtype == torch.uint4
    assert tq.FakeQuantize(dtype=getattr(torch, quantized) if plain != torch.uint4 else torch.uint8).dtype in (
        plain,
        torch.uint8,
    )
