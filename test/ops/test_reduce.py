"""max / min / max.dim / min.dim / argmax / argmin / mean on quantized tensors
(API.md "Sorting and reductions"). Values are exact (quantized outputs keep the input's
qparams), indices are the first extreme element as torch documents, mean follows torch's
quantized rounding exactly and stays within 1 step of the float64 reference."""

import numpy as np
import pytest
import torch

import reference
import torch_qplugin  # noqa: F401

q = torch.ops.qplugin
RANGE = {torch.quint8: (0, 256), torch.qint8: (-128, 128), torch.qint32: (-(2**31), 2**31 - 1)}
ZP = {torch.quint8: 120, torch.qint8: 5, torch.qint32: -9}
DTYPES = [torch.quint8, torch.qint8, torch.qint32]


def make_q(shape, dtype, scale=0.03, zp=None, levels=None, lo=None, hi=None):
    a, b = RANGE[dtype]
    a, b = (a if lo is None else lo), (b if hi is None else hi)
    if levels is not None:
        choices = torch.randint(a, b, (levels,))
        data = choices[torch.randint(0, levels, shape)]
    else:
        data = torch.randint(a, b, shape, dtype=torch.int64)
    data = data.to(reference.INT_DTYPE[dtype])
    return torch._make_per_tensor_quantized_tensor(data, scale, ZP[dtype] if zp is None else zp)


def layouts(x):
    out = [("contiguous", x)]
    if x.dim() >= 2:
        out.append(("transposed", x.transpose(0, -1).contiguous().transpose(0, -1)))
        big = torch._make_per_tensor_quantized_tensor(
            torch.cat([x.int_repr(), x.int_repr()], dim=-1), x.q_scale(), x.q_zero_point()
        )
        out.append(("strided", big[..., : x.shape[-1]]))
    if x.dim() == 4:
        out.append(("channels_last", x.contiguous(memory_format=torch.channels_last)))
    return out


def same_qparams(v, x):
    assert v.is_quantized and v.dtype == x.dtype
    assert v.q_scale() == x.q_scale() and v.q_zero_point() == x.q_zero_point()


