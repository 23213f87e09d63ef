"""qplugin linear: prepack / unpack / linear / linear_relu / linear_dynamic.

Oracles: test/reference.py (float64 from the definitions) and torch.ops.quantized.*
on 7-bit activations, where torch's x86 engine is exact.
"""

import warnings
from typing import List, Optional, Tuple

import numpy as np
import pytest
import torch

import reference as ref
from torch_oracle import int8_gemm_exact, quantize_exact

q = torch.ops.qplugin


def make_weight(N, K, per_channel, g, wzp_range=(-10, 10), scale=0.02):
    w = torch.randn(N, K, generator=g) * 2
    if per_channel:
        scales = torch.rand(N, generator=g, dtype=torch.float64) * scale + scale / 4
        zps = torch.randint(wzp_range[0], wzp_range[1] + 1, (N,), generator=g)
        return torch.quantize_per_channel(w * scale * 20, scales, zps, 0, torch.qint8)
    zp = int(torch.randint(wzp_range[0], wzp_range[1] + 1, (1,), generator=g))
    return torch.quantize_per_tensor(w * scale * 20, scale, zp, torch.qint8)


def make_x(shape, g, lo=0, hi=255, scale=0.03, zp=None):
    data = torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.uint8)
    zp = int(torch.randint(0, 256, (1,), generator=g)) if zp is None else zp
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def out_qparams(xq, wq, bias):
    """Output qparams that spread the real result over most of 0..255."""
    r = ref.linear_real_ref(xq, wq, bias)
    if r.size == 0:
        return 0.1, 128
    span = max(float(r.max() - r.min()), 1e-3)
    scale = span / 200
    zp = int(np.clip(np.rint(128 - (r.max() + r.min()) / 2 / scale), 0, 255))
    return scale, zp


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
    (97, 33, 129),
    (1, 768, 48),
    (200, 37, 20),
]


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_sweep_matches_reference(isa, per_channel, relu, with_bias):
    g = torch.Generator().manual_seed(1)
    op = q.linear_relu if relu else q.linear
    for M, K, N in SHAPES:
        wq = make_weight(N, K, per_channel, g)
        bias = torch.randn(N, generator=g) if with_bias else None
        xq = make_x((M, K), g)
        ys, yzp = out_qparams(xq, wq, bias)
        y = op(xq, q.linear_prepack(wq, bias), ys, yzp)
        assert y.dtype == torch.quint8 and y.shape == (M, N)
        assert y.q_scale() == ys and y.q_zero_point() == yzp
        ref.assert_within_steps(y, ref.linear_ref(xq, wq, bias, ys, yzp, relu), 1, f"{isa} {M}x{K}x{N}")


def test_isa_paths_bit_identical(isa):
    """Every vector path computes the same exact int32 accumulator and epilogue as scalar."""
    import torch_qplugin

    g = torch.Generator().manual_seed(2)
    for M, K, N in [(7, 37, 70), (13, 130, 33), (1, 300, 129)]:
        wq = make_weight(N, K, True, g)
        bias = torch.randn(N, generator=g)
        p = q.linear_prepack(wq, bias)
        xq = make_x((M, K), g)
        ys, yzp = out_qparams(xq, wq, bias)
        y = q.linear(xq, p, ys, yzp)
        x = torch.randn(M, K, generator=g)
        yd = q.linear_dynamic(x, p)
        with torch_qplugin.kernel_isa("scalar"):
            y0 = q.linear(xq, p, ys, yzp)
            yd0 = q.linear_dynamic(x, p)
        assert torch.equal(y.int_repr(), y0.int_repr())
        assert torch.equal(yd, yd0)


