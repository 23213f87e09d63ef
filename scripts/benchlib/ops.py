"""Op benchmarks: qplugin vs torch's own kernel vs an fp32 op of the same size.

    python scripts/bench.py ops                 # every family, 1 and 2 threads
    python scripts/bench.py ops --only quantize # some families (scripts/bench_rows/<family>.py)
    python scripts/bench.py ops --quick         # fewer repeats (smoke run)
    python scripts/bench.py ops --clock cpu     # CPU time instead of wall time (a machine shared with
                                                # other busy processes)
    python scripts/bench.py ops --threads 1 --cpu 0   # pinned to one CPU (compare processes on one core)
    python scripts/bench.py ops --isa avx2      # AVX2 against AVX2 on any CPU: our path capped by
                                                # QPLUGIN_ISA, torch's element-wise / cat / pooling /
                                                # quantize kernels by ATEN_CPU_CAPABILITY, fbgemm's
                                                # by FBGEMM_ENABLE_INSTRUCTIONS (its 4-bit
                                                # embedding_bag kernel ignores that cap), oneDNN's by
                                                # ONEDNN_MAX_CPU_ISA
    python scripts/bench.py ops --isa avxvnni --only linear conv   # what an AVX-VNNI CPU without
                                                # AVX-512 (Intel Core 12th gen+) runs: ours on
                                                # avxvnni, torch capped to AVX2 as above (fbgemm has
                                                # no AVX-VNNI path)
With --isa each row also shows torch's worst distance from our output in quantization steps (one
untimed call of each, quantized outputs only): our kernels are exact, torch's AVX2 GEMM saturates
int16 sums on full-range activations.

Rows come from scripts/bench_rows/*.py: each module defines FAMILY (str) and
cases() -> list[bench_rows.Case]. Timing: per case, ours / torch / fp32 calls are
interleaved round by round (the machine's speed drifts) in a new seeded order each round, each
round timing a batch of calls; the median round wins, and the best rounds' ratio prints next to it.
Ratios compare medians (or bests) of the same run. A row with a floor (Case.floor: the least work
an exact kernel of the row must do, at the running path's width, scripts/bench_rows/_floor.cpp)
times it in the same rounds and prints ours / floor.
With --also-avx2 (an uncapped run on an AVX-512 CPU, as bench.py isa-pair's AVX-512 side) each row
also times our AVX2 path (torch_qplugin.kernel_isa("avx2"), on the same input tensors) and its AVX2
floor in the same rounds, so
our two paths' distances to their floors compare within one process (--json: ours_avx2, floor_avx2).
Results print as a table and replace the family's section in docs/benchmarks.md.
"""

import argparse
import functools
import importlib
import math
import os
import pkgutil
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

from benchlib import ROOT, command

_MALLOC_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}


def ensure_env(isa):
    # glibc maps/unmaps every allocation >= 32 MiB (~50 ms per 64 MiB on both
    # sides): keep big blocks in the heap so we time kernels, not the allocator.
    # --isa: both libraries read their ISA cap at load time, so it is set before torch loads.
    want = dict(_MALLOC_ENV)
    if isa:
        # fbgemm (torch's GEMM / conv / embedding_bag kernels) ignores ATen's cap and reads its own;
        # torch has no AVX-VNNI path of its own: an AVX-VNNI CPU gives it AVX2.
        cap = "avx2" if isa == "avxvnni" else isa
        want.update(
            QPLUGIN_ISA=isa,
            ATEN_CPU_CAPABILITY=cap,
            FBGEMM_ENABLE_INSTRUCTIONS=cap.upper(),
            ONEDNN_MAX_CPU_ISA=cap.upper(),
        )
    if any(os.environ.get(k) != v for k, v in want.items()):
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **want))


