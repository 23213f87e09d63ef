"""The plain tier's weighted ops: qplugin::plain_linear* / plain_conv* (+ their prepack ops).

Each must give exactly what its quantized twin (qplugin::linear / conv2d / ...: tested against
test/reference.py) gives from the same int8 weight, qparams and bias, on every kernel path; a packed
buffer made on another kernel path is never read (the op packs from the plain weight: same result);
a malformed buffer is an error; the fakes pass torch.library.opcheck; and a silent change of
kernels/gemm's packed layout fails test_linear_buffer_bytes_are_pinned.
"""

import hashlib

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin
from torch_qplugin import _isa
from torch_qplugin._fakes import linear_buffer_bytes
from plain_errors import VALUE_ERROR

q = torch.ops.qplugin
SX, ZX, SY, ZY = 0.05, 120, 0.3, 110


def _weight(shape, per_channel, zero_zp=False):
    n = shape[0]
    w = torch.randint(-128, 128, shape, dtype=torch.int8)
    k = n if per_channel else 1
    s = torch.rand(k, dtype=torch.float64) * 0.01 + 0.002
    z = torch.zeros(k, dtype=torch.int64) if zero_zp else torch.randint(-5, 6, (k,), dtype=torch.int64)
    return w, s, z


def _qweight(w, s, z):
    if s.numel() == 1 and w.shape[0] != 1:
        return torch_qplugin.ops.make_per_tensor_quantized_tensor(w, float(s), int(z))
    return torch_qplugin.ops.make_per_channel_quantized_tensor(w, s, z, 0)


def _qx(x, scale=SX, zp=ZX):
    return torch_qplugin.ops.make_per_tensor_quantized_tensor(x, scale, zp)


def _x(shape, layout):
    if layout == "empty":
        shape = (0,) + tuple(shape[1:])
    elif layout == "batch1":
        shape = (1,) + tuple(shape[1:])
    if layout == "strided":
        big = torch.randint(0, 256, tuple(shape[:-1]) + (shape[-1] * 2,), dtype=torch.uint8)
        return big[..., ::2]
    x = torch.randint(0, 256, shape, dtype=torch.uint8)
    if layout == "channels_last" and x.dim() in (4, 5):
        x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
    return x


LAYOUTS = ["contiguous", "channels_last", "strided", "empty", "batch1"]


# ---- linear ----


