"""torch.compile(fullgraph=True, dynamic batch) of plain qplugin models under no_grad (issue 15): no
graph break (fullgraph raises on one), one graph for batch 1 and 8, outputs bit-identical to eager.

Models of plain ops compile as they are; models of plain modules (QTensor between layers) compile
as their exported module (dynamo cannot build a QTensor inside a graph: docs/deploy.md)."""
import pytest

import deploy_lib as D


@pytest.mark.parametrize("name", sorted(D.CASES))
def test_compile_fullgraph_one_graph_bit_identical(name):
    model, inputs = D.CASES[name]()
    expected = D.eager_outputs(model, inputs)
    target = model if name in D.PLAIN_OP_CASES else D.export(model, inputs(8)).module()
    outs, graphs = D.compile_outputs(target, inputs)
    assert graphs == 1, f"{name}: {graphs} graphs compiled for batches {D.BATCHES} (a recompile)"
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"{name} compiled, batch {b}")


def test_batch_one_is_specialized_without_batch_oblivious():
    """The graph count above can fail: torch's default 0/1 rule compiles batch 1 and 8 apart."""
    model, inputs = D.CASES["plain_ops"]()
    assert D.compile_outputs(model, inputs, oblivious=False)[1] == 2
