"""The fp16 dynamic scheme in modules and the workflow: nn.quantized.dynamic.Linear /
LSTM / GRU / cells with dtype=torch.float16 (float16 weights, float activations, no int8 step),
float16_dynamic_qconfig, quantize_dynamic(dtype=torch.float16), torch.ao's convert with our
mappings, state_dicts across torch's fp16 modules. Oracles: the float64 reference with fp16
weights (test/reference.py) and torch's fp16 dynamic modules."""

import numpy as np
import pytest
import torch
import torch.nn as nn

import reference as ref
import torch_qplugin
import torch_qplugin.nn.quantized.dynamic as nnqd
import torch_qplugin.quantization as tq

tnnqd = pytest.importorskip("torch.ao.nn.quantized.dynamic")
taq = pytest.importorskip("torch.ao.quantization")

q = torch.ops.qplugin


def _lin_check(y, x, w, b, relu=False):
    exp = ref.linear_fp16_ref(x.numpy(), w.numpy(), None if b is None else b.numpy(), relu)
    tol = ref.linear_fp16_tolerance(x.numpy(), w.numpy(), None if b is None else b.numpy())
    assert (np.abs(y.detach().numpy().astype(np.float64) - exp) <= tol).all()


def test_qconfigs_match_torch():
    assert tq.float16_dynamic_qconfig.weight().dtype == torch.float16
    a = tq.float16_dynamic_qconfig.activation()
    assert a.dtype == torch.float16 and a.is_dynamic
    assert tq.per_channel_dynamic_qconfig.weight().qscheme == torch.per_channel_symmetric
    assert taq.float16_dynamic_qconfig.weight().dtype == torch.float16  # torch's: the same markers


def test_linear_fp16_module(isa):
    m = nn.Linear(20, 7)
    qm = nnqd.Linear.from_float(_with_qconfig(m, tq.float16_dynamic_qconfig))
    assert qm._packed_params.dtype == torch.float16
    assert repr(qm) == "DynamicQuantizedLinear(in_features=20, out_features=7, dtype=torch.float16)"
    assert torch.equal(qm.weight(), m.weight.detach().half().float()) and torch.equal(qm.bias(), m.bias.detach())
    x = torch.randn(5, 3, 20)
    y = qm(x)
    _lin_check(y.reshape(-1, 7), x.reshape(-1, 20), m.weight.detach(), m.bias.detach())
    with torch_qplugin.kernel_isa("scalar"):
        assert torch.equal(qm(x), y)
    with pytest.raises(RuntimeError, match="expected a float input"):
        qm(torch.quantize_per_tensor(x, 0.1, 0, torch.quint8))


def _with_qconfig(m, qconfig):
    m.qconfig = qconfig
    return m


def test_linear_state_dict_across_torch():
    torch_m = tnnqd.Linear(6, 4, dtype=torch.float16)
    w, b = torch.randn(4, 6), torch.randn(4)
    torch_m.set_weight_bias(w, b)
    ours = nnqd.Linear(6, 4, dtype=torch.float16)
    ours.load_state_dict(torch_m.state_dict())
    assert torch.equal(ours.weight(), torch_m.weight()) and torch.equal(ours.bias(), b)
    x = torch.randn(3, 6)
    _lin_check(ours(x), x, w, b)
    tol = ref.linear_fp16_tolerance(x.numpy(), w.numpy(), b.numpy())
    assert (np.abs(ours(x).numpy().astype(np.float64) - torch_m(x).numpy()) <= 2 * tol).all()
    # ours -> torch's; and an int8 module loads an fp16 state (the dtype entry decides)
    back = tnnqd.Linear(6, 4, dtype=torch.float16)
    back.load_state_dict(ours.state_dict())
    assert torch.equal(back.weight(), ours.weight())
    int8 = nnqd.Linear(6, 4)
    int8.load_state_dict(ours.state_dict())
    assert int8._packed_params.dtype == torch.float16 and torch.equal(int8(x), ours(x))


