"""torch_qplugin.deploy.compile (torch.compile(fullgraph=True) of the exported module, dynamic batch,
no_grad) of plain qplugin models (issue 15): no graph break (fullgraph raises on one), one graph for
batch 1 and 8, outputs bit-identical to eager."""
import pytest

import deploy_lib as D


@pytest.mark.parametrize("name", sorted(D.CASES))
def test_compile_fullgraph_one_graph_bit_identical(name):
    model, inputs = D.CASES[name]()
    expected = D.eager_outputs(model, inputs)
    outs, graphs = D.compile_outputs(model, inputs)
    assert graphs == 1, f"{name}: {graphs} graphs compiled for batches {D.BATCHES} (a recompile)"
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"{name} compiled, batch {b}")


def test_batch_one_is_specialized_without_batch_oblivious():
    """The graph count above can fail: without deploy's settings torch's 0/1 rule compiles batch 1
    and 8 apart (a model of plain ops compiles directly)."""
    import torch
    from torch._dynamo.testing import CompileCounterWithBackend

    model, inputs = D.CASES["plain_ops"]()
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    with torch.no_grad():
        compiled = torch.compile(model, backend=counter, fullgraph=True, dynamic=True)
        for b in D.BATCHES:
            D.assert_same(compiled(*inputs(b)), model(*inputs(b)), f"plain_ops compiled directly, batch {b}")
    assert counter.frame_count == 2
