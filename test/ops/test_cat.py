"""cat / cat_relu."""

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin
from torch_oracle import quantize_exact

q = torch.ops.qplugin


def rand_q(shape, dtype, scale, zp):
    lo, hi = ref.QRANGE[dtype]
    if dtype == torch.qint32:
        data = torch.randint(-100000, 100000, shape, dtype=torch.int32)
    else:
        data = torch.randint(lo, hi + 1, shape, dtype=ref.INT_DTYPE[dtype])
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


ZP = {torch.quint8: (128, 100, 3), torch.qint8: (0, -20, 7), torch.qint32: (0, 5, -3)}


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
@pytest.mark.parametrize("relu", [False, True])
def test_cat_vs_reference_and_torch(isa, dtype, relu):
    ours = q.cat_relu if relu else q.cat
    theirs = torch.ops.quantized.cat_relu if relu else torch.ops.quantized.cat
    z0, z1, z2 = ZP[dtype]
    cases = [
        ([(2, 3, 4), (2, 5, 4), (2, 1, 4)], 1),
        ([(3, 7), (2, 7)], 0),
        ([(3, 7), (3, 2)], -1),
        ([(2, 0, 4), (2, 3, 4)], 1),
        ([(0, 3)], 0),
        ([(1, 64, 5, 6)] * 4, 1),
        ([(5,), (0,), (3,)], 0),
    ]
    for shapes, dim in cases:
        for mode in ("shared", "mixed", "explicit"):
            xs = [
                rand_q(s, dtype, 0.05, z0) if (mode == "shared" or i == 0) else rand_q(s, dtype, 0.02 * (i + 1), z1)
                for i, s in enumerate(shapes)
            ]
            scale, zp = (0.07, z2) if mode == "explicit" else (None, None)
            r = ours(xs, dim, scale, zp)
            exp = ref.cat_ref(xs, dim, scale, zp, relu)
            assert r.q_scale() == (0.07 if scale else 0.05) and r.q_zero_point() == (z2 if zp is not None else z0)
            if mode == "shared":
                assert torch.equal(r.int_repr(), torch.from_numpy(exp).to(r.int_repr().dtype)), (shapes, dim)
            else:
                ref.assert_within_steps(r, exp, 1, f"cat {shapes} {dim} {mode}")
            if dtype != torch.qint32:
                np.testing.assert_array_equal(r.int_repr().numpy(), ref.cat_quantize_ref(xs, dim, scale, zp, relu))
            t = theirs(xs, dim, scale, zp)
            ref.assert_within_steps(r, t.int_repr().numpy(), 1, f"cat vs torch {shapes} {dim} {mode}")
            if quantize_exact(dtype):
                # torch dequantizes, then quantizes by our rule: identical integers
                assert torch.equal(r.int_repr(), t.int_repr()), (shapes, dim, mode)


@pytest.mark.parametrize("mixed", [False, True])
def test_cat_channels_last_and_strided(isa, mixed):
    xs = [
        rand_q((2, 8, 5, 3), torch.quint8, 0.05 if (i == 0 or not mixed) else 0.03, 128 if i == 0 else 120)
        for i in range(3)
    ]
    base = q.cat(xs, 1, None, None).int_repr()
    cl = [x.contiguous(memory_format=torch.channels_last) for x in xs]
    for dim in (1, 2, 3, 0):
        r = q.cat(cl, dim, None, None)
        assert r.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(r.int_repr(), q.cat(xs, dim, None, None).int_repr())
    assert torch.equal(q.cat([cl[0], xs[1], cl[2]], 1, None, None).int_repr(), base)
    views = [x.transpose(2, 3) for x in xs]
    assert torch.equal(
        q.cat(views, 1, None, None).int_repr(), q.cat([v.contiguous() for v in views], 1, None, None).int_repr()
    )


