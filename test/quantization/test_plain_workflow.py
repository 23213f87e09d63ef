"""The plain workflow: convert / quantize / quantize_dynamic / quantize_qat with
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
        c = self.gap(self.avg(c)).flatten(1)  # (N, 16)
        c = self.drop(self.ln(c))
        s = self.c1(c.reshape(c.shape[0], 16, 1)).flatten(1)  # conv1d: (N, 4)
        t = self.c3(s.reshape(s.shape[0], 1, 1, 2, 2)).flatten(1)  # conv3d: (N, 2)
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
    for cls in (
        nnp.Quantize,
        nnp.DeQuantize,
        nnp.ConvReLU2d,
        nnp.Conv2d,
        nnp.Conv1d,
        nnp.Conv3d,
        nnp.LinearReLU,
        nnp.Linear,
        nnp.ReLU6,
        nnp.QFunctional,
        nnp.Hardswish,
        nnp.ELU,
        nnp.LeakyReLU,
        nnp.Sigmoid,
        nnp.Hardsigmoid,
        nnp.MaxPool2d,
        nnp.AvgPool2d,
        nnp.AdaptiveAvgPool2d,
        nnp.LayerNorm,
        nnp.Dropout,
        nnp.Softmax,
    ):
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
    for cls in (
        nnp.BatchNorm3d,
        nnp.BNReLU3d,
        nnp.BNReLU2d,
        nnp.GroupNorm,
        nnp.InstanceNorm1d,
        nnp.InstanceNorm2d,
        nnp.InstanceNorm3d,
    ):
        assert cls in kinds, cls
    x = torch.randn(3, 4, 2, 5, 5)
    assert torch.equal(plain(x), q(x))
    assert torch.equal(tq.to_plain(q)(x), q(x))


@pytest.mark.parametrize("per_channel", [False, True])
def test_prelu(per_channel, isa):
    torch.manual_seed(0)
    m = nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 4, 1), nn.PReLU(4), nn.PReLU(), tq.DeQuantStub()).eval()
    with torch.no_grad():
        m[2].weight.copy_(torch.tensor([0.1, -0.3, 0.7, 1.2]))
    p = _prepared(m, None, tq.default_per_channel_qconfig if per_channel else tq.default_qconfig, _calib())
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    assert isinstance(plain[2], nnp.PReLU)
    x = torch.randn(2, 3, 16, 16)
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
    return _prepared(DigitsCNN().eval(), lambda m: m.fuse_model(), tq.default_qconfig, _calib((16, 1, 8, 8)))


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
    p = _prepared(model.eval(), lambda m: m.fuse_model(), tq.default_per_channel_qconfig, _calib((2, 3, 32, 32), 2))
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
        warnings.filterwarnings("ignore", message="torch.ao.quantization is deprecated")
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
    # a mapping onto a quantized class with no plain form: an error naming the module, never left float
    m = nn.Sequential(tq.QuantStub(), nn.Conv2d(1, 2, 1), nn.Tanh(), tq.DeQuantStub()).eval()
    m.qconfig = tq.default_qconfig
    mapping = {**tq.get_default_static_quant_module_mappings(), nn.Tanh: _NoPlainTanh}
    pm = tq.prepare(m, allow_list=set(tq.get_default_qconfig_propagation_list()) | {nn.Tanh})
    pm(torch.randn(1, 1, 4, 4))
    with pytest.raises(RuntimeError, match=r"convert: no plain form for '2' \(Tanh\); use plain=False"):
        tq.convert(pm, mapping=mapping, plain=True)
    with pytest.raises(RuntimeError, match=r"quantize_dynamic: no plain form for 'cell' \(LSTMCell\); use plain=False"):
        tq.quantize_dynamic(_CellNet(), mapping={nn.LSTMCell: _NoPlainTanh}, plain=True)


class _NoPlainTanh(nn.Module):
    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls()


class _CellNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 4)

    def forward(self, x):
        return self.cell(x)[0]


def test_cached_call_follows_the_module(isa):
    """Plain Linear / Conv cache their op arguments (speed): assigning scale / zero_point / a
    buffer, set_weight and load_state_dict are seen by the next call."""
    p = _digits_static()
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    x = torch.randn(4, 1, 8, 8)
    assert torch.equal(plain(x), q(x))
    for qm, pm in ((q.conv1[0], plain.conv1[0]), (q.fc1, plain.fc1)):
        assert isinstance(pm, (nnp.ConvReLU2d, nnp.Linear))
        qm.scale, qm.zero_point = qm.scale * 1.5, qm.zero_point + 3
        pm.scale, pm.zero_point = pm.scale * 1.5, pm.zero_point + 3
        assert torch.equal(plain(x), q(x)), pm
    fc1 = plain.fc1
    fc1.bias = fc1.bias + 1
    q.fc1.set_weight_bias(q.fc1.weight(), q.fc1.bias() + 1)
    assert torch.equal(plain(x), q(x))
    before = plain(x)
    plain.fc1.set_weight(torch.zeros_like(fc1.weight), fc1.w_scales, fc1.w_zero_points, fc1.bias)
    assert not torch.equal(plain(x), before)
    plain.load_state_dict(q.state_dict())
    assert torch.equal(plain(x), q(x))
    assert torch.equal(copy.deepcopy(plain.to(torch.device("cpu")))(x), q(x))


def test_cached_output_quantizer_follows_the_module(isa):
    """Plain Linear / Conv cache their output's checked quantizer with the op arguments: the
    output carries the module's scale / zero_point (after an assignment too), and bad ones raise
    when the module is called (its op checks them first)."""
    plain = tq.convert(_digits_static(), plain=True)
    x = plain.quant(torch.randn(2, 1, 8, 8))
    for m in (plain.conv1[0], plain.fc1):
        inp = x if m is plain.conv1[0] else plain.conv1[0](x).flatten(1)[:, : m.in_features]
        for _ in range(2):  # the first call fills the cache, the second uses it
            y = m(inp)
            assert (y.q_scale(), y.q_zero_point(), y.dtype) == (m.scale, m.zero_point, torch.uint8)
        m.scale, m.zero_point = m.scale * 2, m.zero_point + 1
        y = m(inp)
        assert (y.q_scale(), y.q_zero_point()) == (m.scale, m.zero_point)
        assert m(inp).quantizer is y.quantizer  # one checked quantizer, shared
        for name, bad in (("scale", 0.0), ("zero_point", 256)):
            other = copy.deepcopy(m)
            other(inp)
            setattr(other, name, bad)
            with pytest.raises(ValueError, match=rf"{name}\w* should be"):
                other(inp)


def test_every_default_mapping_has_a_plain_form():
    """The plain mappings map every float / observed / QAT type straight to a plain class; the
    quantized mappings are the same keys onto each plain class's quantized twin, so every module
    the default quantized mappings produce has a plain counterpart (to_plain, check_plain_coverage)."""
    from torch_qplugin.quantization._to_plain import PLAIN_OF
    from torch_qplugin.quantization.plain import no_plain_form

    pairs = (
        (tq.get_default_plain_static_quant_module_mappings(), tq.get_default_static_quant_module_mappings()),
        (tq.get_default_plain_dynamic_quant_module_mappings(), tq.get_default_dynamic_quant_module_mappings()),
    )
    for plain, quantized in pairs:
        assert plain and list(plain) == list(quantized)
        assert all(v.__module__ == "torch_qplugin.nn.plain.modules" for v in plain.values())
        assert all(PLAIN_OF[quantized[k]] is plain[k] for k in plain)
        assert no_plain_form(quantized) == {} and no_plain_form(plain) == {}
    static = tq.get_default_plain_static_quant_module_mappings()
    qat = tq.get_default_qat_module_mappings()
    assert qat and all(v in static for v in qat.values())
    assert {
        nnq.AvgPool3d,
        nnq.AdaptiveAvgPool3d,
        nnq.Embedding,
        nnq.EmbeddingBag,
        nnq.dynamic.LSTMCell,
        nnq.dynamic.GRUCell,
        nnq.dynamic.RNNCell,
    } <= set(PLAIN_OF)
    assert static[nn.Linear] is nnp.Linear and static[torch_qplugin.nn.FloatFunctional] is nnp.QFunctional
    assert tq.get_default_plain_dynamic_quant_module_mappings()[nn.Linear] is nnp.DynamicLinear


class _Pool3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv3d(2, 4, 1)
        self.avg = nn.AvgPool3d((1, 2, 2), stride=(1, 2, 1), padding=(0, 1, 0), ceil_mode=True, count_include_pad=False)
        self.avg2 = nn.AvgPool3d(2, divisor_override=3)
        self.gap = nn.AdaptiveAvgPool3d((1, None, 2))
        self.dequant = tq.DeQuantStub()

    def forward(self, x):  # (N, 2, 4, 6, 6)
        y = self.conv(self.quant(x))
        return self.dequant(self.gap(self.avg2(self.avg(y)))), self.dequant(self.avg2(y))


def test_pool3d(isa):
    torch.manual_seed(0)
    p = _prepared(_Pool3d().eval(), None, tq.default_qconfig, _calib((2, 2, 4, 6, 6), 2))
    q, plain = tq.convert(p), tq.convert(p, plain=True)
    assert isinstance(plain.avg, nnp.AvgPool3d) and isinstance(plain.gap, nnp.AdaptiveAvgPool3d)
    _assert_plain_state(plain)
    for x in (torch.randn(3, 2, 4, 6, 6), torch.randn(1, 2, 4, 6, 6).to(memory_format=torch.channels_last_3d)):
        want = q(x)
        for got in (plain(x), tq.to_plain(q)(x)):
            assert all(torch.equal(a, b) for a, b in zip(got, want))


class _Cells(nn.Module):
    def __init__(self, gru_bias=False):
        super().__init__()
        self.lstm = nn.LSTMCell(6, 5)
        self.gru = nn.GRUCell(5, 4, bias=gru_bias)
        self.rnn = nn.RNNCell(4, 3)
        self.relu = nn.RNNCell(3, 3, nonlinearity="relu")

    def forward(self, x, hc=None):
        h, c = self.lstm(x, hc)
        g = self.gru(h)
        r = self.rnn(g, torch.ones(x.shape[0], 3))
        return h, c, g, r, self.relu(r)


def test_dynamic_cells(isa):
    torch.manual_seed(0)
    m = _Cells().eval()
    dq, dp = tq.quantize_dynamic(m), tq.quantize_dynamic(m, plain=True)
    assert [type(dp.lstm), type(dp.gru), type(dp.rnn)] == [nnp.LSTMCell, nnp.GRUCell, nnp.RNNCell]
    assert dp.relu.nonlinearity == "relu"
    _assert_plain_state(dp)
    x, hc = torch.randn(4, 6), (torch.randn(4, 5), torch.randn(4, 5))
    for args in ((x,), (x, hc)):
        want = dq(*args)
        for got in (dp(*args), tq.to_plain(dq)(*args), copy.deepcopy(dp)(*args)):
            assert all(torch.equal(a, b) for a, b in zip(got, want))
    other = tq.quantize_dynamic(_Cells().eval(), plain=True)  # other weights, then load
    other.load_state_dict(dp.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(other(x), dq(x)))


def _torch_ao_dynamic(model):
    taq = pytest.importorskip("torch.ao.quantization")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torch.ao.quantization is deprecated")
        return taq.quantize_dynamic(copy.deepcopy(model), dtype=torch.qint8)


def test_to_plain_of_torch_ao_recurrent():
    """torch.ao's dynamic LSTM / GRU (``_all_weight_values``) and cells -> to_plain: the outputs of our
    quantized modules holding the same int8 weights (torch's own kernels are no exact oracle)."""
    torch.manual_seed(0)
    m = _Recurrent(True).eval()
    ao, ours = _torch_ao_dynamic(m), tq.quantize_dynamic(m)
    plain = tq.to_plain(ao)
    assert isinstance(plain.lstm, nnp.LSTM) and isinstance(plain.gru, nnp.GRU)
    _assert_plain_state(plain)
    for name in ("lstm", "gru"):  # our quantized modules with torch.ao's weights
        wb, q = getattr(ao, name)._weight_bias(), getattr(ours, name)
        for i, d in enumerate(q._dirs):
            sfx = f"_l{i // q.num_directions}" + ("_reverse" if i % q.num_directions else "")
            d.set_weight_bias(*[(wb["weight"][f"weight_{k}{sfx}"], wb["bias"][f"bias_{k}{sfx}"]) for k in ("ih", "hh")])
    pd = plain.lstm._dirs[1].hh
    w = ao.lstm._weight_bias()["weight"]["weight_hh_l0_reverse"]
    assert torch.equal(pd.weight, w.int_repr()) and pd.w_scales.item() == w.q_scale()
    x = torch.randn(3, 7, 8)
    assert all(torch.equal(a, b) for a, b in zip(plain(x), ours(x)))
    c = _Cells(gru_bias=True).eval()  # torch.ao's cells need a bias
    ao, ours = _torch_ao_dynamic(c), tq.quantize_dynamic(c)
    plain = tq.to_plain(ao)
    assert type(plain.gru) is nnp.GRUCell and plain.relu.nonlinearity == "relu"
    for name in ("lstm", "gru", "rnn", "relu"):
        wb = getattr(ao, name)._weight_bias()
        getattr(ours, name).set_weight_bias(
            *[(wb["weight"][f"weight_{k}"], wb["bias"][f"bias_{k}"]) for k in ("ih", "hh")]
        )
    x = torch.randn(4, 6)
    assert all(torch.equal(a, b) for a, b in zip(plain(x), ours(x)))


class _Embeds(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 12)
        self.bag = nn.EmbeddingBag(20, 8, mode="mean")
        self.bag_max = nn.EmbeddingBag(20, 8, mode="max", include_last_offset=True)
        self.bag_sum = nn.EmbeddingBag(20, 6, mode="sum")

    def forward(self, idx, flat, offsets, psw):
        return (
            self.emb(idx),
            self.bag(idx),
            self.bag_max(flat, offsets),
            self.bag_sum(flat, offsets[:-1], per_sample_weights=psw),
        )


@pytest.mark.parametrize("bits", [8, 4])
def test_embeddings(bits, isa):
    torch.manual_seed(0)
    m = _Embeds().eval()
    qconfig = tq.float_qparams_weight_only_qconfig if bits == 8 else tq.float_qparams_weight_only_qconfig_4bit
    spec = {nn.Embedding: qconfig, nn.EmbeddingBag: qconfig}
    dq, dp = tq.quantize_dynamic(m, spec), tq.quantize_dynamic(m, spec, plain=True)
    assert type(dp.emb) is nnp.Embedding and type(dp.bag) is nnp.EmbeddingBag and dp.emb.bits == bits
    _assert_plain_state(dp)
    idx, flat = torch.randint(0, 20, (3, 4)), torch.randint(0, 20, (9,))
    args = (idx, flat, torch.tensor([0, 2, 2, 7, 9]), torch.rand(9))
    want = dq(*args)
    for got in (dp(*args), tq.to_plain(dq)(*args), copy.deepcopy(dp)(*args)):
        assert all(torch.equal(a, b) for a, b in zip(got, want))
    other = tq.quantize_dynamic(_Embeds().eval(), spec, plain=True)
    other.load_state_dict(dq.state_dict())  # the quantized form's keys
    assert other.emb.bits == bits and all(torch.equal(a, b) for a, b in zip(other(*args), want))
    # static convert: embeddings in a statically quantized model
    s = nn.Sequential(nn.Embedding(20, 8), tq.QuantStub(), nn.Linear(8, 4), tq.DeQuantStub()).eval()
    s.qconfig = tq.default_qconfig
    s[0].qconfig = qconfig
    ps = _prepared(s, None, None, [torch.randint(0, 20, (5,))])
    assert torch.equal(tq.convert(ps, plain=True)(idx), tq.convert(ps)(idx))


def _bare_rows_state(plain):
    """The state dict an older build wrote: each table's bare fused rows as ``weight``."""
    return {
        k: (torch.ops.qplugin.plain_embedding_unpack(v) if k.endswith("weight") and v.dim() == 1 else v)
        for k, v in plain.state_dict().items()
    }


_EMB_SPEC = {nn.Embedding: tq.float_qparams_weight_only_qconfig, nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig}


def _plain_embeds(seed):
    """A plain _Embeds model and arguments for it."""
    torch.manual_seed(seed)
    dp = tq.quantize_dynamic(_Embeds().eval(), _EMB_SPEC, plain=True)
    idx, flat = torch.randint(0, 20, (3, 4)), torch.randint(0, 20, (9,))
    return dp, (idx, flat, torch.tensor([0, 2, 2, 7, 9]), torch.rand(9))


def test_embedding_tables_are_checked_buffers_and_bare_rows_still_load():
    dp, args = _plain_embeds(1)
    spec = _EMB_SPEC
    want = dp(*args)
    assert dp.bag.weight.dim() == 1 and dp.bag.fused_weight().shape == (20, 16)
    # a state dict or pickle holding bare fused rows is wrapped on load
    other = tq.quantize_dynamic(_Embeds().eval(), spec, plain=True)
    other.load_state_dict(_bare_rows_state(dp))
    assert all(torch.equal(a, b) for a, b in zip(other(*args), want))
    old = copy.deepcopy(dp)
    for m in (old.emb, old.bag, old.bag_max, old.bag_sum):
        m._buffers["weight"] = m.fused_weight()
    buf = io.BytesIO()
    torch.save(old, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert loaded.bag.weight.dim() == 1 and all(torch.equal(a, b) for a, b in zip(loaded(*args), want))
    # a damaged table in a saved model raises instead of reading as other weights
    state = dp.state_dict()
    state["bag.weight"][200] ^= 4
    damaged = tq.quantize_dynamic(_Embeds().eval(), spec, plain=True)
    damaged.load_state_dict(state)
    with pytest.raises(ValueError, match=r"qplugin::plain_embedding_bag: packed is damaged"):
        damaged(*args)
    # a table of another shape
    damaged.bag.weight = dp.bag_sum.weight
    with pytest.raises(ValueError, match=r"qplugin::plain_embedding_bag: packed should hold a \[20, 8\] table"):
        damaged(*args)


def test_plain_embeddings_export():
    dp, args = _plain_embeds(2)
    ep = torch.export.export(dp, args)
    assert all(torch.equal(a, b) for a, b in zip(ep.module()(*args), dp(*args)))


def test_scripting_a_plain_model_raises_naming_the_deploy_routes():
    plain = tq.convert(_prepared(_net(), FUSE), plain=True)
    with pytest.raises(
        RuntimeError,
        match=r"torch.jit.script: torch_qplugin.nn.plain.Quantize is a plain module, "
        r"and plain models do not script .* torch.export.export, "
        r"torch_qplugin.deploy.compile or an AOTInductor package",
    ):
        torch.jit.script(plain)
    with pytest.raises(RuntimeError, match=r"torch_qplugin.nn.plain.ConvReLU2d is a plain module"):
        torch.jit.script(plain.conv1)
