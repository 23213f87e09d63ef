"""scripts/bench.py: every benchmark family answers through the one entry point (--help lists them
all, each family's own --help parses), and an op run prints its ratios to torch and fp32. Nothing
here asserts a time."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch_qplugin

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "scripts" / "bench.py"
FAMILIES = [
    "ops",
    "models",
    "isa-pair",
    "ab",
    "plain",
    "deploy",
    "qtensor",
    "embedding-cold",
    "scaling",
    "stable-lib",
    "stable-abi",
]

pytestmark = pytest.mark.skipif(not BENCH.is_file(), reason="needs the source checkout's scripts/")


def _run(*args, timeout=300):
    # the torch_qplugin these tests import (a checkout's or an installed one) in the child as well
    env = dict(os.environ, PYTHONPATH=str(Path(torch_qplugin.__file__).resolve().parent.parent))
    return subprocess.run([sys.executable, str(BENCH), *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_help_lists_every_family():
    r = _run("--help")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.startswith("  ")]
    assert listed == FAMILIES


def test_unknown_family():
    r = _run("bench_ops")
    assert r.returncode == 2
    assert "unknown family 'bench_ops'" in r.stderr


@pytest.mark.parametrize("family", FAMILIES)
def test_family_help(family):
    r = _run(family, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: bench.py {family}")


def test_ops_prints_ratios(tmp_path):
    out = tmp_path / "rows.json"
    r = _run(
        "ops",
        "--only",
        "linear_fp16",
        "--threads",
        "1",
        "--rounds",
        "1",
        "--sample-ms",
        "1",
        "--no-write",
        "--json",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "/torch" in r.stdout and "/fp32" in r.stdout and "CPU " in r.stdout
    data = json.loads(out.read_text())
    assert data["cmd"].startswith("python scripts/bench.py ops --only linear_fp16")
    assert data["rows"] and all(row["torch"] and row["fp32"] for row in data["rows"])


def test_ops_rows_keeps_the_named_rows(tmp_path):
    out = tmp_path / "rows.json"
    args = ["ops", "--only", "linear_fp16", "--threads", "1", "--rounds", "1", "--sample-ms", "1", "--no-write"]
    r = _run(*args, "--json", str(out))
    assert r.returncode == 0, r.stderr
    every = json.loads(out.read_text())["rows"]
    first = f"{every[0]['op']} {every[0]['shape']}"
    r = _run(*args, "--rows", first, "--json", str(out))
    assert r.returncode == 0, r.stderr
    kept = json.loads(out.read_text())["rows"]
    assert len(every) > 1 and [f"{row['op']} {row['shape']}" for row in kept] == [first]


def test_scaling_thread_table():
    args = ["scaling", "--models", "mobilenet_v2", "--size", "32", "--rounds", "1", "--min-time", "0.001"]
    r = _run(*args, "--calib-batches", "1", "--threads", "1", "2", "3")
    assert r.returncode == 0, r.stderr
    rows = [line.split("|") for line in r.stdout.splitlines() if line.startswith("| mobilenet_v2 ")]
    assert [row[3].strip() for row in rows] == ["1", "2", "3"]
    assert rows[0][7].strip() == "1.00" and rows[0][8].strip() == "**1.00**"  # each side's own 1-thread base
    r = _run(*args, "--threads", "2", "4")
    assert r.returncode != 0 and "the first count must be 1" in r.stderr