def test_cat_large_parallel_split(isa):
    # one outer row (N = 1, NCHW along channels): the column-split walk
    xs = [rand_q((1, 64, 56, 56), torch.quint8, 0.05 + 0.01 * i, 100 + i) for i in range(4)]
    r = q.cat(xs, 1, 0.04, 110)
    ref.assert_within_steps(r, ref.cat_ref(xs, 1, 0.04, 110), 1)
    np.testing.assert_array_equal(r.int_repr().numpy(), ref.cat_quantize_ref(xs, 1, 0.04, 110))
    if quantize_exact(torch.quint8):
        assert torch.equal(r.int_repr(), torch.ops.quantized.cat(xs, 1, 0.04, 110).int_repr())


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("vbmi", [True, False])
def test_cat_table_path_bit_identical(isa, dtype, relu, vbmi):
    # inputs >= 1024 elements requantize through a 256-entry table; every byte value
    # appears, and the result must equal the element-wise rule (small inputs, scalar path)
    lo, hi = ref.QRANGE[dtype]
    ops = q.cat_relu if relu else q.cat
    zp = ZP[dtype]
    xs = [
        torch._make_per_tensor_quantized_tensor(
            torch.randint(lo, hi + 1, (2, 3 + i, 17, 29), dtype=ref.INT_DTYPE[dtype]), 0.03 + 0.02 * i, zp[i % 3]
        )
        for i in range(3)
    ]
    xs[0].int_repr()[0, 0, 0, :].copy_(torch.arange(lo, lo + 29))
    pos = [(0, 0), (5, 7), (16, 28)]
    prev = q._act_use_vbmi(vbmi)
    try:
        for fmt in (torch.contiguous_format, torch.channels_last):
            for dim, ins in [(1, xs), (0, [x[:, :3] for x in xs]), (3, [x[:, :3] for x in xs])]:
                ys = [x.contiguous(memory_format=fmt) for x in ins]
                r = ops(ys, dim, 0.045, zp[1]).int_repr()
                with torch_qplugin.kernel_isa("scalar"):
                    # one (h, w) position at a time: tiny inputs take the element-wise kernel
                    for h, w in pos:
                        small = (
                            [y[:, :, h : h + 1, w : w + 1] for y in ys]
                            if dim != 3
                            else [y[:, :, h : h + 1, :] for y in ys]
                        )
                        p = ops(small, dim, 0.045, zp[1]).int_repr()
                        got = r[:, :, h : h + 1, w : w + 1] if dim != 3 else r[:, :, h : h + 1, :]
                        assert torch.equal(got, p)
                ref.assert_within_steps(ops(ys, dim, 0.045, zp[1]), ref.cat_ref(ins, dim, 0.045, zp[1], relu), 1)
    finally:
        q._act_use_vbmi(prev)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_cat_shared_channels_last_short_rows(isa, dtype):
    # shared qparams, channels_last along C: rows of C elements copied part by part
    # (whole vectors plus a masked tail); must equal torch.cat on the integers
    for cs in [(3, 64), (64, 64, 64, 64), (70, 1, 130), (17, 200, 9)]:
        xs = [rand_q((2, c, 5, 7), dtype, 0.05, ZP[dtype][0]).contiguous(memory_format=torch.channels_last) for c in cs]
        for relu in (False, True):
            ops = q.cat_relu if relu else q.cat
            r = ops(xs, 1, None, None)
            exp = torch.cat([x.int_repr() for x in xs], 1)
            if relu:
                exp = exp.clamp_min(ZP[dtype][0])
            assert torch.equal(r.int_repr(), exp)


def test_cat_opcheck():
    xs = [rand_q((2, 3), torch.quint8, 0.05, 128), rand_q((2, 4), torch.quint8, 0.02, 100)]
    utils = ("test_schema", "test_autograd_registration")
    torch.library.opcheck(q.cat, (xs, 1, None, None), test_utils=utils)
    torch.library.opcheck(q.cat_relu, (xs, 1, 0.1, 3), test_utils=utils)


