"""qplugin max_pool2d / avg_pool2d / adaptive_avg_pool2d vs the float64 references and torch's
own quantized kernels, on every kernel path (isa fixture)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torch_qplugin

import reference as ref

q = torch.ops.qplugin

DTYPES = [torch.quint8, torch.qint8, torch.qint32]
ZP = {torch.quint8: 117, torch.qint8: -5, torch.qint32: 13}


def _qinput(shape, dtype, layout, scale=0.05, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2.5
    if dtype == torch.qint32:
        x = x * 30
    qx = torch.quantize_per_tensor(x, scale, ZP[dtype], dtype)
    if layout == "channels_last":
        qx = qx.contiguous(memory_format=torch.channels_last)
    elif layout == "strided":
        # A non-contiguous view: every other channel and a column slice.
        big = torch.quantize_per_tensor(
            torch.randn(shape[:-3] + (shape[-3] * 2, shape[-2], shape[-1] + 3), generator=g) * 2.5,
            scale,
            ZP[dtype],
            dtype,
        )
        qx = big[..., ::2, :, 1 : shape[-1] + 1]
        assert not qx.is_contiguous()
    return qx


def _real(qx):
    return (qx.int_repr().numpy().astype(np.int64) - qx.q_zero_point()) * qx.q_scale()


def _extremes_and_random(shape, dtype, seed):
    """Integer data of shape at the type's minimum, at its maximum, and random (seeded)."""
    lo, hi = ref.QRANGE[dtype]
    g = torch.Generator().manual_seed(seed)
    datas = [torch.full(shape, v, dtype=ref.INT_DTYPE[dtype]) for v in (lo, hi)]
    datas.append(torch.randint(lo, hi + 1, shape, dtype=ref.INT_DTYPE[dtype], generator=g))
    return datas


def _assert_equal_scalar_path(calls, qx):
    """Each call's output on the running path equals the scalar path's."""
    for f in calls:
        out = f(qx)
        with torch_qplugin.kernel_isa("scalar"):
            assert torch.equal(out.int_repr(), f(qx).int_repr())


def _check_nhwc_avg(shape, dtype, seed, calls, adaptive):
    """On channels_last data of shape at the type's extremes and random: every call equals the scalar
    path, and adaptive_avg_pool2d to size `adaptive` is within a step of the float64 reference."""
    for data in _extremes_and_random(shape, dtype, seed):
        qx = torch._make_per_tensor_quantized_tensor(data, 0.05, ZP[dtype]).contiguous(
            memory_format=torch.channels_last
        )
        _assert_equal_scalar_path(calls, qx)
        expected = ref.requantize_ref(
            ref.adaptive_avg_pool2d_ref(_real(qx), adaptive), qx.q_scale(), qx.q_zero_point(), dtype
        )
        ref.assert_within_steps(q.adaptive_avg_pool2d(qx, list(adaptive)), expected, 1, f"adaptive {adaptive}")


def _assert_same_meta(out, qx):
    assert out.q_scale() == qx.q_scale() and out.q_zero_point() == qx.q_zero_point()
    assert out.dtype == qx.dtype
    if qx.dim() == 4 and qx.is_contiguous(memory_format=torch.channels_last) and not qx.is_contiguous():
        assert out.is_contiguous(memory_format=torch.channels_last)
    else:
        assert out.is_contiguous()


LAYOUTS = ["contiguous", "channels_last", "strided"]
# (1, 2, 5, 261): NCHW rows wide enough for the vector stride-2 pick of max pooling (131 outputs:
# 2 x 64 on AVX-512, 4 x 32 on AVX2, then the scalar tail).
SHAPES = [(2, 19, 13, 17), (1, 64, 9, 8), (5, 11, 7), (3, 130, 6, 5), (1, 300, 5, 6), (1, 2, 5, 261)]

