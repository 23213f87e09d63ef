"""Golden files (`scripts/gen_serialized.py conv conv_transpose`): conv packed params saved with state version 1
keep loading, unpack to the original weights and give the recorded outputs."""

from pathlib import Path

import pytest
import torch

import torch_qplugin  # noqa: F401

DIR = Path(__file__).resolve().parent.parent / "serialized"
pytestmark = [
    pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated"),
    # torch.load of quantized tensors goes through torch's own TypedStorage path
    pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning"),
]


def test_conv_packed_params_v1_golden():
    m = torch.jit.load(str(DIR / "conv_packed_params_v1.pt"))
    io = torch.load(str(DIR / "conv_packed_params_v1_io.pt"), weights_only=False)
    ys = m(*io["xs"])
    assert len(ys) == len(io["expected"])
    for y, e in zip(ys, io["expected"]):
        assert torch.equal(y.int_repr(), e)
    unpacks = [
        torch.ops.qplugin.conv1d_unpack(m.p1),
        torch.ops.qplugin.conv2d_unpack(m.p2),
        torch.ops.qplugin.conv2d_unpack(m.pdw),
        torch.ops.qplugin.conv3d_unpack(m.p3),
    ]
    for (w, b), w0 in zip(unpacks, io["weights"]):
        assert torch.equal(w.int_repr(), w0.int_repr()) and w.qscheme() == w0.qscheme()
    assert torch.equal(unpacks[0][1], io["biases"][0]) and torch.equal(unpacks[1][1], io["biases"][1])
    assert unpacks[2][1] is None and unpacks[3][1] is None
    assert m.p2.groups() == 2 and m.p2.dilation() == [2, 1] and m.p1.stride() == [2]
    assert m.p3.padding() == [1, 1, 1] and m.pdw.groups() == 8


def test_conv_transpose_packed_params_v2_golden():
    """Transposed-conv packed params (state version 2)."""
    m = torch.jit.load(str(DIR / "conv_transpose_packed_params_v2.pt"))
    io = torch.load(str(DIR / "conv_transpose_packed_params_v2_io.pt"), weights_only=False)
    ys = m(*io["xs"])
    assert len(ys) == len(io["expected"]) == 3
    for y, e in zip(ys, io["expected"]):
        assert torch.equal(y.int_repr(), e)
    unpacks = [
        torch.ops.qplugin.conv_transpose1d_unpack(m.p1),
        torch.ops.qplugin.conv_transpose2d_unpack(m.p2),
        torch.ops.qplugin.conv_transpose3d_unpack(m.p3),
    ]
    for (w, b), w0 in zip(unpacks, io["weights"]):
        assert torch.equal(w.int_repr(), w0.int_repr()) and w.qscheme() == w0.qscheme()
    assert unpacks[1][0].q_per_channel_axis() == 1
    assert torch.equal(unpacks[0][1], io["biases"][0]) and unpacks[2][1] is None
    assert m.p2.transpose() and m.p2.groups() == 2 and m.p2.output_padding() == [1, 0] and m.p2.dilation() == [1, 2]
    assert m.p3.output_padding() == [0, 1, 1] and m.p1.stride() == [2]
