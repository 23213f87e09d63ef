"""qplugin avg_pool3d / adaptive_avg_pool3d vs the float64 references and torch's own quantized
kernels, on every kernel path (isa fixture); layouts and kernel paths give identical integers."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref
import torch_qplugin
from torch_qplugin import _isa

q = torch.ops.qplugin

DTYPES = [torch.quint8, torch.qint8, torch.qint32]
ZP = {torch.quint8: 117, torch.qint8: -5, torch.qint32: 13}
LAYOUTS = ["contiguous", "channels_last_3d", "strided"]
# (N, C, D, H, W) and unbatched (C, D, H, W); 40 / 70 channels run the NDHWC vector loops with tails
SHAPES = [(2, 5, 6, 7, 9), (1, 40, 5, 4, 6), (4, 6, 5, 7), (2, 70, 3, 5, 4)]

AVG_CFGS = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ([2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None),
    ([3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None),
    ([3, 3, 3], [2, 2, 2], [1, 1, 1], True, False, None),
    ([2, 3, 2], [1, 2, 2], [1, 1, 0], True, True, None),
    ([3], [], [1], False, False, 5),
    ([1, 4, 3], [1, 3, 1], [0, 2, 1], True, False, 7),
    ([1], [1], [0], False, True, None),
]
ADAPTIVE_SIZES = [(1, 1, 1), (2, 3, 4), (3, 2, 2), (5, 7, 9)]


def _qinput(shape, dtype, layout, scale=0.05, seed=0):
    """The same values in every layout: contiguous, channels_last_3d, or a strided view (every
    other channel, a column slice) of a bigger tensor."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2.5
    if dtype == torch.qint32:
        x = x * 30
    qx = torch.quantize_per_tensor(x, scale, ZP[dtype], dtype)
    if layout == "channels_last_3d":
        qx = qx.contiguous(memory_format=torch.channels_last_3d)
    elif layout == "strided":
        ints = qx.int_repr()
        big = torch.zeros(shape[:-4] + (shape[-4] * 2,) + shape[-3:-1] + (shape[-1] + 3,), dtype=ints.dtype)
        big[..., ::2, :, :, 1 : shape[-1] + 1] = ints
        big = torch._make_per_tensor_quantized_tensor(big, scale, ZP[dtype])
        qx = big[..., ::2, :, :, 1 : shape[-1] + 1]
        assert not qx.is_contiguous()
    return qx


def _real(qx):
    return (qx.int_repr().numpy().astype(np.int64) - qx.q_zero_point()) * qx.q_scale()


def _layouts_for(shape):
    return [l for l in LAYOUTS if not (l == "channels_last_3d" and len(shape) == 4)]


def _check_meta(out, qx):
    assert out.q_scale() == qx.q_scale() and out.q_zero_point() == qx.q_zero_point()
    assert out.dtype == qx.dtype
    if qx.dim() == 5 and qx.is_contiguous(memory_format=torch.channels_last_3d) and not qx.is_contiguous():
        assert out.is_contiguous(memory_format=torch.channels_last_3d)
    else:
        assert out.is_contiguous()


@pytest.mark.parametrize("dtype", DTYPES)
def test_avg_pool3d(isa, dtype):
    for si, shape in enumerate(SHAPES):
        base = _qinput(shape, dtype, "contiguous", seed=si)
        for k, s, p, c, cip, dov in AVG_CFGS:
            what = f"{shape} {k} {s} {p} {c} {cip} {dov}"
            out = q.avg_pool3d(base, k, s, p, c, cip, dov)
            _check_meta(out, base)
            expected = ref.requantize_ref(
                ref.avg_pool3d_ref(_real(base), k, s, p, c, cip, dov), base.q_scale(), base.q_zero_point(), dtype
            )
            ref.assert_within_steps(out, expected, 1, what)
            three = lambda v: v * 3 if len(v) == 1 else v  # noqa: E731
            if base.dim() == 5:  # torch's quantized avg_pool3d takes batched input only
                theirs = F.avg_pool3d(base, three(k), three(s) if s else None, three(p), c, cip, dov)
                ref.assert_within_steps(out, theirs.int_repr().numpy(), 1, "vs torch " + what)
            for layout in _layouts_for(shape)[1:]:
                other = _qinput(shape, dtype, layout, seed=si)
                np.testing.assert_array_equal(other.int_repr().numpy(), base.int_repr().numpy())
                o2 = q.avg_pool3d(other, k, s, p, c, cip, dov)
                _check_meta(o2, other)
                assert torch.equal(o2.int_repr(), out.int_repr()), f"{layout} {what}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_adaptive_avg_pool3d(isa, dtype):
    for si, shape in enumerate(SHAPES):
        base = _qinput(shape, dtype, "contiguous", seed=si)
        for osz in ADAPTIVE_SIZES:
            out = q.adaptive_avg_pool3d(base, list(osz))
            _check_meta(out, base)
            expected = ref.requantize_ref(
                ref.adaptive_avg_pool3d_ref(_real(base), osz), base.q_scale(), base.q_zero_point(), dtype
            )
            ref.assert_within_steps(out, expected, 1, f"{shape} {osz}")
            if base.dim() == 5:
                theirs = F.adaptive_avg_pool3d(base, osz)
                ref.assert_within_steps(out, theirs.int_repr().numpy(), 1, f"vs torch {shape} {osz}")
            for layout in _layouts_for(shape)[1:]:
                o2 = q.adaptive_avg_pool3d(_qinput(shape, dtype, layout, seed=si), list(osz))
                assert torch.equal(o2.int_repr(), out.int_repr()), f"{layout} {shape} {osz}"


