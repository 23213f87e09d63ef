"""linear rows: static (quint8 in/out) and dynamic (float in/out) linear.

torch baseline: torch.ops.quantized.linear / linear_dynamic with the x86 engine
(torch's default), weights prepacked by torch.ops.quantized.linear_prepack.
Activations use the full 0..255 range (torch's x86 path saturates there but its
time is what we compare with).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
from bench_rows import Case  # noqa: E402
import peak_int8  # noqa: E402  (scripts/peak_int8.py)
from bench_rows._peak import Ops, measure_peak, with_peak_note  # noqa: E402

FAMILY = "linear"
ORDER = 40
NOTE = (
    "fp32 baseline: `torch.nn.functional.linear` on float tensors of the same shape. "
    "Rate: GOPS = 2*M*K*N / time. torch: `quantized::linear` / `quantized::linear_dynamic`, x86 engine. "
    "Weights per-channel qint8, activations full-range quint8."
)

SHAPES = [(1, 768, 768), (1, 4096, 4096), (8, 768, 3072), (128, 1024, 1024), (512, 4096, 4096)]


def cases(shapes=SHAPES):
    q = torch.ops.qplugin
    tq = torch.ops.quantized
    torch.backends.quantized.engine = "x86"
    global NOTE
    NOTE = with_peak_note(NOTE)
    g = torch.Generator().manual_seed(0)
    out = []
    for M, K, N in shapes:
        label = f"{M}x{K}x{N}"
        w = torch.randn(N, K, generator=g) * 0.05
        b = torch.randn(N, generator=g)
        scales = w.abs().amax(1).double() / 127
        wq = torch.quantize_per_channel(w, scales, torch.zeros(N, dtype=torch.long), 0, torch.qint8)
        ours_p = q.linear_prepack(wq, b)
        torch_p = tq.linear_prepack(wq, b)
        x = torch.rand(M, K, generator=g) * 4 - 2
        xq = torch.quantize_per_tensor(x, 4 / 255, 128, torch.quint8)
        ops = Ops(2.0 * M * K * N)
        out.append(
            Case(
                "linear",
                label,
                lambda xq=xq, p=ours_p: q.linear(xq, p, 0.05, 128),
                lambda xq=xq, p=torch_p: tq.linear(xq, p, 0.05, 128),
                lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b),
                work=ops,
                unit="",
            )
        )
        out.append(
            Case(
                "linear_dynamic",
                label,
                lambda x=x, p=ours_p: q.linear_dynamic(x, p),
                lambda x=x, p=torch_p: tq.linear_dynamic(x, p, False),
                lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b),
                work=ops,
                unit="",
            )
        )
    return out


def _main():
    """Interleaved best-of / median comparison for a few shapes, with two references for the
    batch-1 rows: the call overhead (M = 0, same op) and a plain read of the weight bytes
    (scripts/peak_int8.py; split over the same number of threads). On a shared machine the best of many short rounds is the least
    disturbed sample; the median is what bench.py ops reports.

        python scripts/bench_rows/linear.py 1x768x768 1x4096x4096 --threads 1 2
    """
    import argparse
    import ctypes
    import statistics
    import time

    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*", default=[f"{m}x{k}x{n}" for m, k, n in SHAPES[:3]])
    ap.add_argument("--threads", nargs="*", type=int, default=[1])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=10, help="consecutive calls per timed sample")
    args = ap.parse_args()
    import warnings

    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    import torch_qplugin  # noqa: F401

    peak = measure_peak()["gops"]
    lib = peak_int8.build()
    for spec in args.shapes:
        M, K, N = (int(v) for v in spec.split("x"))
        cs = {c.op: c for c in cases([(M, K, N)])}
        fns = {
            "static ours": cs["linear"].ours,
            "static torch": cs["linear"].torch,
            "dynamic ours": cs["linear_dynamic"].ours,
            "dynamic torch": cs["linear_dynamic"].torch,
        }
        read_ref = M == 1 and peak_int8.cpu_has("avx512f")  # the read loop is AVX-512 code
        if read_ref:
            nbytes = K * N // 256 * 256
            buf = ctypes.create_string_buffer(nbytes + 64)
            base = (ctypes.addressof(buf) + 63) // 64 * 64
            ctypes.memset(base, 1, nbytes)
            fns["read W bytes"] = lambda base=base, nbytes=nbytes: (
                lib.readbw(base, nbytes, 1)
                if torch.get_num_threads() == 1
                else lib.readbw_mt(base, nbytes, 1, torch.get_num_threads())
            )
            q = torch.ops.qplugin
            tq = torch.ops.quantized
            p0 = q.linear_prepack(torch.quantize_per_tensor(torch.zeros(N, K), 0.1, 0, torch.qint8))
            t0p = tq.linear_prepack(torch.quantize_per_tensor(torch.zeros(N, K), 0.1, 0, torch.qint8))
            x0 = torch.quantize_per_tensor(torch.zeros(0, K), 0.1, 128, torch.quint8)
            fns["M=0 call ours"] = lambda: q.linear(x0, p0, 0.05, 128)
            fns["M=0 call torch"] = lambda: tq.linear(x0, t0p, 0.05, 128)
        for threads in args.threads:
            torch.set_num_threads(threads)
            samples = {k: [] for k in fns}
            for f in fns.values():
                f()
            for _ in range(args.rounds):
                for k, f in fns.items():
                    t0 = time.perf_counter()
                    for _ in range(args.calls):
                        f()
                    samples[k].append((time.perf_counter() - t0) / args.calls)
            best = {k: min(v) for k, v in samples.items()}
            med = {k: statistics.median(v) for k, v in samples.items()}
            print(
                f"{spec} threads={threads}: "
                + ", ".join(f"{k} {best[k] * 1e6:.1f}/{med[k] * 1e6:.1f} us" for k in fns)
                + "  (best/median)"
            )
            for kind in ("static", "dynamic"):
                o, t = f"{kind} ours", f"{kind} torch"
                gops = 2.0 * M * K * N / best[o] / 1e9
                print(
                    f"  {kind:7s} ratio best {best[o] / best[t]:.3f} median {med[o] / med[t]:.3f}; ours {gops:.1f} GOPS "
                    f"= {100 * gops / (peak * threads):.1f}% of peak ({threads} x {peak:.0f})"
                )
            if read_ref:
                print(
                    f"  plain read of the {K * N / 1e6:.1f} MB of weights: {nbytes / best['read W bytes'] / 1e9:.1f} GB/s "
                    f"(ours static {K * N / best['static ours'] / 1e9:.1f}, torch {K * N / best['static torch'] / 1e9:.1f})"
                )


if __name__ == "__main__":
    _main()
