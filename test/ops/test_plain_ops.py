"""The plain tier's ops (qplugin::plain_*): uint8 / int8 / int32 tensors with explicit qparams.

Each op must give exactly what its quantized-dtype twin gives (the tiers share one C++ entry point,
and the quantized ops are tested against test/reference.py), on every kernel path, on contiguous,
channels_last, strided, empty and batch-1 inputs; its fake kernel must pass torch.library.opcheck in
full (schema, fake tensor, aot dispatch, dynamic shapes); bad qparams get the ops' errors.
"""

import numpy as np
import pytest
import torch

import torch_qplugin  # noqa: F401
import reference as ref

q = torch.ops.qplugin
S, Z = 0.05, 120  # input qparams
SO, ZO = 0.08, 100  # output qparams

LAYOUTS = ["contiguous", "channels_last", "strided", "empty", "batch1"]


def _data(layout, dtype=torch.uint8, shape=(2, 3, 6, 7)):
    """A plain integer tensor in the given layout (values over the dtype's whole range)."""
    if layout == "empty":
        shape = (0,) + tuple(shape[1:])
    elif layout == "batch1":
        shape = (1,) + tuple(shape[1:])
    lo, hi = (0, 256) if dtype == torch.uint8 else (-128, 128) if dtype == torch.int8 else (-2000, 2000)
    if layout == "strided":
        big = torch.randint(lo, hi, tuple(shape[:-1]) + (shape[-1] * 2,), dtype=dtype)
        return big[..., ::2]
    x = torch.randint(lo, hi, shape, dtype=dtype)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    return x


def _float_data(layout, empty_dim=0):
    """Float input in the given layout (empty: size 0 along empty_dim)."""
    x = torch.randn(2, 3, 6, 7) * 3
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if layout == "strided":
        return x[..., ::2]
    if layout == "empty":
        return x.narrow(empty_dim, 0, 0)
    return x[:1] if layout == "batch1" else x


_QDT = {torch.uint8: torch.quint8, torch.int8: torch.qint8, torch.int32: torch.qint32}


def _qt(x, scale=S, zp=Z):
    """The quantized-dtype twin of plain data x (same values, same qparams)."""
    return q.make_per_tensor_quantized_tensor(x, scale, zp)


def _plain(r):
    if isinstance(r, (tuple, list)):
        return [_plain(t) for t in r]
    return r.int_repr() if r.is_quantized else r


def _assert_same(plain_out, quant_out):
    plain_out, quant_out = _plain(plain_out), _plain(quant_out)
    if isinstance(plain_out, list):
        assert len(plain_out) == len(quant_out)
        for a, b in zip(plain_out, quant_out):
            _assert_same(a, b)
        return
    assert plain_out.dtype == quant_out.dtype and plain_out.shape == quant_out.shape
    assert torch.equal(plain_out, quant_out)


