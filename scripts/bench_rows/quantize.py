"""quantize / dequantize / int_repr rows (issue: foundation)."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "quantize"
ORDER = 0
NOTE = (
    "fp32 baseline: `x.mul(s)` (an elementwise fp32 op of the same size). "
    "Rate: GB/s of input + output bytes. Floors (scripts/bench_rows/_floor.cpp): quantize: float -> "
    "byte by the rule's one rounded product (`quant`, zero point and clamps dropped); dequantize: byte -> float with no arithmetic (`widen`; per channel: "
    "the rule's double product, `widen_d`); int_repr: a copy of the bytes."
)


def cases():
    q = torch.ops.qplugin
    out = []
    for n, label in [(1 << 20, "1M"), (1 << 24, "16M")]:
        x = torch.randn(n) * 3
        for dt in (torch.quint8, torch.qint8):
            zp = 128 if dt == torch.quint8 else 0
            qt = torch.quantize_per_tensor(x, 0.05, zp, dt)
            out.append(
                Case(
                    f"quantize_per_tensor {str(dt)[6:]}",
                    label,
                    lambda x=x, dt=dt, zp=zp: q.quantize_per_tensor(x, 0.05, zp, dt),
                    lambda x=x, dt=dt, zp=zp: torch.quantize_per_tensor(x, 0.05, zp, dt),
                    lambda x=x: x.mul(0.5),
                    work=5 * n,
                    floor=floor_of("quant", n, n, True),
                )
            )
            out.append(
                Case(
                    f"dequantize {str(dt)[6:]}",
                    label,
                    lambda qt=qt: q.dequantize(qt),
                    lambda qt=qt: qt.dequantize(),
                    lambda x=x: x.mul(0.5),
                    work=5 * n,
                    floor=floor_of("widen", n),
                )
            )
            out.append(
                Case(
                    f"int_repr {str(dt)[6:]}",
                    label,
                    lambda qt=qt: q.int_repr(qt),
                    lambda qt=qt: qt.int_repr(),
                    lambda x=x: x.mul(0.5),
                    work=2 * n,
                    floor=floor_of("copy", n),
                )
            )
    w = torch.randn(256, 1024)
    sc = torch.rand(256, dtype=torch.double) * 0.02 + 0.001
    zp = torch.zeros(256, dtype=torch.long)
    qw = torch.quantize_per_channel(w, sc, zp, 0, torch.qint8)
    out.append(
        Case(
            "quantize_per_channel qint8 axis0",
            "[256,1024]",
            lambda: q.quantize_per_channel(w, sc, zp, 0, torch.qint8),
            lambda: torch.quantize_per_channel(w, sc, zp, 0, torch.qint8),
            lambda: w.mul(0.5),
            work=5 * w.numel(),
            floor=floor_of("quant", w.numel(), 1024, True),
        )
    )
    out.append(
        Case(
            "dequantize per-channel qint8",
            "[256,1024]",
            lambda: q.dequantize(qw),
            lambda: qw.dequantize(),
            lambda: w.mul(0.5),
            work=5 * w.numel(),
            floor=floor_of("widen_d", w.numel()),
        )
    )
    xc = torch.randn(8, 64, 56, 56).contiguous(memory_format=torch.channels_last)
    sc64 = torch.rand(64, dtype=torch.double) * 0.02 + 0.001
    zp64 = torch.full((64,), 3, dtype=torch.long)
    out.append(
        Case(
            "quantize_per_channel quint8 CL axis1",
            "[8,64,56,56]",
            lambda: q.quantize_per_channel(xc, sc64, zp64, 1, torch.quint8),
            lambda: torch.quantize_per_channel(xc, sc64, zp64, 1, torch.quint8),
            lambda: xc.mul(0.5),
            work=5 * xc.numel(),
            floor=floor_of("quant", xc.numel(), 64, False),
        )
    )
    return out
