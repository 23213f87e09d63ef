"""qplugin::prelu and the PReLU module: within 1 step of the float64 reference and of torch's
quantized::prelu, identical on every kernel path and layout; from_float / convert / scripting."""

import copy
import io

import pytest
import torch
import torch.nn as nn

import reference as ref
import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

q = torch.ops.qplugin
tq_ops = torch.ops.quantized


def _qx(shape, dt=torch.quint8, zp=120):
    return torch.quantize_per_tensor(torch.randn(shape) * 3, 0.05, zp, dt)


def _qw(n, dt=torch.quint8):
    # torch's quantized::prelu wants the weight in qx's dtype
    return torch.quantize_per_tensor(torch.randn(n) * 0.5, 0.01, 128 if dt == torch.quint8 else 0, dt)


@pytest.mark.parametrize("dt,zp", [(torch.quint8, 120), (torch.qint8, -3)])
@pytest.mark.parametrize("shape,n", [((2, 6, 5, 7), 6), ((2, 6, 5, 7), 1), ((3, 9), 9), ((4, 37, 3), 37), ((7,), 1)])
def test_prelu_vs_reference_and_torch(isa, dt, zp, shape, n):
    qx, w = _qx(shape, dt, zp), _qw(n, dt)
    out = q.prelu(qx, w, 0.04, 100 if dt == torch.quint8 else 5)
    assert out.shape == qx.shape and out.q_scale() == 0.04 and out.dtype == dt
    ref.assert_within_steps(out, ref.prelu_ref(qx, w.dequantize(), 0.04, out.q_zero_point()), 1, "reference")
    if qx.dim() >= 2:
        theirs = tq_ops.prelu(qx, w, 0.04, out.q_zero_point())
        ref.assert_within_steps(out, theirs.int_repr().numpy(), 1, "torch")
    # float slopes give the same result as the quantized ones they represent
    assert torch.equal(q.prelu(qx, w.dequantize(), 0.04, out.q_zero_point()).int_repr(), out.int_repr())


def test_prelu_paths_and_layouts_identical():
    import torch_qplugin
    from torch_qplugin import _isa

    qx, w = _qx((2, 37, 6, 9)), _qw(37)
    outs = []
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            for t in (qx, qx.contiguous(memory_format=torch.channels_last), qx[:, :, :, ::2]):
                outs.append(q.prelu(t, w, 0.04, 100))
    for o in outs[1::3]:
        assert o.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(o.int_repr(), outs[0].int_repr())
    for o in outs[2::3]:
        assert torch.equal(o.int_repr(), outs[0].int_repr()[:, :, :, ::2])
    assert q.prelu(_qx((0, 37, 2, 2)), w, 0.04, 100).shape == (0, 37, 2, 2)


def test_prelu_errors():
    qx = _qx((2, 3, 4))
    with pytest.raises(RuntimeError, match=r"qplugin::prelu: qx should be a quantized tensor"):
        q.prelu(torch.randn(2, 3), _qw(3), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::prelu: weight should have 1 or 3 \(qx.size\(1\)\) elements, got 2"):
        q.prelu(qx, _qw(2), 0.1, 0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::prelu: weight should be a per-tensor quantized or float tensor, got dtype Long"
    ):
        q.prelu(qx, torch.ones(3, dtype=torch.long), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::prelu: weight should be finite, got nan"):
        q.prelu(qx, torch.tensor([1.0, float("nan"), 0.0]), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::prelu: output_scale should be a positive finite number, got -1"):
        q.prelu(qx, _qw(3), -1.0, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::prelu: qx should be quint8 or qint8, got QInt32"):
        q.prelu(torch.quantize_per_tensor(torch.randn(2, 3), 0.1, 0, torch.qint32), _qw(3), 0.1, 0)


def test_prelu_opcheck():
    torch.library.opcheck(
        q.prelu.default, (_qx((2, 3, 4)), _qw(3), 0.04, 100), test_utils=("test_schema", "test_autograd_registration")
    )


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 5, 3, padding=1)
        self.prelu = nn.PReLU(5)
        self.prelu1 = nn.PReLU()
        self.dequant = tq.DeQuantStub()
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([0.1, -0.3, 0.5, 0.0, 0.25]))

    def forward(self, x):
        return self.dequant(self.prelu1(self.prelu(self.conv(self.quant(x)))))


@pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")
def test_prelu_module_convert_script_and_save(tmp_path):
    f = _Net().eval()
    f.qconfig = tq.default_qconfig
    data = [torch.randn(2, 3, 6, 6) for _ in range(3)]
    m = tq.quantize(copy.deepcopy(f), tq.calibrate, (data,))
    assert type(m.prelu) is nnq.PReLU and type(m.prelu1) is nnq.PReLU
    assert m.prelu.weight.dequantize()[1] < 0  # negative slopes survive (qint8 symmetric)
    assert repr(m.prelu) == f"QuantizedPReLU(num_parameters=5, scale={m.prelu.scale}, zero_point={m.prelu.zero_point})"
    x = data[0]
    assert (m(x) - f(x)).abs().max() < 0.15
    out = m(x)
    s = torch.jit.script(m)
    assert "qplugin::prelu" in s.inlined_graph.str() and "quantized::" not in s.inlined_graph.str()
    assert torch.equal(s(x), out)
    buf = io.BytesIO()
    torch.jit.save(s, buf)
    buf.seek(0)
    assert torch.equal(torch.jit.load(buf)(x), out)
    assert torch.equal(copy.deepcopy(m)(x), out)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=False)(x), out)
    with pytest.raises(ValueError, match="weight should have 5 elements, got 2"):
        m.prelu.set_weight(_qw(2))
