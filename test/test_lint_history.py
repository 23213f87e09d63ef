"""scripts/check_history.py (run by scripts/lint.sh): it finds work-item numbers and before -> after
timings where they do not belong (work items everywhere, the benchmark docs included; timings in
code), spares upstream references and timings in docs, and the repository passes it."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_history.py"

pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="needs the source checkout's scripts/")


@pytest.fixture(scope="module")
def ch():
    spec = importlib.util.spec_from_file_location("check_history", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# Built from pieces so that this file does not trip the check itself.
ISSUE = "iss" + "ue 12"
STOP = "St" + "op 28"
TIMING = "209 -" + "> 191 us"
AGAINST = "689 u" + "s against 567"
WITHOUT = "164 u" + "s with column sums, 130 without"


def _write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return Path(rel)


@pytest.mark.parametrize(
    "rel,text",
    [
        ("kernels/k.cpp", f"// the fast path ({ISSUE})\nint x;\n"),
        ("pkg/m.py", f'"""Rows of the family ({STOP}\'s loop)."""\n'),
        ("pkg/m.py", f"x = 1  # {TIMING} with the prefetch\n"),
        ("kernels/k.cpp", f"// the passes (AVX2 {AGAINST}; the other rows)\n"),
        ("kernels/k.h", f"// the tap loop ({WITHOUT})\n"),
        ("docs/design/x.md", f"# Pooling ({ISSUE})\n"),
        ("docs/benchmarks.md", f"## {STOP}\n"),  # the benchmark docs hold the latest tables, no history
        ("docs/benchmarks_zen5.md", f"{ISSUE}\n"),
    ],
)
def test_flags_history(ch, tmp_path, capsys, rel, text):
    path = _write(tmp_path, rel, text)
    assert ch.check([path], root=tmp_path) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{rel}:1: "), out


@pytest.mark.parametrize(
    "rel,text",
    [
        ("pkg/m.py", "# PyTorch's deprecation (pytorch issue #184982); GCC bug 105593\n"),
        ("pkg/m.py", "# int16 pairs -> int32, 3 -> 4 taps\n"),
        ("kernels/k.cpp", "// one table from the definition (256 evaluations: ~1 us for a model)\n"),
        ("docs/design/x.md", f"{TIMING} against the tap loop\n"),  # a timing in a design note is prose
        ("docs/benchmarks.md", f"| row | {AGAINST} |\n"),  # a benchmark table compares times
    ],
)
def test_spares_upstream_and_doc_timings(ch, tmp_path, rel, text):
    path = _write(tmp_path, rel, text)
    assert ch.check([path], root=tmp_path) == 0


def test_repository_is_clean(ch, capsys):
    count = ch.check(ch.tracked_files(ROOT), root=ROOT)
    assert count == 0, capsys.readouterr().out