@pytest.mark.quantized_tier
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("has_bias", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_plain_linear_matches_quantized(per_channel, has_bias, relu, isa):
    w, s, z = _weight((37, 70), per_channel)
    b = torch.randn(37) if has_bias else None
    buf = q.plain_linear_prepack(w, s, z)
    packed = q.linear_prepack(_qweight(w, s, z), b)
    for shape in [(5, 70), (2, 3, 70), (1, 70), (0, 70), (70,)]:
        x = torch.randint(0, 256, shape, dtype=torch.uint8)
        plain = (q.plain_linear_relu if relu else q.plain_linear)(x, SX, ZX, w, s, z, b, buf, SY, ZY)
        quant = (q.linear_relu if relu else q.linear)(_qx(x), packed, SY, ZY)
        assert plain.dtype == torch.uint8 and torch.equal(plain, quant.int_repr())
    xs = torch.randint(0, 256, (6, 140), dtype=torch.uint8)[:, ::2]  # strided
    assert torch.equal(
        q.plain_linear(xs, SX, ZX, w, s, z, b, buf, SY, ZY), q.linear(_qx(xs.contiguous()), packed, SY, ZY).int_repr()
    )


@pytest.mark.quantized_tier
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_plain_linear_dynamic_matches_quantized(per_channel, relu, reduce_range, isa):
    w, s, z = _weight((19, 33), per_channel)
    b = torch.randn(19)
    buf = q.plain_linear_prepack(w, s, z)
    packed = q.linear_prepack(_qweight(w, s, z), b)
    for shape in [(4, 33), (2, 5, 33), (0, 33)]:
        x = torch.randn(shape) * 2
        plain = (q.plain_linear_relu_dynamic if relu else q.plain_linear_dynamic)(x, w, s, z, b, buf, reduce_range)
        quant = (q.linear_relu_dynamic if relu else q.linear_dynamic)(x, packed, reduce_range)
        assert torch.equal(plain, quant)


@pytest.mark.quantized_tier
@pytest.mark.parametrize("dynamic", [False, True])
def test_plain_linear_reads_scales_per_call_and_rechecks_them(dynamic):
    """The scales are read from w_scales on every call (in place where it is contiguous, a
    strided view or one scale for every channel as well), so an in-place change is seen; their
    range checks, skipped once the buffer was checked with them, run again after such a change."""
    w, s, z = _weight((12, 40), True)
    b = torch.randn(12)
    buf = q.plain_linear_prepack(w, s, z)
    xf = torch.randn(3, 40)
    xq = torch.randint(0, 256, (3, 40), dtype=torch.uint8)

    def plain(scales):
        if dynamic:
            return q.plain_linear_dynamic(xf, w, scales, z, b, buf, False)
        return q.plain_linear(xq, SX, ZX, w, scales, z, b, buf, SY, ZY)

    def quant(scales):
        packed = q.linear_prepack(_qweight(w, scales.contiguous(), z), b)
        return q.linear_dynamic(xf, packed, False) if dynamic else q.linear(_qx(xq), packed, SY, ZY).int_repr()

    before = plain(s)
    assert torch.equal(before, quant(s))
    s.mul_(1.5)
    got = plain(s)
    assert torch.equal(got, quant(s)) and not torch.equal(got, before)
    strided = torch.stack([s, torch.full_like(s, -1.0)], 1)[:, 0]  # every other entry of a bigger tensor
    assert not strided.is_contiguous() and torch.equal(plain(strided), got)
    s.view(-1)[-1] = float("nan")
    with pytest.raises(VALUE_ERROR, match=r"w_scales should be a positive finite number, got nan"):
        plain(s)
    wt, st, zt = _weight((12, 40), False)  # per tensor: one scale for all 12 channels
    buf = q.plain_linear_prepack(wt, st, zt)
    w, z = wt, zt
    assert torch.equal(plain(st), quant(st))
    st.fill_(0.0)
    with pytest.raises(VALUE_ERROR, match=r"w_scales should be a positive finite number, got 0"):
        plain(st)


@pytest.mark.quantized_tier
def test_linear_buffer_from_another_path_is_not_read():
    """A buffer packed on one kernel path, run on another: the op packs from w (same output)."""
    w, s, z = _weight((24, 50), True)
    b = torch.randn(24)
    x = torch.randint(0, 256, (9, 50), dtype=torch.uint8)
    bufs = {}
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            bufs[isa] = q.plain_linear_prepack(w, s, z)
            assert bufs[isa].numel() == linear_buffer_bytes(24, 50, isa)
    packed = q.linear_prepack(_qweight(w, s, z), b)
    for run in _isa.supported_isas():
        with torch_qplugin.kernel_isa(run):
            want = q.linear(_qx(x), packed, SY, ZY).int_repr()
            for made, buf in bufs.items():
                assert torch.equal(q.plain_linear(x, SX, ZX, w, s, z, b, buf, SY, ZY), want), (made, run)
    # a buffer whose bytes were garbled is an error even where its header says "another path"
    other = bufs["scalar"].clone()
    other[192:] = 0x55
    for run in _isa.supported_isas():
        with torch_qplugin.kernel_isa(run):
            with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed is damaged"):
                q.plain_linear(x, SX, ZX, w, s, z, b, other, SY, ZY)


# sha256 of plain_linear_prepack's buffer for the weight below, per kernel path. A change means
# kernels/gemm's packed layout (or the buffer format) changed: bump kLinearLayout / kVersion in
# packed_params/plain_buffer.h (so old buffers are repacked, never misread) and update these.
# (avx512: the scalar path's bytes with the header's ISA word 2 and so another checksum: the same int8
# layout, no int16 copy.)
PINNED = {
    "scalar": "e3b143aeb8facc7590357d0252824f321b56dcc8e4f1eee17a08dceef38bed8d",
    "avx2": "1d7f96e1abda63467f25280c1957525dabeb671f1e41b2d479834f6f1ddd5ef4",
    "avx512": "f4af3e48f17d34939a41781b006dc1e9c4382a29cc3e1deeae55bb73e10922f5",
}


def _pinned_weight():
    g = torch.Generator().manual_seed(1234)
    w = torch.randint(-128, 128, (18, 13), dtype=torch.int8, generator=g)
    s = torch.full((18,), 0.01, dtype=torch.float64)
    z = torch.arange(18, dtype=torch.int64) % 3 - 1
    return w, s, z


@pytest.mark.parametrize("path", [p for p in PINNED if p in _isa.supported_isas()])
def test_linear_buffer_bytes_are_pinned(path):
    w, s, z = _pinned_weight()
    with torch_qplugin.kernel_isa(path):
        buf = q.plain_linear_prepack(w, s, z)
    assert hashlib.sha256(buf.numpy().tobytes()).hexdigest() == PINNED[path]


# sha256 of plain_conv_prepack's buffer for the weights below, per kernel path and conv kind. A
# change means a conv layout (kernels/gemm's packing, the depthwise or stem-conv row layout) or the
# buffer format changed: bump kConvLayout / kVersion in packed_params/plain_buffer.h and update these.
PINNED_CONV = {
    "scalar": {
        "conv": "3c335b2e53468627772a5ac55afa0cc374d812fdd272a6fe0e7fa479f48bdbc6",
        "depthwise": "00dee3beddb93da293055db8cdbea6cdc4a8752994938105e88dfa50275913e2",
        "stem": "a681d9ce24390e8ab229677b6eb91fa737083e6286c1736eb1b441b0c4f97265",
    },
    "avx2": {
        "conv": "2db4ded1e54c75ca449af6defe0d929a7c27c4afa878ae1ac61c9ce7490749f8",
        "depthwise": "d384fd889668f83c5746dcd2a64b534b978138fc7e0c57f5edc3171149186125",
        "stem": "c4599ba0413171c34e1ff864cba93e29c46d0c18f4c8ed21019914b5a9bd853d",
    },
    "avxvnni": {
        "conv": "423ce52599c5eea5545497fea7a1761dead79d0cbf016b71b0fb0c7ef182c2af",
        "depthwise": "b9876574a48dd4eaa70259b153ea116641d773e62168abcba602d8e7feccb97f",
        "stem": "abd08753b9f55c47ad5ff2adddbefb5036ec2433f8ced398979e14957aeedc64",
    },
    "avx512": {
        "conv": "265d6878715aa55f353422ab60e4a3ef8812adf25058729a098d1fc0973ebec8",
        "depthwise": "4c7a59f64aea31728454cc91555edf10db3ba374a18716d636e11c82dc0b0cda",
        "stem": "2f8fd51a132b2abeb7a8d76b8b16683999134b7d1fc6c31bc29bc39b9500c1e8",
    },
}
PINNED_CONV_SHAPES = {"conv": ((6, 8, 3, 3), 1), "depthwise": ((32, 1, 3, 3), 32), "stem": ((8, 3, 3, 3), 1)}


@pytest.mark.parametrize("path", [p for p in PINNED_CONV if p in _isa.supported_isas()])
@pytest.mark.parametrize("kind", sorted(PINNED_CONV_SHAPES))
def test_conv_buffer_bytes_are_pinned(path, kind):
    ws, groups = PINNED_CONV_SHAPES[kind]
    n = int(torch.tensor(ws).prod())
    w = torch.arange(n).reshape(ws).remainder(251).sub(125).to(torch.int8)
    s, z = torch.full((ws[0],), 0.01, dtype=torch.double), torch.zeros(ws[0], dtype=torch.long)
    with torch_qplugin.kernel_isa(path):
        buf = q.plain_conv_prepack(w, s, z, None, [1, 1], [1, 1], [1, 1], groups)
    assert hashlib.sha256(buf.numpy().tobytes()).hexdigest() == PINNED_CONV[path][kind]


def test_linear_buffer_errors():
    w, s, z = _weight((8, 16), True)
    x = torch.randint(0, 256, (2, 16), dtype=torch.uint8)
    buf = q.plain_linear_prepack(w, s, z)
    bad = buf.clone()
    bad[0] ^= 1
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed is not a qplugin packed buffer"):
        q.plain_linear(x, SX, ZX, w, s, z, None, bad, SY, ZY)
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_linear: packed should hold a 192-byte header \(128 in "
        r"format 1\), got 64",
    ):
        q.plain_linear(x, SX, ZX, w, s, z, None, buf[:64], SY, ZY)
    with pytest.raises(RuntimeError, match=r"qplugin::plain_linear: packed should be a contiguous 1-D uint8"):
        q.plain_linear(x, SX, ZX, w, s, z, None, buf.view(torch.int8), SY, ZY)
    w2, s2, z2 = _weight((9, 16), True)
    with pytest.raises(VALUE_ERROR, match=r"packed should hold a \[9, 16\] weight \(w's shape\), got \[8, 16\]"):
        q.plain_linear(x, SX, ZX, w2, s2, z2, None, buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: packed should be \d+ bytes long \(its header's size\)"):
        q.plain_linear(x, SX, ZX, w, s, z, None, buf[:200].clone(), SY, ZY)
    conv = q.plain_conv_prepack(
        torch.zeros(4, 2, 3, 3, dtype=torch.int8), s[:1], z[:1], None, [1, 1], [0, 0], [1, 1], 1
    )
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: packed should be a linear buffer, got kind 2"):
        q.plain_linear(x, SX, ZX, w, s, z, None, conv, SY, ZY)
    with pytest.raises(RuntimeError, match=r"plain_linear: x should be a uint8 tensor, got dtype Float"):
        q.plain_linear(x.float(), SX, ZX, w, s, z, None, buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: x should have last dimension 16"):
        q.plain_linear(x[:, :15], SX, ZX, w, s, z, None, buf, SY, ZY)
    with pytest.raises(RuntimeError, match=r"plain_linear: w_scales and w_zero_points should be float64 and int64"):
        q.plain_linear(x, SX, ZX, w, s.float(), z, None, buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: w_scales and w_zero_points should be 1-D with 1 or 8"):
        q.plain_linear(x, SX, ZX, w, s[:3], z[:3], None, buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: w_scales should be a positive finite number, got -1"):
        q.plain_linear(x, SX, ZX, w, -s.abs() / s.abs(), z, None, buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: bias should have shape \[8\]"):
        q.plain_linear(x, SX, ZX, w, s, z, torch.zeros(3), buf, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear: X zero_point should be in \[0, 255\]"):
        q.plain_linear(x, SX, 300, w, s, z, None, buf, SY, ZY)
    with pytest.raises(RuntimeError, match=r"plain_linear_dynamic: x should be a float32 tensor, got dtype Byte"):
        q.plain_linear_dynamic(x, w, s, z, None, buf)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "empty", "batch1"])
def test_plain_linear_opcheck(layout):
    w, s, z = _weight((12, 14), True)
    b = torch.randn(12)
    buf = q.plain_linear_prepack(w, s, z)
    x = _x((3, 14), layout)
    for op in (q.plain_linear.default, q.plain_linear_relu.default):
        torch.library.opcheck(op, (x, SX, ZX, w, s, z, b, buf, SY, ZY))
    xf = torch.randn(3, 28)[:, ::2] if layout == "strided" else torch.randn(_x((3, 14), layout).shape)
    for op in (q.plain_linear_dynamic.default, q.plain_linear_relu_dynamic.default):
        torch.library.opcheck(op, (xf, w, s, z, b, buf, False))
    torch.library.opcheck(q.plain_linear_prepack.default, (w, s, z))


@pytest.mark.quantized_tier
@pytest.mark.parametrize("gates", [4, 3])
def test_plain_rnn_layer_matches_quantized(gates, isa):
    h = 6
    wi, si, zi = _weight((gates * h, 5), True)
    wh, sh, zh = _weight((gates * h, h), False)
    bi, bh = torch.randn(gates * h), torch.randn(gates * h)
    pi, ph = q.plain_linear_prepack(wi, si, zi), q.plain_linear_prepack(wh, sh, zh)
    qi, qh = q.linear_prepack(_qweight(wi, si, zi), bi), q.linear_prepack(_qweight(wh, sh, zh), bh)
    x, h0, c0 = torch.randn(4, 3, 5), torch.randn(3, h), torch.randn(3, h)
    for reverse in (False, True):
        args = (x, h0, c0, wi, si, zi, bi, pi, wh, sh, zh, bh, ph, gates, reverse)
        got = q.plain_rnn_layer_dynamic(*args)
        want = q._rnn_layer_dynamic(x, h0, c0, qi, qh, gates, reverse)
        assert all(torch.equal(a, b) for a, b in zip(got, want))
        if isa == "scalar":
            torch.library.opcheck(q.plain_rnn_layer_dynamic.default, args)
    with pytest.raises(VALUE_ERROR, match=r"plain_rnn_layer_dynamic: w_hh should be \["):
        q.plain_rnn_layer_dynamic(x, h0, c0, wi, si, zi, bi, pi, wi, si, zi, bi, pi, gates, False)


# ---- conv ----

CONV_CASES = {
    # name: (spatial, x shape, weight shape, stride, padding, dilation, groups)
    "conv1d": (1, (2, 6, 11), (8, 3, 3), [2], [1], [1], 2),
    "conv2d": (2, (2, 4, 9, 8), (6, 4, 3, 3), [1, 2], [1, 0], [1, 1], 1),
    "conv2d_depthwise": (2, (2, 8, 7, 7), (8, 1, 3, 3), [1, 1], [1, 1], [2, 2], 8),
    "conv3d": (3, (1, 4, 5, 6, 6), (6, 2, 2, 3, 3), [1, 1, 2], [0, 1, 1], [1, 1, 1], 2),
}


def _conv_setup(case, per_channel):
    sp, xs, ws, st, pd, dl, g = CONV_CASES[case]
    w, s, z = _weight(ws, per_channel, zero_zp=True)
    b = torch.randn(ws[0])
    buf = q.plain_conv_prepack(w, s, z, b, st, pd, dl, g)
    prepack = {1: q.conv1d_prepack, 2: q.conv2d_prepack, 3: q.conv3d_prepack}[sp]
    packed = prepack(_qweight(w, s, z), b, st, pd, dl, g)
    return sp, xs, (w, s, z, b, buf, st, pd, dl, g), packed


@pytest.mark.quantized_tier
@pytest.mark.parametrize("case", list(CONV_CASES))
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_plain_conv_matches_quantized(case, per_channel, relu, isa):
    sp, xs, args, packed = _conv_setup(case, per_channel)
    name = f"conv{sp}d" + ("_relu" if relu else "")
    for layout in LAYOUTS:
        x = _x(xs, layout)
        plain = getattr(q, "plain_" + name)(x, SX, ZX, *args, SY, ZY)
        quant = getattr(q, name)(_qx(x), packed, SY, ZY)
        assert plain.dtype == torch.uint8 and plain.shape == quant.shape
        assert plain.stride() == quant.stride() and torch.equal(plain, quant.int_repr()), layout


@pytest.mark.quantized_tier
@pytest.mark.parametrize("relu", [False, True])
def test_plain_conv2d_add_matches_quantized(relu, isa):
    _, xs, args, packed = _conv_setup("conv2d", True)
    x = _x(xs, "channels_last")
    y0 = q.plain_conv2d(x, SX, ZX, *args, SY, ZY)
    acc = torch.randint(0, 256, y0.shape, dtype=torch.uint8)
    name = "conv2d_add_relu" if relu else "conv2d_add"
    plain = getattr(q, "plain_" + name)(x, SX, ZX, acc, 0.2, 90, *args, SY, ZY)
    quant = getattr(q, name)(_qx(x), _qx(acc, 0.2, 90), packed, SY, ZY)
    assert torch.equal(plain, quant.int_repr())


def test_plain_conv_default_order_copies(isa):
    """A default-order input (and conv2d_add's addend) is copied to channels_last before the GEMM:
    up to 256 KiB into a per-thread scratch buffer reused from call to call (input and addend each
    their own), above that into a new tensor. Either way the output is the bytes the same conv
    gives on channels_last inputs, which are read in place; calls alternate sizes so a reused
    buffer holding a larger or earlier input shows."""
    gen = torch.Generator().manual_seed(3)
    w, s, z = _weight((16, 64, 3, 3), True, zero_zp=True)
    b = torch.randn(16, generator=gen)
    geo = ([1, 1], [1, 1], [1, 1], 1)
    buf = q.plain_conv_prepack(w, s, z, b, *geo)
    args = (w, s, z, b, buf, *geo)
    # 64 x 64 x 64 bytes is 256 KiB exactly: the largest scratch copy; 64 x 64 x 65 is over it
    for shape in [(1, 64, 64, 64), (2, 64, 5, 7), (1, 64, 64, 65), (1, 64, 3, 3), (1, 64, 64, 64)]:
        x = torch.randint(0, 256, shape, dtype=torch.uint8, generator=gen)
        x_cl = x.contiguous(memory_format=torch.channels_last)
        want = q.plain_conv2d(x_cl, SX, ZX, *args, SY, ZY)
        assert torch.equal(q.plain_conv2d(x, SX, ZX, *args, SY, ZY), want), shape
        acc = torch.randint(0, 256, want.shape, dtype=torch.uint8, generator=gen)
        acc_cl = acc.contiguous(memory_format=torch.channels_last)
        want_add = q.plain_conv2d_add(x_cl, SX, ZX, acc_cl, 0.2, 90, *args, SY, ZY)
        assert not torch.equal(want_add, want)
        for xi, ai in ((x, acc), (x, acc_cl), (x_cl, acc)):
            assert torch.equal(q.plain_conv2d_add(xi, SX, ZX, ai, 0.2, 90, *args, SY, ZY), want_add), shape


@pytest.mark.quantized_tier
def test_plain_conv_reads_qparams_per_call_and_checks_the_weight():
    """Scales and bias are read from the op's arguments on every call, so an in-place change is
    seen; the weight and its zero points are in the buffer, so an in-place change of either is an
    error until the buffer is repacked."""
    sp, xs, (w, s, z, b, buf, st, pd, dl, g), _ = _conv_setup("conv2d", True)
    x = _x(xs, "contiguous")
    before = q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
    for change in (lambda: s.mul_(1.5), lambda: b.add_(3.0)):
        change()
        want = q.conv2d(_qx(x), q.conv2d_prepack(_qweight(w, s, z), b, st, pd, dl, g), SY, ZY).int_repr()
        got = q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
        assert torch.equal(got, want) and not torch.equal(got, before)
        before = got
    # a copy of the weight (another storage, the same bytes) reads the same buffer
    got = q.plain_conv2d(x, SX, ZX, w.clone(), s, z, b, buf, st, pd, dl, g, SY, ZY)
    assert torch.equal(got, before)
    # scales checked by an earlier call and changed in place since are checked again
    s.view(-1)[-1] = float("nan")
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: weight scale should be a positive finite number, got nan"):
        q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
    s.view(-1)[-1] = 0.01
    w.neg_().clamp_(-127, 127)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_conv2d: packed was not made from these w / w_zero_points \(its "
        r"packed weight differs\); repack",
    ):
        q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
    buf = q.plain_conv_prepack(w, s, z, b, st, pd, dl, g)
    want = q.conv2d(_qx(x), q.conv2d_prepack(_qweight(w, s, z), b, st, pd, dl, g), SY, ZY).int_repr()
    assert torch.equal(q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY), want)


@pytest.mark.quantized_tier
def test_plain_conv_errors():
    sp, xs, (w, s, z, b, buf, st, pd, dl, g), _ = _conv_setup("conv2d", True)
    x = _x(xs, "contiguous")
    lbuf = q.plain_linear_prepack(torch.zeros(4, 4, dtype=torch.int8), s[:1], z[:1])
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: packed should be a conv buffer, got kind 1"):
        q.plain_conv2d(x, SX, ZX, w, s, z, b, lbuf, st, pd, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: packed should describe a weight of 6 x 4 channels in 1"):
        q.plain_conv2d(x, SX, ZX, w[:3].clone(), s[:3], z[:3], b[:3], buf, st, pd, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: qx channels should be 4"):
        q.plain_conv2d(x[:, :3], SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
    with pytest.raises(RuntimeError, match=r"plain_conv2d: x should be a uint8 tensor, got dtype Char"):
        q.plain_conv2d(x.to(torch.int8), SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: stride should have 2 elements"):
        q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, [1], pd, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv_prepack: weight zero_point should be in \[-128, 127\]"):
        q.plain_conv_prepack(w, s, z + 200, b, st, pd, dl, g)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv2d: output_zero_point should be in \[0, 255\]"):
        q.plain_conv2d(x, SX, ZX, w, s, z, b, buf, st, pd, dl, g, SY, 256)


@pytest.mark.quantized_tier
@pytest.mark.parametrize("case", list(CONV_CASES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_plain_conv_opcheck(case, layout):
    sp, xs, args, _ = _conv_setup(case, True)
    x = _x(xs, layout)
    for name in (f"plain_conv{sp}d", f"plain_conv{sp}d_relu"):
        torch.library.opcheck(getattr(q, name).default, (x, SX, ZX, *args, SY, ZY))
    if case == "conv2d":
        acc = torch.randint(0, 256, q.plain_conv2d(x, SX, ZX, *args, SY, ZY).shape, dtype=torch.uint8)
        for name in ("plain_conv2d_add", "plain_conv2d_add_relu"):
            torch.library.opcheck(getattr(q, name).default, (x, SX, ZX, acc, 0.2, 90, *args, SY, ZY))
        w, s, z, b, buf, st, pd, dl, g = args
        torch.library.opcheck(q.plain_conv_prepack.default, (w, s, z, b, st, pd, dl, g))


# ---- transposed conv ----

CONVT_CASES = {
    # name: (spatial, x shape, weight shape (IC, OC / groups, k...), stride, padding, output_padding, dilation, groups)
    "convT1d": (1, (2, 6, 9), (6, 4, 3), [2], [1], [1], [1], 2),
    "convT2d": (2, (2, 4, 5, 6), (4, 6, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1], 1),
    "convT2d_groups": (2, (1, 6, 4, 5), (6, 2, 3, 2), [1, 2], [0, 1], [0, 1], [2, 1], 3),
    "convT3d": (3, (1, 4, 3, 4, 3), (4, 3, 2, 2, 3), [2, 1, 2], [0, 1, 1], [1, 0, 1], [1, 1, 1], 2),
}


def _convt_setup(case, per_channel):
    """Plain arguments and the quantized twin's packed params. Per channel: the plain form holds one
    scale per output channel (OC entries); the quantized weight of the same integers, per channel
    along axis 1, holds OC / groups (shared by the groups), so the scales repeat per group here."""
    sp, xs, ws, st, pd, op, dl, g = CONVT_CASES[case]
    w = torch.randint(-128, 128, ws, dtype=torch.int8)
    ocg = ws[1]
    if per_channel:
        sg = torch.rand(ocg, dtype=torch.float64) * 0.01 + 0.002
        zg = torch.randint(-5, 6, (ocg,), dtype=torch.int64)
        s, z = sg.repeat(g), zg.repeat(g)
        qw = torch_qplugin.ops.make_per_channel_quantized_tensor(w, sg, zg, 1)
    else:
        s, z = torch.tensor([0.004], dtype=torch.float64), torch.tensor([3])
        qw = torch_qplugin.ops.make_per_tensor_quantized_tensor(w, 0.004, 3)
    b = torch.randn(ocg * g)
    buf = q.plain_conv_transpose_prepack(w, s, z, b, st, pd, op, dl, g)
    packed = getattr(q, f"conv_transpose{sp}d_prepack")(qw, b, st, pd, op, dl, g)
    return sp, xs, (w, s, z, b, buf, st, pd, op, dl, g), packed


@pytest.mark.quantized_tier
@pytest.mark.parametrize("case", list(CONVT_CASES))
@pytest.mark.parametrize("per_channel", [False, True])
def test_plain_conv_transpose_matches_quantized(case, per_channel, isa):
    sp, xs, args, packed = _convt_setup(case, per_channel)
    for layout in LAYOUTS:
        x = _x(xs, layout)
        plain = getattr(q, f"plain_conv_transpose{sp}d")(x, SX, ZX, *args, SY, ZY)
        quant = getattr(q, f"conv_transpose{sp}d")(_qx(x), packed, SY, ZY)
        assert plain.dtype == torch.uint8 and plain.shape == quant.shape
        assert plain.stride() == quant.stride() and torch.equal(plain, quant.int_repr()), layout


def test_plain_conv_transpose_per_output_channel_across_groups():
    # the plain tier holds a scale per output channel of every group (the quantized weight cannot):
    # within 1 step of the float64 reference with those scales
    import sys, os  # noqa: E401

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import reference

    w = torch.randint(-128, 128, (6, 2, 3, 3), dtype=torch.int8)
    s = torch.rand(6, dtype=torch.float64) * 0.01 + 0.002
    z = torch.randint(-5, 6, (6,), dtype=torch.int64)
    b = torch.randn(6)
    geo = ([2, 2], [1, 1], [1, 1], [1, 1], 3)
    buf = q.plain_conv_transpose_prepack(w, s, z, b, *geo)
    x = torch.randint(0, 256, (2, 6, 4, 5), dtype=torch.uint8)
    y = q.plain_conv_transpose2d(x, SX, ZX, w, s, z, b, buf, *geo, SY, ZY)
    # real weight: (w - z[oc]) * s[oc], oc = g * 2 + j for w[g * 2 + i, j]
    oc = (torch.arange(6) // 2 * 2).reshape(6, 1) + torch.arange(2)  # row g * 2 + i, column j -> g * 2 + j
    wr = ((w.double() - z[oc].double().reshape(6, 2, 1, 1)) * s[oc].reshape(6, 2, 1, 1)).numpy()
    xr = ((x.double() - ZX) * SX).numpy()
    real = reference.conv_transpose_ref(xr, wr, b.double().numpy(), *geo[:4], geo[4])
    reference.assert_within_steps(y, reference.requantize_ref(real, SY, ZY, torch.quint8), 1)


@pytest.mark.quantized_tier
def test_plain_conv_transpose_errors():
    sp, xs, (w, s, z, b, buf, st, pd, op, dl, g), _ = _convt_setup("convT2d", True)
    x = _x(xs, "contiguous")
    _, _, (cw, cs, cz, cb, cbuf, cst, cpd, cdl, cg), _ = _conv_setup("conv2d", True)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_conv_transpose2d: packed should come from "
        r"plain_conv_transpose_prepack, got the buffer of a conv",
    ):
        q.plain_conv_transpose2d(x, SX, ZX, w, s, z, b, cbuf, st, pd, op, dl, g, SY, ZY)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_conv2d: packed should come from plain_conv_prepack, "
        r"got the buffer of a transposed conv",
    ):
        q.plain_conv2d(
            _x(CONV_CASES["conv2d"][1], "contiguous"), SX, ZX, cw, cs, cz, cb, buf, cst, cpd, cdl, cg, SY, ZY
        )
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_conv_transpose2d: w_scales and w_zero_points should be 1-D "
        r"with 1 or 6 entries",
    ):
        q.plain_conv_transpose2d(x, SX, ZX, w, s[:4], z[:4], b, buf, st, pd, op, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv_transpose2d: output_padding should be >= 0 and smaller"):
        q.plain_conv_transpose2d(x, SX, ZX, w, s, z, b, buf, st, pd, [2, 0], dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv_transpose2d: qx channels should be 4"):
        q.plain_conv_transpose2d(x[:, :3], SX, ZX, w, s, z, b, buf, st, pd, op, dl, g, SY, ZY)
    with pytest.raises(RuntimeError, match=r"plain_conv_transpose2d: x should be a uint8 tensor"):
        q.plain_conv_transpose2d(x.to(torch.int8), SX, ZX, w, s, z, b, buf, st, pd, op, dl, g, SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv_transpose_prepack: w should have 3 to 5 dims"):
        q.plain_conv_transpose_prepack(w[0, 0], s, z, b, st, pd, op, dl, g)
    with pytest.raises(VALUE_ERROR, match=r"plain_conv_transpose_prepack: groups should divide in_channels"):
        q.plain_conv_transpose_prepack(w, s[:1], z[:1], None, st, pd, op, dl, 3)


@pytest.mark.quantized_tier
@pytest.mark.parametrize("case", list(CONVT_CASES))
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "empty"])
def test_plain_conv_transpose_opcheck(case, layout):
    sp, xs, args, _ = _convt_setup(case, True)
    x = _x(xs, layout)
    torch.library.opcheck(getattr(q, f"plain_conv_transpose{sp}d").default, (x, SX, ZX, *args, SY, ZY))
    w, s, z, b, _, st, pd, op, dl, g = args
    torch.library.opcheck(q.plain_conv_transpose_prepack.default, (w, s, z, b, st, pd, op, dl, g))


# ---- fp16 dynamic: plain_linear(_relu)_dynamic_fp16 (float16 w as a plain tensor) ----
def _fp16_weight(shape):
    return (torch.randn(shape) * 0.5).to(torch.float16)


@pytest.mark.quantized_tier
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_plain_linear_dynamic_fp16_matches_quantized(relu, bias, isa):
    """Bit-identical to linear_(relu_)dynamic_fp16 on the same float16 weight (whose own tests
    check the float64 reference within the kernel's error bound), and within that bound here."""
    w = _fp16_weight((37, 70))
    b = torch.randn(37) if bias else None
    packed = q.linear_prepack_fp16(w.float(), b)
    plain_op = q.plain_linear_relu_dynamic_fp16 if relu else q.plain_linear_dynamic_fp16
    quant_op = q.linear_relu_dynamic_fp16 if relu else q.linear_dynamic_fp16
    buf = q.plain_linear_prepack_fp16(w)
    for shape in [(5, 70), (2, 3, 70), (70,), (0, 70), (130, 70)]:
        x = torch.randn(shape) * 2
        got = plain_op(x, w, b, buf)
        assert got.shape == shape[:-1] + (37,) and torch.equal(got, quant_op(x, packed))
        assert torch.equal(plain_op(x, w, b, torch.empty(0, dtype=torch.float16)), got)  # packs w itself
        bn = None if b is None else b.numpy()
        exp = ref.linear_fp16_ref(x.numpy(), w.float().numpy(), bn, relu)
        assert (
            np.abs(got.numpy().astype(np.float64) - exp) <= ref.linear_fp16_tolerance(x.numpy(), w.float().numpy(), bn)
        ).all()


def test_plain_linear_prepack_fp16_layout():
    """kernels/linear_fp16_kernel.h's panels: packed[p, k, j] = w[16 p + j, k], zero past N."""
    w = _fp16_weight((37, 5))
    buf = q.plain_linear_prepack_fp16(w)
    assert buf.dtype == torch.float16 and buf.shape == (3, 5, 16)
    padded = torch.cat([w, torch.zeros(48 - 37, 5, dtype=torch.float16)])
    assert torch.equal(buf, padded.reshape(3, 16, 5).transpose(1, 2))
    with pytest.raises(RuntimeError, match=r"plain_linear_prepack_fp16: w should be a float16 tensor, got dtype Float"):
        q.plain_linear_prepack_fp16(w.float())
    torch.library.opcheck(q.plain_linear_prepack_fp16.default, (w,))


def test_plain_linear_dynamic_fp16_bad_input():
    w, x = _fp16_weight((3, 4)), torch.randn(2, 4)
    buf = q.plain_linear_prepack_fp16(w)
    op = q.plain_linear_dynamic_fp16
    with pytest.raises(RuntimeError, match=r"plain_linear_dynamic_fp16: w should be a float16 tensor, got dtype Float"):
        op(x, w.float(), None, buf)
    with pytest.raises(RuntimeError, match=r"plain_linear_dynamic_fp16: x should be a float32 tensor, got dtype Half"):
        op(x.half(), w, None, buf)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_linear_dynamic_fp16: w should be 2-D \[out_features, in_features\], "
        r"got shape \[12\]",
    ):
        op(x, w.reshape(-1), None, buf)
    with pytest.raises(VALUE_ERROR, match=r"plain_linear_dynamic_fp16: bias should have shape \[3\], got \[4\]"):
        op(x, w, torch.zeros(4), buf)
    with pytest.raises(
        RuntimeError,
        match=r"plain_linear_relu_dynamic_fp16: bias should be a float32 tensor, got "
        r"dtype Double",
    ):
        q.plain_linear_relu_dynamic_fp16(x, w, torch.zeros(3, dtype=torch.double), buf)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_linear_dynamic_fp16: X should have last dimension 4 \(W's "
        r"in_features\), got shape \[2, 5\]",
    ):
        op(torch.randn(2, 5), w, None, buf)
    with pytest.raises(
        VALUE_ERROR,
        match=r"plain_linear_dynamic_fp16: packed should be the contiguous float16 "
        r"\[1, 4, 16\] panels of plain_linear_prepack_fp16\(w\) or empty, got Half "
        r"of shape \[1, 5, 16\]",
    ):
        op(x, w, None, q.plain_linear_prepack_fp16(_fp16_weight((3, 5))))


@pytest.mark.parametrize("layout", ["contiguous", "strided", "empty", "batch1"])
def test_plain_linear_dynamic_fp16_opcheck(layout):
    w, b = _fp16_weight((12, 14)), torch.randn(12)
    x = torch.randn(3, 28)[:, ::2] if layout == "strided" else torch.randn(_x((3, 14), layout).shape)
    buf = q.plain_linear_prepack_fp16(w)
    for op in (q.plain_linear_dynamic_fp16.default, q.plain_linear_relu_dynamic_fp16.default):
        torch.library.opcheck(op, (x, w, b, buf))
        torch.library.opcheck(op, (x, w, None, torch.empty(0, dtype=torch.float16)))


@pytest.mark.quantized_tier
@pytest.mark.parametrize("gates", [4, 3])
@pytest.mark.parametrize("bias", [False, True])
def test_plain_rnn_layer_fp16_matches_quantized(gates, bias, isa):
    """plain_rnn_layer_dynamic_fp16 equals _rnn_layer_dynamic on fp16 packed params (test_rnn.py /
    test_fp16_dynamic.py check that one against the float references)."""
    h = 6
    wi, wh = _fp16_weight((gates * h, 5)), _fp16_weight((gates * h, h))
    bi, bh = (torch.randn(gates * h), torch.randn(gates * h)) if bias else (None, None)
    qi, qh = q.linear_prepack_fp16(wi.float(), bi), q.linear_prepack_fp16(wh.float(), bh)
    x, h0, c0 = torch.randn(4, 3, 5), torch.randn(3, h), torch.randn(3, h)
    pi, ph, empty = (
        q.plain_linear_prepack_fp16(wi),
        q.plain_linear_prepack_fp16(wh),
        torch.empty(0, dtype=torch.float16),
    )
    for reverse in (False, True):
        want = q._rnn_layer_dynamic(x, h0, c0, qi, qh, gates, reverse)
        for bufs in ((pi, ph), (empty, empty)):
            args = (x, h0, c0, wi, bi, bufs[0], wh, bh, bufs[1], gates, reverse)
            got = q.plain_rnn_layer_dynamic_fp16(*args)
            assert all(torch.equal(a, b) for a, b in zip(got, want))
            if isa == "scalar":
                torch.library.opcheck(q.plain_rnn_layer_dynamic_fp16.default, args)
    with pytest.raises(
        RuntimeError,
        match=r"plain_rnn_layer_dynamic_fp16: w_hh should be a float16 tensor, got "
        r"dtype Float",
    ):
        q.plain_rnn_layer_dynamic_fp16(x, h0, c0, wi, bi, pi, wh.float(), bh, ph, gates, False)
    with pytest.raises(VALUE_ERROR, match=r"plain_rnn_layer_dynamic_fp16: b_ih should have shape \[" + str(gates * h)):
        q.plain_rnn_layer_dynamic_fp16(x, h0, c0, wi, torch.zeros(2), pi, wh, bh, ph, gates, False)
    with pytest.raises(VALUE_ERROR, match=r"plain_rnn_layer_dynamic_fp16: packed_hh should be the contiguous float16"):
        q.plain_rnn_layer_dynamic_fp16(x, h0, c0, wi, bi, pi, wh, bh, pi, gates, False)
    with pytest.raises(VALUE_ERROR, match=r"plain_rnn_layer_dynamic_fp16: w_hh should be \["):
        q.plain_rnn_layer_dynamic_fp16(x, h0, c0, wi, bi, pi, wi, bi, pi, gates, False)


def test_plain_embedding_opcheck():
    rows = q.embedding_bag_byte_prepack(torch.randn(11, 5))
    buf = q.plain_embedding_prepack(rows)
    torch.library.opcheck(q.plain_embedding_prepack.default, (rows, 8))
    torch.library.opcheck(q.plain_embedding_unpack.default, (buf,))
    idx, off = torch.tensor([1, 0, 10, 3, 3]), torch.tensor([0, 2, 5])
    torch.library.opcheck(q.plain_embedding_bag.default, (buf, 11, 5, idx, off, 1, False, None, None, True))
    torch.library.opcheck(q.plain_embedding_bag.default, (buf, 11, 5, idx.reshape(5, 1)))
    torch.library.opcheck(q.plain_embedding_bag.default, (buf, 11, 5, idx, off, 0, False, torch.rand(5)))
