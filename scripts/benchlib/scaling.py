"""Thread scaling of a model, split into its fixed and its size-proportional parts.

    python scripts/bench.py scaling                                  # MobileNetV2 and ResNet-18, batch 1
    python scripts/bench.py scaling --models tv_mobilenet_v2 --batches 1 8 --rounds 9

A model's time at batch b is modelled as T(s) = F + c * s^2 for an s x s input: F is what every
call costs whatever the image (one dispatch, allocation and thread fork / join per op, Python and
TorchScript overhead), c * s^2 the work that grows with the image, which threads can split. Each
model (ours and torch's int8, both scripted, calibrated alike) is timed at two sizes (--size and
--size2) and 1 and 2 threads, interleaved round by round (wall time, median of rounds), and the two
sizes give F and c for each thread count. Printed per model and batch:

* T1 / T2: the measured 2-thread speedup at --size;
* F1, F2 and the work W1 = c1 * s^2, W2 = c2 * s^2, and W1 / W2, the work's own speedup;
* the ceiling T1 / (F2 + W1 / 2): the speedup if the work split perfectly while the fixed part
  stays what it measured at 2 threads. Where the measured speedup is near that ceiling, the fixed
  per-op part is what stops the model from scaling, not the kernels.

The ratio to torch's int8 model and to fp32 (eager, the same rounds) is printed for each config.

With --threads naming other counts than 1 and 2 (a many-core machine), each model is timed at
--size alone, at each thread count (fp32, torch's int8 and ours interleaved round by round), and
the table gives each one's time, its speedup over its own 1-thread time, and ours / torch:

    python scripts/bench.py scaling --models resnet18 tv_resnet50 mobilenet_v2 --batches 1 8 \
        --threads 1 2 4 8 16
"""

import argparse
import os
import statistics
import time

from benchlib import checkout_paths

checkout_paths("examples", "test/compat")

import torch  # noqa: E402

from benchlib.models import STATIC_MODELS, settle_batchnorm  # noqa: E402
from benchlib.ops import cpu_description  # noqa: E402
from toolkits import QPlugin, TorchAO, quiet_deprecations  # noqa: E402


def build(name, size, calib_batches):
    """{label: scripted or eager callable} for fp32, torch's int8 and ours."""
    torch.manual_seed(0)
    calib = [torch.randn(4, 3, size, size) for _ in range(calib_batches)]
    fp32 = settle_batchnorm(STATIC_MODELS[name](), calib)
    out = {"fp32": fp32}
    for key, tk in (("torch", TorchAO()), ("ours", QPlugin())):
        prepared = tk.prepare_static(fp32)
        with torch.no_grad():
            for xb in calib:
                prepared(xb)
        out[key] = torch.jit.script(tk.convert(prepared))
    return out


def per_call(fn, x, min_time):
    fn(x)
    n, t0 = 0, time.perf_counter()
    while True:
        fn(x)
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_time:
            return dt / n


def timed_rounds(fns, x, threads, rounds, min_time):
    """{who: median seconds per call} at ``threads``, the variants interleaved round by round."""
    torch.set_num_threads(threads)
    times = {}
    for _ in range(rounds):
        for who, fn in fns.items():
            times.setdefault(who, []).append(per_call(fn, x, min_time))
    return {who: statistics.median(v) for who, v in times.items()}


