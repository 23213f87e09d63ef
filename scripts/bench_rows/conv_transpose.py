"""Quantized transposed convolution rows. Full-range quint8 activations, per-tensor
qint8 weights (torch's kernels refuse per-channel ones for transposed conv). Rate: GOPS =
2 * MACs / time (MACs of the dense transposed conv: input elements x OC / groups x kernel volume)."""

import torch

from bench_rows import Case
from bench_rows._peak import Ops, with_peak_note

FAMILY = "conv_transpose"
ORDER = 61
NOTE = (
    "torch baseline: torch.ops.quantized.conv_transpose{1,2,3}d with the fbgemm engine on the same "
    "quint8 input (torch 2.13's x86 engine gives wrong results for transposed conv, docs/design/conv.md; "
    "fbgemm's is exact here); fp32 baseline: torch.nn.functional.conv_transpose of the same size. "
    "Rate: GOPS (2 ops per multiply-add)."
)


def _case(name, in_shape, ocg, k, stride, pad, out_pad=0, groups=1, dims=2):
    q, tq = torch.ops.qplugin, torch.ops.quantized
    x = torch.rand(*in_shape) * 6
    qx = torch.quantize_per_tensor(x, 6 / 255, 0, torch.quint8)
    fmt = {2: torch.channels_last, 3: torch.channels_last_3d}.get(dims)
    xf = x
    if fmt is not None:
        qx, xf = qx.contiguous(memory_format=fmt), x.contiguous(memory_format=fmt)
    c = in_shape[1]
    ks = [k] * dims
    w = torch.randn(c, ocg, *ks) * 0.1
    qw = torch.quantize_per_tensor(w, 0.002, 0, torch.qint8)
    b = torch.randn(ocg * groups)
    st, pd, op, dl = [stride] * dims, [pad] * dims, [out_pad] * dims, [1] * dims
    ours_p = getattr(q, f"conv_transpose{dims}d_prepack")(qw, b, st, pd, op, dl, groups)
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    theirs_p = getattr(tq, f"conv_transpose{dims}d_prepack")(qw, b, st, pd, op, dl, groups)
    fconv = getattr(torch.nn.functional, f"conv_transpose{dims}d")
    macs = qx.numel() * ocg * k**dims

    def theirs():
        torch.backends.quantized.engine = "fbgemm"
        try:
            return getattr(tq, f"conv_transpose{dims}d")(qx, theirs_p, 0.5, 10)
        finally:
            torch.backends.quantized.engine = old

    torch.backends.quantized.engine = old
    ours = lambda: getattr(q, f"conv_transpose{dims}d")(qx, ours_p, 0.5, 10)
    fp = lambda: fconv(xf, w, b, st, pd, op, groups, dl)
    shape = "[" + ",".join(str(s) for s in in_shape) + "]"
    return Case(name, shape, ours, theirs, fp, work=Ops(2 * macs), unit="")


def cases():
    global NOTE
    NOTE = with_peak_note(NOTE)
    return [
        _case("convT2d k4 s2 p1 64->32 (2x up)", (1, 64, 28, 28), 32, 4, 2, 1),
        _case("convT2d k2 s2 64->32 (2x up)", (1, 64, 28, 28), 32, 2, 2, 0),
        _case("convT2d 3x3 s1 p1 64->64", (1, 64, 28, 28), 64, 3, 1, 1),
        _case("convT2d k3 s2 p1 op1 128->64", (4, 128, 14, 14), 64, 3, 2, 1, out_pad=1),
        _case("convT1d k4 s2 p1 128->64", (4, 128, 256), 64, 4, 2, 1, dims=1),
        _case("convT3d k2 s2 32->16", (1, 32, 8, 16, 16), 16, 2, 2, 0, dims=3),
    ]
