"""The torch-as-oracle verdicts (torch_oracle.py) hold on the running CPU and torch: where the
verdict says torch is exact it matches the reference, and where it says torch can saturate (or
rounds by another rule), a worst case input shows it does."""

import warnings

import numpy as np
import pytest
import torch

import reference as ref
from torch_oracle import cpu_has_vnni, int8_gemm_exact, quantize_exact, quantize_oracle_domain, seven_bit, torch_engine


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


# (x, scale, zero point, dtype, the rule's integer): the rule and torch 2.13's differ on each
_QUANTIZE_WITNESSES = [
    (0.25, 0.5, 5, torch.quint8, 5),
    (-2.2050002, 0.07, 255, torch.quint8, 223),
    (0.75, 0.5, -3, torch.qint8, -1),
    (-100.4, 1.0, 2**31 - 1, torch.qint32, 2147483547),
]


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32])
def test_quantize_verdict_matches_torch(dtype, per_channel):
    verdict = quantize_exact(dtype, per_channel)
    lo, hi = ref.QRANGE[dtype]
    if verdict:  # ties, near-ties and random values: torch computes the reference's integers
        rng = np.random.default_rng(1)
        for scale, zp in [(0.07, hi), (1 / 255, lo), (0.5, 3), (0.6373247256341329, 0)]:
            inv = np.float32(1) / np.float32(scale)
            x0 = ((rng.integers(-300, 300, 3000) + 0.5) / np.float64(inv)).astype(np.float32)
            x = np.concatenate([x0, np.nextafter(x0, np.float32(np.inf)), np.float32([np.nan, np.inf, -1e10])])
            if per_channel:
                s1 = torch.tensor([scale], dtype=torch.double)
                got = (
                    torch.quantize_per_channel(torch.from_numpy(x).reshape(-1, 1), s1, torch.tensor([zp]), 1, dtype)
                    .int_repr()
                    .numpy()
                    .ravel()
                )
                want = ref.quantize_per_channel_ref(x.reshape(-1, 1), [scale], [zp], 1, dtype).ravel()
                np.testing.assert_array_equal(got, want, err_msg=verdict.why)
            else:
                got = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, dtype).int_repr().numpy()
                keep = quantize_oracle_domain(x, scale)
                assert keep.sum() == len(x) - 3
                np.testing.assert_array_equal(
                    got[keep], ref.quantize_per_tensor_ref(x, scale, zp, dtype)[keep], err_msg=verdict.why
                )
    else:  # a witness: torch's integer is not the rule's
        x, scale, zp, wdtype, want = next(w for w in _QUANTIZE_WITNESSES if w[3] == dtype)
        assert int(ref.quantize_per_tensor_ref(np.float32(x), scale, zp, dtype)) == want
        t = torch.tensor([[x]])
        if per_channel:
            got = torch.quantize_per_channel(t, torch.tensor([scale], dtype=torch.double), torch.tensor([zp]), 1, dtype)
        else:
            got = torch.quantize_per_tensor(t, scale, zp, dtype)
        assert int(got.int_repr()) != want, verdict.why
