"""The package under test is a complete install: every module of the source tree, byte for byte,
plus the two compiled libraries and build info. Under scripts/test.sh (QPLUGIN_TEST_INSTALLED=1) it
must be the wheel installed in the test venv, not the checkout."""

import os
import subprocess
import sys
from pathlib import Path

import torch_qplugin

SOURCE = Path(__file__).resolve().parents[1] / "torch_qplugin"
INSTALLED = Path(torch_qplugin.__file__).resolve().parent


def _modules(root: Path):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts and p.name != "_build_info.py"
    }


def test_installed_package_is_not_the_checkout_under_the_test_command():
    if os.environ.get("QPLUGIN_TEST_INSTALLED") == "1":
        assert INSTALLED != SOURCE, f"tests imported the source tree {SOURCE}, not the installed wheel"


def test_installed_modules_match_the_source_tree():
    src, inst = _modules(SOURCE), _modules(INSTALLED)
    assert sorted(src) == sorted(inst), (
        f"missing from the install: {sorted(set(src) - set(inst))}; extra: {sorted(set(inst) - set(src))}"
    )
    stale = sorted(k for k in src if src[k] != inst[k])
    assert not stale, f"installed modules differ from the source tree (stale install?): {stale}"


def test_installed_data_files():
    # both tiers' libraries (the quantized one links the plain one) and nothing else
    assert sorted(p.name for p in (INSTALLED / "lib").glob("*.so")) == [
        "libtorch_qplugin.so",
        "libtorch_qplugin_plain.so",
    ]
    assert (INSTALLED / "_build_info.py").is_file()


def test_subpackages_reachable_after_bare_import():
    code = (
        "import torch_qplugin as t; print(t.nn.quantized.Linear.__name__, "
        "t.nn.quantized.dynamic.LSTM.__name__, t.quantization.convert.__name__)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Linear", "LSTM", "convert"]
