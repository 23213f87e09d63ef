"""eq / ne / ge / le / gt / lt (Tensor and Scalar) and equal: 8-bit bit-exact with comparing
the dequantized tensors; with a qint32 side exact on the represented rationals (test/reference.py
compare_ref, Python big ints)."""

import numpy as np
import pytest
import torch

import reference as ref

q = torch.ops.qplugin
OPS = ["eq", "ne", "ge", "le", "gt", "lt"]


def rand_q(shape, dtype, scale, zp, lo=None, hi=None):
    qlo, qhi = ref.QRANGE[dtype]
    lo = qlo if lo is None else lo
    hi = qhi if hi is None else hi
    if dtype == torch.qint32:
        lo, hi = max(lo, -3000), min(hi, 3000)
    data = torch.randint(lo, hi + 1, shape, dtype=torch.int64).to(ref.INT_DTYPE[dtype])
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def check(op, a, other):
    r = getattr(q, op)(a, other)
    exp = ref.compare_ref(op, a, other)
    torch_r = getattr(torch, op)(a.dequantize(), other.dequantize() if isinstance(other, torch.Tensor) else other)
    assert r.dtype == torch.bool and r.shape == torch_r.shape
    if not (a.dtype == torch.qint32 or (isinstance(other, torch.Tensor) and other.dtype == torch.qint32)):
        assert torch.equal(r, torch_r), (op, other if not isinstance(other, torch.Tensor) else "tensor")
    assert torch.equal(r, torch.from_numpy(np.asarray(exp, dtype=bool)))


PAIRS = [  # (dtype_a, scale_a, zp_a, dtype_b, scale_b, zp_b)
    (torch.quint8, 0.05, 128, torch.quint8, 0.05, 128),  # same qparams
    (torch.quint8, 0.05, 128, torch.quint8, 0.05, 3),  # same scale, shifted grid
    (torch.quint8, 0.05, 128, torch.quint8, 0.1, 128),  # grids that share every other point
    (torch.quint8, 0.037, 100, torch.qint8, 0.011, -7),  # mixed dtypes and scales
    (torch.qint8, 0.1, 0, torch.qint8, 0.3, 5),
    (torch.qint8, 0.02, -3, torch.quint8, 0.02, 250),
    (torch.qint32, 0.001, 0, torch.qint32, 0.0015, 7),
    (torch.qint32, 0.01, 2, torch.quint8, 0.05, 128),
    (torch.quint8, 1e-30, 0, torch.qint8, 3e-30, 0),  # tiny scales
]


@pytest.mark.parametrize("op", OPS)
def test_tensor_tensor(isa, op):
    for ta, sa, za, tb, sb, zb in PAIRS:
        for sha, shb in [
            ((1000,), (1000,)),
            ((3, 67), (3, 67)),
            ((4, 5, 6), (5, 1)),
            ((7,), ()),
            ((), (2, 9)),
            ((0, 3), (1, 3)),
        ]:
            check(op, rand_q(sha, ta, sa, za), rand_q(shb, tb, sb, zb))


@pytest.mark.parametrize("op", OPS)
def test_tensor_tensor_layouts(isa, op):
    a = rand_q((2, 16, 5, 7), torch.quint8, 0.05, 128)
    b = rand_q((2, 16, 5, 7), torch.qint8, 0.03, 1)
    check(op, a.contiguous(memory_format=torch.channels_last), b)
    check(op, a.transpose(1, 3), b.transpose(1, 3))
    check(op, a[:, 1::3], b[:, 2::3])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["ge", "ne"])
def test_tensor_tensor_strided_walk_threads(isa, threads, op):
    """Outputs too big for one task (threads split them inside rows), operands strided, permuted or
    broadcast, 8-bit and qint32 sides: exact against the reference."""
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a = rand_q((3, 41, 37, 29), torch.quint8, 0.05, 128)
        b = rand_q((3, 41, 37, 87), torch.qint8, 0.03, 1)
        c = rand_q((3, 41, 37, 29), torch.qint32, 0.01, 2)
        check(op, a, rand_q((41, 1, 29), torch.qint8, 0.1, 0))
        check(op, a.permute(2, 0, 3, 1), b[..., ::3].permute(2, 0, 3, 1))
        check(op, a.contiguous(memory_format=torch.channels_last), b[:, :, :, 1::3])
        check(op, c[:, 1::2].transpose(1, 3), a[:, 2::2].transpose(1, 3))
        check(op, a.transpose(0, 3), 0.5)  # Tensor-Scalar: one strided operand
    finally:
        torch.set_num_threads(old)