MAX_CFGS = [  # kernel, stride, padding, dilation, ceil_mode
    ([3, 3], [2, 2], [1, 1], [1, 1], False),
    ([2, 3], [1, 2], [1, 0], [2, 1], True),
    ([3], [3], [1], [1], True),
    ([2, 2], [], [0, 1], [1, 1], False),
    ([4, 3], [3, 1], [2, 1], [1, 2], True),
    ([1, 1], [1, 1], [0, 0], [1, 1], False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max_pool2d_exact(isa, dtype, layout):
    for si, shape in enumerate(SHAPES):
        if layout == "channels_last" and len(shape) == 3:
            continue
        qx = _qinput(shape, dtype, layout, seed=si)
        for k, s, p, d, c in MAX_CFGS:
            out = q.max_pool2d(qx, k, s, p, d, c)
            _assert_same_meta(out, qx)
            expected = ref.max_pool2d_ref(qx.int_repr().numpy(), k, s, p, d, c)
            np.testing.assert_array_equal(out.int_repr().numpy(), expected, err_msg=f"{shape} {k} {s} {p} {d} {c}")
            two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
            theirs = torch.ops.quantized.max_pool2d(qx, two(k), two(s) if s else two(k), two(p), two(d), c)
            assert torch.equal(out.int_repr(), theirs.int_repr())
            assert torch.equal(
                F.max_pool2d(qx, two(k), two(s) if s else None, two(p), two(d), ceil_mode=c).int_repr(), out.int_repr()
            )


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_max_pool2d_stride2_rows_every_width(isa, dtype):
    # NCHW 8-bit windows 3 wide, stride 2, pad 1 on even widths >= 18 run one fused pass per output
    # row (loads at columns 2j - 1 and 2j, 16 or 8 outputs a step, output 0 and an overlapping last
    # step by the scalar rule): every width from 18 to 70, 112, 130; window heights 3, 2 and 3
    # dilated, rows of padding at the top and bottom; each output's three columns each hold the
    # window's maximum somewhere, the type's extremes included.
    lo, hi = (0, 255) if dtype == torch.quint8 else (-128, 127)
    int_dt = torch.uint8 if dtype == torch.quint8 else torch.int8
    g = torch.Generator().manual_seed(11)
    cfgs = [([3, 3], [2, 2], [1, 1], [1, 1]), ([2, 3], [1, 2], [0, 1], [1, 1]), ([3, 3], [2, 2], [1, 1], [2, 1])]
    for w in list(range(18, 71, 2)) + [112, 130]:
        data = torch.randint(lo, hi + 1, (2, 3, 7, w), generator=g)
        data[0, 0] = lo  # a plane of the lowest value (padding must not show)
        data[0, 1] = lo
        data[0, 1, :, ::3] = hi  # the maximum on every third column: left, middle and right taps
        data[1, 2] = hi
        qx = torch._make_per_tensor_quantized_tensor(data.to(int_dt), 0.1, 3)
        for k, s, p, d in cfgs:
            out = q.max_pool2d(qx, k, s, p, d, False)
            np.testing.assert_array_equal(
                out.int_repr().numpy(),
                ref.max_pool2d_ref(data.numpy(), k, s, p, d, False),
                err_msg=f"W {w} {k} {s} {p} {d}",
            )


AVG_CFGS = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ([3, 3], [2, 2], [1, 1], False, True, None),
    ([3, 3], [2, 2], [1, 1], True, False, None),
    ([2, 3], [1, 2], [1, 0], True, True, None),
    ([3], [], [1], False, False, 5),
    ([2, 2], [2, 2], [0, 0], False, True, None),
    ([5, 4], [3, 1], [2, 2], True, False, 7),
    ([1, 1], [1, 1], [0, 0], False, True, None),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_avg_pool2d(isa, dtype):
    for si, shape in enumerate(SHAPES):
        base = _qinput(shape, dtype, "contiguous", seed=si)
        for k, s, p, c, cip, dov in AVG_CFGS:
            out = q.avg_pool2d(base, k, s, p, c, cip, dov)
            _assert_same_meta(out, base)
            expected = ref.requantize_ref(
                ref.avg_pool2d_ref(_real(base), k, s, p, c, cip, dov), base.q_scale(), base.q_zero_point(), dtype
            )
            ref.assert_within_steps(out, expected, 1, f"avg {shape} {k} {s} {p} {c} {cip} {dov}")
            # torch's NCHW kernel rounds exactly like ours (8-bit: its int32 sums don't overflow).
            theirs = F.avg_pool2d(base, k, s if s else None, p, c, cip, dov)
            if dtype != torch.qint32:
                assert torch.equal(out.int_repr(), theirs.int_repr()), f"{shape} {k} {s} {p} {c} {cip} {dov}"
            # Every layout gives the same numbers.
            for layout in ("channels_last", "strided"):
                if layout == "channels_last" and len(shape) == 3:
                    continue
                other = _qinput(shape, dtype, layout, seed=si)
                if layout == "channels_last":
                    assert torch.equal(other.int_repr(), base.int_repr())
                    o2 = q.avg_pool2d(other, k, s, p, c, cip, dov)
                    _assert_same_meta(o2, other)
                    assert torch.equal(o2.int_repr(), out.int_repr())
                    if dtype != torch.qint32:  # torch's NHWC kernel rounds its own way: within 1 step
                        ref.assert_within_steps(
                            o2,
                            F.avg_pool2d(other, k, s if s else None, p, c, cip, dov).int_repr().numpy(),
                            1,
                            "vs torch NHWC",
                        )
                else:
                    o2 = q.avg_pool2d(other, k, s, p, c, cip, dov)
                    o3 = q.avg_pool2d(other.contiguous(), k, s, p, c, cip, dov)
                    assert torch.equal(o2.int_repr(), o3.int_repr())


ADAPTIVE_SIZES = [(1, 1), (5, 7), (4, 3), (13, 17), (2, 1), (9, 8), (20, 25)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_adaptive_avg_pool2d(isa, dtype):
    for si, shape in enumerate(SHAPES):
        base = _qinput(shape, dtype, "contiguous", seed=si)
        for osz in ADAPTIVE_SIZES:
            out = q.adaptive_avg_pool2d(base, list(osz))
            _assert_same_meta(out, base)
            assert out.shape[-2:] == osz
            expected = ref.requantize_ref(
                ref.adaptive_avg_pool2d_ref(_real(base), osz), base.q_scale(), base.q_zero_point(), dtype
            )
            ref.assert_within_steps(out, expected, 1, f"adaptive {shape} {osz}")
            if dtype != torch.qint32:
                theirs = F.adaptive_avg_pool2d(base, osz)
                assert torch.equal(out.int_repr(), theirs.int_repr()), f"{shape} {osz}"
            if len(shape) == 4:
                cl = base.contiguous(memory_format=torch.channels_last)
                o2 = q.adaptive_avg_pool2d(cl, list(osz))
                _assert_same_meta(o2, cl)
                assert torch.equal(o2.int_repr(), out.int_repr())
                if dtype != torch.qint32:
                    ref.assert_within_steps(o2, F.adaptive_avg_pool2d(cl, osz).int_repr().numpy(), 1, "NHWC")
            st = _qinput(shape, dtype, "strided", seed=si)
            assert torch.equal(
                q.adaptive_avg_pool2d(st, list(osz)).int_repr(),
                q.adaptive_avg_pool2d(st.contiguous(), list(osz)).int_repr(),
            )


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("channels", [69, 133, 50, 120])
def test_avg_nhwc_many_taps_equal_scalar_path(isa, dtype, channels):
    # channels_last windows of more than 256 taps over full vectors of channels (the vector loops
    # sum taps in 16-bit lanes and fold them into int32 every 256 taps; 64 / 128 channels a pass
    # on AVX2 / AVX-512, then 32 / 64, then 16 / 32 (one 16-bit register), then single int32
    # vectors and scalars: 120 takes every step on AVX2 and all but the last on AVX-512), at the
    # type's extremes and on random bytes: equal to the scalar path and within 1 step of the
    # float64 reference.
    calls = [
        lambda t: q.adaptive_avg_pool2d(t, [1, 1]),
        lambda t: q.adaptive_avg_pool2d(t, [2, 3]),
        lambda t: q.avg_pool2d(t, [17, 19], [3, 5], [2, 1], False, True, None),
    ]
    _check_nhwc_avg((2, channels, 23, 29), dtype, 5, calls, (2, 3))


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_avg_wide_window_does_not_overflow(isa, layout):
    # 2903 * 2903 taps of 255: the sum exceeds int32 (the kernels switch to int64 sums).
    x = torch.full((1, 1, 2903, 2903), 255, dtype=torch.uint8)
    qx = torch._make_per_tensor_quantized_tensor(x, 0.1, 0)
    if layout == "channels_last":
        qx = qx.contiguous(memory_format=torch.channels_last)
    assert q.adaptive_avg_pool2d(qx, [1, 1]).int_repr().item() == 255
    x8 = torch.full((1, 1, 2903, 2903), -128, dtype=torch.int8)
    qx8 = torch._make_per_tensor_quantized_tensor(x8, 0.1, 127)
    if layout == "channels_last":
        qx8 = qx8.contiguous(memory_format=torch.channels_last)
    assert q.avg_pool2d(qx8, [2903, 2903], [1], [0], False, True, None).int_repr().item() == -128


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_avg_nchw_tall_windows_equal_scalar_path(isa, dtype):
    # NCHW column sums over a window's rows run in 16-bit lanes, folded into int32 every 256
    # rows: windows of 300 and 150 rows at the type's extremes (256 * -128 is the int16 limit)
    # and random, widths that take the 4-register, 1-register, int32 and overlapping last
    # column steps. Windows on whole 8-byte groups (width 56 -> 7, 40 -> 5, 200 -> 1) take the
    # PSADBW group sums instead (32- and 64-byte vectors, the last one overlapping).
    lo, hi = ref.QRANGE[dtype]
    g = torch.Generator().manual_seed(5)
    for w in (200, 61, 23, 56, 40):
        shape = (1, 2, 600, w)
        for data in (
            torch.full(shape, lo, dtype=ref.INT_DTYPE[dtype]),
            torch.full(shape, hi, dtype=ref.INT_DTYPE[dtype]),
            torch.randint(lo, hi + 1, shape, dtype=ref.INT_DTYPE[dtype], generator=g),
        ):
            qx = torch._make_per_tensor_quantized_tensor(data, 0.02, 3)
            for osz in ([2, 3], [4, 1], [2, 7], [3, 5]):
                got = q.adaptive_avg_pool2d(qx, osz).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    exp = q.adaptive_avg_pool2d(qx, osz).int_repr()
                assert torch.equal(got, exp), (w, osz)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_avg_nchw_even_windows_equal_scalar_path(isa, dtype):
    # NCHW rows whose whole windows are evenly spaced at stride 1 or 2 take their window sums a
    # vector of outputs at a time (stride 2: one even / odd split of the column sums per pair of
    # taps), the edges one by one. Widths give runs of whole windows of many vectors (the last
    # one overlapping), of 8-15 (AVX-512: one masked vector), of exactly 8 and of 7 (no vector);
    # windows of 1-5 taps, pads that make the first tap odd or even, ceil_mode's clipped last
    # window, 2-d and 3-d, at the type's extremes and random.
    lo, hi = ref.QRANGE[dtype]
    g = torch.Generator().manual_seed(11)
    cfgs = [  # kernel, stride, pad (width), ceil_mode, count_include_pad, divisor_override
        (2, 2, 0, False, True, None),
        (3, 2, 1, False, True, None),
        (3, 2, 1, True, False, None),
        (4, 2, 1, True, True, None),
        (1, 2, 0, False, True, None),
        (5, 2, 2, False, False, 9),
        (3, 1, 1, False, True, None),
        (5, 1, 2, True, False, None),
        (2, 1, 0, False, True, 3),
    ]
    for w in (97, 64, 33, 30, 19, 17, 15, 10):
        shape = (2, 3, 5, w)
        for data in (
            torch.full(shape, lo, dtype=ref.INT_DTYPE[dtype]),
            torch.full(shape, hi, dtype=ref.INT_DTYPE[dtype]),
            torch.randint(lo, hi + 1, shape, dtype=ref.INT_DTYPE[dtype], generator=g),
        ):
            qx = torch._make_per_tensor_quantized_tensor(data, 0.03, 2)
            for k, s, p, cm, cip, dov in cfgs:
                if p > k // 2:
                    continue
                got = q.avg_pool2d(qx, [2, k], [2, s], [1, p], cm, cip, dov).int_repr()
                got3 = q.avg_pool3d(
                    qx.unsqueeze(2).expand(2, 3, 2, 5, w).contiguous(), [2, 2, k], [1, 2, s], [0, 1, p], cm, cip, dov
                ).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    exp = q.avg_pool2d(qx, [2, k], [2, s], [1, p], cm, cip, dov).int_repr()
                    exp3 = q.avg_pool3d(
                        qx.unsqueeze(2).expand(2, 3, 2, 5, w).contiguous(),
                        [2, 2, k],
                        [1, 2, s],
                        [0, 1, p],
                        cm,
                        cip,
                        dov,
                    ).int_repr()
                assert torch.equal(got, exp), (w, k, s, p, cm, cip, dov)
                assert torch.equal(got3, exp3), (w, k, s, p, cm, cip, dov)
                # torch's NCHW kernel rounds exactly like ours
                assert torch.equal(got, F.avg_pool2d(qx, [2, k], [2, s], [1, p], cm, cip, dov).int_repr()), (
                    w,
                    k,
                    s,
                    p,
                    cm,
                    cip,
                    dov,
                )


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_avg_nchw_stride2_16bit_column_sums_equal_scalar_path(isa, dtype):
    # NCHW stride-2 windows of <= 128 rows keep their column sums in 16 bits and add a window's
    # columns by PMADDWD, a pair of taps against (1, 1), a lone first odd or last even tap against
    # (0, 1) / (1, 0). Windows of 128 rows at the type's extremes (128 * 255 is the largest sum a
    # signed 16-bit lane holds) and of 129 (widened to int32 instead), windows of 1-6 columns with
    # pads that make the first tap odd or even, widths of one to several vectors (the last one
    # overlapping) and past the masked AVX-512 run, 2-d and 3-d.
    lo, hi = ref.QRANGE[dtype]
    cfgs = [  # kernel (h, w), pad (h, w)
        ((128, 2), (0, 0)),
        ((129, 2), (0, 0)),
        ((128, 3), (0, 1)),
        ((64, 4), (0, 1)),
        ((42, 5), (0, 2)),
        ((129, 3), (0, 1)),
        ((2, 3), (1, 0)),
        ((3, 2), (1, 1)),
        ((1, 6), (0, 3)),
        ((1, 1), (0, 0)),
    ]
    for w in (32, 33, 34, 63, 64, 66, 130, 70):
        shape = (1, 2, 130, w)
        for data in _extremes_and_random(shape, dtype, w):
            qx = torch._make_per_tensor_quantized_tensor(data, 0.03, 2)
            for (kh, kw), (ph, pw) in cfgs:
                args = ([kh, kw], [1, 2], [ph, pw], False, ph == 0, None)
                got = q.avg_pool2d(qx, *args).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    exp = q.avg_pool2d(qx, *args).int_repr()
                assert torch.equal(got, exp), (w, kh, kw, ph, pw)
                # torch's NCHW kernel rounds exactly like ours
                assert torch.equal(got, F.avg_pool2d(qx, *args).int_repr()), (w, kh, kw, ph, pw)
            x3 = qx.reshape(1, 2, 10, 13, w)
            for k3, p3 in (
                ([10, 12, 2], [0, 0, 0]),
                ([10, 13, 2], [0, 0, 0]),
                ([8, 10, 3], [0, 0, 1]),
                ([2, 2, 2], [0, 0, 0]),
            ):
                got = q.avg_pool3d(x3, k3, [1, 1, 2], p3, False, True, None).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    exp = q.avg_pool3d(x3, k3, [1, 1, 2], p3, False, True, None).int_repr()
                assert torch.equal(got, exp), (w, k3, p3)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_avg_nchw_narrow_rows_requantize_by_slice_equal_scalar_path(isa, dtype):
    # NCHW rows of fewer outputs than a vector (8 on AVX2, 16 on AVX-512) keep their window sums and
    # multipliers for the whole slice and requantize it a vector at a time, the last vector ending at
    # the slice's end; slices of fewer outputs than a vector stay scalar. Output widths 1-15 with
    # slices above and below a vector, windows of unequal sizes (a multiplier per output), windows
    # on whole 8-byte groups (56 -> 7, 112 -> 7) and not, avg_pool2d rows of 4 outputs, 3-d volumes
    # of several slices, at the type's extremes and random: equal to the scalar path and, in 2-d,
    # to torch's NCHW kernel.
    cases = [  # shape, adaptive 2-d sizes
        ((2, 3, 16, 56), [(7, 7), (2, 7), (1, 7), (16, 3)]),
        ((1, 2, 24, 112), [(7, 7), (3, 14), (5, 6)]),
        ((1, 3, 13, 50), [(7, 7), (5, 3), (9, 15), (2, 2), (13, 1)]),
    ]
    for shape, sizes in cases:
        for data in _extremes_and_random(shape, dtype, shape[-1]):
            qx = torch._make_per_tensor_quantized_tensor(data, 0.04, 7)
            calls = [lambda t, osz=osz: q.adaptive_avg_pool2d(t, list(osz)) for osz in sizes]
            calls.append(lambda t: q.avg_pool2d(t, [3, 5], [2, 13], [1, 2], True, False, None))
            for f in calls:
                got = f(qx).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    assert torch.equal(got, f(qx).int_repr()), shape
            for osz in sizes:  # torch's NCHW kernel rounds exactly like ours
                assert torch.equal(
                    q.adaptive_avg_pool2d(qx, list(osz)).int_repr(), F.adaptive_avg_pool2d(qx, osz).int_repr()
                ), (shape, osz)
            x3 = (
                qx.reshape(shape[0], shape[1], 2, shape[2] // 2, shape[-1])
                if shape[2] % 2 == 0
                else qx.reshape(shape[0], shape[1], 1, shape[2], shape[-1])
            )
            for osz3 in ([2, 7, 7], [1, 3, 5], [2, 2, 3]):
                got = q.adaptive_avg_pool3d(x3, osz3).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    assert torch.equal(got, q.adaptive_avg_pool3d(x3, osz3).int_repr()), (shape, osz3)


def test_max_pool2d_window_without_valid_taps():
    # W = 2, kernel 2, padding 1, dilation 3: the window of output column 0 holds taps -1 and 2,
    # both outside the input; torch gives the lowest value there.
    for dtype in DTYPES:
        qx = _qinput((2, 3, 4, 2), dtype, "contiguous")
        out = q.max_pool2d(qx, [1, 2], [1, 1], [0, 1], [1, 3], False)
        expected = ref.max_pool2d_ref(qx.int_repr().numpy(), [1, 2], [1, 1], [0, 1], [1, 3], False)
        np.testing.assert_array_equal(out.int_repr().numpy(), expected)
        assert (out.int_repr() == ref.QRANGE[dtype][0]).any()


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_empty_batch(layout):
    qx = _qinput((0, 8, 10, 9), torch.quint8, layout)
    assert q.max_pool2d(qx, [3, 3], [2, 2], [1, 1], [1, 1], False).shape == (0, 8, 5, 5)
    assert q.avg_pool2d(qx, [3, 3], [2, 2], [1, 1], True, True, None).shape == (0, 8, 6, 5)
    assert q.adaptive_avg_pool2d(qx, [3, 2]).shape == (0, 8, 3, 2)
    assert q.max_pool2d(
        _qinput((2, 0, 10, 9), torch.qint8, "contiguous"), [2, 2], [2, 2], [0, 0], [1, 1], False
    ).shape == (2, 0, 5, 4)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("channels", [16, 48, 64, 96, 136])
def test_avg_nhwc_overlapping_windows_equal_scalar_path(isa, dtype, channels):
    # channels_last windows of >= 8 rows that overlap along W (tall 2-d windows, overlapping adaptive
    # windows of a tall input, 3x3x3 s2 in 3-d) add up per-column sums shared by neighbouring windows,
    # in blocks of 4 / 2 / 1 16-bit registers (16 .. 136 channels: every block width and a channel
    # tail on both vector paths); shorter windows (3x3 s1 / s2) take the tap loop. At the type's
    # extremes and on random bytes: equal to the scalar path, and to the float64 reference within
    # a step.
    calls = [
        lambda t: q.avg_pool2d(t, [3, 3], [1, 1], [1, 1], False, True, None),
        lambda t: q.avg_pool2d(t, [3, 3], [2, 2], [1, 1], False, False, None),
        lambda t: q.avg_pool2d(t, [2, 4], [1, 3], [0, 1], True, True, None),
        lambda t: q.adaptive_avg_pool2d(t, [4, 5]),
        lambda t: q.avg_pool2d(t, [9, 3], [1, 2], [4, 1], False, True, None),
        lambda t: q.adaptive_avg_pool2d(t, [1, 5]),
    ]
    _check_nhwc_avg((2, channels, 11, 13), dtype, 7, calls, (4, 5))
    for data in _extremes_and_random((1, channels, 5, 7, 9), dtype, 8):
        qx3 = torch._make_per_tensor_quantized_tensor(data, 0.05, ZP[dtype]).contiguous(
            memory_format=torch.channels_last_3d
        )
        _assert_equal_scalar_path([lambda t: q.avg_pool3d(t, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None)], qx3)


def test_bench_shapes_match_torch(isa):
    # The benchmark shapes, both layouts: max exact, averages exact in NCHW, 1 step in NHWC.
    for shape in [(1, 64, 112, 112), (8, 64, 56, 56)]:
        for layout in ("contiguous", "channels_last"):
            qx = _qinput(shape, torch.quint8, layout)
            a = q.max_pool2d(qx, [3, 3], [2, 2], [1, 1], [1, 1], False)
            assert torch.equal(
                a.int_repr(), torch.ops.quantized.max_pool2d(qx, [3, 3], [2, 2], [1, 1], [1, 1], False).int_repr()
            )
            a = q.avg_pool2d(qx, [3, 3], [2, 2], [1, 1], False, True, None)
            b = F.avg_pool2d(qx, 3, 2, 1)
            steps = 0 if layout == "contiguous" else 1
            ref.assert_within_steps(a, b.int_repr().numpy(), steps, "avg")
            a = q.adaptive_avg_pool2d(qx, [7, 7])
            ref.assert_within_steps(a, F.adaptive_avg_pool2d(qx, (7, 7)).int_repr().numpy(), steps, "adaptive")


def test_errors():
    qx = _qinput((1, 3, 8, 8), torch.quint8, "contiguous")
    with pytest.raises(
        ValueError, match=r"qplugin::max_pool2d: qx should be 3-D \(C, H, W\) or 4-D \(N, C, H, W\), got 2-D"
    ):
        q.max_pool2d(qx[0, 0], [2, 2], [2, 2], [0, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool2d: qx should be 3-D .* got 5-D"):
        q.avg_pool2d(qx[None], [2, 2], [2, 2], [0, 0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: stride should be greater than zero, got \[0, 1\]"):
        q.max_pool2d(qx, [2, 2], [0, 1], [0, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: kernel_size should be greater than zero"):
        q.max_pool2d(qx, [0, 2], [1, 1], [0, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: dilation should be greater than zero, got \[0\]"):
        q.max_pool2d(qx, [2, 2], [1, 1], [0, 0], [0], False)
    with pytest.raises(
        ValueError, match=r"qplugin::max_pool2d: padding should be at most half of kernel_size, got padding \[2, 0\]"
    ):
        q.max_pool2d(qx, [3, 3], [1, 1], [2, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool2d: padding should be non-negative, got \[-1\]"):
        q.avg_pool2d(qx, [3, 3], [1, 1], [-1], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: kernel_size should have 1 or 2 entries, got 3"):
        q.max_pool2d(qx, [2, 2, 2], [1, 1], [0, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool2d: stride should have 0, 1 or 2 entries, got 3"):
        q.avg_pool2d(qx, [2, 2], [1, 1, 1], [0, 0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: output size should be at least 1x1, got 0x"):
        q.max_pool2d(qx, [9, 2], [1, 1], [0, 0], [1, 1], False)
    with pytest.raises(ValueError, match=r"qplugin::max_pool2d: output size should be at least 1x1"):
        q.max_pool2d(qx, [3, 3], [1, 1], [0, 0], [4, 4], False)
    with pytest.raises(
        ValueError,
        match=r"qplugin::max_pool2d: kernel_size, stride, padding and dilation should be at most 2\^31 - 1, got 4294967296",
    ):
        q.max_pool2d(qx, [3, 3], [1, 1], [0, 0], [1, 2**32], False)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool2d: divisor_override should be a positive integer, got 0"):
        q.avg_pool2d(qx, [2, 2], [2, 2], [0, 0], False, True, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::adaptive_avg_pool2d: output_size should be at least 1x1, got \[0, 2\]"
    ):
        q.adaptive_avg_pool2d(qx, [0, 2])
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool2d: output_size should have 2 entries, got 3"):
        q.adaptive_avg_pool2d(qx, [1, 2, 3])
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool2d: input should have non-empty spatial dims"):
        q.adaptive_avg_pool2d(_qinput((1, 3, 0, 4), torch.quint8, "contiguous"), [1, 1])
    x = torch.randn(1, 3, 8, 8)
    for call, name in [
        (lambda: q.max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], False), "max_pool2d"),
        (lambda: q.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None), "avg_pool2d"),
        (lambda: q.adaptive_avg_pool2d(x, [1, 1]), "adaptive_avg_pool2d"),
    ]:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: qx should be a quantized tensor .* got a non-quantized tensor of dtype Float",
        ):
            call()
    pc = torch.quantize_per_channel(
        torch.randn(1, 3, 4, 4), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 0, 0]), 1, torch.quint8
    )
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::max_pool2d: qx should be per_tensor_affine quantized, got qscheme per_channel_affine",
    ):
        q.max_pool2d(pc, [2, 2], [2, 2], [0, 0], [1, 1], False)


def test_opcheck():
    for layout in ("contiguous", "channels_last"):
        qx = _qinput((2, 4, 7, 6), torch.quint8, layout)
        utils = ("test_schema", "test_autograd_registration")
        torch.library.opcheck(q.max_pool2d.default, (qx, [3, 3], [2, 2], [1, 1], [1, 1], True), test_utils=utils)
        torch.library.opcheck(q.avg_pool2d.default, (qx, [3, 3], [2, 2], [1, 1], True, False, None), test_utils=utils)
        torch.library.opcheck(q.adaptive_avg_pool2d.default, (qx, [3, 2]), test_utils=utils)
