"""The plain form of the fp16 dynamic Linear: quantize_dynamic(dtype=torch.float16,
plain=True), a float16_dynamic_qconfig spec with plain=True and to_plain (of ours and of torch.ao's
fp16 dynamic Linear) give torch_qplugin.nn.plain.DynamicLinearFP16: float16 weight and float32 bias
as plain buffers, qplugin::plain_linear_dynamic_fp16 on linear_dynamic_fp16's kernel, so outputs are
bit-identical to the quantized-tier fp16 module on every kernel path. The fp16 LSTM / GRU / cells
have plain forms too (DynamicLinearFP16 weight holders, qplugin::plain_rnn_layer_dynamic_fp16);
torch.ao's fp16 recurrent modules are refused by to_plain."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

import reference as ref
import torch_qplugin.nn.plain as nnp
import torch_qplugin.nn.quantized.dynamic as nnqd
import torch_qplugin.quantization as tq
from test_plain_workflow import _check_round_trips  # deepcopy / torch.save round trips

_QDTYPES = {getattr(torch, n) for n in ("quint8", "qint8", "qint32")}


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 20)
        self.body = nn.Sequential(nn.ReLU(), nn.Linear(20, 9, bias=False))
        self.fc3 = nn.Linear(9, 4)

    def forward(self, x):
        return self.fc3(torch.tanh(self.body(self.fc1(x))))


def _assert_plain_fp16(model, n=3):
    kinds = [type(m) for m in model.modules()]
    assert kinds.count(nnp.DynamicLinearFP16) == n and nnqd.Linear not in kinds
    for k, v in model.state_dict().items():
        assert isinstance(v, torch.Tensor) and not v.is_quantized and v.dtype not in _QDTYPES, k
        assert v.dtype == (torch.float16 if k.endswith("weight") else torch.float32), k
    for m in model.modules():
        assert not any(isinstance(v, torch.ScriptObject) for v in m.__dict__.values())


def _inputs():
    return [torch.randn(5, 12) * 3, torch.randn(2, 3, 12), torch.randn(0, 12), torch.randn(12)]


@pytest.mark.parametrize("how", ["dtype", "qconfig_spec", "to_plain"])
def test_plain_fp16_linear_matches_quantized(how, isa):
    model = _MLP().eval()
    quant = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.float16, plain=False)
    if how == "dtype":
        plain = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.float16, plain=True)
    elif how == "qconfig_spec":
        plain = tq.quantize_dynamic(model, {nn.Linear: tq.float16_dynamic_qconfig}, plain=True)
    else:
        plain = tq.to_plain(quant)
    _assert_plain_fp16(plain)
    assert "dtype=torch.float16" in repr(plain.fc1)
    for x in _inputs():
        assert torch.equal(plain(x), quant(x))
    lin = plain.fc1  # and within the kernel's bound of the float64 reference
    x = torch.randn(7, 12)
    exp = ref.linear_fp16_ref(x.numpy(), model.fc1.weight.detach().numpy(), model.fc1.bias.detach().numpy())
    tol = ref.linear_fp16_tolerance(x.numpy(), model.fc1.weight.detach().numpy(), model.fc1.bias.detach().numpy())
    assert (np.abs(lin(x).detach().numpy().astype(np.float64) - exp) <= tol).all()
    assert torch.equal(lin.weight, model.fc1.weight.detach().half())


def test_plain_fp16_round_trips():
    """deepcopy, state_dict through torch.save (weights_only) into a model of other weights, torch.save."""
    plain = tq.quantize_dynamic(_MLP().eval(), {nn.Linear}, dtype=torch.float16, plain=True)
    x = torch.randn(6, 12)
    want = plain(x)
    other = tq.quantize_dynamic(_MLP().eval(), {nn.Linear}, dtype=torch.float16, plain=True)
    assert not torch.equal(other(x), want)
    other.load_state_dict(plain.state_dict())
    assert torch.equal(other(x), want)
    _check_round_trips(plain, x, want)


def test_plain_fp16_load_is_validated():
    m = nnp.DynamicLinearFP16(4, 3)
    sd = {"weight": torch.randn(3, 4), "bias": torch.randn(3)}
    with pytest.raises(
        RuntimeError,
        match=r"weight: torch_qplugin.nn.plain.DynamicLinearFP16 holds a float16 "
        r"weight, got dtype torch.float32",
    ):
        m.load_state_dict(sd)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight"):
        m.load_state_dict({"weight": torch.randn(3, 5).half(), "bias": torch.randn(3)})


def test_plain_fp16_saturates_as_prepack():
    """Weights past the float16 range saturate to +-65504 (as linear_prepack_fp16) instead of inf."""
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1e6, -1e6, 0.5], [1.0, 2.0, -3.0]]))
    p = nnp.DynamicLinearFP16.from_float(lin)
    assert p.weight[0, :2].tolist() == [65504.0, -65504.0]
    with warnings.catch_warnings():  # a C++ warning: stderr under torch 2.13 / 2.14, Python's from 2.15
        warnings.filterwarnings("ignore", message="qplugin::linear_prepack_fp16: W has values outside")
        q = tq.quantize_dynamic(nn.Sequential(lin), {nn.Linear}, dtype=torch.float16, plain=False)
    assert torch.equal(q[0].weight()[0, :2], p.weight[0, :2].float())
    x = torch.randn(4, 3) * 1e-3
    assert torch.equal(p(x), q(x))


def test_to_plain_of_torch_ao_fp16_linear(isa):
    taq = pytest.importorskip("torch.ao.quantization")
    model = _MLP().eval()
    ao = taq.quantize_dynamic(model, {nn.Linear}, dtype=torch.float16)
    plain = tq.to_plain(ao)
    _assert_plain_fp16(plain)
    ours = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.float16, plain=False)
    for x in _inputs()[:3]:  # (torch's fp16 kernel takes no 1-D input)
        assert torch.equal(plain(x), ours(x))
        torch.testing.assert_close(plain(x), ao(x), rtol=1e-5, atol=1e-5)  # torch's own fp16 kernel


class _Seq(nn.Module):
    """fp16 LSTM (2 layers, bidirectional), GRU and the three cells."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 5, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(10, 4, bias=False)
        self.lstm_cell, self.gru_cell = nn.LSTMCell(4, 3), nn.GRUCell(3, 4)
        self.rnn_cell = nn.RNNCell(4, 3, nonlinearity="relu")

    def forward(self, x):
        y, _ = self.lstm(x)
        y = self.gru(y)[0][-1]
        h, _ = self.lstm_cell(y)
        return self.rnn_cell(self.gru_cell(h))


