"""The plain workflow (issue 14): convert / quantize / quantize_dynamic / quantize_qat with
plain=True and to_plain give models of torch_qplugin.nn.plain modules whose outputs are
bit-identical to the quantized-dtype form of the same model, on every kernel path; their
state_dict, deepcopy and torch.save / torch.load hold plain tensors only; plain modules load the
quantized forms' state dicts (ours and torch.ao's)."""
import copy
import io
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import torch_qplugin
import torch_qplugin.nn.plain as nnp
import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from models import DigitsCNN  # noqa: E402
from models.mobilenet import MobileNetV2  # noqa: E402
from models.resnet import resnet18  # noqa: E402
from models.sequence import LSTMClassifier, TransformerClassifier  # noqa: E402

pytestmark = pytest.mark.filterwarnings(r"ignore:Please use quant_min and quant_max:UserWarning")

_QDTYPES = {getattr(torch, n) for n in ("quint8", "qint8", "qint32")}


class Net(nn.Module):
    """Every static plain module: conv1d/2d/3d (+relu, + fused add), linear (+relu), activations,
    pools, norms, QFunctional add / add_relu / mul / cat / add_scalar / mul_scalar."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=8, padding_mode="reflect")
        self.bn2 = nn.BatchNorm2d(8)
        self.relu6 = nn.ReLU6()
        self.add = nnq.FloatFunctional()
        self.add_relu = nnq.FloatFunctional()
        self.mul = nnq.FloatFunctional()
        self.cat = nnq.FloatFunctional()
        self.scal = nnq.FloatFunctional()
        self.hs = nn.Hardswish()
        self.elu = nn.ELU()
        self.leaky = nn.LeakyReLU(0.1)
        self.sig = nn.Sigmoid()
        self.hsig = nn.Hardsigmoid()
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2, ceil_mode=True)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.ln = nn.LayerNorm(16)
        self.drop = nn.Dropout(0.1)
        self.c1 = nn.Conv1d(16, 4, 3, padding=1)
        self.c3 = nn.Conv3d(1, 2, (1, 2, 2))
        self.fc1 = nn.Linear(16, 16)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.soft = nn.Softmax(dim=1)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu1(self.bn1(self.conv1(x)))
        z = self.relu6(self.bn2(self.conv2(y)))
        r = self.add.add(y, z)
        r = self.add_relu.add_relu(r, self.mul.mul(y, z))
        c = self.cat.cat([r, self.hs(y)], 1)
        c = self.scal.mul_scalar(self.scal.add_scalar(c, 0.5), 0.75)
        c = self.pool(self.elu(self.leaky(c)))
        c = self.gap(self.avg(c)).flatten(1)           # (N, 16)
        c = self.drop(self.ln(c))
        s = self.c1(c.reshape(c.shape[0], 16, 1)).flatten(1)           # conv1d: (N, 4)
        t = self.c3(s.reshape(s.shape[0], 1, 1, 2, 2)).flatten(1)      # conv3d: (N, 2)
        o = self.fc2(self.relu3(self.fc1(c)))
        o = self.cat.cat([o, self.sig(self.hsig(s)), t], 1)
        return self.dequant(self.soft(o))


FUSE = [["conv1", "bn1", "relu1"], ["conv2", "bn2"], ["fc1", "relu3"]]


def _net():
    torch.manual_seed(0)
    m = Net()
    for bn in (m.bn1, m.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2)
    return m.eval()


def _calib(shape=(4, 3, 16, 16), n=4):
    g = torch.Generator().manual_seed(1)
    return [torch.randn(*shape, generator=g) for _ in range(n)]


def _prepared(model, fuse=None, qconfig=None, calib=None):
    if fuse is not None:
        model = tq.fuse_modules(model, fuse) if isinstance(fuse, list) else fuse(model)
    model.qconfig = qconfig or tq.default_qconfig
    p = tq.prepare(model)
    tq.calibrate(p, calib or _calib())
    return p


def _assert_plain_state(model):
    """state_dict / buffers / parameters: plain tensors only."""
    for k, v in model.state_dict().items():
        assert not (isinstance(v, torch.Tensor) and (v.is_quantized or v.dtype in _QDTYPES)), k
        assert not isinstance(v, torch.ScriptObject), k
    for name, m in model.named_modules():
        assert not isinstance(m, (nnq.Linear, nnq.Conv2d)), name
        for v in m.__dict__.values():
            assert not isinstance(v, torch.ScriptObject), name


def _check_round_trips(plain, x, want):
    assert torch.equal(copy.deepcopy(plain)(x), want)
    buf = io.BytesIO()
    torch.save(plain.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, weights_only=True)  # tensors only: loads with weights_only
    assert not any(k.endswith("packed") for k in sd)  # derived per kernel path: rebuilt on load
    other = copy.deepcopy(plain)
    for m in other.modules():  # scramble, then load
        if isinstance(m, nnp.Linear) or isinstance(m, nnp.modules._ConvNd):
            m.set_weight(torch.zeros_like(m.weight), m.w_scales, m.w_zero_points, m.bias)
    other.load_state_dict(sd)
    assert torch.equal(other(x), want)
    buf = io.BytesIO()
    torch.save(plain, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=False)(x), want)


def test_every_plain_module_matches_quantized(isa):
    p = _prepared(_net(), FUSE, tq.default_per_channel_qconfig)
    q = tq.convert(p)
    plain = tq.convert(p, plain=True)
    _assert_plain_state(plain)
    kinds = {type(m) for m in plain.modules()}
    for cls in (nnp.Quantize, nnp.DeQuantize, nnp.ConvReLU2d, nnp.Conv2d, nnp.Conv1d, nnp.Conv3d, nnp.LinearReLU,
                nnp.Linear, nnp.ReLU6, nnp.QFunctional, nnp.Hardswish, nnp.ELU, nnp.LeakyReLU, nnp.Sigmoid,
                nnp.Hardsigmoid, nnp.MaxPool2d, nnp.AvgPool2d, nnp.AdaptiveAvgPool2d, nnp.LayerNorm, nnp.Dropout,
                nnp.Softmax):
        assert cls in kinds, cls
    for x in _calib((3, 3, 16, 16), 2) + [torch.randn(1, 3, 16, 16) * 4]:
        want = q(x)
        got = plain(x)
        assert got.dtype == torch.float32 and torch.equal(got, want)
    with torch.inference_mode():
        assert torch.equal(plain(x), want)
    _check_round_trips(plain, x, want)
    assert torch.equal(tq.to_plain(q)(x), want)


class _Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.bn3 = nn.BatchNorm3d(4)
        self.bnr3 = nn.Sequential(nn.BatchNorm3d(4), nn.ReLU())
        self.bnr2 = nn.Sequential(nn.BatchNorm2d(4), nn.ReLU())
        self.gn = nn.GroupNorm(2, 4)
        self.in1 = nn.InstanceNorm1d(4, affine=True)
        self.in2 = nn.InstanceNorm2d(4)
        self.in3 = nn.InstanceNorm3d(4, affine=True)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):  # x: (N, 4, 2, 5, 5)
        x = self.quant(x)
        y = self.bnr3(self.bn3(x))
        y = self.in3(self.gn(y))
        z = self.in2(self.bnr2(y.flatten(1, 2).reshape(y.shape[0], 4, 10, 5)))
        z = self.in1(z.flatten(2))
        return self.dequant(z)


def test_norm_modules(isa):
    torch.manual_seed(0)
    m = _Norms().eval()
    for bn in (m.bn3, m.bnr3[0], m.bnr2[0]):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2)
    m = tq.fuse_modules(m, [["bnr3.0", "bnr3.1"], ["bnr2.0", "bnr2.1"]])
    p = _prepared(m, None, tq.default_qconfig, _calib((2, 4, 2, 5, 5), 2))
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    kinds = {type(k) for k in plain.modules()}
    for cls in (nnp.BatchNorm3d, nnp.BNReLU3d, nnp.BNReLU2d, nnp.GroupNorm, nnp.InstanceNorm1d, nnp.InstanceNorm2d,
                nnp.InstanceNorm3d):
        assert cls in kinds, cls
    x = torch.randn(3, 4, 2, 5, 5)
    assert torch.equal(plain(x), q(x))
    assert torch.equal(tq.to_plain(q)(x), q(x))


def test_quantize_plain_and_batchnorm2d(isa):
    bn = nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), tq.DeQuantStub()).eval()
    bn[2].running_mean.uniform_(-1, 1)
    bn[2].running_var.uniform_(0.5, 2)
    bn.qconfig = tq.default_qconfig
    q = tq.quantize(bn, tq.calibrate, (_calib(),))
    plain = tq.quantize(bn, tq.calibrate, (_calib(),), plain=True)
    assert isinstance(plain[2], nnp.BatchNorm2d)
    x = torch.randn(2, 3, 16, 16)
    assert torch.equal(q(x), plain(x))


def _digits_static():
    return _prepared(DigitsCNN().eval(), lambda m: m.fuse_model(), tq.default_qconfig,
                     _calib((16, 1, 8, 8)))


def test_digits_cnn_static_dynamic_qat(isa):
    x = torch.randn(8, 1, 8, 8)
    p = _digits_static()
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    _assert_plain_state(plain)
    assert torch.equal(q(x), plain(x))
    _check_round_trips(plain, x, q(x))
    # dynamic
    torch.manual_seed(0)
    f = DigitsCNN().eval()
    dq, dp = tq.quantize_dynamic(f), tq.quantize_dynamic(f, plain=True)
    assert isinstance(dp.fc1, nnp.DynamicLinear)
    _assert_plain_state(dp)
    assert torch.equal(dq(x), dp(x))
    _check_round_trips(dp, x, dq(x))
    assert torch.equal(tq.to_plain(dq)(x), dq(x))  # its float FloatFunctional stays float
    # QAT
    torch.manual_seed(0)
    m = DigitsCNN().train()
    m.fuse_model(tq.fuse_modules_qat)
    m.qconfig = tq.default_qat_qconfig

    def train(model, batches):
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        for b in batches:
            opt.zero_grad()
            model(b).square().mean().backward()
            opt.step()

    qq = tq.quantize_qat(m, train, (_calib((8, 1, 8, 8), 2),))
    qp = tq.quantize_qat(m, train, (_calib((8, 1, 8, 8), 2),), plain=True)
    assert isinstance(qp.conv1[0], nnp.ConvReLU2d)
    _assert_plain_state(qp)
    assert torch.equal(qq(x), qp(x))


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_example_cnns(name):
    torch.manual_seed(0)
    model = resnet18(num_classes=10) if name == "resnet18" else MobileNetV2(num_classes=10)
    p = _prepared(model.eval(), lambda m: m.fuse_model(), tq.default_per_channel_qconfig,
                  _calib((2, 3, 32, 32), 2))
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    _assert_plain_state(plain)
    x = torch.randn(2, 3, 32, 32)
    want = q(x)
    assert torch.equal(plain(x), want)
    assert torch.equal(tq.to_plain(q)(x), want)


def test_transformer_dynamic():
    torch.manual_seed(0)
    m = TransformerClassifier(vocab=50, d_model=32, nhead=4, ff=64, layers=2).eval()
    dq, dp = tq.quantize_dynamic(m), tq.quantize_dynamic(m, plain=True)
    _assert_plain_state(dp)
    tokens = torch.randint(0, 50, (3, 7))
    assert torch.equal(dq(tokens), dp(tokens))
    assert torch.equal(tq.to_plain(dq)(tokens), dp(tokens))


class _Recurrent(nn.Module):
    def __init__(self, bidirectional):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, bidirectional=bidirectional, batch_first=True)
        self.gru = nn.GRU(12 if bidirectional else 6, 5, bidirectional=bidirectional)

    def forward(self, x):
        o, (h, c) = self.lstm(x)
        o2, h2 = self.gru(o.transpose(0, 1))
        return o, h, c, o2, h2


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_gru_dynamic(bidirectional, isa):
    torch.manual_seed(0)
    m = _Recurrent(bidirectional).eval()
    dq, dp = tq.quantize_dynamic(m), tq.quantize_dynamic(m, plain=True)
    assert isinstance(dp.lstm, nnp.LSTM) and isinstance(dp.gru, nnp.GRU)
    _assert_plain_state(dp)
    x = torch.randn(3, 7, 8)
    want = dq(x)
    for got in (dp(x), tq.to_plain(dq)(x), copy.deepcopy(dp)(x)):
        assert all(torch.equal(a, b) for a, b in zip(got, want))
    # the example model
    m = LSTMClassifier(vocab=50, embed=16, hidden=24).eval()
    t = torch.randint(0, 50, (2, 9))
    assert torch.equal(tq.quantize_dynamic(m)(t), tq.quantize_dynamic(m, plain=True)(t))


def test_plain_loads_quantized_state_dicts():
    p = _digits_static()
    q = tq.convert(p)
    plain = tq.convert(copy.deepcopy(p), plain=True)
    for m in plain.modules():
        if isinstance(m, (nnp.Linear, nnp.modules._ConvNd)):
            m.set_weight(torch.zeros_like(m.weight), m.w_scales, m.w_zero_points, m.bias)
    plain.load_state_dict(q.state_dict())
    x = torch.randn(4, 1, 8, 8)
    assert torch.equal(plain(x), q(x))
    _assert_plain_state(plain)


def test_to_plain_of_torch_ao_model():
    """A model converted by torch.ao.quantization (eager) -> to_plain: the same outputs as our
    quantized modules loaded with its state_dict (torch's fbgemm kernels themselves are no exact
    oracle on AVX2 machines, CONTRIBUTING: 16-bit saturation)."""
    taq = pytest.importorskip("torch.ao.quantization")
    torch.manual_seed(0)
    f = DigitsCNN().eval()
    f.fuse_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f.qconfig = taq.get_default_qconfig("x86")
        p = taq.prepare(copy.deepcopy(f))
        for b in _calib((16, 1, 8, 8)):
            p(b)
        ao = taq.convert(p)
    plain = tq.to_plain(ao)
    _assert_plain_state(plain)
    ours = tq.convert(_digits_static())
    ours.load_state_dict(ao.state_dict())
    x = torch.randn(4, 1, 8, 8)
    assert torch.equal(plain(x), ours(x))


def test_plain_errors():
    p = _digits_static()
    plain = tq.convert(p, plain=True)
    with pytest.raises(RuntimeError, match=r"nn.plain.ConvReLU2d: expected a torch_qplugin.QTensor input"):
        plain.conv1(torch.randn(1, 1, 8, 8))
    with pytest.raises(RuntimeError, match=r"quantize_dynamic: no plain form for 'cell' \(LSTMCell\)"):
        tq.quantize_dynamic(_CellNet(), plain=True)
    m = nn.Sequential(tq.QuantStub(), nn.Conv2d(1, 2, 1), nn.PReLU(),
                      tq.DeQuantStub()).eval()
    m.qconfig = tq.default_qconfig
    pm = tq.prepare(m)
    pm(torch.randn(1, 1, 4, 4))
    with pytest.raises(RuntimeError, match=r"convert: no plain module for observed module\(s\) '2'.*PReLU"):
        tq.convert(pm, plain=True)


class _CellNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 4)

    def forward(self, x):
        return self.cell(x)[0]
