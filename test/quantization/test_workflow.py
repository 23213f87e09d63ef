"""Workflow pieces that need no linear/conv kernels: fuse, propagate, prepare, prepare_qat,
mappings, _compat isolation, no torch.ao.quantization deprecation warnings, bad-use errors."""

import ast
import pathlib
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.quantization as tq
from torch_qplugin.quantization import _compat as C
import torch_qplugin.nn.quantized as nnq

PKG = pathlib.Path(tq.__file__).resolve().parents[1]


class ConvBnReLUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.relu2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)
        self.bn1d = nn.BatchNorm1d(4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu2(self.conv2(self.relu(self.bn(self.conv(x)))))
        x = self.pool(x).flatten(1)
        return self.dequant(self.bn1d(self.fc(x)))


def _randomize_bn(m):
    for mod in m.modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            mod.running_mean.uniform_(-1, 1)
            mod.running_var.uniform_(0.5, 2)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.5, 0.5)
    return m


def test_fuse_eval_folds_bn_and_matches_float():
    m = _randomize_bn(ConvBnReLUNet()).eval()
    x = torch.randn(2, 3, 8, 8)
    ref = m(x)
    fused = tq.fuse_modules(m, [["conv", "bn", "relu"], ["conv2", "relu2"], ["fc", "bn1d"]])
    assert fused is not m and isinstance(m.bn, nn.BatchNorm2d)  # not in place
    assert isinstance(fused.conv, C.ConvReLU2d) and isinstance(fused.conv[0], nn.Conv2d)
    assert isinstance(fused.bn, nn.Identity) and isinstance(fused.relu, nn.Identity)
    assert isinstance(fused.conv2, C.ConvReLU2d)
    assert isinstance(fused.fc, nn.Linear) and isinstance(fused.bn1d, nn.Identity)
    torch.testing.assert_close(fused(x), ref, rtol=1e-4, atol=1e-5)
    # in place
    out = tq.fuse_modules(m, ["conv2", "relu2"], inplace=True)
    assert out is m and isinstance(m.conv2, C.ConvReLU2d)


def test_fuse_train_mode_keeps_bn_for_qat():
    m = ConvBnReLUNet().train()
    fused = tq.fuse_modules(m, [["conv", "bn", "relu"], ["fc", "bn1d"]])
    assert isinstance(fused.conv, C.ConvBnReLU2d)
    assert isinstance(fused.fc, C.LinearBn1d)
    fused_qat = tq.fuse_modules_qat(ConvBnReLUNet().train(), [["conv", "bn"]])
    assert isinstance(fused_qat.conv, C.ConvBn2d)


