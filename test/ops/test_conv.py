"""qplugin conv1d / conv2d / conv3d (+relu), conv2d_add(+relu), prepack / unpack (issue: conv)."""

import re

import numpy as np
import pytest
import torch

import reference
from torch_oracle import int8_gemm_exact
import torch_qplugin  # noqa: F401

q = torch.ops.qplugin


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def make_x(shape, lo=0, hi=255, scale=0.05, zp=None, gen=None):
    data = torch.randint(lo, hi + 1, shape, dtype=torch.uint8, generator=gen)
    if zp is None:
        zp = int(torch.randint(0, 256, (1,), generator=gen))
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def make_w(oc, icg, ks, per_channel=True, nonzero_zp=False, gen=None):
    data = torch.randint(-128, 128, (oc, icg, *ks), dtype=torch.int8, generator=gen)
    if per_channel:
        scales = torch.rand(oc, dtype=torch.double, generator=gen) * 0.02 + 0.001
        zps = (torch.randint(-20, 21, (oc,), generator=gen) if nonzero_zp else torch.zeros(oc)).long()
        return torch._make_per_channel_quantized_tensor(data, scales, zps, 0)
    return torch._make_per_tensor_quantized_tensor(data, 0.007, 5 if nonzero_zp else 0)


def out_qparams(real):
    m = float(np.abs(real).max()) if real.size else 1.0
    return max(m, 1e-3) / 110.0, 120


def prepack(dims, qw, b, stride, padding, dilation, groups):
    return getattr(q, f"conv{dims}d_prepack")(qw, b, list(stride), list(padding), list(dilation), groups)


