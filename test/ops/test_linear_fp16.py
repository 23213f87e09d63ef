"""qplugin fp16 dynamic linear: linear_prepack_fp16 / linear_unpack_fp16 / linear_dynamic_fp16 /
linear_relu_dynamic_fp16 (float16 weights, float activations, no int8 step).

Oracles: test/reference.py (float64 with the weights rounded to fp16 first, tolerance from the
kernel's float32 accumulation order) and torch.ops.quantized.linear_dynamic_fp16 (a different
summation order: within the sum of both bounds). The scalar path is the reference the AVX2 /
AVX-512 paths must equal bit for bit.
"""

import warnings

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin
from test_linear import _getstate, _setstate  # the scripted __getstate__ / __setstate__ helpers

q = torch.ops.qplugin

SHAPES = [
    (1, 1, 1),
    (1, 7, 5),
    (2, 3, 17),
    (3, 4, 16),
    (5, 15, 15),
    (6, 16, 64),
    (7, 17, 65),
    (1, 63, 33),
    (13, 64, 130),
    (6, 65, 63),
    (31, 100, 70),
    (4, 33, 129),
    (1, 768, 48),
    (200, 37, 20),
    (65, 9, 3),
]


def _check(y, x, w, bias, relu, what="", factor=1.0):
    expect = ref.linear_fp16_ref(x.numpy(), w.numpy(), None if bias is None else bias.numpy(), relu)
    tol = ref.linear_fp16_tolerance(x.numpy(), w.numpy(), None if bias is None else bias.numpy())
    err = np.abs(y.numpy().astype(np.float64) - expect)
    assert (err <= factor * tol).all(), f"{what}: max err {err.max()} (bound {tol.ravel()[err.argmax()]})"


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_sweep_matches_reference_and_scalar(isa, relu, with_bias):
    g = torch.Generator().manual_seed(1)
    op = q.linear_relu_dynamic_fp16 if relu else q.linear_dynamic_fp16
    for M, K, N in SHAPES:
        x = torch.randn(M, K, generator=g) * 3
        w = torch.randn(N, K, generator=g)
        bias = torch.randn(N, generator=g) if with_bias else None
        p = q.linear_prepack_fp16(w, bias)
        y = op(x, p)
        assert y.dtype == torch.float32 and y.shape == (M, N)
        _check(y, x, w, bias, relu, f"{isa} {M}x{K}x{N}")
        with torch_qplugin.kernel_isa("scalar"):
            y0 = op(x, p)
        assert torch.equal(y, y0), f"{isa} {M}x{K}x{N}: differs from the scalar path"


def test_summation_order_is_the_documented_one(isa):
    """One output = fmaf over k in order from 0, then + bias: reproduced in numpy float32 with a
    float64 fma emulation (exact product + sum, one rounding), bit for bit."""
    g = torch.Generator().manual_seed(2)
    K = 50
    x = torch.randn(3, K, generator=g) * 1e3
    w = torch.randn(5, K, generator=g) * 1e-2
    bias = torch.randn(5, generator=g)
    y = q.linear_dynamic_fp16(x, q.linear_prepack_fp16(w, bias)).numpy()
    w16 = w.half().float().numpy()
    for m in range(3):
        for n in range(5):
            acc = np.float32(0)
            for k in range(K):
                # float32 * float32 is exact in float64 (48 significant bits); float64 + float32 then
                # one rounding to float32 equals fmaf unless the float64 sum itself rounded: check it did not
                prod = np.float64(x[m, k].item()) * np.float64(w16[n, k])
                s = prod + np.float64(acc)
                assert s - prod == np.float64(acc)
                acc = np.float32(s)
            assert y[m, n] == np.float32(acc + np.float32(bias[n].item())), (m, n)


