"""embedding_bag rows of scripts/bench_rows/embedding.py with the weight table evicted from the
caches before every call (rows from DRAM, as a recommendation model's big tables see them), ours
against torch's fbgemm kernel, interleaved; one call per sample, median of --rounds samples.
`bench.py ops` times warm calls (the table stays in L2 / L3 across its repeated calls); this shows
the prefetching side of the kernel.

    python scripts/bench.py embedding-cold            # our AVX-512 path (or the best this CPU has)
    QPLUGIN_ISA=avx2 python scripts/bench.py embedding-cold
"""

import argparse
import statistics
import time

import torch

import torch_qplugin


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py embedding-cold")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--evict-mb", type=int, default=64, help="bytes written between calls to evict the caches")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    q, t = torch.ops.qplugin, torch.ops.quantized
    big = torch.ones(args.evict_mb << 18)
    print(
        f"torch {torch.__version__}, kernel path {torch_qplugin.active_isa()}, 1 thread, wall time, "
        f"{args.evict_mb} MB written before each call"
    )
    print("| op | shape | ours cold | torch cold | ours/torch |\n|---|---|---|---|---|")
    g = torch.Generator().manual_seed(0)
    for rows, dim, bags, per in [(100000, 64, 512, 40), (20000, 128, 256, 20), (5000, 32, 2048, 10)]:
        w = torch.randn(rows, dim, generator=g)
        idx = torch.randint(0, rows, (bags * per,), generator=g)
        off = torch.arange(0, bags * per, per)
        for bits in (8, 4):
            fused = q.embedding_bag_byte_prepack(w) if bits == 8 else q.embedding_bag_4bit_prepack(w)
            fns = {
                "ours": q.embedding_bag_byte_rowwise_offsets if bits == 8 else q.embedding_bag_4bit_rowwise_offsets,
                "torch": t.embedding_bag_byte_rowwise_offsets if bits == 8 else t.embedding_bag_4bit_rowwise_offsets,
            }
            times = {k: [] for k in fns}
            for r in range(args.rounds):
                for k in list(fns) if r % 2 == 0 else list(fns)[::-1]:
                    big.add_(1)
                    t0 = time.perf_counter()
                    fns[k](fused, idx, off)
                    times[k].append(time.perf_counter() - t0)
            o, th = statistics.median(times["ours"]), statistics.median(times["torch"])
            print(
                f"| embedding_bag {bits}-bit sum | {rows}x{dim}, {bags} bags x {per} | {o * 1e6:.1f} us "
                f"| {th * 1e6:.1f} us | **{o / th:.3f}** |",
                flush=True,
            )