# name -> (plain call args from data x, the quantized twin's result). Data is uint8 unless noted.
def _cases():
    w = torch.rand(7) + 0.5
    b = torch.randn(7)
    mean = torch.randn(3)
    var = torch.rand(3) + 0.1
    w3, b3 = torch.rand(3) + 0.5, torch.randn(3)
    slopes = torch.tensor([0.25, -0.5, 1.5])
    return {
        "plain_dequantize_per_tensor": (lambda x: (x, S, Z), lambda x: _qt(x).dequantize()),
        "plain_add": (
            lambda x: (x, S, Z, x.flip(0), 0.07, 90, SO, ZO),
            lambda x: q.add(_qt(x), _qt(x.flip(0), 0.07, 90), SO, ZO),
        ),
        "plain_add_relu": (
            lambda x: (x, S, Z, x[:1], 0.07, 90, SO, ZO),
            lambda x: q.add_relu(_qt(x), _qt(x[:1], 0.07, 90), SO, ZO),
        ),
        "plain_mul": (lambda x: (x, S, Z, x, 0.07, 90, SO, ZO), lambda x: q.mul(_qt(x), _qt(x, 0.07, 90), SO, ZO)),
        "plain_mul_relu": (
            lambda x: (x, S, Z, x, 0.07, 90, SO, ZO),
            lambda x: q.mul_relu(_qt(x), _qt(x, 0.07, 90), SO, ZO),
        ),
        "plain_add_scalar": (lambda x: (x, S, Z, 0.7), lambda x: q.add_scalar(_qt(x), 0.7)),
        "plain_add_scalar_relu": (lambda x: (x, S, Z, -0.3), lambda x: q.add_scalar_relu(_qt(x), -0.3)),
        "plain_mul_scalar": (lambda x: (x, S, Z, -1.5), lambda x: q.mul_scalar(_qt(x), -1.5)),
        "plain_matmul": (
            lambda x: (x, S, Z, x.transpose(-1, -2), S, Z, 2.0, 128),
            lambda x: q.matmul(_qt(x), _qt(x.transpose(-1, -2)), 2.0, 128),
        ),
        "plain_cat": (
            lambda x: ([x, x], [S, 0.1], [Z, 3], 1, SO, ZO),
            lambda x: q.cat([_qt(x), _qt(x, 0.1, 3)], 1, SO, ZO),
        ),
        "plain_cat_relu": (
            lambda x: ([x, x], [S, S], [Z, Z], -1, S, Z),
            lambda x: q.cat_relu([_qt(x), _qt(x)], -1, S, Z),
        ),
        **{
            f"plain_{c}": (
                (lambda x: (x, S, Z, x.flip(-1), 0.04, 140)),
                (lambda x, c=c: getattr(q, c)(_qt(x), _qt(x.flip(-1), 0.04, 140))),
            )
            for c in ("eq", "ne", "ge", "le", "gt", "lt")
        },
        **{
            f"plain_{c}.Scalar": ((lambda x: (x, S, Z, 0.3)), (lambda x, c=c: getattr(q, c).Scalar(_qt(x), 0.3)))
            for c in ("eq", "ne", "ge", "le", "gt", "lt")
        },
        "plain_sort": (lambda x: (x, S, Z, 1, True), lambda x: q.sort(_qt(x), 1, True)),
        "plain_argsort": (lambda x: (x, S, Z, -1, False), lambda x: q.argsort(_qt(x), -1, False)),
        "plain_topk": (lambda x: (x, S, Z, 2, 1), lambda x: q.topk(_qt(x), 2, 1)),
        "plain_max.dim": (lambda x: (x, S, Z, 1, True), lambda x: q.max.dim(_qt(x), 1, True)),
        "plain_min.dim": (lambda x: (x, S, Z, -1), lambda x: q.min.dim(_qt(x), -1)),
        "plain_argmax": (lambda x: (x, S, Z, 2), lambda x: q.argmax(_qt(x), 2)),
        "plain_argmin": (lambda x: (x, S, Z, 1, True), lambda x: q.argmin(_qt(x), 1, True)),
        "plain_mean": (lambda x: (x, [2, 3], True), lambda x: q.mean(_qt(x), [2, 3], True)),
        "plain_relu": (lambda x: (x, S, Z), lambda x: q.relu(_qt(x))),
        "plain_relu6": (lambda x: (x, S, Z), lambda x: q.relu6(_qt(x))),
        "plain_clamp": (lambda x: (x, S, Z, -1.0, 2.0), lambda x: q.clamp(_qt(x), -1.0, 2.0)),
        "plain_leaky_relu": (lambda x: (x, S, Z, 0.1, SO, ZO), lambda x: q.leaky_relu(_qt(x), 0.1, False, SO, ZO)),
        "plain_hardswish": (lambda x: (x, S, Z, SO, ZO), lambda x: q.hardswish(_qt(x), SO, ZO)),
        "plain_hardsigmoid": (lambda x: (x, S, Z, 1 / 256, 0), lambda x: q.hardsigmoid(_qt(x), 1 / 256, 0)),
        "plain_sigmoid": (lambda x: (x, S, Z, 1 / 256, 0), lambda x: q.sigmoid(_qt(x), 1 / 256, 0)),
        "plain_elu": (lambda x: (x, S, Z, SO, ZO, 0.5), lambda x: q.elu(_qt(x), SO, ZO, 0.5)),
        "plain_softmax": (lambda x: (x, S, Z, 1, 1 / 256, 0), lambda x: q.softmax(_qt(x), 1, 1 / 256, 0)),
        "plain_layer_norm": (
            lambda x: (x, S, Z, [7], w, b, 1e-5, SO, ZO),
            lambda x: q.layer_norm(_qt(x), [7], w, b, 1e-5, SO, ZO),
        ),
        "plain_batch_norm2d": (
            lambda x: (x, S, Z, None, None, mean, var, 1e-5, SO, ZO),
            lambda x: q.batch_norm2d(_qt(x), None, None, mean, var, 1e-5, SO, ZO),
        ),
        "plain_max_pool2d": (
            lambda x: (x, [3, 2], [2, 1], [1, 0], [1, 1], True),
            lambda x: q.max_pool2d(_qt(x), [3, 2], [2, 1], [1, 0], [1, 1], True),
        ),
        "plain_avg_pool2d": (
            lambda x: (x, Z, [2, 3], [2, 2], [1, 1], False, True, None),
            lambda x: q.avg_pool2d(_qt(x), [2, 3], [2, 2], [1, 1], False, True, None),
        ),
        "plain_adaptive_avg_pool2d": (lambda x: (x, [4, 3]), lambda x: q.adaptive_avg_pool2d(_qt(x), [4, 3])),
        "plain_avg_pool3d": (
            lambda x: (x.unsqueeze(2), Z, [1, 2, 3], [1, 2, 2], [0, 1, 1], True, False, None),
            lambda x: q.avg_pool3d(_qt(x.unsqueeze(2)), [1, 2, 3], [1, 2, 2], [0, 1, 1], True, False, None),
        ),
        "plain_adaptive_avg_pool3d": (
            lambda x: (x.unsqueeze(2), [1, 4, 3]),
            lambda x: q.adaptive_avg_pool3d(_qt(x.unsqueeze(2)), [1, 4, 3]),
        ),
        "plain_upsample_nearest2d": (lambda x: (x, [9, 14]), lambda x: q.upsample_nearest2d(_qt(x), [9, 14])),
        # the later seed ops
        "plain_upsample_bilinear2d": (
            lambda x: (x, [9, 14], False),
            lambda x: q.upsample_bilinear2d(_qt(x), [9, 14], False),
        ),
        "plain_celu": (lambda x: (x, S, Z, SO, ZO, 0.8), lambda x: q.celu(_qt(x), SO, ZO, 0.8)),
        "plain_threshold": (lambda x: (x, S, Z, 0.5, -1.0), lambda x: q.threshold(_qt(x), 0.5, -1.0)),
        "plain_batch_norm2d_relu": (
            lambda x: (x, S, Z, w3, b3, mean, var, 1e-5, SO, ZO),
            lambda x: q.batch_norm2d_relu(_qt(x), w3, b3, mean, var, 1e-5, SO, ZO),
        ),
        **{
            f"plain_batch_norm3d{r}": (
                (lambda x: (x.unsqueeze(2), S, Z, w3, b3, mean, var, 1e-5, SO, ZO)),
                (lambda x, r=r: getattr(q, f"batch_norm3d{r}")(_qt(x.unsqueeze(2)), w3, b3, mean, var, 1e-5, SO, ZO)),
            )
            for r in ("", "_relu")
        },
        "plain_group_norm": (
            lambda x: (x, S, Z, 3, w3, b3, 1e-5, SO, ZO),
            lambda x: q.group_norm(_qt(x), 3, w3, b3, 1e-5, SO, ZO),
        ),
        "plain_instance_norm": (
            lambda x: (x, S, Z, None, b3, 1e-5, SO, ZO),
            lambda x: q.instance_norm(_qt(x), None, b3, 1e-5, SO, ZO),
        ),
        "plain_prelu": (lambda x: (x, S, Z, slopes, SO, ZO), lambda x: q.prelu(_qt(x), slopes, SO, ZO)),
    }