@pytest.mark.parametrize("relu", [False, True])
def test_matches_torch_fp16(isa, relu):
    """torch's fbgemm fp16 GEMM: same fp16 weights and float32 accumulation, its own order; both
    lie within the bound of the exact result, so they differ by at most twice the bound."""
    g = torch.Generator().manual_seed(3)
    for M, K, N in [(1, 64, 32), (4, 130, 70), (33, 257, 65), (2, 1024, 16)]:
        x = torch.randn(M, K, generator=g)
        w = torch.randn(N, K, generator=g) * 0.1
        bias = torch.randn(N, generator=g)
        ours = (q.linear_relu_dynamic_fp16 if relu else q.linear_dynamic_fp16)(x, q.linear_prepack_fp16(w, bias))
        tp = torch.ops.quantized.linear_prepack_fp16(w, bias)
        theirs = (torch.ops.quantized.linear_relu_dynamic_fp16 if relu else torch.ops.quantized.linear_dynamic_fp16)(
            x, tp
        )
        tol = ref.linear_fp16_tolerance(x.numpy(), w.numpy(), bias.numpy())
        assert (np.abs(ours.numpy().astype(np.float64) - theirs.numpy()) <= 2 * tol).all()
        # and the unpacked weights are the same fp16 values
        assert torch.equal(
            q.linear_unpack_fp16(q.linear_prepack_fp16(w, bias))[0], torch.ops.quantized.linear_unpack_fp16(tp)[0]
        )


@pytest.mark.parametrize("M,K,N", [(1, 1030, 1030), (8, 515, 333), (130, 259, 250)])
def test_threaded_split_bit_identical(isa, M, K, N):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(M, K, generator=g)
    p = q.linear_prepack_fp16(torch.randn(N, K, generator=g), torch.randn(N, generator=g))
    prev = torch.get_num_threads()
    try:
        outs = []
        for t in (1, 2):
            torch.set_num_threads(t)
            outs.append(q.linear_dynamic_fp16(x, p))
    finally:
        torch.set_num_threads(prev)
    with torch_qplugin.kernel_isa("scalar"):
        y0 = q.linear_dynamic_fp16(x, p)
    for y in outs:
        assert torch.equal(y, y0)


@pytest.mark.parametrize("shape", [(5,), (2, 3, 5), (2, 1, 3, 5)])
def test_any_rank_and_strided(isa, shape):
    g = torch.Generator().manual_seed(5)
    w = torch.randn(4, 5, generator=g)
    p = q.linear_prepack_fp16(w)
    x = torch.randn(shape, generator=g)
    y = q.linear_dynamic_fp16(x, p)
    assert y.shape == shape[:-1] + (4,)
    torch.testing.assert_close(y.reshape(-1, 4), q.linear_dynamic_fp16(x.reshape(-1, 5), p), rtol=0, atol=0)
    xt = torch.randn(7, 5, generator=g).t().contiguous().t()  # transposed layout, same values
    assert torch.equal(q.linear_dynamic_fp16(xt, p), q.linear_dynamic_fp16(xt.contiguous(), p))


@pytest.mark.parametrize("M,K,N", [(0, 4, 3), (2, 4, 0), (2, 0, 3), (0, 0, 0)])
def test_empty(isa, M, K, N):
    bias = torch.arange(N, dtype=torch.float32) - 1
    p = q.linear_prepack_fp16(torch.randn(N, K), bias)
    y = q.linear_dynamic_fp16(torch.randn(M, K), p)
    assert y.shape == (M, N)
    if M and N:  # K == 0: the empty sum plus the bias
        assert torch.equal(y, bias.expand(M, N))
        assert torch.equal(q.linear_relu_dynamic_fp16(torch.randn(M, K), p), bias.clamp(min=0).expand(M, N))


FP16_SATURATION = "qplugin::linear_prepack_fp16: W has values outside the float16 range"


