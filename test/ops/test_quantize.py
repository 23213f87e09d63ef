"""quantize_per_tensor / quantize_per_tensor_dynamic / quantize_per_channel / dequantize /
int_repr / make_per_*_quantized_tensor: bit-exact against the definitions
(test/reference.py), on every kernel path, and against torch's own kernels where
torch_oracle.quantize_exact says they compute the same rule."""

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin
from torch_oracle import assert_quantize_matches_torch

q = torch.ops.qplugin
QDTYPES = [torch.quint8, torch.qint8, torch.qint32]
NAN, INF = float("nan"), float("inf")


def _zp_for(dtype, rng):
    lo, hi = ref.QRANGE[dtype]
    if dtype == torch.qint32:
        return int(rng.integers(-(2**20), 2**20))
    return int(rng.integers(lo, hi + 1))


def _tricky_values(n, scale, zp, rng):
    """Random values plus exact rounding ties of t + zp, near-ties, saturating values and +-inf / NaN."""
    x = rng.standard_normal(n).astype(np.float32) * np.float32(scale * 60)
    if n >= 8:
        k = rng.integers(-300, 300, n // 4)
        pow2 = np.float32(2.0 ** np.round(np.log2(scale)))
        x[: n // 4] = ((k + 0.5) * pow2).astype(np.float32)  # exact ties when scale is a power of two
        x[n // 4 : n // 2] = np.nextafter(x[n // 4 : n // 2], np.float32(np.inf))
    if n >= 16:
        x[-6:] = [NAN, INF, -INF, 3e38, -3e38, 1e10]
    return torch.from_numpy(x)


def _layouts(x):
    """(name, tensor) views of the same values in several memory layouts."""
    out = [("contiguous", x)]
    if x.dim() == 4:
        out.append(("channels_last", x.contiguous(memory_format=torch.channels_last)))
    if x.dim() == 5:
        out.append(("channels_last_3d", x.contiguous(memory_format=torch.channels_last_3d)))
    if x.dim() >= 2:
        if not (x.is_quantized and x.qscheme() == torch.per_channel_affine):  # torch can't restride those
            out.append(("transposed", x.transpose(0, -1).contiguous().transpose(0, -1)))
        strided = _strided_copy(x)
        if strided is not None:
            out.append(("strided", strided))
    return out


def _strided_copy(x):
    """The same values as a non-contiguous view (every other element of a bigger tensor)."""
    if not x.is_quantized:
        big = torch.empty(x.shape[:-1] + (x.shape[-1] * 2,))
        big[..., ::2] = x
        return big[..., ::2]
    data = x.int_repr()
    big = torch.zeros(x.shape[:-1] + (x.shape[-1] * 2,), dtype=data.dtype)
    big[..., ::2] = data
    if x.qscheme() == torch.per_tensor_affine:
        return torch._make_per_tensor_quantized_tensor(big, x.q_scale(), x.q_zero_point())[..., ::2]
    axis = x.q_per_channel_axis()
    if axis == x.dim() - 1:
        return None
    return torch._make_per_channel_quantized_tensor(big, x.q_per_channel_scales(), x.q_per_channel_zero_points(), axis)[
        ..., ::2
    ]


SHAPES = [(37,), (1000,), (3, 5, 7), (2, 3, 9, 11), (1, 4, 3, 5, 6), (2, 70, 70)]


@pytest.mark.parametrize("dtype", QDTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_quantize_per_tensor_exact(isa, dtype, shape):
    rng = np.random.default_rng(abs(hash((str(dtype), shape))) % 2**32)
    for scale in [0.25, float(np.float32(rng.uniform(1e-3, 2.0))), 1e-6]:
        zp = _zp_for(dtype, rng)
        base = _tricky_values(int(np.prod(shape)), scale, zp, rng).reshape(shape)
        expect = ref.quantize_per_tensor_ref(base.numpy(), scale, zp, dtype)
        for name, x in _layouts(base):
            got = q.quantize_per_tensor(x, scale, zp, dtype)
            assert got.dtype == dtype and got.qscheme() == torch.per_tensor_affine
            assert got.q_scale() == scale and got.q_zero_point() == zp
            np.testing.assert_array_equal(got.int_repr().numpy(), expect, err_msg=f"{name} vs reference")
            theirs = torch.quantize_per_tensor(x, scale, zp, dtype)
            assert_quantize_matches_torch(got, theirs, x, dtype, scale, what=name)


def test_quantize_keeps_memory_format(isa):
    x = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    assert q.quantize_per_tensor(x, 0.1, 3, torch.quint8).is_contiguous(memory_format=torch.channels_last)
    qt = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
    assert q.dequantize(qt).is_contiguous(memory_format=torch.channels_last)
    assert q.int_repr(qt).is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("dtype", QDTYPES)
@pytest.mark.parametrize("shape", [(5, 40), (40, 5), (3, 70, 70), (2, 3, 9, 11), (2, 6, 3, 4, 5), (7,)], ids=str)
def test_quantize_per_channel_exact(isa, dtype, shape):
    rng = np.random.default_rng(abs(hash((str(dtype), shape, "pc"))) % 2**32)
    base = torch.from_numpy(rng.standard_normal(shape).astype(np.float32) * 30)
    flat = base.view(-1)
    flat[: flat.numel() // 5] = torch.from_numpy(
        (rng.integers(-100, 100, flat.numel() // 5) + 0.5).astype(np.float32) * 0.125
    )
    flat[-3:] = torch.tensor([NAN, INF, -INF])
    for axis in range(len(shape)):
        c = shape[axis]
        scales = torch.from_numpy(rng.uniform(0.01, 0.5, c))
        scales[0] = 0.125  # power of two: exact ties
        zps = torch.tensor([_zp_for(dtype, rng) for _ in range(c)], dtype=torch.int64)
        expect = ref.quantize_per_channel_ref(base.numpy(), scales.numpy(), zps.numpy(), axis, dtype)
        for name, x in _layouts(base):
            got = q.quantize_per_channel(x, scales, zps, axis, dtype)
            assert got.qscheme() == torch.per_channel_affine and got.q_per_channel_axis() == axis
            assert torch.equal(got.q_per_channel_scales(), scales.double())
            assert torch.equal(got.q_per_channel_zero_points(), zps)
            np.testing.assert_array_equal(got.int_repr().numpy(), expect, err_msg=f"{name} axis {axis}")
            channels_last = name.startswith("channels_last")
            if not (channels_last and axis > 1):  # torch refuses these; we support them
                theirs = torch.quantize_per_channel(x, scales, zps, axis, dtype)
                assert_quantize_matches_torch(got, theirs, x, dtype, per_channel=True, what=f"{name} axis {axis}")


@pytest.mark.parametrize("nan", ["every_7th", "one_row", "finite"])
@pytest.mark.parametrize("dtype", QDTYPES)
def test_quantize_per_channel_special_values_in_vector_body(isa, dtype, nan):
    # NaN, +-inf, huge and saturating values spread through the rows, so they land in the
    # four-vector loop, the one-vector loop and the scalar tail of both per-channel paths
    # (axis 0: one scale a row; last axis: scales varying along the row). The 8-bit four-vector
    # loop clamps below by the saturating pack and redoes a span where a NaN (or an infinity)
    # went through (qint8): NaN everywhere, in one row only (the other rows keep the fast
    # result), or finite values only, none of which trigger the redo (below -2^31 and below
    # -128: the conversion's INT32_MIN and the pack must saturate them).
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.standard_normal((4, 301)).astype(np.float32) * 40)
    flat = x.view(-1)
    flat[4::23], flat[6::29], flat[8::31] = 1e10, -1e10, -5e3
    if nan != "finite":
        flat[3::11], flat[5::13] = INF, -INF
        flat[2::17], flat[9::19] = 3e38, -3e38
    if nan == "every_7th":
        flat[::7] = NAN
    elif nan == "one_row":
        x[2, 40] = NAN
    for axis in (0, 1):
        c = x.shape[axis]
        scales = torch.from_numpy(rng.uniform(0.01, 0.5, c))
        zps = torch.tensor([_zp_for(dtype, rng) for _ in range(c)], dtype=torch.int64)
        expect = ref.quantize_per_channel_ref(x.numpy(), scales.numpy(), zps.numpy(), axis, dtype)
        got = q.quantize_per_channel(x, scales, zps, axis, dtype)
        np.testing.assert_array_equal(got.int_repr().numpy(), expect, err_msg=f"axis {axis}")


def test_quantize_per_channel_qint32_large_zero_points(isa):
    # The periodic walk (channels along the row) adds zero points near the int32 limits exactly
    # (float64), and saturates.
    rng = np.random.default_rng(11)
    x = torch.from_numpy(rng.standard_normal((3, 37)).astype(np.float32) * 1e3)
    x[1, 5], x[2, 30] = NAN, -INF
    zps = torch.from_numpy(rng.integers(-(2**31), 2**31, 37, endpoint=False))
    zps[:4] = torch.tensor([2**31 - 1, -(2**31), 2**31 - 65, -(2**31) + 100])
    scales = torch.from_numpy(rng.uniform(0.001, 0.5, 37))
    expect = ref.quantize_per_channel_ref(x.numpy(), scales.numpy(), zps.numpy(), 1, torch.qint32)
    got = q.quantize_per_channel(x, scales, zps, 1, torch.qint32)
    np.testing.assert_array_equal(got.int_repr().numpy(), expect)


def test_quantize_per_channel_param_dtypes(isa):
    x = torch.randn(4, 33)
    s64 = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    z64 = torch.tensor([1, 2, 3, 4])
    base = q.quantize_per_channel(x, s64, z64, 0, torch.quint8)
    same = q.quantize_per_channel(x, s64.float(), z64.int(), 0, torch.quint8)
    assert torch.equal(base.int_repr(), same.int_repr())
    assert same.q_per_channel_scales().dtype == torch.float64
    assert same.q_per_channel_zero_points().dtype == torch.int64


# ---------------------------------------------------------------------------- the rule
# 8-bit: clamp(nearbyint(float32(x * inv_scale)) + zero_point); qint32: clamp(nearbyint(float64(x) /
# float64(scale)) + zero_point). Each case runs per tensor and per channel (a run per channel and
# channels along the row), at lengths that put it in the four-vector loop, the one-vector loop and
# the scalar tail of every path.
def _all_paths(x, scale, zp, dtype):
    """int_repr of quantize_per_tensor and of both per-channel walks of the 1-D float tensor x."""
    n = x.numel()
    s1, z1 = torch.tensor([scale], dtype=torch.double), torch.tensor([zp])
    rows = q.quantize_per_channel(x.reshape(1, n), s1, z1, 0, dtype).int_repr().reshape(n)
    cols = q.quantize_per_channel(x.reshape(n, 1), s1, z1, 1, dtype).int_repr().reshape(n)
    return {
        "per_tensor": q.quantize_per_tensor(x, scale, zp, dtype).int_repr(),
        "rows": rows,
        "periodic": cols,
        "plain": q.plain_quantize_per_tensor(x, scale, zp, ref.INT_DTYPE[dtype]),
    }


@pytest.mark.parametrize("n", [1, 7, 37, 131])
@pytest.mark.parametrize(
    "x,scale,zp,dtype,want",
    [
        (-2.2050002, 0.07, 255, torch.quint8, 223),  # float32(x * inv) = -31.5 exactly: -32 + 255
        (0.25, 0.5, 5, torch.quint8, 5),  # a tie: nearbyint(0.5) + 5, not nearbyint(5.5)
        (-100.4, 1.0, 2**31 - 1, torch.qint32, 2147483547),  # float32 would lose 27 steps here
    ],
    ids=["near_tie", "tie_odd_zp", "qint32_exact"],
)
def test_contract_examples(isa, n, x, scale, zp, dtype, want):
    for name, got in _all_paths(torch.full((n,), x), scale, zp, dtype).items():
        assert got.tolist() == [want] * n, name


@pytest.mark.parametrize("dtype", QDTYPES)
@pytest.mark.parametrize("zp_parity", ["odd", "even"])
def test_ties_round_before_the_zero_point(isa, dtype, zp_parity):
    # x / scale exactly k + 0.5 (power-of-two scales): nearbyint rounds the tie to even, then the
    # zero point is added. With an odd zero point, rounding k + 0.5 + zp would pick the other
    # neighbour every time.
    zp = {
        "odd": {torch.quint8: 101, torch.qint8: -3, torch.qint32: 2**31 - 201},
        "even": {torch.quint8: 100, torch.qint8: 4, torch.qint32: -(2**31) + 300},
    }[zp_parity][dtype]
    lo, hi = ref.QRANGE[dtype]
    k = np.arange(-140, 140)
    for scale in (0.5, 0.125, 4.0):
        x = torch.from_numpy(((k + 0.5) * scale).astype(np.float32))
        want = np.clip(np.array([round(v + 0.5) for v in k]) + zp, lo, hi)  # round(): half to even
        assert (want != np.clip(np.rint(k + 0.5 + zp), lo, hi)).any() == (zp_parity == "odd")
        for name, got in _all_paths(x, scale, zp, dtype).items():
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name} scale {scale}")


def test_near_ties_round_the_float32_product(isa):
    # x just off a tie, where the float32 product x * inv_scale rounds onto k + 0.5 (and then to
    # even) but x * inv_scale + zero_point in one rounding (an FMA) keeps the side x is on.
    rng = np.random.default_rng(5)
    for scale, zp in [(0.07, 255), (1 / 255, 0), (0.3, 77), (0.6373247256341329, 128)]:
        inv = np.float32(1) / np.float32(scale)
        k = rng.integers(-200, 60, 4000)
        x0 = ((k + 0.5) / np.float64(inv)).astype(np.float32)
        x = np.concatenate([np.nextafter(x0, np.float32(-np.inf)), x0, np.nextafter(x0, np.float32(np.inf))])
        want = ref.quantize_per_tensor_ref(x, scale, zp, torch.quint8)
        one_rounding = np.clip(np.rint(x.astype(np.float64) * np.float64(inv) + zp), 0, 255)
        assert (want != one_rounding).sum() > 100  # the data does exercise the difference
        for name, got in _all_paths(torch.from_numpy(x), scale, zp, torch.quint8).items():
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name} scale {scale}")


def test_qint32_in_float64_beyond_2_24(isa):
    # |x / scale| from 2^24 to 2^31: a float32 product or sum drops whole steps there; the rule
    # divides in float64 and adds the zero point exactly.
    rng = np.random.default_rng(3)
    for scale, zp in [(1.0, 2**31 - 1), (0.07, -(2**31) + 5), (3.0, 12345), (1e-3, 0)]:
        mag = (np.float64(2.0) ** rng.uniform(24, 31, 3001)) * scale
        x = (mag * rng.choice([-1.0, 1.0], 3001)).astype(np.float32)
        want = np.clip(np.rint(x.astype(np.float64) / scale) + zp, -(2**31), 2**31 - 1).astype(np.int64)
        inv = np.float32(1) / np.float32(scale)
        in_float32 = np.rint((x * inv).astype(np.float32) + np.float32(zp)).astype(np.float64)  # torch 2.13's
        assert (want != np.clip(in_float32, -(2**31), 2**31 - 1)).sum() > 100
        np.testing.assert_array_equal(ref.quantize_per_tensor_ref(x, scale, zp, torch.qint32), want)
        for name, got in _all_paths(torch.from_numpy(x), scale, zp, torch.qint32).items():
            np.testing.assert_array_equal(got.numpy().astype(np.int64), want, err_msg=f"{name} scale {scale}")


@pytest.mark.parametrize("dtype", QDTYPES)
def test_every_path_bit_identical(dtype):
    # The vector paths against the scalar one on the same inputs: ties, near-ties, saturating and
    # non-finite values, per tensor (plain and streaming-size stores are other tests), per channel
    # as rows and as periods of channels along the row.
    rng = np.random.default_rng(17)
    x = _tricky_values(4099, 0.0625, 3, rng)
    x[1000:1100] = torch.from_numpy(((rng.integers(-200, 200, 100) + 0.5) * 0.07).astype(np.float32))
    x4 = x[:4096].reshape(2, 8, 16, 16)
    c = 8
    scales = torch.from_numpy(rng.uniform(0.01, 0.5, c))
    zps = torch.tensor([_zp_for(dtype, rng) for _ in range(c)])
    zp = _zp_for(dtype, rng)

    def run():
        return [
            q.quantize_per_tensor(x, 0.07, zp, dtype).int_repr(),
            q.quantize_per_tensor(x, 1 / 255, zp, dtype).int_repr(),
            q.quantize_per_channel(x4, scales, zps, 1, dtype).int_repr(),
            q.quantize_per_channel(x4.contiguous(memory_format=torch.channels_last), scales, zps, 1, dtype)
            .int_repr()
            .contiguous(),
        ]

    outs = {}
    for isa in torch_qplugin._isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            outs[isa] = run()
    for isa, got in outs.items():
        for i, (a, b) in enumerate(zip(got, outs["scalar"])):
            assert torch.equal(a, b), f"{isa} output {i} differs from the scalar path"


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_fake_quantize_then_quantize_has_no_drift(isa, dtype):
    # torch's FakeQuantize (fake_quantize_per_{tensor,channel}_affine, what QAT trains with) and
    # our FakeQuantize module pick the integers quantize picks (per tensor: the very floats
    # quantize-then-dequantize gives), and quantizing their output gives the same integers again:
    # a QAT model converts without drift.
    # Scales that are not float32 values (0.07, 1 / 255) included: inv_scale is torch's,
    # 1 / float32(scale).
    from torch_qplugin.quantization import FakeQuantize, MovingAverageMinMaxObserver

    lo, hi = ref.QRANGE[dtype]
    rng = np.random.default_rng(23)
    for scale, zp in [(0.07, hi), (1 / 255, lo), (0.5, hi // 2 | 1), (0.6373247256341329, 0)]:
        inv = np.float32(1) / np.float32(scale)
        ties = ((rng.integers(-150, 150, 2000) + 0.5) / np.float64(inv)).astype(np.float32)
        x = torch.from_numpy(
            np.concatenate(
                [
                    ties,
                    np.nextafter(ties, np.float32(np.inf)),
                    rng.standard_normal(2003).astype(np.float32) * np.float32(scale * 80),
                ]
            )
        )
        fake = torch.fake_quantize_per_tensor_affine(x, scale, zp, lo, hi)
        ours = q.quantize_per_tensor(x, scale, zp, dtype)
        assert torch.equal(q.dequantize(ours), fake), f"scale {scale}"
        assert torch.equal(q.quantize_per_tensor(fake, scale, zp, dtype).int_repr(), ours.int_repr())
        x2 = x.reshape(-1, 3)
        sc = torch.tensor([scale, 0.25, 1 / 3], dtype=torch.double)
        zc = torch.tensor([zp, lo, 1])
        fake_c = torch.fake_quantize_per_channel_affine(x2, sc.float(), zc.int(), 1, lo, hi)
        ours_c = q.quantize_per_channel(x2, sc, zc, 1, dtype)
        # fake_c = float32((q - zp) * float32(scale)): the integers come back exactly
        fake_q = torch.round(fake_c.double() / sc.float().double()).long() + zc
        assert torch.equal(ours_c.int_repr().long(), fake_q), f"per channel, scale {scale}"
        assert torch.equal(q.quantize_per_channel(fake_c, sc, zc, 1, dtype).int_repr(), ours_c.int_repr())
    fq = FakeQuantize(
        observer=MovingAverageMinMaxObserver,
        quant_min=lo,
        quant_max=hi,
        dtype=dtype,
        qscheme=torch.per_tensor_affine if dtype == torch.quint8 else torch.per_tensor_symmetric,
    )
    x = torch.randn(4099) * 3
    fq(x)  # observe
    fq.disable_observer()
    s, z = float(fq.scale), int(fq.zero_point)
    assert torch.equal(fq(x), q.dequantize(q.quantize_per_tensor(x, s, z, dtype)))


@pytest.mark.parametrize("dtype", QDTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dequantize_per_tensor_exact(isa, dtype, shape):
    rng = np.random.default_rng(7)
    lo, hi = ref.QRANGE[dtype]
    if dtype == torch.qint32:
        lo, hi = -(2**31), 2**31 - 1
    data = torch.from_numpy(rng.integers(lo, hi, size=shape, endpoint=True)).to(ref.INT_DTYPE[dtype])
    for scale, zp in [(float(rng.uniform(1e-4, 3)), _zp_for(dtype, rng)), (1e-7, 0), (3.0e3, _zp_for(dtype, rng))]:
        base = torch._make_per_tensor_quantized_tensor(data, scale, zp)
        expect = ref.dequantize_per_tensor_ref(data.numpy(), scale, zp)
        for name, qt in _layouts(base):
            got = q.dequantize(qt)
            assert got.dtype == torch.float32 and got.shape == qt.shape
            np.testing.assert_array_equal(got.numpy().view(np.int32), expect.view(np.int32), err_msg=name)
            theirs = qt.dequantize()
            # torch computes q - zp in int32 and wraps around on overflow (qint32 near its limits);
            # we compute it exactly, so compare with torch where no overflow happens.
            diff = qt.int_repr().long() - zp
            ok = (diff >= -(2**31)) & (diff < 2**31)
            assert torch.equal(got[ok].view(torch.int32), theirs[ok].view(torch.int32))


@pytest.mark.parametrize("dtype", QDTYPES)
@pytest.mark.parametrize("shape", [(5, 40), (3, 70, 70), (2, 3, 9, 11), (2, 6, 3, 4, 5)], ids=str)
def test_dequantize_per_channel_exact(isa, dtype, shape):
    rng = np.random.default_rng(11)
    lo, hi = ref.QRANGE[dtype]
    data = torch.from_numpy(rng.integers(lo, hi, size=shape, endpoint=True)).to(ref.INT_DTYPE[dtype])
    for axis in range(len(shape)):
        c = shape[axis]
        scales = torch.from_numpy(rng.uniform(1e-3, 2.0, c))
        zps = torch.tensor([_zp_for(dtype, rng) for _ in range(c)])
        base = torch._make_per_channel_quantized_tensor(data, scales, zps, axis)
        expect = ref.dequantize_per_channel_ref(data.numpy(), scales.numpy(), zps.numpy(), axis)
        for name, qt in _layouts(base):
            if name.startswith("channels_last") and axis > 1:
                continue  # torch cannot build such a tensor to feed us
            got = q.dequantize(qt)
            np.testing.assert_array_equal(got.numpy().view(np.int32), expect.view(np.int32), err_msg=f"{name} {axis}")
            assert torch.equal(got.contiguous().view(torch.int32), qt.dequantize().contiguous().view(torch.int32))


@pytest.mark.parametrize("dtype", QDTYPES)
def test_int_repr_and_make_round_trip(isa, dtype):
    x = torch.randn(2, 3, 5, 7) * 10
    for name, xv in _layouts(x):
        qt = torch.quantize_per_tensor(xv, 0.05, 2 if dtype != torch.quint8 else 130, dtype)
        ir = q.int_repr(qt)
        assert ir.dtype == ref.INT_DTYPE[dtype]
        assert torch.equal(ir, qt.int_repr()), name
        back = q.make_per_tensor_quantized_tensor(ir, qt.q_scale(), qt.q_zero_point())
        assert back.dtype == dtype and back.q_scale() == qt.q_scale() and back.q_zero_point() == qt.q_zero_point()
        assert torch.equal(back.int_repr(), ir)
        ir[0, 0, 0, 0] += 1  # a copy, not an alias
        assert not torch.equal(back.int_repr(), ir)
    pc = torch.quantize_per_channel(
        x, torch.rand(3, dtype=torch.double) + 0.01, torch.zeros(3, dtype=torch.long), 1, dtype
    )
    ir = q.int_repr(pc)
    assert torch.equal(ir, pc.int_repr())
    back = q.make_per_channel_quantized_tensor(ir, pc.q_per_channel_scales(), pc.q_per_channel_zero_points(), 1)
    assert back.qscheme() == torch.per_channel_affine and torch.equal(back.int_repr(), ir)
    assert torch.equal(back.q_per_channel_scales(), pc.q_per_channel_scales())
    assert torch.equal(q.dequantize(back), pc.dequantize())


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_quantize_per_tensor_dynamic_matches_torch(isa, dtype, reduce_range):
    # torch's choice of qparams, then the quantize rule
    for x in [torch.randn(1000) * 3, torch.rand(257) + 1, -torch.rand(64), torch.zeros(10), torch.randn(3, 4) * 1e-7]:
        got = q.quantize_per_tensor_dynamic(x, dtype, reduce_range)
        theirs = torch.quantize_per_tensor_dynamic(x, dtype, reduce_range)
        assert got.q_scale() == theirs.q_scale() and got.q_zero_point() == theirs.q_zero_point()
        expect = ref.quantize_per_tensor_ref(x.numpy(), got.q_scale(), got.q_zero_point(), dtype)
        np.testing.assert_array_equal(got.int_repr().numpy(), expect)
        assert_quantize_matches_torch(got, theirs, x, dtype, got.q_scale())


def test_empty_and_zero_dim(isa):
    for dtype in QDTYPES:
        e = q.quantize_per_tensor(torch.empty(0, 3), 0.1, 0, dtype)
        assert e.shape == (0, 3) and e.dtype == dtype
        assert q.dequantize(e).shape == (0, 3) and q.int_repr(e).shape == (0, 3)
        s = q.quantize_per_tensor(torch.tensor(1.26), 0.1, 0, dtype)
        assert s.dim() == 0 and s.int_repr().item() == 13 and q.dequantize(s).dim() == 0
        assert q.int_repr(s).item() == 13
        ec = q.quantize_per_channel(torch.empty(0, 4), torch.ones(4), torch.zeros(4, dtype=torch.long), 1, dtype)
        assert ec.shape == (0, 4) and q.dequantize(ec).shape == (0, 4)
    d = q.quantize_per_tensor_dynamic(torch.empty(0), torch.quint8, False)
    assert d.shape == (0,)
    m = q.make_per_tensor_quantized_tensor(torch.tensor(7, dtype=torch.uint8), 0.5, 1)
    assert m.dim() == 0 and q.dequantize(m).item() == 3.0


@pytest.mark.parametrize(
    "shape,axis", [((0,), 0), ((2, 0), 1), ((3, 0, 2), 1), ((0, 5), 0), ((2, 0, 4, 4), 1), ((2, 3, 0, 4), 1)]
)
@pytest.mark.parametrize("dtype", QDTYPES)
def test_per_channel_empty_channel_axis(isa, shape, axis, dtype):
    # a size-0 channel axis: quantize_per_channel and per-channel dequantize give empty tensors
    for fmt in (torch.contiguous_format, torch.channels_last) if len(shape) == 4 else (torch.contiguous_format,):
        x = torch.randn(shape).contiguous(memory_format=fmt)
        n = shape[axis]
        sc, zp = torch.ones(n, dtype=torch.double), torch.zeros(n, dtype=torch.long)
        e = q.quantize_per_channel(x, sc, zp, axis, dtype)
        assert e.shape == shape and e.dtype == dtype and e.q_per_channel_axis() == axis
        assert q.dequantize(e).shape == shape and q.int_repr(e).shape == shape
        m = q.make_per_channel_quantized_tensor(torch.zeros(shape, dtype=ref.INT_DTYPE[dtype]), sc, zp, axis)
        assert q.dequantize(m).shape == shape


def test_results_independent_of_threads():
    x = torch.randn(1 << 18) * 4
    one = [None, None]
    for i, threads in enumerate([1, 2]):
        old = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            one[i] = q.quantize_per_tensor(x, 0.03, 5, torch.qint8).int_repr()
        finally:
            torch.set_num_threads(old)
    assert torch.equal(one[0], one[1])


# ---------------------------------------------------------------------------- errors
def _qt():
    return torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.quint8)


@pytest.mark.parametrize(
    "scale,match",
    [
        (0.0, r"qplugin::quantize_per_tensor: scale should be a positive finite number, got 0"),
        (-1.0, r"scale should be a positive finite number, got -1"),
        (NAN, r"scale should be a positive finite number, got nan"),
        (INF, r"scale should be a positive finite number, got inf"),
        (1e-300, r"scale should be representable as a float32 with a finite reciprocal, got 1e-300"),
    ],
)
def test_bad_scale(scale, match):
    with pytest.raises(ValueError, match=match):
        q.quantize_per_tensor(torch.randn(3), scale, 0, torch.quint8)
    with pytest.raises(ValueError, match=match.replace("quantize_per_tensor", "make_per_tensor_quantized_tensor")):
        q.make_per_tensor_quantized_tensor(torch.zeros(3, dtype=torch.uint8), scale, 0)


@pytest.mark.parametrize(
    "dtype,zp,rng",
    [
        (torch.quint8, 256, r"\[0, 255\]"),
        (torch.quint8, -1, r"\[0, 255\]"),
        (torch.qint8, 128, r"\[-128, 127\]"),
        (torch.qint32, 2**31, r"\[-2147483648, 2147483647\]"),
    ],
)
def test_bad_zero_point(dtype, zp, rng):
    with pytest.raises(
        ValueError, match=rf"qplugin::quantize_per_tensor: zero_point should be in {rng} for .*, got {zp}"
    ):
        q.quantize_per_tensor(torch.randn(3), 0.1, zp, dtype)


def test_bad_dtype_and_inputs():
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::quantize_per_tensor: dtype should be torch.quint8, torch.qint8 or torch.qint32, got Float",
    ):
        q.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.float)
    with pytest.raises(
        RuntimeError, match=r"qplugin::quantize_per_tensor: self should be a float32 tensor, got dtype Int"
    ):
        q.quantize_per_tensor(torch.ones(3, dtype=torch.int32), 0.1, 0, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::quantize_per_tensor: self should be a float32 tensor, got a quantized tensor of dtype QUInt8",
    ):
        q.quantize_per_tensor(_qt(), 0.1, 0, torch.quint8)
    with pytest.raises(
        RuntimeError, match=r"qplugin::quantize_per_channel: self should be a float32 tensor, got a quantized tensor"
    ):
        q.quantize_per_channel(_qt(), torch.ones(4), torch.zeros(4, dtype=torch.long), 0, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::quantize_per_tensor_dynamic: dtype should be torch.quint8 or torch.qint8, got QInt32",
    ):
        q.quantize_per_tensor_dynamic(torch.randn(3), torch.qint32, False)
    with pytest.raises(
        ValueError, match=r"qplugin::quantize_per_tensor_dynamic: self should hold finite values .*got min -?nan"
    ):
        q.quantize_per_tensor_dynamic(torch.tensor([1.0, NAN]), torch.quint8, False)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::dequantize: self should be a quantized tensor .*got a non-quantized tensor of dtype Float",
    ):
        q.dequantize(torch.randn(3))
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::int_repr: self should be a quantized tensor .*got a non-quantized tensor of dtype Float",
    ):
        q.int_repr(torch.randn(3))
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::make_per_tensor_quantized_tensor: self should be a uint8, int8 or int32 tensor, got dtype Float",
    ):
        q.make_per_tensor_quantized_tensor(torch.randn(3), 0.1, 0)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::make_per_tensor_quantized_tensor: self should be a uint8, int8 or int32 tensor, got a quantized tensor",
    ):
        q.make_per_tensor_quantized_tensor(_qt(), 0.1, 0)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::make_per_channel_quantized_tensor: self should be a uint8, int8 or int32 tensor, got a quantized tensor",
    ):
        q.make_per_channel_quantized_tensor(_qt(), torch.ones(4), torch.zeros(4, dtype=torch.long), 0)


