"""Packed buffers of format version 1 (test/serialized/plain_buffers_v1.pt, written by
`scripts/gen_serialized.py plain_buffers` with a build of that format) still run and give the
same bytes, and are checked structurally (no checksum in that format): a mismatched or damaged one
is an error or gives the same output, never wrong bytes."""

from pathlib import Path

import pytest
import torch

import torch_qplugin
from torch_qplugin import _isa

q = torch.ops.qplugin
SX, ZX, SY, ZY = 0.05, 100, 0.3, 80
V1 = torch.load(Path(__file__).resolve().parent.parent / "serialized" / "plain_buffers_v1.pt")


def test_v1_buffers_are_version_1():
    for buf in list(V1["linear"]["buffers"].values()) + [V1["conv2d"]["buffer"], V1["conv_transpose2d"]["buffer"]]:
        assert buf.view(torch.int64)[1] == 1


@pytest.mark.parametrize("made", sorted(V1["linear"]["buffers"]))
def test_v1_linear_buffer_runs_on_every_path(made):
    d = V1["linear"]
    buf = d["buffers"][made]
    for run in _isa.supported_isas():
        with torch_qplugin.kernel_isa(run):
            y = q.plain_linear(d["x"], SX, ZX, d["w"], d["w_scales"], d["w_zero_points"], d["bias"], buf, SY, ZY)
            assert torch.equal(y, d["y"]), (made, run)


@pytest.mark.parametrize("made", [m for m in sorted(V1["linear"]["buffers"]) if m in _isa.supported_isas()])
def test_v1_linear_buffer_flips_and_mismatches(made):
    d = V1["linear"]
    buf = d["buffers"][made]
    args = (d["w"], d["w_scales"], d["w_zero_points"], d["bias"])
    with torch_qplugin.kernel_isa(made):  # the path the buffer is read on
        z0 = torch.zeros_like(d["w_zero_points"])
        with pytest.raises(ValueError, match=r"qplugin::plain_linear: packed was not made from these w_zero_points"):
            q.plain_linear(d["x"], SX, ZX, d["w"], d["w_scales"], z0, None, buf, SY, ZY)
        g = torch.Generator().manual_seed(7)
        where = list(range(128)) + torch.randint(128, buf.numel(), (48,), generator=g).tolist()
        for i in where:
            b = buf.clone()
            b[i] ^= 1 << (i % 8)
            try:
                y = q.plain_linear(d["x"], SX, ZX, *args, b, SY, ZY)
            except (RuntimeError, ValueError) as e:
                assert "qplugin::plain_linear" in str(e)
                continue
            assert torch.equal(y, d["y"]), f"byte {i} flipped: wrong output, no error"


def test_v1_conv_buffers_run():
    d = V1["conv2d"]
    geo = ([2, 1], [1, 0], [1, 1], 2)
    assert torch.equal(
        q.plain_conv2d(d["x"], SX, ZX, d["w"], d["w_scales"], d["w_zero_points"], None, d["buffer"], *geo, SY, ZY),
        d["y"],
    )
    d = V1["conv_transpose2d"]
    geo = ([2, 1], [0, 1], [1, 0], [1, 1], 2)
    assert torch.equal(
        q.plain_conv_transpose2d(
            d["x"], SX, ZX, d["w"], d["w_scales"], d["w_zero_points"], None, d["buffer"], *geo, SY, ZY
        ),
        d["y"],
    )
    with pytest.raises(ValueError, match=r"qplugin::plain_conv2d: packed should describe a weight of 6 x 2 channels"):
        w = V1["conv2d"]["w"]
        q.plain_conv2d(
            d["x"],
            SX,
            ZX,
            w[:4],
            V1["conv2d"]["w_scales"][:4],
            V1["conv2d"]["w_zero_points"][:4],
            None,
            V1["conv2d"]["buffer"],
            [1, 1],
            [0, 0],
            [1, 1],
            2,
            SY,
            ZY,
        )
