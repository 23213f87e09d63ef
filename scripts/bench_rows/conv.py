"""Quantized convolution rows (issue: conv). Full-range quint8 activations (torch's x86
engine runs its saturating path on them; ours is exact). Rate: GOPS = 2 * MACs / time."""

import torch

from bench_rows import Case
from bench_rows._peak import Ops, with_peak_note

FAMILY = "conv"
ORDER = 60
NOTE = (
    "torch baseline: torch.ops.quantized.conv{1,2,3}d (x86 engine) on the same quint8 input "
    "(channels_last); fp32 baseline: torch.nn.functional.conv of the same size. "
    "conv2d_add_relu is compared with torch's conv2d followed by quantized.add_relu. "
    "Rate: GOPS (2 ops per multiply-add). Rows marked x_zp=3 quantize the input with zero point 3 "
    "(the others 0, as ReLU outputs have): the padded taps then read the zero point, where at 0 our "
    "indirect path leaves them out."
)
# ResNet-style 3x3 convs C -> C, stride 1, padding 1: (channels, map side)
TAP_LAYERS = [(64, 56), (128, 28), (256, 14), (512, 7)]


def _conv_case(name, shape, in_shape, oc, k, stride, pad, groups, dims=2, add=False, x_zp=0):
    q, tq = torch.ops.qplugin, torch.ops.quantized
    x = torch.rand(*in_shape) * 6
    qx = torch.quantize_per_tensor(x, 6 / 255, x_zp, torch.quint8)
    if dims == 2:
        qx = qx.contiguous(memory_format=torch.channels_last)
        xf = x.contiguous(memory_format=torch.channels_last)
    elif dims == 3:
        qx = qx.contiguous(memory_format=torch.channels_last_3d)
        xf = x.contiguous(memory_format=torch.channels_last_3d)
    else:
        xf = x
    c = in_shape[1]
    ks = [k] * dims
    w = torch.randn(oc, c // groups, *ks) * 0.1
    qw = torch.quantize_per_channel(
        w, torch.full((oc,), 0.002, dtype=torch.double), torch.zeros(oc, dtype=torch.long), 0, torch.qint8
    )
    b = torch.randn(oc)
    st, pd, dl = [stride] * dims, [pad] * dims, [1] * dims
    ours_p = getattr(q, f"conv{dims}d_prepack")(qw, b, st, pd, dl, groups)
    torch.backends.quantized.engine = "x86"
    theirs_p = getattr(tq, f"conv{dims}d_prepack")(qw, b, st, pd, dl, groups)
    fconv = getattr(torch.nn.functional, f"conv{dims}d")
    y0 = getattr(q, f"conv{dims}d")(qx, ours_p, 0.5, 10)
    macs = y0.numel() * (c // groups) * k**dims
    if add:
        qa = torch.quantize_per_tensor(torch.rand(y0.shape) * 4, 4 / 255, 0, torch.quint8)
        qa = qa.contiguous(memory_format=torch.channels_last)
        ours = lambda: q.conv2d_add_relu(qx, qa, ours_p, 0.5, 10)
        theirs = lambda: tq.add_relu(tq.conv2d(qx, theirs_p, 0.5, 10), qa, 0.5, 10)
        fp = lambda: torch.relu(fconv(xf, w, b, st, pd, dl, groups) + 1.0)
    else:
        ours = lambda: getattr(q, f"conv{dims}d")(qx, ours_p, 0.5, 10)
        theirs = lambda: getattr(tq, f"conv{dims}d")(qx, theirs_p, 0.5, 10)
        fp = lambda: fconv(xf, w, b, st, pd, dl, groups)
    return Case(name, shape, ours, theirs, fp, work=Ops(2 * macs), unit="")


def cases():
    global NOTE
    NOTE = with_peak_note(NOTE)
    taps = [
        _conv_case(
            f"conv2d 3x3 {c}->{c}" + (f" x_zp={zp}" if zp else ""),
            f"[{n},{c},{hw},{hw}]",
            (n, c, hw, hw),
            c,
            3,
            1,
            1,
            1,
            x_zp=zp,
        )
        for c, hw in TAP_LAYERS
        for n in (1, 8)
        for zp in (0, 3)
        if (c, zp) != (64, 0)  # (the two rows above)
    ]
    return [
        _conv_case("conv2d 3x3 64->64", "[1,64,56,56]", (1, 64, 56, 56), 64, 3, 1, 1, 1),
        _conv_case("conv2d 3x3 64->64", "[8,64,56,56]", (8, 64, 56, 56), 64, 3, 1, 1, 1),
        *taps,
        _conv_case("conv2d 1x1 256->64", "[1,256,56,56]", (1, 256, 56, 56), 64, 1, 1, 0, 1),
        _conv_case("conv2d 7x7 s2 3->64", "[1,3,224,224]", (1, 3, 224, 224), 64, 7, 2, 3, 1),
        _conv_case("conv2d dw 3x3 144", "[1,144,56,56]", (1, 144, 56, 56), 144, 3, 1, 1, 144),
        _conv_case("conv2d dw 3x3 s2 96", "[1,96,112,112]", (1, 96, 112, 112), 96, 3, 2, 1, 96),
        _conv_case("conv1d 3-tap 256->256", "[8,256,1000]", (8, 256, 1000), 256, 3, 1, 1, 1, dims=1),
        _conv_case("conv3d 3x3x3 32->32", "[1,32,16,56,56]", (1, 32, 16, 56, 56), 32, 3, 1, 1, 1, dims=3),
        _conv_case("conv2d_add_relu 3x3 64->64", "[1,64,56,56]", (1, 64, 56, 56), 64, 3, 1, 1, 1, add=True),
        # ResNeXt's grouped 3x3 convs: 32 groups of 4 (ResNeXt-50 32x4d's first stage), 8, 16 and 32
        # channels (ResNeXt-101 32x8d's stages)
        *(
            _conv_case(
                f"conv2d 3x3 g32 {c} ({c // 32} a group)", f"[{n},{c},{hw},{hw}]", (n, c, hw, hw), c, 3, 1, 1, 32
            )
            for c, hw in ((128, 56), (256, 56), (512, 28), (1024, 14))
            for n in (1, 8)
        ),
    ]