def test_full_range_no_saturation(isa):
    """Extreme operands: activations at 255 / 0 with weights at -128 / 127 (the pairs that
    saturate 16-bit maddubs); every output within 1 step of float64."""
    g = torch.Generator().manual_seed(3)
    M, K, N = 9, 256, 40
    xi = torch.where(torch.rand(M, K, generator=g) < 0.5, 255, 0).to(torch.uint8)
    xi[0] = 255
    wi = torch.where(torch.rand(N, K, generator=g) < 0.5, -128, 127).to(torch.int8)
    wi[0] = -128
    xq = torch._make_per_tensor_quantized_tensor(xi, 0.02, 0)
    wq = torch._make_per_tensor_quantized_tensor(wi, 0.01, 0)
    ys, yzp = out_qparams(xq, wq, None)
    y = q.linear(xq, q.linear_prepack(wq), ys, yzp)
    ref.assert_within_steps(y, ref.linear_ref(xq, wq, None, ys, yzp), 1, isa)
    # a random full-range case too
    xq = make_x((M, K), g, zp=0)
    wq = make_weight(N, K, True, g, wzp_range=(0, 0))
    ys, yzp = out_qparams(xq, wq, None)
    ref.assert_within_steps(q.linear(xq, q.linear_prepack(wq), ys, yzp), ref.linear_ref(xq, wq, None, ys, yzp), 1)


@pytest.mark.parametrize("per_channel", [False, True])
def test_matches_torch_on_7bit_activations(per_channel):
    prev = torch.backends.quantized.engine
    torch.backends.quantized.engine = "x86"
    try:
        g = torch.Generator().manual_seed(4)
        for M, K, N in [(1, 64, 32), (8, 100, 70), (33, 256, 130)]:
            wq = make_weight(N, K, per_channel, g, wzp_range=(0, 0))
            bias = torch.randn(N, generator=g)
            xq = make_x((M, K), g, 0, 127, zp=64)
            verdict = int8_gemm_exact(xq, wq)  # 7-bit activations: torch cannot saturate, on any CPU
            assert verdict, verdict.why
            ys, yzp = out_qparams(xq, wq, bias)
            for relu in (False, True):
                ours = (q.linear_relu if relu else q.linear)(xq, q.linear_prepack(wq, bias), ys, yzp)
                tp = torch.ops.quantized.linear_prepack(wq, bias)
                theirs = (torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear)(xq, tp, ys, yzp)
                ref.assert_within_steps(ours, theirs.int_repr().numpy(), 1, "vs torch")
            x = torch.randn(M, K, generator=g)
            ours_d = q.linear_dynamic(x, q.linear_prepack(wq, bias), True)
            if quantize_exact(torch.quint8):  # torch quantizes the activations by our rule
                theirs_d = torch.ops.quantized.linear_dynamic(x, torch.ops.quantized.linear_prepack(wq, bias), True)
                tol = 1e-4 * float(theirs_d.abs().max()) + 1e-5
                torch.testing.assert_close(ours_d, theirs_d, atol=tol, rtol=1e-4)
            expect = ref.linear_dynamic_ref(x, wq, bias, True)
            np.testing.assert_allclose(
                ours_d.numpy(), expect, rtol=1e-5, atol=1e-5 * float(np.abs(expect).max()) + 1e-5
            )
    finally:
        torch.backends.quantized.engine = prev


@pytest.mark.parametrize("shape", [(5,), (2, 3, 5), (2, 1, 3, 5)])
def test_any_rank(isa, shape):
    g = torch.Generator().manual_seed(5)
    wq = make_weight(9, 5, True, g)
    xq = make_x(shape, g)
    y = q.linear(xq, q.linear_prepack(wq), 0.05, 100)
    assert y.shape == shape[:-1] + (9,)
    ref.assert_within_steps(y, ref.linear_ref(xq, wq, None, 0.05, 100), 1)
    x = torch.randn(shape, generator=g)
    yd = q.linear_dynamic(x, q.linear_prepack(wq))
    assert yd.shape == shape[:-1] + (9,) and yd.dtype == torch.float32


