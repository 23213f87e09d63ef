"""Long fuzzer runs; the CI slice is test/fuzz/test_fuzz.py. Same engine
(test/fuzz/fuzzlib.py): every qplugin op from the op library, each case in a child process, plus
saved-model mutation.

    python scripts/fuzz.py --minutes 15 --seed 1            # ops 80 % of the time, saved files 20 %
    python scripts/fuzz.py --replay qplugin::add 123456     # re-run one case in this process
    python scripts/fuzz.py --minutes 10 --memcap-mib 1024   # ops under an address-space cap

Prints a summary (calls, results checked against test/reference.py, errors, ops never checked,
findings; crashes inside torch's own unpickler are listed apart, as torch's) and exits 1 if
anything of ours was found."""

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "fuzz"))
sys.path.insert(0, os.path.join(ROOT, "test"))
import fuzzlib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--saved-share", type=float, default=0.2, help="share of the time for saved-model mutation")
    ap.add_argument("--replay", nargs=2, metavar=("OP", "SEED"), help="run one case here, verbosely")
    ap.add_argument("--json", help="write the summary to this file")
    ap.add_argument(
        "--memcap-mib",
        type=int,
        default=None,
        metavar="MIB",
        help="memory-cap mode: each op child may map MIB more than after importing torch "
        "(RLIMIT_AS); an allocator error is a finding (fuzzlib.py)",
    )
    a = ap.parse_args()
    if a.replay:
        import torch_qplugin  # noqa: F401

        base, _, overload = a.replay[0].partition(".")
        print(fuzzlib.run_case(base, overload, int(a.replay[1])))
        return 0
    t0 = time.time()
    total = a.minutes * 60
    memcap = None if a.memcap_mib is None else a.memcap_mib << 20
    ops = fuzzlib.fuzz_ops(a.seed, seconds=total * (1 - a.saved_share), batch=300, memcap=memcap)
    saved = fuzzlib.fuzz_saved(a.seed, seconds=total * a.saved_share)
    wall = time.time() - t0
    summary = {
        "seed": a.seed,
        "memcap_mib": a.memcap_mib,
        "minutes": round(wall / 60, 1),
        "ops": {k: v for k, v in ops.items() if k != "per_op"},
        "saved": dict(
            saved, torch_crashes=[{k: v for k, v in c.items() if k != "detail"} for c in saved["torch_crashes"]]
        ),
    }
    print(json.dumps(summary, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(summary, per_op=ops["per_op"]), f, indent=1)
    return 1 if ops["failures"] or saved["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