CASES = _cases()


def _op(name):
    base, _, overload = name.partition(".")
    packet = getattr(q, base)
    return getattr(packet, overload) if overload else packet.default


@pytest.mark.quantized_tier
@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_op_matches_quantized_op(name, isa):
    args_of, quantized = CASES[name]
    for layout in LAYOUTS:
        x = _data(layout)
        _assert_same(_op(name)(*args_of(x)), quantized(x))


@pytest.mark.parametrize("name, layout", [(n, lay) for n in sorted(CASES) for lay in LAYOUTS])
def test_plain_op_opcheck(name, layout):
    args_of, _ = CASES[name]
    torch.library.opcheck(_op(name), args_of(_data(layout)))


@pytest.mark.quantized_tier
@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d", "strided", "4d"])
def test_plain_pool3d_deep_inputs(layout, isa):
    """D > 1, 5-D channels_last_3d (kept), strided and 4-D (C, D, H, W) inputs; divisor_override."""
    x = torch.randint(0, 256, (2, 3, 5, 6, 7), dtype=torch.uint8)
    if layout == "channels_last_3d":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    elif layout == "strided":
        x = x[:, :, ::2]
    elif layout == "4d":
        x = x[0]
    calls = [
        (
            q.plain_avg_pool3d.default,
            (x, Z, [2, 3, 2], [], [1, 1, 0], False, True, 5),
            lambda: q.avg_pool3d(_qt(x), [2, 3, 2], [], [1, 1, 0], False, True, 5),
        ),
        (
            q.plain_avg_pool3d.default,
            (x, 7, [3], [2], [1], True, False, None),
            lambda: q.avg_pool3d(_qt(x, S, 7), [3], [2], [1], True, False, None),
        ),
        (q.plain_adaptive_avg_pool3d.default, (x, [2, 4, 3]), lambda: q.adaptive_avg_pool3d(_qt(x), [2, 4, 3])),
    ]
    for op, args, quantized in calls:
        out = op(*args)
        _assert_same(out, quantized())
        if layout == "channels_last_3d":
            assert out.is_contiguous(memory_format=torch.channels_last_3d)
        if isa == "scalar":  # the fakes see only shapes: one path is enough (opcheck is slow)
            torch.library.opcheck(op, args)


