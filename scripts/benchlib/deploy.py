"""What each deployment step of a plain model costs (docs/deploy.md): export, save, load, compile,
AOTInductor compile and load, and the time per call of eager / exported / compiled / AOTI forms.

    python scripts/bench.py deploy                       # digits CNN, MobileNetV2, Transformer
    python scripts/bench.py deploy --models digits_cnn --rounds 3

Models from examples/models converted by torch_qplugin's workflow (plain=True; static per-channel
for the CNNs, dynamic for the Transformer), random weights and calibration data. Per-call times
are interleaved round by round (median of rounds), one thread, and every form's output is checked
byte for byte against eager first. Prints a markdown table and the CPU; nothing is written.
"""

import argparse
import atexit
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from benchlib import checkout_paths

checkout_paths("examples")

import torch  # noqa: E402

import harness as H  # noqa: E402
import models  # noqa: E402
import torch_qplugin  # noqa: E402
import torch_qplugin.quantization as tq  # noqa: E402
from toolkits import quiet_deprecations  # noqa: E402
from torch_qplugin import deploy  # noqa: E402


def _static(model, shape):
    torch.manual_seed(0)
    model = model.eval()
    model.fuse_model()
    model.qconfig = tq.default_per_channel_qconfig
    p = tq.prepare(model)
    tq.calibrate(p, [torch.randn(4, *shape) for _ in range(2)])
    return tq.convert(p, plain=True).eval(), lambda b: torch.randn(b, *shape)


def build(name):
    torch.manual_seed(0)
    if name == "digits_cnn":
        return _static(models.DigitsCNN(), (1, 8, 8))
    if name == "mobilenet_v2":
        return _static(models.mobilenet_v2(num_classes=1000), (3, 224, 224))
    if name == "transformer":
        m = models.TransformerClassifier(vocab=10000, d_model=256, nhead=4, ff=1024, layers=4).eval()
        return tq.quantize_dynamic(m, plain=True).eval(), lambda b: torch.randint(0, 10000, (b, 64))
    raise ValueError(f"bench.py deploy: unknown model {name}")


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def same(a, b):
    return torch.equal(a, b) if torch.is_tensor(a) else all(same(x, y) for x, y in zip(a, b))


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench.py deploy", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", nargs="*", default=["digits_cnn", "mobilenet_v2", "transformer"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 8])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    args = ap.parse_args(argv)
    quiet_deprecations()
    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="qplugin_deploy_"))
    atexit.register(shutil.rmtree, tmp, True)
    steps, calls = [], []
    for name in args.models:
        model, make = build(name)
        x8 = make(8)
        ep, t_export = timed(lambda: deploy.export(model, (x8,)))
        path = tmp / f"{name}.pt2"
        _, t_save = timed(lambda: torch.export.save(ep, str(path)))
        loaded, t_load = timed(lambda: torch.export.load(str(path)).module())
        compiled = deploy.compile(model)
        _, t_compile = timed(lambda: compiled(make(1)))
        pkg, t_aoti = timed(lambda: deploy.aoti_package(ep, tmp / f"{name}.aoti.pt2"))
        aoti, t_aoti_load = timed(lambda: torch._inductor.aoti_load_package(pkg))
        steps.append(
            [
                name,
                f"{t_export:.1f} s",
                f"{t_save:.2f} s ({path.stat().st_size / 1e6:.1f} MB)",
                f"{t_load:.2f} s",
                f"{t_compile:.1f} s",
                f"{t_aoti:.1f} s ({os.path.getsize(pkg) / 1e6:.1f} MB)",
                f"{t_aoti_load:.2f} s",
            ]
        )
        forms = {"eager": model, "exported": loaded, "compiled": compiled, "AOTI": aoti}
        for b in args.batches:
            x = make(b)
            with torch.no_grad():
                want = model(x)
                for k, f in forms.items():
                    if not same(f(x), want):
                        raise SystemExit(f"bench.py deploy: {name} {k} output differs from eager at batch {b}")
                t = H.time_interleaved(forms, x, rounds=args.rounds, min_time=args.min_time)
            calls.append(
                [name, b]
                + [f"{t[k] * 1e3:.2f} ms" for k in forms]
                + [f"{t['compiled'] / t['eager']:.2f}", f"{t['AOTI'] / t['eager']:.2f}"]
            )
            print(calls[-1], flush=True)
    print(
        f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} CPU(s), torch {torch.__version__}, "
        f"torch_qplugin kernels {torch_qplugin.active_isa()}, 1 thread, load average "
        f"{os.getloadavg()[0]:.1f}\n"
    )
    print(
        H.markdown_table(
            ["model", "export", "export.save", "export.load", "compile (1st call)", "AOTI compile", "AOTI load"], steps
        )
    )
    print()
    print(
        H.markdown_table(
            ["model", "batch", "eager", "exported", "compiled", "AOTI", "compiled / eager", "AOTI / eager"], calls
        )
    )
    return 0
