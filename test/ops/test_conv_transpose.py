"""qplugin conv_transpose1d / 2d / 3d, prepack / unpack: float64 reference, every kernel
path bit-identical, torch's own quantized conv_transpose where it is exact, errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference
from test_conv import make_x, out_qparams  # noqa: E402  (the conv tests' helpers)
from torch_oracle import int8_gemm_exact
import torch_qplugin
from torch_qplugin import _isa

q = torch.ops.qplugin


def make_wt(ic, ocg, ks, per_channel=True, nonzero_zp=False, gen=None):
    """A transposed-conv weight (IC, OC / groups, kernel...), per-channel along axis 1."""
    data = torch.randint(-128, 128, (ic, ocg, *ks), dtype=torch.int8, generator=gen)
    if per_channel:
        scales = torch.rand(ocg, dtype=torch.double, generator=gen) * 0.02 + 0.001
        zps = (torch.randint(-20, 21, (ocg,), generator=gen) if nonzero_zp else torch.zeros(ocg)).long()
        return torch._make_per_channel_quantized_tensor(data, scales, zps, 1)
    return torch._make_per_tensor_quantized_tensor(data, 0.007, 5 if nonzero_zp else 0)


def prepack(dims, qw, b, stride, padding, output_padding, dilation, groups):
    return getattr(q, f"conv_transpose{dims}d_prepack")(
        qw, b, list(stride), list(padding), list(output_padding), list(dilation), groups
    )


def run_and_check(
    dims,
    x_shape,
    ocg,
    ks,
    stride,
    padding,
    output_padding,
    dilation,
    groups,
    per_channel=True,
    nonzero_zp=False,
    x_range=(0, 255),
    with_bias=True,
    seed=0,
):
    gen = torch.Generator().manual_seed(seed)
    c = x_shape[1]
    qx = make_x(x_shape, *x_range, gen=gen)
    qw = make_wt(c, ocg, ks, per_channel, nonzero_zp, gen=gen)
    b = torch.randn(ocg * groups, generator=gen) if with_bias else None
    real = reference.conv_transpose_ref(
        reference.exact_real(qx),
        reference.exact_real(qw),
        None if b is None else b.double().numpy(),
        stride,
        padding,
        output_padding,
        dilation,
        groups,
    )
    ys, yzp = out_qparams(real)
    pk = prepack(dims, qw, b, stride, padding, output_padding, dilation, groups)
    y = getattr(q, f"conv_transpose{dims}d")(qx, pk, ys, yzp)
    exp = reference.qconv_transpose_ref(qx, qw, b, stride, padding, output_padding, dilation, groups, ys, yzp)
    assert tuple(y.shape) == exp.shape
    reference.assert_within_steps(y, exp, 1, what=f"conv_transpose{dims}d")
    assert y.q_scale() == pytest.approx(ys) and y.q_zero_point() == yzp and y.dtype == torch.quint8
    return qx, qw, b, pk, y


# (N, C, H, W, OC / groups, kernel, stride, padding, output_padding, dilation, groups)
GEOM2D = [
    (1, 16, 7, 7, 8, (4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1),  # 2x upsampling decoder layer
    (2, 8, 5, 6, 4, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1), 1),  # k2 s2: no overlap
    (1, 8, 6, 5, 12, (3, 3), (1, 1), (1, 1), (0, 0), (1, 1), 1),  # 3x3 s1
    (1, 12, 5, 4, 5, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 3),  # groups 3, output_padding
    (2, 6, 4, 5, 7, (3, 2), (3, 2), (2, 1), (2, 1), (2, 3), 1),  # dilation, output_padding < dilation
    (1, 8, 4, 4, 1, (3, 3), (2, 2), (1, 1), (0, 0), (1, 1), 8),  # depthwise
    (1, 3, 9, 3, 17, (5, 1), (1, 3), (4, 0), (0, 2), (1, 1), 1),  # padding at the kernel's reach, odd widths
    (1, 64, 3, 4, 40, (3, 3), (2, 1), (1, 1), (1, 0), (1, 1), 1),  # K 64, N tail
    (1, 4, 3, 3, 4, (7, 7), (1, 1), (4, 4), (0, 0), (1, 1), 1),  # padding trims all but one pixel
    (1, 5, 2, 70, 3, (1, 3), (1, 2), (0, 1), (0, 1), (1, 1), 1),  # long rows: several column ranges
]


@pytest.mark.parametrize("geom", GEOM2D, ids=[str(i) for i in range(len(GEOM2D))])
@pytest.mark.parametrize("per_channel", [True, False])
def test_conv_transpose2d_reference(isa, geom, per_channel):
    n, c, h, w, ocg, ks, s, p, op, d, g = geom
    run_and_check(2, (n, c, h, w), ocg, ks, s, p, op, d, g, per_channel=per_channel)


@pytest.mark.parametrize("geom", [GEOM2D[0], GEOM2D[3], GEOM2D[5]], ids=["dec", "g3", "dw"])
def test_conv_transpose2d_nonzero_weight_zero_point(isa, geom):
    n, c, h, w, ocg, ks, s, p, op, d, g = geom
    for per_channel in (True, False):
        run_and_check(
            2, (n, c, h, w), ocg, ks, s, p, op, d, g, per_channel=per_channel, nonzero_zp=True, with_bias=False, seed=1
        )


# (N, C, L, OC / groups, kernel, stride, padding, output_padding, dilation, groups)
GEOM1D = [
    (2, 16, 20, 8, 4, 2, 1, 0, 1, 1),
    (1, 6, 9, 5, 3, 3, 2, 2, 1, 2),
    (3, 4, 300, 6, 5, 1, 2, 0, 2, 1),  # several column ranges
    (1, 10, 4, 3, 1, 1, 0, 0, 1, 5),
]


@pytest.mark.parametrize("geom", GEOM1D, ids=[str(i) for i in range(len(GEOM1D))])
def test_conv_transpose1d_reference(isa, geom):
    n, c, length, ocg, k, s, p, op, d, g = geom
    for per_channel in (True, False):
        _, _, _, _, y = run_and_check(1, (n, c, length), ocg, (k,), (s,), (p,), (op,), (d,), g, per_channel=per_channel)
        assert y.stride(1) == 1  # channels-last output, as conv1d


GEOM3D = [
    (1, 8, 3, 4, 5, 4, (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1),
    (2, 6, 2, 3, 3, 3, (3, 3, 3), (1, 2, 1), (1, 1, 1), (0, 1, 0), (1, 1, 2), 2),
    (1, 4, 2, 2, 3, 5, (2, 3, 2), (2, 1, 3), (1, 0, 2), (1, 0, 2), (2, 1, 1), 1),
]


@pytest.mark.parametrize("geom", GEOM3D, ids=[str(i) for i in range(len(GEOM3D))])
def test_conv_transpose3d_reference(isa, geom):
    n, c, d_, h, w, ocg, ks, s, p, op, dl, g = geom
    for per_channel in (True, False):
        _, _, _, _, y = run_and_check(3, (n, c, d_, h, w), ocg, ks, s, p, op, dl, g, per_channel=per_channel)
        assert y.is_contiguous(memory_format=torch.channels_last_3d)


def test_reference_matches_torch_float64():
    # the float64 reference (written from the definition) agrees with torch's float conv_transpose
    gen = torch.Generator().manual_seed(4)
    for dims, geoms in ((2, GEOM2D), (1, GEOM1D), (3, GEOM3D)):
        for geom in geoms:
            if dims == 2:
                n, c, h, w, ocg, ks, s, p, op, d, g = geom
                shape = (n, c, h, w)
            elif dims == 1:
                n, c, length, ocg, k, s, p, op, d, g = geom
                shape, ks, s, p, op, d = (n, c, length), (k,), (s,), (p,), (op,), (d,)
            else:
                n, c, d_, h, w, ocg, ks, s, p, op, d, g = geom
                shape = (n, c, d_, h, w)
            x = torch.randn(shape, dtype=torch.double, generator=gen)
            w_ = torch.randn((c, ocg, *ks), dtype=torch.double, generator=gen)
            b = torch.randn(ocg * g, dtype=torch.double, generator=gen)
            fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[dims]
            exp = fn(x, w_, b, s, p, op, g, d).numpy()
            got = reference.conv_transpose_ref(x.numpy(), w_.numpy(), b.numpy(), s, p, op, d, g)
            np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-10)


def test_full_range_no_saturation(isa):
    # 0 / 255 activations against -128 / 127 weights: int16 pair sums would saturate
    gen = torch.Generator().manual_seed(8)
    data = (torch.randint(0, 2, (1, 64, 5, 5), generator=gen) * 255).to(torch.uint8)
    qx = torch._make_per_tensor_quantized_tensor(data, 0.02, 0)
    wd = torch.where(torch.rand(64, 16, 3, 3, generator=gen) < 0.5, -128, 127).to(torch.int8)
    qw = torch._make_per_tensor_quantized_tensor(wd, 0.01, 0)
    real = reference.conv_transpose_ref(
        reference.exact_real(qx), reference.exact_real(qw), None, (2, 2), (1, 1), (1, 1), (1, 1), 1
    )
    ys, yzp = out_qparams(real)
    pk = q.conv_transpose2d_prepack(qw, None, [2, 2], [1, 1], [1, 1], [1, 1], 1)
    y = q.conv_transpose2d(qx, pk, ys, yzp)
    reference.assert_within_steps(y, reference.requantize_ref(real, ys, yzp, torch.quint8), 1)


def test_kernel_paths_bit_identical():
    gen = torch.Generator().manual_seed(3)
    for n, c, h, w, ocg, ks, s, p, op, d, g in GEOM2D:
        for nonzero_zp in (False, True):
            qx = make_x((n, c, h, w), gen=gen)
            qw = make_wt(c, ocg, ks, nonzero_zp=nonzero_zp, gen=gen)
            pk = q.conv_transpose2d_prepack(
                qw, torch.randn(ocg * g, generator=gen), list(s), list(p), list(op), list(d), g
            )
            outs = []
            for isa in _isa.supported_isas():
                with torch_qplugin.kernel_isa(isa):
                    outs.append(q.conv_transpose2d(qx, pk, 0.3, 100).int_repr())
            for o in outs[1:]:
                assert torch.equal(outs[0], o)


def test_threads_identical(isa):
    gen = torch.Generator().manual_seed(5)
    old = torch.get_num_threads()
    try:
        for n, c, h, w, ocg, ks, s, p, op, d, g in (GEOM2D[0], GEOM2D[3], GEOM2D[9]):
            qx = make_x((n, c, h, w), gen=gen)
            pk = q.conv_transpose2d_prepack(make_wt(c, ocg, ks, gen=gen), None, list(s), list(p), list(op), list(d), g)
            outs = []
            for t in (1, 2, 3):
                torch.set_num_threads(t)
                outs.append(q.conv_transpose2d(qx, pk, 0.3, 100).int_repr())
            for o in outs[1:]:
                assert torch.equal(outs[0], o)
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("groups", [1, 2])
def test_stride1_equals_conv_with_flipped_weight(isa, groups):
    # stride 1: conv_transpose(x, w, padding P, dilation d) == conv(x, flip(w)^T, padding d(K-1)-P, dilation d);
    # both sums are exact int32 and run the same float steps, so the bytes are equal
    gen = torch.Generator().manual_seed(6)
    icg, ocg, k, p, d = 6, 5, 3, 1, 2
    qx = make_x((2, icg * groups, 7, 6), gen=gen)
    data = torch.randint(-128, 128, (icg * groups, ocg, k, k), dtype=torch.int8, generator=gen)
    scales = torch.rand(ocg, dtype=torch.double, generator=gen) * 0.02 + 0.001
    zps = torch.randint(-5, 6, (ocg,), generator=gen)
    qwt = torch._make_per_channel_quantized_tensor(data, scales, zps, 1)
    b = torch.randn(ocg * groups, generator=gen)
    # conv weight (OC, ICg, k, k): [g * ocg + o, i] = flip(w[g * icg + i, o])
    wc = data.reshape(groups, icg, ocg, k, k).transpose(1, 2).flip(-1, -2).reshape(groups * ocg, icg, k, k)
    qwc = torch._make_per_channel_quantized_tensor(wc.contiguous(), scales.repeat(groups), zps.repeat(groups), 0)
    yt = q.conv_transpose2d(qx, q.conv_transpose2d_prepack(qwt, b, [1, 1], [p, p], [0, 0], [d, d], groups), 0.4, 90)
    yc = q.conv2d(qx, q.conv2d_prepack(qwc, b, [1, 1], [d * (k - 1) - p] * 2, [d, d], groups), 0.4, 90)
    assert torch.equal(yt.int_repr(), yc.int_repr())


@pytest.fixture
def fbgemm_engine():
    # torch 2.13's x86 engine (oneDNN) computes quantized conv_transpose wrongly (up to 255 steps off
    # the float64 reference for any multi-channel input, docs/design/conv.md); its fbgemm engine is
    # exact, so that one is the oracle
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    yield
    torch.backends.quantized.engine = old


@pytest.mark.parametrize(
    "geom", [GEOM2D[0], GEOM2D[1], GEOM2D[2], GEOM2D[3], GEOM2D[4]], ids=["dec", "k2s2", "3x3", "g3", "dil"]
)
def test_conv_transpose2d_matches_torch(isa, geom, fbgemm_engine):
    # torch's own kernel (fbgemm engine, per-tensor weights only) on 7-bit activations, where it is exact
    n, c, h, w, ocg, ks, s, p, op, d, g = geom
    gen = torch.Generator().manual_seed(11)
    qx = make_x((n, c, h, w), 0, 127, zp=0, gen=gen)
    qw = make_wt(c, ocg, ks, per_channel=False, gen=gen)
    b = torch.randn(ocg * g, generator=gen)
    verdict = int8_gemm_exact(qx, qw)
    assert verdict, verdict.why
    tp = torch.ops.quantized.conv_transpose2d_prepack(qw, b, list(s), list(p), list(op), list(d), g)
    yt = torch.ops.quantized.conv_transpose2d(qx, tp, 0.2, 64)
    y = q.conv_transpose2d(qx, prepack(2, qw, b, s, p, op, d, g), 0.2, 64)
    assert y.shape == yt.shape
    reference.assert_within_steps(y, yt.int_repr().numpy(), 1, what="vs torch conv_transpose2d")


def test_conv_transpose1d_3d_match_torch(fbgemm_engine):
    gen = torch.Generator().manual_seed(12)
    qx = make_x((2, 16, 30), 0, 127, zp=0, gen=gen)
    qw = make_wt(16, 12, (4,), per_channel=False, gen=gen)
    assert int8_gemm_exact(qx, qw)
    tp = torch.ops.quantized.conv_transpose1d_prepack(qw, None, [2], [1], [0], [1], 1)
    y = q.conv_transpose1d(qx, q.conv_transpose1d_prepack(qw, None, [2], [1], [0], [1], 1), 0.2, 64)
    reference.assert_within_steps(y, torch.ops.quantized.conv_transpose1d(qx, tp, 0.2, 64).int_repr().numpy(), 1)
    qx = make_x((1, 8, 3, 4, 5), 0, 127, zp=0, gen=gen)
    qw = make_wt(8, 6, (2, 2, 2), per_channel=False, gen=gen)
    assert int8_gemm_exact(qx, qw)
    tp = torch.ops.quantized.conv_transpose3d_prepack(qw, None, [2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
    y = q.conv_transpose3d(
        qx, q.conv_transpose3d_prepack(qw, None, [2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1), 0.2, 64
    )
    reference.assert_within_steps(y, torch.ops.quantized.conv_transpose3d(qx, tp, 0.2, 64).int_repr().numpy(), 1)


def test_layouts_identical(isa):
    n, c, h, w, ocg, ks, s, p, op, d, g = GEOM2D[3]
    gen = torch.Generator().manual_seed(5)
    qx = make_x((n, c, h, w), gen=gen)
    pk = prepack(2, make_wt(c, ocg, ks, gen=gen), None, s, p, op, d, g)
    ref = q.conv_transpose2d(qx, pk, 0.25, 90)
    assert ref.is_contiguous(memory_format=torch.channels_last)
    cl = qx.contiguous(memory_format=torch.channels_last)
    assert torch.equal(q.conv_transpose2d(cl, pk, 0.25, 90).int_repr(), ref.int_repr())
    big = make_x((n, c, h, 2 * w), gen=gen)
    big.int_repr()  # strided view: every other column
    view = torch._make_per_tensor_quantized_tensor(big.int_repr()[..., ::2], qx.q_scale(), qx.q_zero_point())
    vref = torch._make_per_tensor_quantized_tensor(view.int_repr().contiguous(), qx.q_scale(), qx.q_zero_point())
    assert torch.equal(
        q.conv_transpose2d(view, pk, 0.25, 90).int_repr(), q.conv_transpose2d(vref, pk, 0.25, 90).int_repr()
    )


def test_empty_batch(isa):
    pk = q.conv_transpose2d_prepack(make_wt(8, 4, (3, 3)), None, [2, 2], [1, 1], [1, 1], [1, 1], 2)
    y = q.conv_transpose2d(make_x((0, 8, 5, 5)), pk, 0.1, 3)
    assert y.shape == (0, 8, 10, 10) and y.q_zero_point() == 3
    pk1 = q.conv_transpose1d_prepack(make_wt(4, 3, (3,)), None, [1], [0], [0], [1], 1)
    assert q.conv_transpose1d(make_x((0, 4, 6)), pk1, 0.1, 3).shape == (0, 3, 8)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("per_channel", [True, False])
def test_prepack_unpack_and_accessors(dims, per_channel):
    gen = torch.Generator().manual_seed(7)
    ks = (3, 2, 2)[:dims]
    qw = make_wt(6, 4, ks, per_channel, nonzero_zp=True, gen=gen)
    b = torch.randn(8, generator=gen)
    s, p, op, d = [2] * dims, [1] * dims, [1] * dims, [1] * dims
    pk = prepack(dims, qw, b, s, p, op, d, 2)
    w2, b2 = getattr(q, f"conv_transpose{dims}d_unpack")(pk)
    assert torch.equal(w2.int_repr(), qw.int_repr()) and w2.qscheme() == qw.qscheme()
    if per_channel:
        assert torch.equal(w2.q_per_channel_scales(), qw.q_per_channel_scales())
        assert w2.q_per_channel_axis() == 1
    assert torch.equal(b2, b)
    assert pk.transpose() is True
    assert (pk.stride(), pk.padding(), pk.output_padding(), pk.dilation(), pk.groups()) == (s, p, op, d, 2)
    assert pk.kind() == f"conv_transpose{dims}d"
    # a conv's packed params say transpose False, output_padding zeros
    cw = torch._make_per_tensor_quantized_tensor(torch.zeros(4, 2, *ks, dtype=torch.int8), 0.1, 0)
    cp = getattr(q, f"conv{dims}d_prepack")(cw, None, [1] * dims, [0] * dims, [1] * dims, 1)
    assert cp.transpose() is False and cp.output_padding() == [0] * dims


def _pk2(groups=1, ocg=4, icg=4, k=3, stride=2, padding=1, output_padding=1, dilation=1):
    return q.conv_transpose2d_prepack(
        make_wt(icg * groups, ocg, (k, k), per_channel=False),
        None,
        [stride] * 2,
        [padding] * 2,
        [output_padding] * 2,
        [dilation] * 2,
        groups,
    )


@pytest.mark.parametrize(
    "call, err, msg",
    [
        (
            lambda: q.conv2d(make_x((1, 4, 5, 5)), _pk2(), 0.1, 0),
            RuntimeError,
            "qplugin::conv2d: packed_weight should come from conv2d_prepack, got packed params of conv_transpose2d",
        ),
        (
            lambda: q.conv_transpose2d(
                make_x((1, 4, 5, 5)),
                q.conv2d_prepack(
                    torch._make_per_tensor_quantized_tensor(torch.zeros(4, 4, 3, 3, dtype=torch.int8), 0.1, 0),
                    None,
                    [1, 1],
                    [0, 0],
                    [1, 1],
                    1,
                ),
                0.1,
                0,
            ),
            RuntimeError,
            "qplugin::conv_transpose2d: packed_weight should come from conv_transpose2d_prepack, got packed params of conv2d",
        ),
        (
            lambda: q.conv_transpose1d(make_x((1, 4, 5)), _pk2(), 0.1, 0),
            RuntimeError,
            "conv_transpose1d: packed_weight should come from conv_transpose1d_prepack",
        ),
        (
            lambda: q.conv2d_unpack(_pk2()),
            RuntimeError,
            "conv2d_unpack: packed_weights should come from conv2d_prepack",
        ),
        (
            lambda: q.conv_transpose3d(make_x((1, 4, 2, 5, 5)), _pk2(), 0.1, 0),
            TypeError,
            "packed_weight should be a Conv3dPackedParamsBase",
        ),
        (
            lambda: q.conv_transpose2d(make_x((1, 5, 5, 5)), _pk2(), 0.1, 0),
            ValueError,
            "qx channels should be 4 \\(weight in_channels\\), got 5",
        ),
        (lambda: q.conv_transpose2d(make_x((1, 4, 5)), _pk2(), 0.1, 0), ValueError, "qx should have 4 dims"),
        (
            lambda: q.conv_transpose2d(make_x((1, 4, 0, 5)), _pk2(), 0.1, 0),
            ValueError,
            "qx spatial dims should be >= 1",
        ),
        (
            lambda: q.conv_transpose2d(make_x((1, 4, 1, 1)), _pk2(k=1, padding=3, output_padding=0), 0.1, 0),
            ValueError,
            "output size should be >= 1 in every spatial dim",
        ),
        (
            lambda: q.conv_transpose2d(torch.rand(1, 4, 5, 5), _pk2(), 0.1, 0),
            RuntimeError,
            "qx should be a quantized quint8 tensor",
        ),
        (lambda: q.conv_transpose2d(make_x((1, 4, 5, 5)), _pk2(), 1e-9, 0), ValueError, "output_scale should be"),
        (lambda: q.conv_transpose2d(make_x((1, 4, 5, 5)), _pk2(), 0.1, 300), ValueError, "output_zero_point should be"),
        (lambda: _pk2(stride=2, output_padding=2), ValueError, "output_padding should be >= 0 and smaller than stride"),
        (lambda: _pk2(stride=1, dilation=3, output_padding=2, padding=3), None, None),  # < dilation: fine
        (
            lambda: q.conv_transpose2d_prepack(
                make_wt(5, 2, (3, 3), per_channel=False), None, [1, 1], [0, 0], [0, 0], [1, 1], 2
            ),
            ValueError,
            "groups should divide in_channels \\(5, weight dim 0\\), got groups 2",
        ),
        (
            lambda: q.conv_transpose2d_prepack(
                torch._make_per_channel_quantized_tensor(
                    torch.zeros(4, 3, 3, 3, dtype=torch.int8),
                    torch.ones(4, dtype=torch.double),
                    torch.zeros(4).long(),
                    0,
                ),
                None,
                [1, 1],
                [0, 0],
                [0, 0],
                [1, 1],
                1,
            ),
            ValueError,
            "weight per-channel axis should be 1 \\(output channels\\), got 0",
        ),
        (
            lambda: q.conv_transpose2d_prepack(
                make_wt(4, 3, (3,), per_channel=False), None, [1, 1], [0, 0], [0, 0], [1, 1], 1
            ),
            RuntimeError,
            "weight should have 4 dims \\(in_channels, out_channels / groups, kernel...\\)",
        ),
        (
            lambda: q.conv_transpose2d_prepack(
                make_wt(4, 3, (3, 3), per_channel=False), torch.zeros(4), [1, 1], [0, 0], [0, 0], [1, 1], 1
            ),
            ValueError,
            "bias should be a 1-d tensor of 3 elements",
        ),
        (
            lambda: q.conv_transpose2d_prepack(
                make_wt(4, 3, (3, 3), per_channel=False), None, [0, 1], [0, 0], [0, 0], [1, 1], 1
            ),
            ValueError,
            "stride should be in \\[1, 65536\\]",
        ),
        (
            lambda: q.conv_transpose2d_prepack(torch.randn(4, 3, 3, 3), None, [1, 1], [0, 0], [0, 0], [1, 1], 1),
            RuntimeError,
            "weight should be a quantized qint8 tensor",
        ),
        (
            lambda: q.conv_transpose2d_prepack(
                make_wt(4000, 1, (3, 3), per_channel=False), None, [1, 1], [0, 0], [0, 0], [1, 1], 1
            ),
            ValueError,
            "kernel volume should be <= 33025",
        ),
    ],
)
def test_bad_input(call, err, msg):
    if err is None:
        call()
        return
    with pytest.raises(err, match=msg):
        call()
