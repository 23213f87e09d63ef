"""Per-layer time of ResNet-style 3x3 convs (C -> C, stride 1, padding 1) against torch's x86 engine,
with the activation zero point 0 (ReLU outputs: our indirect path leaves the padded taps out) and 3.

    python scripts/bench_conv_taps.py --a /path/to/base/checkout --b . --pairs 3

Each checkout must have its library built in place. The two builds run in alternating processes
(A B A B ...), each timing every layer with bench_ops.measure (ours and torch.ops.quantized.conv2d
interleaved, CPU time, one thread unless --threads). The table gives the median over the processes
of each build's ms and of torch's ms (torch's kernel is the same in every process), and ours / torch.
"""

import argparse
import json
import statistics
import subprocess
import sys

LAYERS = [(64, 56), (128, 28), (256, 14), (512, 7)]  # (channels, map side)


def child(args):
    from bench_ab import import_checkout

    bench_ops = import_checkout(args.child)
    import torch
    from bench_rows import Case

    torch.set_num_threads(args.threads)
    torch.backends.quantized.engine = "x86"
    q, tq = torch.ops.qplugin, torch.ops.quantized
    out = {}
    gen = torch.Generator().manual_seed(0)
    for c, hw in [tuple(map(int, l.split("x"))) for l in args.layers]:
        w = torch.randn(c, c, 3, 3, generator=gen) * 0.1
        qw = torch.quantize_per_channel(
            w, torch.full((c,), 0.002, dtype=torch.double), torch.zeros(c, dtype=torch.long), 0, torch.qint8
        )
        b = torch.randn(c, generator=gen)
        ours_p = q.conv2d_prepack(qw, b, [1, 1], [1, 1], [1, 1], 1)
        theirs_p = tq.conv2d_prepack(qw, b, [1, 1], [1, 1], [1, 1], 1)
        for n in args.batch:
            x = torch.rand(n, c, hw, hw, generator=gen) * 6
            for zp in args.zp:
                qx = torch.quantize_per_tensor(x, 6 / 255, zp, torch.quint8).contiguous(
                    memory_format=torch.channels_last
                )
                case = Case(
                    "conv2d 3x3",
                    f"[{n},{c},{hw},{hw}]",
                    lambda qx=qx: q.conv2d(qx, ours_p, 0.5, 10),
                    lambda qx=qx: tq.conv2d(qx, theirs_p, 0.5, 10),
                    None,
                )
                t, _ = bench_ops.measure(case, args.rounds, args.sample_ms / 1000.0)
                out[f"{c}->{c} {hw}x{hw} N={n} x_zp={zp}"] = (t["ours"] * 1e3, t["torch"] * 1e3)
    print("RESULT " + json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="base checkout")
    ap.add_argument("--b", required=True, help="checkout under test")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--zp", type=int, nargs="+", default=[0, 3])
    ap.add_argument("--layers", nargs="+", default=[f"{c}x{hw}" for c, hw in LAYERS], help="CxHW, e.g. 64x56")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample-ms", type=float, default=20.0)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    runs = {"a": [], "b": []}
    for _ in range(args.pairs):
        for side in ("a", "b"):
            cmd = [
                sys.executable,
                __file__,
                "--a",
                args.a,
                "--b",
                args.b,
                "--child",
                getattr(args, side),
                "--threads",
                str(args.threads),
                "--rounds",
                str(args.rounds),
                "--sample-ms",
                str(args.sample_ms),
                "--batch",
                *map(str, args.batch),
                "--zp",
                *map(str, args.zp),
                "--layers",
                *args.layers,
            ]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            runs[side].append(json.loads(res.split("RESULT ", 1)[1]))
    med = lambda side, k, i: statistics.median(r[k][i] for r in runs[side])
    print(f"{args.threads} thread(s), median of {args.pairs} process pairs; ms; A = {args.a}, B = {args.b}")
    print(f"{'layer':36s} {'A ours':>8s} {'B ours':>8s} {'torch':>8s} {'A/torch':>8s} {'B/torch':>8s} {'B/A':>6s}")
    for k in runs["a"][0]:
        a, b_ = med("a", k, 0), med("b", k, 0)
        t = statistics.median([r[k][1] for r in runs["a"] + runs["b"]])
        print(f"{k:36s} {a:8.3f} {b_:8.3f} {t:8.3f} {a / t:8.2f} {b_ / t:8.2f} {b_ / a:6.2f}")


if __name__ == "__main__":
    main()