def test_strided_input_same_result(isa):
    g = torch.Generator().manual_seed(6)
    wq = make_weight(20, 30, True, g)
    p = q.linear_prepack(wq, torch.randn(20, generator=g))
    big = make_x((10, 60), g)
    view = big[:, ::2]  # non-contiguous
    assert not view.is_contiguous()
    y1 = q.linear(view, p, 0.1, 128)
    y2 = q.linear(view.contiguous(), p, 0.1, 128)
    assert torch.equal(y1.int_repr(), y2.int_repr())
    xf = torch.randn(60, 10, generator=g).t()[:, :30]
    torch.testing.assert_close(q.linear_dynamic(xf, p), q.linear_dynamic(xf.contiguous(), p), rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(0, 8), (2, 0, 8)])
def test_empty_batch(isa, shape):
    g = torch.Generator().manual_seed(7)
    p = q.linear_prepack(make_weight(6, 8, False, g))
    xq = make_x(shape, g)
    y = q.linear(xq, p, 0.1, 3)
    assert y.shape == shape[:-1] + (6,) and y.dtype == torch.quint8 and y.q_scale() == 0.1
    yd = q.linear_relu_dynamic(torch.randn(shape), p)
    assert yd.shape == shape[:-1] + (6,)


@pytest.mark.parametrize("N,K", [(3, 0), (0, 4)])
def test_empty_weight(isa, N, K):
    """K = 0: the result is the bias alone; N = 0: empty outputs."""
    w = torch.quantize_per_tensor(torch.zeros(N, K), 0.1, 0, torch.qint8)
    p = q.linear_prepack(w, torch.ones(N))
    x = torch.quantize_per_tensor(torch.zeros(2, K), 0.1, 0, torch.quint8)
    y = q.linear(x, p, 0.5, 10)
    assert y.shape == (2, N)
    assert torch.equal(y.int_repr(), torch.full((2, N), 12, dtype=torch.uint8))
    assert torch.equal(q.linear_dynamic(torch.zeros(2, K), p), torch.ones(2, N))
    assert q.linear_unpack(p)[0].shape == (N, K)


