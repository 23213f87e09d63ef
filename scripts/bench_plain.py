"""Plain form vs quantized-dtype form of the same converted model (target: within 5% or faster).

    python scripts/bench_plain.py                                   # all models, batch 1 and 8, 1 thread
    python scripts/bench_plain.py --models mobilenet_v2 --batches 1 --rounds 40
    python scripts/bench_plain.py --models lstm_fp16 transformer_fp16   # the fp16 dynamic scheme

For each model: converted once (static: fused, per-channel qconfig, calibrated on random images;
dynamic: quantize_dynamic), then ``convert(..., plain=True)`` / ``quantize_dynamic(..., plain=True)``
of the same prepared model (bit-identical outputs, checked here). Each round times a chunk of
quantized-eager calls and a chunk of plain-eager calls back to back (the order alternates) in process
CPU time, which a loaded machine disturbs far less than wall time; the ratio of each pair is one
sample. Prints per config the median per-call times and the median pair ratio plain / quantized with
its quartiles. scripts/bench_models.py has the same columns among the other toolkits (one median per
column, wall or --clock cpu).
"""

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "examples"), str(ROOT)]

import torch  # noqa: E402

import models  # noqa: E402
import torch_qplugin.quantization as tq  # noqa: E402

STATIC = {"resnet18": (models.resnet18, 224), "mobilenet_v2": (models.mobilenet_v2, 224)}
DYNAMIC = {"lstm": (models.LSTMClassifier, 32, None), "transformer": (models.TransformerClassifier, 64, None)}
# the fp16 dynamic scheme (float16 weights: DynamicLinearFP16, plain_*_fp16 ops); not in the default run
FP16 = {name + "_fp16": (make, seq, torch.float16) for name, (make, seq, _) in DYNAMIC.items()}


def build(name):
    """(quantized model, plain model, input factory(batch))."""
    torch.manual_seed(0)
    if name in DYNAMIC or name in FP16:
        make, seq, dtype = {**DYNAMIC, **FP16}[name]
        m = make().eval()
        return (
            tq.quantize_dynamic(m, dtype=dtype),
            tq.quantize_dynamic(m, dtype=dtype, plain=True),
            lambda b: torch.randint(0, 1000, (b, seq)),
        )
    make, size = STATIC[name]
    m = make().eval()
    m.fuse_model()
    m.qconfig = tq.default_per_channel_qconfig
    p = tq.prepare(m)
    with torch.no_grad():
        for _ in range(2):
            p(torch.randn(2, 3, size, size))
    return tq.convert(copy.deepcopy(p)), tq.convert(p, plain=True), lambda b: torch.randn(b, 3, size, size)


def chunk(fn, x, n):
    t0 = time.process_time()
    for _ in range(n):
        fn(x)
    return (time.process_time() - t0) / n


@torch.no_grad()
def measure(q, p, x, rounds, chunk_s):
    want = q(x)
    got = p(x)
    same = all(torch.equal(a, b) for a, b in zip(got, want)) if isinstance(want, tuple) else torch.equal(got, want)
    assert same, "plain and quantized outputs differ"
    n = max(1, int(chunk_s / max(chunk(q, x, 1), 1e-6)))
    tq_, tp, ratios = [], [], []
    for r in range(rounds):
        if r % 2:
            b = chunk(p, x, n)
            a = chunk(q, x, n)
        else:
            a = chunk(q, x, n)
            b = chunk(p, x, n)
        tq_.append(a)
        tp.append(b)
        ratios.append(b / a)
    qs = statistics.quantiles(ratios, n=4)
    return statistics.median(tq_), statistics.median(tp), statistics.median(ratios), qs[0], qs[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=list(STATIC) + list(DYNAMIC))
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 8])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--chunk", type=float, default=0.05, help="seconds of CPU time per chunk")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    import torch_qplugin

    cpu = (
        next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
        if os.path.exists("/proc/cpuinfo")
        else "?"
    )
    print(
        f"{cpu}; torch {torch.__version__}; kernels {torch_qplugin.active_isa()}; {args.threads} thread(s); "
        f"process CPU time, {args.rounds} pairs"
    )
    print("| model | batch | quantized eager | plain eager | plain / quantized (median pair) | quartiles |")
    print("|---|---|---|---|---|---|")
    for name in args.models:
        q, p, make_x = build(name)
        for b in args.batches:
            tq_, tp, r, lo, hi = measure(q, p, make_x(b), args.rounds, args.chunk)
            print(
                f"| {name} | {b} | {tq_ * 1e3:.2f} ms | {tp * 1e3:.2f} ms | {r:.3f} | {lo:.3f} - {hi:.3f} |", flush=True
            )


if __name__ == "__main__":
    main()
