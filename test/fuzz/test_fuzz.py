"""The CI slice of qplugin's fuzzer (fuzzlib.py explains it): every op in the op library
with generated inputs, each case in a child process, results on valid input checked against
test/reference.py (checks.py), plus saved-model mutation. Seeded with a fixed number of cases, so
it is the same slice on any machine. Longer runs: scripts/fuzz.py --minutes N --seed S."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import fuzzlib  # noqa: E402

SEED = int(os.environ.get("QPLUGIN_FUZZ_SEED", "17"))
ROUNDS = 8  # cases per op (143 ops: 1,144 calls, ~50 s on the shared 2-core Zen 3)
SAVED_FILES = 120  # mutated saved files (~20 s)

# Registered ops whose result has no check in checks.py, with the reason. Keep it short: a new op
# gets an entry in checks.py (a plain_<op> is covered by its quantized twin's entry).
NO_RESULT_CHECK = {
    # A whole dynamic-quantized LSTM / GRU layer: per step, two linear_dynamic calls whose input
    # (h) is re-quantized with qparams chosen from the previous step's float output, then the float
    # cell. A float64 reference drifts from it by the per-step quantization, with no step bound the
    # docs promise; test/ops/test_rnn.py checks one step against lstm_cell_ref / gru_cell_ref and
    # the layer against the unfused composite.
    "qplugin::_rnn_layer_dynamic",
    "qplugin::plain_rnn_layer_dynamic",  # the same layer on plain weights (test_plain_weights.py: equals the above)
}


def _report(failures):
    return "\n".join(
        f"{f.get('op', f.get('kind'))} seed={f.get('seed')} {f.get('mutation', '')}: {f['detail'][:600]}"
        for f in failures[:20]
    )


def test_ops_enumerated_from_the_library():
    ops = [fuzzlib.op_id(*o) for o in fuzzlib.all_ops()]
    # every schema in library.cpp, no hand-written list: spot-check a few families
    for name in (
        "qplugin::add",
        "qplugin::conv2d_add_relu",
        "qplugin::sort",
        "qplugin::eq.Scalar",
        "qplugin::_rnn_layer_dynamic",
        "qplugin::quantize_per_channel",
        "qplugin::plain_max.dim",
    ):
        assert name in ops
    assert len(ops) >= 140


def test_every_op_has_a_result_check():
    # a registered op without an entry in checks.py (and not allowed above) fails here
    missing = set(checks.unchecked_ops(fuzzlib.all_ops()))
    assert missing == NO_RESULT_CHECK, (
        f"ops without a result check: {sorted(missing - NO_RESULT_CHECK)}; "
        f"allowed but checked now: {sorted(NO_RESULT_CHECK - missing)}"
    )


def test_plain_ops_check_through_their_quantized_twin():
    ops = [fuzzlib.op_id(*o).split("::")[1] for o in fuzzlib.all_ops()]
    plain = [o for o in ops if o.startswith("plain_") and "qplugin::" + o not in NO_RESULT_CHECK]
    assert len(plain) >= 50
    for o in plain:
        twin = checks.twin_name(o)
        assert o in checks.CHECKS or (twin in ops and twin in checks.CHECKS), o


def test_fuzz_ops_slice():
    # under the memory cap: an allocation sized by an argument nothing checked is a finding
    s = fuzzlib.fuzz_ops(SEED, rounds=ROUNDS, batch=150, memcap=fuzzlib.MEMCAP)
    assert not s["failures"], _report(s["failures"])
    assert s["min_calls_per_op"] >= ROUNDS
    assert s["error"] > 0 and s["checked"] > s["calls"] // 4  # invalid inputs refused, valid ones checked
    # most ops had results confirmed by the reference in this slice (the others: in long runs)
    never = sorted(set(s["never_checked"]) - NO_RESULT_CHECK)
    assert len(never) <= 10, never


def test_fuzz_saved_models_slice():
    s = fuzzlib.fuzz_saved(SEED, files=SAVED_FILES, per_child=40)
    assert not s["failures"], _report(s["failures"])
    assert s["files"] == SAVED_FILES and s["load_errors"] > 0 and s["loaded"] > 0
    for c in s["torch_crashes"]:  # torch's own unpickler (docs/robustness.md): reported, not ours
        print(f"torch-side crash loading a mutated file ({c['mutation']}), not in qplugin code")


@pytest.mark.parametrize("case", ["crash", "wrong_type"])
def test_fuzzer_catches_a_crash_and_names_it(tmp_path, case):
    # The harness itself: a case that kills its child is confirmed alone and named; a non-qplugin
    # exception is a failure. (qplugin::_set_isa with a str is a real op; the child is made to
    # crash / misbehave by a bogus overload name that run_case cannot resolve.)
    if case == "crash":
        results, crash = fuzzlib.run_batch([["qplugin::add", "", 1], ["__crash__", "", 0]], 60, str(tmp_path))
        assert crash is not None and crash[0] == 1 and 0 in results
    else:
        results, crash = fuzzlib.run_batch([["qplugin::no_such_op", "", 1]], 60, str(tmp_path))
        assert crash is not None  # the child raised outside the op call: reported, not swallowed


def test_fuzzer_reports_an_allocator_error_under_the_cap(tmp_path):
    # the memory-cap mode: a 16 GiB request fails in the child (not on the machine) and is a finding
    results, crash = fuzzlib.run_batch([["__alloc__", "", 0]], 60, str(tmp_path), memcap=fuzzlib.MEMCAP)
    assert crash is None and results[0][0] == "bad" and "allocator error" in results[0][1], results


def test_crash_origin_names_qplugin_frames():
    torch_stack = (
        "SIGSEGV(11), PID: 1, Thread 1: \n frame #0: c10::FatalSignalHandler::fatalSignalHandler(int) + 0x2\n"
        "frame #1: torch::jit::Object::find_method(std::string const&) const + 0x3 (0x1 in /x/torch/lib/"
        "libtorch_python.so)\n"
    )
    ours = torch_stack.replace("libtorch_python.so", "torch_qplugin/lib/libtorch_qplugin.so")
    assert fuzzlib.crash_origin(torch_stack, "load") == "torch"
    assert fuzzlib.crash_origin(torch_stack, "run") == "qplugin"  # running the model: ours to explain
    assert fuzzlib.crash_origin(ours, "load") == "qplugin"
    assert fuzzlib.crash_origin("Segmentation fault", "load") == "qplugin"  # no stack: ours


def test_wrong_result_is_a_finding(monkeypatch):
    # the result checks can fail: a check that disagrees with the op is reported as "bad"
    def wrong(a, out, ctx):
        raise AssertionError("relu: planted disagreement")

    monkeypatch.setitem(checks.CHECKS, "relu", wrong)
    statuses = {
        fuzzlib.run_case("qplugin::relu", "", fuzzlib.case_seed(SEED, "qplugin::relu", k))[0] for k in range(20)
    }
    assert "bad" in statuses


def test_slow_batches_are_resumed_not_failed(tmp_path, monkeypatch):
    # a loaded machine: the batch's time limit passes between cases -> the rest run again, every case
    # is counted once, nothing is reported (the CI slice failed this way under load ~10)
    real = fuzzlib.run_batch
    calls = []

    def slow_once(cases, timeout, workdir, memcap=None):
        calls.append(len(cases))
        if len(calls) == 1:  # pretend the first child was killed after finishing the first two cases
            results, _ = real(cases[:2], timeout, workdir, memcap)
            return results, ("resume", "timed out between cases")
        return real(cases, timeout, workdir, memcap)

    monkeypatch.setattr(fuzzlib, "run_batch", slow_once)
    ops = [("qplugin::relu", ""), ("qplugin::_cpu_isa", "")]
    s = fuzzlib.fuzz_ops(SEED, rounds=2, batch=4, ops=ops)
    assert not s["failures"] and s["calls"] == 4 and s["min_calls_per_op"] == 2 and calls == [4, 2]