def _format_probe_tensors():
    """Non-dense 4-d and 5-d tensors over every order of their dims in memory, with and without
    size-1 dims: the memory format torch reads from such strides (suggest_memory_format) is the one
    its float max_pool2d / max_pool3d allocate their output in."""
    import itertools

    shapes = {
        4: [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 1), (3, 1, 1, 1), (1, 1, 2, 2)],
        5: [(2, 3, 2, 4, 5), (1, 3, 1, 1, 2)],
    }
    for nd, sizes_list in shapes.items():
        for sizes in sizes_list:
            d = max(range(nd), key=lambda k: sizes[k])  # the dim sliced with step 2 (size >= 2)
            for perm in itertools.permutations(range(nd)):
                grown = list(sizes)
                grown[d] *= 2
                base = torch.randint(0, 256, [grown[k] for k in perm], dtype=torch.uint8)
                x = base.permute(*[perm.index(k) for k in range(nd)])  # dims in order, memory in perm's
                yield x[tuple(slice(None, None, 2) if k == d else slice(None) for k in range(nd))]


def test_plain_ops_keep_the_memory_format_torch_reads_from_strides():
    seen = set()
    for x in _format_probe_tensors():
        pool = torch.nn.functional.max_pool2d if x.dim() == 4 else torch.nn.functional.max_pool3d
        want = pool(x.float(), 1).stride()
        cl = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
        seen.add(want == torch.empty(x.shape).contiguous(memory_format=cl).stride())
        assert q.plain_relu(x, S, Z).stride() == want, (x.shape, x.stride())
        if x.dim() == 4:
            got = q.plain_max_pool2d(x, [1, 1], [1, 1], [0, 0], [1, 1], False).stride()
            assert got == want, (x.shape, x.stride())
    assert seen == {True, False}  # both formats were met


