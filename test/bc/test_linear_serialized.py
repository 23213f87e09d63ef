"""Golden files: test/serialized/linear_v*.pt (made by scripts/gen_serialized.py) must keep
loading and giving the same outputs."""

import warnings
from pathlib import Path

import torch

import torch_qplugin  # noqa: F401

SER = Path(__file__).resolve().parent.parent / "serialized"


def _load(path):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.load(str(path))


def test_linear_v1_loads_and_matches():
    m = _load(SER / "linear_v1.pt")
    io = torch.load(SER / "linear_v1.io.pt")
    x = torch._make_per_tensor_quantized_tensor(io["x_uint8"], io["x_scale"], io["x_zero_point"])
    y, z = m(x, io["xf"])
    assert y.q_scale() == io["y_scale"] and y.q_zero_point() == io["y_zero_point"]
    assert torch.equal(y.int_repr(), io["y_uint8"])
    assert torch.equal(z, io["z"])
    # the packed weights inside unpack to the originals
    w, b = torch.ops.qplugin.linear_unpack(m.p_static)
    assert torch.equal(w.int_repr(), io["w_static_int8"])
    assert torch.equal(w.q_per_channel_scales(), io["w_static_scales"])
    assert torch.equal(w.q_per_channel_zero_points(), io["w_static_zero_points"])
    assert torch.equal(b, io["b_static"])
    w2, b2 = torch.ops.qplugin.linear_unpack(m.p_dynamic)
    assert torch.equal(w2.int_repr(), io["w_dynamic_int8"]) and b2 is None
    assert w2.qscheme() == torch.per_tensor_affine and w2.q_scale() == 0.004 and w2.q_zero_point() == 3


def test_linear_fp16_v2_loads_and_matches():
    """fp16 weights (state version 2)."""
    m = _load(SER / "linear_fp16_v2.pt")
    io = torch.load(SER / "linear_fp16_v2.io.pt")
    y, z = m(io["x"])
    assert torch.equal(y, io["y"]) and torch.equal(z, io["z"])
    w, b = torch.ops.qplugin.linear_unpack_fp16(m.p_bias)
    assert torch.equal(w, io["w_bias_fp16"].float()) and torch.equal(b, io["b"])
    w2, b2 = torch.ops.qplugin.linear_unpack_fp16(m.p_nobias)
    assert torch.equal(w2, io["w_nobias_fp16"].float()) and b2 is None
