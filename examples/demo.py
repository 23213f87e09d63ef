"""End-to-end demo: train a small CNN on real data, quantize it three ways, compare backends.

    python examples/demo.py                 # (bash examples/run_demo.sh sets everything up first)

1. Loads scikit-learn's bundled handwritten digits (1797 8x8 images; nothing is downloaded)
   and trains examples/models/digits_cnn.py in fp32 (seconds).
2. Quantizes it three ways — post-training static (calibrated on the training set), dynamic
   (int8 Linear weights) and quantization-aware training — with torch_qplugin, and the same
   three ways with torch's own int8 backend (torch.ao.quantization, x86 engine) as the baseline.
   torch_qplugin's models also appear in plain form (torch_qplugin.quantization.to_plain: no
   quantized-dtype tensor anywhere, what runs once torch drops quint8; bit-identical outputs),
   eager and as the AOTInductor package a deployment ships (torch_qplugin.deploy.aoti_package).
3. Scripts (torch.jit.script) and saves every model (the plain forms: torch.save of the module,
   they take QTensors, which TorchScript cannot, and the AOTI package), then reloads them all in a FRESH Python
   process (which only imports torch_qplugin) and measures there: test accuracy, agreement with
   the fp32 logits, file size, latency at batch 1 and 32, whether the reloaded model gives
   exactly the in-process outputs, and which kernels its graph calls.
4. Prints one table and writes it with a PNG chart to --out (default examples/out/).

A variant that cannot run (missing piece, torch backend removed, ...) is reported with the
reason; no number in the table is made up.
"""

import argparse
import json
import os
import subprocess
import sys
import time

# The demo's helpers live beside it; torch_qplugin comes from the environment (run_demo.sh
# installs it), never from the checkout by path, so the demo tests what users install.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import torch  # noqa: E402

import harness as H  # noqa: E402
from toolkits import QPlugin, TorchAO, Unavailable, graph_op_counts, quiet_deprecations, short_reason  # noqa: E402

METHODS = [("static", "PTQ static"), ("dynamic", "dynamic"), ("qat", "QAT")]
PLAIN_LABEL = "torch_qplugin plain (no quantized dtypes)"
AOTI_LABEL = "torch_qplugin plain, AOTInductor package"


def _import_qplugin():
    try:
        import torch_qplugin  # noqa: F401

        return None
    except Exception as e:  # noqa: BLE001
        return short_reason(e)


# ----------------------------------------------------------------------------- building


def build_variant(tk, method, fp32, data, args):
    x_tr, y_tr, _, _ = data
    if method == "static":
        prepared = tk.prepare_static(fp32)
        H.calibrate(prepared, x_tr, batch_size=64, max_batches=args.calib_batches, desc=f"calibrate [{tk.name}]")
        return tk.convert(prepared)
    if method == "dynamic":
        return tk.quantize_dynamic(fp32)
    if method == "qat":
        prepared = tk.prepare_qat(fp32)
        H.train(
            prepared,
            x_tr,
            y_tr,
            epochs=args.qat_epochs,
            lr=3e-4,
            desc=f"QAT [{tk.name}]",
            seed=1,
            freeze_observers_after=max(1, args.qat_epochs - 1),
            freeze_bn_after=max(1, args.qat_epochs - 1),
        )
        return tk.convert(prepared.eval())
    raise ValueError(method)


def plain_entry(method, qplugin_entry):
    """The plain form (no quantized dtypes) of torch_qplugin's model for ``method``."""
    e = dict(key=f"{method}_plain", method=method, backend="plain")
    if "model" not in qplugin_entry:
        e["reason"] = f"no torch_qplugin {method} model to convert ({qplugin_entry.get('reason')})"
        return e
    try:
        from torch_qplugin.quantization import to_plain

        e["model"] = to_plain(qplugin_entry["model"])
    except Exception as ex:  # noqa: BLE001 - report, never hide
        e["reason"] = f"to_plain failed: {short_reason(ex)}"
    return e


def aoti_entry(method, plain):
    """The AOTInductor package of the plain model ``plain`` (made in build_all's save step)."""
    e = dict(key=f"{method}_plain_aoti", method=method, backend="plain_aoti")
    if "model" not in plain:
        e["reason"] = f"no plain {method} model to package ({plain.get('reason')})"
    else:
        e["model"] = plain["model"]
    return e


