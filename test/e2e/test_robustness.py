"""Robustness of the demo model (examples/models/digits_cnn.py) quantized by torch_qplugin.

- 10k repeated inferences: identical results, flat resident memory (no leak).
- Two Python threads running the same model concurrently give the single-thread results.
- Loading a truncated or tampered saved model raises a clear error and never crashes the
  process (checked in a subprocess, whose death by a signal would fail the test).
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import zipfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import harness as H  # noqa: E402
from models import DigitsCNN  # noqa: E402
from toolkits import QPlugin, TorchAO  # noqa: E402

pytestmark = [
    # torch 2.13 deprecates TorchScript itself; scripting is what these tests exercise.
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated"),
    pytest.mark.filterwarnings(r"ignore:Please use quant_min and quant_max:UserWarning"),
]

# The toolkit under test is torch_qplugin; QPLUGIN_E2E_TOOLKIT=torch runs the same checks on
# torch's own int8 backend (to compare behaviours while developing).
_TOOLKIT = TorchAO() if os.environ.get("QPLUGIN_E2E_TOOLKIT") == "torch" else QPlugin()


@pytest.fixture(scope="module", autouse=True)
def one_intra_op_thread():
    # The demo's setting; also keeps OpenMP barriers from spinning on a shared, oversubscribed CI box.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def data():
    return H.load_digits_split()


@pytest.fixture(scope="module")
def demo(data, tmp_path_factory):
    """The demo CNN, trained one epoch on the digits, static-quantized, scripted and saved."""
    x_tr, y_tr, x_te, _ = data
    torch.manual_seed(0)
    fp32 = H.train(DigitsCNN(), x_tr, y_tr, epochs=1, lr=3e-3, desc="fp32", seed=0)
    prepared = _TOOLKIT.prepare_static(fp32)
    H.calibrate(prepared, x_tr, max_batches=8)
    q = _TOOLKIT.convert(prepared)
    scripted = torch.jit.script(q)
    path = tmp_path_factory.mktemp("demo") / "digits_int8.pt"
    torch.jit.save(scripted, str(path))
    return {"eager": q, "scripted": scripted, "path": path, "x": x_te}


def test_demo_model_is_quantized_by_toolkit(demo):
    # The checks below must exercise int8 kernels, not an fp32 model.
    g = str(demo["scripted"].inlined_graph)
    if isinstance(_TOOLKIT, QPlugin):
        assert "qplugin::" in g and "quantized::" not in g
    else:
        assert "quantized::" in g


@pytest.mark.parametrize("kind", ["scripted", "eager"])
def test_repeated_inference_identical_and_memory_flat(demo, kind):
    m = demo[kind]
    x = demo["x"][:1].clone()
    with torch.no_grad():
        ref = m(x)
        for _ in range(500):  # warm up allocator caches and the JIT's profiling runs
            m(x)
        rss0 = H.rss_bytes()
        mismatches = 0
        for _ in range(10_000):
            if not torch.equal(m(x), ref):
                mismatches += 1
        rss1 = H.rss_bytes()
    assert mismatches == 0
    grown = rss1 - rss0
    # 10k calls: a leak of even 400 bytes per call shows up as 4 MiB.
    assert grown < 4 * 1024 * 1024, f"RSS grew by {grown / 2**20:.1f} MiB over 10k calls"


@pytest.mark.parametrize("kind", ["scripted", "eager"])
def test_two_threads_same_results(demo, kind):
    m = demo[kind]
    chunks = [demo["x"][i : i + 16].clone() for i in range(0, 128, 16)]
    with torch.no_grad():
        refs = [m(c) for c in chunks]
    errors, mismatches = [], []
    start = threading.Barrier(2)

    def worker(tid):
        try:
            start.wait()
            with torch.no_grad():
                for it in range(40):
                    order = range(len(chunks)) if tid == 0 else reversed(range(len(chunks)))
                    for i in order:
                        if not torch.equal(m(chunks[i]), refs[i]):
                            mismatches.append((tid, it, i))
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert errors == []
    assert mismatches == []


# ----------------------------------------------------------------------------- corrupted files


def _rewrite(src, dst, fn):
    """Copy a zip archive entry by entry, letting fn(name, bytes) replace (or drop: None) each."""
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            data = fn(info.filename, zi.read(info.filename))
            if data is not None:
                zo.writestr(info, data)


def _make_broken_files(src: Path, out: Path):
    """Truncated archives and a broken pickle: each must fail to load with a clear error."""
    raw = src.read_bytes()
    names = []
    for frac in (0.0, 0.1, 0.5, 0.9):
        (out / f"trunc_{frac}.pt").write_bytes(raw[: int(len(raw) * frac)])
        names.append(f"trunc_{frac}.pt")
    (out / "trunc_last_byte.pt").write_bytes(raw[:-1])
    names.append("trunc_last_byte.pt")
    _rewrite(
        src,
        out / "pickle_garbage.pt",
        lambda n, d: bytes((b * 7 + 3) % 256 for b in d) if n.endswith("/data.pkl") else d,
    )
    _rewrite(src, out / "pickle_missing.pt", lambda n, d: None if n.endswith("/data.pkl") else d)
    _rewrite(src, out / "pickle_truncated.pt", lambda n, d: d[: len(d) // 2] if n.endswith("/data.pkl") else d)
    return names + ["pickle_garbage.pt", "pickle_missing.pt", "pickle_truncated.pt"]


def _make_tampered_records(src: Path, out: Path):
    """Every tensor record of the archive halved, emptied or filled with 0xFF (a valid archive
    whose tensors no longer match their metadata, or hold NaN scales / out-of-range zero points).
    Such a file may load (the bytes are just other numbers) or raise, but must never crash."""
    records = [n for n in zipfile.ZipFile(src).namelist() if "/data/" in n]
    assert records, "saved model has no tensor records"
    names = []
    for r in records:
        idx = r.rsplit("/", 1)[1]
        _rewrite(src, out / f"shrunk_{idx}.pt", lambda n, d, r=r: d[: len(d) // 2] if n == r else d)
        _rewrite(src, out / f"empty_{idx}.pt", lambda n, d, r=r: b"" if n == r else d)
        _rewrite(src, out / f"ones_{idx}.pt", lambda n, d, r=r: b"\xff" * len(d) if n == r else d)
        names += [f"shrunk_{idx}.pt", f"empty_{idx}.pt", f"ones_{idx}.pt"]
    return names


_CHILD = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("ignore")
    import torch
    import torch_qplugin  # noqa: F401  (registers qplugin:: ops and classes)
    folder, names = sys.argv[1], json.loads(sys.argv[2])
    x = torch.load(folder + "/input.pt")
    for name in names:
        try:
            m = torch.jit.load(folder + "/" + name)
            with torch.no_grad():
                m(x)
            res = {"ok": True}
        except Exception as e:
            res = {"ok": False, "type": type(e).__name__, "msg": str(e)}
        print("RESULT " + json.dumps({"name": name, **res}), flush=True)
    print("DONE", flush=True)
""")


