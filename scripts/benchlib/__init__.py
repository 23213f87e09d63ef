"""The benchmark families behind scripts/bench.py, one module each with main(argv).

scripts/bench.py puts scripts/ on sys.path, so a module imports its siblings as benchlib.<name> and
the row definitions as bench_rows. A family that runs itself again in a child process does so
through scripts/bench.py (BENCH), never by a module's path.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench.py"


def command():
    """The command line as run, for the headers and doc sections a family writes."""
    return " ".join(["python scripts/bench.py", *sys.argv[1:]])


def checkout_paths(*subdirs: str) -> None:
    """Puts the checkout's ``subdirs`` (examples, test/compat, ...) first on sys.path, and the
    checkout itself where its torch_qplugin is built in place (its lib/ and _build_info.py are
    there): a family then times the checkout's build, or else the installed package (a wheel's,
    as in CI, whose checkout is not built)."""
    paths = [str(ROOT / d) for d in subdirs]
    if (ROOT / "torch_qplugin" / "_build_info.py").exists():
        paths.append(str(ROOT))
    sys.path[:0] = paths