def test_cat_bad_inputs():
    a = rand_q((2, 3), torch.quint8, 0.05, 128)
    with pytest.raises(ValueError, match=r"qplugin::cat: qx should be a non-empty list of tensors, got an empty list"):
        q.cat([], 0, None, None)
    with pytest.raises(
        RuntimeError, match=r"qplugin::cat: qx\[1\] should have the dtype of qx\[0\] \(QUInt8\), got QInt8"
    ):
        q.cat([a, rand_q((2, 3), torch.qint8, 0.1, 0)], 0, None, None)
    with pytest.raises(RuntimeError, match=r"qplugin::cat_relu: qx\[1\] should be a quantized tensor .*dtype Float"):
        q.cat_relu([a, torch.randn(2, 3)], 0, None, None)
    with pytest.raises(RuntimeError, match=r"qplugin::cat: qx\[0\] should be a quantized tensor .*dtype Float"):
        q.cat([torch.randn(2, 3)], 0, None, None)
    with pytest.raises(
        ValueError,
        match=r"qplugin::cat: qx\[1\] should match qx\[0\] \(shape \[2, 3\]\) in every dim but 0, got shape \[2, 4\]",
    ):
        q.cat([a, rand_q((2, 4), torch.quint8, 0.05, 128)], 0, None, None)
    with pytest.raises(
        ValueError, match=r"qplugin::cat: qx\[1\] should have 2 dims like qx\[0\], got shape \[2, 3, 1\]"
    ):
        q.cat([a, rand_q((2, 3, 1), torch.quint8, 0.05, 128)], 0, None, None)
    with pytest.raises(IndexError, match=r"qplugin::cat: dim should be in \[-2, 1\] for a tensor of 2 dims, got 2"):
        q.cat([a, a], 2, None, None)
    pc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::cat: qx\[1\] should be a per_tensor_affine quantized tensor, got qscheme per_channel_affine",
    ):
        q.cat([a, pc], 0, None, None)
    with pytest.raises(ValueError, match=r"qplugin::cat: zero_point should be in \[0, 255\] for QUInt8, got -1"):
        q.cat([a, a], 0, 0.1, -1)
    with pytest.raises(ValueError, match=r"qplugin::cat: scale should be a positive finite number, got 0"):
        q.cat([a, a], 0, 0.0, 1)
    with pytest.raises(ValueError, match=r"qplugin::cat: qx\[0\] should have at least one dim"):
        q.cat([rand_q((), torch.quint8, 0.05, 128)], 0, None, None)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("relu", [False, True])
def test_cat_requant_every_byte_equals_scalar_path(isa, dtype, relu):
    # Every byte value, long NCHW rows and 64-element channels_last rows, scale pairs whose exact
    # requantized values fall on .5 ties (0.05 -> 0.06), shrink, grow past the type's range, and a
    # ratio large enough that the AVX2 path no longer rounds before clamping (it keeps the float
    # clamps), and pairs whose table AVX2 writes as a 16-bit fixed-point formula (a pure shift
    # 0.06 -> 0.06 with another zero point, 4/3, observer-like scales; checked fits in
    # kernels/cat_kernel.cpp): equal to the scalar path element for element.
    lo, hi = ref.QRANGE[dtype]
    ops = q.cat_relu if relu else q.cat
    zs = ZP[dtype]
    vals = torch.arange(lo, hi + 1, dtype=torch.int64)
    data = vals[torch.randperm(256).repeat(4 * 7 * 9)[: 2 * 64 * 7 * 9]].reshape(2, 64, 7, 9)
    for s_in, s_out in [
        (0.05, 0.06),
        (0.06, 0.05),
        (0.013, 0.4),
        (0.4, 0.013),
        (1.0, 1e-5),
        (100.0, 1e-5),
        (0.06, 0.06),
        (0.08, 0.06),
        (0.0472913, 0.06),
        (0.0472913, 0.0613287),
        (0.0031, 0.0417),
    ]:
        a = torch._make_per_tensor_quantized_tensor(data.to(ref.INT_DTYPE[dtype]), s_in, zs[0])
        b = torch._make_per_tensor_quantized_tensor(data.flip(0).to(ref.INT_DTYPE[dtype]), s_out * 0.7, zs[2])
        for fmt in (torch.contiguous_format, torch.channels_last):
            xs = [a.contiguous(memory_format=fmt), b.contiguous(memory_format=fmt)]
            r = ops(xs, 1, s_out, zs[1]).int_repr()
            with torch_qplugin.kernel_isa("scalar"):
                exp = ops(xs, 1, s_out, zs[1]).int_repr()
            assert torch.equal(r, exp), (s_in, s_out, fmt)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_cat_channels_last_row_widths_equal_scalar_path(isa, dtype):
    # channels_last along C with requantization: rows of 32, 64, 128 and 256 bytes (AVX2's
    # fixed-point formula unrolled per row), 96 (whole vectors, not unrolled) and 40 (a tail),
    # with observer-like scales (the formula fits) and decimal ones (it does not): equal to the
    # scalar path.
    lo, hi = ref.QRANGE[dtype]
    zs = ZP[dtype]
    for cs in [(32, 64), (128, 256), (96, 40)]:
        xs = [
            torch._make_per_tensor_quantized_tensor(
                torch.randint(lo, hi + 1, (1, c, 6, 7), dtype=ref.INT_DTYPE[dtype]), s, zs[i]
            ).contiguous(memory_format=torch.channels_last)
            for i, (c, s) in enumerate(zip(cs, (0.0472913, 0.05)))
        ]
        for s_out in (0.0613287, 0.06):
            r = q.cat(xs, 1, s_out, zs[2]).int_repr()
            with torch_qplugin.kernel_isa("scalar"):
                exp = q.cat(xs, 1, s_out, zs[2]).int_repr()
            assert torch.equal(r, exp), (cs, s_out)