def run_and_check(
    dims,
    x_shape,
    oc,
    ks,
    stride,
    padding,
    dilation,
    groups,
    per_channel=True,
    nonzero_zp=False,
    relu=False,
    x_range=(0, 255),
    with_bias=True,
    x_zp=None,
):
    gen = torch.Generator().manual_seed(hash((dims, x_shape, oc, ks, stride, groups)) % 1000)
    c = x_shape[1]
    qx = make_x(x_shape, *x_range, zp=x_zp, gen=gen)
    qw = make_w(oc, c // groups, ks, per_channel, nonzero_zp, gen=gen)
    b = torch.randn(oc, generator=gen) if with_bias else None
    real = reference.conv_ref(
        reference.exact_real(qx),
        reference.exact_real(qw),
        None if b is None else b.double().numpy(),
        stride,
        padding,
        dilation,
        groups,
    )
    ys, yzp = out_qparams(real)
    pk = prepack(dims, qw, b, stride, padding, dilation, groups)
    op = getattr(q, f"conv{dims}d" + ("_relu" if relu else ""))
    y = op(qx, pk, ys, yzp)
    exp = reference.qconv_ref(qx, qw, b, stride, padding, dilation, groups, ys, yzp, relu=relu)
    reference.assert_within_steps(y, exp, 1, what=f"conv{dims}d")
    assert y.q_scale() == pytest.approx(ys) and y.q_zero_point() == yzp and y.dtype == torch.quint8
    return qx, pk, y


# ---------------------------------------------------------------------------
# numerics: geometry sweep on every kernel path
# ---------------------------------------------------------------------------
# (N, C, H, W, OC, kernel, stride, padding, dilation, groups)
GEOM2D = [
    (2, 8, 9, 11, 16, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 3, 17, 15, 8, (7, 7), (2, 2), (3, 3), (1, 1), 1),  # stem, icg % 4 != 0
    (1, 12, 10, 9, 12, (3, 3), (1, 2), (2, 4), (2, 3), 2),  # padding > k / 2, dilation 2-3
    (1, 16, 8, 8, 32, (1, 1), (1, 1), (0, 0), (1, 1), 4),  # groups 4
    (2, 32, 12, 12, 32, (3, 3), (1, 1), (1, 1), (1, 1), 32),  # depthwise
    (1, 24, 15, 13, 48, (3, 3), (2, 2), (1, 1), (1, 1), 24),  # depthwise, channel multiplier 2
    (1, 20, 9, 9, 20, (5, 5), (1, 1), (2, 2), (2, 2), 20),  # depthwise dilated 5x5
    (1, 37, 9, 10, 37, (3, 3), (2, 2), (1, 1), (1, 1), 37),  # depthwise, odd channels, stride 2
    (1, 64, 7, 7, 70, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # K = 576, N tail
    (3, 5, 6, 7, 7, (2, 3), (3, 1), (0, 2), (1, 1), 1),  # non-square
    (1, 256, 5, 5, 33, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in-place path
    (1, 17, 5, 6, 19, (4, 4), (1, 1), (3, 3), (1, 1), 1),  # padding >= kernel / 2, even kernel
    (1, 8, 4, 4, 8, (3, 3), (1, 1), (5, 5), (1, 1), 1),  # output mostly padding
    (1, 8, 12, 12, 40, (3, 3), (2, 2), (1, 1), (1, 1), 2),  # groups 2, stride 2, 20 per group
    (1, 4, 3, 3, 4, (9, 9), (1, 1), (4, 4), (1, 1), 1),  # kernel larger than input
    (1, 64, 7, 8, 40, (5, 5), (1, 1), (2, 2), (1, 1), 1),  # 25 taps: tap-chunked indirect GEMM
    (2, 80, 7, 9, 80, (3, 3), (1, 1), (1, 1), (1, 1), 80),  # depthwise VNNI: 64 + 16-channel tail
    (1, 72, 6, 11, 72, (2, 4), (1, 2), (1, 2), (1, 2), 72),  # depthwise VNNI: KW 4, dilation 2
    (1, 16, 5, 3, 16, (3, 3), (2, 1), (2, 3), (1, 1), 16),  # depthwise: no interior column
    (2, 96, 9, 13, 96, (3, 3), (2, 2), (1, 1), (1, 1), 96),  # depthwise s2: pairs carried over, ymm tail
    (1, 40, 6, 3, 40, (3, 3), (2, 2), (0, 0), (1, 1), 40),  # depthwise s2, W = 3: no carried pairs
    (1, 16, 2, 13, 32, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # 14 x 32 tiles: 26 rows, remainder 12
    (1, 40, 11, 12, 40, (3, 3), (1, 1), (2, 2), (2, 2), 40),  # depthwise 3x3 dilation 2: AVX2 tap pairs + tail
    (1, 32, 5, 7, 96, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place: 64 + 32 columns (8-row tiles)
    (2, 24, 4, 5, 64, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place, 64 columns: packed epilogue
    (1, 3, 9, 10, 40, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # C = 3: AVX-512 kernel-row mode, 32 + 8 columns
    (1, 40, 6, 7, 24, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place: 16 + 8 columns (masked tail)
    (2, 20, 3, 5, 5, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place: 5 columns, 15 rows
    (1, 6, 5, 5, 20, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1 in place, C % 4 != 0 (asm tiles)
    (5, 32, 3, 4, 48, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # 12 rows an image: tiles span images
    (4, 6, 3, 5, 12, (3, 3), (1, 1), (1, 1), (1, 1), 2),  # im2col (icg 3, groups 2), blocks span images
    # groups of 8 / 16 output channels side by side in the tiles (AVX-512 qgemm_block_groups)
    (2, 64, 9, 10, 64, (3, 3), (1, 1), (1, 1), (1, 1), 8),  # ocg 8: two groups a vector, 4 vectors
    (1, 48, 7, 9, 48, (3, 3), (2, 2), (1, 1), (1, 1), 3),  # ocg 16: strips of 2 + 1 groups
    (3, 40, 5, 6, 40, (3, 3), (1, 1), (1, 1), (1, 1), 5),  # ocg 8, 5 groups: the last vector half empty
    (2, 96, 6, 6, 48, (3, 3), (1, 1), (2, 2), (2, 2), 6),  # icg 16, ocg 8, dilation 2
    (1, 32, 5, 5, 64, (1, 1), (1, 1), (0, 0), (1, 1), 4),  # 1x1, icg 8, ocg 16
    # AVX2's group tiles (6 rows for ocg 8, 4 for ocg 16): remainder rows, icg 8 / 12 / 16 / 24
    (1, 32, 5, 7, 32, (3, 3), (1, 1), (1, 1), (1, 1), 4),  # icg 8, ocg 8: 35 rows (5 left)
    (1, 36, 5, 5, 48, (3, 3), (1, 1), (1, 1), (1, 1), 3),  # icg 12 (8 + 4), ocg 16: 25 rows (1 left)
    (2, 24, 5, 3, 48, (3, 3), (1, 1), (1, 1), (1, 1), 3),  # icg 8, ocg 16: 30 rows (2 left)
    (1, 48, 6, 5, 16, (3, 3), (1, 1), (1, 1), (1, 1), 2),  # icg 24, ocg 8: 30 rows
    (1, 160, 4, 4, 160, (3, 3), (1, 1), (1, 1), (1, 1), 20),  # 20 groups of 8: sets of 8 + 8 + 4
    # AVX2: groups of 4 input and output channels four at a time (a group count divisible by 4)
    (1, 32, 5, 7, 32, (3, 3), (1, 1), (1, 1), (1, 1), 8),  # 2 quads, 35 rows (3 left)
    (2, 80, 4, 5, 80, (3, 3), (1, 1), (1, 1), (1, 1), 20),  # 20 groups: sets of 16 + 4
    (1, 64, 9, 8, 64, (3, 3), (2, 2), (2, 2), (2, 2), 16),  # stride 2, dilation 2
    (1, 24, 5, 5, 24, (3, 3), (1, 1), (1, 1), (1, 1), 6),  # 6 groups of 4: im2col
]


@pytest.mark.parametrize("geom", GEOM2D, ids=[str(i) for i in range(len(GEOM2D))])
@pytest.mark.parametrize("per_channel", [True, False])
def test_conv2d_reference(isa, geom, per_channel):
    n, c, h, w, oc, ks, s, p, d, g = geom
    for relu in (False, True):
        run_and_check(2, (n, c, h, w), oc, ks, s, p, d, g, per_channel=per_channel, relu=relu)
    # x_zp 0 (ReLU outputs): padded taps contribute nothing
    run_and_check(2, (n, c, h, w), oc, ks, s, p, d, g, per_channel=per_channel, x_zp=0)


@pytest.mark.parametrize("geom", [GEOM2D[0], GEOM2D[3], GEOM2D[4], GEOM2D[10]], ids=["3x3", "g4", "dw", "1x1"])
def test_conv2d_nonzero_weight_zero_point(isa, geom):
    n, c, h, w, oc, ks, s, p, d, g = geom
    run_and_check(2, (n, c, h, w), oc, ks, s, p, d, g, per_channel=True, nonzero_zp=True)
    run_and_check(2, (n, c, h, w), oc, ks, s, p, d, g, per_channel=False, nonzero_zp=True, with_bias=False)


# (N, C, L, OC, k, stride, padding, dilation, groups)
GEOM1D = [
    (2, 16, 31, 24, 3, 1, 1, 1, 1),
    (1, 8, 20, 8, 5, 2, 3, 2, 8),
    (1, 12, 17, 6, 4, 3, 0, 1, 3),
    (3, 64, 9, 64, 1, 1, 0, 1, 1),
]


@pytest.mark.parametrize("geom", GEOM1D, ids=[str(i) for i in range(len(GEOM1D))])
def test_conv1d_reference(isa, geom):
    n, c, l, oc, k, s, p, d, g = geom
    for relu in (False, True):
        _, _, y = run_and_check(1, (n, c, l), oc, (k,), (s,), (p,), (d,), g, relu=relu)
        assert y.dim() == 3


# (N, C, D, H, W, OC, kernel, stride, padding, dilation, groups)
GEOM3D = [
    (1, 8, 5, 6, 7, 16, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
    (1, 8, 4, 5, 6, 8, (3, 3, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), 8),
    (2, 4, 3, 4, 5, 6, (1, 2, 3), (1, 1, 1), (0, 1, 2), (1, 2, 1), 2),
    (1, 3, 6, 5, 5, 5, (2, 2, 2), (1, 2, 1), (1, 0, 1), (2, 1, 1), 1),
    (1, 32, 4, 5, 6, 64, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # tap-chunked indirect GEMM
    (1, 32, 3, 3, 3, 32, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # 14 x 32 tiles, remainder 13
    (1, 32, 3, 4, 5, 32, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 4),  # groups side by side, ocg 8
]


@pytest.mark.parametrize("geom", GEOM3D, ids=[str(i) for i in range(len(GEOM3D))])
def test_conv3d_reference(isa, geom):
    n, c, dd, h, w, oc, ks, s, p, d, g = geom
    for relu in (False, True):
        _, _, y = run_and_check(3, (n, c, dd, h, w), oc, ks, s, p, d, g, relu=relu)
        assert y.is_contiguous(memory_format=torch.channels_last_3d)


# x_zp 0 with padding: each pixel next to the padding runs only its taps inside the input (the
# indirect path's tap classes, per row block across images; used when 8 % or more of the taps are
# padding, as in every geometry here). (dims, x shape, OC, kernel, stride, padding, dilation, groups)
PADSKIP = [
    (2, (1, 64, 7, 7), 64, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # 9 classes, one image a block
    (2, (3, 64, 7, 7), 80, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # blocks span images, 64 + 16 columns
    (2, (1, 32, 14, 14), 96, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # 64 + 32 columns
    (2, (3, 16, 14, 14), 40, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # 588 rows: several blocks
    (2, (2, 32, 9, 10), 48, (3, 3), (1, 1), (2, 2), (2, 2), 1),  # pad 2, dilation 2
    (2, (2, 16, 13, 12), 32, (3, 3), (2, 2), (1, 1), (1, 1), 1),  # stride 2: no bottom / right class
    (2, (2, 32, 7, 7), 40, (3, 3), (1, 1), (1, 1), (1, 1), 2),  # groups 2, 20 channels a group
    (2, (1, 64, 7, 8), 40, (5, 5), (1, 1), (2, 2), (1, 1), 1),  # 5x5: 25 classes, tap-chunked
    (2, (2, 24, 6, 9), 24, (2, 3), (1, 2), (0, 2), (1, 1), 1),  # padding in w only
    (2, (2, 64, 7, 7), 64, (3, 3), (1, 1), (1, 1), (1, 1), 4),  # groups of 16 side by side (no classes)
    (2, (1, 8, 3, 3), 16, (5, 5), (1, 1), (2, 2), (1, 1), 1),  # map smaller than the kernel
    (2, (1, 4, 3, 3), 8, (9, 9), (1, 1), (4, 4), (1, 1), 1),  # no pixel with every tap inside
    (2, (2, 8, 4, 4), 8, (3, 3), (1, 1), (5, 5), (1, 1), 1),  # output mostly padding
    (2, (2, 3, 17, 15), 24, (7, 7), (2, 2), (3, 3), (1, 1), 1),  # stem: kernel rows left out
    (2, (1, 3, 5, 6), 8, (7, 7), (2, 2), (3, 3), (1, 1), 1),  # stem, map smaller than the kernel
    (1, (3, 16, 5), 24, (3,), (1,), (1,), (1,), 1),
    (1, (2, 8, 10), 16, (5,), (2,), (3,), (2,), 1),
    (3, (1, 32, 4, 5, 6), 64, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # 27 classes, chunked
    (3, (2, 8, 3, 4, 5), 16, (3, 3, 3), (1, 2, 1), (1, 1, 2), (1, 1, 1), 1),
]


@pytest.mark.parametrize("geom", PADSKIP, ids=[str(i) for i in range(len(PADSKIP))])
def test_zero_x_zp_padding(isa, geom):
    """x_zp 0 and padding: within a step of the reference, and the scalar path's bytes on every path
    and thread count (conv2d_add's residual rows follow their output rows)."""
    dims, xs, oc, ks, s, p, d, g = geom
    for relu in (False, True):
        qx, pk, y = run_and_check(dims, xs, oc, ks, s, p, d, g, relu=relu, x_zp=0)
    gen = torch.Generator().manual_seed(11)
    qa = make_x(tuple(y.shape), scale=0.2, zp=30, gen=gen)
    calls = [lambda: getattr(q, f"conv{dims}d")(qx, pk, 0.3, 100).int_repr()]
    if dims == 2:
        calls.append(lambda: q.conv2d_add_relu(qx, qa, pk, 0.3, 100).int_repr())
    old = torch.get_num_threads()
    try:
        for call in calls:
            torch.set_num_threads(1)
            with torch_qplugin.kernel_isa("scalar"):
                exp = call()
            for t in (1, 2, 3):
                torch.set_num_threads(t)
                assert torch.equal(call(), exp), (isa, t)
    finally:
        torch.set_num_threads(old)
    if dims == 2:
        qw, b = pk.unpack()
        real = reference.conv_ref(reference.exact_real(qx), reference.exact_real(qw), b.double().numpy(), s, p, d, g)
        ys, yzp = out_qparams(real)
        qa = make_x(real.shape, scale=ys * 0.7, zp=100, gen=gen)
        exp = reference.qconv_ref(qx, qw, b, s, p, d, g, ys, yzp, qaccum=qa)
        reference.assert_within_steps(q.conv2d_add(qx, qa, pk, ys, yzp), exp, 1, what="conv2d_add")


def test_full_range_no_saturation(isa):
    """Activations at 0 / 255 and weights at -128 / 127 (worst case for 16-bit pair sums)."""
    x = torch.where(torch.rand(1, 64, 6, 6) < 0.5, 255, 0).to(torch.uint8)
    qx = torch._make_per_tensor_quantized_tensor(x, 0.02, 0)
    wd = torch.where(torch.rand(32, 64, 3, 3) < 0.5, 127, -128).to(torch.int8)
    wd[:, :, :, 0] = -128
    qw = torch._make_per_tensor_quantized_tensor(wd, 0.001, 0)
    pk = q.conv2d_prepack(qw, None, [1, 1], [1, 1], [1, 1], 1)
    real = reference.conv_ref(reference.exact_real(qx), reference.exact_real(qw), None, (1, 1), (1, 1), (1, 1), 1)
    ys, yzp = out_qparams(real)
    y = q.conv2d(qx, pk, ys, yzp)
    reference.assert_within_steps(y, reference.requantize_ref(real, ys, yzp, torch.quint8), 1)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize(
    "geom",
    [GEOM2D[0], GEOM2D[4], GEOM2D[13], GEOM2D[8], GEOM2D[15], GEOM2D[31], GEOM2D[33]],
    ids=["3x3", "dw", "g2", "k576_64+6", "5x5_32+8", "g8x8", "g5x8"],
)
def test_conv2d_add(isa, geom, relu):
    n, c, h, w, oc, ks, s, p, d, g = geom
    gen = torch.Generator().manual_seed(7)
    qx = make_x((n, c, h, w), gen=gen)
    qw = make_w(oc, c // g, ks, gen=gen)
    b = torch.randn(oc, generator=gen)
    pk = q.conv2d_prepack(qw, b, list(s), list(p), list(d), g)
    real = reference.conv_ref(reference.exact_real(qx), reference.exact_real(qw), b.double().numpy(), s, p, d, g)
    ys, yzp = out_qparams(real)
    qa = make_x(real.shape, scale=ys * 0.7, zp=100, gen=gen)
    op = q.conv2d_add_relu if relu else q.conv2d_add
    y = op(qx, qa, pk, ys, yzp)
    exp = reference.qconv_ref(qx, qw, b, s, p, d, g, ys, yzp, relu=relu, qaccum=qa)
    reference.assert_within_steps(y, exp, 1, what="conv2d_add")
    # the residual's layout does not matter
    y2 = op(qx, qa.contiguous(memory_format=torch.channels_last), pk, ys, yzp)
    assert torch.equal(y.int_repr(), y2.int_repr())


def test_kernel_paths_bit_identical():
    from torch_qplugin import _isa

    gen = torch.Generator().manual_seed(3)
    cases = [
        GEOM2D[0],
        GEOM2D[1],
        GEOM2D[4],
        GEOM2D[7],
        GEOM2D[8],
        GEOM2D[10],
        GEOM2D[13],
        GEOM2D[16],
        GEOM2D[17],
        GEOM2D[18],
        GEOM2D[19],
        GEOM2D[20],
        GEOM2D[21],
        GEOM2D[22],
        GEOM2D[23],
        GEOM2D[24],
        GEOM2D[25],
        GEOM2D[26],
        GEOM2D[27],
        GEOM2D[28],
        GEOM2D[31],
        GEOM2D[32],
        GEOM2D[33],
        GEOM2D[34],
        GEOM2D[35],
    ]
    for i, (n, c, h, w, oc, ks, s, p, d, g) in enumerate(cases + [GEOM2D[0], GEOM2D[10], GEOM2D[23], GEOM2D[16]]):
        qx = make_x((n, c, h, w), gen=gen)
        # the last four with non-zero weight zero points (row sums in the engine's epilogue; the
        # depthwise one with w - w_zp outside int8, which the VNNI layout cannot hold)
        qw = make_w(oc, c // g, ks, nonzero_zp=i >= len(cases), gen=gen)
        pk = q.conv2d_prepack(qw, torch.randn(oc, generator=gen), list(s), list(p), list(d), g)
        for op in (q.conv2d, q.conv2d_relu):
            outs = []
            for isa in _isa.supported_isas():
                with torch_qplugin.kernel_isa(isa):
                    outs.append(op(qx, pk, 0.3, 100).int_repr())
            for o in outs[1:]:
                assert torch.equal(outs[0], o)
    # conv2d_add_relu: full 64- and 32-channel rows (packed epilogue) and channel tails, on the
    # indirect (3x3) and the in-place 1x1 blocks
    adds = [GEOM2D[8], GEOM2D[15], GEOM2D[0], GEOM2D[8], GEOM2D[23], GEOM2D[24], GEOM2D[26], GEOM2D[27]]
    for i, (n, c, h, w, oc, ks, s, p, d, g) in enumerate(adds):
        qx = make_x((n, c, h, w), zp=0 if i == 3 else None, gen=gen)  # x_zp 0: no column constant
        pk = q.conv2d_prepack(
            make_w(oc, c // g, ks, gen=gen), torch.randn(oc, generator=gen), list(s), list(p), list(d), g
        )
        shape = q.conv2d(qx, pk, 0.3, 100).shape
        qa = make_x(tuple(shape), scale=0.2, zp=30, gen=gen)
        outs = []
        for isa in _isa.supported_isas():
            with torch_qplugin.kernel_isa(isa):
                outs.append(q.conv2d_add_relu(qx, qa, pk, 0.3, 100).int_repr())
        for o in outs[1:]:
            assert torch.equal(outs[0], o)


def test_threads_identical(isa):
    # Row blocks are sized for the thread count (equal blocks, a multiple of the thread count);
    # small maps also split the output channels into one range of 16-channel panels per thread
    # (7 x 7 x 64 -> 160: 10 panels; 6 x 5 x 32 -> 100: 7 panels, the last one partial):
    # 1, 2 and 3 threads give the same bytes.
    gen = torch.Generator().manual_seed(5)
    cases = [
        (1, 64, 23, 17, 64, (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (1, 32, 19, 21, 48, (1, 1), (1, 1), (0, 0), (1, 1), 1),
        (3, 8, 15, 16, 8, (3, 3), (1, 1), (1, 1), (1, 1), 2),
        (1, 96, 11, 13, 96, (3, 3), (2, 2), (1, 1), (1, 1), 96),
        (1, 64, 7, 7, 160, (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (1, 32, 6, 5, 100, (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (1, 64, 7, 7, 128, (1, 1), (1, 1), (0, 0), (1, 1), 1),
        # batches of small maps: a group's rows are every image's pixels, row blocks span images
        (6, 64, 7, 7, 64, (3, 3), (1, 1), (1, 1), (1, 1), 1),
        (5, 16, 3, 5, 32, (1, 1), (1, 1), (0, 0), (1, 1), 1),
        (4, 6, 5, 5, 12, (3, 3), (1, 1), (1, 1), (1, 1), 2),
        # groups side by side: 8 a group (k4 tiles from 2048 rows on), 16 a group
        (1, 64, 46, 47, 64, (3, 3), (1, 1), (1, 1), (1, 1), 8),
        (2, 64, 9, 9, 64, (3, 3), (1, 1), (1, 1), (1, 1), 4),
    ]
    old = torch.get_num_threads()
    try:
        # each case with a random x_zp and with x_zp 0 (padded taps left out)
        for (n, c, h, w, oc, ks, s, p, d, g), zp in [(cs, zp) for cs in cases for zp in (None, 0)]:
            qx = make_x((n, c, h, w), zp=zp, gen=gen)
            qw = make_w(oc, c // g, ks, gen=gen)
            pk = q.conv2d_prepack(qw, torch.randn(oc, generator=gen), list(s), list(p), list(d), g)
            outs = []
            for t in (1, 2, 3):
                torch.set_num_threads(t)
                outs.append(q.conv2d(qx, pk, 0.3, 100).int_repr())
            torch.set_num_threads(1)
            with torch_qplugin.kernel_isa("scalar"):
                outs.append(q.conv2d(qx, pk, 0.3, 100).int_repr())
            for o in outs[1:]:
                assert torch.equal(outs[0], o), (isa, n, c, h, w, oc, ks)
    finally:
        torch.set_num_threads(old)


# Groups of 8 channels from 2048 output rows on run the k4 tiles (AVX-512: qgemm_block_groups with
# gemm::pack_groups_k4's layout): an even group count (whole 16-channel blocks, tiles of 2 blocks and a
# 1-block tail), x_zp random or 0, relu and conv2d_add's residual, against the reference.
K4 = [
    (1, 64, 46, 46, 64, (3, 3), (1, 1), (1, 1), (1, 1), 8),  # 4 blocks: two 2-block strips
    (2, 48, 33, 34, 48, (3, 3), (1, 1), (1, 1), (1, 1), 6),  # 3 blocks: a 1-block tail
    (1, 32, 92, 91, 32, (3, 3), (2, 2), (1, 1), (1, 1), 4),  # stride 2, 2116 rows
    (1, 32, 50, 50, 32, (1, 1), (1, 1), (0, 0), (1, 1), 4),  # 1x1
]


@pytest.mark.parametrize("geom", K4, ids=[str(i) for i in range(len(K4))])
def test_groups_of_8_k4(isa, geom):
    check_groups_with_residual(geom)


# Small groups in the group tiles with relu and conv2d_add's residual: 16 output channels with icg
# 16, and icg 12 (AVX2: an 8-channel step and a 4-channel tail); 4 input and output channels (AVX2:
# four groups at a time).
SMALL_GROUPS = [
    (1, 48, 7, 9, 48, (3, 3), (1, 1), (1, 1), (1, 1), 3),
    (2, 36, 5, 5, 48, (3, 3), (1, 1), (1, 1), (1, 1), 3),
    (1, 64, 7, 6, 64, (3, 3), (1, 1), (1, 1), (1, 1), 16),
]


@pytest.mark.parametrize("geom", SMALL_GROUPS, ids=[str(i) for i in range(len(SMALL_GROUPS))])
def test_small_groups_residual(isa, geom):
    check_groups_with_residual(geom)


def check_groups_with_residual(geom):
    n, c, h, w, oc, ks, s, p, d, g = geom
    for zp, relu in ((None, False), (0, True)):
        qx, pk, y = run_and_check(2, (n, c, h, w), oc, ks, s, p, d, g, relu=relu, x_zp=zp)
    qw, b = pk.unpack()
    real = reference.conv_ref(reference.exact_real(qx), reference.exact_real(qw), b.double().numpy(), s, p, d, g)
    ys, yzp = out_qparams(real)
    qa = make_x(real.shape, scale=ys * 0.7, zp=100, gen=torch.Generator().manual_seed(1))
    exp = reference.qconv_ref(qx, qw, b, s, p, d, g, ys, yzp, relu=True, qaccum=qa)
    reference.assert_within_steps(q.conv2d_add_relu(qx, qa, pk, ys, yzp), exp, 1, what="conv2d_add_relu")


# ---------------------------------------------------------------------------
# torch's own op (x86 engine) on 7-bit activations, where it does not saturate
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "geom", [GEOM2D[0], GEOM2D[2], GEOM2D[4], GEOM2D[8], GEOM2D[13]], ids=["3x3", "dil", "dw", "k576", "g2"]
)
def test_conv2d_matches_torch(isa, geom):
    n, c, h, w, oc, ks, s, p, d, g = geom
    gen = torch.Generator().manual_seed(11)
    qx = make_x((n, c, h, w), 0, 127, zp=0, gen=gen)
    qw = make_w(oc, c // g, ks, gen=gen)
    b = torch.randn(oc, generator=gen)
    verdict = int8_gemm_exact(qx, qw)  # 7-bit activations: torch cannot saturate, on any CPU
    assert verdict, verdict.why
    torch.backends.quantized.engine = "x86"
    pk = q.conv2d_prepack(qw, b, list(s), list(p), list(d), g)
    for relu in (False, True):
        name = "conv2d_relu" if relu else "conv2d"
        # A fresh torch prepack per op: torch 2.13's x86 engine reuses a cached primitive when
        # one packed weight serves conv2d and then conv2d_relu, and drops the relu.
        tp = torch.ops.quantized.conv2d_prepack(qw, b, list(s), list(p), list(d), g)
        yt = getattr(torch.ops.quantized, name)(qx, tp, 0.2, 64)
        y = getattr(q, name)(qx, pk, 0.2, 64)
        assert y.shape == yt.shape
        reference.assert_within_steps(y, yt.int_repr().numpy(), 1, what=f"vs torch {name}")


def test_conv1d_conv3d_match_torch():
    gen = torch.Generator().manual_seed(12)
    torch.backends.quantized.engine = "x86"
    qx = make_x((2, 16, 30), 0, 127, zp=0, gen=gen)
    qw = make_w(24, 16, (3,), gen=gen)
    assert int8_gemm_exact(qx, qw)
    tp = torch.ops.quantized.conv1d_prepack(qw, None, [2], [1], [1], 1)
    pk = q.conv1d_prepack(qw, None, [2], [1], [1], 1)
    reference.assert_within_steps(
        q.conv1d(qx, pk, 0.2, 64), torch.ops.quantized.conv1d(qx, tp, 0.2, 64).int_repr().numpy(), 1
    )
    qx = make_x((1, 8, 5, 6, 7), 0, 127, zp=0, gen=gen)
    qw = make_w(16, 8, (3, 3, 3), gen=gen)
    assert int8_gemm_exact(qx, qw)
    tp = torch.ops.quantized.conv3d_prepack(qw, None, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
    pk = q.conv3d_prepack(qw, None, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
    reference.assert_within_steps(
        q.conv3d(qx, pk, 0.2, 64), torch.ops.quantized.conv3d(qx, tp, 0.2, 64).int_repr().numpy(), 1
    )


# ---------------------------------------------------------------------------
# layouts and shapes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("geom", [GEOM2D[0], GEOM2D[4], GEOM2D[10]], ids=["3x3", "dw", "1x1"])
def test_layouts_identical(isa, geom):
    n, c, h, w, oc, ks, s, p, d, g = geom
    gen = torch.Generator().manual_seed(5)
    qx = make_x((n, c, h, w), gen=gen)
    pk = q.conv2d_prepack(make_w(oc, c // g, ks, gen=gen), None, list(s), list(p), list(d), g)
    ref = q.conv2d(qx, pk, 0.25, 90)
    assert ref.is_contiguous(memory_format=torch.channels_last)
    cl = qx.contiguous(memory_format=torch.channels_last)
    junk = torch.randint(0, 256, qx.shape, dtype=torch.uint8, generator=gen)
    big = torch._make_per_tensor_quantized_tensor(
        torch.stack([qx.int_repr(), junk], dim=-1).reshape(n, c, h, 2 * w), qx.q_scale(), qx.q_zero_point()
    )
    strided = big[..., ::2]
    assert not strided.is_contiguous() and torch.equal(strided.int_repr(), qx.int_repr())
    permuted = torch._make_per_tensor_quantized_tensor(
        qx.int_repr().permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2), qx.q_scale(), qx.q_zero_point()
    )
    for other in (cl, strided, permuted):
        y = q.conv2d(other, pk, 0.25, 90)
        assert torch.equal(y.int_repr(), ref.int_repr())
        assert y.is_contiguous(memory_format=torch.channels_last)


def test_chain_keeps_channels_last():
    qx = make_x((1, 8, 10, 10))
    pk = q.conv2d_prepack(make_w(8, 8, (3, 3)), None, [1, 1], [1, 1], [1, 1], 1)
    y = q.conv2d(q.conv2d(qx, pk, 0.3, 10), pk, 0.3, 10)
    assert y.is_contiguous(memory_format=torch.channels_last)


def test_empty_batch(isa):
    pk = q.conv2d_prepack(make_w(6, 4, (3, 3)), torch.randn(6), [2, 2], [1, 1], [1, 1], 1)
    y = q.conv2d(make_x((0, 4, 9, 9)), pk, 0.1, 3)
    assert y.shape == (0, 6, 5, 5) and y.dtype == torch.quint8
    pk1 = q.conv1d_prepack(make_w(6, 4, (3,)), None, [1], [1], [1], 1)
    assert q.conv1d(make_x((0, 4, 9)), pk1, 0.1, 3).shape == (0, 6, 9)
    pk3 = q.conv3d_prepack(make_w(6, 4, (1, 1, 1)), None, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    assert q.conv3d(make_x((0, 4, 2, 3, 3)), pk3, 0.1, 3).shape == (0, 6, 2, 3, 3)


# ---------------------------------------------------------------------------
# packed params
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("per_channel", [True, False])
def test_prepack_unpack_exact(dims, per_channel):
    qw = make_w(8, 2, (3,) * dims, per_channel=per_channel, nonzero_zp=True)
    b = torch.randn(8)
    st, pd, dl = [2] * dims, [1] * dims, [3] * dims
    pk = prepack(dims, qw, b, st, pd, dl, 4)
    w2, b2 = getattr(q, f"conv{dims}d_unpack")(pk)
    assert torch.equal(w2.int_repr(), qw.int_repr()) and w2.qscheme() == qw.qscheme()
    if per_channel:
        assert torch.equal(w2.q_per_channel_scales(), qw.q_per_channel_scales())
        assert torch.equal(w2.q_per_channel_zero_points(), qw.q_per_channel_zero_points())
    else:
        assert w2.q_scale() == qw.q_scale() and w2.q_zero_point() == qw.q_zero_point()
    assert torch.equal(b2, b)
    assert pk.stride() == st and pk.padding() == pd and pk.dilation() == dl and pk.groups() == 4
    assert pk.transpose() is False and pk.output_padding() == [0] * dims
    w3, b3 = pk.unpack()
    assert torch.equal(w3.int_repr(), qw.int_repr()) and torch.equal(b3, b)
    pk_nb = prepack(dims, qw, None, st, pd, dl, 4)
    assert getattr(q, f"conv{dims}d_unpack")(pk_nb)[1] is None


def test_opcheck(monkeypatch):
    # torch's schema checker probes every argument with len(), which a TorchScript class object
    # answers with NotImplementedError instead of TypeError; treat our packed params as the
    # non-iterables they are (everything else in the check is unchanged).
    from torch._subclasses import schema_check_mode

    orig = schema_check_mode.is_iterable_of_tensors
    monkeypatch.setattr(
        schema_check_mode, "is_iterable_of_tensors", lambda x: False if isinstance(x, torch.ScriptObject) else orig(x)
    )
    qx = make_x((1, 8, 6, 6))
    pk = q.conv2d_prepack(make_w(8, 8, (3, 3)), torch.randn(8), [1, 1], [1, 1], [1, 1], 1)
    utils = ("test_schema", "test_autograd_registration")
    torch.library.opcheck(q.conv2d.default, (qx, pk, 0.1, 3), test_utils=utils)
    torch.library.opcheck(q.conv2d_relu.default, (qx, pk, 0.1, 3), test_utils=utils)
    qa = make_x((1, 8, 6, 6))
    torch.library.opcheck(q.conv2d_add_relu.default, (qx, qa, pk, 0.1, 3), test_utils=utils)
    pk1 = q.conv1d_prepack(make_w(4, 8, (3,)), None, [1], [1], [1], 1)
    torch.library.opcheck(q.conv1d.default, (make_x((2, 8, 7)), pk1, 0.1, 3), test_utils=utils)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def _pk(groups=1, oc=8, icg=4, k=3):
    return q.conv2d_prepack(make_w(oc, icg, (k, k)), None, [1, 1], [1, 1], [1, 1], groups)


@pytest.mark.parametrize(
    "call, err, msg",
    [
        (lambda: q.conv2d(make_x((1, 4, 8)), _pk(), 0.1, 0), ValueError, r"conv2d: qx should have 4 dims"),
        (lambda: q.conv2d(make_x((1, 5, 8, 8)), _pk(), 0.1, 0), ValueError, r"qx channels should be 4"),
        (
            lambda: q.conv2d(make_x((1, 6, 8, 8)), _pk(groups=2, icg=2), 0.1, 0),
            ValueError,
            r"qx channels should be 4 \(weight in_channels 2 \* groups 2\), got 6",
        ),
        (lambda: q.conv2d(make_x((1, 4, 1, 1)), _pk(k=5), 0.1, 0), ValueError, r"output size should be >= 1"),
        (lambda: q.conv2d(make_x((1, 4, 8, 8)), _pk(), 0.0, 0), ValueError, r"output_scale should be a positive"),
        (lambda: q.conv2d(make_x((1, 4, 8, 8)), _pk(), float("nan"), 0), ValueError, r"output_scale should be"),
        (
            lambda: q.conv2d(make_x((1, 4, 8, 8)), _pk(), 0.1, 256),
            ValueError,
            r"output_zero_point should be in \[0, 255\]",
        ),
        (
            lambda: q.conv2d(torch.rand(1, 4, 8, 8), _pk(), 0.1, 0),
            RuntimeError,
            r"qx should be a quantized quint8 tensor",
        ),
        (
            lambda: q.conv2d(torch.quantize_per_tensor(torch.rand(1, 4, 8, 8), 0.1, 0, torch.qint8), _pk(), 0.1, 0),
            RuntimeError,
            r"qx should be a quint8 tensor, got QInt8",
        ),
        (
            lambda: q.conv2d_add(make_x((1, 4, 8, 8)), make_x((1, 8, 7, 8)), _pk(), 0.1, 0),
            ValueError,
            r"qaccum should have the output's shape",
        ),
        (
            lambda: q.conv1d(make_x((1, 4, 8)), _pk(), 0.1, 0),
            RuntimeError,
            r"packed_weight should come from conv1d_prepack",
        ),
        (lambda: q.conv1d_unpack(_pk()), RuntimeError, r"packed_weights should come from conv1d_prepack"),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [1, 1], [1, 1], [1, 1], 4),
            ValueError,
            r"groups should divide out_channels \(6\), got groups 4",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [1, 1], [1, 1], [1, 1], 0),
            ValueError,
            r"groups should be >= 1",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [0, 1], [1, 1], [1, 1], 1),
            ValueError,
            r"stride should be in \[1, 65536\], got \[0, 1\]",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [1, 1], [1, 1], [1, -1], 1),
            ValueError,
            r"dilation should be in \[1, 65536\], got \[1, -1\]",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [1, 1], [-1, 1], [1, 1], 1),
            ValueError,
            r"padding should be in \[0, 65536\], got \[-1, 1\]",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), None, [1], [1, 1], [1, 1], 1),
            ValueError,
            r"stride should have 2 elements",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3,)), None, [1, 1], [1, 1], [1, 1], 1),
            RuntimeError,
            r"weight should have 4 dims",
        ),
        (
            lambda: q.conv2d_prepack(torch.randn(6, 4, 3, 3), None, [1, 1], [1, 1], [1, 1], 1),
            RuntimeError,
            r"weight should be a quantized qint8 tensor, got a non-quantized tensor",
        ),
        (
            lambda: q.conv2d_prepack(
                torch.quantize_per_tensor(torch.randn(6, 4, 3, 3), 0.1, 0, torch.quint8),
                None,
                [1, 1],
                [1, 1],
                [1, 1],
                1,
            ),
            RuntimeError,
            r"weight should be a qint8 tensor, got QUInt8",
        ),
        (
            lambda: q.conv2d_prepack(
                torch.quantize_per_channel(
                    torch.randn(6, 4, 3, 3), torch.ones(4) * 0.1, torch.zeros(4, dtype=torch.long), 1, torch.qint8
                ),
                None,
                [1, 1],
                [1, 1],
                [1, 1],
                1,
            ),
            ValueError,
            r"per-channel axis should be 0",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), torch.randn(5), [1, 1], [1, 1], [1, 1], 1),
            ValueError,
            r"bias should be a 1-d tensor of 6 elements",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4, (3, 3)), torch.randn(6).double(), [1, 1], [1, 1], [1, 1], 1),
            RuntimeError,
            r"bias should be a float32 tensor",
        ),
        (
            lambda: q.conv2d_prepack(make_w(6, 4000, (3, 3)), None, [1, 1], [1, 1], [1, 1], 1),
            ValueError,
            r"kernel volume should be <= 33025",
        ),
        (
            lambda: q.conv3d(
                make_x((1, 4, 8, 8)),
                q.conv3d_prepack(make_w(8, 4, (3, 3, 3)), None, [1] * 3, [1] * 3, [1] * 3, 1),
                0.1,
                0,
            ),
            ValueError,
            r"qx should have 5 dims",
        ),
    ],
)
def test_bad_input(call, err, msg):
    with pytest.raises(err, match=msg):
        call()


def test_bad_weight_scale():
    w = torch._make_per_channel_quantized_tensor(
        torch.zeros(4, 2, 3, 3, dtype=torch.int8),
        torch.tensor([0.1, 0.0, 0.1, 0.1], dtype=torch.double),
        torch.zeros(4, dtype=torch.long),
        0,
    )
    with pytest.raises(ValueError, match=re.escape("qplugin::conv2d_prepack: weight scale should be a positive")):
        q.conv2d_prepack(w, None, [1, 1], [0, 0], [1, 1], 1)