def test_prepack_rounds_and_saturates_like_torch():
    w = torch.tensor(
        [
            [1e5, -1e6, 1e-9, 0.1, 65519.0, 65520.0, float("inf"), -float("inf")],
            [1.0 + 2**-11, 1.0 + 3 * 2**-11, 6e-8, -3e-5, 0.0, -0.0, 1.5, 2.0],
        ]
    )
    # Out-of-range values also warn, as torch's HandleWeightsSaturation: a C++ warning that torch
    # 2.13 / 2.14 log to stderr and 2.15 raises as a Python UserWarning.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=FP16_SATURATION)
        p = q.linear_prepack_fp16(w)
    wu, bu = q.linear_unpack_fp16(p)
    assert bu is None and wu.dtype == torch.float32
    expect = torch.from_numpy(ref.fp16_weight_ref(w.numpy()).astype(np.float32))
    assert torch.equal(wu, expect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.ops.quantized.linear_unpack_fp16(torch.ops.quantized.linear_prepack_fp16(w))[0]
    assert torch.equal(wu, theirs)
    # float16 weights are taken as they are
    p16 = q.linear_prepack_fp16(w[1:].half(), torch.ones(1))
    assert torch.equal(q.linear_unpack_fp16(p16)[0], w[1:].half().float())


def test_nan_propagates(isa):
    w = torch.randn(20, 6)
    w[3, 2] = float("nan")
    p = q.linear_prepack_fp16(w)
    x = torch.randn(4, 6)
    x[1, 0] = float("nan")
    for op in (q.linear_dynamic_fp16, q.linear_relu_dynamic_fp16):
        y = op(x, p)
        assert torch.isnan(y[1]).all() and torch.isnan(y[:, 3]).all()
        rest = torch.ones_like(y, dtype=torch.bool)
        rest[1] = False
        rest[:, 3] = False
        assert not torch.isnan(y[rest]).any()


def test_unpack_bias_and_state_round_trip():
    g = torch.Generator().manual_seed(6)
    w, bias = torch.randn(9, 13, generator=g), torch.randn(9, generator=g)
    p = q.linear_prepack_fp16(w, bias)
    wu, bu = q.linear_unpack_fp16(p)
    assert torch.equal(wu, w.half().float()) and torch.equal(bu, bias)
    st = _getstate(p)
    assert st[0] == 2 and len(st[1]) == 1 and st[1][0].dtype == torch.float16 and torch.equal(st[2], bias)
    p2 = q.linear_prepack(torch.quantize_per_tensor(torch.randn(3, 2), 0.1, 0, torch.qint8))
    _setstate(p2, st)  # an int8 object becomes the fp16 one
    x = torch.randn(4, 13, generator=g)
    assert torch.equal(q.linear_dynamic_fp16(x, p), q.linear_dynamic_fp16(x, p2))
    # int8 weights still pickle as version 1
    assert _getstate(q.linear_prepack(torch.quantize_per_tensor(w, 0.05, 0, torch.qint8)))[0] == 1


def test_repr_and_packed_bytes():
    p = q.linear_prepack_fp16(torch.randn(4, 3), torch.zeros(4))
    assert str(p) == "LinearPackedParamsBase(out_features=4, in_features=3, dtype=torch.float16, bias=True)"
    assert p._packed_bytes() == 16 * 3 * 2  # one panel of 16 columns x K fp16 values


def test_opcheck():
    p = q.linear_prepack_fp16(torch.randn(8, 12), torch.randn(8))
    tu = ("test_autograd_registration",)
    torch.library.opcheck(q.linear_dynamic_fp16.default, (torch.randn(3, 12), p), test_utils=tu)
    torch.library.opcheck(q.linear_relu_dynamic_fp16.default, (torch.randn(3, 12), p), test_utils=tu)
    torch.library.opcheck(q.linear_unpack_fp16.default, (p,), test_utils=tu)
    torch.library.opcheck(
        q.linear_prepack_fp16.default,
        (torch.randn(8, 12), None),
        test_utils=("test_schema", "test_autograd_registration"),
    )


# ---- errors ---------------------------------------------------------------------------------


def test_errors():
    p16 = q.linear_prepack_fp16(torch.randn(4, 6))
    p8 = q.linear_prepack(torch.quantize_per_tensor(torch.randn(4, 6), 0.05, 0, torch.qint8))
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::linear_dynamic_fp16: W_prepack should hold float16 weights "
        r"\(from linear_prepack_fp16\), got qint8 weights",
    ):
        q.linear_dynamic_fp16(torch.randn(2, 6), p8)
    with pytest.raises(RuntimeError, match=r"qplugin::linear_unpack_fp16: W_prepack should hold float16 weights"):
        q.linear_unpack_fp16(p8)
    for name in ("linear_dynamic", "linear_relu_dynamic"):
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: W_prepack should hold qint8 weights "
            r"\(from linear_prepack\), got float16 weights",
        ):
            getattr(q, name)(torch.randn(2, 6), p16)
    with pytest.raises(RuntimeError, match=r"qplugin::linear_unpack: W_prepack should hold qint8 weights"):
        q.linear_unpack(p16)
    xq = torch.quantize_per_tensor(torch.rand(2, 6), 0.1, 0, torch.quint8)
    with pytest.raises(RuntimeError, match=r"qplugin::linear: W_prepack should hold qint8 weights"):
        q.linear(xq, p16, 0.1, 0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear_dynamic_fp16: X should be a float32 tensor, got a quantized"
    ):
        q.linear_dynamic_fp16(xq, p16)
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear_relu_dynamic_fp16: X should be a float32 tensor, got dtype Double"
    ):
        q.linear_relu_dynamic_fp16(torch.rand(2, 6, dtype=torch.double), p16)
    with pytest.raises(
        ValueError, match=r"qplugin::linear_dynamic_fp16: X should have last dimension 6 \(W's in_features\)"
    ):
        q.linear_dynamic_fp16(torch.rand(2, 7), p16)
    with pytest.raises(ValueError, match=r"qplugin::linear_dynamic_fp16: X should have at least 1 dimension"):
        q.linear_dynamic_fp16(torch.tensor(1.0), p16)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::linear_prepack_fp16: W should be a float32 or float16 tensor, "
        r"got a quantized tensor of dtype QInt8",
    ):
        q.linear_prepack_fp16(torch.quantize_per_tensor(torch.randn(4, 6), 0.05, 0, torch.qint8))
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear_prepack_fp16: W should be a float32 or float16 tensor, got dtype Int"
    ):
        q.linear_prepack_fp16(torch.ones(4, 6, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"qplugin::linear_prepack_fp16: W should be 2-D"):
        q.linear_prepack_fp16(torch.randn(2, 4, 6))
    with pytest.raises(
        ValueError, match=r"qplugin::linear_prepack_fp16: B should have shape \[4\] \(out_features\), got \[5\]"
    ):
        q.linear_prepack_fp16(torch.randn(4, 6), torch.zeros(5))
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear_prepack_fp16: B should be a float32 tensor, got dtype Double"
    ):
        q.linear_prepack_fp16(torch.randn(4, 6), torch.zeros(4, dtype=torch.double))