SCALARS = [
    0.0,
    0.05,
    -0.05,
    0.025,
    1.234,
    -7.0,
    100.0,
    -1e9,
    float("inf"),
    float("-inf"),
    float("nan"),
    3,
    -2,
    True,
    6.4,
    6.45,
    1e-40,
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_tensor_scalar(isa, op, dtype):
    for scale, zp in [
        (0.05, ref.QRANGE[dtype][0] if dtype != torch.qint32 else 0),
        (0.05, 0),
        (0.1, 7),
        (0.0137, 3),
        (1e-30, 0),
    ]:
        a = rand_q((333,), dtype, scale, zp)
        for c in SCALARS:
            check(op, a, c)
        # every grid point and its neighbours as thresholds
        for v in a.dequantize().unique()[::25].tolist():
            for c in (v, v + 1e-7, v - 1e-7):
                check(op, a, c)


@pytest.mark.parametrize("op", OPS)
def test_tensor_scalar_layouts(isa, op):
    a = rand_q((2, 16, 5, 7), torch.qint8, 0.05, 3)
    check(op, a.contiguous(memory_format=torch.channels_last), 0.3)
    check(op, a[:, ::2, :, 1:], -0.4)
    check(op, rand_q((0, 5), torch.quint8, 0.1, 0), 0.3)
    check(op, rand_q((), torch.quint8, 0.1, 0), 0.3)


def test_vector_paths_match_scalar():
    import torch_qplugin
    from torch_qplugin import _isa

    a = rand_q((4099,), torch.quint8, 0.037, 100)
    b = rand_q((4099,), torch.qint8, 0.011, -7)
    c = rand_q((4099,), torch.quint8, 0.037, 3)
    outs = {}
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            outs[isa] = [getattr(q, op)(x, y) for op in OPS for x, y in ((a, b), (a, c), (a, b[:1]), (a[:1], c))]
            outs[isa] += [getattr(q, op)(a, 1.0) for op in OPS]
    for isa, rs in outs.items():
        for r, s in zip(rs, outs["scalar"]):
            assert torch.equal(r, s), isa


def test_equal():
    a = rand_q((3, 4), torch.quint8, 0.05, 128)
    assert q.equal(a, a.clone())
    assert q.equal(a, a.contiguous().clone())
    b = torch._make_per_tensor_quantized_tensor(a.int_repr(), 0.05, 127)
    assert not q.equal(a, b)  # same integers, other zero point
    c = torch._make_per_tensor_quantized_tensor(a.int_repr(), 0.06, 128)
    assert not q.equal(a, c)
    d = a.int_repr().clone()
    d[1, 2] += 1
    assert not q.equal(a, torch._make_per_tensor_quantized_tensor(d, 0.05, 128))
    assert not q.equal(a, rand_q((4, 3), torch.quint8, 0.05, 128))
    assert not q.equal(a, torch._make_per_tensor_quantized_tensor(a.int_repr().to(torch.int8), 0.05, 0))
    cl = rand_q((2, 3, 4, 5), torch.qint8, 0.1, 0)
    assert q.equal(cl, cl.contiguous(memory_format=torch.channels_last))
    pc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    assert q.equal(pc, pc.clone())
    assert not q.equal(
        pc, torch.quantize_per_channel(pc.dequantize(), torch.tensor([0.1, 0.3]), torch.tensor([0, 1]), 0, torch.quint8)
    )
    assert not q.equal(pc, torch._make_per_tensor_quantized_tensor(pc.int_repr(), 0.1, 0))
    for x, y in [(a, a.clone()), (a, b)]:
        assert q.equal(x, y) == torch.equal(x, y)


def test_opcheck():
    a = rand_q((2, 3), torch.quint8, 0.05, 128)
    b = rand_q((3,), torch.qint8, 0.02, 1)
    utils = ("test_schema", "test_autograd_registration")
    for op in OPS:
        torch.library.opcheck(getattr(q, op).default, (a, b), test_utils=utils)
        torch.library.opcheck(getattr(q, op).Scalar, (a, 0.5), test_utils=utils)
    torch.library.opcheck(q.equal, (a, a), test_utils=utils)


def test_bad_inputs():
    a = rand_q((2, 3), torch.quint8, 0.05, 128)
    with pytest.raises(
        RuntimeError, match=r"qplugin::gt: the shapes of the two inputs should be broadcastable, got \[2, 3\] and \[4\]"
    ):
        q.gt(a, rand_q((4,), torch.quint8, 0.05, 128))
    with pytest.raises(RuntimeError, match=r"qplugin::eq: other should be a quantized tensor .*dtype Float"):
        q.eq(a, torch.randn(2, 3))
    with pytest.raises(RuntimeError, match=r"qplugin::lt: self should be a quantized tensor .*dtype Float"):
        q.lt(torch.randn(2, 3), 0.5)
    pc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::ge: self should be a per_tensor_affine quantized tensor, got qscheme per_channel_affine",
    ):
        q.ge(pc, 0.1)
    with pytest.raises(RuntimeError, match=r"qplugin::ne: other should be a per_tensor_affine"):
        q.ne(a, pc)
    with pytest.raises(RuntimeError, match=r"qplugin::equal: other should be a quantized tensor"):
        q.equal(a, torch.randn(2, 3))
    with pytest.raises(RuntimeError, match=r"qplugin::le: other should be a real number, got a complex number"):
        q.le(a, 1 + 2j)


