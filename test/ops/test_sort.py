"""sort / argsort / topk on quantized tensors (API.md "Sorting and reductions").

Values are bit-exact against a float reference (stable sort of the represented real values) and
against torch; stable-sort indices equal torch.sort(stable=True) on the dequantized tensor; topk
values are exact and its indices point at them.
"""

import numpy as np
import pytest
import torch

import reference
import torch_qplugin  # noqa: F401

q = torch.ops.qplugin
RANGE = {torch.quint8: (0, 256), torch.qint8: (-128, 128), torch.qint32: (-5000, 5000)}
ZP = {torch.quint8: 131, torch.qint8: -3, torch.qint32: 17}


def make_q(shape, dtype, scale=0.07, zp=None, levels=None, gen=None):
    """A per-tensor quantized tensor with random integers (levels: only that many distinct values)."""
    lo, hi = RANGE[dtype]
    if levels is not None:
        choices = torch.randint(lo, hi, (levels,), generator=gen)
        data = choices[torch.randint(0, levels, shape, generator=gen)]
    else:
        data = torch.randint(lo, hi, shape, generator=gen)
    data = data.to(reference.INT_DTYPE[dtype])
    return torch._make_per_tensor_quantized_tensor(data, scale, ZP[dtype] if zp is None else zp)


def layouts(x):
    """The same values as contiguous, strided (non-contiguous view) and, for 4-D, channels_last."""
    out = [("contiguous", x)]
    if x.dim() >= 2:
        big = torch._make_per_tensor_quantized_tensor(
            torch.cat([x.int_repr(), x.int_repr()], dim=-1), x.q_scale(), x.q_zero_point()
        )
        out.append(("strided", big[..., : x.shape[-1]]))
        out.append(("transposed", x.transpose(0, -1).contiguous().transpose(0, -1)))
    if x.dim() == 4:
        out.append(("channels_last", x.contiguous(memory_format=torch.channels_last)))
    return out


def check_sort(x, dim, descending, stable=True):
    v, i = q.sort(x, dim, descending, stable=stable)
    ev, ei = reference.sort_ref(x, dim, descending)
    assert v.dtype == x.dtype and v.q_scale() == x.q_scale() and v.q_zero_point() == x.q_zero_point()
    assert i.dtype == torch.int64 and v.shape == x.shape and i.shape == x.shape
    np.testing.assert_array_equal(v.int_repr().numpy(), ev)
    np.testing.assert_array_equal(i.numpy(), ei)
    if x.dtype != torch.qint32 or x.int_repr().abs().max() < 2**24 - abs(x.q_zero_point()):
        # float32 dequantize is exact (injective) here: torch.sort on it is a second oracle
        tv, ti = torch.sort(x.dequantize(), dim=dim, descending=descending, stable=True)
        assert torch.equal(v.dequantize(), tv)
        assert torch.equal(i, ti)
    return v, i


SHAPES = [(1,), (5,), (63,), (64,), (65,), (300,), (7, 33), (3, 4, 129), (2, 3, 5, 7)]


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
@pytest.mark.parametrize("shape", SHAPES)
def test_sort_every_dim_and_layout(isa, dtype, shape):
    x = make_q(shape, dtype)
    for name, xl in layouts(x):
        for dim in range(-len(shape), len(shape)):
            for descending in (False, True):
                check_sort(xl, dim, descending)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
@pytest.mark.parametrize("levels", [1, 2, 5])
def test_sort_heavy_ties_stable(isa, dtype, levels):
    x = make_q((3, 5003), dtype, levels=levels)  # >= 4096: the 4-way interleaved scatter
    for dim in (0, 1):
        for descending in (False, True):
            check_sort(x, dim, descending)


@pytest.mark.parametrize(
    "dtype,zp",
    [
        (torch.quint8, 0),
        (torch.quint8, 255),
        (torch.quint8, 37),
        (torch.qint8, -128),
        (torch.qint8, 127),
        (torch.qint8, 0),
    ],
)
def test_sort_extreme_qparams(isa, dtype, zp):
    for scale in (1e-6, 0.3, 1e6):
        check_sort(make_q((2, 501), dtype, scale=scale, zp=zp), -1, False)
        check_sort(make_q((2, 501), dtype, scale=scale, zp=zp), -1, True)