SHAPES = [(1,), (7,), (64,), (129,), (3, 65), (4, 1, 33), (2, 3, 5, 7), (2, 130, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("levels", [None, 3])
def test_max_min_all(isa, dtype, shape, levels):
    x = make_q(shape, dtype, levels=levels)
    for _, xl in layouts(x):
        for fn, ref, tfn in [(q.max, np.max, torch.max), (q.min, np.min, torch.min)]:
            v = fn(xl)
            same_qparams(v, x)
            assert v.shape == ()
            assert int(v.int_repr()) == ref(x.int_repr().numpy())
            assert torch.equal(v.int_repr(), tfn(xl).int_repr())


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_min_long_rows_and_threads(dtype):
    # >= 2 chunks of 4M elements: the cross-chunk merge (glue, not kernel) keeps the first index
    x = make_q((2 * (1 << 22) + 5,), dtype, levels=50)
    prev = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            assert int(q.max(x).int_repr()) == int(x.int_repr().max())
            assert int(q.min(x).int_repr()) == int(x.int_repr().min())
            assert int(q.argmax(x)) == int(reference.argmax_ref(x))
            assert int(q.argmin(x)) == int(reference.argmax_ref(x, largest=False))
    finally:
        torch.set_num_threads(prev)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("levels", [None, 2])
def test_max_min_dim(isa, dtype, shape, levels):
    x = make_q(shape, dtype, levels=levels)
    for _, xl in layouts(x):
        for dim in range(-len(shape), len(shape)):
            for keepdim in (False, True):
                for fn, largest, tfn in [(q.max, True, torch.max), (q.min, False, torch.min)]:
                    v, i = fn(xl, dim, keepdim)
                    same_qparams(v, x)
                    ei = reference.argmax_ref(x, dim, keepdim, largest)
                    np.testing.assert_array_equal(i.numpy(), ei)
                    tv, ti = tfn(xl.dequantize(), dim, keepdim)
                    assert torch.equal(v.dequantize(), tv) and torch.equal(i, ti)
                    if xl is x and not keepdim:  # torch's quantized max.dim is slow (~20 ms a call)
                        assert torch.equal(v.int_repr(), tfn(xl, dim, keepdim)[0].int_repr())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [()])
def test_argmax_argmin(isa, dtype, shape):
    x = make_q(shape, dtype, levels=4)
    for _, xl in layouts(x):
        dims = [None] + list(range(-max(len(shape), 1), max(len(shape), 1)))
        for dim in dims:
            for keepdim in (False, True):
                for fn, largest, tfn in [(q.argmax, True, torch.argmax), (q.argmin, False, torch.argmin)]:
                    i = fn(xl, dim, keepdim)
                    ti = tfn(xl.dequantize(), dim, keepdim)
                    assert i.shape == ti.shape and torch.equal(i, ti), (dim, keepdim)
                    np.testing.assert_array_equal(i.numpy(), reference.argmax_ref(x, dim, keepdim, largest))


def test_reductions_exact_where_float32_dequantize_merges_values(isa):
    # qint32 integers that dequantize to equal floats still order exactly (by q):
    # argmax is the first index of the largest q.
    big = torch.tensor([[2**30, 2**30 + 1, 7, 2**30 + 5, 2**30 + 3, -5, 2**30 + 5]], dtype=torch.int32)
    x = torch._make_per_tensor_quantized_tensor(big, 0.5, 0)
    d = x.dequantize()
    assert d[0, 0] == d[0, 3]  # float32 cannot tell them apart
    assert q.argmax(x, 1).tolist() == [3] and q.argmax(x).item() == 3
    assert q.argmin(x, 1).tolist() == [5]
    v, i = q.max(x, 1)
    assert v.int_repr().tolist() == [2**30 + 5] and i.tolist() == [3]
    assert q.max(x).int_repr().item() == 2**30 + 5 and q.min(x).int_repr().item() == -5
    xm = torch._make_per_tensor_quantized_tensor(torch.tensor([3, 1, 2, 0], dtype=torch.int32), 1.0, -(2**31))
    assert q.argmax(xm).item() == 0 and q.min(xm, 0)[1].item() == 3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,dims",
    [
        ((5,), None),
        ((5,), [0]),
        ((3, 17), [1]),
        ((3, 17), [0]),
        ((3, 17), []),
        ((3, 17), [-1, 0]),
        ((2, 3, 4, 5), [2, 3]),
        ((2, 3, 4, 5), [1]),
        ((2, 3, 4, 5), [0, 2]),
        ((2, 3, 4, 5), None),
        ((4, 1000), [1]),
        ((1, 64, 7, 7), [-1, -2]),
        ((), None),
        ((), [0]),
    ],
)
def test_mean(isa, dtype, shape, dims):
    x = make_q(
        shape, dtype, lo=None if dtype != torch.qint32 else -(10**6), hi=None if dtype != torch.qint32 else 10**6
    )
    for _, xl in layouts(x):
        for keepdim in (False, True):
            m = q.mean(xl, dims, keepdim)
            same_qparams(m, x)
            exp = reference.mean_int_ref(x, dims, keepdim)
            assert tuple(m.shape) == exp.shape
            np.testing.assert_array_equal(m.int_repr().numpy(), exp)
            real = reference.mean_real_ref(x, dims, keepdim)
            reference.assert_within_steps(
                m, reference.requantize_ref(real, x.q_scale(), x.q_zero_point(), dtype), 1, "mean vs float64 reference"
            )
            tm = torch.mean(xl, dims, keepdim) if dims is not None else torch.mean(xl)
            if not keepdim or dims is not None:
                reference.assert_within_steps(m.reshape(tm.shape), tm.int_repr().numpy(), 1, "mean vs torch")


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_mean_long_columns_extremes(isa, dtype):
    # Means over a non-inner dim: 8-bit columns summed in 16-bit lanes, 64 / 128 columns a block
    # (AVX2 / AVX-512), folded into int32 every 256 rows; 300-350 columns leave a plain-loop rest.
    a, b = RANGE[dtype]
    for shape, dims in [((600, 300), [0]), ((2, 300, 5, 70), [1])]:
        for fill in (a, b - 1, None):
            x = (
                make_q(shape, dtype)
                if fill is None
                else torch._make_per_tensor_quantized_tensor(
                    torch.full(shape, fill, dtype=reference.INT_DTYPE[dtype]), 0.03, ZP[dtype]
                )
            )
            m = q.mean(x, dims)
            np.testing.assert_array_equal(
                m.int_repr().numpy(), reference.mean_int_ref(x, dims, False), err_msg=f"{shape} {dims} fill {fill}"
            )


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_mean_middle_dim_rounds_ties_and_near_ties_exactly(isa, dtype):
    # Means over a middle dim of 8-bit data are rounded in the kernel from the block sums: a float32
    # quotient, with the lanes near a tie redone in integers. n = 14 and 30 put exact ties (s / n =
    # k + 0.5) that the float quotient misses by an ulp for many k (float32(1 / n) is off by
    # nearly 2^-24 relative); n = 2047 puts quotients 2^-12 from
    # a tie; n = 65536 is the largest n the kernel takes (sums up to 255 * 2^16), 65537 the
    # int64-sums path beside it.
    a, b = RANGE[dtype]
    g = torch.Generator().manual_seed(5)
    for n, cols in [(14, 700), (30, 333), (2047, 260), (65536, 130), (65537, 70)]:
        if n <= 30:
            data = torch.randint(a, b, (3, n, cols), generator=g)
        else:
            # column j: rows below r_j hold k_j + 1, the rest k_j, so the sum is n * k_j + r_j with
            # r_j around n / 2 (ties and near ties), extremes included
            k = torch.randint(a, b - 1, (cols,), generator=g)
            k[:4] = torch.tensor([a, a, b - 2, b - 2])
            r = n // 2 + torch.randint(-2, 3, (cols,), generator=g)
            r[-2:] = torch.tensor([0, n])  # every row k_j, every row k_j + 1
            data = (k + (torch.arange(n)[:, None] < r[None, :]).to(torch.int64))[None]
        x = torch._make_per_tensor_quantized_tensor(data.to(reference.INT_DTYPE[dtype]), 0.02, ZP[dtype])
        m = q.mean(x, [1])
        np.testing.assert_array_equal(m.int_repr().numpy(), reference.mean_int_ref(x, [1], False), err_msg=f"n {n}")


