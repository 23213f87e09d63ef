"""embedding_bag rows on 8-bit and 4-bit row-wise weights."""

import torch
import torch.nn.functional as F

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "embedding"
ORDER = 70
NOTE = (
    "torch: torch's quantized kernel on the same fused rows (quantized::embedding_bag_byte_rowwise_offsets "
    "/ embedding_bag_4bit_rowwise_offsets, fbgemm), sum mode. fp32 baseline: F.embedding_bag (sum) on the float "
    "table. Rate: GB/s of weight rows read + output written. Floor (scripts/bench_rows/_floor.cpp): "
    "each bag row's bytes widened to float, one FMA and one add per column, rows prefetched (`bag`)."
)


def cases():
    q = torch.ops.qplugin
    t = torch.ops.quantized
    out = []
    g = torch.Generator().manual_seed(0)
    for rows, dim, bags, per_bag in [(100000, 64, 512, 40), (20000, 128, 256, 20), (5000, 32, 2048, 10)]:
        w = torch.randn(rows, dim, generator=g)
        idx = torch.randint(0, rows, (bags * per_bag,), generator=g)
        off = torch.arange(0, bags * per_bag, per_bag)
        shape = f"{rows}x{dim}, {bags} bags x {per_bag}"
        for bits in (8, 4):
            fused = q.embedding_bag_byte_prepack(w) if bits == 8 else q.embedding_bag_4bit_prepack(w)
            ours = q.embedding_bag_byte_rowwise_offsets if bits == 8 else q.embedding_bag_4bit_rowwise_offsets
            theirs = t.embedding_bag_byte_rowwise_offsets if bits == 8 else t.embedding_bag_4bit_rowwise_offsets
            work = bags * per_bag * fused.shape[1] + bags * dim * 4
            out.append(
                Case(
                    f"embedding_bag {bits}-bit sum",
                    shape,
                    lambda f=fused, i=idx, o=off, fn=ours: fn(f, i, o),
                    lambda f=fused, i=idx, o=off, fn=theirs: fn(f, i, o),
                    lambda w=w, i=idx, o=off: F.embedding_bag(i, w, o, mode="sum"),
                    work=work,
                    floor=floor_of("bag", rows, dim, bits, bags, per_bag),
                )
            )
    return out