def save_aoti(m, e, x, out):
    """Exports the plain model m (batch dimension dynamic) and packages it with AOTInductor."""
    from torch_qplugin import deploy

    with torch.no_grad():
        ep = deploy.export(m, (x[:2].contiguous(),))
        path = deploy.aoti_package(ep, os.path.join(out, f"{e['key']}.pt2"))
        pkg = deploy.aoti_load(path)
        e["path"], e["format"] = path, "aoti"
        e["ref_path"] = os.path.join(out, f"{e['key']}.ref.pt")
        torch.save(H.predict(pkg, x), e["ref_path"])
    e["size"] = os.path.getsize(path)


def build_all(args, data):
    x_tr, y_tr, x_te, y_te = data
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    from models import DigitsCNN

    t0 = time.perf_counter()
    fp32 = H.train(DigitsCNN(), x_tr, y_tr, epochs=args.epochs, lr=3e-3, desc="train fp32")
    print(
        f"fp32 training: {time.perf_counter() - t0:.1f}s, test accuracy {H.accuracy(H.predict(fp32, x_te), y_te):.4f}"
    )

    entries = [dict(key="fp32", method="fp32", backend="fp32", model=fp32)]
    for method, _ in METHODS:
        for tk in (TorchAO(), QPlugin()):
            e = dict(key=f"{method}_{tk.name}", method=method, backend=tk.name)
            try:
                e["model"] = build_variant(tk, method, fp32, data, args)
            except Unavailable as ex:
                e["reason"] = f"{method} quantization: {ex}"
            except Exception as ex:  # noqa: BLE001 - report, never hide
                e["reason"] = f"{method} quantization failed: {short_reason(ex)}"
            entries.append(e)
            if tk.name == "qplugin":
                entries.append(plain_entry(method, e))
                entries.append(aoti_entry(method, entries[-1]))

    manifest = []
    for e in entries:
        m = e.pop("model", None)
        if m is not None:
            try:
                e["eager_acc"] = H.accuracy(H.predict(m, x_te), y_te)
            except Exception as ex:  # noqa: BLE001
                e["reason"] = f"eager inference failed: {short_reason(ex)}"
                m = None
        if m is not None and e["backend"] == "plain_aoti":
            try:
                save_aoti(m, e, x_te, args.out)
            except Exception as ex:  # noqa: BLE001
                e["reason"] = f"AOTInductor packaging failed: {short_reason(ex)}"
        elif m is not None and e["backend"] == "plain":  # pickled module (QTensor inside: no TorchScript)
            e["path"] = os.path.join(args.out, f"{e['key']}.pt")
            e["ref_path"] = os.path.join(args.out, f"{e['key']}.ref.pt")
            e["format"] = "pickle"
            torch.save(m, e["path"])
            torch.save(H.predict(m, x_te), e["ref_path"])
            e["size"] = os.path.getsize(e["path"])
        elif m is not None:
            try:
                s = torch.jit.script(m)
            except Exception as ex:  # noqa: BLE001
                e["reason"] = f"torch.jit.script failed: {short_reason(ex)}"
                s = None
            if s is not None:
                e["path"] = os.path.join(args.out, f"{e['key']}.pt")
                e["ref_path"] = os.path.join(args.out, f"{e['key']}.ref.pt")
                torch.jit.save(s, e["path"])
                torch.save(H.predict(s, x_te), e["ref_path"])
                e["size"] = os.path.getsize(e["path"])
        manifest.append(e)
    return manifest


# ----------------------------------------------------------------------------- fresh-process evaluation


