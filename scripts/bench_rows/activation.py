"""Activation and normalization rows: relu, hardswish, sigmoid, layer_norm, softmax."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "activation"
ORDER = 40
NOTE = (
    "torch baseline: torch.relu / torch.ops.quantized.* on the same quantized tensor. "
    "fp32 baseline: the same op on a float32 tensor of the same shape. "
    "Rate: GB/s of input + output bytes. Floors (scripts/bench_rows/_floor.cpp): relu: a copy of the "
    "bytes; the lookup activations: a 256-entry byte table (AVX2: 16 VPSHUFB + XOR per 32 bytes, no "
    "index arithmetic); layer / batch norm: byte to float, the rule's float steps (`chain`: layer norm 5, "
    "(q - mean) * a * w + b + zp, after each row's sum and sum of squares for its statistics; batch norm 2, q * a + b; "
    "no clamp, no per-channel parameters), back to a byte."
)


def cases():
    q = torch.ops.qplugin
    tq = torch.ops.quantized
    out = []
    for shape in [(1, 64, 112, 112), (8, 64, 56, 56)]:
        label = "[" + ",".join(map(str, shape)) + "]"
        x = torch.randn(shape)
        qx = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        n = qx.numel()
        out.append(
            Case(
                "relu quint8",
                label,
                lambda qx=qx: q.relu(qx),
                lambda qx=qx: torch.relu(qx),
                lambda x=x: torch.relu(x),
                work=2 * n,
                floor=floor_of("copy", n),
            )
        )
        out.append(
            Case(
                "hardswish quint8",
                label,
                lambda qx=qx: q.hardswish(qx, 0.05, 128),
                lambda qx=qx: tq.hardswish(qx, 0.05, 128),
                lambda x=x: torch.nn.functional.hardswish(x),
                work=2 * n,
                floor=floor_of("lut", n),
            )
        )
        if shape[0] == 1:
            qc = qx.contiguous(memory_format=torch.channels_last)
            out.append(
                Case(
                    "relu quint8 channels_last",
                    label,
                    lambda qc=qc: q.relu(qc),
                    lambda qc=qc: torch.relu(qc),
                    lambda x=x: torch.relu(x),
                    work=2 * n,
                    floor=floor_of("copy", n),
                )
            )
            out.append(
                Case(
                    "sigmoid quint8",
                    label,
                    lambda qx=qx: q.sigmoid(qx, 1 / 256, 0),
                    lambda qx=qx: tq.sigmoid(qx, 1 / 256, 0),
                    lambda x=x: torch.sigmoid(x),
                    work=2 * n,
                    floor=floor_of("lut", n),
                )
            )
            qs = torch.quantize_per_tensor(x, 0.05, 0, torch.qint8)
            out.append(
                Case(
                    "hardswish qint8",
                    label,
                    lambda qs=qs: q.hardswish(qs, 0.05, 0),
                    lambda qs=qs: tq.hardswish(qs, 0.05, 0),
                    lambda x=x: torch.nn.functional.hardswish(x),
                    work=2 * n,
                    floor=floor_of("lut", n),
                )
            )
    xl = torch.randn(64, 128, 768)
    ql = torch.quantize_per_tensor(xl, 0.05, 128, torch.quint8)
    w = torch.rand(768) + 0.5
    b = torch.randn(768)
    out.append(
        Case(
            "layer_norm quint8 [768]",
            "[64,128,768]",
            lambda: q.layer_norm(ql, [768], w, b, 1e-5, 0.05, 128),
            lambda: tq.layer_norm(ql, [768], w, b, 1e-5, 0.05, 128),
            lambda: torch.nn.functional.layer_norm(xl, [768], w, b, 1e-5),
            work=2 * xl.numel(),
            floor=floor_of("stats_then_chain", 64 * 128, 768, 5),
        )
    )
    xs = torch.randn(64, 1000) * 3
    qsm = torch.quantize_per_tensor(xs, 0.05, 128, torch.quint8)
    out.append(
        Case(
            "softmax quint8 dim=-1",
            "[64,1000]",
            lambda: q.softmax(qsm, -1, 1 / 256, 0),
            lambda: tq.softmax(qsm, -1, 1 / 256, 0),
            lambda: torch.softmax(xs, -1),
            work=2 * xs.numel(),
        )
    )
    xb = torch.randn(8, 64, 56, 56)
    qb = torch.quantize_per_tensor(xb, 0.05, 128, torch.quint8)
    qbc = qb.contiguous(memory_format=torch.channels_last)
    wb, bb, mb, vb = torch.rand(64) + 0.5, torch.randn(64), torch.randn(64), torch.rand(64) + 0.5
    out.append(
        Case(
            "softmax quint8 dim=1 channels_last",
            "[8,64,56,56]",
            lambda: q.softmax(qbc, 1, 1 / 256, 0),
            lambda: tq.softmax(qbc, 1, 1 / 256, 0),
            lambda: torch.softmax(xb, 1),
            work=2 * xb.numel(),
        )
    )
    for name, t in [("batch_norm2d quint8", qb), ("batch_norm2d quint8 channels_last", qbc)]:
        out.append(
            Case(
                name,
                "[8,64,56,56]",
                lambda t=t: q.batch_norm2d(t, wb, bb, mb, vb, 1e-5, 0.05, 128),
                lambda t=t: tq.batch_norm2d(t, wb, bb, mb, vb, 1e-5, 0.05, 128),
                lambda: torch.nn.functional.batch_norm(xb, mb, vb, wb, bb, False, 0.0, 1e-5),
                work=2 * xb.numel(),
                floor=floor_of("chain", xb.numel(), 2),
            )
        )
    return out
