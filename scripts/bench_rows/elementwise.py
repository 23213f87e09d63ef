"""add / mul / cat / comparator rows (elementwise)."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "elementwise"
ORDER = 10
NOTE = (
    "torch: torch.ops.quantized.* (add/mul/cat) or comparing dequantized tensors (torch has no "
    "quantized comparator kernel); 'cat shared' compares with torch.cat on the integer tensors. "
    "fp32 baseline: the same op on float tensors. Rate: GB/s of input + output bytes. Floors "
    "(scripts/bench_rows/_floor.cpp): add / mul: two bytes less their zero points to float, the rule's float "
    "steps (add 4, mul 3), back to a byte (`affine2`); cat with requantization: a 16-bit fixed-point multiply-shift-add per byte "
    "(`fixed16`) for every input, also the 2 of 4 whose decimal scales put rounding ties no 16-bit formula "
    "reproduces (AVX2 adds a correction map there: work the floor leaves out); cat shared: a copy of the bytes."
)


def _q(shape, scale, zp, cl=False):
    x = torch.randn(shape)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    return torch.quantize_per_tensor(x, scale, zp, torch.quint8)


def cases():
    q = torch.ops.qplugin
    out = []
    for shape, label in [((1, 64, 56, 56), "[1,64,56,56]"), ((1 << 24,), "16M")]:
        a, b = _q(shape, 0.05, 128), _q(shape, 0.03, 120)
        fa, fb = a.dequantize(), b.dequantize()
        n = a.numel()
        for name, ours, theirs, fp in [
            ("add", q.add, torch.ops.quantized.add, torch.add),
            ("add_relu", q.add_relu, torch.ops.quantized.add_relu, torch.add),
            ("mul", q.mul, torch.ops.quantized.mul, torch.mul),
        ]:
            out.append(
                Case(
                    f"{name} quint8",
                    label,
                    lambda ours=ours, a=a, b=b: ours(a, b, 0.07, 125),
                    lambda theirs=theirs, a=a, b=b: theirs(a, b, 0.07, 125),
                    lambda fp=fp, fa=fa, fb=fb: fp(fa, fb),
                    work=3 * n,
                    floor=floor_of("affine2", n, name == "mul"),
                )
            )
    for cl in (False, True):
        fmt = "CL" if cl else "NCHW"
        xs = [_q((1, 64, 56, 56), 0.05 + 0.01 * i, 120 + i, cl) for i in range(4)]
        fxs = [x.dequantize() for x in xs]
        n = 4 * xs[0].numel()
        out.append(
            Case(
                f"cat requant 4x {fmt}",
                "4x[1,64,56,56] dim1",
                lambda xs=xs: q.cat(xs, 1, 0.06, 125),
                lambda xs=xs: torch.ops.quantized.cat(xs, 1, 0.06, 125),
                lambda fxs=fxs: torch.cat(fxs, 1),
                work=2 * n,
                floor=floor_of("fixed16", n),
            )
        )
        # Scales as an observer picks them from data (min/max over 255 steps): arbitrary floats, not
        # the decimal ratios above (5/6, 7/6 put exact .5 ties on the grid).
        obs = []
        for i in range(4):
            x = torch.randn(1, 64, 56, 56) * (1 + 0.13 * i) + 0.1 * i
            if cl:
                x = x.contiguous(memory_format=torch.channels_last)
            s = float(x.max() - x.min()) / 255
            obs.append(torch.quantize_per_tensor(x, s, int(round(-float(x.min()) / s)), torch.quint8))
        so = float(max(o.dequantize().max() for o in obs) - min(o.dequantize().min() for o in obs)) / 255
        out.append(
            Case(
                f"cat requant 4x {fmt} (observer scales)",
                "4x[1,64,56,56] dim1",
                lambda obs=obs, so=so: q.cat(obs, 1, so, 110),
                lambda obs=obs, so=so: torch.ops.quantized.cat(obs, 1, so, 110),
                lambda fxs=fxs: torch.cat(fxs, 1),
                work=2 * n,
                floor=floor_of("fixed16", n),
            )
        )
        ys = [_q((1, 64, 56, 56), 0.05, 120, cl) for _ in range(4)]
        iys = [y.int_repr() for y in ys]
        out.append(
            Case(
                f"cat shared 4x {fmt}",
                "4x[1,64,56,56] dim1",
                lambda ys=ys: q.cat(ys, 1, None, None),
                lambda iys=iys: torch.cat(iys, 1),
                lambda fxs=fxs: torch.cat(fxs, 1),
                work=2 * n,
                floor=floor_of("copy", n),
            )
        )
    n = 1 << 20
    a, b = _q((n,), 0.05, 128), _q((n,), 0.03, 120)
    c = _q((n,), 0.05, 100)
    fa, fb = a.dequantize(), b.dequantize()
    out.append(
        Case(
            "gt tensor (mixed scales)",
            "1M",
            lambda: q.gt(a, b),
            lambda: torch.gt(a.dequantize(), b.dequantize()),
            lambda: torch.gt(fa, fb),
            work=3 * n,
        )
    )
    out.append(
        Case(
            "eq tensor (same scale)",
            "1M",
            lambda: q.eq(a, c),
            lambda: torch.eq(a.dequantize(), c.dequantize()),
            lambda: torch.eq(fa, fb),
            work=3 * n,
        )
    )
    out.append(
        Case(
            "ge scalar",
            "1M",
            lambda: q.ge(a, 0.3),
            lambda: torch.ge(a.dequantize(), 0.3),
            lambda: torch.ge(fa, 0.3),
            work=2 * n,
        )
    )
    out.append(
        Case(
            "ne scalar",
            "1M",
            lambda: q.ne(a, 0.3),
            lambda: torch.ne(a.dequantize(), 0.3),
            lambda: torch.ne(fa, 0.3),
            work=2 * n,
        )
    )
    return out