def test_cat_requant_repeated_qparams_equal_scalar_path(isa):
    # The AVX2 path keeps its last 16 fixed-point fits per thread, keyed by the qparams: more
    # distinct qparams than that, each used twice in a row and again after the others, with keys
    # that differ in a single field (zero point, output scale, relu's floor), must each equal the
    # scalar path.
    data = torch.randint(0, 256, (1, 64, 4, 8), dtype=torch.uint8)
    calls = []
    for k in range(10):
        calls.append((0.0472913 + 0.001 * k, 100 + k, 0.0613287, 110, False))
        calls.append((0.0472913 + 0.001 * k, 100 + k, 0.0613287, 110, True))
    calls += [(0.0472913, 100, 0.0613287, 111, False), (0.0472913, 100, 0.0613288, 110, False)]
    for call in calls + calls[::-1]:
        s_in, z_in, s_out, z_out, relu = call
        x = torch._make_per_tensor_quantized_tensor(data, s_in, z_in)
        ops = q.cat_relu if relu else q.cat
        for _ in range(2):
            r = ops([x, x], 1, s_out, z_out).int_repr()
            with torch_qplugin.kernel_isa("scalar"):
                exp = ops([x, x], 1, s_out, z_out).int_repr()
            assert torch.equal(r, exp), call


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("relu", [False, True])
def test_cat_requant_decimal_scale_pairs_equal_scalar_path(isa, dtype, relu):
    # Decimal scale ratios (0.05 -> 0.06 is 5/6) put exact .5 ties on the byte grid, which float32
    # rounds either way: no 16-bit fixed-point formula gives those tables exactly, so AVX2 writes
    # them as a formula one step low plus a 256-bit correction map (kernels/cat_kernel.h
    # ByteAffine). Every byte value of every input, against the scalar path, for a sweep of
    # ratios, zero points and relu floors.
    lo, hi = ref.QRANGE[dtype]
    ops = q.cat_relu if relu else q.cat
    vals = torch.arange(lo, hi + 1, dtype=ref.INT_DTYPE[dtype])
    data = vals[torch.randperm(256).repeat(8)].reshape(1, 32, 8, 8)  # 2048 elements: the table path
    zs = ZP[dtype]
    k = 0
    for s_out in (0.02, 0.03, 0.06, 0.07, 0.1):
        for s_in in (0.01, 0.02, 0.03, 0.05, 0.07, 0.09, 0.11, 0.13):
            k += 1
            a = torch._make_per_tensor_quantized_tensor(data, s_in, zs[k % 3])
            b = torch._make_per_tensor_quantized_tensor(data.flip(1), s_in * 3, zs[(k + 1) % 3])
            z_out = zs[(k + 2) % 3] + (k % 5)
            r = ops([a, b], 1, s_out, z_out).int_repr()
            with torch_qplugin.kernel_isa("scalar"):
                exp = ops([a, b], 1, s_out, z_out).int_repr()
            assert torch.equal(r, exp), (s_in, s_out, z_out)
