"""Quantized norm modules (BatchNorm2d / 3d, BNReLU2d / 3d, GroupNorm, InstanceNorm1d / 2d / 3d,
LayerNorm) vs torch.ao.nn.quantized: same constructor, state_dicts load across, outputs within a
step of torch's (and of the float64 references); convert() swaps them in with our workflow and with
torch.ao.quantization.convert(mapping=ours); deepcopy / torch.save round trips."""

import copy
import io
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

import reference as ref
import torch_qplugin.nn.quantized as nnq
from torch_oracle import quantize_exact
import torch_qplugin.quantization as tq

tnnq = pytest.importorskip("torch.ao.nn.quantized")
tnniq = pytest.importorskip("torch.ao.nn.intrinsic.quantized")

Q = torch.ops.qplugin


def qx(shape, scale=0.05, zp=120):
    return Q.quantize_per_tensor(torch.rand(shape) * 8 - 4, scale, zp, torch.quint8)


def _torch(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(*args, **kw)


def _steps(a, b):
    assert a.q_scale() == pytest.approx(b.q_scale(), rel=1e-6) and a.q_zero_point() == b.q_zero_point()
    return int((a.int_repr().int() - b.int_repr().int()).abs().max()) if a.numel() else 0


def _affine(c):
    return nn.Parameter(torch.rand(c) + 0.5), nn.Parameter(torch.randn(c))


def _bn_torch(cls, c):
    m = _torch(cls, c)
    with torch.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.normal_()
        m.running_mean.normal_()
        m.running_var.uniform_(0.3, 2.0)
    m.scale, m.zero_point = torch.tensor(0.04), torch.tensor(100)
    return m


def _norm_pairs():
    w, b = _affine(6)
    return {
        "BatchNorm2d": (lambda: nnq.BatchNorm2d(6), lambda: _bn_torch(tnnq.BatchNorm2d, 6), (2, 6, 5, 7)),
        "BatchNorm3d": (lambda: nnq.BatchNorm3d(6), lambda: _bn_torch(tnnq.BatchNorm3d, 6), (2, 6, 3, 4, 5)),
        "BNReLU2d": (lambda: nnq.BNReLU2d(6), lambda: _bn_torch(tnniq.BNReLU2d, 6), (2, 6, 5, 7)),
        "BNReLU3d": (lambda: nnq.BNReLU3d(6), lambda: _bn_torch(tnniq.BNReLU3d, 6), (2, 6, 3, 4, 5)),
        "GroupNorm": (
            lambda: nnq.GroupNorm(3, 6, w, b, 0.03, 90),
            lambda: _torch(tnnq.GroupNorm, 3, 6, w, b, 0.03, 90),
            (2, 6, 5, 7),
        ),
        "InstanceNorm1d": (
            lambda: nnq.InstanceNorm1d(6, w, b, 0.03, 90, affine=True),
            lambda: _torch(tnnq.InstanceNorm1d, 6, w, b, 0.03, 90, affine=True),
            (2, 6, 11),
        ),
        "InstanceNorm2d": (
            lambda: nnq.InstanceNorm2d(6, None, None, 0.03, 90),
            lambda: _torch(tnnq.InstanceNorm2d, 6, None, None, 0.03, 90),
            (2, 6, 5, 7),
        ),
        "InstanceNorm3d": (
            lambda: nnq.InstanceNorm3d(6, w, b, 0.03, 90, affine=True),
            lambda: _torch(tnnq.InstanceNorm3d, 6, w, b, 0.03, 90, affine=True),
            (2, 6, 3, 4, 5),
        ),
        "LayerNorm": (
            lambda: nnq.LayerNorm(
                [5, 7], nn.Parameter(torch.rand(5, 7) + 0.5), nn.Parameter(torch.randn(5, 7)), 0.03, 90
            ),
            lambda: _torch(
                tnnq.LayerNorm, [5, 7], nn.Parameter(torch.ones(5, 7)), nn.Parameter(torch.zeros(5, 7)), 0.5, 3
            ),
            (2, 6, 5, 7),
        ),
    }


PAIRS = _norm_pairs()


@pytest.mark.parametrize("name", list(PAIRS))
def test_loads_torch_state_dict_and_matches_torch(name):
    make_ours, make_torch, shape = PAIRS[name]
    theirs = make_torch()
    ours = make_ours()
    ours.load_state_dict(theirs.state_dict())  # strict: same keys
    assert set(ours.state_dict()) == set(theirs.state_dict())
    assert ours.scale == pytest.approx(float(theirs.scale)) and ours.zero_point == int(theirs.zero_point)
    x = qx(shape)
    a, b = ours(x), theirs(x)
    assert a.shape == b.shape == x.shape
    assert _steps(a, b) <= 1, name
    assert repr(ours).replace("Quantized", "") == repr(theirs).replace("Quantized", "")
    # torch's state_dict back into torch: ours stores the same entries
    t2 = make_torch()
    t2.load_state_dict(ours.state_dict())
    assert _steps(t2(x), b) == 0


@pytest.mark.parametrize("name", list(PAIRS))
def test_modules_vs_float64_reference(name):
    m = PAIRS[name][0]()
    shape = PAIRS[name][2]
    x = qx(shape)
    out = m(x)
    s, z = m.scale, m.zero_point
    w = None if m.weight is None else m.weight.detach()
    b = None if m.bias is None else m.bias.detach()
    if "BatchNorm" in name or "BNReLU" in name:
        m.running_mean.normal_()
        m.running_var.uniform_(0.3, 2.0)
        out = m(x)
        expect = ref.batch_norm_ref(x, w, b, m.running_mean, m.running_var, m.eps, s, z, relu="ReLU" in name)
    elif name == "GroupNorm":
        expect = ref.group_norm_ref(x, m.num_groups, w, b, m.eps, s, z)
    elif name == "LayerNorm":
        expect = ref.layer_norm_ref(x, list(m.normalized_shape), w, b, m.eps, s, z)
    else:
        expect = ref.instance_norm_ref(x, w, b, m.eps, s, z)
    d = np.abs(out.int_repr().numpy().astype(np.int64) - np.asarray(expect)).max()
    assert d <= 1, (name, d)


@pytest.mark.parametrize("name", list(PAIRS))
def test_deepcopy_and_whole_module_save(name):
    m = PAIRS[name][0]()
    x = qx(PAIRS[name][2])
    out = m(x).int_repr()
    assert torch.equal(copy.deepcopy(m)(x).int_repr(), out)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=False)(x).int_repr(), out)


