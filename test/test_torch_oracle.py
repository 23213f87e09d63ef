"""The torch-as-oracle verdicts (torch_oracle.py) hold on the running CPU: where the verdict says
torch is exact it matches the float64 reference, and where it says torch can saturate, a worst
case input shows it does."""
import warnings

import torch

import reference as ref
from torch_oracle import cpu_has_vnni, int8_gemm_exact, seven_bit, torch_engine


def _worst_case():
    # every activation 255 (zero point 0) and weights of +127: each int16 pair sum is 64770
    x = torch._make_per_tensor_quantized_tensor(torch.full((2, 64), 255, dtype=torch.uint8), 0.01, 0)
    w = torch._make_per_tensor_quantized_tensor(torch.full((3, 64), 127, dtype=torch.int8), 0.01, 0)
    return x, w


def _torch_linear(x, w, scale, zp):
    with torch_engine("x86"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ops.quantized.linear(x, torch.ops.quantized.linear_prepack(w, None), scale, zp)


def test_verdict_on_saturating_input_matches_torch():
    x, w = _worst_case()
    expect = ref.linear_ref(x, w, None, 20.0, 0)
    got = _torch_linear(x, w, 20.0, 0).int_repr().numpy()
    verdict = int8_gemm_exact(x, w)
    if cpu_has_vnni():
        assert verdict and "VNNI" in verdict.why
        ref.assert_within_steps(torch.from_numpy(got), expect, 1, "torch with VNNI")
    else:
        assert not verdict and "saturate" in verdict.why
        assert (abs(got.astype(int) - expect) > 1).any(), "torch should saturate on this CPU"


def test_seven_bit_inputs_are_exact_everywhere():
    x, w = _worst_case()
    x7 = seven_bit(x)
    assert int(x7.int_repr().max()) == 127
    verdict = int8_gemm_exact(x7, w)
    assert verdict, verdict.why
    ref.assert_within_steps(_torch_linear(x7, w, 10.0, 0), ref.linear_ref(x7, w, None, 10.0, 0), 1)
