"""Quantizer objects and torch_qplugin.QTensor (API.md section 4).

A QTensor holds plain integers and a Quantizer, never a quantized-dtype tensor; every op on it must
give the int_repr the quantized-dtype path gives (bit-identical), anything unsupported must raise
naming the op, and it must trace through torch.compile and torch.export.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref
import torch_qplugin as tq
import torch_qplugin.nn.quantized.functional as qF
from torch_oracle import with_qplugin_aten

q = torch.ops.qplugin


def _pair(layout="contiguous", dtype=torch.uint8, scale=0.05, zp=None):
    """(QTensor, quantized-dtype twin) of the same float data."""
    zp = {torch.uint8: 128, torch.int8: -3, torch.int32: 7}[dtype] if zp is None else zp
    x = torch.randn(2, 3, 8, 10) * 3
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    qt = tq.PerTensorAffine(scale, zp, dtype).quantize(x)
    qd = {torch.uint8: torch.quint8, torch.int8: torch.qint8, torch.int32: torch.qint32}[dtype]
    return qt, q.quantize_per_tensor(x, scale, zp, qd), x


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
        return
    if isinstance(a, tq.QTensor):
        assert b.is_quantized
        assert torch.equal(a.int_repr(), b.int_repr()), "int_repr differs"
        assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
        assert a.shape == b.shape
        return
    assert not (torch.is_tensor(b) and b.is_quantized), f"quantized result {b.dtype} vs plain {type(a)}"
    assert torch.equal(a, b)


def test_quantizer_quantize_dequantize_per_tensor():
    x = torch.randn(4, 5) * 4
    for dtype, qd, zp in (
        (torch.uint8, torch.quint8, 120),
        (torch.int8, torch.qint8, -5),
        (torch.int32, torch.qint32, 3),
    ):
        qz = tq.PerTensorAffine(0.03, zp, dtype)
        t = qz.quantize(x)
        assert isinstance(t, tq.QTensor) and t.dtype == dtype and t.int_repr().dtype == dtype
        assert not t.int_repr().is_quantized
        np.testing.assert_array_equal(t.int_repr().numpy(), ref.quantize_per_tensor_ref(x, 0.03, zp, qd))
        assert torch.equal(qz.dequantize(t), t.dequantize())
        np.testing.assert_array_equal(
            t.dequantize().numpy(), ref.dequantize_per_tensor_ref(t.int_repr().numpy(), 0.03, zp)
        )
        assert t.qscheme() == torch.per_tensor_affine and t.q_scale() == 0.03 and t.q_zero_point() == zp
        assert t.quantizer is qz
        assert torch.equal(tq.quantize(x, qz).int_repr(), t.int_repr())


def test_quantizer_quantized_dtype_aliases():
    x = torch.randn(3, 4)
    a = tq.PerTensorAffine(0.1, 3, torch.quint8).quantize(x)
    b = tq.PerTensorAffine(0.1, 3, torch.uint8).quantize(x)
    assert a.dtype == torch.uint8 and torch.equal(a.int_repr(), b.int_repr())
    assert tq.PerChannelAffine(torch.ones(3), torch.zeros(3), 0, torch.qint8).dtype == torch.int8
    assert tq.PerTensorAffine(0.1, 3, torch.qint32).dtype == torch.int32


def test_quantizer_per_channel():
    x = torch.randn(4, 6, 5)
    scales = torch.rand(6, dtype=torch.float64) * 0.05 + 0.01
    zps = torch.randint(-4, 5, (6,))
    qz = tq.PerChannelAffine(scales, zps, 1, torch.int8)
    t = qz.quantize(x)
    np.testing.assert_array_equal(t.int_repr().numpy(), ref.quantize_per_channel_ref(x, scales, zps, 1, torch.qint8))
    np.testing.assert_array_equal(
        t.dequantize().numpy(), ref.dequantize_per_channel_ref(t.int_repr().numpy(), scales, zps, 1)
    )
    assert t.qscheme() == torch.per_channel_affine and t.q_per_channel_axis() == 1
    assert torch.equal(t.q_per_channel_scales(), scales) and torch.equal(t.q_per_channel_zero_points(), zps)
    with pytest.raises(RuntimeError, match=r"QTensor.q_scale: the tensor should be per-tensor affine"):
        t.q_scale()
    # a channel-moving op on a per-channel QTensor raises, naming it; copies keep the quantizer
    with pytest.raises(NotImplementedError, match=r"aten.permute.default on a per-channel QTensor"):
        t.permute(1, 0, 2)
    assert torch.equal(t.clone().int_repr(), t.int_repr()) and t.clone().quantizer is qz


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: tq.PerTensorAffine(0.0, 0, torch.uint8),
            r"qplugin::plain_quantize_per_tensor: scale should be a positive",
        ),
        (
            lambda: tq.PerTensorAffine(float("inf"), 0),
            r"qplugin::plain_quantize_per_tensor: scale should be a positive",
        ),
        (
            lambda: tq.PerTensorAffine(0.1, 256, torch.uint8),
            r"qplugin::plain_quantize_per_tensor: zero_point should be in \[0, 255\]",
        ),
        (
            lambda: tq.PerTensorAffine(0.1, 0, torch.float32),
            r"qplugin::plain_quantize_per_tensor: dtype should be torch.uint8, torch.int8 or torch.int32",
        ),
        (
            lambda: tq.PerChannelAffine(torch.tensor([0.1, -0.1]), torch.tensor([0, 0]), 0, torch.int8),
            r"qplugin::plain_quantize_per_channel: scales\[1\] should be a positive",
        ),
        (
            lambda: tq.PerChannelAffine(torch.tensor([0.1, 0.1]), torch.tensor([0, 200]), 0, torch.int8),
            r"qplugin::plain_quantize_per_channel: zero_points\[1\] should be in \[-128, 127\]",
        ),
        (
            lambda: tq.PerChannelAffine(torch.tensor([0.1, 0.1]), torch.tensor([0]), 0, torch.int8),
            r"qplugin::plain_quantize_per_channel: zero_points should be 1-D with one entry per channel \(2\)",
        ),
        (
            lambda: tq.PerChannelAffine(torch.tensor([0.1, 0.1]), torch.tensor([0, 0]), 3, torch.int8).quantize(
                torch.randn(2, 2)
            ),
            r"qplugin::plain_quantize_per_channel: axis should be in \[-2, 1\]",
        ),
        (
            lambda: tq.PerTensorAffine(0.1, 0).quantize(torch.zeros(2, dtype=torch.float64)),
            r"qplugin::plain_quantize_per_tensor: self should be a float32 tensor, got dtype Double",
        ),
    ],
)
def test_quantizer_bad_qparams(make, message):
    with pytest.raises((RuntimeError, ValueError, IndexError), match=message):
        make()


OPS = {
    "view": lambda t: t.view(2, 3, 8, 2, 5),
    "reshape": lambda t: t.reshape(2, -1),
    "flatten": lambda t: t.flatten(1),
    "permute": lambda t: t.permute(0, 2, 3, 1),
    "select": lambda t: t[1],
    "slice": lambda t: t[:, 1:, ::2, 3:],
    "transpose": lambda t: t.transpose(1, 3),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "contiguous": lambda t: t.permute(0, 2, 3, 1).contiguous(),
    "clone": lambda t: t.clone(),
    "cat": lambda t: torch.cat([t, t[:, :1]], 1),
    "eq": lambda t: t == t.flip(-1),
    "gt.Scalar": lambda t: t > 0.3,
    "le.Scalar": lambda t: t <= -1.0,
    "sort": lambda t: torch.sort(t, 2, descending=True),
    "topk": lambda t: torch.topk(t, 3, dim=1),
    "max": lambda t: t.max(),
    "min.dim": lambda t: t.min(dim=3),
    "argmax": lambda t: t.argmax(1),
    "mean": lambda t: t.mean((2, 3), keepdim=True),
    "relu": torch.relu,
    "F.relu": F.relu,
    "F.relu6": F.relu6,
    "clamp": lambda t: torch.clamp(t, -1.0, 2.0),
    "max_pool2d": lambda t: F.max_pool2d(t, 3, 2, 1),
    "avg_pool2d": lambda t: F.avg_pool2d(t, 2),
    "adaptive_avg_pool2d": lambda t: F.adaptive_avg_pool2d(t, (3, 4)),
    "adaptive_avg_pool2d_1x1": lambda t: F.adaptive_avg_pool2d(t, 1),
    "to_channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "as_strided": lambda t: t.as_strided((2, 3, 2, 2), (240, 80, 10, 1), 3),
    "interpolate": lambda t: F.interpolate(t, size=(11, 13), mode="nearest"),
    "qF.max_pool2d": lambda t: qF.max_pool2d(t, 2),
    "qF.avg_pool2d": lambda t: qF.avg_pool2d(t, 3, 2, 1),
    "qF.adaptive_avg_pool2d": lambda t: qF.adaptive_avg_pool2d(t, 1),
    "qF.interpolate": lambda t: qF.interpolate(t, scale_factor=2),
    "qF.hardswish": lambda t: qF.hardswish(t, 0.07, 20),
    "qF.hardsigmoid": lambda t: qF.hardsigmoid(t),
    "qF.elu": lambda t: qF.elu(t, 0.06, 40, 0.5),
    "qF.leaky_relu": lambda t: qF.leaky_relu(t, 0.1),
    "qF.relu6": lambda t: qF.relu6(t),
    "qF.clamp": lambda t: qF.clamp(t, -0.5, 0.5),
    "qplugin.sigmoid": lambda t: q.sigmoid(t, 1 / 256, 0),
    "qplugin.softmax": lambda t: q.softmax(t, 1, 1 / 256, 0),
    "qplugin.layer_norm": lambda t: q.layer_norm(t, [10], None, None, 1e-5, 0.1, 100),
    "qplugin.batch_norm2d": lambda t: q.batch_norm2d(t, None, None, torch.zeros(3), torch.ones(3), 1e-5, 0.1, 90),
    "qplugin.add": lambda t: q.add(t, t.flip(0), 0.1, 100),
    "qplugin.mul_relu": lambda t: q.mul_relu(t, t, 0.3, 60),
    "qplugin.add_scalar": lambda t: q.add_scalar(t, 0.7),
    "qplugin.mul_scalar": lambda t: q.mul_scalar(t, -2.0),
    "qplugin.matmul": lambda t: q.matmul(t, t.transpose(-1, -2), 1.5, 128),
    "qplugin.cat": lambda t: q.cat([t, t], 0, None, None),
    "qplugin.argmin": lambda t: t.argmin(),
    "qplugin.mean": lambda t: q.mean(t, [1], False),
    "qplugin.topk": lambda t: q.topk(t, 2, 0),
    "qplugin.lt": lambda t: q.lt(t, t.flip(1)),
    "qplugin.dequantize": lambda t: q.dequantize(t),
    "sigmoid": torch.sigmoid,
    "F.hardsigmoid": F.hardsigmoid,
    "F.hardswish": F.hardswish,
    "F.leaky_relu": lambda t: F.leaky_relu(t, 0.2),
    "channel_shuffle": lambda t: F.channel_shuffle(t, 3),
    "add_number": lambda t: t + 0.7,
    "mul_number": lambda t: 2.5 * t,
    "add_alpha": lambda t: torch.add(t, 0.5, alpha=-3),
    "max_pool1d": lambda t: F.max_pool1d(t[0], 3, 2, 1),
    "max_pool3d": lambda t: F.max_pool3d(t.unsqueeze(0), (2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True),
    "max_pool3d_channels_last_3d": lambda t: F.max_pool3d(
        t.unsqueeze(0).contiguous(memory_format=torch.channels_last_3d), 2
    ),
    "avg_pool3d": lambda t: F.avg_pool3d(t.unsqueeze(0), 2),
    "adaptive_avg_pool3d": lambda t: F.adaptive_avg_pool3d(t.unsqueeze(0), (2, 3, 4)),
    "interpolate_1d": lambda t: F.interpolate(t[0], size=13, mode="nearest"),
    "interpolate_3d": lambda t: F.interpolate(t.unsqueeze(0), size=(5, 9, 12), mode="nearest"),
    "interpolate_3d_channels_last_3d": lambda t: F.interpolate(
        t.unsqueeze(0).contiguous(memory_format=torch.channels_last_3d), scale_factor=2, mode="nearest"
    ),
    "interpolate_bilinear": lambda t: F.interpolate(t, size=(11, 13), mode="bilinear"),
    "interpolate_nearest_exact": lambda t: F.interpolate(t, scale_factor=1.6, mode="nearest-exact"),
    "interpolate_nearest_exact_3d": lambda t: F.interpolate(t.unsqueeze(0), size=(5, 9, 12), mode="nearest-exact"),
    "interpolate_nearest_exact_1d": lambda t: F.interpolate(t[0], size=13, mode="nearest-exact"),
    "tanh": torch.tanh,
    "sum": lambda t: t.sum((1, 3)),
    "sum_all": lambda t: t.sum(),
    "stack": lambda t: torch.stack([t, t.flip(0)], 2),
    "index_select": lambda t: t.index_select(2, torch.tensor([5, 0, 0, 7])),
    "copy_": lambda t: t[:1].clone().copy_(t[1:]),
    "copy_float": lambda t: t.clone().copy_(torch.linspace(-3, 3, 10).expand(t.shape).contiguous()),
    "fill_": lambda t: t.clone().fill_(0.37),
    "fill_tensor": lambda t: t.clone().fill_(torch.tensor(-1.3)),
    "clamp_": lambda t: t.clone().clamp_(-0.5, 1.0),
    "clamp_min": lambda t: t.clamp_min(0.2),
    "clamp_max": lambda t: torch.clamp_max(t, 0.2),
    "relu_": lambda t: F.relu(t.clone(), inplace=True),
}


# The quantized-dtype twin where torch itself has no quantized kernel: the qplugin op.
TWIN = {
    "argmax": lambda t: q.argmax(t, 1),
    "qplugin.argmin": lambda t: q.argmin(t),
    # the qplugin kernels of the aten ops (torch's own, without use_for_aten, may differ by a step)
    "sigmoid": lambda t: q.sigmoid(t, 1 / 256, 0),
    "F.hardsigmoid": lambda t: q.hardsigmoid(t, 1 / 256, 0),
    "F.leaky_relu": lambda t: q.leaky_relu(t, 0.2, False, t.q_scale(), t.q_zero_point()),
    "eq": lambda t: q.eq(t, q.quantize_per_tensor(t.dequantize().flip(-1), t.q_scale(), t.q_zero_point(), t.dtype)),
    "qplugin.add": lambda t: q.add(
        t, q.quantize_per_tensor(t.dequantize().flip(0), t.q_scale(), t.q_zero_point(), t.dtype), 0.1, 100
    ),
    "qplugin.lt": lambda t: q.lt(
        t, q.quantize_per_tensor(t.dequantize().flip(1), t.q_scale(), t.q_zero_point(), t.dtype)
    ),
    # torch's quantized kernels take 5-D input (max_pool3d) and may differ by a step (tanh)
    "max_pool1d": lambda t: with_qplugin_aten(lambda: F.max_pool1d(t[0], 3, 2, 1)),
    "tanh": lambda t: with_qplugin_aten(lambda: torch.tanh(t)),
    "interpolate_bilinear": lambda t: with_qplugin_aten(lambda: F.interpolate(t, size=(11, 13), mode="bilinear")),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_qtensor_op_matches_quantized_path(name, layout, isa):
    qt, qd, _ = _pair(layout)
    _same(OPS[name](qt), TWIN.get(name, OPS[name])(qd))


def test_qtensor_restrides_in_place_as_torch_decompositions_do():
    # F.adaptive_avg_pool2d to 1x1 of a channels_last input decomposes to mean + as_strided_
    qt, qd, _ = _pair("channels_last")
    out = F.adaptive_avg_pool2d(qt, 1)
    _same(out, F.adaptive_avg_pool2d(qd, 1))
    assert out.stride() == out.int_repr().stride() == (3, 1, 3, 3)
    view = qt[:, :, :2, :2].clone()
    assert view.as_strided_((2, 3, 2, 1), (12, 4, 2, 1)) is view
    assert view.shape == view.int_repr().shape == (2, 3, 2, 1)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32])
@pytest.mark.parametrize("name", ["slice", "cat", "eq", "sort", "relu", "max_pool2d", "mean", "qplugin.add"])
def test_qtensor_signed_dtypes(dtype, name):
    if dtype == torch.int32 and name == "qplugin.add":
        name = "qplugin.add_scalar"
    qt, qd, _ = _pair("contiguous", dtype)
    _same(OPS[name](qt), TWIN.get(name, OPS[name])(qd))


@pytest.mark.parametrize(
    "call, opname",
    [
        (torch.exp, "aten.exp.default"),
        (lambda t: t + t, "aten.add.Tensor of a QTensor and a tensor"),
        (lambda t: t.float(), "aten._to_copy.default"),
        (lambda t: t.prod(), "aten.prod.default"),
        (lambda t: torch.zeros(2, 3, 8, 10).copy_(t), "aten.copy_.default of a QTensor into a torch.float32 tensor"),
        (lambda t: F.conv2d(t, torch.zeros(1, 3, 1, 1)), "aten.convolution.default"),
    ],
)
def test_qtensor_unsupported_op_raises_naming_it(call, opname):
    qt, _, _ = _pair()
    with pytest.raises(NotImplementedError, match=f"torch_qplugin.QTensor: {opname}"):
        call(qt)


def test_qtensor_new_ops_bad_input_names_the_op():
    qt, _, _ = _pair("contiguous", torch.int32)
    with pytest.raises(
        NotImplementedError,
        match=r"torch_qplugin.QTensor: aten.tanh.default of a torch.int32 QTensor "
        r"is not supported \(uint8 or int8\)",
    ):
        torch.tanh(qt)
    qt, _, _ = _pair()
    with pytest.raises(
        TypeError,
        match=r"torch_qplugin.QTensor: aten.copy_.default: src should have self's dtype "
        r"torch.uint8, got torch.int8",
    ):
        qt.clone().copy_(_pair("contiguous", torch.int8)[0])
    with pytest.raises(
        ValueError,
        match=r"torch_qplugin.QTensor: aten.sum.dim_IntList: the reduced dims should not "
        r"be empty",
    ):
        qt[:, :0].sum([1])


def test_qtensor_copy_takes_srcs_quantizer():
    qt, _, _ = _pair()
    src = tq.PerTensorAffine(0.3, 11, torch.uint8).quantize(torch.randn(2, 3, 8, 10))
    dst = qt.clone()
    assert dst.copy_(src) is dst
    assert dst.q_scale() == 0.3 and dst.q_zero_point() == 11 and torch.equal(dst.int_repr(), src.int_repr())


def test_qtensor_never_holds_a_quantized_dtype():
    qt, _, _ = _pair()
    outs = [f(qt) for f in OPS.values()]
    for o in outs:
        for t in o if isinstance(o, (tuple, list)) else [o]:
            assert not t.is_quantized
            if isinstance(t, tq.QTensor):
                assert not t.int_repr().is_quantized and t.int_repr().dtype == torch.uint8
    with pytest.raises(TypeError, match=r"QTensor: data should have the quantizer's dtype torch.uint8"):
        tq.QTensor(torch.zeros(3, dtype=torch.int8), tq.PerTensorAffine(0.1, 0))


class _Net(torch.nn.Module):
    def forward(self, t):
        y = F.max_pool2d(torch.relu(t), 2)
        y = torch.cat([y, qF.hardswish(y, 0.07, 20)], 1)
        return y.flatten(1)[:, 5:40]


def test_qtensor_traces_with_torch_compile():
    qt, _, _ = _pair()
    expected = _Net()(qt)
    compiled = torch.compile(_Net(), backend="eager", fullgraph=True)
    out = compiled(qt)
    assert isinstance(out, tq.QTensor) and torch.equal(out.int_repr(), expected.int_repr())
    assert out.quantizer == expected.quantizer


def test_qtensor_traces_with_torch_export():
    qt, _, _ = _pair()
    ep = torch.export.export(_Net(), (qt,))
    out = ep.module()(qt)
    expected = _Net()(qt)
    assert isinstance(out, tq.QTensor) and torch.equal(out.int_repr(), expected.int_repr())
    assert out.q_scale() == expected.q_scale() and out.q_zero_point() == expected.q_zero_point()


def test_qtensor_flatten_unflatten_round_trip():
    for qt in (
        _pair()[0],
        tq.PerChannelAffine(torch.rand(3) + 0.1, torch.zeros(3), 1, torch.int8).quantize(torch.randn(2, 3, 4)),
    ):
        names, ctx = qt.__tensor_flatten__()
        back = tq.QTensor.__tensor_unflatten__({n: getattr(qt, n) for n in names}, ctx, qt.shape, qt.stride())
        assert torch.equal(back.int_repr(), qt.int_repr()) and back.quantizer == qt.quantizer
