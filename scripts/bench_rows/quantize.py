"""quantize / dequantize / int_repr rows (issue: foundation)."""
import torch

from bench_rows import Case

FAMILY = "quantize"
ORDER = 0
NOTE = ("fp32 baseline: `x.mul(s)` (an elementwise fp32 op of the same size). "
        "Rate: GB/s of input + output bytes. "
        "'floor' rows put a plain conversion of the same bytes in the qplugin column, against torch's "
        "op: `u8.to(float32)` (torch's vectorized copy kernel: the same reads and writes as dequantize, "
        "no arithmetic), `torch.empty(n).fill_(1)` (dequantize's writes alone) and `x.sum()` (quantize's "
        "reads alone). Their ratio is about the "
        "least any kernel for that op can reach on this machine.")


def cases():
    q = torch.ops.qplugin
    out = []
    for n, label in [(1 << 20, "1M"), (1 << 24, "16M")]:
        x = torch.randn(n) * 3
        for dt in (torch.quint8, torch.qint8):
            zp = 128 if dt == torch.quint8 else 0
            qt = torch.quantize_per_tensor(x, 0.05, zp, dt)
            out.append(Case(f"quantize_per_tensor {str(dt)[6:]}", label,
                            lambda x=x, dt=dt, zp=zp: q.quantize_per_tensor(x, 0.05, zp, dt),
                            lambda x=x, dt=dt, zp=zp: torch.quantize_per_tensor(x, 0.05, zp, dt),
                            lambda x=x: x.mul(0.5), work=5 * n))
            out.append(Case(f"dequantize {str(dt)[6:]}", label, lambda qt=qt: q.dequantize(qt),
                            lambda qt=qt: qt.dequantize(), lambda x=x: x.mul(0.5), work=5 * n))
            out.append(Case(f"int_repr {str(dt)[6:]}", label, lambda qt=qt: q.int_repr(qt),
                            lambda qt=qt: qt.int_repr(), lambda x=x: x.mul(0.5), work=2 * n))
    for n, label in [(1 << 20, "1M"), (1 << 24, "16M")]:
        x = torch.randn(n) * 3
        qt = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        u8 = qt.int_repr()
        out.append(Case("floor: u8.to(float32) vs dequantize", label, lambda u8=u8: u8.to(torch.float32),
                        lambda qt=qt: qt.dequantize(), None, work=5 * n))
        out.append(Case("floor: empty(n).fill_ vs dequantize", label,
                        lambda n=n: torch.empty(n).fill_(1.0), lambda qt=qt: qt.dequantize(), None, work=4 * n))
        out.append(Case("floor: x.sum() vs quantize", label, lambda x=x: x.sum(),
                        lambda x=x: torch.quantize_per_tensor(x, 0.05, 128, torch.quint8), None, work=4 * n))
    w = torch.randn(256, 1024)
    sc = torch.rand(256, dtype=torch.double) * 0.02 + 0.001
    zp = torch.zeros(256, dtype=torch.long)
    qw = torch.quantize_per_channel(w, sc, zp, 0, torch.qint8)
    out.append(Case("quantize_per_channel qint8 axis0", "[256,1024]",
                    lambda: q.quantize_per_channel(w, sc, zp, 0, torch.qint8),
                    lambda: torch.quantize_per_channel(w, sc, zp, 0, torch.qint8),
                    lambda: w.mul(0.5), work=5 * w.numel()))
    out.append(Case("dequantize per-channel qint8", "[256,1024]", lambda: q.dequantize(qw),
                    lambda: qw.dequantize(), lambda: w.mul(0.5), work=5 * w.numel()))
    wi = qw.int_repr()
    out.append(Case("floor: s8.to(float32) vs per-channel dequantize", "[256,1024]",
                    lambda: wi.to(torch.float32), lambda: qw.dequantize(), None, work=5 * w.numel()))
    xc = torch.randn(8, 64, 56, 56).contiguous(memory_format=torch.channels_last)
    sc64 = torch.rand(64, dtype=torch.double) * 0.02 + 0.001
    zp64 = torch.full((64,), 3, dtype=torch.long)
    out.append(Case("quantize_per_channel quint8 CL axis1", "[8,64,56,56]",
                    lambda: q.quantize_per_channel(xc, sc64, zp64, 1, torch.quint8),
                    lambda: torch.quantize_per_channel(xc, sc64, zp64, 1, torch.quint8),
                    lambda: xc.mul(0.5), work=5 * xc.numel()))
    return out