@pytest.mark.parametrize(
    "call",
    [
        lambda x: q.plain_max(x, S, Z),
        lambda x: q.plain_min(x, S, Z),
        lambda x: q.plain_argmax(x, S, Z),
        lambda x: q.plain_max.dim(x, S, Z, 0),
        lambda x: q.plain_mean(x, [0], False),
    ],
)
def test_plain_reduction_over_nothing_raises(call):
    with pytest.raises((RuntimeError, IndexError, ValueError), match="qplugin::plain_"):
        call(_data("empty"))


@pytest.mark.quantized_tier
def test_plain_max_min_all():
    x = _data("strided")
    _assert_same(q.plain_max(x, S, Z), q.max(_qt(x)))
    _assert_same(q.plain_min(x, S, Z), q.min(_qt(x)))
    torch.library.opcheck(q.plain_max.default, (x, S, Z))
    torch.library.opcheck(q.plain_min.default, (_data("channels_last"), S, Z))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int32])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_plain_quantize_dequantize_per_tensor(dtype, layout, isa):
    x = _float_data(layout)
    zp = {torch.uint8: 128, torch.int8: -3, torch.int32: 17}[dtype]
    y = q.plain_quantize_per_tensor(x, 0.02, zp, dtype)
    assert y.dtype == dtype and y.shape == x.shape
    expected = ref.quantize_per_tensor_ref(x, 0.02, zp, _QDT[dtype])
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(
        q.plain_dequantize_per_tensor(y, 0.02, zp).numpy(), ref.dequantize_per_tensor_ref(y.numpy(), 0.02, zp)
    )
    if isa == "scalar":  # the fakes see only shapes: one path is enough (opcheck is slow)
        torch.library.opcheck(q.plain_quantize_per_tensor.default, (x, 0.02, zp, dtype))
        torch.library.opcheck(q.plain_dequantize_per_tensor.default, (y, 0.02, zp))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int32])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, 3])
def test_plain_quantize_dequantize_per_channel(dtype, layout, axis, isa):
    x = _float_data(layout, empty_dim=1 if axis == 0 else 0)
    c = x.shape[axis]
    scales = torch.rand(c, dtype=torch.float64) * 0.05 + 0.005
    zps = torch.randint(-5, 6, (c,)) + (128 if dtype == torch.uint8 else 0)
    y = q.plain_quantize_per_channel(x, scales, zps, axis, dtype)
    np.testing.assert_array_equal(y.numpy(), ref.quantize_per_channel_ref(x, scales, zps, axis, _QDT[dtype]))
    np.testing.assert_array_equal(
        q.plain_dequantize_per_channel(y, scales, zps, axis).numpy(),
        ref.dequantize_per_channel_ref(y.numpy(), scales, zps, axis),
    )
    if axis == 1 and isa == "scalar":  # the fakes see only shapes: one axis, one path is enough (opcheck is slow)
        torch.library.opcheck(q.plain_quantize_per_channel.default, (x, scales, zps, axis, dtype))
        torch.library.opcheck(q.plain_dequantize_per_channel.default, (y, scales, zps, axis))