def evaluate_saved(manifest_path, threads):
    """Runs in a fresh interpreter: load every saved model and measure it."""
    quiet_deprecations()
    qplugin_err = _import_qplugin()
    torch.set_num_threads(threads)
    with open(manifest_path) as f:
        manifest = json.load(f)
    _, _, x_te, y_te = H.load_digits_split()
    fp32_ref = None
    loaded = {}
    results = {}
    for e in manifest:
        if "path" not in e:
            continue
        r = results.setdefault(e["key"], {})
        try:
            if e.get("format") == "aoti":
                from torch_qplugin import deploy

                m = deploy.aoti_load(e["path"])
            elif e.get("format") == "pickle":
                m = torch.load(e["path"], weights_only=False)
            else:
                m = torch.jit.load(e["path"])
        except Exception as ex:  # noqa: BLE001
            extra = f" (import torch_qplugin failed: {qplugin_err})" if qplugin_err else ""
            r["reason"] = f"reload failed: {short_reason(ex)}{extra}"
            continue
        try:
            logits = H.predict(m, x_te)
        except Exception as ex:  # noqa: BLE001
            r["reason"] = f"inference after reload failed: {short_reason(ex)}"
            continue
        if e["key"] == "fp32":
            fp32_ref = logits
        r["acc"] = H.accuracy(logits, y_te)
        r["identical"] = bool(torch.equal(logits, torch.load(e["ref_path"])))
        r["ops"] = graph_op_counts(m) if isinstance(m, torch.jit.ScriptModule) else {}
        r["logits"] = logits
        loaded[e["key"]] = m
    for k, r in results.items():
        if "logits" in r:
            if fp32_ref is not None:
                r["cos"], r["top1_agree"] = H.agreement(r["logits"], fp32_ref)
            del r["logits"]
    for bs in (1, 32):
        x = x_te[:bs].contiguous()
        times = H.time_interleaved({k: m for k, m in loaded.items()}, x, rounds=5, min_time=0.06)
        for k, t in times.items():
            results[k][f"lat{bs}"] = t
    return results


# ----------------------------------------------------------------------------- report


def fmt_us(t):
    return "-" if t is None else (f"{t * 1e6:.0f} µs" if t < 1e-2 else f"{t * 1e3:.1f} ms")