def test_bad_per_channel_params():
    x = torch.randn(3, 4)
    ones, zeros = torch.ones(4), torch.zeros(4, dtype=torch.long)
    with pytest.raises(
        IndexError, match=r"qplugin::quantize_per_channel: axis should be in \[-2, 1\] for a tensor of 2 dims, got 2"
    ):
        q.quantize_per_channel(x, ones, zeros, 2, torch.quint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::quantize_per_channel: scales should be 1-D with one entry per channel \(4\), got shape \[3\]",
    ):
        q.quantize_per_channel(x, torch.ones(3), zeros, 1, torch.quint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::quantize_per_channel: zero_points should be 1-D with one entry per channel \(4\), got shape \[5\]",
    ):
        q.quantize_per_channel(x, ones, torch.zeros(5, dtype=torch.long), 1, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::quantize_per_channel: scales should be a float32 or float64 tensor, got dtype Long",
    ):
        q.quantize_per_channel(x, torch.ones(4, dtype=torch.long), zeros, 1, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::quantize_per_channel: zero_points should be an int32 or int64 tensor, got dtype Float",
    ):
        q.quantize_per_channel(x, ones, torch.zeros(4), 1, torch.quint8)
    bad = torch.tensor([0.1, -0.2, 0.3, 0.4])
    with pytest.raises(
        ValueError, match=r"qplugin::quantize_per_channel: scales\[1\] should be a positive finite number .*got -0.2"
    ):
        q.quantize_per_channel(x, bad, zeros, 1, torch.quint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::quantize_per_channel: zero_points\[2\] should be in \[-128, 127\] for QInt8, got 200",
    ):
        q.quantize_per_channel(x, ones, torch.tensor([0, 0, 200, 0]), 1, torch.qint8)
    with pytest.raises(
        ValueError, match=r"qplugin::quantize_per_channel: self should have at least one dim .*got a 0-dim tensor"
    ):
        q.quantize_per_channel(torch.tensor(1.0), ones, zeros, 0, torch.quint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::make_per_channel_quantized_tensor: scales\[0\] should be a positive finite number.*got nan",
    ):
        q.make_per_channel_quantized_tensor(
            torch.zeros(2, 4, dtype=torch.uint8), torch.tensor([NAN, 1, 1, 1.0]), zeros, 1
        )