# Signed data (int8 / int32, zero points in range): (plain call, quantized twin) on data x.
SIGNED = {
    "plain_add": (
        lambda x: q.plain_add(x, S, 0, x.flip(0), 0.07, -2, SO, 1),
        lambda x: q.add(_qt(x, S, 0), _qt(x.flip(0), 0.07, -2), SO, 1),
    ),
    "plain_relu": (lambda x: q.plain_relu(x, S, -3), lambda x: q.relu(_qt(x, S, -3))),
    "plain_sort": (lambda x: q.plain_sort(x, S, 0, 1, True), lambda x: q.sort(_qt(x, S, 0), 1, True)),
    "plain_max_pool2d": (
        lambda x: q.plain_max_pool2d(x, [3, 2], [2, 1], [1, 0], [1, 1], True),
        lambda x: q.max_pool2d(_qt(x, S, 0), [3, 2], [2, 1], [1, 0], [1, 1], True),
    ),
    "plain_eq": (
        lambda x: q.plain_eq(x, S, 0, x.flip(-1), 0.04, 1),
        lambda x: q.eq(_qt(x, S, 0), _qt(x.flip(-1), 0.04, 1)),
    ),
    "plain_mean": (lambda x: q.plain_mean(x, [2, 3], True), lambda x: q.mean(_qt(x, S, 0), [2, 3], True)),
    "plain_hardswish": (lambda x: q.plain_hardswish(x, S, 0, SO, 2), lambda x: q.hardswish(_qt(x, S, 0), SO, 2)),
}


@pytest.mark.quantized_tier
@pytest.mark.parametrize("dtype", [torch.int8, torch.int32])
@pytest.mark.parametrize("name", sorted(SIGNED))
def test_plain_ops_on_signed_data_match_quantized(dtype, name, isa):
    plain_call, quantized = SIGNED[name]
    for layout in ("contiguous", "channels_last", "strided"):
        x = _data(layout, dtype)
        _assert_same(plain_call(x), quantized(x))


def test_plain_scalar_qparams_match_reference():
    for dtype, zp in ((torch.uint8, 120), (torch.int8, -10), (torch.int32, 5)):
        for c in (0.7, -0.3, 100.0, 0.0):
            s, z = q.plain_add_scalar_qparams(0.05, zp, dtype, c)
            es, ez = ref.add_scalar_qparams_ref(0.05, zp, c, _QDT[dtype])
            assert (s, z) == pytest.approx((es, ez), rel=0, abs=0)
            out = q.plain_add_scalar(torch.tensor([0, 1], dtype=dtype) + zp, 0.05, zp, c)
            assert out.dtype == dtype
        for c in (1.5, -2.0):
            s, z = q.plain_mul_scalar_qparams(0.05, zp, dtype, c)
            assert (s, z) == pytest.approx(ref.mul_scalar_qparams_ref(0.05, zp, c, _QDT[dtype]), rel=0, abs=0)


