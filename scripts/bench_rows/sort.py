"""sort / topk / reductions rows ("Sorting and reductions")."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "sort"
ORDER = 30
NOTE = (
    "torch baseline: torch's own op on the quantized tensor (torch.sort stable=True / torch.topk / "
    "torch.max / torch.mean on quint8). fp32 baseline: the same torch op on a float32 tensor of the "
    "same size. Rate: GB/s of input bytes + output bytes (values + int64 indices). Floors "
    "(scripts/bench_rows/_floor.cpp): sorts: a plain write of the outputs; max, and topk where every byte "
    "must be read: a plain read (VPMAXUB); "
    "mean over channels: 16-bit column sums (`taps`) and the division as one multiply-add."
)


def _q(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2
    return x, torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)


def cases():
    q = torch.ops.qplugin
    out = []
    n = 1 << 20
    x, qx = _q((n,))
    out.append(
        Case(
            "sort quint8 (stable)",
            "1M",
            lambda: q.sort(qx, -1, False, stable=True),
            lambda: torch.sort(qx, stable=True),
            lambda: torch.sort(x, stable=True),
            work=n * 10,
            floor=floor_of("write", n * 9),
        )
    )
    out.append(
        Case(
            "sort quint8 descending",
            "1M",
            lambda: q.sort(qx, -1, True),
            lambda: torch.sort(qx, descending=True),
            lambda: torch.sort(x, descending=True),
            work=n * 10,
            floor=floor_of("write", n * 9),
        )
    )
    x2, qx2 = _q((256, 1000), 1)
    out.append(
        Case(
            "sort quint8 last dim",
            "[256,1000]",
            lambda: q.sort(qx2, -1),
            lambda: torch.sort(qx2, -1),
            lambda: torch.sort(x2, -1),
            work=x2.numel() * 10,
            floor=floor_of("write", x2.numel() * 9),
        )
    )
    out.append(
        Case(
            "sort quint8 dim 0",
            "[256,1000]",
            lambda: q.sort(qx2, 0),
            lambda: torch.sort(qx2, 0),
            lambda: torch.sort(x2, 0),
            work=x2.numel() * 10,
            floor=floor_of("write", x2.numel() * 9),
        )
    )
    out.append(
        Case(
            "argsort quint8",
            "[256,1000]",
            lambda: q.argsort(qx2, -1),
            lambda: torch.argsort(qx2, -1),
            lambda: torch.argsort(x2, -1),
            work=x2.numel() * 9,
            floor=floor_of("write", x2.numel() * 8),
        )
    )
    # topk's floor: a plain read of the input (`rowmax`), where every byte must be read: k = 1000 here
    # (fewer 255s than k), and the uniform rows below (no 255 at all). Not for k = 10 here: the scan
    # stops at the tenth 255 (~14 KB in).
    for k in (10, 1000):
        out.append(
            Case(
                f"topk k={k} quint8",
                "1M",
                lambda k=k: q.topk(qx, k),
                lambda k=k: torch.topk(qx, k),
                lambda k=k: torch.topk(x, k),
                work=n + 9 * k,
                floor=floor_of("rowmax", 1, n) if k == 1000 else None,
            )
        )
    # uniform bytes: no saturated run of 255s to stop the small-k scan early
    gu = torch.Generator().manual_seed(3)
    xu = torch.randint(0, 255, (n,), generator=gu, dtype=torch.uint8)
    qu = torch._make_per_tensor_quantized_tensor(xu, 0.05, 128)
    fu = qu.dequantize()
    for k in (10, 1000):
        out.append(
            Case(
                f"topk k={k} quint8 uniform",
                "1M",
                lambda k=k: q.topk(qu, k),
                lambda k=k: torch.topk(qu, k),
                lambda k=k: torch.topk(fu, k),
                work=n + 9 * k,
                floor=floor_of("rowmax", 1, n),
            )
        )
    out.append(
        Case(
            "topk k=10 quint8 rows",
            "[256,1000]",
            lambda: q.topk(qx2, 10),
            lambda: torch.topk(qx2, 10),
            lambda: torch.topk(x2, 10),
            work=x2.numel(),
        )
    )
    out.append(
        Case(
            "max quint8",
            "1M",
            lambda: q.max(qx),
            lambda: torch.max(qx),
            lambda: torch.max(x),
            work=n,
            floor=floor_of("rowmax", 1, n),
        )
    )
    out.append(
        Case(
            "max.dim quint8 last dim",
            "[256,1000]",
            lambda: q.max(qx2, 1),
            lambda: torch.max(qx2, 1),
            lambda: torch.max(x2, 1),
            work=x2.numel(),
            floor=floor_of("rowmax", 256, 1000),
        )
    )
    out.append(
        Case(
            "argmax quint8 dim 0",
            "[256,1000]",
            lambda: q.argmax(qx2, 0),
            lambda: torch.argmax(qx2.dequantize(), 0),
            lambda: torch.argmax(x2, 0),
            work=x2.numel(),
        )
    )
    out.append(Case("mean quint8", "1M", lambda: q.mean(qx), lambda: torch.mean(qx), lambda: torch.mean(x), work=n))
    x4, qx4 = _q((8, 64, 56, 56), 2)
    out.append(
        Case(
            "mean quint8 dims [2,3]",
            "[8,64,56,56]",
            lambda: q.mean(qx4, [2, 3]),
            lambda: torch.mean(qx4, [2, 3]),
            lambda: torch.mean(x4, [2, 3]),
            work=x4.numel(),
        )
    )
    out.append(
        Case(
            "mean quint8 dim 1",
            "[8,64,56,56]",
            lambda: q.mean(qx4, [1]),
            lambda: torch.mean(qx4, [1]),
            lambda: torch.mean(x4, [1]),
            work=x4.numel(),
            floor=floor_of("taps", 8 * 56 * 56, 64, 56 * 56),
        )
    )
    return out