# ---- pickled state validation ---------------------------------------------------------------

CORRUPT = [
    (lambda w: (3, [w], None), r"version should be 1 \(int8\) or 2 \(fp16\) .*got 3"),
    (lambda w: (2, [w, w], None), r"version 2 state should hold 1 tensor \[weight float16\], got 2"),
    (lambda w: (2, [w.float()], None), r"version 2 weight should be a float16 tensor, got dtype Float"),
    (lambda w: (2, [w.reshape(-1)], None), r"W should be 2-D"),
    (lambda w: (2, [w], torch.zeros(5)), r"B should have shape \[4\]"),
    (lambda w: (2, [w], torch.zeros(4, dtype=torch.int32)), r"B should be a float32 tensor"),
    (lambda w: (1, [w], None), r"state should hold 3 tensors"),
]


@pytest.mark.parametrize("i", range(len(CORRUPT)))
def test_corrupted_state_raises(i):
    make, msg = CORRUPT[i]
    p = q.linear_prepack_fp16(torch.randn(4, 6))
    good = torch.randn(4, 6).half()
    _setstate(p, (2, [good], None))  # the good state loads
    with pytest.raises(RuntimeError, match=msg):
        _setstate(p, make(good))


def test_every_row_tail_and_column_tail(isa):
    """Row counts 1..17 cover the full row blocks (8 on AVX-512, 4 on AVX2) and every leftover
    count (wide tiles for few rows); N = 1..70 the partial vectors and panels."""
    g = torch.Generator().manual_seed(7)
    for M in range(1, 18):
        for N in (1, 9, 16, 17, 31, 33, 70):
            x = torch.randn(M, 19, generator=g)
            w, b = torch.randn(N, 19, generator=g), torch.randn(N, generator=g)
            p = q.linear_prepack_fp16(w, b)
            y = q.linear_relu_dynamic_fp16(x, p)
            _check(y, x, w, b, True, f"{isa} M={M} N={N}")
            with torch_qplugin.kernel_isa("scalar"):
                assert torch.equal(q.linear_relu_dynamic_fp16(x, p), y), (M, N)
