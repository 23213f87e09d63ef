"""Graph-mode quantization: torch_qplugin.quantization.quantize_jit / quantize_dynamic_jit.
A scripted (or traced) float model in, a frozen ScriptModule out whose graph calls qplugin:: ops only
(no quantized:: op, no torch packed-params object), with the eager qplugin result: the same model
written for eager mode, given the same weights and calibration data, gives identical outputs (same
observers -> same qparams -> the same kernels). Saved and loaded in a fresh process."""

import copy

import pytest
import torch
import torch.nn as nn

import torch_qplugin
import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq
from test_modules_jit import _load_in_fresh_process

pytest.importorskip("torch.ao.quantization")
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")


class Net(nn.Module):
    """conv + relu, a second conv, add, cat, max pool, flatten, linear (torch's graph mode quantizes
    the whole chain)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        y = self.relu(self.conv(x))
        z = self.conv2(x)
        c = torch.cat([y + z, z], 1)
        return self.fc(torch.flatten(self.pool(c), 1))


class EagerNet(Net):
    """The same model written for eager mode (stubs, FloatFunctional)."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.add, self.cat = nnq.FloatFunctional(), nnq.FloatFunctional()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu(self.conv(x))
        z = self.conv2(x)
        c = self.cat.cat([self.add.add(y, z), z], 1)
        return self.dequant(self.fc(torch.flatten(self.pool(c), 1)))


def _calibrate(model, data):
    for x in data:
        model(x)


def _no_torch_quantized(scripted):
    g = str(scripted.inlined_graph)
    assert "quantized::" not in g and "classes.quantized." not in g, g
    assert "aten::quantize_per_tensor" not in g and "aten::dequantize" not in g, g
    return g


@pytest.mark.parametrize("how", ["script", "trace"])
def test_static_matches_eager(isa, how, tmp_path):
    torch.manual_seed(0)
    float_model = Net().eval()
    data = [torch.randn(2, 3, 8, 8) for _ in range(4)]
    scripted = torch.jit.script(float_model) if how == "script" else torch.jit.trace(float_model, data[0])
    q = tq.quantize_jit(scripted, {"": tq.default_qconfig}, _calibrate, [data])
    g = _no_torch_quantized(q)
    for op in (
        "qplugin::quantize_per_tensor",
        "qplugin::conv2d_relu",
        "qplugin::conv2d",
        "qplugin::add",
        "qplugin::cat",
        "qplugin::max_pool2d",
        "qplugin::linear",
        "qplugin::dequantize",
    ):
        assert op in g, (op, g)

    eager = EagerNet().eval()
    eager.load_state_dict(float_model.state_dict(), strict=False)
    eager = tq.fuse_modules(eager, [["conv", "relu"]])
    eager.qconfig = tq.default_qconfig
    eq = tq.quantize(eager, _calibrate, [data])
    x = torch.randn(3, 3, 8, 8)
    assert torch.equal(q(x), eq(x))
    with torch_qplugin.kernel_isa("scalar"):
        assert torch.equal(q(x), eq(x))
    # the float model is untouched (inplace=False) and still float
    assert "quantized" not in str(scripted.graph)
    path, io = tmp_path / "q.pt", tmp_path / "io.pt"
    torch.jit.save(q, str(path))
    torch.save(((x,), [q(x)]), str(io))
    _load_in_fresh_process([(path, io)])


def test_static_with_torch_qconfig():
    """torch's own qconfigs pass through (their observers, reduce_range included)."""
    import torch.ao.quantization as taq

    data = [torch.randn(2, 3, 8, 8) for _ in range(2)]
    q = tq.quantize_jit(torch.jit.script(Net().eval()), {"": taq.get_default_qconfig("x86")}, _calibrate, [data])
    _no_torch_quantized(q)
    y = q(data[0])
    assert y.shape == (2, 5) and torch.isfinite(y).all()


class DynNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.lstm = nn.LSTM(8, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        y, _ = self.lstm(torch.relu(self.fc(x)))
        return self.fc2(y)


@pytest.mark.parametrize("dtype", [torch.qint8, torch.float16])
def test_dynamic_matches_eager(isa, dtype, tmp_path):
    torch.manual_seed(1)
    model = DynNet().eval()
    qconfig = tq.default_dynamic_qconfig if dtype == torch.qint8 else tq.float16_dynamic_qconfig
    q = tq.quantize_dynamic_jit(torch.jit.script(model), {"": qconfig})
    g = _no_torch_quantized(q)
    op = "qplugin::linear_dynamic" if dtype == torch.qint8 else "qplugin::linear_dynamic_fp16"
    assert g.count(op + "(") == 2, g
    assert "aten::lstm" in g  # torch's graph mode leaves the LSTM float; so does this
    # eager: the Linear layers dynamically quantized the same way, the LSTM float
    eager = tq.quantize_dynamic(model, {nn.Linear: qconfig})
    x = torch.randn(5, 2, 6)
    assert torch.equal(q(x), eager(x))
    path, io = tmp_path / "d.pt", tmp_path / "io.pt"
    torch.jit.save(q, str(path))
    torch.save(((x,), [q(x)]), str(io))
    _load_in_fresh_process([(path, io)])


def test_submodule_qconfig_dict():
    """{name: qconfig} quantizes only that submodule, as torch's."""
    model = DynNet().eval()
    q = tq.quantize_dynamic_jit(torch.jit.script(model), {"fc2": tq.default_dynamic_qconfig})
    g = _no_torch_quantized(q)
    assert g.count("qplugin::linear_dynamic(") == 1
    eager = copy.deepcopy(model)
    eager.fc2 = tq.quantize_dynamic(nn.Sequential(model.fc2), {nn.Linear})[0]
    x = torch.randn(5, 2, 6)
    assert torch.equal(q(x), eager(x))


def test_errors():
    with pytest.raises(TypeError, match=r"quantize_jit: expected a scripted or traced model .* got Net"):
        tq.quantize_jit(Net(), {"": tq.default_qconfig}, _calibrate, [[]])
    with pytest.raises(TypeError, match=r"quantize_dynamic_jit: expected a scripted or traced model"):
        tq.quantize_dynamic_jit(DynNet(), {"": tq.default_dynamic_qconfig})
    s = torch.jit.script(Net().eval())
    with pytest.raises(ValueError, match=r"quantize_jit: debug=True is not supported"):
        tq.quantize_jit(s, {"": tq.default_qconfig}, _calibrate, [[]], debug=True)
    with pytest.raises(TypeError, match=r"qconfig_dict should be a dict"):
        tq.quantize_dynamic_jit(s, tq.default_dynamic_qconfig)


def test_without_torch_graph_mode_passes(monkeypatch):
    """What happens when torch removes its graph-mode passes: a clear error, not an AttributeError
    from deep inside (docs/migration.md)."""
    import torch.ao.quantization as taq

    monkeypatch.delattr(taq, "quantize_jit")
    s = torch.jit.script(Net().eval())
    with pytest.raises(
        RuntimeError,
        match=r"quantize_jit: this torch has no graph-mode quantization passes .*"
        r"use eager mode",
    ):
        tq.quantize_jit(s, {"": tq.default_qconfig}, _calibrate, [[torch.randn(1, 3, 8, 8)]])
    monkeypatch.delattr(taq, "quantize_dynamic_jit")
    with pytest.raises(RuntimeError, match=r"quantize_dynamic_jit: this torch has no graph-mode quantization passes"):
        tq.quantize_dynamic_jit(torch.jit.script(DynNet().eval()), {"": tq.default_dynamic_qconfig})