def test_mean_ties_round_half_even_on_q(isa):
    # sums exactly halfway: (2 + 3) / 2 = 2.5 -> 2, (3 + 4) / 2 = 3.5 -> 4, negatives too
    data = torch.tensor([[2, 3], [3, 4], [-3, -2], [-4, -3]], dtype=torch.int8)
    x = torch._make_per_tensor_quantized_tensor(data, 0.1, 1)
    assert q.mean(x, [1]).int_repr().tolist() == [2, 4, -2, -4]
    assert torch.equal(q.mean(x, [1]).int_repr(), torch.mean(x, [1]).int_repr())


def test_mean_long_row_threads():
    x = make_q((2 * (1 << 22) + 3,), torch.quint8)
    prev = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            np.testing.assert_array_equal(q.mean(x).int_repr().numpy(), reference.mean_int_ref(x))
    finally:
        torch.set_num_threads(prev)


def test_empty(isa):
    x = make_q((0, 4), torch.quint8)
    v, i = q.max(x, 1)
    assert v.shape == (0,) and i.shape == (0,) and v.is_quantized
    assert q.argmin(x, 1, True).shape == (0, 1)
    assert q.mean(x, [1]).shape == (0,)


# ---- errors -------------------------------------------------------------------------------
def test_errors():
    x = make_q((3, 4), torch.qint8)
    e = make_q((0, 4), torch.qint8)
    with pytest.raises(IndexError, match=r"qplugin::max: dim should be in \[-2, 1\] for a tensor of 2 dims, got 2"):
        q.max(x, 2)
    with pytest.raises(IndexError, match=r"qplugin::min: dim should be in \[-2, 1\] for a tensor of 2 dims, got -3"):
        q.min(x, -3)
    with pytest.raises(IndexError, match=r"qplugin::argmax: dim should be in \[-2, 1\]"):
        q.argmax(x, 7)
    with pytest.raises(IndexError, match=r"qplugin::mean: dim should be in \[-2, 1\]"):
        q.mean(x, [0, 2])
    with pytest.raises(ValueError, match=r"qplugin::mean: dim 1 should appear once in dim, got \[1, -1\]"):
        q.mean(x, [1, -1])
    with pytest.raises(IndexError, match=r"qplugin::max: self should have at least one element"):
        q.max(e)
    with pytest.raises(
        IndexError, match=r"qplugin::min: dim 0 should have a non-zero size to reduce over, got shape \[0, 4\]"
    ):
        q.min(e, 0)
    with pytest.raises(IndexError, match=r"qplugin::argmin: self should have at least one element when dim is None"):
        q.argmin(e)
    with pytest.raises(IndexError, match=r"qplugin::argmax: dim 0 should have a non-zero size"):
        q.argmax(e, 0)
    with pytest.raises(ValueError, match=r"qplugin::mean: the reduced dims should hold at least one element"):
        q.mean(e, [0])
    f = torch.randn(3, 4)
    calls = [
        (lambda: q.max(f), "max"),
        (lambda: q.min(f), "min"),
        (lambda: q.max(f, 0), "max"),
        (lambda: q.min(f, 0), "min"),
        (lambda: q.argmax(f), "argmax"),
        (lambda: q.argmin(f, 1), "argmin"),
        (lambda: q.mean(f), "mean"),
    ]
    for call, name in calls:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: self should be a quantized tensor .*non-quantized tensor of dtype Float",
        ):
            call()
    pc = torch.quantize_per_channel(
        torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 1, 2]), 0, torch.qint8
    )
    calls = [
        (lambda: q.max(pc), "max"),
        (lambda: q.min(pc, 1), "min"),
        (lambda: q.argmax(pc), "argmax"),
        (lambda: q.argmin(pc), "argmin"),
        (lambda: q.mean(pc, [1]), "mean"),
    ]
    for call, name in calls:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: self should be a per-tensor affine quantized tensor, got qscheme per_channel_affine",
        ):
            call()


