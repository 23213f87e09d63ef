"""Per-op cost of the plain tier vs the quantized-dtype path (a QTensor's Python
overhead per op is the thing to measure).

    python scripts/bench.py qtensor

For each op and size: the quantized-dtype call (qplugin op on a quint8 tensor), the plain op
called directly (qplugin::plain_*, what plain modules call), and the same op through a QTensor
(__torch_dispatch__). Calls are interleaved round by round; the median round wins; ratios are to
the quantized-dtype call of the same run. Prints the CPU.
"""

import argparse
import platform
import statistics
import time

import torch
import torch.nn.functional as F

import torch_qplugin as tq

q = torch.ops.qplugin


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _time(fns, rounds=15, number=200):
    best = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i].append((time.perf_counter() - t0) / number)
    return [statistics.median(b) for b in best]


def main(argv=None):
    argparse.ArgumentParser(prog="bench.py qtensor", description=__doc__.split("\n")[0]).parse_args(argv)
    torch.set_num_threads(1)
    print(f"CPU: {_cpu()}; torch {torch.__version__}; 1 thread; kernel path {tq.active_isa()}")
    print(f"{'op':<22}{'shape':<18}{'quantized us':>14}{'plain op':>10}{'QTensor':>10}")
    for shape in ((1, 64, 8, 8), (1, 64, 56, 56)):
        x = torch.randn(shape) * 3
        qd = q.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        qt = tq.PerTensorAffine(0.05, 128, torch.uint8).quantize(x)
        d = qt.int_repr()
        rows = [
            ("relu", lambda: q.relu(qd), lambda: q.plain_relu(d, 0.05, 128), lambda: torch.relu(qt)),
            (
                "add",
                lambda: q.add(qd, qd, 0.1, 128),
                lambda: q.plain_add(d, 0.05, 128, d, 0.05, 128, 0.1, 128),
                lambda: q.add(qt, qt, 0.1, 128),
            ),
            (
                "hardswish",
                lambda: q.hardswish(qd, 0.05, 128),
                lambda: q.plain_hardswish(d, 0.05, 128, 0.05, 128),
                lambda: q.hardswish(qt, 0.05, 128),
            ),
            (
                "adaptive_avg_pool2d",
                lambda: q.adaptive_avg_pool2d(qd, [1, 1]),
                lambda: q.plain_adaptive_avg_pool2d(d, [1, 1]),
                lambda: F.adaptive_avg_pool2d(qt, 1),
            ),
            ("flatten", lambda: qd.flatten(1), lambda: d.flatten(1), lambda: qt.flatten(1)),
        ]
        for name, a, b, c in rows:
            ta, tb, tc = _time([a, b, c])
            print(f"{name:<22}{str(list(shape)):<18}{ta * 1e6:>14.1f}{tb / ta:>10.2f}{tc / ta:>10.2f}")