@pytest.mark.parametrize("how", ["dtype", "to_plain"])
def test_plain_fp16_recurrent_matches_quantized(how, isa):
    model = _Seq().eval()
    quant = tq.quantize_dynamic(model, dtype=torch.float16, plain=False)
    plain = tq.quantize_dynamic(model, dtype=torch.float16, plain=True) if how == "dtype" else tq.to_plain(quant)
    kinds = [type(m) for m in plain.modules()]
    for cls in (nnp.LSTM, nnp.GRU, nnp.LSTMCell, nnp.GRUCell, nnp.RNNCell):
        assert cls in kinds, cls
    assert kinds.count(nnp.DynamicLinearFP16) == 2 * (4 + 1 + 3) and nnp.DynamicLinear not in kinds
    for k, v in plain.state_dict().items():
        assert v.dtype == (torch.float16 if k.endswith("weight") else torch.float32), k
    for x in (torch.randn(7, 2, 6), torch.randn(1, 1, 6) * 3):
        assert torch.equal(plain(x), quant(x))
    x = torch.randn(7, 2, 6)
    _check_round_trips(plain, x, quant(x))


def test_to_plain_refuses_torch_ao_fp16_recurrent():
    taq = pytest.importorskip("torch.ao.quantization")
    ao = taq.quantize_dynamic(nn.Sequential(nn.LSTM(4, 3)), {nn.LSTM}, dtype=torch.float16)
    with pytest.raises(
        TypeError,
        match=r"to_plain: torch.ao.nn.quantized.dynamic.*LSTM with dtype torch.float16 has "
        r"no plain form \(torch.ao's dynamic recurrent modules: qint8 weights only\)",
    ):
        tq.to_plain(ao)
