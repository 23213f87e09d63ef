"""Fails on history in code comments, docstrings, help texts and docs: references to the project's
own work items ("stop" or "issue" followed by a number) and before -> after timings in code
("<before> -> <after> us", "<t0> us against <t1>"). Comments and docs describe the code as it is; its history lives in git.

    python scripts/check_history.py            # the repository's tracked text files
    python scripts/check_history.py FILE...    # these files only

Work-item numbers are checked in every text file, docs/benchmarks*.md included; upstream references
such as "pytorch issue #184982" or "GCC bug 105593" are spared. Timings are checked in code only, so
docs (benchmark tables, design notes) may compare times. Prints file:line for each finding and exits
1 if there is any.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TEXT_SUFFIXES = {".py", ".cpp", ".h", ".md", ".txt", ".sh", ".toml", ".cmake", ".in", ".cfg", ".yaml", ".yml"}
TEXT_NAMES = {"CMakeLists.txt", "run", ".clang-format"}
CODE_SUFFIXES = {".py", ".cpp", ".h", ".sh"}

# "stop N", "Stop N's", "issue N", "issues N / M", "(issue #N)", N and M numbers
WORK_ITEM = re.compile(r"\b(stops?|issues?)\s+#?\d+", re.IGNORECASE)
# a reference to another project's tracker: "pytorch issue #184982", "CPython issue 1234"
UPSTREAM = re.compile(
    r"\b(pytorch|torch|cpython|python|gcc|llvm|clang|onnx|onnxruntime|fbgemm|numpy|"
    r"github|upstream)\s*$",
    re.IGNORECASE,
)
# "<t0> -> <t1> us", "<r0> -> <r1>x" with numbers: a timing before and after a change
TIMING = re.compile(r"\b\d+(\.\d+)?\s*(us|ms|x)?\s*->\s*\d+(\.\d+)?\s*(us|ms|x)\b")
# the same as a comparison: "<t0> us against <t1>", "<t0> us, <t1> without", "<t0> us that way,
# <t1> us this way", "... <t> us now"
TIMING_PAIR = re.compile(
    r"\b\d+(\.\d+)?\s*(us|ms)\b[^;\n]{0,40}?\b(against|than)\s+(this form's\s+)?\d+(\.\d+)?"
    r"|\b\d+(\.\d+)?\s*(us|ms)\b[^;\n]{0,40}?,\s*\d+(\.\d+)?\s*(us|ms)?\s+(without|this way)"
    r"|\b\d+(\.\d+)?\s*(us|ms)\s+(now|against)\s*\W*$"
)


def tracked_files(root):
    try:
        out = subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True).stdout
        return [Path(line) for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file below root
        return [
            p.relative_to(root)
            for p in root.rglob("*")
            if p.is_file()
            and not any(part.startswith(".") or part == "build" for part in p.relative_to(root).parts[:-1])
        ]


def is_text(rel):
    return rel.suffix in TEXT_SUFFIXES or rel.name in TEXT_NAMES


def findings(path, rel):
    """(line number, what, text) for each history reference in one file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    code = Path(rel).suffix in CODE_SUFFIXES
    out = []
    for n, line in enumerate(lines, 1):
        for m in WORK_ITEM.finditer(line):
            if not UPSTREAM.search(line[: m.start()]):
                out.append((n, "a work-item number", m.group(0)))
        if code:
            m = TIMING.search(line) or TIMING_PAIR.search(line)
            if m:
                out.append((n, "a before -> after timing", m.group(0)))
    return out


def check(paths, root=ROOT):
    """Prints each finding as file:line and returns how many there are."""
    count = 0
    for rel in paths:
        rel = Path(rel)
        if not is_text(rel):
            continue
        path = rel if rel.is_absolute() else root / rel
        for n, what, text in findings(path, rel):
            print(f"{rel.as_posix()}:{n}: {what} ({text!r}): describe the code as it is; the history lives in git")
            count += 1
    return count


def main(argv):
    if argv:
        paths = [Path(a).resolve() for a in argv]
        count = check(paths)
    else:
        count = check(tracked_files(ROOT))
    if count:
        print(f"check_history: {count} place(s) narrate history (see scripts/check_history.py)", file=sys.stderr)
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
