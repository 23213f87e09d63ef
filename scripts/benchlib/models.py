"""Model benchmarks: fp32 vs torch's int8 backend vs torch_qplugin on real architectures.

    python scripts/bench.py models                  # full run (1 and 2 threads, batch 1 and 8, 224x224)
    python scripts/bench.py models --quick --no-write
    python scripts/bench.py models --models resnet18 --threads 1 --batches 1
    python scripts/bench.py models --isa avxvnni --models resnet18 tv_resnet50 mobilenet_v2 \
        --variants torch_script qplugin_eager   # an AVX-VNNI CPU without AVX-512 (Intel Core 12th
        # gen+): ours on avxvnni, torch capped to AVX2 (fbgemm / oneDNN / ATen); writes
        # docs/benchmarks_models_avxvnni.md

Static int8 (ResNet-18, MobileNetV2, MobileNetV3-Large, ShuffleNetV2 x1.0 from examples/models,
written as torchvision's quantizable versions, and ``tv_*``: torchvision's own quantizable
definitions, ResNet-50, ResNeXt-101 32x8d, GoogLeNet and Inception-v3 included, when torchvision
is installed; random init, calibrated on random images): fp32 eager, torch x86 int8 (its default
qconfig) eager and scripted, torch_qplugin int8 eager, plain eager, plain compiled
(torch_qplugin.deploy.compile) and scripted, our plain model exported by
torch_qplugin.deploy.export_onnx and run by ONNX Runtime, and ONNX Runtime's own static int8 (QDQ,
per-channel) of the float model, when onnxruntime is importable. Dynamic int8 (LSTM and
Transformer-encoder classifiers): fp32 vs torch's dynamic int8
vs torch_qplugin's. Every timing of one configuration is interleaved round by round with the
others (the machine's speed drifts), median of rounds. Also: output agreement with fp32 (cosine
of logits and top-1 agreement; on the digits demo's real test set too) and torch.profiler's top
ops. Writes docs/benchmarks_models.md and docs/benchmarks_models.png unless --no-write.
A column that cannot run says why; no number is made up.
"""

import argparse
import importlib.util
import os
import time
from pathlib import Path

from benchlib import ROOT, checkout_paths, command

checkout_paths("examples", "scripts", "test/compat")


def _ensure_malloc_env(isa=None):
    # bench.py ops's environment: big blocks kept in the heap (we time kernels, not mmap/munmap)
    # and, with --isa, our path and torch's caps, all set before torch loads.
    from benchlib.ops import ensure_env

    ensure_env(isa)


import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import harness as H  # noqa: E402
import models  # noqa: E402
from toolkits import QPlugin, TorchAO, Unavailable, graph_op_counts, quiet_deprecations, short_reason  # noqa: E402

STATIC_MODELS = {
    "resnet18": models.resnet18,
    "mobilenet_v2": models.mobilenet_v2,
    "mobilenet_v3_large": models.mobilenet_v3_large,
    "shufflenet_v2": models.shufflenet_v2_x1_0,
}


def _torchvision(name):
    """torchvision's own quantizable definition of ``name`` (torchvision.models.quantization, loaded
    by test/compat/tv_models.py with or without torchvision's C++ ops), unmodified but for
    ``fuse_model``: the toolkits pass their fuser, torchvision fuses with torch.ao's."""

    def factory():
        import tv_models

        model = tv_models.build(name)
        base = type(model)
        model.__class__ = type(
            "Torchvision" + base.__name__,
            (base,),
            {"fuse_model": lambda self, fuser=None: base.fuse_model(self, is_qat=False)},
        )
        return model

    return factory


TORCHVISION_MODELS = (
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "shufflenet_v2_x1_0",
    "googlenet",
    "inception_v3",
    "resnext101_32x8d",
)
if importlib.util.find_spec("torchvision") is not None:  # a test dependency (scripts/setup_env.sh)
    STATIC_MODELS.update({f"tv_{n}": _torchvision(n) for n in TORCHVISION_MODELS})