def test_fuse_same_as_torch():
    taq = pytest.importorskip("torch.ao.quantization")
    m = _randomize_bn(ConvBnReLUNet()).eval()
    groups = [["conv", "bn", "relu"], ["conv2", "relu2"], ["fc", "bn1d"]]
    ours = tq.fuse_modules(m, groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = taq.fuse_modules(m, groups)
    for (n1, a), (n2, b) in zip(ours.named_modules(), theirs.named_modules()):
        assert n1 == n2 and type(a) is type(b)
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(ours(x), theirs(x))


def test_fuse_errors():
    m = ConvBnReLUNet().eval()
    with pytest.raises(NotImplementedError, match=r"cannot fuse \('ReLU', 'Conv2d'\)"):
        tq.fuse_modules(m, ["relu", "conv2"])
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        tq.fuse_modules(m, ["conv", "nope"])
    m.bn.train()
    with pytest.raises(ValueError, match="both be in train or both in eval"):
        tq.fuse_modules(m, ["conv", "bn"])


def test_propagate_qconfig():
    m = ConvBnReLUNet()
    qc2 = tq.default_per_tensor_qconfig
    tq.propagate_qconfig_(m, {"": tq.default_qconfig, "fc": qc2, nn.ReLU: None})
    assert m.conv.qconfig is tq.default_qconfig
    assert m.fc.qconfig is qc2
    assert m.relu.qconfig is None
    m2 = ConvBnReLUNet()
    m2.qconfig = tq.default_qconfig
    m2.fc.qconfig = None
    tq.propagate_qconfig_(m2)
    assert m2.conv.qconfig is tq.default_qconfig and m2.fc.qconfig is None
    with pytest.raises(TypeError, match="should be a QConfig"):
        tq.propagate_qconfig_(ConvBnReLUNet(), {"": "not a qconfig"})


def test_prepare_inserts_observers_and_calibrates():
    m = tq.fuse_modules(_randomize_bn(ConvBnReLUNet()).eval(), [["conv", "bn", "relu"], ["fc", "bn1d"]])
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    assert p is not m and not hasattr(m.conv, "activation_post_process")
    for name in ("quant", "conv", "conv2", "fc"):
        assert isinstance(getattr(p, name).activation_post_process, tq.MinMaxObserver), name
    for name in ("dequant", "relu2", "pool"):  # keep input qparams: no observer
        assert not hasattr(getattr(p, name), "activation_post_process"), name
    x = torch.randn(4, 3, 8, 8)
    p(x)
    obs = p.conv.activation_post_process
    assert float(obs.min_val) >= 0.0  # after the fused relu
    assert float(obs.max_val) == pytest.approx(float(m.conv(m.quant(x)).detach().max()), rel=1e-5)
    q = tq.prepare(m, inplace=True)
    assert q is m


def test_prepare_warns_without_qconfig():
    with pytest.warns(UserWarning, match="no submodule got a qconfig"):
        tq.prepare(ConvBnReLUNet())


def test_prepare_qat_swaps_and_trains():
    m = tq.fuse_modules(ConvBnReLUNet().train(), [["conv", "bn", "relu"], ["conv2", "relu2"]])
    m.qconfig = tq.default_qat_qconfig
    p = tq.prepare_qat(m)
    assert isinstance(p.conv, C.intrinsic_qat.ConvBnReLU2d)
    assert isinstance(p.conv2, C.intrinsic_qat.ConvReLU2d)
    assert isinstance(p.fc, C.qat.Linear)
    assert isinstance(p.fc.weight_fake_quant, tq.FakeQuantize)
    assert isinstance(p.conv.activation_post_process, tq.FakeQuantize)
    opt = torch.optim.SGD(p.parameters(), lr=0.01)
    x = torch.randn(4, 3, 8, 8)
    w0 = p.fc.weight.detach().clone()
    loss = p(x).square().sum()
    loss.backward()
    assert p.fc.weight.grad is not None and p.conv.weight.grad.abs().sum() > 0
    opt.step()
    assert not torch.equal(w0, p.fc.weight)
    with pytest.raises(RuntimeError, match="training mode"):
        tq.prepare_qat(ConvBnReLUNet().eval())


def test_mappings_are_copies_and_cover_the_surface():
    a = tq.get_default_static_quant_module_mappings()
    a[nn.Linear] = None
    assert tq.get_default_static_quant_module_mappings()[nn.Linear] is nnq.Linear
    s = tq.get_default_static_quant_module_mappings()
    for f, q in [
        (tq.QuantStub, nnq.Quantize),
        (tq.DeQuantStub, nnq.DeQuantize),
        (nn.Conv1d, nnq.Conv1d),
        (nn.Conv2d, nnq.Conv2d),
        (nn.Conv3d, nnq.Conv3d),
        (nn.ReLU, nnq.ReLU),
        (nn.ReLU6, nnq.ReLU6),
        (nn.Hardswish, nnq.Hardswish),
        (nn.ELU, nnq.ELU),
        (nn.LeakyReLU, nnq.LeakyReLU),
        (nn.Sigmoid, nnq.Sigmoid),
        (nn.Hardsigmoid, nnq.Hardsigmoid),
        (nn.MaxPool2d, nnq.MaxPool2d),
        (nn.AvgPool2d, nnq.AvgPool2d),
        (nn.AdaptiveAvgPool2d, nnq.AdaptiveAvgPool2d),
        (nnq.FloatFunctional, nnq.QFunctional),
        (C.LinearReLU, nnq.LinearReLU),
        (C.ConvReLU2d, nnq.ConvReLU2d),
        (C.ConvAdd2d, nnq.ConvAdd2d),
        (C.ConvAddReLU2d, nnq.ConvAddReLU2d),
    ]:
        assert s[f] is q, f
    taq = pytest.importorskip("torch.ao.quantization")
    assert s[taq.QuantStub] is nnq.Quantize and s[taq.DeQuantStub] is nnq.DeQuantize
    d = tq.get_default_dynamic_quant_module_mappings()
    assert d[nn.LSTM] is nnq.dynamic.LSTM and d[nn.Linear] is nnq.dynamic.Linear
    qat = tq.get_default_qat_module_mappings()
    assert qat[nn.Conv2d] is C.qat.Conv2d
    assert qat is not tq.get_default_qat_module_mappings()


def _imports_torch_ao(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(n.startswith("torch.ao") for n in names):
            return True
    return False


def test_torch_ao_imported_only_in_compat():
    offenders = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if _imports_torch_ao(p)]
    assert offenders == ["quantization/_compat.py"]


def test_workflow_emits_no_torch_ao_deprecation_warning():
    code = r"""
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as rec:
    import torch, torch.nn as nn
    import torch_qplugin.quantization as tq
    m = nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), tq.DeQuantStub()).eval()
    m = tq.fuse_modules(m, ["1", "2", "3"])
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    p(torch.randn(2, 3, 8, 8))
    t = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).train()
    t.qconfig = tq.default_qat_qconfig
    tq.prepare_qat(t)(torch.randn(2, 4)).sum().backward()
    q = tq.convert(p)
    q(torch.randn(2, 3, 8, 8))
    tq.quantize_dynamic(nn.Sequential(nn.Linear(4, 4), nn.LSTM(4, 4)))
    tq.get_default_static_quant_module_mappings()
bad = [str(w.message)[:80] for w in rec if issubclass(w.category, (DeprecationWarning, FutureWarning))
       or "deprecated" in str(w.message).lower() and "torch.ao" in str(w.message)]
print("BAD", bad)
assert not bad, bad
"""
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(PKG.parent)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BAD []" in r.stdout


def test_torch_ao_prepare_does_warn():
    """The test above can fail: torch's own workflow does emit the warning."""
    taq = pytest.importorskip("torch.ao.quantization")
    m = nn.Sequential(nn.Linear(2, 2))
    m.qconfig = taq.default_qconfig
    with pytest.warns(DeprecationWarning, match="torch.ao.quantization is deprecated"):
        taq.prepare(m)


def test_convert_without_qconfig_or_observers_raises():
    m = ConvBnReLUNet().eval()
    with pytest.raises(RuntimeError, match="no module in the model has a qconfig"):
        tq.convert(m)
    m.qconfig = tq.default_qconfig
    tq.propagate_qconfig_(m)
    with pytest.raises(RuntimeError, match="no observers; call .*prepare"):
        tq.convert(m)


def test_calibrate_progress_bar(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    m = nn.Sequential(tq.QuantStub(), nn.Linear(3, 3))
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    data = [torch.randn(2, 3) for _ in range(5)]
    tq.calibrate(p, data, progress_bar=True)
    err = capsys.readouterr().err
    assert "calibrating: 5/5" in err
    tq.calibrate(p, data)
    assert capsys.readouterr().err == ""
    assert float(p[0].activation_post_process.max_val) == max(float(d.max()) for d in data)


def test_calibrate_progress_bar_tqdm(capsys):
    pytest.importorskip("tqdm")
    m = nn.Sequential(tq.QuantStub(), nn.Linear(3, 3))
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    tq.calibrate(p, [torch.randn(2, 3) for _ in range(3)], progress_bar=True, desc="calib-tqdm")
    assert "calib-tqdm" in capsys.readouterr().err


def test_quant_wrapper_add_quant_dequant_and_swap_module():
    lin = nn.Linear(4, 3)
    lin.qconfig = tq.default_qconfig
    w = tq.add_quant_dequant(lin)
    assert isinstance(w, tq.QuantWrapper) and w.module is lin
    assert w.quant.qconfig is tq.default_qconfig
    p = tq.prepare(w)
    x = torch.randn(5, 4)
    tq.calibrate(p, [x])
    q = tq.convert(p)
    assert isinstance(q.quant, nnq.Quantize) and isinstance(q.module, nnq.Linear)
    torch.testing.assert_close(q(x), lin(x), atol=0.1, rtol=0.05)
    # swap_module leaves modules without qconfig or mapping entry alone
    relu = nn.ReLU()
    assert tq.swap_module(relu, tq.get_default_static_quant_module_mappings(), {}) is relu
    relu.qconfig = tq.default_qconfig
    assert isinstance(tq.swap_module(relu, tq.get_default_static_quant_module_mappings(), {}), nnq.ReLU)
    assert tq.swap_module(relu, {}, {}) is relu