@functools.lru_cache(maxsize=None)
def _cpuinfo():
    """The first processor's fields of /proc/cpuinfo, or None where there is none."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (x.strip() for x in line.split(":", 1))
                    info.setdefault(k, v)
                if not line.strip():
                    break
    except OSError:
        return None
    return info


def cpu_description():
    """CPU model, family / model numbers and the SIMD tiers that matter here (the hypervisor's
    model name alone, e.g. 'AMD EPYC', does not tell Zen 1 from Zen 4)."""
    info = _cpuinfo()
    if info is None:
        return platform.processor() or platform.machine()
    flags = set(info.get("flags", "").split())
    isa = (
        "avx512 vnni"
        if {"avx512f", "avx512_vnni"} <= flags
        else "avx512"
        if "avx512f" in flags
        else "avx2 only"
        if "avx2" in flags
        else "no avx2"
    )
    return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')}, {isa})"


# (vendor, family, models) -> the CPU kind a docs/benchmarks.md section is kept per
_CPU_KINDS = [
    ("AuthenticAMD", 25, range(0x00, 0x10), "Zen 3"),
    ("AuthenticAMD", 25, range(0x20, 0x60), "Zen 3"),
    ("AuthenticAMD", 25, range(0x10, 0x20), "Zen 4"),
    ("AuthenticAMD", 25, range(0x60, 0x80), "Zen 4"),
    ("AuthenticAMD", 25, range(0xA0, 0xB0), "Zen 4"),
    ("AuthenticAMD", 26, range(0x00, 0x100), "Zen 5"),
    ("GenuineIntel", 6, range(0xCF, 0xD0), "Emerald Rapids"),
    ("GenuineIntel", 6, range(0x8F, 0x90), "Sapphire Rapids"),
]


def cpu_kind():
    """A short name for the CPU's microarchitecture ("Zen 5"), or its vendor / family / model; the
    key under which docs/benchmarks.md keeps one section per family and kind of CPU."""
    info = _cpuinfo()
    if info is None:
        return platform.machine()
    vendor = info.get("vendor_id", "?")
    try:
        family, model = int(info.get("cpu family", "-1")), int(info.get("model", "-1"))
    except ValueError:
        family, model = -1, -1
    for v, f, models, name in _CPU_KINDS:
        if v == vendor and f == family and model in models:
            return name
    return f"{vendor} family {family} model {model}"


_CLOCK = time.perf_counter


def _timeit(fn, number, isa=None, warm=False):
    if isa:  # our kernel path switched for the whole sample, outside the timed calls' own cost
        import torch_qplugin

        with torch_qplugin.kernel_isa(isa):
            return _timeit(fn, number, warm=warm)
    if warm:  # one untimed call first: the sample times calls on the caches they leave themselves
        fn()
    t0 = _CLOCK()
    for _ in range(number):
        fn()
    return (_CLOCK() - t0) / number


def measure(case, rounds, target_s=0.02, avx2_case=None, warm=False):
    fns = [
        ("ours", case.ours, None),
        ("torch", case.torch, None),
        ("fp32", case.fp32, None),
        ("floor", case.floor, None),
    ]
    if avx2_case is not None:
        # ours_avx2 calls the same case (the same input tensors) under kernel_isa("avx2"): inputs of
        # its own sit elsewhere in memory, and placement alone moves a memory-bound call (one 3.2 MB
        # NDHWC input took our AVX2 global pool 72 us, another tensor of the same bytes 44-48 us; Zen 4).
        fns += [("ours_avx2", case.ours, "avx2"), ("floor_avx2", avx2_case.floor, "avx2")]
    fns = [(k, f, i) for k, f, i in fns if f is not None]
    for _, f, i in fns:  # warm-up
        _timeit(f, 2, i)
    number = {}
    for k, f, i in fns:
        t = _timeit(f, 1, i)
        number[k] = max(1, min(1000, int(target_s / max(t, 1e-7))))
    samples = {k: [] for k, _, _ in fns}
    order, rng = list(fns), random.Random(0)
    for r in range(rounds):
        # Interleaved, in a new (seeded) order every round: whichever call runs right after the fp32
        # op (which streams its own large buffers) pays for refilling the caches, and each call
        # follows different ones. (A rotation kept every call's predecessor: the floor always ran
        # right after the fp32 op and torch right after ours, on the input ours had just read.)
        rng.shuffle(order)
        for k, f, i in order:
            samples[k].append(_timeit(f, number[k], i, warm))
    return ({k: statistics.median(v) for k, v in samples.items()}, {k: min(v) for k, v in samples.items()})


def avx2_cases(mod):
    """mod's cases built on our AVX2 path, for --also-avx2's AVX2 floors (their floor kernels compiled for
    AVX2; our AVX2 path itself runs the uncapped cases' callables under kernel_isa("avx2"))."""
    import torch_qplugin
    from bench_rows import _floor

    _floor.floor.cache_clear()
    with torch_qplugin.kernel_isa("avx2"):
        cases = mod.cases()
    _floor.floor.cache_clear()
    return cases


def row_kept(case, rows):
    """Whether ``case`` is among --rows: its 'op shape' contains one of them (all rows without)."""
    return not rows or any(r in f"{case.op} {case.shape}" for r in rows)


def load_families(only):
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_rows

    mods = []
    for info in pkgutil.iter_modules(bench_rows.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"bench_rows.{info.name}")
        if only and mod.FAMILY not in only and info.name not in only:
            continue
        mods.append(mod)
    return sorted(mods, key=lambda m: getattr(m, "ORDER", 100))


def fmt_rate(case, t):
    if t is None or not case.work:
        return ""
    rate = case.work / t / 1e9
    return f"{rate:.1f} {case.unit}"


def torch_error_steps(case):
    """max |torch's output - ours| in output quantization steps (one untimed call each), for rows
    whose two outputs are quantized tensors of the same shape; None otherwise."""
    if case.torch is None:
        return None
    a, b = case.ours(), case.torch()
    if not (getattr(a, "is_quantized", False) and getattr(b, "is_quantized", False)) or a.shape != b.shape:
        return None
    return int((a.int_repr().int() - b.int_repr().int()).abs().max()) if a.numel() else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py ops")
    ap.add_argument("--only", nargs="*", default=None, help="families to run")
    ap.add_argument("--rows", nargs="*", default=None, help="keep rows whose 'op shape' contains one of these")
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument(
        "--sample-ms",
        type=float,
        default=20.0,
        help="time per timed sample (shorter samples + more rounds: a best-of that "
        "filters a loaded machine's preemptions)",
    )
    ap.add_argument(
        "--isa",
        choices=["avx2", "avxvnni"],
        default=None,
        help="our kernels on this path, torch's ATen kernels, fbgemm and oneDNN capped at AVX2 "
        "(own section in the docs)",
    )
    ap.add_argument("--json", default=None, help="also write the rows (times in seconds) to this JSON file")
    ap.add_argument(
        "--also-avx2",
        action="store_true",
        help="also time our AVX2 path and its floor in the same rounds (AVX-512 CPUs, no --isa)",
    )
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="cpu: time.process_time (CPU time of all our threads), for a machine shared with "
        "other busy processes, where wall time counts the time they hold the cores. With "
        "1 thread it is the op's own time; with 2 it is the work of both threads (idle "
        "spinning included), not their wall time",
    )
    ap.add_argument(
        "--warm",
        action="store_true",
        help="one untimed call before each timed sample: every sample times calls on the caches "
        "their own previous call left, not the first call after whichever op the shuffled "
        "round ran before (after the fp32 op a 3.2 MB pool's first call took about 8 times a "
        "warm call, so the neighbour, not the kernel, set a 60-call sample's mean)",
    )
    ap.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="pin the process to this CPU (1-thread runs): on a VM the two vCPUs can differ "
        "by 1.6x in per-call speed at the same moment, so two processes compared with "
        "each other (bench.py isa-pair's AVX2 and AVX-512 runs) should share one",
    )
    args = ap.parse_args(argv)
    if args.cpu is not None:
        if args.cpu not in os.sched_getaffinity(0):
            ap.error(f"--cpu {args.cpu}: not one of this process's CPUs {sorted(os.sched_getaffinity(0))}")
        if any(t > 1 for t in args.threads):
            ap.error("--cpu pins to one CPU: use it with --threads 1")
    ensure_env(args.isa)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    global _CLOCK
    _CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(
        f"bench.py ops: MALLOC_MMAP_MAX_={os.environ['MALLOC_MMAP_MAX_']} "
        f"MALLOC_TRIM_THRESHOLD_={os.environ['MALLOC_TRIM_THRESHOLD_']} set for this process "
        "(large buffers stay mapped; allocator cost out of the timings)"
    )

    import warnings

    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    import torch

    import torch_qplugin

    if args.also_avx2 and (args.isa or torch_qplugin.active_isa() != "avx512"):
        ap.error("--also-avx2 needs our AVX-512 path running (an AVX-512 CPU, no --isa)")
    rounds = 5 if args.quick else args.rounds
    header = (
        f"torch {torch.__version__}, torch_qplugin {torch_qplugin.__version__}, "
        f"kernel path {torch_qplugin.active_isa()}, torch quantized engine "
        f"{torch.backends.quantized.engine}, torch ATen capability "
        f"{torch.backends.cpu.get_cpu_capability()}, CPU {cpu_description()}, {os.cpu_count()} cores"
        + (", timed by CPU time (time.process_time)" if args.clock == "cpu" else "")
        + (f", pinned to CPU {args.cpu}" if args.cpu is not None else "")
        + (", one untimed call before each sample (--warm)" if args.warm else "")
    )
    print(header)
    cmd = command()
    sections = {}
    rows = []
    for mod in load_families(args.only):
        cases = [c for c in mod.cases() if row_kept(c, args.rows)]
        if not cases:
            continue
        cases2 = [c for c in avx2_cases(mod) if row_kept(c, args.rows)] if args.also_avx2 else [None] * len(cases)
        lines = [
            "| op | shape | threads | qplugin | torch | fp32 | qplugin/torch | qplugin/fp32 | best-of qplugin/torch "
            "| qplugin rate | torch rate | floor | qplugin/floor |" + (" torch error (steps) |" if args.isa else ""),
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.isa else ""),
        ]
        errs = [torch_error_steps(case) if args.isa else None for case in cases]
        print(f"\n== {mod.FAMILY} ==")
        print(
            f"{'op':<34} {'shape':<22} {'thr':>3} {'ours(us)':>10} {'torch(us)':>10} {'fp32(us)':>10} "
            f"{'/torch':>7} {'/fp32':>7} {'best/t':>7} {'floor(us)':>10} {'/floor':>7}  rate"
        )
        for threads in args.threads:
            torch.set_num_threads(threads)
            for case, case2, err in zip(cases, cases2, errs):
                t, best = measure(case, rounds, args.sample_ms / 1000.0, case2, args.warm)
                ours, tt, ff, fl = t.get("ours"), t.get("torch"), t.get("fp32"), t.get("floor")
                r_fl = f"{ours / fl:.3f}" if fl else "-"
                r_t = ours / tt if tt else float("nan")
                r_f = ours / ff if ff else float("nan")
                b_t = best["ours"] / best["torch"] if best.get("torch") else float("nan")
                us = lambda v: f"{v * 1e6:.1f}" if v is not None else "-"
                print(
                    f"{case.op:<34} {case.shape:<22} {threads:>3} {us(ours):>10} {us(tt):>10} {us(ff):>10} "
                    f"{r_t:>7.3f} {r_f:>7.3f} {b_t:>7.3f} {us(fl):>10} {r_fl:>7}  {fmt_rate(case, ours)}"
                    + (f"  torch error {err} steps" if err is not None else ""),
                    flush=True,
                )
                rows.append(
                    dict(
                        family=mod.FAMILY,
                        op=case.op,
                        shape=case.shape,
                        threads=threads,
                        ours=ours,
                        torch=tt,
                        fp32=ff,
                        floor=fl,
                        best_ours=best["ours"],
                        best_torch=best.get("torch"),
                        ours_avx2=t.get("ours_avx2"),
                        floor_avx2=t.get("floor_avx2"),
                    )
                )
                if case2 is not None:
                    o2, f2 = t.get("ours_avx2"), t.get("floor_avx2")
                    print(
                        f"{'':<34} {'':<22} {'':>3} {us(o2):>10} (our AVX2 path, same rounds)"
                        + (f"  floor {us(f2)}  /floor {o2 / f2:.3f}" if o2 and f2 else ""),
                        flush=True,
                    )
                lines.append(
                    f"| {case.op} | {case.shape} | {threads} | {us(ours)} us | {us(tt)} us | {us(ff)} us "
                    f"| **{r_t:.3f}** | {r_f:.3f} | {b_t:.3f} | {fmt_rate(case, ours)} | {fmt_rate(case, tt)} "
                    f"| {us(fl) + ' us' if fl else '-'} | {r_fl} |"
                    + (f" {err if err is not None else '-'} |" if args.isa else "")
                )
        print("\n" + "\n".join(lines))  # the full table, as markdown (the doc keeps its summary)
        key = f"{mod.FAMILY}{f' [{args.isa}]' if args.isa else ''} ({cpu_kind()})"
        sections[key] = (getattr(mod, "NOTE", ""), [r for r in rows if r["family"] == mod.FAMILY])
    if args.json:
        import json

        Path(args.json).write_text(json.dumps(dict(header=header, cmd=cmd, rows=rows), indent=1))
    if not args.no_write:
        write_doc(sections, header, cmd)