DYNAMIC_MODELS = {
    "lstm": (lambda: models.LSTMClassifier(), 32),  # (factory, sequence length)
    "transformer": (lambda: models.TransformerClassifier(), 64),
}


class Variant:
    def __init__(self, key, label, fn=None, reason=None, model=None):
        self.key, self.label, self.fn, self.reason, self.model = key, label, fn, reason, model


def _script(m):
    """(a function giving the logits, torch.jit.script(m)): scripted GoogLeNet / Inception-v3 return
    their (logits, aux...) tuple in eval mode too (torchvision warns so), where eager returns logits."""
    s = torch.jit.script(m)

    def run(x):
        out = s(x)
        return out[0] if isinstance(out, tuple) else out

    return run, s


# ----------------------------------------------------------------------------- variants


@torch.no_grad()
def settle_batchnorm(model, batches):
    """Random-init nets have identity BatchNorm (mean 0, var 1), so activations drift by orders of
    magnitude with depth and int8 agreement numbers would be meaningless. One pass of BN statistics
    over the calibration images gives well-scaled activations, as in a trained net."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average
    model.train()
    for xb in batches:
        model(xb)
    return model.eval()


def static_variants(name, args, calib):
    torch.manual_seed(0)
    fp32 = settle_batchnorm(STATIC_MODELS[name](), calib)
    out = [Variant("fp32", "fp32 eager", fp32, model=fp32)]
    for tk in (TorchAO(), QPlugin()):
        try:
            prepared = tk.prepare_static(fp32)
            t0 = time.perf_counter()
            with torch.no_grad():
                for xb in calib:
                    prepared(xb)
            q = tk.convert(prepared)
            print(f"  {name}: {tk.label} calibrated + converted in {time.perf_counter() - t0:.1f}s", flush=True)
        except Exception as e:  # noqa: BLE001 - reported in the table
            why = str(e) if isinstance(e, Unavailable) else short_reason(e)
            out += [
                Variant(f"{tk.name}_eager", f"{tk.label} eager", reason=why),
                Variant(f"{tk.name}_script", f"{tk.label} scripted", reason=why),
            ]
            continue
        out.append(Variant(f"{tk.name}_eager", f"{tk.label} eager", q, model=q))
        if args.want("qplugin_plain", "qplugin_compiled", "qplugin_compiled_fused", "qplugin_onnx"):
            out += plain_variant(tk, q, "", calib, args)
        try:
            fn, s = _script(q)
            out.append(Variant(f"{tk.name}_script", f"{tk.label} scripted", fn, model=s))
        except Exception as e:  # noqa: BLE001
            out.append(
                Variant(
                    f"{tk.name}_script", f"{tk.label} scripted", reason=f"torch.jit.script failed: {short_reason(e)}"
                )
            )
    if args.want("ort"):
        out.append(ort_variant(fp32, calib, args))
    return fp32, out


def plain_variant(tk, q, kind, calib=None, args=None):
    """torch_qplugin's plain form (no quantized dtypes) of its converted model q, eager
    and compiled (torch_qplugin.deploy.compile: torch.compile(p, fullgraph=True), batch dim
    dynamic; the first call, in the agreement pass, compiles): exact (deploy's default:
    every op eager's kernel, C++ wrapper) and fused (exact=False, inductor's default mode: a
    dynamic model's float layers may differ from eager by an ulp, docs/deploy.md)."""
    if tk.name != "qplugin":
        return []
    label = f"{tk.label}{kind} plain"
    try:
        from torch_qplugin.quantization import to_plain

        p = to_plain(q)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return [Variant("qplugin_plain", f"{label} eager", reason=f"to_plain failed: {short_reason(e)}")]
    out = [Variant("qplugin_plain", f"{label} eager", p, model=p)]
    if calib is not None:
        out.append(ours_onnx_variant(p, calib, args))
    from torch_qplugin import deploy

    for key, what, exact in (
        ("qplugin_compiled", "compiled", True),
        ("qplugin_compiled_fused", "compiled fused", False),
    ):
        try:
            out.append(Variant(key, f"{label} {what}", deploy.compile(p, exact=exact)))
        except Exception as e:  # noqa: BLE001
            out.append(Variant(key, f"{label} {what}", reason=f"compile failed: {short_reason(e)}"))
    return out


def count_macs(model, x):
    """Multiply-accumulates of one forward pass in the float model's conv / linear layers."""
    total = [0]

    def hook(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            total[0] += out.numel() * (mod.in_channels // mod.groups) * k
        elif isinstance(mod, nn.Linear):
            total[0] += out.numel() * mod.in_features

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hs:
            h.remove()
    return total[0]


def peak_line(fp32, args, timing, cfgs, variants):
    """The int8 work per image against the machine's u8*s8 peak (scripts/peak_int8.py, measured
    now): what rate torch's and our int8 models reach, and what 0.9x torch's time would need."""
    try:
        from bench_rows._peak import measure_peak

        peak = measure_peak()["gops"]
    except Exception as e:  # noqa: BLE001
        return f"Peak: not measured ({short_reason(e)})."
    macs = count_macs(fp32, torch.randn(1, 3, args.size, args.size))
    parts = []
    for key, lab in (("torch_script", "torch int8 scripted"), ("qplugin_script", "torch_qplugin scripted")):
        if not any(v.key == key and v.fn for v in variants):
            continue
        rates = []
        for nt, bs in cfgs:
            g = 2 * macs * bs / timing[(nt, bs)][key] / 1e9
            rates.append(f"{g:.0f} GOPS ({100 * g / (peak * nt):.0f}%)")
        parts.append(f"{lab}: " + " / ".join(rates))
    need = []
    if any(v.key == "torch_script" and v.fn for v in variants):
        for nt, bs in cfgs:
            g = 2 * macs * bs / timing[(nt, bs)]["torch_script"] / 1e9 / 0.9
            need.append(f"{100 * g / (peak * nt):.0f}%")
    return (
        f"Int8 work: {macs / 1e9:.3f} GMAC per image (every kernel tap, padding included: torch's kernels "
        f"skip the taps that fall in the padding when the input zero point is 0, so its share can pass "
        f"100%). Measured u8*s8 peak in this run: {peak:.0f} GOPS per core "
        f"(scripts/peak_int8.py). Achieved rate over the whole model, and its share of threads x peak, per "
        f"column — "
        + "; ".join(parts)
        + ". 0.9x torch's time would need the whole model to run at "
        + " / ".join(need)
        + " of peak."
    )


def ort_variant(fp32, calib, args):
    """ONNX Runtime static int8 (QDQ, per-channel weights), the peer to beat. Optional."""
    label = "ONNX Runtime int8"
    try:
        import onnxruntime as ort  # noqa: F401  (the availability check)
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    except Exception as e:  # noqa: BLE001
        return Variant("ort", label, reason=f"onnxruntime not importable ({short_reason(e)}); optional extra")
    try:
        import atexit
        import shutil
        import tempfile

        tmp = tempfile.mkdtemp(prefix="qplugin_ort_")
        atexit.register(shutil.rmtree, tmp, True)  # the sessions hold the model in memory
        f32, i8 = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "m.int8.onnx")
        torch.onnx.export(
            fp32,
            (calib[0][:1],),
            f32,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "n"}, "y": {0: "n"}},
            opset_version=17,
            dynamo=False,
        )

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter([{"x": xb.numpy()} for xb in calib])

            def get_next(self):
                return next(self.it, None)

        quantize_static(
            f32,
            i8,
            Reader(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        return _ort_variant("ort", label, i8, args)
    except Exception as e:  # noqa: BLE001
        return Variant("ort", label, reason=f"ONNX export/quantization failed: {short_reason(e)}")


def _ort_variant(key, label, path, args):
    """A Variant running the ONNX file ``path`` on ONNX Runtime's CPU provider."""
    import onnxruntime as ort

    def session(threads):
        # ORT's thread count is fixed when the session is made: one session per thread count.
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        return lambda x: torch.from_numpy(sess.run(None, {name: x.numpy()})[0])

    v = Variant(key, label, session(args.current_threads))
    v.for_threads = session
    return v


def ours_onnx_variant(p, calib, args):
    """Our plain model exported by torch_qplugin.deploy.export_onnx, run by ONNX Runtime."""
    label = "torch_qplugin exported, ONNX Runtime"
    try:
        import tempfile
        import warnings

        from torch_qplugin import deploy
        import atexit
        import shutil

        tmp = tempfile.mkdtemp(prefix="qplugin_onnx_")
        atexit.register(shutil.rmtree, tmp, True)  # the sessions hold the model in memory
        path = os.path.join(tmp, "ours.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.onnx's notes while exporting
            deploy.export_onnx(p, (calib[0][:1],), path)
        return _ort_variant("qplugin_onnx", label, path, args)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return Variant("qplugin_onnx", label, reason=f"export_onnx / onnxruntime failed: {short_reason(e)}")


def dynamic_variants(name, args):
    factory, _ = DYNAMIC_MODELS[name]
    torch.manual_seed(0)
    fp32 = factory().eval()
    out = [Variant("fp32", "fp32 eager", fp32, model=fp32)]
    for tk in (TorchAO(), QPlugin()):
        try:
            q = tk.quantize_dynamic(fp32, types=(nn.Linear, nn.LSTM))
        except Exception as e:  # noqa: BLE001
            why = str(e) if isinstance(e, Unavailable) else short_reason(e)
            out += [
                Variant(f"{tk.name}_eager", f"{tk.label} dynamic eager", reason=why),
                Variant(f"{tk.name}_script", f"{tk.label} dynamic scripted", reason=why),
            ]
            continue
        out.append(Variant(f"{tk.name}_eager", f"{tk.label} dynamic eager", q, model=q))
        out += plain_variant(tk, q, " dynamic")
        try:
            fn, s = _script(q)
            out.append(Variant(f"{tk.name}_script", f"{tk.label} dynamic scripted", fn, model=s))
        except Exception as e:  # noqa: BLE001
            out.append(
                Variant(
                    f"{tk.name}_script",
                    f"{tk.label} dynamic scripted",
                    reason=f"torch.jit.script failed: {short_reason(e)}",
                )
            )
    return fp32, out


# ----------------------------------------------------------------------------- measuring


@torch.no_grad()
def agreement_rows(variants, x):
    ref = variants[0].fn(x)
    rows, outs = {}, {}
    for v in variants[1:]:
        if v.fn is None:
            continue
        try:
            outs[v.key] = v.fn(x)
            cos, top1 = H.agreement(outs[v.key], ref)
            rows[v.key] = (cos, top1)
        except Exception as e:  # noqa: BLE001
            v.reason, v.fn = f"inference failed: {short_reason(e)}", None
    for key in ("qplugin_compiled", "qplugin_compiled_fused"):
        if key in outs and "qplugin_plain" in outs:
            rows[f"{key}_same"] = torch.equal(outs[key], outs["qplugin_plain"])
    return rows


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def time_config(variants, x, rounds, min_time, clock=time.perf_counter):
    fns = {v.key: v.fn for v in variants if v.fn is not None}
    return H.time_interleaved(fns, x, rounds=rounds, min_time=min_time, clock=clock)


def profile_top_ops(fn, x, n=8):
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad():
        fn(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                fn(x)
    evs = [e for e in prof.key_averages() if not e.key.startswith("forward") and "ProfilerStep" not in e.key]
    total = sum(e.self_cpu_time_total for e in evs) or 1
    evs.sort(key=lambda e: e.self_cpu_time_total, reverse=True)
    return [
        (e.key, e.self_cpu_time_total / total * 100, e.self_cpu_time_total / 3 / 1e3, e.count // 3) for e in evs[:n]
    ]


def digits_agreement(args):
    """Cosine / top-1 agreement with fp32 on the digits demo's real test set (static PTQ)."""
    x_tr, y_tr, x_te, y_te = H.load_digits_split()
    torch.manual_seed(0)
    fp32 = H.train(models.DigitsCNN(), x_tr, y_tr, epochs=args.digits_epochs, lr=3e-3, desc="digits fp32")
    ref = H.predict(fp32, x_te)
    rows = [("fp32", H.accuracy(ref, y_te), 1.0, 1.0, None)]
    for tk in (TorchAO(), QPlugin()):
        try:
            p = tk.prepare_static(fp32)
            H.calibrate(p, x_tr, desc=f"calibrate [{tk.name}]")
            q = tk.convert(p)
            lo = H.predict(q, x_te)
            cos, top1 = H.agreement(lo, ref)
            rows.append((tk.label, H.accuracy(lo, y_te), cos, top1, None))
        except Exception as e:  # noqa: BLE001
            rows.append((tk.label, None, None, None, str(e) if isinstance(e, Unavailable) else short_reason(e)))
    return rows


# ----------------------------------------------------------------------------- report


def fmt_t(t):
    return "-" if t is None else (f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench.py models", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", nargs="*", default=list(STATIC_MODELS) + list(DYNAMIC_MODELS))
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 8])
    ap.add_argument("--size", type=int, default=224, help="image height/width")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds per variant per round")
    ap.add_argument("--calib-batches", type=int, default=4)
    ap.add_argument("--digits-epochs", type=int, default=8)
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall: elapsed time; cpu: this process's CPU time (robust to a loaded machine, 1 thread)",
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, little time per variant")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--no-digits", action="store_true", help="skip the digits demo's real-data agreement")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--out", default=None, help="default docs/benchmarks_models.md (--isa X: docs/benchmarks_models_X.md)"
    )
    ap.add_argument(
        "--isa",
        choices=["avx2", "avxvnni"],
        default=None,
        help="ours on this kernel path, torch's fbgemm / oneDNN / ATen capped at AVX2",
    )
    ap.add_argument(
        "--variants",
        nargs="*",
        default=None,
        help="variant keys to build and time (fp32 and torch's int8 always run: the ratios' "
        "baselines), e.g. torch_script qplugin_eager qplugin_plain ort",
    )
    args = ap.parse_args(argv)
    args.out = args.out or str(
        ROOT / "docs" / (f"benchmarks_models_{args.isa}.md" if args.isa else "benchmarks_models.md")
    )
    keep = None if args.variants is None else set(args.variants) | {"fp32", "torch_eager", "torch_script"}
    args.want = lambda *keys: keep is None or any(k in keep for k in keys)
    _ensure_malloc_env(args.isa)
    quiet_deprecations()
    if args.quick:
        args.rounds, args.min_time, args.calib_batches, args.digits_epochs = 1, 0.05, 2, 4
    try:
        import torch_qplugin

        qp = f"torch_qplugin {torch_qplugin.__version__} (kernels: {torch_qplugin.active_isa()})"
    except Exception as e:  # noqa: BLE001
        qp = f"torch_qplugin NOT importable: {short_reason(e)}"
    print(qp, flush=True)
    torch.manual_seed(0)

    sections, chart = [], {}
    for name in args.models:
        is_static = name in STATIC_MODELS
        print(f"== {name}", flush=True)
        torch.set_num_threads(max(args.threads))
        args.current_threads = max(args.threads)
        if is_static:
            calib = [torch.randn(4, 3, args.size, args.size) for _ in range(args.calib_batches)]
            fp32, variants = static_variants(name, args, calib)
            x_agree = torch.randn(32, 3, args.size, args.size)
        else:
            fp32, variants = dynamic_variants(name, args)
            seq = DYNAMIC_MODELS[name][1]
            x_agree = torch.randint(0, 10000, (32, seq))
        variants = [v for v in variants if args.want(v.key)]
        agree = agreement_rows(variants, x_agree)
        timing = {}
        for nt in args.threads:
            torch.set_num_threads(nt)
            args.current_threads = nt
            for v in variants:
                if v.fn is not None and getattr(v, "for_threads", None):
                    v.fn = v.for_threads(nt)
            for bs in args.batches:
                x = (
                    torch.randn(bs, 3, args.size, args.size)
                    if is_static
                    else torch.randint(0, 10000, (bs, DYNAMIC_MODELS[name][1]))
                )
                print(f"  timing threads={nt} batch={bs} ...", flush=True)
                timing[(nt, bs)] = time_config(variants, x, args.rounds, args.min_time, CLOCKS[args.clock])
        # --- table: one row per variant, one column per (threads, batch)
        cfgs = [(nt, bs) for nt in args.threads for bs in args.batches]
        torch_ref_key = "torch_script" if any(v.key == "torch_script" and v.fn for v in variants) else "torch_eager"
        headers = (
            ["Variant"]
            + [f"{nt}T b={bs}" for nt, bs in cfgs]
            + ["vs fp32", "vs torch int8", "cosine vs fp32", "top-1 = fp32"]
        )
        rows, notes = [], []
        for v in variants:
            if v.fn is None:
                rows.append([v.label] + ["-"] * (len(headers) - 1))
                notes.append(f"- {v.label}: not run — {v.reason}")
                continue
            ts = [timing[c].get(v.key) for c in cfgs]
            vs_fp32 = " / ".join(f"{timing[c][v.key] / timing[c]['fp32']:.2f}" for c in cfgs)
            vs_torch = (
                "-"
                if v.key.startswith(("fp32", "torch")) or torch_ref_key not in timing[cfgs[0]]
                else " / ".join(f"{timing[c][v.key] / timing[c][torch_ref_key]:.2f}" for c in cfgs)
            )
            cos, top1 = agree.get(v.key, (1.0, 1.0) if v.key == "fp32" else (None, None))
            rows.append(
                [v.label]
                + [fmt_t(t) for t in ts]
                + [
                    vs_fp32,
                    vs_torch,
                    "-" if cos is None else f"{cos:.4f}",
                    "-" if top1 is None else f"{top1 * 100:.0f}%",
                ]
            )
            for c in cfgs:
                chart.setdefault(c, {})[(name, v.label.replace(" dynamic", ""))] = timing[c][v.key] / timing[c]["fp32"]
        shape = f"{args.size}x{args.size} images" if is_static else f"token sequences of {DYNAMIC_MODELS[name][1]}"
        sec = [
            f"### {name} ({'static' if is_static else 'dynamic'} int8, {shape})",
            "",
            f"Time per call ({'process CPU time, ' if args.clock == 'cpu' else ''}median of {args.rounds} "
            f"interleaved rounds); ratios listed per column "
            f"({', '.join(f'{nt}T b={bs}' for nt, bs in cfgs)}); 'vs torch int8' is against torch's "
            f"{'scripted' if torch_ref_key == 'torch_script' else 'eager'} int8 model. Agreement on 32 random inputs.",
            "",
            H.markdown_table(headers, rows),
        ]
        if notes:
            sec += [""] + notes
        if all(k in timing[c] for c in cfgs for k in ("qplugin_plain", "qplugin_eager")):
            sec += [
                "",
                "torch_qplugin plain form / quantized-dtype form (eager, same weights, bit-identical "
                "outputs): "
                + " / ".join(f"{timing[c]['qplugin_plain'] / timing[c]['qplugin_eager']:.3f}" for c in cfgs)
                + " (target: <= 1.05).",
            ]
        for key, what in (("qplugin_compiled", "compiled (exact)"), ("qplugin_compiled_fused", "compiled fused")):
            if all(k in timing[c] for c in cfgs for k in (key, "qplugin_plain")):
                same = (
                    "same outputs byte for byte"
                    if agree.get(f"{key}_same")
                    else "outputs NOT byte for byte equal: float layers, docs/deploy.md"
                )
                sec += [
                    "",
                    f"torch_qplugin plain {what} / plain eager ({same} on the agreement batch): "
                    + " / ".join(f"{timing[c][key] / timing[c]['qplugin_plain']:.3f}" for c in cfgs)
                    + " (target: <= 1).",
                ]
        if is_static:
            sec += ["", peak_line(fp32, args, timing, cfgs, variants)]
        # --- profile the fastest int8 variant that ran
        if not args.no_profile:
            for key in ("qplugin_script", "qplugin_eager", "torch_script", "torch_eager"):
                v = next((v for v in variants if v.key == key and v.fn is not None), None)
                if v is None:
                    continue
                torch.set_num_threads(1)
                bs = max(args.batches)
                x = (
                    torch.randn(bs, 3, args.size, args.size)
                    if is_static
                    else torch.randint(0, 10000, (bs, DYNAMIC_MODELS[name][1]))
                )
                try:
                    top = profile_top_ops(v.fn, x)
                except Exception as e:  # noqa: BLE001
                    sec += ["", f"Profile of {v.label} failed: {short_reason(e)}"]
                    break
                sec += [
                    "",
                    f"Top ops by self CPU time — {v.label}, 1 thread, batch {bs} (torch.profiler):",
                    "",
                    H.markdown_table(
                        ["op", "self CPU %", "ms per call", "calls per call"],
                        [(k, f"{p:.1f}%", f"{ms:.2f}", c) for k, p, ms, c in top],
                    ),
                ]
                if isinstance(v.model, torch.jit.ScriptModule):
                    ops = graph_op_counts(v.model)
                    sec += [
                        "",
                        f"Scripted graph: {ops['qplugin']} qplugin:: calls, {ops['quantized']} quantized:: calls.",
                    ]
                break
        sections.append("\n".join(sec))
        print(sections[-1], flush=True)

    digits = [] if args.no_digits else digits_agreement(args)
    drows = [
        (
            lab,
            "-" if acc is None else f"{acc * 100:.2f}%",
            "-" if cos is None else f"{cos:.5f}",
            "-" if t1 is None else f"{t1 * 100:.1f}%",
            why or "",
        )
        for lab, acc, cos, t1, why in digits
    ]
    dsec = "\n".join(
        [
            "### Output agreement on real data (digits demo CNN, static PTQ, 359 test images)",
            "",
            H.markdown_table(["backend", "test accuracy", "cosine vs fp32", "top-1 = fp32", "note"], drows),
        ]
    )
    if digits:
        sections.append(dsec)
        print(dsec)

    from benchlib.ops import cpu_description

    capped = (
        f" torch capped to what an {args.isa} CPU gives it: ATen capability "
        f"{torch.backends.cpu.get_cpu_capability()}, FBGEMM_ENABLE_INSTRUCTIONS="
        f"{os.environ.get('FBGEMM_ENABLE_INSTRUCTIONS')}, ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA')}."
        if args.isa
        else ""
    )
    env = (
        f"{cpu_description()}, {os.cpu_count()} CPU(s) visible, torch {torch.__version__}, "
        f"{qp}; run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.{capped} "
        f"Command: `{command()}`. "
        f"Targets: every static model <= 0.9x torch x86 int8's scripted time at 1 and 2 threads, batch 1 "
        f"and 8, except where that needs more than 90% of the measured int8 peak (there: >= 90% of it), "
        f"and at least 1.7x faster at 2 threads than at 1 where the work is compute-bound; dynamic LSTM / "
        f"Transformer <= 0.9x torch's dynamic int8."
    )
    doc = "\n\n".join(["## Model benchmarks (scripts/bench.py models)", env] + sections) + "\n"
    if not args.no_write:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        png = out.with_suffix(".png")
        groups = list(dict.fromkeys(g for c in chart for g, _ in chart[c]))
        series = list(dict.fromkeys(s for c in chart for _, s in chart[c] if s != "fp32 eager"))
        panels = [
            (
                f"time / fp32, {nt} thread(s), batch {bs} (lower is faster)",
                {k: v for k, v in chart[(nt, bs)].items() if k[1] != "fp32 eager"},
            )
            for nt, bs in chart
        ]
        path, why = H.bar_chart(str(png), "int8 model time relative to fp32", groups, series, panels)
        if path:
            doc += f"\n![time relative to fp32]({png.name})\n"
        else:
            doc += f"\n(chart not written: {why})\n"
        out.write_text(doc)
        print(f"wrote {out}" + (f" and {png}" if path else ""))
    return 0
