"""TorchScript: transposed-conv packed params (state version 2) script, save, and load in a fresh
process with identical outputs; corrupted states raise naming the field."""

import os
import subprocess
import sys
import textwrap
import warnings
from typing import List, Optional, Tuple

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")


def _script(obj):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.script(obj)


def _w(g, ic, ocg, *ks, per_channel=True):
    data = torch.randint(-128, 128, (ic, ocg, *ks), dtype=torch.int8, generator=g)
    if per_channel:
        return torch._make_per_channel_quantized_tensor(
            data,
            torch.rand(ocg, dtype=torch.double, generator=g) * 0.01 + 0.001,
            torch.randint(-3, 4, (ocg,), generator=g),
            1,
        )
    return torch._make_per_tensor_quantized_tensor(data, 0.004, 0)


class ConvTNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.p1 = q.conv_transpose1d_prepack(_w(g, 4, 6, 3), torch.randn(6, generator=g), [2], [1], [1], [1], 1)
        self.p2 = q.conv_transpose2d_prepack(
            _w(g, 8, 3, 4, 4), torch.randn(6, generator=g), [2, 2], [1, 1], [0, 0], [1, 1], 2
        )
        self.p3 = q.conv_transpose3d_prepack(
            _w(g, 4, 4, 2, 2, 2, per_channel=False), None, [2, 2, 2], [0, 0, 0], [1, 0, 1], [1, 1, 1], 1
        )

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> List[torch.Tensor]:
        return [
            torch.ops.qplugin.conv_transpose1d(x1, self.p1, 0.05, 10),
            torch.ops.qplugin.conv_transpose2d(x2, self.p2, 0.05, 10),
            torch.ops.qplugin.conv_transpose3d(x3, self.p3, 0.05, 10),
        ]


def inputs():
    g = torch.Generator().manual_seed(1)

    def x(*shape):
        return torch._make_per_tensor_quantized_tensor(
            torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), 0.02, 7
        )

    return x(2, 4, 9), x(1, 8, 5, 6), x(1, 4, 2, 3, 3)


def test_script_save_load_fresh_process(tmp_path):
    m = _script(ConvTNet())
    assert "qplugin::conv_transpose2d" in str(m.graph) and "quantized::" not in str(m.graph)
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
        w, b = torch.ops.qplugin.conv_transpose2d_unpack(m.p2)
        assert w.shape == (8, 3, 4, 4) and w.q_per_channel_axis() == 1 and b.shape == (6,)
        assert m.p2.transpose() and m.p2.groups() == 2 and m.p3.output_padding() == [1, 0, 1]
        assert m.p1.stride() == [2] and m.p1.output_padding() == [1]
        print("OK")
    """)
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-2000:]


def test_deepcopy_and_pickle_roundtrip():
    import copy
    import io

    m = _script(ConvTNet())
    xs = inputs()
    ref = [y.int_repr() for y in m(*xs)]
    assert all(torch.equal(a.int_repr(), b) for a, b in zip(copy.deepcopy(m)(*xs), ref))
    buf = io.BytesIO()
    torch.jit.save(m, buf)
    buf.seek(0)
    assert all(torch.equal(a.int_repr(), b) for a, b in zip(torch.jit.load(buf)(*xs), ref))


StateT = Tuple[
    Tuple[int, str, int], Tuple[torch.Tensor, Optional[torch.Tensor]], Tuple[List[int], List[int], List[int], List[int]]
]
State = Tuple[Tuple[int, str, int], Tuple[torch.Tensor, Optional[torch.Tensor]], Tuple[List[int], List[int], List[int]]]


def _set_t2_py(p: torch.classes.qplugin.Conv2dPackedParamsBase, s: StateT) -> int:
    p.__setstate__(s)
    return p.groups()


def _set_t3_py(p: torch.classes.qplugin.Conv3dPackedParamsBase, s: StateT) -> int:
    p.__setstate__(s)
    return p.groups()


def _set_v1_py(p: torch.classes.qplugin.Conv2dPackedParamsBase, s: State) -> int:
    p.__setstate__(s)
    return p.groups()


def test_state_roundtrip_and_corrupted_states():
    set_t2, set_t3, set_v1 = _script(_set_t2_py), _script(_set_t3_py), _script(_set_v1_py)
    m = ConvTNet()
    st, name = m.p2.__getstate__()
    assert name.endswith("Conv2dPackedParamsBase")
    (version, kind, groups), (w, b), (stride, padding, output_padding, dilation) = st
    assert (version, kind, groups) == (2, "conv_transpose2d", 2)
    assert (stride, padding, output_padding, dilation) == ([2, 2], [1, 1], [0, 0], [1, 1])
    xs = inputs()
    ref = q.conv_transpose2d(xs[1], m.p2, 0.05, 10).int_repr()
    assert set_t2(m.p2, st) == 2
    assert torch.equal(q.conv_transpose2d(xs[1], m.p2, 0.05, 10).int_repr(), ref)
    geom = (stride, padding, output_padding, dilation)
    bad = [
        (((3, kind, 2), (w, b), geom), r"state version should be 1 \(conv\) or 2 \(transposed conv\), got 3"),
        (((2, "conv2d", 2), (w, b), geom), r"kind should be 'conv_transpose1d' or 'conv_transpose2d'"),
        (((2, "conv_transpose3d", 2), (w, b), geom), r"kind should be 'conv_transpose1d' or 'conv_transpose2d'"),
        (((2, kind, 3), (w, b), geom), r"groups should divide in_channels \(8, weight dim 0\), got groups 3"),
        (
            ((2, kind, 2), (w, b), (stride, padding, [2, 0], dilation)),
            r"output_padding should be >= 0 and smaller than stride or dilation",
        ),
        (((2, kind, 2), (w, b), (stride, padding, [0], dilation)), r"output_padding should have 2 elements"),
        (((2, kind, 2), (w, b), (stride, padding, output_padding, [1, 2**62])), r"dilation should be in \[1, 65536\]"),
        (((2, kind, 2), (w, b[:3]), geom), r"bias should be a 1-d tensor of 6 elements"),
        (((2, kind, 2), (w.dequantize(), b), geom), r"weight should be a quantized qint8"),
    ]
    for s, msg in bad:
        with pytest.raises(RuntimeError, match=msg):
            set_t2(m.p2, s)
    # a version-2 header on a version-1 (3-list) geometry is the wrong type
    with pytest.raises(RuntimeError, match=r"state should be of type"):
        set_v1(m.p2, ((2, kind, 2), (w, b), (stride, padding, dilation)))
    st3, _ = m.p3.__getstate__()
    with pytest.raises(RuntimeError, match=r"kind should be 'conv_transpose3d', got 'conv_transpose2d'"):
        set_t3(m.p3, ((2, "conv_transpose2d", 1), st3[1], st3[2]))
    # a conv (version 1) state on the same class still loads
    cw = torch._make_per_tensor_quantized_tensor(torch.ones(4, 2, 3, 3, dtype=torch.int8), 0.1, 0)
    assert set_v1(m.p2, ((1, "conv2d", 2), (cw, None), ([1, 1], [0, 0], [1, 1]))) == 2
    assert m.p2.transpose() is False and m.p2.kind() == "conv2d"
