"""Per-call cost of the plain library built on torch's stable ABI against the ATen build, both under
the running torch.

Two packages of torch_qplugin:
  * ATen: the one this Python imports (the checkout's build, or the installed wheel), built against
    the running torch;
  * stable: --stable-pkg, a directory whose torch_qplugin holds the plain library alone built with
    QPLUGIN_STABLE_ABI=ON, usually against an older torch (scripts/test.sh builds
    build/plain-stable-torch<first version>).
Each is timed in child processes of its own (the two libraries register the same op names),
alternating A B A B for --rounds rounds, 1 thread, the running CPU's best kernel path. A child
times each op as the best of --samples samples of --calls calls from Python, with torch's own int8
kernel (quantized tensors, where torch has one) and its float32 op on the same shapes beside them.
Printed per op: the best over rounds of each, stable - ATen in us, and the ratios to torch int8
and fp32.

    python scripts/bench.py stable-lib --stable-pkg build/plain-stable-torch2.13.0 [--floor]

--floor first compiles scripts/benchlib/boxing_floor.cpp twice against the running torch (ATen, and
the stable ABI targeting the stable package's torch): ops with the same schemas that only take
their arguments and allocate their output. Their stable - ATen difference is what torch's stable
boxing and allocation cost before any of the op's own code; the table then splits the gap into that
floor and what lies beyond it.

A benchmark, not a test: it changes nothing in the tree and the test suite does not run it.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

from benchlib import BENCH, ROOT, checkout_paths

# the ops timed, in order (their calls: _cases, in the child)
OPS = [
    "plain_relu 64",
    "plain_add 64",
    "plain_quantize_per_tensor 64",
    "plain_dequantize_per_tensor 64",
    "plain_max_pool2d 1x8x8x8",
    "plain_cat 2x64",
    "plain_linear 1x64x64",
    "plain_linear_dynamic 1x64x64",
    "plain_conv2d 1x8x8x8 k3",
    "plain_embedding_bag 8 of 100x16",
]


def _cases():
    import torch

    q = torch.ops.qplugin
    torch.manual_seed(0)
    u8 = torch.randint(0, 256, (64,), dtype=torch.uint8)
    u8b = torch.randint(0, 256, (64,), dtype=torch.uint8)
    f = torch.randn(64)
    qf = torch.quantize_per_tensor(f, 0.05, 128, torch.quint8)
    qf2 = torch.quantize_per_tensor(torch.randn(64), 0.05, 128, torch.quint8)
    img = torch.randint(0, 256, (1, 8, 8, 8), dtype=torch.uint8)
    fimg = torch.randn(1, 8, 8, 8)
    qimg = torch.quantize_per_tensor(fimg, 0.05, 128, torch.quint8)
    # linear 64 -> 64
    wf = torch.randn(64, 64) * 0.1
    w = torch.randint(-127, 128, (64, 64), dtype=torch.int8)
    ws, wz = torch.full((64,), 0.01, dtype=torch.float64), torch.zeros(64, dtype=torch.int64)
    packed = q.plain_linear_prepack(w, ws, wz)
    x1 = torch.randint(0, 256, (1, 64), dtype=torch.uint8)
    xf1 = torch.randn(1, 64)
    qx1 = torch.quantize_per_tensor(xf1, 0.05, 128, torch.quint8)
    qw = torch.quantize_per_tensor(wf, 0.01, 0, torch.qint8)
    tpacked = torch.ops.quantized.linear_prepack(qw, None)
    # conv 8 -> 8, 3x3
    cwf = torch.randn(8, 8, 3, 3) * 0.1
    cw = torch.randint(-127, 128, (8, 8, 3, 3), dtype=torch.int8)
    cws, cwz = torch.full((8,), 0.01, dtype=torch.float64), torch.zeros(8, dtype=torch.int64)
    cpacked = q.plain_conv_prepack(cw, cws, cwz, None, [1, 1], [1, 1], [1, 1], 1)
    qcw = torch.quantize_per_tensor(cwf, 0.01, 0, torch.qint8)
    tcpacked = torch.ops.quantized.conv2d_prepack(qcw, None, [1, 1], [1, 1], [1, 1], 1)
    # embedding bag: 100 rows of 16
    table = torch.randn(100, 16)
    fused = q.embedding_bag_byte_prepack(table)
    ebuf = q.plain_embedding_prepack(fused, 8)
    idx = torch.randint(0, 100, (8,))
    offs = torch.tensor([0, 4])
    # name: (plain op, its arguments, torch's int8 call, torch's float32 call)
    cases = {
        "plain_relu 64": ("plain_relu", (u8, 0.05, 128), lambda: torch.relu(qf), lambda: torch.relu(f)),
        "plain_add 64": (
            "plain_add",
            (u8, 0.05, 128, u8b, 0.05, 128, 0.1, 128),
            lambda: torch.ops.quantized.add(qf, qf2, 0.1, 128),
            lambda: torch.add(f, f),
        ),
        "plain_quantize_per_tensor 64": (
            "plain_quantize_per_tensor",
            (f, 0.05, 128, torch.uint8),
            lambda: torch.quantize_per_tensor(f, 0.05, 128, torch.quint8),
            lambda: f.clone(),
        ),
        "plain_dequantize_per_tensor 64": (
            "plain_dequantize_per_tensor",
            (u8, 0.05, 128),
            lambda: qf.dequantize(),
            lambda: f.clone(),
        ),
        "plain_max_pool2d 1x8x8x8": (
            "plain_max_pool2d",
            (img, [2, 2], [2, 2], [0, 0], [1, 1], False),
            lambda: torch.nn.functional.max_pool2d(qimg, 2),
            lambda: torch.nn.functional.max_pool2d(fimg, 2),
        ),
        "plain_cat 2x64": (
            "plain_cat",
            ([u8, u8b], [0.05, 0.05], [128, 128], 0, 0.05, 128),
            lambda: torch.ops.quantized.cat([qf, qf2], 0, 0.05, 128),
            lambda: torch.cat([f, f]),
        ),
        "plain_linear 1x64x64": (
            "plain_linear",
            (x1, 0.05, 128, w, ws, wz, None, packed, 0.1, 128),
            lambda: torch.ops.quantized.linear(qx1, tpacked, 0.1, 128),
            lambda: torch.nn.functional.linear(xf1, wf),
        ),
        "plain_linear_dynamic 1x64x64": (
            "plain_linear_dynamic",
            (xf1, w, ws, wz, None, packed, False),
            lambda: torch.ops.quantized.linear_dynamic(xf1, tpacked, False),
            lambda: torch.nn.functional.linear(xf1, wf),
        ),
        "plain_conv2d 1x8x8x8 k3": (
            "plain_conv2d",
            (img, 0.05, 128, cw, cws, cwz, None, cpacked, [1, 1], [1, 1], [1, 1], 1, 0.1, 128),
            lambda: torch.ops.quantized.conv2d(qimg, tcpacked, 0.1, 128),
            lambda: torch.nn.functional.conv2d(fimg, cwf, padding=1),
        ),
        "plain_embedding_bag 8 of 100x16": (
            "plain_embedding_bag",
            (ebuf, 100, 16, idx, offs),
            lambda: torch.ops.quantized.embedding_bag_byte_rowwise_offsets(fused, idx, offs),
            lambda: torch.nn.functional.embedding_bag(idx, table, offs),
        ),
    }
    assert list(cases) == OPS
    return cases


def _time(fn, calls, samples):
    for _ in range(calls):
        fn()
    best = float("inf")
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def _child(args):
    import torch

    torch.set_num_threads(1)
    import torch_qplugin
    from torch_qplugin import _build_info

    out = {"stable": bool(getattr(_build_info, "STABLE_ABI", False)), "built": _build_info.TORCH_VERSION}
    out["isa"] = torch_qplugin.active_isa()
    for lib in args.floor_libs:
        torch.ops.load_library(lib)
    q = torch.ops.qplugin
    res = {}
    for name, (op, op_args, tq, fp) in _cases().items():
        res[name] = {"plain": _time(lambda: getattr(q, op)(*op_args), args.calls, args.samples)}
        # torch's columns and the floors in the ATen children only (one package is enough for them)
        if args.torch_columns:
            res[name]["torch_int8"] = _time(tq, args.calls, args.samples)
            res[name]["fp32"] = _time(fp, args.calls, args.samples)
        for kind in ("aten", "stable") if args.floor_libs else ():
            floor = getattr(getattr(torch.ops, FLOOR_NS[kind]), op.removeprefix("plain_"))
            res[name][f"floor_{kind}"] = _time(lambda: floor(*op_args), args.calls, args.samples)
    out["ops"] = res
    print("RESULT " + json.dumps(out))


# The floor ops (boxing_floor.cpp): their namespace on each build.
FLOOR_NS = {"aten": "qplugin_floor_aten", "stable": "qplugin_floor_stable"}


def _build_floor(stable_pkg):
    """Compiles boxing_floor.cpp on ATen and on the stable ABI (targeting the torch the stable
    package was built against) against the running torch; returns the two libraries' paths."""
    import re
    import tempfile

    from torch.utils import cpp_extension

    with open(os.path.join(stable_pkg, "torch_qplugin", "_build_info.py")) as f:
        major, minor = re.search(r"TORCH_VERSION = \"(\d+)\.(\d+)", f.read()).groups()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boxing_floor.cpp")
    inc = str(ROOT / "aten_ext" / "csrc")
    target = f"0x{(int(major) << 56) | (int(minor) << 48):x}"
    libs = []
    for kind, defs in (("aten", []), ("stable", ["-DQPLUGIN_STABLE_ABI", f"-DTORCH_TARGET_VERSION={target}"])):
        build = tempfile.mkdtemp(prefix=f"qplugin-floor-{kind}-")
        libs.append(
            cpp_extension.load(
                name=FLOOR_NS[kind],
                sources=[src],
                extra_cflags=["-O3", f"-DQPLUGIN_FLOOR_NS={FLOOR_NS[kind]}"] + defs,
                extra_include_paths=[inc],
                build_directory=build,
                with_cuda=False,
                is_python_module=False,
            )
            or os.path.join(build, f"{FLOOR_NS[kind]}.so")
        )
    return libs