def test_float_input_error():
    for name, (make, _, shape) in PAIRS.items():
        with pytest.raises(RuntimeError, match="got a float tensor.*insert a QuantStub"):
            make()(torch.randn(shape))


class _Net(nn.Module):
    def __init__(self, stub=tq.QuantStub, destub=tq.DeQuantStub):
        super().__init__()
        self.quant = stub()
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.bn_alone = nn.BatchNorm2d(4)
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.in1 = nn.InstanceNorm1d(4)
        self.ln = nn.LayerNorm([6])
        self.bn3 = nn.BatchNorm3d(4)
        self.bn3b = nn.BatchNorm3d(4)
        self.relu3 = nn.ReLU()
        self.in3 = nn.InstanceNorm3d(4)
        self.dequant = destub()
        with torch.no_grad():
            for bn in (self.bn, self.bn_alone, self.bn3, self.bn3b):
                bn.running_mean.normal_()
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_()

    def forward(self, x):
        x = self.quant(x)
        x = self.bn_alone(self.relu(self.bn(x)))
        x = self.ln(self.inorm(self.gn(x)))
        x = self.in1(x.flatten(2)).reshape(x.shape)
        y = self.relu3(self.bn3b(self.bn3(self.in3(x.unsqueeze(2)))))
        return self.dequant(y.squeeze(2))


