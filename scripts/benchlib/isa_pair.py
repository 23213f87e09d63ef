"""AVX2 against torch's AVX2 kernels next to AVX-512 against torch's AVX-512 kernels, one CPU.

    python scripts/bench.py isa-pair --label "Zen 5" --clock cpu --threads 1 --only elementwise quantize
    python scripts/bench.py isa-pair --label "Zen 5" --repeat 2 ...    # medians of alternating runs
    python scripts/bench.py isa-pair --label "Zen 5" --from avx2.json avx512.json   # join two saved runs
    python scripts/bench.py isa-pair --label "Zen 4" --save /tmp/pair ...   # keep them (/tmp/pair-avx2.json ...)
    python scripts/bench.py isa-pair --label "Zen 4" --threads 1 --cpu 0 --warm ...   # both runs on one CPU

Runs scripts/bench.py ops twice on an AVX-512 machine, `--isa avx2` (our kernels capped by QPLUGIN_ISA,
torch's by ATEN_CPU_CAPABILITY) and then uncapped with --also-avx2 (our AVX2 path and its floor timed in
the same process and rounds as the AVX-512 ones), family by family, each with --json, and writes one
table per family:
both ratios (ours / torch, median rounds) side by side, and how each side's time changed from AVX2 to
AVX-512. The ISA-pair test: the AVX2 ratio within 10% of the AVX-512 one, or, where it is not, the row's
AVX2 floor (bench_rows/_floor.cpp) already above that target, or our AVX2 path as close to its floor
as the AVX-512 path is to its own (`verdict`); beside it the same test with our two paths from the
AVX-512 run alone (`verdict1`), and per family the geometric means of both (`families`). The section
is labelled with the CPU (`--label`), so runs on other CPUs keep their own sections in docs/benchmarks.md.
Options it does not know (--threads, --clock, --cpu, --warm, ...) go to both `bench.py ops` runs; with
--threads 1, `--cpu N` pins both to one CPU, so the two processes differ only in the kernel path, not in
which vCPU of a shared machine they happened to land on; `--warm` starts each sample with an untimed
call, so a sample does not time the first call after whichever op ran before it (the two runs time
different sets of functions, so their samples start after different neighbours).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BENCH, ROOT, command


def run(isa, passthrough, path):
    cmd = [sys.executable, str(BENCH), "ops", "--no-write", "--json", str(path)]
    cmd += (["--isa", isa] if isa else []) + passthrough
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def combine(rows):
    """One row per (family, op, shape, threads) from --repeat runs: the median of each ratio to
    torch's time (ours / torch, floor / torch; each measured interleaved in one process) times the
    median torch time, so ratios are medians of in-process ratios, not of drifting absolute times."""
    import statistics

    groups = {}
    for r in rows:
        groups.setdefault((r["family"], r["op"], r["shape"], r["threads"]), []).append(r)
    out = []
    for g in groups.values():
        t = statistics.median(r["torch"] for r in g) if all(r["torch"] for r in g) else None
        row = dict(g[0], n=len(g))
        if t:
            row["torch"] = t
            row["ours"] = statistics.median(r["ours"] / r["torch"] for r in g) * t
            for k in ("floor", "ours_avx2", "floor_avx2"):
                if all(r.get(k) for r in g):
                    row[k] = statistics.median(r[k] / r["torch"] for r in g) * t
        out.append(row)
    return out


def verdict(r2, r5):
    """The ISA-pair test for one row, first that holds:
    'yes'   the AVX2 ratio is within 10% of the AVX-512 one;
    'floor' the row's AVX2 floor kernel (the least work an exact kernel must do at AVX2 width, timed
            in the same rounds; not faster than ours by more than 5%, or it is no lower bound) over
            torch's AVX2 time is itself above 1.1x the AVX-512 ratio: no AVX2 kernel can meet it;
    'width' our AVX2 path is within 10% as close to its floor as our AVX-512 path is to its own
            (ours / floor on AVX2 <= 1.1x ours / floor on AVX-512): the ratios differ by what the
            minimal kernel itself gains from the width, not by our AVX2 code. Where the AVX-512 run
            also timed our AVX2 path and its floor (bench.py ops --also-avx2), all four times come
            from that one process and the same rounds; otherwise the AVX2 side is the AVX2 run's;
    'no'    none of these.
    Returns (verdict, AVX2 ratio, AVX-512 ratio, AVX2 floor ratio)."""
    q2, q5 = r2["ours"] / r2["torch"], r5["ours"] / r5["torch"]
    f2 = r2["floor"] / r2["torch"] if r2.get("floor") else None
    if q2 <= 1.1 * q5:
        return "yes", q2, q5, f2
    # The floor verdict needs the floor to be a lower bound in this measurement (ours / floor >= 0.95).
    if f2 is not None and f2 > 1.1 * q5 and r2["ours"] >= 0.95 * r2["floor"]:
        return "floor", q2, q5, f2
    w2 = avx2_over_floor(r2, r5)
    if w2 is not None and r5.get("floor") and w2 <= 1.1 * r5["ours"] / r5["floor"]:
        return "width", q2, q5, f2
    return "no", q2, q5, f2


def verdict1(r2, r5):
    """The same test with both of our paths timed in one process (the AVX-512 run's --also-avx2, on
    the same input tensors), torch's two paths from the two runs: AVX2 ratio / AVX-512 ratio =
    (ours AVX2 / ours AVX-512, one process) / (torch AVX2 / torch AVX-512). Our two times then share
    the process, its inputs and the functions timed around them (without --warm, ours in the AVX2 run
    takes 1.15-2.99x our AVX2 path's time in the AVX-512 run over the pool3d rows, torch's op 0.90-1.36x;
    Zen 4). 'floor': the AVX2 floor (same process) over our AVX-512 time
    above 1.1x torch's time ratio; 'width' as in `verdict` (a row without a floor: 'yes' or 'no').
    Returns (verdict, that ratio) or (None, None) without our AVX2 time from the AVX-512 run."""
    if not r5.get("ours_avx2"):
        return None, None
    t = r2["torch"] / r5["torch"]
    x = r5["ours_avx2"] / r5["ours"] / t
    if x <= 1.1:
        return "yes", x
    if not in_process(r5):  # a row without a floor: only 'yes' or 'no'
        return "no", x
    if r5["floor_avx2"] / r5["ours"] > 1.1 * t and r5["ours_avx2"] >= 0.95 * r5["floor_avx2"]:
        return "floor", x
    if r5.get("floor") and r5["ours_avx2"] / r5["floor_avx2"] <= 1.1 * r5["ours"] / r5["floor"]:
        return "width", x
    return "no", x


def in_process(r5):
    """Whether the AVX-512 row also holds our AVX2 path and its floor, timed in its rounds."""
    return bool(r5.get("ours_avx2") and r5.get("floor_avx2"))


def avx2_over_floor(r2, r5):
    """Our AVX2 time over the AVX2 floor's: from the AVX-512 process when it timed both, else from
    the AVX2 run (None without a floor)."""
    if in_process(r5):
        return r5["ours_avx2"] / r5["floor_avx2"]
    return r2["ours"] / r2["floor"] if r2.get("floor") else None


def table(a2, a5):
    """Per family, its rows' lines; the verdict counts; per family, (verdict, AVX2 / AVX-512 ratio,
    ours AVX2 / AVX-512 time, one-process verdict, one-process ratio) of each row (`families`); the
    one-process verdict counts."""
    key = lambda r: (r["family"], r["op"], r["shape"], r["threads"])
    by5 = {key(r): r for r in a5["rows"]}
    out, per = {}, {}
    counts = {"yes": 0, "floor": 0, "width": 0, "no": 0}
    counts1 = dict(counts)  # the one-process verdicts (verdict1)
    for r2 in a2["rows"]:
        r5 = by5.get(key(r2))
        if r5 is None or not r2["torch"] or not r5["torch"]:
            continue
        v, q2, q5, f2 = verdict(r2, r5)
        v1, x1 = verdict1(r2, r5)
        counts[v] += 1
        if v1 is not None:
            counts1[v1] += 1
        w2 = avx2_over_floor(r2, r5)
        fl = (
            (f"{f2:.3f} | " if f2 is not None else "- | ")
            + (f"{w2:.2f} | " if w2 is not None else "- | ")
            + (f"{r5['ours'] / r5['floor']:.2f}" if r5.get("floor") else "-")
        )
        # Ours on both paths: one process when the AVX-512 run timed the AVX2 path too.
        o2 = r5["ours_avx2"] if r5.get("ours_avx2") else r2["ours"]
        per.setdefault(r2["family"], []).append((v, q2 / q5, o2 / r5["ours"], v1, x1))
        out.setdefault(r2["family"], []).append(
            f"| {r2['op']} | {r2['shape']} | {r2['threads']} | **{q2:.3f}** | **{q5:.3f}** | {q2 / q5:.2f} | {v} "
            + (f"| {x1:.2f} | {v1} " if v1 is not None else "| - | - ")
            + f"| {fl} "
            f"| {o2 * 1e6:.1f} / {r5['ours'] * 1e6:.1f} us = {o2 / r5['ours']:.2f} "
            f"| {r2['torch'] * 1e6:.1f} / {r5['torch'] * 1e6:.1f} us = {r2['torch'] / r5['torch']:.2f} |"
        )
    return out, counts, per, counts1


def families(per):
    """The ISA-pair test of each family: the geometric mean over a family's rows of the AVX2 ratio
    over the AVX-512 ratio (met within 1.10), from the two runs and with our two paths from one
    process (verdict1), and of our AVX2 time over our AVX-512 time in one process; each with the
    family's verdict: 'yes' (geomean <= 1.10), else 'floor / width' when every row short of 'yes'
    is 'floor' or 'width', else 'no'. One table line per family."""
    import math

    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    kinds = ("yes", "floor", "width", "no")

    def met(ratio, vs):
        return "yes" if ratio <= 1.10 else ("floor / width" if "no" not in vs else "no")

    lines = [
        "| family | rows | geomean AVX2 / AVX-512 ratio | yes / floor / width / no | family met "
        "| one process: geomean ratio | yes / floor / width / no | family met "
        "| geomean ours AVX2 / AVX-512 time |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fam, rows in per.items():
        vs, vs1 = [r[0] for r in rows], [r[3] for r in rows if r[3] is not None]
        ratio, ratio1 = gm([r[1] for r in rows]), gm([r[4] for r in rows if r[4] is not None])
        c = "/".join(f" {vs.count(k)} " for k in kinds).strip()
        c1 = "/".join(f" {vs1.count(k)} " for k in kinds).strip() if vs1 else "-"
        one = (f"{ratio1:.2f} | {c1} | {met(ratio1, vs1)}") if vs1 else "- | - | -"
        lines.append(
            f"| {fam} | {len(rows)} | {ratio:.2f} | {c} | {met(ratio, vs)} | {one} | {gm([r[2] for r in rows]):.2f} |"
        )
    return "\n".join(lines)


def write(label, a2, a5, cmd):
    head = (
        "| op | shape | threads | AVX2 ours/torch | AVX-512 ours/torch | AVX2 / AVX-512 ratio | met "
        "| one process: ratio | met "
        "| AVX2 floor/torch | AVX2 ours/floor | AVX-512 ours/floor "
        "| ours AVX2 / AVX-512 time | torch AVX2 / AVX-512 time |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    fams, counts, per, counts1 = table(a2, a5)
    key = f"isa-pair [{label}]"
    body = (
        f"<!-- bench:{key} -->\n## AVX2 and AVX-512 against torch on one CPU ({label})\n\n"
        f"Command: `{cmd}`  \nAVX2 run: {a2['header']}  \nAVX-512 run: {a5['header']}\n\n"
        "met: **yes** = the AVX2 ratio is within 10% of the AVX-512 ratio; **floor** = it is not, but the "
        "row's floor kernel at AVX2 width (scripts/bench_rows/_floor.cpp, timed in the same rounds) over "
        "torch's AVX2 time is already above 1.1x the AVX-512 ratio (and ours is not 5% faster than the floor, "
        "which would make it no lower bound), so no AVX2 kernel can meet it; "
        "**width** = our AVX2 path is within 10% as close to its floor as the AVX-512 path is to its own "
        "(AVX2 ours/floor <= 1.1x AVX-512 ours/floor): the gap is what the minimal kernel itself gains from "
        "the width; **no** = none of these. "
        + (
            "Both ours/floor columns and the 'ours AVX2 / AVX-512 time' column come from the AVX-512 run, "
            "which also timed our AVX2 path (on the same input tensors) and its AVX2 floor in the same rounds (`bench.py ops --also-avx2`); "
            "the AVX2 ratio to torch and the AVX2 floor/torch come from the AVX2 run (torch's kernel path is "
            "fixed per process). "
            if any(in_process(r) for r in a5["rows"])
            else ""
        )
        + "**one process**: the same test with our two paths' times from the AVX-512 run alone (same "
        "process, same inputs), torch's from the two runs: ratio = (ours AVX2 / AVX-512 time) / (torch "
        "AVX2 / AVX-512 time); floor = the AVX2 floor over our AVX-512 time above 1.1x torch's time ratio "
        "(`verdict1`). "
        f"This run: {counts['yes']} yes, {counts['floor']} floor, {counts['width']} width, {counts['no']} no; "
        f"one process: {counts1['yes']} yes, {counts1['floor']} floor, {counts1['width']} width, "
        f"{counts1['no']} no.\n\n"
        "Per family: the geometric mean of the rows' AVX2 / AVX-512 ratio (met at "
        "<= 1.10) and the rows' verdicts, both ways, and of our AVX2 / AVX-512 time in one process; a "
        "family short of 1.10 reads 'floor / width' when none of its rows reads 'no'.\n\n"
        + families(per)
        + f"\n\nRun {time.strftime('%Y-%m-%d', time.gmtime())}; the per-row tables are what the command prints."
        + f"\n<!-- /bench:{key} -->"
    )
    rows = "\n\n".join(f"**{fam}**\n\n{head}\n" + "\n".join(lines) for fam, lines in fams.items())
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text()
    pat = re.compile(rf"<!-- bench:{re.escape(key)} -->.*?<!-- /bench:{re.escape(key)} -->", re.S)
    text = pat.sub(lambda _: body, text) if pat.search(text) else text.rstrip() + "\n\n" + body + "\n"
    path.write_text(text)
    print(body)
    print()
    print(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py isa-pair")
    ap.add_argument("--label", required=True, help="CPU name for the section, e.g. 'Zen 5'")
    ap.add_argument("--from", dest="files", nargs=2, default=None, metavar=("AVX2_JSON", "AVX512_JSON"))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--only", nargs="*", default=None, help="families, each run AVX2 then AVX-512")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each family's AVX2 / AVX-512 pair this many times, alternating; each row "
        "reports the median of its in-process ratios",
    )
    ap.add_argument(
        "--save",
        default=None,
        metavar="PREFIX",
        help="also write the two sides' rows (medians over --repeat) to PREFIX-avx2.json and "
        "PREFIX-avx512.json, which --from reads back",
    )
    args, passthrough = ap.parse_known_args(argv)
    if args.files:
        a2, a5 = (json.loads(Path(f).read_text()) for f in args.files)
        cmd = a2["cmd"] if a2["cmd"] == a5["cmd"] else a2["cmd"] + "  /  " + a5["cmd"]  # (--save writes one)
    else:
        # One family at a time, AVX2 then AVX-512, so the two sides of a row run minutes apart, not
        # a whole sweep apart (a shared machine's speed drifts).
        a2 = a5 = None
        with tempfile.TemporaryDirectory() as d:
            for fam in args.only or [None]:
                rest = passthrough + (["--only", fam] if fam else [])
                p2, p5 = Path(d) / "avx2.json", Path(d) / "avx512.json"
                for _ in range(args.repeat):
                    run("avx2", rest, p2)
                    run(None, rest + ["--also-avx2"], p5)
                    j2, j5 = json.loads(p2.read_text()), json.loads(p5.read_text())
                    if a2 is None:
                        a2, a5 = j2, j5
                    else:
                        a2["rows"] += j2["rows"]
                        a5["rows"] += j5["rows"]
        a2["rows"], a5["rows"] = combine(a2["rows"]), combine(a5["rows"])
        cmd = command()
        if args.save:
            for side, a in (("avx2", a2), ("avx512", a5)):
                Path(f"{args.save}-{side}.json").write_text(json.dumps(dict(a, cmd=cmd), indent=1))
    if args.no_write:
        fams, counts, per, counts1 = table(a2, a5)
        for fam, lines in fams.items():
            print(f"\n{fam}\n" + "\n".join(lines))
        print(counts, counts1)
        print(families(per))
    else:
        write(args.label, a2, a5, cmd)
