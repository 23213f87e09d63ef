"""Functional max_pool1d / hardtanh / threshold / celu / upsample and the Dropout / Softmax modules vs
torch.ao.nn.quantized and the float64 references; convert() swaps nn.Dropout / nn.Softmax in."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

import reference as ref
import torch_qplugin.nn.quantized as nnq
from torch_oracle import quantize_exact
import torch_qplugin.nn.quantized.functional as qF
import torch_qplugin.quantization as tq

tnnq = pytest.importorskip("torch.ao.nn.quantized")
tqF = pytest.importorskip("torch.ao.nn.quantized.functional")

Q = torch.ops.qplugin


def qx(shape, scale=0.05, zp=120, dtype=torch.quint8):
    return Q.quantize_per_tensor(torch.rand(shape) * 8 - 4, scale, zp, dtype)


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, dilation=2, ceil_mode=True)],
)
@pytest.mark.parametrize("shape", [(2, 5, 17), (5, 17)])
def test_max_pool1d_exact_vs_torch(kw, shape):
    x = qx(shape)
    out = qF.max_pool1d(x, **kw)
    expect = torch.nn.functional.max_pool1d(x.dequantize(), **kw)
    assert out.shape == expect.shape and out.q_scale() == x.q_scale() and out.q_zero_point() == x.q_zero_point()
    assert torch.equal(out.dequantize(), expect)  # max of represented values: exact


def test_hardtanh_threshold_celu_upsample():
    x = qx((2, 3, 6, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expect = torch.nn.functional.hardtanh(x, -0.5, 1.2)
    out = qF.hardtanh(x, -0.5, 1.2)
    bounds = [ref.quantize_bound_ref(v, x.q_scale(), x.q_zero_point(), x.dtype) for v in (-0.5, 1.2)]
    np.testing.assert_array_equal(_ints(out), ref.clamp_int_ref(x, *bounds))
    assert out.q_scale() == x.q_scale()
    if quantize_exact(x.dtype):  # torch quantizes the bounds by our rule
        assert torch.equal(out.int_repr(), expect.int_repr())
    y = x.clone()
    assert qF.hardtanh(y, -0.5, 1.2, inplace=True) is y and torch.equal(y.int_repr(), out.int_repr())
    with pytest.raises(ValueError, match="min_val should be <= max_val"):
        qF.hardtanh(x, 1.0, -1.0)
    out = qF.threshold(x, 0.31, -1.0)
    np.testing.assert_array_equal(
        _ints(out), ref.activation_ref("threshold", x, x.q_scale(), x.q_zero_point(), threshold=0.31, value=-1.0)
    )
    assert torch.equal(out.int_repr(), tqF.threshold(x, 0.31, -1.0).int_repr())
    out = qF.celu(x, 0.03, 140, 0.7)
    ref.assert_within_steps(out, ref.activation_ref("celu", x, 0.03, 140, alpha=0.7), 1, "celu")
    assert (out.int_repr().int() - tqF.celu(x, 0.03, 140, 0.7).int_repr().int()).abs().max() <= 1
    assert torch.equal(qF.upsample(x, scale_factor=2).int_repr(), qF.interpolate(x, scale_factor=2).int_repr())


def test_dropout_is_identity_and_converts():
    d = nnq.Dropout(0.3)
    x = qx((4, 5))
    assert d(x) is x
    assert repr(d) == "QuantizedDropout(p=0.3, inplace=False)"
    t = tnnq.Dropout(0.3)
    assert repr(d).replace("Quantized", "") == repr(t).replace("Quantized", "")
    assert type(nnq.Dropout.from_float(nn.Dropout(0.2))) is nnq.Dropout
    s = torch.jit.script(d)
    assert s(x) is x or torch.equal(s(x).int_repr(), x.int_repr())


@pytest.mark.parametrize("dim,shape", [(1, (2, 5, 3)), (-1, (4, 9)), (None, (2, 5, 3, 4)), (None, (3, 7, 2))])
def test_softmax_module_vs_torch(dim, shape):
    ours = nnq.Softmax(dim, 1 / 256, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = tnnq.Softmax(dim, 1 / 256, 0)
        x = qx(shape)
        b = theirs(x)
    a = ours(x)
    assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    assert (a.int_repr().int() - b.int_repr().int()).abs().max() <= 1
    d = dim if dim is not None else (0 if len(shape) in (0, 1, 3) else 1)
    ref.assert_within_steps(a, ref.softmax_ref(x, d, 1 / 256, 0), 1, "softmax")
    assert repr(ours).replace("Quantized", "") == repr(theirs).replace("Quantized", "")


def test_convert_swaps_dropout_and_softmax():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = tq.QuantStub()
            self.fc = nn.Linear(6, 5)
            self.drop = nn.Dropout(0.1)
            self.sm = nn.Softmax(dim=1)
            self.dequant = tq.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.sm(self.drop(self.fc(self.quant(x)))))

    f = Net().eval()
    f.qconfig = tq.default_qconfig
    data = [torch.randn(8, 6) for _ in range(3)]
    q = tq.quantize(f, tq.calibrate, (data,))
    assert type(q.drop) is nnq.Dropout and type(q.sm) is nnq.Softmax
    assert not hasattr(q.drop, "activation_post_process")
    out = q(data[0])
    torch.testing.assert_close(out.sum(1), torch.ones(8), atol=0.03, rtol=0)
    assert (out - f(data[0])).abs().max() < 0.05
