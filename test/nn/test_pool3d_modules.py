"""AvgPool3d / AdaptiveAvgPool3d modules and functional avg_pool3d / adaptive_avg_pool3d: torch's
constructor arguments and results (within a step of torch's quantized kernels and of the float64
reference), from_float, convert() swaps nn.AvgPool3d / nn.AdaptiveAvgPool3d in."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import reference as ref
import torch_qplugin.nn.quantized as nnq
import torch_qplugin.nn.quantized.functional as qF
import torch_qplugin.quantization as tq

Q = torch.ops.qplugin


def qx(shape, scale=0.05, zp=120):
    return Q.quantize_per_tensor(torch.rand(shape) * 8 - 4, scale, zp, torch.quint8)


def _real(x):
    return (x.int_repr().numpy().astype(np.int64) - x.q_zero_point()) * x.q_scale()


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=(1, 3, 2), stride=(1, 2, 1), ceil_mode=True, count_include_pad=False),
        dict(kernel_size=3, stride=1, padding=1, divisor_override=4),
    ],
)
def test_avg_pool3d_module_and_functional(kw):
    x = qx((2, 3, 5, 7, 6))
    m = nnq.AvgPool3d(**kw)
    out = m(x)
    assert torch.equal(out.int_repr(), qF.avg_pool3d(x, **kw).int_repr())
    theirs = F.avg_pool3d(x, **kw)
    ref.assert_within_steps(out, theirs.int_repr().numpy(), 1, f"vs torch {kw}")
    lst = lambda v: list(v) if isinstance(v, tuple) else [v]  # noqa: E731
    k = lst(kw["kernel_size"])
    s = lst(kw["stride"]) if "stride" in kw else k
    p = [kw.get("padding", 0)]
    expected = ref.requantize_ref(
        ref.avg_pool3d_ref(
            _real(x), k, s, p, kw.get("ceil_mode", False), kw.get("count_include_pad", True), kw.get("divisor_override")
        ),
        x.q_scale(),
        x.q_zero_point(),
        torch.quint8,
    )
    ref.assert_within_steps(out, expected, 1, f"vs float64 {kw}")
    f = nn.AvgPool3d(**kw)
    assert repr(m) == repr(f).replace("AvgPool3d", "QuantizedAvgPool3d")
    m2 = nnq.AvgPool3d.from_float(f)
    assert type(m2) is nnq.AvgPool3d and torch.equal(m2(x).int_repr(), out.int_repr())


@pytest.mark.parametrize("size", [1, (2, 3, 4), (None, 2, None), (3, None, 1)])
def test_adaptive_avg_pool3d_module_and_functional(size):
    x = qx((2, 3, 5, 7, 6))
    m = nnq.AdaptiveAvgPool3d(size)
    out = m(x)
    assert torch.equal(out.int_repr(), qF.adaptive_avg_pool3d(x, size).int_repr())
    ref.assert_within_steps(out, F.adaptive_avg_pool3d(x, size).int_repr().numpy(), 1, f"vs torch {size}")
    full = tuple(out.shape[-3:])
    assert full == F.adaptive_avg_pool3d(x.dequantize(), size).shape[-3:]
    expected = ref.requantize_ref(
        ref.adaptive_avg_pool3d_ref(_real(x), full), x.q_scale(), x.q_zero_point(), torch.quint8
    )
    ref.assert_within_steps(out, expected, 1, f"vs float64 {size}")
    assert type(nnq.AdaptiveAvgPool3d.from_float(nn.AdaptiveAvgPool3d(size))) is nnq.AdaptiveAvgPool3d


def test_modules_reject_float_input():
    with pytest.raises(RuntimeError, match=r"AvgPool3d"):
        nnq.AvgPool3d(2)(torch.randn(1, 2, 4, 4, 4))
    with pytest.raises(RuntimeError, match=r"AdaptiveAvgPool3d"):
        nnq.AdaptiveAvgPool3d(1)(torch.randn(1, 2, 4, 4, 4))


def test_convert_swaps_pool3d():
    class Net(nn.Module):
        def __init__(self, stub=tq.QuantStub, destub=tq.DeQuantStub):
            super().__init__()
            self.quant = stub()
            self.conv = nn.Conv3d(2, 4, 3, padding=1)
            self.pool = nn.AvgPool3d(2)
            self.gap = nn.AdaptiveAvgPool3d(1)
            self.dequant = destub()

        def forward(self, x):
            return self.dequant(self.gap(self.pool(self.conv(self.quant(x)))))

    f = Net().eval()
    f.qconfig = tq.default_qconfig
    data = [torch.randn(2, 2, 4, 6, 6) for _ in range(3)]
    q = tq.quantize(f, tq.calibrate, (data,))
    assert type(q.pool) is nnq.AvgPool3d and type(q.gap) is nnq.AdaptiveAvgPool3d
    assert not hasattr(q.pool, "activation_post_process")
    out = q(data[0])
    assert out.shape == (2, 4, 1, 1, 1)
    assert (out - f(data[0])).abs().max() < 0.1
    # torch's own convert with our mapping swaps them too
    taq = pytest.importorskip("torch.ao.quantization")
    g = Net(taq.QuantStub, taq.DeQuantStub).eval()
    g.load_state_dict(f.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g.qconfig = taq.default_qconfig
        p = taq.prepare(g)
        for x in data:
            p(x)
        c = taq.convert(p, mapping=tq.get_default_static_quant_module_mappings())
    assert type(c.pool) is nnq.AvgPool3d and type(c.gap) is nnq.AdaptiveAvgPool3d
    assert (c(data[0]) - f(data[0])).abs().max() < 0.1
