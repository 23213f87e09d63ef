"""Plain form vs quantized-dtype form of the same converted model, eager and deployed.

    python scripts/bench.py plain                                   # all models, batch 1 and 32, 1 thread
    python scripts/bench.py plain --models mobilenet_v2 --batches 1 --rounds 40
    python scripts/bench.py plain --models lstm_fp16 transformer_fp16   # the fp16 dynamic scheme
    python scripts/bench.py plain --no-aoti                          # the eager table only
    python scripts/bench.py plain --models tv_resnet50 tv_mobilenet_v2  # torchvision's definitions

Three tables:

1. Eager: plain / quantized-dtype form of the same converted model (target: within 5% or faster).
2. Deployed (``--no-aoti`` leaves it out): the plain model as an AOTInductor package
   (torch_qplugin.deploy.export + aoti_package, loaded with deploy.aoti_load) against the
   quantized-dtype form scripted (torch.jit.script), the form each tier deploys in (target: the
   package at most 1.0x the scripted model), with torch's own int8 model scripted (torch.ao, x86
   engine, same qconfig kind) and the fp32 model eager in the same rounds. Outputs checked
   bit-identical (package, scripted, plain eager) first.
3. Eager overhead per layer: a plain conv / linear / ReLU / add module called on a QTensor against
   its plain op called directly with the same arguments (tiny tensors, so the kernel is a small
   constant in both): the Python a plain layer adds per call (target: at most 3 us).

For each model: converted once (static: fused, per-channel qconfig, calibrated on random images;
dynamic: quantize_dynamic), then ``convert(..., plain=True)`` / ``quantize_dynamic(..., plain=True)``
of the same prepared model (bit-identical outputs, checked here). Each round times a chunk of
quantized-eager calls and a chunk of plain-eager calls back to back (the order alternates) in process
CPU time, which a loaded machine disturbs far less than wall time; the ratio of each pair is one
sample. Prints per config the median per-call times and the median pair ratio plain / quantized with
its quartiles. scripts/bench.py models has the same columns among the other toolkits (one median per
column, wall or --clock cpu).
"""

import argparse
import copy
import statistics
import time
from pathlib import Path

from benchlib import checkout_paths

checkout_paths("examples")

import torch  # noqa: E402

import models  # noqa: E402
from toolkits import quiet_deprecations  # noqa: E402
import torch_qplugin.quantization as tq  # noqa: E402

STATIC = {
    "resnet18": (models.resnet18, 224),
    "mobilenet_v2": (models.mobilenet_v2, 224),
    "mobilenet_v3_large": (models.mobilenet_v3_large, 224),
    "shufflenet_v2": (models.shufflenet_v2_x1_0, 224),
}


def _torchvision_models():
    """torchvision's quantizable definitions (scripts/bench.py models' tv_* rows), on request only:
    ``--models tv_resnet50``."""
    import importlib.util

    if importlib.util.find_spec("torchvision") is None:
        return {}
    from benchlib.models import TORCHVISION_MODELS, _torchvision

    return {f"tv_{n}": (_torchvision(n), 299 if n == "inception_v3" else 224) for n in TORCHVISION_MODELS}


DYNAMIC = {"lstm": (models.LSTMClassifier, 32, None), "transformer": (models.TransformerClassifier, 64, None)}
# the fp16 dynamic scheme (float16 weights: DynamicLinearFP16, plain_*_fp16 ops); not in the default run
FP16 = {name + "_fp16": (make, seq, torch.float16) for name, (make, seq, _) in DYNAMIC.items()}


def build(name, with_baselines=False):
    """(quantized model, plain model, input factory(batch)); with_baselines: also (fp32 model,
    torch.ao's int8 model of the same kind, or None where torch has no int8 engine)."""
    torch.manual_seed(0)
    if name in DYNAMIC or name in FP16:
        make, seq, dtype = {**DYNAMIC, **FP16}[name]
        m = make().eval()
        out = (
            tq.quantize_dynamic(m, dtype=dtype),
            tq.quantize_dynamic(m, dtype=dtype, plain=True),
            lambda b: torch.randint(0, 1000, (b, seq)),
        )
        if not with_baselines:
            return out
        torch_q = None
        if torch.backends.quantized.supported_engines and hasattr(torch, "qint8"):
            torch.backends.quantized.engine = "x86"
            torch_q = torch.ao.quantization.quantize_dynamic(
                copy.deepcopy(m), {torch.nn.Linear, torch.nn.LSTM}, dtype=torch.float16 if dtype else torch.qint8
            )
        return out + (m, torch_q)
    make, size = STATIC[name] if name in STATIC else _torchvision_models()[name]
    m = make().eval()
    fp32 = copy.deepcopy(m)
    calib = [torch.randn(2, 3, size, size) for _ in range(2)]
    m.fuse_model()
    m.qconfig = tq.default_per_channel_qconfig
    p = tq.prepare(m)
    with torch.no_grad():
        for x in calib:
            p(x)
    out = (tq.convert(copy.deepcopy(p)), tq.convert(p, plain=True), lambda b: torch.randn(b, 3, size, size))
    if not with_baselines:
        return out
    torch_q = None
    if "x86" in torch.backends.quantized.supported_engines:
        from torch.ao import quantization as tao

        torch.backends.quantized.engine = "x86"
        t = copy.deepcopy(fp32)
        t.fuse_model(tao.fuse_modules)
        t.qconfig = tao.get_default_qconfig("x86")
        tao.prepare(t, inplace=True)
        with torch.no_grad():
            for x in calib:
                t(x)
        torch_q = tao.convert(t)
    return out + (fp32, torch_q)


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