@pytest.mark.parametrize("reduce_range", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_dynamic_matches_reference(isa, reduce_range, relu, per_channel):
    g = torch.Generator().manual_seed(8)
    for M, K, N in [(1, 16, 8), (4, 33, 17), (17, 100, 65)]:
        wq = make_weight(N, K, per_channel, g)
        bias = torch.randn(N, generator=g)
        x = torch.randn(M, K, generator=g) * 3 + 0.5
        op = q.linear_relu_dynamic if relu else q.linear_dynamic
        y = op(x, q.linear_prepack(wq, bias), reduce_range)
        assert y.dtype == torch.float32
        expect = ref.linear_dynamic_ref(x, wq, bias, reduce_range, relu)
        tol = 1e-5 * float(np.abs(expect).max()) + 1e-5
        np.testing.assert_allclose(y.numpy(), expect, rtol=1e-5, atol=tol)
        if relu:
            assert float(y.min()) >= 0.0


def test_dynamic_default_reduce_range_false():
    g = torch.Generator().manual_seed(9)
    wq = make_weight(8, 16, True, g)
    p = q.linear_prepack(wq)
    x = torch.randn(3, 16, generator=g)
    assert torch.equal(q.linear_dynamic(x, p), q.linear_dynamic(x, p, False))
    assert not torch.equal(q.linear_dynamic(x, p), q.linear_dynamic(x, p, True))


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_unpack_returns_originals(per_channel, with_bias):
    g = torch.Generator().manual_seed(10)
    for N, K in [(1, 1), (17, 5), (64, 130)]:
        wq = make_weight(N, K, per_channel, g, wzp_range=(-128, 127))
        bias = torch.randn(N, generator=g) if with_bias else None
        w2, b2 = q.linear_unpack(q.linear_prepack(wq, bias))
        assert w2.qscheme() == wq.qscheme() and w2.dtype == torch.qint8
        assert torch.equal(w2.int_repr(), wq.int_repr())
        if per_channel:
            assert torch.equal(w2.q_per_channel_scales(), wq.q_per_channel_scales())
            assert torch.equal(w2.q_per_channel_zero_points(), wq.q_per_channel_zero_points())
            assert w2.q_per_channel_axis() == 0
        else:
            assert w2.q_scale() == wq.q_scale() and w2.q_zero_point() == wq.q_zero_point()
        if with_bias:
            assert torch.equal(b2, bias)
        else:
            assert b2 is None


def test_weight_zero_points_any(isa):
    """Nonzero and extreme weight zero points take the row-sum correction."""
    g = torch.Generator().manual_seed(11)
    for zr in [(-128, -100), (100, 127), (-128, 127)]:
        wq = make_weight(33, 70, True, g, wzp_range=zr)
        xq = make_x((5, 70), g)
        ys, yzp = out_qparams(xq, wq, None)
        ref.assert_within_steps(q.linear(xq, q.linear_prepack(wq), ys, yzp), ref.linear_ref(xq, wq, None, ys, yzp), 1)


def test_packed_memory_footprint():
    """Packed weights (int8 + offsets, bias excluded) stay within 1.25 bytes per weight element."""
    g = torch.Generator().manual_seed(12)
    for N, K in [(768, 768), (3072, 768), (1024, 1024), (4096, 4096)]:
        p = q.linear_prepack(make_weight(N, K, True, g))
        assert p._packed_bytes() <= 1.25 * N * K, (N, K, p._packed_bytes())
        assert p._packed_bytes() >= N * K


def test_repr():
    g = torch.Generator().manual_seed(13)
    p = q.linear_prepack(make_weight(4, 3, True, g), torch.zeros(4))
    assert str(p) == ("LinearPackedParamsBase(out_features=4, in_features=3, qscheme=per_channel_affine, bias=True)")


def test_opcheck():
    """test_schema runs on linear_prepack; for ops taking the packed-params object torch's
    schema checker cannot walk a ScriptObject argument ("'__len__' is not implemented"), so
    those get test_autograd_registration (schema / aliasing is covered by the def strings)."""
    g = torch.Generator().manual_seed(14)
    wq = make_weight(8, 12, True, g)
    p = q.linear_prepack(wq, torch.randn(8, generator=g))
    xq = make_x((3, 12), g)
    tu = ("test_autograd_registration",)
    torch.library.opcheck(q.linear.default, (xq, p, 0.1, 128), test_utils=tu)
    torch.library.opcheck(q.linear_relu.default, (xq, p, 0.1, 128), test_utils=tu)
    torch.library.opcheck(q.linear_dynamic.default, (torch.randn(3, 12), p, False), test_utils=tu)
    torch.library.opcheck(q.linear_relu_dynamic.default, (torch.randn(3, 12), p, True), test_utils=tu)
    torch.library.opcheck(q.linear_unpack.default, (p,), test_utils=tu)
    torch.library.opcheck(
        q.linear_prepack.default, (wq, None), test_utils=("test_schema", "test_autograd_registration")
    )
    torch.library.opcheck(q.linear_prepack.default, (wq, torch.randn(8)), test_utils=("test_schema",))


# ---- errors -----------------------------------------------------------------------------


def _w():
    return torch.quantize_per_tensor(torch.randn(4, 6), 0.05, 0, torch.qint8)


def test_prepack_errors():
    w = _w()
    with pytest.raises(RuntimeError, match=r"qplugin::linear_prepack: W should be a quantized torch.qint8 tensor"):
        q.linear_prepack(torch.randn(4, 6))
    with pytest.raises(RuntimeError, match=r"qplugin::linear_prepack: W should be torch.qint8, got QUInt8"):
        q.linear_prepack(torch.quantize_per_tensor(torch.randn(4, 6), 0.1, 0, torch.quint8))
    with pytest.raises(ValueError, match=r"qplugin::linear_prepack: W should be 2-D"):
        q.linear_prepack(torch.quantize_per_tensor(torch.randn(2, 4, 6), 0.1, 0, torch.qint8))
    w1 = torch.quantize_per_channel(
        torch.randn(4, 6), torch.ones(6, dtype=torch.double) * 0.1, torch.zeros(6, dtype=torch.long), 1, torch.qint8
    )
    with pytest.raises(ValueError, match=r"per-channel axis should be 0 \(out_features\), got 1"):
        q.linear_prepack(w1)
    with pytest.raises(
        ValueError, match=r"qplugin::linear_prepack: B should have shape \[4\] \(out_features\), got \[5\]"
    ):
        q.linear_prepack(w, torch.zeros(5))
    with pytest.raises(RuntimeError, match=r"qplugin::linear_prepack: B should be a float32 tensor, got dtype Double"):
        q.linear_prepack(w, torch.zeros(4, dtype=torch.double))
    with pytest.raises(ValueError, match=r"in_features should be at most 33025"):
        q.linear_prepack(torch.quantize_per_tensor(torch.zeros(1, 33026), 0.1, 0, torch.qint8))


def test_linear_errors():
    p = q.linear_prepack(_w())
    xq = torch.quantize_per_tensor(torch.rand(3, 6), 0.1, 0, torch.quint8)
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear: X should be a quantized torch.quint8 tensor, got a non-quantized"
    ):
        q.linear(torch.rand(3, 6), p, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::linear_relu: X should be torch.quint8, got QInt8"):
        q.linear_relu(torch.quantize_per_tensor(torch.rand(3, 6), 0.1, 0, torch.qint8), p, 0.1, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::linear: X should have last dimension 6 \(W's in_features\), got shape \[3, 5\]"
    ):
        q.linear(torch.quantize_per_tensor(torch.rand(3, 5), 0.1, 0, torch.quint8), p, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::linear: X should have at least 1 dimension"):
        q.linear(torch.quantize_per_tensor(torch.tensor(1.0), 0.1, 0, torch.quint8), p, 0.1, 0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"qplugin::linear: Y_scale_i should be a positive finite number"):
            q.linear(xq, p, bad, 0)
    for bad in (-1, 256):
        with pytest.raises(ValueError, match=r"qplugin::linear: Y_zero_point_i should be in \[0, 255\]"):
            q.linear(xq, p, 0.1, bad)
    xc = torch.quantize_per_channel(
        torch.rand(3, 6), torch.ones(3, dtype=torch.double), torch.zeros(3, dtype=torch.long), 0, torch.quint8
    )
    with pytest.raises(RuntimeError, match=r"qplugin::linear: X should be per_tensor_affine"):
        q.linear(xc, p, 0.1, 0)


def test_dynamic_errors():
    p = q.linear_prepack(_w())
    with pytest.raises(RuntimeError, match=r"qplugin::linear_dynamic: X should be a float32 tensor, got a quantized"):
        q.linear_dynamic(torch.quantize_per_tensor(torch.rand(3, 6), 0.1, 0, torch.quint8), p)
    with pytest.raises(
        RuntimeError, match=r"qplugin::linear_relu_dynamic: X should be a float32 tensor, got dtype Double"
    ):
        q.linear_relu_dynamic(torch.rand(3, 6, dtype=torch.double), p)
    with pytest.raises(ValueError, match=r"qplugin::linear_dynamic: X should have last dimension 6"):
        q.linear_dynamic(torch.rand(3, 7), p)


# ---- pickled state validation ---------------------------------------------------------------


def _script(fn):
    # torch 2.13 deprecates torch.jit.script (DeprecationWarning); scripting is still how
    # packed params are saved, so silence only that warning, only here.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.script(fn)


def _getstate_fn(
    p: torch.classes.qplugin.LinearPackedParamsBase,
) -> Tuple[int, List[torch.Tensor], Optional[torch.Tensor]]:
    return p.__getstate__()


def _setstate_fn(
    p: torch.classes.qplugin.LinearPackedParamsBase, s: Tuple[int, List[torch.Tensor], Optional[torch.Tensor]]
):
    p.__setstate__(s)


_scripted = {}


def _getstate(p):
    if "get" not in _scripted:
        _scripted["get"] = _script(_getstate_fn)
    return _scripted["get"](p)


def _setstate(p, s):
    if "set" not in _scripted:
        _scripted["set"] = _script(_setstate_fn)
    return _scripted["set"](p, s)


def test_state_round_trip():
    g = torch.Generator().manual_seed(15)
    for per_channel in (False, True):
        wq = make_weight(9, 13, per_channel, g)
        bias = torch.randn(9, generator=g)
        p = q.linear_prepack(wq, bias)
        st = _getstate(p)
        assert st[0] == 1
        assert st[1][0].dtype == torch.int8 and st[1][1].dtype == torch.float64 and st[1][2].dtype == torch.int64
        assert st[1][1].dim() == (1 if per_channel else 0)
        p2 = q.linear_prepack(make_weight(3, 2, False, g))
        _setstate(p2, st)
        w2, b2 = q.linear_unpack(p2)
        assert torch.equal(w2.int_repr(), wq.int_repr()) and torch.equal(b2, bias)
        xq = make_x((4, 13), g)
        assert torch.equal(q.linear(xq, p, 0.1, 9).int_repr(), q.linear(xq, p2, 0.1, 9).int_repr())


def _good_state():
    w = torch.randint(-128, 128, (4, 6), dtype=torch.int8)
    return [w, torch.full((4,), 0.1, dtype=torch.float64), torch.zeros(4, dtype=torch.long)]


CORRUPT = [
    (lambda t: (3, t, None), r"version should be 1 \(int8\) or 2 \(fp16\) .*got 3"),
    (lambda t: (2, t, None), r"version 2 state should hold 1 tensor \[weight float16\], got 3"),
    (lambda t: (1, t[:2], None), r"state should hold 3 tensors"),
    (lambda t: (1, [t[0].float(), t[1], t[2]], None), r"weight data should be an int8 tensor"),
    (lambda t: (1, [t[0].reshape(-1), t[1], t[2]], None), r"W should be 2-D"),
    (lambda t: (1, [t[0], t[1][:3], t[2][:3]], None), r"scales should have shape \[4\]"),
    (lambda t: (1, [t[0], t[1], t[2][:3]], None), r"0-dim \(per tensor\) or 1-D|zero_points should have shape \[4\]"),
    (lambda t: (1, [t[0], t[1].float(), t[2]], None), r"scales should be a float64 tensor"),
    (lambda t: (1, [t[0], t[1], t[2].int()], None), r"zero_points should be an int64 tensor"),
    (lambda t: (1, [t[0], -t[1], t[2]], None), r"W scales\[0\] should be a positive finite number"),
    (lambda t: (1, [t[0], t[1] * float("nan"), t[2]], None), r"should be a positive finite number"),
    (lambda t: (1, [t[0], t[1], t[2] + 200], None), r"W zero_points\[0\] should be in \[-128, 127\]"),
    (lambda t: (1, [t[0], t[1][0], t[2]], None), r"0-dim \(per tensor\) or 1-D"),
    (lambda t: (1, t, torch.zeros(5)), r"B should have shape \[4\]"),
    (lambda t: (1, t, torch.zeros(4, dtype=torch.int32)), r"B should be a float32 tensor"),
]


@pytest.mark.parametrize("i", range(len(CORRUPT)))
def test_corrupted_state_raises(i):
    make, msg = CORRUPT[i]
    p = q.linear_prepack(_w())
    _setstate(p, (1, _good_state(), None))  # the good state loads
    with pytest.raises(RuntimeError, match=msg):
        _setstate(p, make(_good_state()))


# --- fast paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("M", [7, 8])
def test_tall_tile_column_steps(isa, M):
    """7-8 rows run as one tall tile stepping 48 columns at a time: every N (not a multiple of
    48 or 16) and K (not a multiple of 4) within 1 step of float64, and bit-identical to scalar."""
    import torch_qplugin

    g = torch.Generator().manual_seed(20)
    for K, N in [(5, 47), (64, 48), (131, 49), (33, 100), (72, 160), (17, 200)]:
        wq = make_weight(N, K, True, g)
        bias = torch.randn(N, generator=g)
        p = q.linear_prepack(wq, bias)
        xq = make_x((M, K), g)
        ys, yzp = out_qparams(xq, wq, bias)
        y = q.linear(xq, p, ys, yzp)
        ref.assert_within_steps(y, ref.linear_ref(xq, wq, bias, ys, yzp), 1, f"{isa} {M}x{K}x{N}")
        with torch_qplugin.kernel_isa("scalar"):
            y0 = q.linear(xq, p, ys, yzp)
        assert torch.equal(y.int_repr(), y0.int_repr()), f"{isa} {M}x{K}x{N}"


@pytest.mark.parametrize("relu,with_bias", [(False, True), (True, False)])
def test_small_k_register_tiles(isa, relu, with_bias):
    """Symmetric weights (every b_zp 0), K a multiple of 4 up to 512 and 2+ rows: the AVX-512 path
    runs these blocks on its register tiles (requantized from the registers; column tails with
    masked loads / stores: N % 16 = 1..15, 24, 40, 100), the other K on its asm tiles. Every path
    within 1 step of float64 and bit-identical to scalar."""
    import torch_qplugin

    g = torch.Generator().manual_seed(22)
    op = q.linear_relu if relu else q.linear
    for M, K, N in [
        (2, 16, 5),
        (7, 24, 24),
        (13, 32, 40),
        (50, 96, 100),
        (9, 512, 64),
        (6, 4, 17),
        (15, 516, 33),
        (20, 30, 31),
    ]:
        wq = make_weight(N, K, True, g, wzp_range=(0, 0))
        bias = torch.randn(N, generator=g) if with_bias else None
        p = q.linear_prepack(wq, bias)
        xq = make_x((M, K), g)
        ys, yzp = out_qparams(xq, wq, bias)
        y = op(xq, p, ys, yzp)
        ref.assert_within_steps(y, ref.linear_ref(xq, wq, bias, ys, yzp, relu), 1, f"{isa} {M}x{K}x{N}")
        with torch_qplugin.kernel_isa("scalar"):
            y0 = op(xq, p, ys, yzp)
        assert torch.equal(y.int_repr(), y0.int_repr()), f"{isa} {M}x{K}x{N}"


@pytest.mark.parametrize("M,K,N", [(1, 1030, 1030), (8, 515, 333), (20, 259, 250), (100, 130, 90)])
def test_threaded_split_bit_identical(isa, M, K, N):
    """Problems above the serial threshold (2^18 MACs) split columns across threads (one
    contiguous range per thread when the rows are one block); 1 and 2 threads, and scalar,
    give identical results."""
    import torch_qplugin

    g = torch.Generator().manual_seed(21)
    wq = make_weight(N, K, True, g)
    bias = torch.randn(N, generator=g)
    p = q.linear_prepack(wq, bias)
    xq = make_x((M, K), g)
    x = torch.randn(M, K, generator=g)
    ys, yzp = out_qparams(xq, wq, bias)
    prev = torch.get_num_threads()
    try:
        outs = []
        for t in (1, 2):
            torch.set_num_threads(t)
            outs.append((q.linear(xq, p, ys, yzp).int_repr(), q.linear_dynamic(x, p)))
    finally:
        torch.set_num_threads(prev)
    with torch_qplugin.kernel_isa("scalar"):
        y0, yd0 = q.linear(xq, p, ys, yzp).int_repr(), q.linear_dynamic(x, p)
    for y, yd in outs:
        assert torch.equal(y, y0) and torch.equal(yd, yd0)
    ref.assert_within_steps(q.linear(xq, p, ys, yzp), ref.linear_ref(xq, wq, bias, ys, yzp), 1, isa)


@pytest.mark.parametrize("special", [None, "nan", "inf", "-inf"])
def test_dynamic_small_and_large_activation_paths_agree(isa, special):
    """linear_dynamic finds min/max and quantizes activations of <= 2^18 elements in one pass
    (its own kernel), larger ones with at::aminmax and a threaded pass. Inputs with the same
    min/max (rows repeated) give identical rows on both paths, NaN / inf included."""
    g = torch.Generator().manual_seed(22)
    K, N = 30001, 19  # 8 rows: 240008 elements (small path); 16 rows: 480016 (large path)
    wq = make_weight(N, K, True, g)
    p = q.linear_prepack(wq, torch.randn(N, generator=g))
    xs = torch.randn(8, K, generator=g) * 2
    if special is not None:
        xs[1, 12345] = float(special)
    xl = torch.cat([xs, xs.flip(0)])
    for relu in (False, True):
        op = q.linear_relu_dynamic if relu else q.linear_dynamic
        ys, yl = op(xs, p), op(xl, p)
        assert np.array_equal(ys.numpy(), yl[:8].numpy(), equal_nan=True)
    if special is None:
        expect = ref.linear_dynamic_ref(xs, wq, None, False, False)
        y = q.linear_dynamic(xs, q.linear_prepack(wq))
        np.testing.assert_allclose(y.numpy(), expect, rtol=1e-5, atol=1e-5 * float(np.abs(expect).max()) + 1e-5)


def test_dynamic_small_path_odd_sizes(isa):
    """The one-pass min/max kernel: every length around the vector widths (8 / 16 floats),
    min or max at the first / last element."""
    g = torch.Generator().manual_seed(23)
    N = 5
    for K in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 100]:
        wq = make_weight(N, K, True, g)
        p = q.linear_prepack(wq)
        for where in (0, K - 1):
            x = torch.rand(1, K, generator=g)
            x[0, where] = -3.0
            x[0, K - 1 - where] = 5.0 if K > 1 else -3.0
            expect = ref.linear_dynamic_ref(x, wq, None, False, False)
            np.testing.assert_allclose(
                q.linear_dynamic(x, p).numpy(), expect, rtol=1e-5, atol=1e-5 * float(np.abs(expect).max()) + 1e-5
            )


def test_static_epilogue_cache_follows_scales_and_bias():
    """The per-(x_scale, y_scale) epilogue constants are cached in the packed weight: changing
    either scale, or the bias in place, gives the same result as a fresh prepack."""
    g = torch.Generator().manual_seed(24)
    M, K, N = 3, 40, 24
    wq = make_weight(N, K, True, g)
    bias = torch.randn(N, generator=g)
    p = q.linear_prepack(wq, bias)
    data = torch.randint(0, 256, (M, K), generator=g, dtype=torch.uint8)
    for xs, ys in [(0.03, 0.2), (0.05, 0.2), (0.05, 0.3), (0.03, 0.2)]:
        xq = torch._make_per_tensor_quantized_tensor(data, xs, 120)
        y = q.linear(xq, p, ys, 100)
        assert torch.equal(y.int_repr(), q.linear(xq, q.linear_prepack(wq, bias.clone()), ys, 100).int_repr())
    xq = torch._make_per_tensor_quantized_tensor(data, 0.03, 120)
    before = q.linear(xq, p, 0.2, 100).int_repr()
    bias.add_(3.0)
    after = q.linear(xq, p, 0.2, 100).int_repr()
    assert not torch.equal(before, after)
    assert torch.equal(after, q.linear(xq, q.linear_prepack(wq, bias.clone()), 0.2, 100).int_repr())