def thread_table(args):
    """Times and speedups at each of --threads, one size: the many-core form of this benchmark."""
    print(
        "| model | batch | threads | fp32 | torch int8 | ours | torch T1 / Tn | ours T1 / Tn "
        "| ours / torch | ours / fp32 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ms = lambda v: f"{v * 1e3:.2f} ms"
    for name in args.models:
        fns = build(name, args.size, args.calib_batches)
        for b in args.batches:
            x = torch.randn(b, 3, args.size, args.size)
            base = None
            with torch.no_grad():
                for fn in fns.values():  # TorchScript's profiling runs, before any timing
                    for _ in range(3):
                        fn(x)
                for threads in args.threads:
                    t = timed_rounds(fns, x, threads, args.rounds, args.min_time)
                    base = base or t
                    print(
                        f"| {name} | {b} | {threads} | {ms(t['fp32'])} | {ms(t['torch'])} | {ms(t['ours'])} "
                        f"| {base['torch'] / t['torch']:.2f} | **{base['ours'] / t['ours']:.2f}** "
                        f"| **{t['ours'] / t['torch']:.2f}** | {t['ours'] / t['fp32']:.2f} |",
                        flush=True,
                    )
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench.py scaling", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", nargs="*", default=["mobilenet_v2", "resnet18"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1])
    ap.add_argument("--size", type=int, default=224, help="the image size the speedups are quoted at")
    ap.add_argument("--size2", type=int, default=112, help="the second size, for the fixed / work split")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timing")
    ap.add_argument("--calib-batches", type=int, default=2)
    ap.add_argument(
        "--threads", nargs="*", type=int, default=[1, 2], help="thread counts; other than 1 2: the thread table"
    )
    args = ap.parse_args(argv)
    quiet_deprecations()
    import torch_qplugin

    cpu = cpu_description()
    print(
        f"{cpu}, {os.cpu_count()} cores; torch {torch.__version__}; kernels {torch_qplugin.active_isa()}; "
        f"wall time, median of {args.rounds} interleaved rounds; "
        + (f"sizes {args.size} and {args.size2}" if args.threads == [1, 2] else f"size {args.size}")
    )
    if args.threads != [1, 2]:
        if args.threads[0] != 1:
            ap.error("--threads: the first count must be 1, the base of the speedups")
        return thread_table(args)
    print(
        "| model | batch | who | T1 | T2 | T1 / T2 | F1 | F2 | W1 / W2 | ceiling T1 / (F2 + W1/2) "
        "| ours / torch (1T / 2T) | ours / fp32 (1T / 2T) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    s1, s2 = args.size, args.size2
    for name in args.models:
        fns = build(name, s1, args.calib_batches)
        for b in args.batches:
            xs = {s: torch.randn(b, 3, s, s) for s in (s1, s2)}
            times = {}
            with torch.no_grad():
                for threads in (1, 2):  # one thread count at a time: its rounds interleave the rest
                    torch.set_num_threads(threads)
                    for _ in range(args.rounds):
                        for s in (s1, s2):
                            for who, fn in fns.items():
                                times.setdefault((who, threads, s), []).append(per_call(fn, xs[s], args.min_time))
            t = {k: statistics.median(v) for k, v in times.items()}
            for who in ("ours", "torch"):
                row = {}
                for threads in (1, 2):
                    c = (t[who, threads, s1] - t[who, threads, s2]) / (s1 * s1 - s2 * s2)
                    row[threads] = (t[who, threads, s1], t[who, threads, s1] - c * s1 * s1, c * s1 * s1)
                (t1, f1, w1), (t2, f2, w2) = row[1], row[2]
                vs_torch = f"{t['ours', 1, s1] / t['torch', 1, s1]:.2f} / {t['ours', 2, s1] / t['torch', 2, s1]:.2f}"
                vs_fp32 = f"{t[who, 1, s1] / t['fp32', 1, s1]:.2f} / {t[who, 2, s1] / t['fp32', 2, s1]:.2f}"
                ms = lambda v: f"{v * 1e3:.2f} ms"
                print(
                    f"| {name} | {b} | {who} | {ms(t1)} | {ms(t2)} | **{t1 / t2:.2f}** | {ms(f1)} | {ms(f2)} "
                    f"| {w1 / w2:.2f} | {t1 / (f2 + w1 / 2):.2f} | {vs_torch if who == 'ours' else '-'} | {vs_fp32} |",
                    flush=True,
                )
    return 0