def test_sort_unstable_is_a_valid_sort(isa):
    x = make_q((5, 300), torch.quint8, levels=7)
    for stable in (False, None):
        v, i = q.sort(x, 1, True, stable=stable)
        ev, _ = reference.sort_ref(x, 1, True)
        np.testing.assert_array_equal(v.int_repr().numpy(), ev)
        assert torch.equal(torch.gather(x.int_repr(), 1, i), v.int_repr())
        assert torch.equal(torch.sort(i, 1).values, torch.arange(300).expand(5, 300))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_sort_long_rows_split_over_threads(isa, dtype):
    # Rows >= 64K are counted and scattered by several threads; any thread count gives the same.
    x = make_q((70001,), dtype)
    x2 = make_q((2, 140000), dtype, levels=9)
    prev = torch.get_num_threads()
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            check_sort(x, 0, False)
            check_sort(x, 0, True)
            check_sort(x2, 1, True)
    finally:
        torch.set_num_threads(prev)


def test_sort_matches_torch_quantized_sort(isa):
    for dtype in (torch.quint8, torch.qint8, torch.qint32):
        x = make_q((9, 257), dtype)
        v, i = q.sort(x, 1, False, stable=True)
        tv, ti = torch.sort(x, dim=1, stable=True)
        assert torch.equal(v.int_repr(), tv.int_repr()) and torch.equal(i, ti)


def test_sort_exact_where_float32_dequantize_merges_values(isa):
    # qint32 values that dequantize to equal float32s (|q - zp| > 2^24) still sort by
    # their exact real values (q - zp) * scale, i.e. by q: sort, argsort, topk, max / min.
    big = torch.tensor([2**30, 2**30 + 1, -(2**30) - 3, 2**30 - 1, 7, 2**30 + 5, 2**30 + 3, 2**30], dtype=torch.int32)
    for scale, zp in [(0.5, 0), (1e-3, -(2**31)), (7.0, 2**31 - 1)]:
        xb = torch._make_per_tensor_quantized_tensor(big, scale, zp)
        for descending in (False, True):
            v, i = check_sort(xb, 0, descending)
            exp = sorted(big.tolist(), reverse=descending)
            assert v.int_repr().tolist() == exp
            assert torch.equal(q.argsort(xb, 0, descending), i)
        tv, ti = q.topk(xb, 3)
        assert tv.int_repr().tolist() == [2**30 + 5, 2**30 + 3, 2**30 + 1] and ti.tolist() == [5, 6, 1]
        assert q.max(xb).int_repr().item() == 2**30 + 5 and q.min(xb).int_repr().item() == -(2**30) - 3
        mv, mi = q.max(xb, 0)
        assert mv.int_repr().item() == 2**30 + 5 and mi.item() == 5
    small = torch._make_per_tensor_quantized_tensor(torch.tensor([3, 1, 2, 0], dtype=torch.int32), 1.0, -(2**31))
    assert q.sort(small)[0].int_repr().tolist() == [0, 1, 2, 3]


def test_sort_empty_and_0dim(isa):
    for shape in [(0,), (3, 0), (0, 4)]:
        x = make_q(shape, torch.quint8)
        for dim in range(len(shape)):
            v, i = q.sort(x, dim)
            assert v.shape == x.shape and i.shape == x.shape and v.is_quantized
    x = make_q((), torch.qint8)
    for dim in (0, -1):
        v, i = q.sort(x, dim, True)
        assert v.shape == () and i.shape == () and int(i) == 0
        assert torch.equal(v.int_repr(), x.int_repr())


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_argsort(isa, dtype):
    x = make_q((6, 5, 41), dtype, levels=11)
    for dim in (0, 1, 2, -1):
        for descending in (False, True):
            _, ei = reference.sort_ref(x, dim, descending)
            np.testing.assert_array_equal(q.argsort(x, dim, descending).numpy(), ei)


