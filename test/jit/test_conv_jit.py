"""TorchScript: modules holding qplugin conv packed params script, save, and load in a fresh
process (which only imports torch_qplugin) with identical outputs; corrupted states raise."""

import os
import subprocess
import sys
import textwrap
from typing import List, Optional, Tuple

import warnings

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin
# torch 2.13 deprecates TorchScript itself; these tests exercise it on purpose.
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")


def _script(obj):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.script(obj)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)

        def w(*shape):
            oc = shape[0]
            return torch._make_per_channel_quantized_tensor(
                torch.randint(-128, 128, shape, dtype=torch.int8, generator=g),
                torch.rand(oc, dtype=torch.double, generator=g) * 0.01 + 0.001,
                torch.zeros(oc, dtype=torch.long),
                0,
            )

        self.p1 = q.conv1d_prepack(w(8, 4, 3), torch.randn(8, generator=g), [1], [1], [1], 1)
        self.p2 = q.conv2d_prepack(w(8, 4, 3, 3), torch.randn(8, generator=g), [1, 1], [1, 1], [1, 1], 1)
        self.pdw = q.conv2d_prepack(w(8, 1, 3, 3), None, [2, 2], [1, 1], [1, 1], 8)
        self.p3 = q.conv3d_prepack(w(8, 4, 3, 3, 3), None, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> List[torch.Tensor]:
        y2 = torch.ops.qplugin.conv2d_relu(x2, self.p2, 0.05, 10)
        return [
            torch.ops.qplugin.conv1d(x1, self.p1, 0.05, 10),
            torch.ops.qplugin.conv2d_add(x2, y2, self.p2, 0.05, 10),
            torch.ops.qplugin.conv2d(y2, self.pdw, 0.05, 10),
            torch.ops.qplugin.conv3d_relu(x3, self.p3, 0.05, 10),
        ]


def inputs():
    g = torch.Generator().manual_seed(1)

    def x(*shape):
        return torch._make_per_tensor_quantized_tensor(
            torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), 0.02, 7
        )

    return x(2, 4, 9), x(2, 4, 7, 8), x(1, 4, 3, 4, 5)


def test_script_save_load_fresh_process(tmp_path):
    m = _script(ConvNet())
    assert "qplugin::conv2d" in str(m.graph) and "quantized::" not in str(m.graph)
    xs = inputs()
    expected = [y.int_repr() for y in m(*xs)]
    torch.jit.save(m, str(tmp_path / "m.pt"))
    torch.save({"xs": xs, "expected": expected}, str(tmp_path / "io.pt"))
    code = textwrap.dedent(f"""
        import torch, torch_qplugin
        m = torch.jit.load({str(tmp_path / 'm.pt')!r})
        io = torch.load({str(tmp_path / 'io.pt')!r}, weights_only=False)
        ys = m(*io["xs"])
        assert all(torch.equal(y.int_repr(), e) for y, e in zip(ys, io["expected"]))
        w, b = torch.ops.qplugin.conv2d_unpack(m.p2)
        assert w.shape == (8, 4, 3, 3) and b.shape == (8,)
        assert m.pdw.groups() == 8 and m.pdw.stride() == [2, 2] and m.p1.padding() == [1]
        print("OK")
    """)
    # the child imports the torch_qplugin this interpreter has (installed, or PYTHONPATH as inherited)
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-2000:]


def test_deepcopy_and_pickle_roundtrip():
    import copy
    import io

    m = _script(ConvNet())
    xs = inputs()
    ref = [y.int_repr() for y in m(*xs)]
    m2 = copy.deepcopy(m)
    assert all(torch.equal(a.int_repr(), b) for a, b in zip(m2(*xs), ref))
    buf = io.BytesIO()
    torch.jit.save(m, buf)
    buf.seek(0)
    m3 = torch.jit.load(buf)
    assert all(torch.equal(a.int_repr(), b) for a, b in zip(m3(*xs), ref))


State = Tuple[Tuple[int, str, int], Tuple[torch.Tensor, Optional[torch.Tensor]], Tuple[List[int], List[int], List[int]]]


def _set_state2_py(p: torch.classes.qplugin.Conv2dPackedParamsBase, s: State) -> int:
    p.__setstate__(s)
    return p.groups()


def _set_state3_py(p: torch.classes.qplugin.Conv3dPackedParamsBase, s: State) -> int:
    p.__setstate__(s)
    return p.groups()


def test_state_roundtrip_and_corrupted_states():
    _set_state2 = _script(_set_state2_py)
    _set_state3 = _script(_set_state3_py)
    m = ConvNet()
    st, name = m.p2.__getstate__()
    assert name.endswith("Conv2dPackedParamsBase")
    (version, kind, groups), (w, b), (stride, padding, dilation) = st
    assert (version, kind, groups) == (1, "conv2d", 1)
    assert _set_state2(m.p2, st) == 1
    bad = [
        (
            ((3, "conv2d", 1), (w, b), (stride, padding, dilation)),
            r"state version should be 1 \(conv\) or 2 \(transposed conv\), got 3",
        ),
        (((1, "conv3d", 1), (w, b), (stride, padding, dilation)), r"kind should be 'conv1d' or 'conv2d', got 'conv3d'"),
        (((1, "conv2d", 3), (w, b), (stride, padding, dilation)), r"groups should divide out_channels \(8\)"),
        (((1, "conv2d", 1), (w, b), ([1], padding, dilation)), r"stride should have 2 elements"),
        (((1, "conv2d", 1), (w, b), (stride, [-5, 1], dilation)), r"padding should be in \[0, 65536\], got"),
        # absurd geometry is rejected before any allocation
        (
            ((1, "conv2d", 1), (w, b), (stride, padding, [1, 2**62])),
            r"Conv2dPackedParamsBase.__setstate__: dilation should be in \[1, 65536\]",
        ),
        (((1, "conv2d", 1), (w, b), ([2**63 - 1, 1], padding, dilation)), r"stride should be in \[1, 65536\]"),
        (((1, "conv2d", 1), (w, b), (stride, [2**31, 2**62], dilation)), r"padding should be in \[0, 65536\]"),
        (((1, "conv2d", 1), (w.dequantize(), b), (stride, padding, dilation)), r"weight should be a quantized qint8"),
        (((1, "conv2d", 1), (w, b[:3]), (stride, padding, dilation)), r"bias should be a 1-d tensor of 8 elements"),
        (((1, "conv2d", 1), (w[:, :, 0], b), (stride, padding, dilation)), r"weight should have 4 dims"),
    ]
    for s, msg in bad:
        with pytest.raises(RuntimeError, match=msg):
            _set_state2(m.p2, s)
    st3, _ = m.p3.__getstate__()
    with pytest.raises(RuntimeError, match=r"kind should be 'conv3d', got 'conv2d'"):
        _set_state3(m.p3, ((1, "conv2d", 1), st3[1], st3[2]))
