"""qplugin::upsample_bilinear2d: within 1 step of the float64 reference (test/reference.py) and of
torch's quantized bilinear kernel; every kernel path and both memory layouts give the same bits;
functional interpolate / upsample_bilinear route to it."""

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin.nn.quantized.functional as qF

q = torch.ops.qplugin
F = torch.nn.functional


_q = torch.quantize_per_tensor


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


CASES = [
    ((2, 3, 5, 7), (10, 14)),
    ((1, 4, 6, 6), (13, 9)),
    ((2, 19, 4, 9), (4, 9)),
    ((1, 2, 8, 8), (3, 5)),
    ((1, 3, 1, 5), (4, 11)),
    ((1, 40, 7, 5), (14, 10)),
]


@pytest.mark.parametrize("dt,zp", [(torch.quint8, 120), (torch.qint8, -7)])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape,size", CASES)
def test_vs_reference_and_torch(isa, dt, zp, align_corners, shape, size):
    qx = _q(torch.randn(shape) * 3, 0.05, zp, dt)
    out = q.upsample_bilinear2d(qx, list(size), align_corners)
    assert out.shape == shape[:2] + size and out.q_scale() == qx.q_scale() and out.q_zero_point() == zp
    ref.assert_within_steps(
        _ints(out), ref.upsample_bilinear2d_ref(qx.int_repr().numpy(), size, align_corners), 1, "reference"
    )
    theirs = F.interpolate(qx, size=size, mode="bilinear", align_corners=align_corners)
    ref.assert_within_steps(_ints(out), _ints(theirs), 1, "torch")


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8])
def test_paths_and_layouts_identical(dt):
    import torch_qplugin
    from torch_qplugin import _isa

    # (70 channels, 70 output columns: the 4-vector loops of every ISA, a 1-vector step, scalars)
    for shape, size in [((2, 37, 9, 11), [20, 17]), ((1, 70, 4, 5), [6, 70])]:
        qx = _q(torch.randn(shape) * 3, 0.05, 3, dt)
        outs = []
        for isa in _isa.supported_isas():
            with torch_qplugin.kernel_isa(isa):
                for t in (qx, qx.contiguous(memory_format=torch.channels_last), qx[:, :, :, :]):
                    for ac in (False, True):
                        outs.append((ac, q.upsample_bilinear2d(t, size, ac)))
        for ac in (False, True):
            same = [o for a, o in outs if a == ac]
            for o in same[1:]:
                assert torch.equal(o.int_repr(), same[0].int_repr())
    qx = _q(torch.randn(2, 37, 9, 11) * 3, 0.05, 3, dt)
    cl = q.upsample_bilinear2d(qx.contiguous(memory_format=torch.channels_last), [20, 17], False)
    assert cl.is_contiguous(memory_format=torch.channels_last)


def test_scale_factor_and_functional():
    qx = _q(torch.randn(1, 3, 5, 6) * 3, 0.05, 128, torch.quint8)
    for sf in (2, 1.7, 0.6):
        out = qF.interpolate(qx, scale_factor=sf, mode="bilinear", align_corners=False)
        theirs = F.interpolate(qx, scale_factor=sf, mode="bilinear", align_corners=False)
        assert out.shape == theirs.shape
        size = tuple(out.shape[-2:])
        ref.assert_within_steps(
            _ints(out), ref.upsample_bilinear2d_ref(qx.int_repr().numpy(), size, False, (sf, sf)), 1, str(sf)
        )
        ref.assert_within_steps(_ints(out), _ints(theirs), 1, f"torch {sf}")
    out = qF.upsample_bilinear(qx, size=(9, 4))
    assert torch.equal(out.int_repr(), q.upsample_bilinear2d(qx, [9, 4], True).int_repr())
    out = qF.upsample(qx, size=(9, 4), mode="bilinear", align_corners=False)
    assert torch.equal(out.int_repr(), q.upsample_bilinear2d(qx, [9, 4], False).int_repr())
    # constant input stays constant, extremes stay in range
    c = torch._make_per_tensor_quantized_tensor(torch.full((1, 2, 3, 3), 255, dtype=torch.uint8), 0.1, 0)
    assert (q.upsample_bilinear2d(c, [7, 8], False).int_repr() == 255).all()
    e = _q(torch.randn(0, 3, 4, 4), 0.1, 0, torch.quint8)
    assert q.upsample_bilinear2d(e, [8, 8], False).shape == (0, 3, 8, 8)


def test_errors():
    x = torch.randn(1, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"qplugin::upsample_bilinear2d: qx should be a quantized tensor"):
        q.upsample_bilinear2d(x, [4, 4], False)
    q32 = _q(x, 0.1, 0, torch.qint32)
    with pytest.raises(RuntimeError, match=r"qplugin::upsample_bilinear2d: qx should be quint8 or qint8, got QInt32"):
        q.upsample_bilinear2d(q32, [4, 4], False)
    qx = _q(x, 0.1, 0, torch.quint8)
    with pytest.raises(ValueError, match=r"qplugin::upsample_bilinear2d: output_size should have 2 entries"):
        q.upsample_bilinear2d(qx, [4], False)
    with pytest.raises(ValueError, match=r"qplugin::upsample_bilinear2d: scales_h / scales_w should be positive"):
        q.upsample_bilinear2d(qx, [4, 4], False, -1.0, None)
    with pytest.raises(NotImplementedError, match="mode should be 'nearest' or 'bilinear', got 'bicubic'"):
        qF.interpolate(qx, size=(4, 4), mode="bicubic")


def test_opcheck():
    qx = _q(torch.randn(1, 2, 3, 3), 0.1, 0, torch.quint8)
    torch.library.opcheck(
        q.upsample_bilinear2d.default,
        (qx, [5, 4], False, None, None),
        test_utils=("test_schema", "test_autograd_registration"),
    )
