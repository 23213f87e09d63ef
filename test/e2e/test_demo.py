"""The README's first command, examples/demo.py, runs end to end (short training) and every
variant — fp32, torch int8, torch_qplugin int8 and its plain form (eager and AOTInductor package),
static / dynamic / QAT — reloads in a fresh process with identical outputs; torch_qplugin's graphs
call no quantized:: op; the plain forms give exactly torch_qplugin's outputs."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_end_to_end(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "demo.py"),
            "--out",
            str(tmp_path),
            "--epochs",
            "2",
            "--qat-epochs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (tmp_path / "demo_results.md").read_text()
    assert "could not run" not in table, table
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    results = json.loads((tmp_path / "eval.json").read_text())
    keys = {e["key"] for e in manifest}
    assert keys == {"fp32"} | {
        f"{m}_{b}" for m in ("static", "dynamic", "qat") for b in ("torch", "qplugin", "plain", "plain_aoti")
    }
    for key in keys:
        r = results[key]
        assert "reason" not in r, (key, r)
        assert r["identical"], key  # fresh-process reload gives the same logits
        assert r["acc"] > 0.85, (key, r["acc"])  # 2 epochs on the digits reach ~97%
        if key.endswith("_qplugin"):
            assert r["ops"]["qplugin"] > 0 and r["ops"]["quantized"] == 0, (key, r["ops"])
    import torch

    for m in ("static", "dynamic", "qat"):
        want = torch.load(tmp_path / f"{m}_qplugin.ref.pt")
        assert torch.equal(torch.load(tmp_path / f"{m}_plain.ref.pt"), want), m
        assert torch.equal(torch.load(tmp_path / f"{m}_plain_aoti.ref.pt"), want), m
    png = tmp_path / "demo_results.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not png.exists()
    else:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
