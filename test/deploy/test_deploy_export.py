"""torch.export.export of plain qplugin models themselves, strict and non-strict: dynamic
batch, only plain dtypes (no quantized dtype, no QTensor, no script object) and qplugin ops in the
graph, outputs bit-identical to eager in this process and, after export.save, in a fresh one."""

import pytest
import torch

import deploy_lib as D
from torch_qplugin import deploy


@pytest.mark.parametrize("strict", [False, True], ids=["non_strict", "strict"])
@pytest.mark.parametrize("name", sorted(D.CASES))
def test_export_is_plain_and_bit_identical(name, strict):
    model, inputs = D.CASES[name]()
    expected = D.eager_outputs(model, inputs)
    ep = D.export(model, inputs(8), strict=strict)
    assert D.graph_problems(ep) == []
    assert D.qplugin_calls(ep), "the exported graph calls no qplugin op"
    # one dynamic batch symbol on the input
    x = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == ep.graph_signature.user_inputs[0])
    assert isinstance(x.meta["val"].shape[0], torch.SymInt)
    run = ep.module()
    with torch.no_grad():
        for b in D.BATCHES:
            D.assert_same(run(*inputs(b)), expected[b], f"{name} exported, batch {b}")


def test_graph_problems_sees_what_is_not_plain():
    """The check above can fail: a float conv is reported, and no qplugin op is found."""

    class Float(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.conv2d(x, torch.ones(2, 3, 1, 1))

    ep = torch.export.export(Float(), (torch.randn(1, 3, 4, 4),))
    assert D.graph_problems(ep) == ["conv2d: float compute aten.conv2d.default"]
    assert D.qplugin_calls(ep) == []


def test_deploy_export_is_the_same_call():
    """torch_qplugin.deploy.export: torch.export.export with the batch spec made for the caller,
    size-oblivious."""
    model, inputs = D.CASES["digits_cnn"]()
    ours, public = deploy.export(model, inputs(8)), D.export(model, inputs(8), oblivious=True)
    assert str(ours.graph) == str(public.graph) and ours.range_constraints.keys() == public.range_constraints.keys()
    with pytest.raises(TypeError, match="args should be a tuple"):
        deploy.export(model, inputs(8)[0])


def test_export_save_load_in_a_fresh_process(tmp_path):
    jobs, expected = [], []
    for name in sorted(D.CASES):
        model, inputs = D.CASES[name]()
        expected.append((name, D.eager_outputs(model, inputs)))
        path = tmp_path / f"{name}.pt2"
        torch.export.save(D.export(model, inputs(8)), str(path))
        jobs.append(("export", path, D.save_inputs(inputs, tmp_path / f"{name}.in.pt")))
    out = D.run_fresh(jobs, tmp_path)
    assert out["imported"]
    for (name, exp), res in zip(expected, out["results"]):
        for b in D.BATCHES:
            D.assert_same(res["outputs"][b], exp[b], f"{name} export.load in a fresh process, batch {b}")
        assert any(op.startswith("qplugin::plain_") for op in res["ops"]), res["ops"]