def _same(got, want):
    if isinstance(want, (tuple, list)):
        return all(_same(g, w) for g, w in zip(got, want))
    return torch.equal(got, want)


@torch.no_grad()
def measure_deployed(fns, x, rounds, chunk_s):
    """fns: {key: callable}, keys "scripted" and "aoti" first. Each round times a chunk of every
    callable in a new order (seeded); returns {key: median time}, and the median pair ratio
    aoti / scripted with its quartiles."""
    import random

    n = max(1, int(chunk_s / max(chunk(fns["scripted"], x, 1), 1e-6)))
    rng = random.Random(0)
    times = {k: [] for k in fns}
    ratios = []
    for _ in range(rounds):
        order = list(fns)
        rng.shuffle(order)
        got = {k: chunk(fns[k], x, n) for k in order}
        for k, t in got.items():
            times[k].append(t)
        ratios.append(got["aoti"] / got["scripted"])
    qs = statistics.quantiles(ratios, n=4)
    return {k: statistics.median(v) for k, v in times.items()}, statistics.median(ratios), qs[0], qs[2]


def deployed_table(args, tmp):
    from torch_qplugin import deploy

    print()
    print(
        "| model | batch | ours scripted (quantized dtypes) | ours AOTI (plain) | AOTI / scripted (median pair) "
        "| quartiles | AOTI / torch int8 scripted | AOTI / fp32 eager |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models:
        q, p, make_x, fp32, torch_q = build(name, with_baselines=True)
        with torch.no_grad():
            scripted = torch.jit.script(q)
            ep = deploy.export(p, (make_x(2),))
            aoti = deploy.aoti_load(deploy.aoti_package(ep, tmp / f"{name}.pt2"))
            torch_s = None
            if torch_q is not None:
                try:
                    torch_s = torch.jit.script(torch_q)
                except Exception as e:  # noqa: BLE001 - reported in the table
                    print(f"({name}: torch's int8 model does not script: {type(e).__name__})")
        for b in args.batches:
            x = make_x(b)
            with torch.no_grad():
                want = scripted(x)
                assert _same(aoti(x), want) and _same(p(x), want), f"{name}: AOTI / scripted / plain outputs differ"
            fns = {"scripted": scripted, "aoti": aoti, "fp32": fp32}
            if torch_s is not None:
                fns["torch"] = torch_s
            t, r, lo, hi = measure_deployed(fns, x, args.rounds, args.chunk)
            vs_torch = f"{t['aoti'] / t['torch']:.2f}" if "torch" in t else "-"
            print(
                f"| {name} | {b} | {t['scripted'] * 1e3:.2f} ms | {t['aoti'] * 1e3:.2f} ms | **{r:.3f}** | "
                f"{lo:.3f} - {hi:.3f} | {vs_torch} | {t['aoti'] / t['fp32']:.2f} |",
                flush=True,
            )


class _Layers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        import torch_qplugin.nn as qnn

        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv, self.relu = torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU()
        self.fc, self.act, self.add = torch.nn.Linear(8, 8), torch.nn.ReLU(), qnn.FloatFunctional()

    def forward(self, x):
        x = self.relu(self.conv(self.quant(x)))
        y = self.act(self.fc(x))
        return self.dequant(self.add.add(y, x))


def overhead_table(args):
    """Per plain layer: module(x) against its op called directly, tiny tensors, process time."""
    from torch_qplugin.nn.plain import modules as PM

    m = _Layers().eval()
    m = tq.fuse_modules(m, [["conv", "relu"], ["fc", "act"]])
    m.qconfig = tq.default_per_channel_qconfig
    prep = tq.prepare(m)
    with torch.no_grad():
        prep(torch.randn(4, 8, 4, 8))
    p = tq.convert(prep, plain=True)
    x = p.quant(torch.randn(1, 8, 4, 8))
    d, s, z = PM._in(x, "bench")
    layers = []
    for key, mod in (("conv", p.conv), ("fc", p.fc)):
        op, rest = mod._call_args()[:2]
        layers.append(
            (f"{type(mod).__name__} ({key})", lambda mod=mod: mod(x), lambda op=op, rest=rest: op(d, s, z, *rest))
        )
    add = p.add
    layers.append(
        (
            "QFunctional.add",
            lambda: add.add(x, x),
            lambda: torch.ops.qplugin.plain_add(d, s, z, d, s, z, add.scale, add.zero_point),
        )
    )

    def per_call(f, n=2000):
        f()
        t0 = time.process_time()
        for _ in range(n):
            f()
        return (time.process_time() - t0) / n

    print()
    print("| plain layer | module call | its op called directly | overhead per layer |")
    print("|---|---|---|---|")
    with torch.no_grad():
        for label, module_call, op_call in layers:
            pairs = [(per_call(module_call), per_call(op_call)) for _ in range(max(5, args.rounds // 2))]
            a = statistics.median(v[0] for v in pairs)
            b = statistics.median(v[1] for v in pairs)
            print(f"| {label} | {a * 1e6:.2f} us | {b * 1e6:.2f} us | **{(a - b) * 1e6:.2f} us** |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench.py plain", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", nargs="*", default=list(STATIC) + list(DYNAMIC))
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 32])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--chunk", type=float, default=0.05, help="seconds of CPU time per chunk")
    ap.add_argument("--no-aoti", action="store_true", help="leave out the deployed (AOTInductor) table")
    args = ap.parse_args(argv)
    quiet_deprecations()
    torch.set_num_threads(args.threads)
    import torch_qplugin

    from benchlib.ops import cpu_description

    cpu = cpu_description()
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
    if not args.no_aoti:
        import tempfile

        deployed_table(args, Path(tempfile.mkdtemp(prefix="bench_plain_")))
    overhead_table(args)