def _run_child(pkg, args, torch_columns, floor_libs=()):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if pkg:
        env["PYTHONPATH"] = pkg
        env["PYTHONSAFEPATH"] = "1"
    cmd = [sys.executable, str(BENCH), "stable-lib", "--child", "--calls", str(args.calls)]
    cmd += ["--samples", str(args.samples)] + (["--torch-columns"] if torch_columns else [])
    cmd += [f"--floor-lib={lib}" for lib in floor_libs]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if r.returncode != 0:
        sys.exit(f"stable-lib: child ({pkg or 'ATen package'}) failed:\n{r.stdout}{r.stderr}")
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return platform.processor()
    get = {k.strip(): v.strip() for k, v in (ln.split(":", 1) for ln in info.splitlines() if ":" in ln)}
    return f"{get.get('model name', '?')} (family {get.get('cpu family', '?')} model {get.get('model', '?')})"


def main(argv):
    p = argparse.ArgumentParser(prog="bench.py stable-lib", description=__doc__.split("\n\n")[0])
    p.add_argument("--stable-pkg", help="directory holding the stable-ABI build's torch_qplugin")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--torch-columns", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--floor-lib", dest="floor_libs", action="append", default=[], help=argparse.SUPPRESS)
    p.add_argument(
        "--floor",
        action="store_true",
        help="also time ops that only take the arguments and allocate the output (boxing_floor.cpp), "
        "on ATen and on the stable ABI: the floor of the stable - ATen column",
    )
    args = p.parse_args(argv)
    if args.child:
        if os.environ.get("PYTHONPATH"):
            # the stable package only: drop an editable install's finder of the checkout
            sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        else:
            checkout_paths()
        return _child(args)
    if not args.stable_pkg:
        p.error("--stable-pkg is required")
    import torch

    floor_libs = _build_floor(args.stable_pkg) if args.floor else []
    runs = {"aten": [], "stable": []}
    meta = {}
    for r in range(args.rounds):
        for kind in ("aten", "stable") if r % 2 == 0 else ("stable", "aten"):
            aten = kind == "aten"
            out = _run_child(None if aten else os.path.abspath(args.stable_pkg), args, aten, floor_libs if aten else ())
            meta[kind] = out
            runs[kind].append(out["ops"])
    assert meta["stable"]["stable"] and not meta["aten"]["stable"], "the two packages are not the two builds"
    print(f"CPU: {_cpu()}; torch {torch.__version__}; 1 thread; kernel path {meta['aten']['isa']}")
    print(
        f"ATen build: against torch {meta['aten']['built']}; stable-ABI build: against torch "
        f"{meta['stable']['built']}; best of {args.rounds} alternating processes, each the best of "
        f"{args.samples} samples of {args.calls} calls"
    )
    print()
    floor = ["floor_aten", "floor_stable"] if args.floor else []
    head = "| op | ATen build us | stable-ABI build us | stable - ATen us |"
    head += " floor: stable - ATen us | beyond the floor us |" if floor else ""
    print(head + " stable / torch int8 | stable / fp32 |")
    print("|---" * (head.count("|") + 1) + "|")
    for name in OPS:
        a = min(o[name]["plain"] for o in runs["aten"])
        s = min(o[name]["plain"] for o in runs["stable"])
        ti = min(o[name]["torch_int8"] for o in runs["aten"])
        fp = min(o[name]["fp32"] for o in runs["aten"])
        row = f"| {name} | {a:.2f} | {s:.2f} | {s - a:+.2f} |"
        if floor:
            fa, fs = (min(o[name][k] for o in runs["aten"]) for k in floor)
            row += f" {fs - fa:+.2f} | {(s - a) - (fs - fa):+.2f} |"
        print(row + f" {s / ti:.2f} | {s / fp:.2f} |")
