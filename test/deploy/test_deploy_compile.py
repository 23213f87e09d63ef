"""torch.compile(plain_model, fullgraph=True) of the plain models themselves, with
deploy.compile's options (deploy.exact_options: every op the kernel eager runs, C++ wrapper): no
graph break (fullgraph raises on one), one graph for batch 1, 8 and 16 (dynamo's
error_on_recompile), outputs bit-identical to eager, float layers included."""

import re

import pytest
import torch
from torch._inductor.utils import run_and_get_code

import deploy_lib as D
from torch_qplugin import deploy


@pytest.mark.parametrize("name", sorted(D.CASES))
def test_compile_fullgraph_one_graph_bit_identical(name):
    model, inputs = D.CASES[name]()
    expected = D.eager_outputs(model, inputs)
    outs = D.compile_outputs(model, inputs)
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"{name} compiled, batch {b}")
    with torch.no_grad():
        D.assert_same(outs[16], model(*inputs(16)), f"{name} compiled, batch 16")


def _generated(model, args, options):
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, options=options)
    with torch.no_grad(), torch._inductor.config.patch(fx_graph_cache=False):
        _, code = run_and_get_code(compiled, *args)
    return "\n".join(code)


def test_exact_options_run_eager_kernels_for_float_layers():
    """Why the Transformer's compiled bytes are eager's: under exact_options inductor generates no
    kernel of its own (no cpp_fused_*) and calls ATen's layer norm and GELU and the qplugin ops
    through the dispatcher; in its default mode (the check can fail) it fuses them into its own
    C++ kernels, whose float results differ from ATen's in the last bit (docs/deploy.md)."""
    model, inputs = D.CASES["transformer_dynamic"]()
    exact = _generated(model, inputs(2), deploy.exact_options(cpp_wrapper=True))
    assert not re.findall(r"cpp_fused_\w+", exact)
    for op in ("aten::native_layer_norm", "aten::gelu", "qplugin::plain_linear_dynamic"):
        assert f'"{op}"' in exact, op
    fused = _generated(model, inputs(2), None)
    assert re.findall(r"cpp_fused_\w*native_layer_norm\w*", fused)


def test_batch_one_is_specialized_without_batch_oblivious():
    """The recompile check above can fail: without size-oblivious tracing torch's 0/1 rule
    compiles batch 1 on its own graph, and batch 8 recompiles."""
    model, inputs = D.CASES["residual_block"]()
    with pytest.raises(torch._dynamo.exc.RecompileError):
        D.compile_outputs(model, inputs, oblivious=False)


@pytest.mark.parametrize("exact, frozen", [(True, False), (False, False), (True, True)])
def test_deploy_compile_is_the_same_call(exact, frozen):
    """torch_qplugin.deploy.compile: the call above as one callable (bit-identical, no recompile),
    in both of its modes (inductor's default mode is exact for a model of qplugin ops only), and
    frozen (no guards on the modules)."""
    model, inputs = D.CASES["digits_cnn"]()
    expected = D.eager_outputs(model, inputs)
    torch._dynamo.reset()
    run = deploy.compile(model, exact=exact, frozen=frozen)
    outs = {1: run(*inputs(1))}
    with torch._dynamo.config.patch(error_on_recompile=True):
        outs[8] = run(*inputs(8))
    for b in D.BATCHES:
        D.assert_same(outs[b], expected[b], f"deploy.compile(exact={exact}, frozen={frozen}), batch {b}")


def test_deploy_compile_exact_refuses_a_mode():
    model, _ = D.CASES["digits_cnn"]()
    with pytest.raises(ValueError, match=r"deploy.compile: mode= needs exact=False.*got mode='max-autotune'"):
        deploy.compile(model, mode="max-autotune")
