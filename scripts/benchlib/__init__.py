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
