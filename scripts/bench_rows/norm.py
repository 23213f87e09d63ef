"""Normalization rows: group_norm, instance_norm, batch_norm3d, batch_norm2d_relu."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "norm"
ORDER = 45
NOTE = (
    "torch baseline: torch.ops.quantized.* (group_norm, instance_norm, batch_norm3d, batch_norm2d_relu) on "
    "the same quantized tensor. fp32 baseline: torch.nn.functional's op on a float32 tensor of the same "
    "shape (batch_norm2d_relu: batch_norm then relu_). Rate: GB/s of input + output bytes. Floor "
    "(scripts/bench_rows/_floor.cpp): byte to float, the rule's float steps (`chain`: 2, q * a + b; no "
    "clamp, no per-channel parameters), back to a byte; group / instance norm first sum each row's bytes "
    "and their squares for the statistics (`stats_then_chain`)."
)


def cases():
    q, tq, F = torch.ops.qplugin, torch.ops.quantized, torch.nn.functional
    out = []
    x = torch.randn(8, 64, 56, 56)
    qx = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
    w, b, m, v = torch.rand(64) + 0.5, torch.randn(64), torch.randn(64), torch.rand(64) + 0.5
    out.append(
        Case(
            "group_norm quint8 G=32",
            "[8,64,56,56]",
            lambda: q.group_norm(qx, 32, w, b, 1e-5, 0.05, 128),
            lambda: tq.group_norm(qx, 32, w, b, 1e-5, 0.05, 128),
            lambda: F.group_norm(x, 32, w, b, 1e-5),
            work=2 * x.numel(),
            floor=floor_of("stats_then_chain", 8 * 32, 2 * 56 * 56, 2),
        )
    )
    out.append(
        Case(
            "instance_norm quint8",
            "[8,64,56,56]",
            lambda: q.instance_norm(qx, w, b, 1e-5, 0.05, 128),
            lambda: tq.instance_norm(qx, w, b, 1e-5, 0.05, 128),
            lambda: F.instance_norm(x, None, None, w, b, True, 0.0, 1e-5),
            work=2 * x.numel(),
            floor=floor_of("stats_then_chain", 8 * 64, 56 * 56, 2),
        )
    )
    out.append(
        Case(
            "batch_norm2d_relu quint8",
            "[8,64,56,56]",
            lambda: q.batch_norm2d_relu(qx, w, b, m, v, 1e-5, 0.05, 128),
            lambda: tq.batch_norm2d_relu(qx, w, b, m, v, 1e-5, 0.05, 128),
            lambda: F.batch_norm(x, m, v, w, b, False, 0.0, 1e-5).relu_(),
            work=2 * x.numel(),
            floor=floor_of("chain", x.numel(), 2),
        )
    )
    x3 = torch.randn(4, 32, 16, 28, 28)
    q3 = torch.quantize_per_tensor(x3, 0.05, 128, torch.quint8)
    q3c = q3.contiguous(memory_format=torch.channels_last_3d)
    w3, b3, m3, v3 = torch.rand(32) + 0.5, torch.randn(32), torch.randn(32), torch.rand(32) + 0.5
    for name, t in [("batch_norm3d quint8", q3), ("batch_norm3d quint8 channels_last_3d", q3c)]:
        out.append(
            Case(
                name,
                "[4,32,16,28,28]",
                lambda t=t: q.batch_norm3d(t, w3, b3, m3, v3, 1e-5, 0.05, 128),
                lambda t=t: tq.batch_norm3d(t, w3, b3, m3, v3, 1e-5, 0.05, 128),
                lambda: F.batch_norm(x3, m3, v3, w3, b3, False, 0.0, 1e-5),
                work=2 * x3.numel(),
                floor=floor_of("chain", x3.numel(), 2),
            )
        )
    return out