CONVERTED = {
    nn.BatchNorm2d: nnq.BatchNorm2d,
    nn.GroupNorm: nnq.GroupNorm,
    nn.LayerNorm: nnq.LayerNorm,
    nn.InstanceNorm1d: nnq.InstanceNorm1d,
    nn.InstanceNorm2d: nnq.InstanceNorm2d,
    nn.InstanceNorm3d: nnq.InstanceNorm3d,
    nn.BatchNorm3d: nnq.BatchNorm3d,
}


def test_mappings_have_the_norms():
    static = tq.get_default_static_quant_module_mappings()
    for f, qm in CONVERTED.items():
        assert static[f] is qm
    assert static[tq._compat.BNReLU2d] is nnq.BNReLU2d and static[tq._compat.BNReLU3d] is nnq.BNReLU3d
    prop = tq.get_default_qconfig_propagation_list()
    assert nn.LayerNorm in prop and nn.BatchNorm2d in prop


def _check_converted(q, f, x, tol=0.3):
    assert type(q.bn) is nnq.BNReLU2d and type(q.bn3b) is nnq.BNReLU3d
    assert type(q.bn_alone) is nnq.BatchNorm2d and type(q.gn) is nnq.GroupNorm
    assert type(q.inorm) is nnq.InstanceNorm2d and type(q.in1) is nnq.InstanceNorm1d
    assert type(q.in3) is nnq.InstanceNorm3d and type(q.ln) is nnq.LayerNorm
    assert type(q.bn3) is nnq.BatchNorm3d
    # close to float: a few output steps through eight requantizing layers
    assert (q(x) - f(x)).abs().max() < tol


def test_convert_swaps_norms_and_fuses_bn_relu():
    f = _Net().eval()
    m = tq.fuse_modules(copy.deepcopy(f), [["bn", "relu"], ["bn3b", "relu3"]])
    m.qconfig = tq.default_qconfig
    data = [torch.randn(2, 4, 5, 6) for _ in range(4)]
    q = tq.quantize(m, tq.calibrate, (data,))
    _check_converted(q, f, data[0])


def test_qat_prepared_model_converts_norms():
    f = _Net().eval()
    m = copy.deepcopy(f).train()
    m = (
        tq.fuse_modules_qat(m, [["bn", "relu"], ["bn3b", "relu3"]])
        if hasattr(tq, "fuse_modules_qat")
        else tq.fuse_modules(m.eval(), [["bn", "relu"], ["bn3b", "relu3"]])
    )
    m.qconfig = tq.default_qat_qconfig
    p = tq.prepare_qat(m.train())
    p.eval()
    data = [torch.randn(2, 4, 5, 6) for _ in range(3)]
    with torch.no_grad():
        for x in data:
            p(x)
    q = tq.convert(p)
    # QAT's moving-average observers (averaging constant 0.01) keep ranges near the first batch's
    _check_converted(q, f, data[0], tol=0.6)


def test_torch_ao_convert_with_our_mapping():
    taq = pytest.importorskip("torch.ao.quantization")
    f = _Net(taq.QuantStub, taq.DeQuantStub).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = taq.fuse_modules(copy.deepcopy(f), [["bn", "relu"], ["bn3b", "relu3"]])
        m.qconfig = taq.default_qconfig
        p = taq.prepare(m)
        data = [torch.randn(2, 4, 5, 6) for _ in range(3)]
        for x in data:
            p(x)
        q = taq.convert(copy.deepcopy(p), mapping=tq.get_default_static_quant_module_mappings())
        theirs = taq.convert(p)
    x = data[0]
    _check_converted(q, f, x)
    # torch's kernels for these ops are exact: same model, same qparams, same bytes, where torch's
    # QuantStub quantizes the float input by our rule
    assert "Quantized" in type(theirs.gn).__name__ or type(theirs.gn).__module__.startswith("torch.ao")
    if quantize_exact(torch.quint8):
        assert torch.equal(q(x), theirs(x))
    # on the input's own grid both QuantStubs give the same integers, whatever their rounding
    xg = q.quant(x).dequantize()
    assert torch.equal(q(xg), theirs(xg))
