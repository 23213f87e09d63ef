"""torch.compile(plain_model, fullgraph=True) of the plain models themselves (issue 15): no graph
break (fullgraph raises on one), one graph for batch 1, 8 and 16 (dynamo's error_on_recompile),
outputs bit-identical to eager (mode="lite" for the models with float layers, deploy_lib.FLOAT_LAYERS)."""
import pytest
import torch

import deploy_lib as D
from torch_qplugin import deploy


@pytest.mark.parametrize("name", sorted(D.CASES))
def test_compile_fullgraph_one_graph_bit_identical(name):
    model, inputs = D.CASES[name]()
    expected = D.eager_outputs(model, inputs)
    outs = D.compile_outputs(model, inputs, mode=D.compile_mode(name))
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"{name} compiled, batch {b}")
    with torch.no_grad():
        D.assert_same(outs[16], model(*inputs(16)), f"{name} compiled, batch 16")


def test_batch_one_is_specialized_without_batch_oblivious():
    """The recompile check above can fail: without size-oblivious tracing torch's 0/1 rule
    compiles batch 1 on its own graph, and batch 8 recompiles."""
    model, inputs = D.CASES["residual_block"]()
    with pytest.raises(torch._dynamo.exc.RecompileError):
        D.compile_outputs(model, inputs, oblivious=False)


def test_deploy_compile_is_the_same_call():
    """torch_qplugin.deploy.compile: the call above as one callable (bit-identical, no recompile)."""
    model, inputs = D.CASES["digits_cnn"]()
    expected = D.eager_outputs(model, inputs)
    torch._dynamo.reset()
    run = deploy.compile(model)
    outs = {1: run(*inputs(1))}
    with torch._dynamo.config.patch(error_on_recompile=True):
        outs[8] = run(*inputs(8))
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"deploy.compile, batch {b}")
