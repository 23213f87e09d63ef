"""AOTInductor packages of plain qplugin models: compiled here, loaded in a fresh process,
bit-identical to eager at batch 1 and 8; the generated code calls the qplugin kernels (through
AOTInductor's proxy executor) and no float conv / matmul; the package runs with only the op
library loaded (as a C++ program would), and on another kernel path than the one it was made on.

AOTI compiles cost ~20-30 s each on 2 cores: the packages are made once per module (fixture)."""

import re

import pytest
import torch

import deploy_lib as D
import torch_qplugin

# digits_cnn holds a residual add_relu, conv and linear; MobileNetV2 depthwise convs; the LSTM
# dynamic linears and the rnn op; the Transformer float layers (layer norm, attention, GELU)
# between dynamic linears. The rest are exported / compiled only (AOTI compiles are slow).
AOTI_CASES = ["digits_cnn", "mobilenet_v2", "lstm_dynamic", "transformer_dynamic"]
# exported on one path, run on another: linear (static, dynamic) and rnn packed buffers
CROSS_ISA_EXPORT_CASES = ["digits_cnn", "lstm_dynamic"]

pytestmark = pytest.mark.filterwarnings(D.TORCH_TREESPEC_WARNING)


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """name -> (exported program, package path, inputs file, eager outputs by batch)."""
    tmp = tmp_path_factory.mktemp("aoti")
    made = {}
    for name in AOTI_CASES:
        model, inputs = D.CASES[name]()
        ep = D.export(model, inputs(8), oblivious=True)
        path = D.aoti_package(ep, tmp / f"{name}.pt2")
        made[name] = (ep, path, D.save_inputs(inputs, tmp / f"{name}.in.pt"), D.eager_outputs(model, inputs))
    return made


def _check_results(packages, out, what):
    for name, res in zip(AOTI_CASES, out["results"]):
        expected = packages[name][3]
        for b in D.BATCHES:
            D.assert_same(res["outputs"][b], expected[b], f"{name} {what}, batch {b}")
        ran = {op for op in res["ops"] if op.startswith("qplugin::")}
        assert ran == set(D.qplugin_calls(packages[name][0])), f"{name}: qplugin ops run {sorted(ran)}"


def test_aoti_package_in_a_fresh_process_is_bit_identical(packages, tmp_path):
    out = D.run_fresh([("aoti", p[1], p[2]) for p in (packages[n] for n in AOTI_CASES)], tmp_path)
    assert out["imported"] and out["isa"] == torch_qplugin.active_isa()
    _check_results(packages, out, "AOTI in a fresh process")


def test_aoti_package_needs_only_the_op_library(packages, tmp_path):
    """No Python package: the .so's op registrations are all the proxy executor needs."""
    out = D.run_fresh([("aoti", p[1], p[2]) for p in (packages[n] for n in AOTI_CASES)], tmp_path, load="library")
    assert not out["imported"]
    _check_results(packages, out, "AOTI with only libtorch_qplugin.so loaded")


@pytest.mark.parametrize("name", AOTI_CASES)
def test_aoti_generated_code_calls_the_qplugin_kernels(packages, name):
    ep, path = packages[name][:2]
    sources = D.package_sources(path)
    wrapper = next(t for n, t in sources.items() if n.endswith(".wrapper.cpp"))
    extern = next(t for n, t in sources.items() if n.endswith(".wrapper.json"))
    # every qplugin op of the graph is an extern call through the proxy executor (in an order of
    # inductor's choosing)
    targets = re.findall(r'"target": "([\w:.]+)"', extern)
    called = [t.split(".")[0] for t in targets if t.startswith("qplugin::")]
    assert sorted(called) == sorted(D.qplugin_calls(ep))
    # (the ATen ops without a C shim, under deploy.exact_options: the Transformer's layer norm and
    # GELU, go the same way)
    assert wrapper.count("aoti_torch_proxy_executor_call_function(") == len(targets)
    # deploy.exact_options: no kernel of inductor's own, every op eager's kernel; the views are
    # strides in the wrapper, not calls (the Transformer's attention transposes and selects)
    assert not re.findall(r"cpp_fused_\w+", wrapper)
    views = {"aten::transpose", "aten::select", "aten::permute", "aten::view", "aten::t", "aten::slice"}
    assert not [t for t in targets if t.split(".")[0] in views], targets
    # and nothing computes in float what the int8 kernels should: every op is a C-shim call or an
    # extern call of the json, none outside qplugin / aten, no float conv / matmul among the extern
    # calls, and no C shim of one
    assert all(t.startswith(("qplugin::", "aten::")) for t in targets), targets
    assert not {t for t in targets if t.startswith("aten::") and t[6:].split(".")[0] in D.FLOAT_COMPUTE}, targets
    shims = set(re.findall(r"\b(aoti_torch_cpu_\w+)\(", wrapper))
    assert not {s for s in shims if re.search(r"conv|mm|linear|mkldnn|lstm|gru|rnn", s)}, shims


@pytest.mark.parametrize("name", AOTI_CASES)
def test_aoti_load_runs_the_package_without_torchs_wrapper(packages, name, monkeypatch):
    """deploy.aoti_load: positional tensors go straight to the package's runner, bit-identical to
    torch's loaded model; a call it does not handle (keywords) goes through torch's model."""
    from torch_qplugin import deploy

    path, inputs_path, expected = packages[name][1:]
    run = deploy.aoti_load(path)
    inputs = torch.load(inputs_path)
    calls = []
    monkeypatch.setattr(type(run.model), "__call__", lambda self, *a, **k: calls.append(k) or "torch's model")
    with torch.no_grad():
        for b in D.BATCHES:
            D.assert_same(run(*inputs[b]), expected[b], f"{name} deploy.aoti_load, batch {b}")
        assert not calls, "the positional call went through torch's wrapper"
        assert run(*inputs[1], unexpected=1) == "torch's model"
    assert calls == [{"unexpected": 1}]
    assert run.get_metadata() == torch._inductor.aoti_load_package(path).get_metadata()


BEST = torch_qplugin._isa.supported_isas()[-1]


@pytest.mark.parametrize("made_on, run_on", [(BEST, "scalar"), ("scalar", BEST)])
def test_artifacts_run_on_another_kernel_path(made_on, run_on, packages, tmp_path):
    """Artifacts made under one kernel path (packed buffers tagged with it) run bit-identically in
    a process forced onto another (QPLUGIN_ISA): models converted and exported under `made_on`,
    and the AOTI packages (made under the CPU's best path) where that is `made_on`."""
    jobs, expected = [], []
    with torch_qplugin.kernel_isa(made_on):
        for name in CROSS_ISA_EXPORT_CASES:
            model, inputs = D.CASES[name]()
            path = tmp_path / f"{name}.{made_on}.pt2"
            torch.export.save(D.export(model, inputs(8)), str(path))
            jobs.append(("export", path, D.save_inputs(inputs, tmp_path / f"{name}.in.pt")))
            expected.append((name, D.eager_outputs(model, inputs)))
    if made_on == BEST:
        jobs += [("aoti", packages[n][1], packages[n][2]) for n in AOTI_CASES]
        expected += [(n, packages[n][3]) for n in AOTI_CASES]
    out = D.run_fresh(jobs, tmp_path, isa=run_on)
    assert out["isa"] == run_on
    for (kind, _, _), (name, exp), res in zip(jobs, expected, out["results"]):
        for b in D.BATCHES:
            D.assert_same(res["outputs"][b], exp[b], f"{name} {kind} made on {made_on}, run on {run_on}, batch {b}")