@pytest.mark.quantized_tier
@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: q.plain_quantize_per_tensor(torch.randn(3), 0.0, 0, torch.uint8),
            r"qplugin::plain_quantize_per_tensor: scale should be a positive finite number, got 0",
        ),
        (
            lambda: q.plain_quantize_per_tensor(torch.randn(3), 0.1, 300, torch.uint8),
            r"qplugin::plain_quantize_per_tensor: zero_point should be in \[0, 255\]",
        ),
        (
            lambda: q.plain_quantize_per_tensor(torch.randn(3), 0.1, 0, torch.float16),
            r"qplugin::plain_quantize_per_tensor: dtype should be torch.uint8, torch.int8 or torch.int32, got Half",
        ),
        (
            lambda: q.plain_dequantize_per_tensor(torch.zeros(3), 0.1, 0),
            r"qplugin::plain_dequantize_per_tensor: self should be a uint8, int8 or int32 tensor, got dtype Float",
        ),
        (
            lambda: q.plain_dequantize_per_tensor(torch.zeros(3, dtype=torch.int8), float("nan"), 0),
            r"qplugin::plain_dequantize_per_tensor: scale should be a positive finite number, got nan",
        ),
        (
            lambda: q.plain_dequantize_per_channel(
                torch.zeros(2, 3, dtype=torch.uint8), torch.tensor([0.1, -1.0]), torch.tensor([0, 0]), 0
            ),
            r"qplugin::plain_dequantize_per_channel: scales\[1\] should be a positive finite number",
        ),
        (
            lambda: q.plain_add(
                torch.zeros(3, dtype=torch.uint8), 0.1, 0, torch.zeros(3, dtype=torch.int8), 0.1, 0, 0.1, 0
            ),
            r"qplugin::plain_add: b should have the dtype of a",
        ),
        (
            lambda: q.plain_add(
                torch.zeros(3, dtype=torch.uint8), 0.1, 0, torch.zeros(3, dtype=torch.uint8), 0.1, 0, 0.1, -1
            ),
            r"qplugin::plain_add: zero_point should be in \[0, 255\]",
        ),
        (
            lambda: q.plain_relu(torch.zeros(3, dtype=torch.int8), 0.1, 200),
            r"qplugin::plain_relu: input zero_point should be in \[-128, 127\]",
        ),
        (
            lambda: q.plain_sigmoid(torch.zeros(3, dtype=torch.uint8), 0.1, 0, -1.0, 0),
            r"qplugin::plain_sigmoid: output_scale should be a positive finite number",
        ),
        (
            lambda: q.plain_sort(torch.zeros(3, dtype=torch.uint8), 0.0, 0),
            r"qplugin::plain_sort: input scale should be a positive finite number",
        ),
        (
            lambda: q.plain_max_pool2d(torch.zeros(3, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1], False),
            r"qplugin::plain_max_pool2d: x should be a uint8, int8 or int32 tensor, got dtype Float",
        ),
        (
            lambda: q.plain_avg_pool2d(
                torch.zeros(1, 3, 4, 4, dtype=torch.uint8), 256, [2, 2], [2, 2], [0, 0], False, True, None
            ),
            r"qplugin::plain_avg_pool2d: x_zero_point should be in \[0, 255\]",
        ),
        (
            lambda: q.plain_avg_pool3d(
                torch.zeros(1, 3, 2, 4, 4, dtype=torch.int8), 128, [2], [], [0], False, True, None
            ),
            r"qplugin::plain_avg_pool3d: x_zero_point should be in \[-128, 127\]",
        ),
        (
            lambda: q.plain_avg_pool3d(torch.zeros(3, 4, 4, dtype=torch.uint8), 0, [2], [], [0], False, True, None),
            r"qplugin::plain_avg_pool3d: x should be 4-D \(C, D, H, W\) or 5-D \(N, C, D, H, W\), got 3-D",
        ),
        (
            lambda: q.plain_avg_pool3d(torch.zeros(1, 1, 2, 4, 4, dtype=torch.uint8), 0, [2], [], [0], False, True, 0),
            r"qplugin::plain_avg_pool3d: divisor_override should be",
        ),
        (
            lambda: q.plain_adaptive_avg_pool3d(torch.zeros(1, 1, 2, 4, 4), [1, 1, 1]),
            r"qplugin::plain_adaptive_avg_pool3d: x should be a uint8, int8 or int32 tensor, got dtype Float",
        ),
        (
            lambda: q.plain_adaptive_avg_pool3d(torch.zeros(1, 1, 2, 4, 4, dtype=torch.uint8), [1, 1]),
            r"qplugin::plain_adaptive_avg_pool3d: output_size should have 3 entries, got 2",
        ),
        (
            lambda: q.plain_cat([torch.zeros(2, dtype=torch.uint8)], [0.1, 0.2], [0], 0, 0.1, 0),
            r"qplugin::plain_cat: scales and zero_points should have one entry per tensor \(1\), got 2 and 1",
        ),
        (
            lambda: q.plain_layer_norm(torch.zeros(2, 3, dtype=torch.uint8), 0.1, 0, [4], None, None, 1e-5, 0.1, 0),
            r"qplugin::plain_layer_norm: normalized_shape should match the last dims of x",
        ),
        (lambda: q.plain_relu(_qt(torch.zeros(3, dtype=torch.uint8)), 0.1, 0), r"qplugin::plain_relu"),
        (
            lambda: q.plain_celu(torch.zeros(3, dtype=torch.uint8), 0.1, 0, 0.1, 0, 0.0),
            r"qplugin::plain_celu: alpha should be non-zero, got 0",
        ),
        (
            lambda: q.plain_prelu(torch.zeros(1, 3, 2, dtype=torch.uint8), 0.1, 0, torch.ones(2), 0.1, 0),
            r"qplugin::plain_prelu: weight should have 1 or 3 \(x.size\(1\)\) elements, got 2",
        ),
        (
            lambda: q.plain_prelu(
                torch.zeros(1, 3, 2, dtype=torch.uint8), 0.1, 0, torch.ones(3, dtype=torch.int64), 0.1, 0
            ),
            r"qplugin::plain_prelu: weight should be a float tensor, got dtype Long",
        ),
        (
            lambda: q.plain_group_norm(torch.zeros(1, 6, 2, dtype=torch.uint8), 0.1, 0, 4, None, None, 1e-5, 0.1, 0),
            r"qplugin::plain_group_norm: num_groups should be positive and divide the number of channels 6, got 4",
        ),
        (
            lambda: q.plain_batch_norm3d(
                torch.zeros(1, 2, 3, 3, dtype=torch.uint8),
                0.1,
                0,
                None,
                None,
                torch.zeros(2),
                torch.ones(2),
                1e-5,
                0.1,
                0,
            ),
            r"qplugin::plain_batch_norm3d: x should be 5-D",
        ),
        (
            lambda: q.plain_upsample_bilinear2d(torch.zeros(1, 1, 2, 2, dtype=torch.int32), [4, 4], False),
            r"qplugin::plain_upsample_bilinear2d: x should be a uint8 or int8 tensor, got dtype Int",
        ),
        (
            lambda: q.plain_threshold(torch.zeros(3, dtype=torch.uint8), 0.1, 0, float("nan"), 0.0),
            r"qplugin::plain_threshold: threshold should be",
        ),
    ],
)
def test_plain_op_errors(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


# Argument and return kinds torch's stable ABI converts (torch/csrc/stable/stableivalue_conversions.h,
# every version from 2.13): the plain library is to build on it, and a Scalar argument has no
# conversion there (docs/design/plain.md).
_STABLE_KINDS = {
    "Tensor",
    "float",
    "int",  # (ScalarType arguments show as int)
    "bool",
    "Optional[Tensor]",
    "Optional[float]",
    "Optional[int]",
    "Optional[bool]",
    "List[int]",
    "List[float]",
    "List[Tensor]",
    "Optional[List[int]]",
}


def test_plain_schemas_use_only_kinds_the_stable_abi_converts():
    schemas = [s for s in torch._C._jit_get_all_schemas() if s.name.startswith("qplugin::plain_")]
    assert len({s.name for s in schemas}) >= 80
    seen = {}
    for s in schemas:
        for a in list(s.arguments) + list(s.returns):
            seen.setdefault(str(a.type), s.name)
    assert set(seen) <= _STABLE_KINDS, {k: v for k, v in seen.items() if k not in _STABLE_KINDS}


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_plain_scalar_arguments_take_ints_and_bools_as_their_float(dtype):
    # The float schemas bind a Python int or bool as the double a quantized op's Scalar gives.
    q = torch.ops.qplugin
    x = torch.arange(-20, 20, dtype=torch.int32).to(dtype).reshape(4, 10)
    args = (x, 0.25, 3)
    for b in (2, True, -3):
        assert torch.equal(q.plain_add_scalar(*args, b), q.plain_add_scalar(*args, float(b)))
        assert torch.equal(q.plain_mul_scalar(*args, b), q.plain_mul_scalar(*args, float(b)))
        assert torch.equal(q.plain_ge.Scalar(*args, b), q.plain_ge.Scalar(*args, float(b)))
        assert q.plain_add_scalar_qparams(0.25, 3, dtype, b) == q.plain_add_scalar_qparams(0.25, 3, dtype, float(b))
    assert torch.equal(q.plain_clamp(*args, -1, 2), q.plain_clamp(*args, -1.0, 2.0))
    # against the definition: deq(x) >= 2
    want = (x.to(torch.float64) - 3) * 0.25 >= 2
    assert torch.equal(q.plain_ge.Scalar(*args, 2), want)