def check_topk(x, k, dim, largest, sorted_=True):
    v, i = q.topk(x, k, dim, largest, sorted_)
    ev = reference.topk_values_ref(x, k, dim, largest)
    assert v.q_scale() == x.q_scale() and v.q_zero_point() == x.q_zero_point() and v.dtype == x.dtype
    np.testing.assert_array_equal(v.int_repr().numpy(), ev)
    if x.dim() > 0:
        # indices point at the values, and are distinct
        assert torch.equal(torch.gather(x.int_repr(), dim, i), v.int_repr())
        srt = torch.sort(i.movedim(dim, -1), -1).values
        assert bool((srt[..., 1:] != srt[..., :-1]).all())
    tv, _ = torch.topk(x.dequantize(), k, dim, largest, True)
    assert torch.equal(v.dequantize(), tv)
    return v, i


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
@pytest.mark.parametrize("shape", [(1,), (50,), (3, 200), (2, 3, 70), (5000,), (2, 20000)])
def test_topk_k_range(isa, dtype, shape):
    x = make_q(shape, dtype)
    for name, xl in layouts(x):
        for dim in range(-len(shape), len(shape)):
            n = shape[dim]
            for k in sorted({0, 1, min(3, n), n // 2, n - 1 if n > 1 else n, n}):
                for largest in (True, False):
                    check_topk(xl, k, dim, largest)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("levels", [1, 2, 3, None])
def test_topk_prefilter_and_threshold_ties(isa, dtype, levels):
    # Rows >= 4096 with small k take the block-maximum prefilter; few levels put many ties on
    # the threshold key.
    x = make_q((3, 100003), dtype, levels=levels)
    for k in (1, 10, 1000, 25000, 100003):
        for largest in (True, False):
            check_topk(x, k, 1, largest)
            check_topk(x, k, 1, largest, sorted_=False)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_topk_small_k_sparse_large_keys(isa, dtype):
    # Small k scans 64-byte blocks and skips four blocks at a time that hold nothing above the
    # k-th key so far: large keys planted at group and block edges, inside skipped stretches and
    # in the tail (n not a multiple of 64), the rest far below them.
    lo, hi = RANGE[dtype]
    n = 64 * 103 + 37
    g = torch.Generator().manual_seed(9)
    for largest in (True, False):
        base = torch.randint(lo + 60, hi - 60, (n,), generator=g)
        far = hi if largest else lo
        for pos in ([0], [255, 256, 257], [64 * 40 + 63, 64 * 77], [n - 1, n - 37], list(range(3000, 3020))):
            data = base.clone()
            for j, p in enumerate(pos):
                data[p] = far - (j % 3) if largest else far + (j % 3)
            x = torch._make_per_tensor_quantized_tensor(data.to(reference.INT_DTYPE[dtype]), 0.07, ZP[dtype])
            for k in (1, 3, 10):
                check_topk(x, k, 0, largest)


def test_topk_matches_torch_quantized_topk(isa):
    for dtype in (torch.quint8, torch.qint8, torch.qint32):
        x = make_q((4, 1000), dtype)
        for k in (0, 10, 1000):
            v, _ = q.topk(x, k)
            tv, _ = torch.topk(x, k)
            assert torch.equal(v.int_repr(), tv.int_repr())


def test_topk_0dim_and_empty(isa):
    x = make_q((), torch.quint8)
    for k in (0, 1):
        v, i = q.topk(x, k)
        tv, ti = torch.topk(x.dequantize(), k)
        assert v.shape == tv.shape and torch.equal(v.dequantize(), tv) and torch.equal(i, ti)
    e = make_q((0, 5), torch.qint8)
    v, i = q.topk(e, 2, 1)
    assert v.shape == (0, 2) and i.shape == (0, 2)
    v, i = q.topk(e, 0, 0)
    assert v.shape == (0, 5)


# ---- errors -------------------------------------------------------------------------------
def test_errors():
    x = make_q((3, 4), torch.quint8)
    with pytest.raises(IndexError, match=r"qplugin::sort: dim should be in \[-2, 1\] for a tensor of 2 dims, got 2"):
        q.sort(x, 2)
    with pytest.raises(
        IndexError, match=r"qplugin::argsort: dim should be in \[-2, 1\] for a tensor of 2 dims, got -3"
    ):
        q.argsort(x, -3)
    with pytest.raises(IndexError, match=r"qplugin::topk: dim should be in \[-2, 1\]"):
        q.topk(x, 1, 5)
    with pytest.raises(IndexError, match=r"qplugin::topk: k should be in \[0, 4\] \(the size of dim -1\), got 5"):
        q.topk(x, 5)
    with pytest.raises(IndexError, match=r"qplugin::topk: k should be in \[0, 3\] \(the size of dim 0\), got -1"):
        q.topk(x, -1, 0)
    f = torch.randn(3, 4)
    for call, name in [(lambda: q.sort(f), "sort"), (lambda: q.argsort(f), "argsort"), (lambda: q.topk(f, 1), "topk")]:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: self should be a quantized tensor .*got a non-quantized tensor of dtype Float",
        ):
            call()
    pc = torch.quantize_per_channel(
        torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 1, 2]), 0, torch.quint8
    )
    for call, name in [
        (lambda: q.sort(pc), "sort"),
        (lambda: q.argsort(pc), "argsort"),
        (lambda: q.topk(pc, 1), "topk"),
    ]:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: self should be a per-tensor affine quantized tensor, got qscheme per_channel_affine",
        ):
            call()


def test_opcheck():
    x = make_q((4, 37), torch.quint8)
    checks = ("test_schema", "test_autograd_registration")
    torch.library.opcheck(q.sort.default, (x,), {"dim": 1, "descending": True, "stable": True}, test_utils=checks)
    torch.library.opcheck(q.argsort.default, (x, 0, False), test_utils=checks)
    torch.library.opcheck(q.topk.default, (x, 5, -1, False, True), test_utils=checks)
