"""A/B comparison of two builds of torch_qplugin on the rows of scripts/bench.py ops.

    python scripts/bench.py ab --a /path/to/base/checkout --b . --only conv linear --pairs 6
    python scripts/bench.py ab --a BASE --b . --only conv --rows "3x3 64" --pairs 8 --threads 1 2
    python scripts/bench.py ab --a BASE --b . --models resnet18 mobilenet_v2 --batch 1

Each checkout must have its library built in place (setup.py build_ext --inplace). The two builds
run in alternating processes (A B A B ...: one process imports one checkout's torch_qplugin), each
timing the same rows (scripts/bench_rows of THIS checkout) with bench_ops.measure, interleaved
with torch's own kernel, by CPU time (time.process_time). Each process prints ours / torch per
row: torch's kernel is the same in both processes, so the ratio cancels the machine's drift
between processes. The table gives, per row, the median over the processes of each build's ratio
and B / A of those medians (> 1: B slower), plus the spread (min..max) of the per-pair B / A.

--raw compares our own time per call (CPU time, torch's kernel not timed) instead of ours / torch:
for a machine where torch's kernel is no steady yardstick (on a CPU with AMX, torch's oneDNN
convolutions swing by 2x between processes while other cores are busy).
"""

import argparse
import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import BENCH


def import_checkout(path):
    """Imports torch_qplugin from the checkout at `path` (and this checkout's benchlib.ops, timing by
    CPU time); returns benchlib.ops."""
    sys.path.insert(0, str(Path(path).resolve()))
    import warnings

    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    import torch_qplugin  # noqa: F401  (from the checkout given)
    from benchlib import ops as bench_ops

    assert Path(torch_qplugin.__file__).resolve().is_relative_to(Path(path).resolve()), torch_qplugin.__file__
    bench_ops._CLOCK = time.process_time
    return bench_ops


def child(args):
    bench_ops = import_checkout(args.child)
    import torch
    from bench_rows import _peak

    _peak.PEAK.update(name="(not measured by bench.py ab)", gops=1.0)  # rows' GOPS are not used here
    out = {}
    score = lambda t: t["ours"] * 1e6 if args.raw else t["ours"] / t["torch"]  # noqa: E731
    for name in args.models or []:
        case = model_case(name, args.batch)
        if args.raw:
            case.torch = None
        for threads in args.threads:
            torch.set_num_threads(threads)
            t, _ = bench_ops.measure(case, args.rounds, args.sample_ms / 1000.0)
            out[f"{case.op} {case.shape} | {threads}T"] = score(t)
    for mod in bench_ops.load_families(args.only) if (args.only or not args.models) else []:
        for case in mod.cases():
            if not bench_ops.row_kept(case, args.rows):
                continue
            key = f"{case.op} {case.shape}"
            case.fp32 = case.floor = None  # (only ours / torch is compared)
            if args.raw:
                case.torch = None
            for threads in args.threads:
                torch.set_num_threads(threads)
                t, _ = bench_ops.measure(case, args.rounds, args.sample_ms / 1000.0)
                out[f"{key} | {threads}T"] = score(t)
    print("RESULT " + json.dumps(out), flush=True)


def model_case(name, batch):
    """A scripts/bench.py models static model (random init, BatchNorm settled and calibrated on
    random images as there), converted by torch's x86 workflow and by ours, both scripted."""
    import torch

    from benchlib import models as bench_models  # (torch_qplugin's workflow through examples/toolkits.py)
    from bench_rows import Case

    torch.manual_seed(0)
    calib = [torch.randn(4, 3, 224, 224) for _ in range(2)]
    fp32 = bench_models.settle_batchnorm(bench_models.STATIC_MODELS[name](), calib)
    scripted = {}
    for tk in (bench_models.TorchAO(), bench_models.QPlugin()):
        prepared = tk.prepare_static(fp32)
        with torch.no_grad():
            for xb in calib:
                prepared(xb)
        scripted[tk.name] = torch.jit.script(tk.convert(prepared))
    x = torch.randn(batch, 3, 224, 224)

    def run(m):
        with torch.no_grad():
            return m(x)

    return Case(
        f"{name} scripted", f"batch {batch}", lambda: run(scripted["qplugin"]), lambda: run(scripted["torch"]), None
    )


def parent(args):
    env = dict(os.environ, **bench_ops_env())
    runs = {"A": [], "B": []}
    base = [
        sys.executable,
        str(BENCH),
        "ab",
        "--rounds",
        str(args.rounds),
        "--sample-ms",
        str(args.sample_ms),
        *(["--raw"] if args.raw else []),
        "--threads",
        *map(str, args.threads),
    ]
    if args.only:
        base += ["--only", *args.only]
    if args.rows:
        base += ["--rows", *args.rows]
    if args.models:
        base += ["--models", *args.models, "--batch", str(args.batch)]
    for i in range(args.pairs):
        for side in "AB":
            root = args.a if side == "A" else args.b
            r = subprocess.run(base + ["--child", root], env=env, capture_output=True, text=True)
            line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
            if r.returncode != 0 or not line:
                sys.exit(f"{side} ({root}) failed:\n{r.stdout}\n{r.stderr}")
            runs[side].append(json.loads(line[0][7:]))
            print(f"pair {i + 1}/{args.pairs} {side} done", file=sys.stderr, flush=True)
    from benchlib import ops as bench_ops

    print(f"CPU {bench_ops.cpu_description()}, torch {importlib.metadata.version('torch')}")
    print(
        f"A = {args.a}, B = {args.b}; {args.pairs} processes each, alternating; "
        + ("our us per call" if args.raw else "ours / torch")
        + f" per process (median of {args.rounds} interleaved rounds, CPU time)"
    )
    what = "ours us" if args.raw else "ours/torch"
    print(f"| row | threads | A {what} (median) | B {what} (median) | B / A | per-pair B / A min..max |")
    print("|---|---|---|---|---|---|")
    for key in runs["A"][0]:
        a = [r[key] for r in runs["A"]]
        b = [r[key] for r in runs["B"]]
        pairs = [y / x for x, y in zip(a, b)]
        row, thr = key.rsplit(" | ", 1)
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {row} | {thr} | {ma:.3f} | {mb:.3f} | **{mb / ma:.3f}** | {min(pairs):.3f}..{max(pairs):.3f} |")


def bench_ops_env():
    from benchlib import ops as bench_ops

    return bench_ops._MALLOC_ENV


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py ab")
    ap.add_argument("--a", help="checkout A (baseline)")
    ap.add_argument("--b", help="checkout B")
    ap.add_argument("--only", nargs="*", default=None, help="families (scripts/bench_rows/<family>.py)")
    ap.add_argument("--rows", nargs="*", default=None, help="keep rows whose 'op shape' contains one of these")
    ap.add_argument(
        "--models",
        nargs="*",
        default=None,
        help="scripts/bench.py models static models (e.g. resnet18 mobilenet_v2), scripted "
        "ours / torch's x86 int8; with --only unset, only these",
    )
    ap.add_argument("--batch", type=int, default=1, help="batch of the --models rows")
    ap.add_argument("--threads", nargs="*", type=int, default=[1])
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--raw", action="store_true", help="our own time per call, not ours / torch")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--sample-ms", type=float, default=20.0)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args)
    else:
        if not (args.a and args.b):
            ap.error("--a and --b are required")
        parent(args)