def test_scalar_extremes_full_int32_range(isa):
    gen = torch.Generator().manual_seed(5)
    a = torch._make_per_tensor_quantized_tensor(
        torch.randint(-(2**31), 2**31 - 1, (1000,), dtype=torch.int32, generator=gen), 1.0, 0
    )
    b = torch._make_per_tensor_quantized_tensor(
        torch.randint(0, 256, (1000,), dtype=torch.uint8, generator=gen), 1e30, 0
    )
    for x in (a, b):
        for c in [2**40, 1e300, -1e300, 16777217, 2**31 - 1, 1e38, 3.4e38, 2**24 + 1]:
            for op in OPS:
                check(op, x, c)
    # tensor-tensor over the whole int32 range (float32 rounding of q - zp makes neighbours tie)
    check("eq", a, a.clone())
    check("le", a, torch._make_per_tensor_quantized_tensor(a.int_repr().flip(0), 1.0, 0))


BIG = [2**30 + 3, 2**30 + 5, 2**30 + 4, -(2**31), 2**31 - 1, 2**30 + 5, 0, -(2**30) - 1, -(2**30) - 2]


@pytest.mark.parametrize("op", OPS)
def test_qint32_beyond_float32_exact(isa, op):
    # |q - zp| > 2^24 compares exactly, not in float32 (where 2^30 + 3 == 2^30 + 5 at scale 0.5).
    from fractions import Fraction

    for scale, zp in [(0.5, 0), (0.1, 0), (1e-3, -(2**31)), (3.0, 2**31 - 1), (0.37, 12345)]:
        a = torch._make_per_tensor_quantized_tensor(torch.tensor(BIG, dtype=torch.int32), scale, zp)
        real = [Fraction(v - zp) * Fraction(scale) for v in BIG]
        for c in [float(real[0]), float(real[1]), float(real[1]) + 0.25, 2.0**29 + 1, -(2.0**29) - 0.5, 0.0]:
            r = getattr(q, op)(a, c)
            want = [_SIGN[op]((x > Fraction(c)) - (x < Fraction(c))) for x in real]
            assert r.tolist() == want, (scale, zp, c)
            check(op, a, c)
        # tensor vs tensor: another qint32 grid and an 8-bit one
        b = torch._make_per_tensor_quantized_tensor(torch.tensor(BIG[::-1], dtype=torch.int32), scale * 2, zp // 2)
        check(op, a, b)
        r = getattr(q, op)(a, b)
        rb = [Fraction(v - zp // 2) * Fraction(scale * 2) for v in BIG[::-1]]
        assert r.tolist() == [_SIGN[op]((x > y) - (x < y)) for x, y in zip(real, rb)]
        c8 = torch._make_per_tensor_quantized_tensor(torch.arange(9, dtype=torch.uint8) * 30, 0.3, 128)
        check(op, a, c8)
    # the example: scale 0.5, zp 0, values around 2^30
    a = torch._make_per_tensor_quantized_tensor(torch.tensor([2**30 + 3, 2**30 + 5], dtype=torch.int32), 0.5, 0)
    assert q.gt(a, 2.0**29 + 2).tolist() == [False, True]
    assert q.eq(a, a.flip(0)).tolist() == [False, False]


_SIGN = {
    "eq": lambda s: s == 0,
    "ne": lambda s: s != 0,
    "ge": lambda s: s >= 0,
    "le": lambda s: s <= 0,
    "gt": lambda s: s > 0,
    "lt": lambda s: s < 0,
}
