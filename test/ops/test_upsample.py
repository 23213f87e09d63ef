"""qplugin upsample_nearest2d: bit-exact vs torch's nearest interpolate on quantized tensors and
vs the reference index rule, on every kernel path."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref

q = torch.ops.qplugin

DTYPES = [torch.quint8, torch.qint8, torch.qint32]
SIZES = [(26, 34), (13, 17), (7, 5), (30, 40), (1, 1), (39, 51), (14, 16), (100, 3), (10, 90)]


def _qinput(shape, dtype, layout, seed=0):
    g = torch.Generator().manual_seed(seed)
    qx = torch.quantize_per_tensor(torch.randn(shape, generator=g) * 3, 0.04, 9, dtype)
    if layout == "channels_last":
        qx = qx.contiguous(memory_format=torch.channels_last)
    elif layout == "strided":
        qx = qx.transpose(-1, -2)  # a non-contiguous view
    return qx


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
def test_upsample_nearest2d_exact(isa, dtype, layout):
    for si, shape in enumerate([(2, 5, 13, 17), (1, 70, 4, 6), (3, 9, 11), (1, 3, 5, 45)]):
        if layout == "channels_last" and len(shape) == 3:
            continue
        qx = _qinput(shape, dtype, layout, seed=si)
        for osz in SIZES:
            out = q.upsample_nearest2d(qx, list(osz))
            assert out.shape == qx.shape[:-2] + osz
            assert out.q_scale() == qx.q_scale() and out.q_zero_point() == qx.q_zero_point()
            if layout == "channels_last":
                assert out.is_contiguous(memory_format=torch.channels_last)
            else:
                assert out.is_contiguous()
            np.testing.assert_array_equal(
                out.int_repr().numpy(), ref.upsample_nearest2d_ref(qx.int_repr().numpy(), osz)
            )
            x4 = qx if qx.dim() == 4 else qx[None]
            theirs = F.interpolate(x4, size=osz, mode="nearest")
            assert torch.equal(out.int_repr().reshape(theirs.shape), theirs.int_repr()), f"{shape} {osz}"


def test_upsample_empty_batch():
    for layout in ("contiguous", "channels_last"):
        qx = _qinput((0, 4, 5, 6), torch.quint8, layout)
        assert q.upsample_nearest2d(qx, [10, 12]).shape == (0, 4, 10, 12)


def test_upsample_errors():
    qx = _qinput((1, 2, 4, 4), torch.quint8, "contiguous")
    with pytest.raises(
        ValueError, match=r"qplugin::upsample_nearest2d: output_size should be at least 1x1, got \[0, 3\]"
    ):
        q.upsample_nearest2d(qx, [0, 3])
    with pytest.raises(ValueError, match=r"qplugin::upsample_nearest2d: output_size should have 2 entries, got 1"):
        q.upsample_nearest2d(qx, [3])
    with pytest.raises(
        ValueError, match=r"qplugin::upsample_nearest2d: qx should be 3-D \(C, H, W\) or 4-D \(N, C, H, W\), got 2-D"
    ):
        q.upsample_nearest2d(qx[0, 0], [3, 3])
    with pytest.raises(ValueError, match=r"qplugin::upsample_nearest2d: input should have non-empty spatial dims"):
        q.upsample_nearest2d(_qinput((1, 2, 0, 4), torch.quint8, "contiguous"), [3, 3])
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::upsample_nearest2d: qx should be a quantized tensor .* got a non-quantized tensor of dtype Float",
    ):
        q.upsample_nearest2d(torch.randn(1, 2, 4, 4), [8, 8])


def test_upsample_opcheck():
    for layout in ("contiguous", "channels_last"):
        qx = _qinput((2, 3, 4, 5), torch.quint8, layout)
        torch.library.opcheck(
            q.upsample_nearest2d.default, (qx, [7, 10]), test_utils=("test_schema", "test_autograd_registration")
        )