def test_set_isa_errors():
    with pytest.raises(
        ValueError, match=r"qplugin::_set_isa: isa should be scalar, avx2, avxvnni or avx512, got 'sse9'"
    ):
        q._set_isa("sse9")


# ---------------------------------------------------------------------------- opcheck
def test_opcheck():
    x = torch.randn(2, 3, 4)
    qt = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
    pc = torch.quantize_per_channel(
        x, torch.ones(3, dtype=torch.double) * 0.1, torch.zeros(3, dtype=torch.long), 1, torch.qint8
    )
    utils = ("test_schema", "test_autograd_registration")
    cases = [
        (q.quantize_per_tensor, (x, 0.1, 3, torch.quint8)),
        (q.quantize_per_tensor_dynamic, (x, torch.qint8, False)),
        (q.quantize_per_channel, (x, torch.ones(3), torch.zeros(3, dtype=torch.long), 1, torch.quint8)),
        (q.dequantize, (qt,)),
        (q.dequantize, (pc,)),
        (q.int_repr, (qt,)),
        (q.make_per_tensor_quantized_tensor, (qt.int_repr(), 0.1, 3)),
        (q.make_per_channel_quantized_tensor, (pc.int_repr(), torch.ones(3), torch.zeros(3, dtype=torch.long), 1)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args, test_utils=utils)


def test_torchscript_calls_qplugin():
    @torch.jit.script
    def f(x: torch.Tensor) -> torch.Tensor:
        qx = torch.ops.qplugin.quantize_per_tensor(x, 0.1, 10, torch.quint8)
        return torch.ops.qplugin.dequantize(qx)

    x = torch.randn(10)
    assert "qplugin::quantize_per_tensor" in str(f.graph)
    expect = ref.dequantize_per_tensor_ref(ref.quantize_per_tensor_ref(x.numpy(), 0.1, 10, torch.quint8), 0.1, 10)
    np.testing.assert_array_equal(f(x).numpy(), expect)


def test_large_outputs_take_the_streaming_path(isa):
    # >= 48 MiB of float output switches dequantize to non-temporal stores; odd length and an
    # unaligned view exercise the peeled head and the tail.
    n = (12 << 20) + 37
    data = torch.randint(0, 256, (n + 3,), dtype=torch.uint8)[3:]
    qt = torch._make_per_tensor_quantized_tensor(data, 0.037, 121)
    got = q.dequantize(qt)
    assert torch.equal(got.view(torch.int32), qt.dequantize().view(torch.int32))
    head = ref.dequantize_per_tensor_ref(data[:4096].numpy(), 0.037, 121)
    np.testing.assert_array_equal(got[:4096].numpy().view(np.int32), head.view(np.int32))


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_large_inputs_quantize_with_streaming_stores(isa, dtype):
    # >= 48 MiB of float input switches 8-bit quantize to non-temporal stores; an odd length
    # exercises the tail, values beyond the range and NaN the clamps.
    n = (12 << 20) + 37
    x = torch.randn(n) * 8
    x[::1001] = float("nan")
    x[5::997] = float("inf")
    x[7::991] = -1e30
    zp = 100 if dtype == torch.quint8 else -3
    got = q.quantize_per_tensor(x, 0.05, zp, dtype)
    np.testing.assert_array_equal(got.int_repr().numpy(), ref.quantize_per_tensor_ref(x.numpy(), 0.05, zp, dtype))
    assert_quantize_matches_torch(got, torch.quantize_per_tensor(x, 0.05, zp, dtype), x, dtype, 0.05)