def test_opcheck():
    x = make_q((4, 37), torch.quint8)
    checks = ("test_schema", "test_autograd_registration")
    torch.library.opcheck(q.max.default, (x,), test_utils=checks)
    torch.library.opcheck(q.min.default, (x,), test_utils=checks)
    torch.library.opcheck(getattr(q.max, "dim"), (x, 1, True), test_utils=checks)
    torch.library.opcheck(getattr(q.min, "dim"), (x, 0), test_utils=checks)
    torch.library.opcheck(q.argmax.default, (x, 1, False), test_utils=checks)
    torch.library.opcheck(q.argmin.default, (x,), test_utils=checks)
    torch.library.opcheck(q.mean.default, (x, [1], True), test_utils=checks)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mean_memory_orders(isa, dtype):
    # Permuted views and channels_last are reduced in their memory order (no copy); the result
    # is the same as on the contiguous tensor.
    x = make_q(
        (3, 4, 5, 6), dtype, lo=None if dtype != torch.qint32 else -(10**6), hi=None if dtype != torch.qint32 else 10**6
    )
    views = [x.permute(2, 0, 3, 1), x.permute(3, 2, 1, 0), x.contiguous(memory_format=torch.channels_last)]
    for v in views:
        for dims in ([0], [1], [2], [3], [0, 1], [1, 2], [2, 3], [0, 3], [1, 3], [0, 1, 2]):
            for keepdim in (False, True):
                m = q.mean(v, dims, keepdim)
                np.testing.assert_array_equal(m.int_repr().numpy(), reference.mean_int_ref(v, dims, keepdim))


@pytest.mark.parametrize("dtype", DTYPES)
def test_argmax_argmin_long_strided_columns(isa, dtype):
    # dim 0 of [600, 70]: vector paths walk 32 columns at a time in runs of <= 255 rows (the
    # winning row is found in a later run, an earlier one, or ties across runs keep the first).
    for levels in (None, 4):
        x = make_q((600, 70), dtype, levels=levels)
        for fn, largest in [(q.argmax, True), (q.argmin, False)]:
            i = fn(x, 0, False)
            assert torch.equal(i, torch.argmax(x.dequantize(), 0) if largest else torch.argmin(x.dequantize(), 0))
            np.testing.assert_array_equal(i.numpy(), reference.argmax_ref(x, 0, False, largest))