_CLEAR_ERRORS = ("RuntimeError", "ValueError", "IndexError", "EOFError", "UnpicklingError", "TypeError")


def _load_all(demo, folder, names):
    """Load (and run) every file in ONE subprocess; returns {name: result}. A crash (segfault,
    abort) anywhere is a negative return code and fails the calling test, naming the last file."""
    torch.save(demo["x"][:4].clone(), folder / "input.pt")
    (folder / "intact.pt").write_bytes(demo["path"].read_bytes())
    names = ["intact.pt"] + names
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), json.dumps(names)], capture_output=True, text=True, timeout=600
    )
    results = {
        r["name"]: r for r in (json.loads(ln[7:]) for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    }
    if proc.returncode != 0:
        crashed = next((n for n in names if n not in results), "?")
        pytest.fail(f"loader process died (rc={proc.returncode}) while loading {crashed}:\n{proc.stderr[-2000:]}")
    assert proc.stdout.rstrip().endswith("DONE")
    assert set(results) == set(names)
    assert results["intact.pt"]["ok"], results["intact.pt"]
    return results


def _assert_clear(name, r):
    # A clear error: an ordinary exception type with a message that says something.
    assert r["type"] in _CLEAR_ERRORS, (name, r)
    assert len(r["msg"].strip()) > 10, (name, r)


def test_truncated_or_garbled_model_raises_clear_error(demo, tmp_path):
    names = _make_broken_files(demo["path"], tmp_path)
    results = _load_all(demo, tmp_path, names)
    for name in names:
        r = results[name]
        assert not r["ok"], f"{name} loaded and ran although it is corrupted"
        _assert_clear(name, r)


def test_tampered_tensor_records_never_crash(demo, tmp_path):
    names = _make_tampered_records(demo["path"], tmp_path)
    results = _load_all(demo, tmp_path, names)
    for name in names:
        if not results[name]["ok"]:
            _assert_clear(name, results[name])
    # NaN weight scales (0xFF bytes) must be caught by the packed params' validation on load.
    assert not isinstance(_TOOLKIT, QPlugin) or any(
        not r["ok"] and "qplugin" in r["msg"] for n, r in results.items() if n.startswith("ones_")
    ), "no tampered weight scale was rejected by qplugin's packed-params validation"