def test_paths_bit_identical():
    # every kernel path this CPU runs gives the scalar path's integers (NCDHW and NDHWC)
    for layout in ("contiguous", "channels_last_3d"):
        qx = _qinput((2, 70, 6, 9, 11), torch.quint8, layout)
        results = []
        for isa in _isa.supported_isas():
            with torch_qplugin.kernel_isa(isa):
                results.append(
                    (
                        q.avg_pool3d(qx, [3, 3, 3], [2, 1, 2], [1, 1, 1], True, False, None).int_repr(),
                        q.adaptive_avg_pool3d(qx, [4, 5, 3]).int_repr(),
                    )
                )
        for a, b in results[1:]:
            assert torch.equal(a, results[0][0]) and torch.equal(b, results[0][1])


@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d"])
def test_wide_window_does_not_overflow(isa, layout):
    # 2^24 taps of 255 exceed int32 sums: the kernels switch to int64 sums
    x = torch.full((1, 1, 256, 256, 256), 255, dtype=torch.uint8)
    qx = torch._make_per_tensor_quantized_tensor(x, 0.1, 0)
    if layout == "channels_last_3d":
        qx = qx.contiguous(memory_format=torch.channels_last_3d)
    assert q.adaptive_avg_pool3d(qx, [1, 1, 1]).int_repr().item() == 255
    assert q.avg_pool3d(qx, [256], [1], [0], False, True, None).int_repr().item() == 255


def test_empty_batch():
    for layout in ("contiguous", "channels_last_3d"):
        qx = _qinput((0, 8, 4, 6, 5), torch.quint8, layout)
        assert q.avg_pool3d(qx, [2, 3, 3], [2, 2, 2], [1, 1, 1], True, True, None).shape == (0, 8, 3, 4, 3)
        assert q.adaptive_avg_pool3d(qx, [3, 2, 1]).shape == (0, 8, 3, 2, 1)


def test_bad_input():
    qx = _qinput((1, 3, 4, 5, 6), torch.quint8, "contiguous")
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: qx should be 4-D \(C, D, H, W\) or 5-D .* got 3-D"):
        q.avg_pool3d(qx[0, 0], [2], [2], [0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: kernel_size should have 1 or 3 entries, got 2"):
        q.avg_pool3d(qx, [2, 2], [2], [0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: stride should have 0, 1 or 3 entries, got 2"):
        q.avg_pool3d(qx, [2], [2, 2], [0], False, True, None)
    with pytest.raises(
        ValueError, match=r"qplugin::avg_pool3d: kernel_size should be greater than zero, got \[2, 0, 2\]"
    ):
        q.avg_pool3d(qx, [2, 0, 2], [], [0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: padding should be at most half of kernel_size"):
        q.avg_pool3d(qx, [2], [1], [2], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: padding should be non-negative, got \[-1\]"):
        q.avg_pool3d(qx, [3], [1], [-1], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: divisor_override should be a positive integer, got 0"):
        q.avg_pool3d(qx, [2], [2], [0], False, True, 0)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: output size should be at least 1x1x1, got 0x"):
        q.avg_pool3d(qx, [5, 1, 1], [1], [0], False, True, None)
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool3d: output_size should have 3 entries, got 2"):
        q.adaptive_avg_pool3d(qx, [1, 2])
    with pytest.raises(
        ValueError, match=r"qplugin::adaptive_avg_pool3d: output_size should be at least 1x1x1, got \[1, 0, 2\]"
    ):
        q.adaptive_avg_pool3d(qx, [1, 0, 2])
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool3d: input should have non-empty spatial dims"):
        q.adaptive_avg_pool3d(_qinput((1, 3, 0, 4, 4), torch.quint8, "contiguous"), [1, 1, 1])
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool3d: output of shape .* bytes"):
        q.adaptive_avg_pool3d(qx, [2**14, 2**14, 2**14])
    x = torch.randn(1, 3, 4, 4, 4)
    for call, name in [
        (lambda: q.avg_pool3d(x, [2], [2], [0], False, True, None), "avg_pool3d"),
        (lambda: q.adaptive_avg_pool3d(x, [1, 1, 1]), "adaptive_avg_pool3d"),
    ]:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{name}: qx should be a quantized tensor .* got a non-quantized tensor of dtype Float",
        ):
            call()
    bad = torch._make_per_tensor_quantized_tensor(torch.zeros(1, 2, 3, 3, 3, dtype=torch.uint8), float("nan"), 0)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: qx scale should be"):
        q.avg_pool3d(bad, [2], [2], [0], False, True, None)


def test_opcheck():
    for layout in ("contiguous", "channels_last_3d"):
        qx = _qinput((2, 4, 5, 7, 6), torch.quint8, layout)
        utils = ("test_schema", "test_autograd_registration")
        torch.library.opcheck(
            q.avg_pool3d.default, (qx, [3, 3, 3], [2, 2, 2], [1, 1, 1], True, False, None), test_utils=utils
        )
        torch.library.opcheck(q.adaptive_avg_pool3d.default, (qx, [3, 2, 2]), test_utils=utils)
