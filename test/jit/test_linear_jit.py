"""TorchScript: modules holding LinearPackedParamsBase script, save, and load in a fresh
process (after import torch_qplugin) with identical outputs; graphs call qplugin:: only."""

import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import torch_qplugin  # noqa: F401


class StaticDynamic(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor, xf: torch.Tensor):
        y = torch.ops.qplugin.linear(x, self.p, 0.07, 120)
        r = torch.ops.qplugin.linear_relu(x, self.p, 0.07, 120)
        z = torch.ops.qplugin.linear_dynamic(xf, self.p, True)
        w, b = torch.ops.qplugin.linear_unpack(self.p)
        return y, r, z, w


def _script(m):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.script(m)


@pytest.mark.parametrize("per_channel", [False, True])
def test_script_save_load_fresh_process(tmp_path, per_channel):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(11, 19, generator=g) * 0.3
    if per_channel:
        wq = torch.quantize_per_channel(
            w,
            torch.rand(11, generator=g, dtype=torch.float64) * 0.01 + 0.003,
            torch.randint(-3, 4, (11,), generator=g),
            0,
            torch.qint8,
        )
    else:
        wq = torch.quantize_per_tensor(w, 0.01, -2, torch.qint8)
    p = torch.ops.qplugin.linear_prepack(wq, torch.randn(11, generator=g))
    sm = _script(StaticDynamic(p))
    graph = str(sm.graph)
    assert "qplugin::linear" in graph and "quantized::" not in graph
    x = torch._make_per_tensor_quantized_tensor(
        torch.randint(0, 256, (4, 19), generator=g, dtype=torch.uint8), 0.05, 130
    )
    xf = torch.randn(4, 19, generator=g)
    outs = sm(x, xf)
    model = tmp_path / "m.pt"
    io = tmp_path / "io.pt"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        torch.jit.save(sm, str(model))
    torch.save(
        {
            "x": x.int_repr(),
            "xf": xf,
            "y": outs[0].int_repr(),
            "r": outs[1].int_repr(),
            "z": outs[2],
            "w": outs[3].int_repr(),
        },
        io,
    )
    code = textwrap.dedent(f"""
        import warnings
        warnings.simplefilter("ignore")
        import torch
        import torch_qplugin
        m = torch.jit.load({str(model)!r})
        io = torch.load({str(io)!r})
        x = torch._make_per_tensor_quantized_tensor(io["x"], 0.05, 130)
        y, r, z, w = m(x, io["xf"])
        assert torch.equal(y.int_repr(), io["y"]), "y"
        assert torch.equal(r.int_repr(), io["r"]), "r"
        assert torch.equal(z, io["z"]), "z"
        assert torch.equal(w.int_repr(), io["w"]), "w"
        print("OK")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "OK" in res.stdout, res.stderr[-3000:]


def test_load_without_plugin_fails_clearly(tmp_path):
    g = torch.Generator().manual_seed(1)
    p = torch.ops.qplugin.linear_prepack(torch.quantize_per_tensor(torch.randn(3, 4, generator=g), 0.1, 0, torch.qint8))
    model = tmp_path / "m.pt"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        torch.jit.save(_script(StaticDynamic(p)), str(model))
    code = f"import warnings; warnings.simplefilter('ignore'); import torch; torch.jit.load({str(model)!r})"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode != 0 and "qplugin" in res.stderr
