"""One entry point for torch_qplugin's benchmarks: a family per subcommand, its options after it.

    python scripts/bench.py --help                  # the families
    python scripts/bench.py ops --help              # one family's options
    python scripts/bench.py ops --only pooling --threads 1 --quick --no-write
    python scripts/bench.py ab --a /path/to/base/checkout --b . --only pooling --pairs 6

Each family lives in scripts/benchlib/<name>.py (main(argv) gets the arguments after the family's
name); the op rows that ops, ab and isa-pair time are scripts/bench_rows/<family>.py.
"""

import importlib
import sys
from pathlib import Path

# family: (module in scripts/benchlib, one line for --help)
FAMILIES = {
    "ops": ("ops", "op rows (scripts/bench_rows) vs torch's kernel and fp32; writes docs/benchmarks.md"),
    "models": ("models", "whole models: fp32 vs torch's int8 backend vs ours; writes docs/benchmarks_models.md"),
    "isa-pair": ("isa_pair", "ops at AVX2 (ours and torch's capped) next to AVX-512, one CPU"),
    "ab": ("ab", "two builds (checkouts) A/B on ops rows or models, in alternating processes"),
    "plain": ("plain", "plain form vs quantized-dtype form of the same converted model"),
    "deploy": ("deploy", "each deployment step of a plain model: export, compile, AOTI, time per call"),
    "qtensor": ("qtensor", "per-op cost of the plain tier and QTensor vs the quantized-dtype path"),
    "embedding-cold": ("embedding_cold", "embedding_bag rows with the weight table evicted before each call"),
    "scaling": ("scaling", "1 vs 2 threads of a model, split into its fixed per-call part and its work"),
    "stable-lib": ("stable_lib", "the stable-ABI plain library against the ATen build, per call"),
    "stable-abi": ("stable_abi", "the plain ops built on torch's stable ABI, loaded and timed under several torches"),
}


def usage():
    width = max(map(len, FAMILIES))
    lines = [f"  {name:<{width}}  {line}" for name, (_, line) in FAMILIES.items()]
    return (
        "usage: python scripts/bench.py FAMILY [options]   (python scripts/bench.py FAMILY --help)\n\n"
        "families:\n" + "\n".join(lines) + "\n"
    )


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n")[0] + "\n\n" + usage(), end="")
        return 0
    if argv[0] not in FAMILIES:
        sys.stderr.write(f"bench.py: unknown family {argv[0]!r}\n\n" + usage())
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchlib, bench_rows, peak_int8
    mod = importlib.import_module(f"benchlib.{FAMILIES[argv[0]][0]}")
    return mod.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