def summary_lines(rows):
    """The doc's table of one family: per thread count the rows' qplugin/torch ratios (geometric
    mean and range), their qplugin/fp32 geometric mean and the rows slower than torch. The full
    table (every row, times, rates, floors) is what the run prints, and --json keeps."""

    def gm(v):
        return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")

    lines = [
        "| threads | rows | qplugin/torch: geomean (range) | qplugin/fp32: geomean | rows slower than torch (qplugin/torch) |",
        "|---|---|---|---|---|",
    ]
    for threads in sorted({r["threads"] for r in rows}):
        rs = [r for r in rows if r["threads"] == threads and r["ours"]]
        vt = [r["ours"] / r["torch"] for r in rs if r["torch"]]
        vf = [r["ours"] / r["fp32"] for r in rs if r["fp32"]]
        slow = "; ".join(
            f"{r['op']} {r['shape']} {r['ours'] / r['torch']:.2f}" for r in rs if r["torch"] and r["ours"] > r["torch"]
        )
        rng = f" ({min(vt):.3f}-{max(vt):.3f})" if vt else ""
        lines.append(f"| {threads} | {len(rs)} | **{gm(vt):.3f}**{rng} | {gm(vf):.3f} | {slow or 'none'} |")
    return lines


def write_doc(sections, header, cmd):
    path = ROOT / "docs" / "benchmarks.md"
    text = (
        path.read_text()
        if path.exists()
        else (
            "# Benchmarks\n\nRatios are time of qplugin / time of the baseline, measured side by side in one run "
            "(interleaved, median of rounds); lower is better. Each section is rewritten by the command shown in it.\n"
        )
    )
    today = time.strftime("%Y-%m-%d", time.gmtime())
    for fam, (note, rows) in sections.items():
        body = (
            f"<!-- bench:{fam} -->\n## {fam}\n\nCommand: `{cmd}`  \n{header}; run {today}.  \n"
            + (note + "\n\n" if note else "\n")
            + "\n".join(summary_lines(rows))
            + f"\n<!-- /bench:{fam} -->"
        )
        pat = re.compile(rf"<!-- bench:{re.escape(fam)} -->.*?<!-- /bench:{re.escape(fam)} -->", re.S)
        if pat.search(text):
            text = pat.sub(lambda _: body, text)
            continue
        # a new section goes after the last one of the same CPU kind, else at the end
        kind = fam[fam.rindex("(") :]
        ends = [m.end() for m in re.finditer(rf"<!-- /bench:[^>]*{re.escape(kind)} -->", text)]
        text = text[: ends[-1]] + "\n" + body + text[ends[-1] :] if ends else text.rstrip() + "\n\n" + body + "\n"
    path.write_text(text)
    print(f"\nwrote {path}")