def report(manifest, results, args):
    fp32 = results.get("fp32", {})
    torch_rows = {e["method"]: results.get(e["key"], {}) for e in manifest if e["backend"] == "torch"}
    headers = [
        "Model",
        "Backend",
        "Test acc",
        "Top-1 = fp32",
        "Cosine vs fp32",
        "Size on disk",
        "Latency b=1",
        "Latency b=32",
        "b=1 vs fp32",
        "b=32 vs fp32",
        "vs torch int8 (b=1 / b=32)",
        "Reload identical",
        "Graph ops",
    ]
    rows, notes, chart = [], [], {}
    method_name = dict(METHODS, fp32="fp32")
    backend_name = {
        "fp32": "fp32 (eager->script)",
        "torch": TorchAO.label,
        "qplugin": QPlugin.label,
        "plain": PLAIN_LABEL,
        "plain_aoti": AOTI_LABEL,
    }
    for e in manifest:
        r = dict(results.get(e["key"], {}))
        reason = e.get("reason") or r.get("reason")
        name, backend = method_name[e["method"]], backend_name[e["backend"]]
        if reason or "lat1" not in r:
            rows.append([name, backend, "not run"] + ["-"] * (len(headers) - 3))
            notes.append(f"- {name} / {backend}: could not run — {reason or 'no result'}")
            continue

        def ratio(a, b):
            return "-" if (a is None or not b) else f"{a / b:.2f}x"

        vs_torch = "-"
        if e["backend"] in ("qplugin", "plain", "plain_aoti"):
            tr = torch_rows.get(e["method"], {})
            if "lat1" in tr:
                vs_torch = f"{r['lat1'] / tr['lat1']:.2f}x / {r['lat32'] / tr['lat32']:.2f}x"
        ops = r.get("ops", {})
        rows.append(
            [
                name,
                backend,
                f"{r['acc'] * 100:.2f}%",
                f"{r.get('top1_agree', float('nan')) * 100:.1f}%",
                f"{r.get('cos', float('nan')):.4f}",
                f"{e['size'] / 1024:.0f} KiB",
                fmt_us(r["lat1"]),
                fmt_us(r["lat32"]),
                ratio(r["lat1"], fp32.get("lat1")),
                ratio(r["lat32"], fp32.get("lat32")),
                vs_torch,
                "yes" if r["identical"] else "NO",
                f"qplugin::{ops.get('qplugin', 0)} quantized::{ops.get('quantized', 0)}"
                if ops
                else ("AOTI package" if e["backend"] == "plain_aoti" else "eager (pickled)"),
            ]
        )
        for metric, v in (
            ("acc", r["acc"] * 100),
            ("size", e["size"] / 1024),
            ("lat1", r["lat1"] * 1e6),
            ("lat32", r["lat32"] * 1e6),
        ):
            groups = [method_name[m] for m, _ in METHODS]
            if e["method"] == "fp32":  # fp32 is the reference bar in every group
                for g in groups:
                    chart.setdefault(metric, {})[(g, "fp32")] = v
            else:
                chart.setdefault(metric, {})[(name, backend)] = v
    table = H.markdown_table(headers, rows)
    ours = {(e["method"], e["backend"]): results.get(e["key"], {}) for e in manifest}
    deployed = []
    for method, name in METHODS:
        q, a = ours.get((method, "qplugin"), {}), ours.get((method, "plain_aoti"), {})
        if "lat1" in q and "lat1" in a:
            deployed.append(f"{name} {a['lat1'] / q['lat1']:.2f}x / {a['lat32'] / q['lat32']:.2f}x")
    if deployed:
        table += "\nPlain AOTInductor package / torch_qplugin scripted (b=1 / b=32): " + ", ".join(deployed) + "\n"
    env = (
        f"torch {torch.__version__}, {args.threads} thread(s), "
        f"{os.cpu_count()} CPU(s), test set {results.get('_n_test', 360)} images; latency = median "
        f"per call of the reloaded model (scripted; plain: the pickled module or the AOTI package), "
        f"interleaved rounds"
    )
    text = f"# torch_qplugin demo: digits CNN, fp32 vs int8\n\n{env}\n\n{table}\n"
    if notes:
        text += "\nVariants that could not run:\n" + "\n".join(notes) + "\n"
    md_path = os.path.join(args.out, "demo_results.md")
    with open(md_path, "w") as f:
        f.write(text)
    print()
    print(text)
    groups = [n for _, n in METHODS]
    series = ["fp32", TorchAO.label, QPlugin.label, PLAIN_LABEL, AOTI_LABEL]
    panels = [
        ("Test accuracy (%)", chart.get("acc", {})),
        ("Size on disk (KiB)", chart.get("size", {})),
        ("Latency, batch 1 (µs)", chart.get("lat1", {})),
        ("Latency, batch 32 (µs)", chart.get("lat32", {})),
    ]
    png, why = H.bar_chart(
        os.path.join(args.out, "demo_results.png"),
        f"digits CNN: fp32 vs int8 ({args.threads} thread(s))",
        groups,
        series,
        panels,
    )
    print(f"table: {md_path}")
    print(f"chart: {png}" if png else f"chart: not written — {why}")
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="where models, table and chart go")
    ap.add_argument("--epochs", type=int, default=12, help="fp32 training epochs")
    ap.add_argument("--qat-epochs", type=int, default=3, help="QAT fine-tuning epochs")
    ap.add_argument("--calib-batches", type=int, default=None, help="calibration batches (default: all)")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (training and timed inference)")
    ap.add_argument("--evaluate", metavar="MANIFEST", help=argparse.SUPPRESS)  # fresh-process mode
    args = ap.parse_args(argv)
    quiet_deprecations()

    if args.evaluate:
        res = evaluate_saved(args.evaluate, args.threads)
        with open(os.path.join(os.path.dirname(args.evaluate), "eval.json"), "w") as f:
            json.dump(res, f)
        return 0

    t_start = time.perf_counter()
    torch.set_num_threads(args.threads)  # training too: tiny model, and robust on a busy machine
    err = _import_qplugin()
    if err:
        print(f"NOTE: torch_qplugin could not be imported ({err}); its rows will say why they did not run.")
    data = H.load_digits_split()
    print(f"digits: {len(data[1])} train / {len(data[3])} test images (scikit-learn's bundled copy)")
    manifest = build_all(args, data)
    man_path = os.path.join(args.out, "manifest.json")
    with open(man_path, "w") as f:
        json.dump(manifest, f, indent=1)
    print("reloading the saved models in a fresh process and timing them ...", flush=True)
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--evaluate", man_path, "--threads", str(args.threads)]
    )
    results = {}
    if proc.returncode != 0:
        for e in manifest:
            e.setdefault("reason", f"fresh-process evaluation exited with status {proc.returncode}")
    else:
        with open(os.path.join(args.out, "eval.json")) as f:
            results = json.load(f)
    results["_n_test"] = len(data[3])
    report(manifest, results, args)
    print(f"total demo time: {time.perf_counter() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
