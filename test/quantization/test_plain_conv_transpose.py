"""Plain ConvTranspose1d/2d/3d (torch_qplugin.nn.plain): convert(plain=True) and to_plain give
outputs bit-identical to the quantized-dtype modules on every kernel path, per tensor and per
output channel; plain state only; state_dict / deepcopy / torch.save round trips; plain modules
load the quantized forms' state dicts (ours and torch.ao's)."""

import copy
import io
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.plain as nnp
import torch_qplugin.quantization as tq

pytestmark = pytest.mark.filterwarnings(r"ignore:Please use quant_min and quant_max:UserWarning")
_QDTYPES = {getattr(torch, n) for n in ("quint8", "qint8", "qint32")}


class Up(nn.Module):
    def __init__(self, stubs=tq):
        super().__init__()
        self.quant = stubs.QuantStub()
        self.up = nn.ConvTranspose2d(6, 8, 4, stride=2, padding=1, groups=2)
        self.bn = nn.BatchNorm2d(8)
        self.up1 = nn.ConvTranspose1d(8, 4, 3, stride=2, output_padding=1)
        self.up3 = nn.ConvTranspose3d(4, 3, 2, stride=(1, 2, 2), dilation=(1, 1, 2))
        self.dequant = stubs.DeQuantStub()

    def forward(self, x):  # x: (N, 6, 4, 5)
        y = self.bn(self.up(self.quant(x)))
        y1 = self.up1(y.flatten(2)[..., :7])
        y3 = self.up3(y[:, :4].unsqueeze(2))
        return self.dequant(y), self.dequant(y1), self.dequant(y3)


def _model(stubs=tq):
    torch.manual_seed(0)
    m = Up(stubs).eval()
    m.bn.running_mean.uniform_(-0.5, 0.5)
    m.bn.running_var.uniform_(0.5, 2.0)
    return m


def _calib():
    g = torch.Generator().manual_seed(1)
    return [torch.randn(3, 6, 4, 5, generator=g) for _ in range(3)]


def _prepared(per_channel):
    m = tq.fuse_modules(_model(), [["up", "bn"]])
    m.qconfig = tq.default_qconfig if per_channel else tq.default_per_tensor_qconfig
    p = tq.prepare(m)
    for b in _calib():
        p(b)
    return p


def _equal(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b))


def _assert_plain_state(model):
    for k, v in model.state_dict().items():
        assert not (isinstance(v, torch.Tensor) and (v.is_quantized or v.dtype in _QDTYPES)), k


@pytest.mark.parametrize("per_channel", [False, True])
def test_plain_matches_quantized(per_channel, isa):
    p = _prepared(per_channel)
    q = tq.convert(p)
    plain = tq.convert(p, plain=True)
    _assert_plain_state(plain)
    assert type(plain.up) is nnp.ConvTranspose2d and type(plain.up1) is nnp.ConvTranspose1d
    assert type(plain.up3) is nnp.ConvTranspose3d
    if per_channel:  # one scale per output channel of every group (the quantized weight: per group)
        assert plain.up.w_scales.numel() == 8 and q.up.weight().q_per_channel_scales().numel() == 4
    x = torch.randn(2, 6, 4, 5) * 2
    want = q(x)
    assert _equal(plain(x), want)
    assert _equal(tq.to_plain(q)(x), want)
    # round trips: deepcopy, state_dict (plain tensors, packed rebuilt), whole-module save
    assert _equal(copy.deepcopy(plain)(x), want)
    buf = io.BytesIO()
    torch.save(plain.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf, weights_only=True)
    other = copy.deepcopy(plain)
    for m in (other.up, other.up1, other.up3):
        m.set_weight(torch.zeros_like(m.weight), m.w_scales, m.w_zero_points, m.bias)
    other.load_state_dict(sd)
    assert _equal(other(x), want)
    buf = io.BytesIO()
    torch.save(plain, buf)
    buf.seek(0)
    assert _equal(torch.load(buf, weights_only=False)(x), want)
    # the quantized modules' state dict loads into the plain ones
    other2 = copy.deepcopy(plain)
    for m in (other2.up, other2.up1, other2.up3):
        m.set_weight(torch.zeros_like(m.weight), m.w_scales, m.w_zero_points, m.bias)
    other2.load_state_dict(q.state_dict())
    assert _equal(other2(x), want)
    assert "output_padding=(1,)" in repr(plain.up1)


def test_to_plain_of_torch_ao_model():
    taq = pytest.importorskip("torch.ao.quantization")
    m = tq.fuse_modules(_model(taq), [["up", "bn"]])  # (torch.ao's own fails for grouped ConvTranspose + BN)
    m.qconfig = taq.default_qconfig  # per tensor (torch refuses per-channel transposed conv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = taq.prepare(m)
        for b in _calib():
            p(b)
        ao = taq.convert(p)
    plain = tq.to_plain(ao)
    _assert_plain_state(plain)
    assert type(plain.up) is nnp.ConvTranspose2d
    ours = tq.convert(_prepared(False))
    ours.load_state_dict(ao.state_dict())
    x = torch.randn(2, 6, 4, 5)
    assert _equal(plain(x), ours(x))


def test_plain_module_errors():
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nnp.ConvTranspose2d(4, 4, 3, padding_mode="circular")
    with pytest.raises(TypeError, match="from_float only works for ConvTranspose2d"):
        nnp.ConvTranspose2d.from_float(nn.Conv2d(4, 4, 3))
    m = nnp.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2)
    assert m.weight.shape == (4, 3, 3, 3) and m.bias.shape == (6,)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict(nnp.ConvTranspose2d(4, 4, 3, stride=2, output_padding=1, groups=2).state_dict())