def test_linear_state_dict_bad_dtype():
    ours = nnqd.Linear(6, 4, dtype=torch.float16)
    sd = ours.state_dict()
    sd["_packed_params.dtype"] = torch.quint8
    with pytest.raises(RuntimeError, match=r"qplugin supports qint8 and float16 weights, got torch.quint8"):
        ours.load_state_dict(sd)
    with pytest.raises(ValueError, match=r"weight dtype should be torch.qint8 or torch.float16, got torch.quint8"):
        nnqd.Linear(6, 4, dtype=torch.quint8)


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.lstm = nn.LSTM(6, 5, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(10, 4)

    def forward(self, x):
        y, _ = self.lstm(torch.relu(self.fc(x)))
        return self.gru(y)[0]


def _fp16_float_copy(model):
    """The float model with every Linear / RNN weight rounded to fp16 (what the fp16 scheme computes)."""
    import copy

    m = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "weight" in name:
                p.copy_(p.half().float())
    return m


@pytest.mark.parametrize("how", ["dtype", "qconfig_spec", "set", "torch_convert"])
def test_quantize_dynamic_fp16(isa, how):
    model = _Net().eval()
    if how == "dtype":
        qm = tq.quantize_dynamic(model, {nn.Linear, nn.LSTM, nn.GRU}, dtype=torch.float16)
    elif how == "qconfig_spec":
        qm = tq.quantize_dynamic(
            model,
            {
                nn.Linear: tq.float16_dynamic_qconfig,
                nn.LSTM: tq.float16_dynamic_qconfig,
                nn.GRU: tq.float16_dynamic_qconfig,
            },
        )
    elif how == "set":
        qm = tq.quantize_dynamic(model, None, dtype=torch.float16)
    else:  # torch.ao.quantization's own convert with our mapping
        import copy

        qm = copy.deepcopy(model)
        taq.propagate_qconfig_(
            qm,
            {
                nn.Linear: tq.float16_dynamic_qconfig,
                nn.LSTM: tq.float16_dynamic_qconfig,
                nn.GRU: tq.float16_dynamic_qconfig,
            },
        )
        taq.convert(qm, mapping=tq.get_default_dynamic_quant_module_mappings(), inplace=True)
    assert type(qm.fc) is nnqd.Linear and qm.fc._packed_params.dtype == torch.float16
    assert type(qm.lstm) is nnqd.LSTM and qm.lstm.dtype == torch.float16
    assert type(qm.gru) is nnqd.GRU and qm.gru.dtype == torch.float16
    x = torch.randn(7, 3, 8)
    y = qm(x)
    # the float model with fp16-rounded weights: the same math up to float32 accumulation order and
    # the gates' exp (relative error < 2e-7)
    torch.testing.assert_close(y, _fp16_float_copy(model)(x), rtol=1e-5, atol=2e-6)
    with torch_qplugin.kernel_isa("scalar"):
        assert torch.equal(qm(x), y)


def test_rnn_fp16_matches_torch_fp16_modules():
    model = nn.Sequential(nn.LSTM(6, 5, batch_first=True))
    ours = tq.quantize_dynamic(model, {nn.LSTM}, dtype=torch.float16)
    theirs = taq.quantize_dynamic(model, {nn.LSTM}, dtype=torch.float16)
    x = torch.randn(2, 9, 6)
    o1, (h1, c1) = ours(x)
    o2, (h2, c2) = theirs(x)
    for a, b in ((o1, o2), (h1, h2), (c1, c2)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell, nn.RNNCell])
def test_cells_fp16(isa, cls):
    cell = cls(6, 5).eval()
    qc = tq.quantize_dynamic(nn.Sequential(cell), dtype=torch.float16)[0]
    assert qc.weight_dtype == torch.float16 and "dtype=torch.float16" in repr(qc)
    x, h = torch.randn(3, 6), torch.randn(3, 5)
    ref_cell = _fp16_float_copy(cell)
    hx = (h, torch.randn(3, 5)) if cls is nn.LSTMCell else h
    torch.testing.assert_close(qc(x, hx), ref_cell(x, hx), rtol=1e-5, atol=2e-6)
    (ih_w, ih_b), _ = qc._weight_bias()
    assert ih_w.dtype == torch.float32 and torch.equal(ih_w, cell.weight_ih.detach().half().float())


def test_deepcopy_and_pickle_keep_fp16(tmp_path):
    import copy

    qm = tq.quantize_dynamic(_Net().eval(), dtype=torch.float16)
    x = torch.randn(4, 2, 8)
    assert torch.equal(copy.deepcopy(qm)(x), qm(x))
    torch.save(qm, tmp_path / "m.pt")
    back = torch.load(tmp_path / "m.pt", weights_only=False)
    assert back.fc._packed_params.dtype == torch.float16 and torch.equal(back(x), qm(x))


def test_quantize_dynamic_bad_dtype():
    with pytest.raises(
        ValueError,
        match=r"quantize_dynamic: qplugin supports dtype=torch.qint8 or torch.float16, "
        r"got torch.bfloat16",
    ):
        tq.quantize_dynamic(nn.Sequential(nn.Linear(4, 3)), dtype=torch.bfloat16)
