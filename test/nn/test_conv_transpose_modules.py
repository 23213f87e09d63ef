"""torch_qplugin.nn.quantized.ConvTranspose1d/2d/3d vs torch.ao.nn.quantized: constructor, repr,
state_dicts both ways, outputs within a step of the float64 reference and of torch (fbgemm engine,
exact here), from_float with per-tensor and per-channel (output channel) weights, the default
mappings (ours and torch.ao's convert), ConvTranspose + BatchNorm fusion, TorchScript save / load
in a fresh process, deepcopy / torch.save."""

import copy
import io
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

tnnq = pytest.importorskip("torch.ao.nn.quantized")
tao = pytest.importorskip("torch.ao.quantization")

import reference as ref  # noqa: E402
from torch_oracle import int8_gemm_exact, seven_bit, torch_engine  # noqa: E402

Q = torch.ops.qplugin
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")


def qx(shape, scale=0.05, zp=120, lo=-4.0, hi=4.0):
    return Q.quantize_per_tensor(torch.rand(shape) * (hi - lo) + lo, scale, zp, torch.quint8)


def qweight_t(shape, per_channel):
    """A transposed-conv weight (IC, OC / groups, kernel...); per channel along axis 1."""
    w = torch.randn(shape) * 0.3
    if per_channel:
        scales = (w.transpose(0, 1).reshape(shape[1], -1).abs().amax(1) / 127.0).double().clamp_min(1e-4)
        return Q.quantize_per_channel(w, scales, torch.zeros(shape[1], dtype=torch.long), 1, torch.qint8)
    return Q.quantize_per_tensor(w, float(w.abs().max() / 127.0), 0, torch.qint8)


def _torch_module(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(*args, **kw)


def _geom(m):
    return list(m.stride), list(m.padding), list(m.output_padding), list(m.dilation), m.groups


def _expect(m, x):
    w, b = m._weight_bias()
    return ref.qconv_transpose_ref(x, w, b, *_geom(m), m.scale, m.zero_point)


CASES = [
    ("ConvTranspose1d", (6, 4, 3), (2, 6, 11), dict(stride=2, padding=1, output_padding=1)),
    ("ConvTranspose2d", (8, 4, 4, 4), (1, 8, 7, 6), dict(stride=2, padding=1)),
    (
        "ConvTranspose2d",
        (6, 2, 3, 3),
        (2, 6, 5, 5),
        dict(stride=(2, 1), padding=1, output_padding=(1, 0), groups=3, dilation=(1, 2)),
    ),
    ("ConvTranspose3d", (4, 3, 2, 3, 2), (1, 4, 3, 4, 3), dict(stride=2, padding=(0, 1, 0))),
]


@pytest.mark.parametrize("cls_name,wshape,xshape,kw", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_loads_torch_state_dict_and_matches(cls_name, wshape, xshape, kw, per_channel):
    groups = kw.get("groups", 1)
    args = (wshape[0], wshape[1] * groups, wshape[2:])
    ours = getattr(nnq, cls_name)(*args, **kw)
    w, b = qweight_t(wshape, per_channel), torch.randn(wshape[1] * groups)
    if per_channel:  # torch's kernels refuse per-channel transposed conv; a state_dict of ours loads in ours
        ours.set_weight_bias(w, b)
        ours.scale, ours.zero_point = 0.2, 70
        other = getattr(nnq, cls_name)(*args, **kw)
        other.load_state_dict(ours.state_dict())
        ours = other
    else:
        with torch_engine("fbgemm"):
            t = _torch_module(getattr(tnnq, cls_name), *args, **kw)
            t.set_weight_bias(w, b)
            t.scale, t.zero_point = 0.2, 70
            ours.load_state_dict(t.state_dict())
    w2, b2 = ours._weight_bias()
    assert torch.equal(w2.int_repr(), w.int_repr()) and torch.equal(b2, b) and w2.qscheme() == w.qscheme()
    x = qx(xshape)
    y = ours(x)
    ref.assert_within_steps(y, _expect(ours, x), 1, what="vs float64 reference")
    if len(xshape) == 4:
        assert torch.equal(ours(x.contiguous(memory_format=torch.channels_last)).int_repr(), y.int_repr())
    if not per_channel:
        x7 = seven_bit(x)
        assert int8_gemm_exact(x7, w)
        with torch_engine("fbgemm"):
            yt = t(x7)
        assert int((ours(x7).int_repr().int() - yt.int_repr().int()).abs().max()) <= 1
        ours.scale = t.scale  # (the state_dict stored it as float32)
        assert repr(ours) == repr(t)
        # and back: torch loads ours
        with torch_engine("fbgemm"):
            t2 = _torch_module(getattr(tnnq, cls_name), *args, **kw)
            t2.load_state_dict(ours.state_dict())
            assert torch.equal(t2._weight_bias()[0].int_repr(), w.int_repr())


def test_ctor_repr_and_errors():
    m = nnq.ConvTranspose2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), output_padding=(1, 0), bias=False)
    with torch_engine("fbgemm"):
        t = _torch_module(
            tnnq.ConvTranspose2d, 16, 33, (3, 5), stride=(2, 1), padding=(4, 2), output_padding=(1, 0), bias=False
        )
    assert repr(m) == repr(t)
    assert repr(m) == (
        "QuantizedConvTranspose2d(16, 33, kernel_size=(3, 5), stride=(2, 1), scale=1.0, "
        "zero_point=0, padding=(4, 2), output_padding=(1, 0), bias=False)"
    )
    assert m.weight().shape == (16, 33, 3, 5) and m.bias() is None
    assert m._packed_params.transpose() and m._packed_params.output_padding() == [1, 0]
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nnq.ConvTranspose2d(4, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nnq.ConvTranspose2d(5, 4, 3, groups=2)
    with pytest.raises(ValueError, match="output_padding should be >= 0 and smaller than stride or dilation"):
        nnq.ConvTranspose2d(4, 4, 3, stride=2, output_padding=2)
    with pytest.raises(ValueError, match=r"Input shape must be `\(N, C, H, W\)`"):
        nnq.ConvTranspose2d(4, 4, 3)(qx((1, 4, 5)))
    with pytest.raises(RuntimeError, match="ConvTranspose2d.*quantized"):
        nnq.ConvTranspose2d(4, 4, 3)(torch.rand(1, 4, 5, 5))


class Decoder(nn.Module):
    def __init__(self, stubs=tq):
        super().__init__()
        self.quant = stubs.QuantStub()
        self.up = nn.ConvTranspose2d(8, 6, 4, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.up1 = nn.ConvTranspose1d(6, 4, 3, stride=2, output_padding=1)
        self.up3 = nn.ConvTranspose3d(3, 2, 2, stride=2, groups=1)
        self.dequant = stubs.DeQuantStub()

    def forward(self, x):
        y = self.bn(self.up(self.quant(x)))
        y1 = self.up1(y.flatten(2)[..., :9])
        y3 = self.up3(y[:, :3].unsqueeze(2))
        return self.dequant(y), self.dequant(y1), self.dequant(y3)


def _decoder(stubs=tq):
    torch.manual_seed(0)
    m = Decoder(stubs).eval()
    m.bn.running_mean.uniform_(-0.5, 0.5)
    m.bn.running_var.uniform_(0.5, 2.0)
    m.bn.weight.data.uniform_(0.5, 1.5)
    return m


@pytest.mark.parametrize("per_channel", [False, True])
def test_workflow_fuse_prepare_convert(per_channel):
    m = _decoder()
    x = torch.randn(2, 8, 5, 5)
    with torch.no_grad():
        ref_out = m(x)
    fused = tq.fuse_modules(m, [["up", "bn"]])
    assert type(fused.up) is nn.ConvTranspose2d and isinstance(fused.bn, nn.Identity)
    with torch.no_grad():
        for a, b in zip(fused(x), ref_out):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    # (our default_qconfig is per-channel; per-tensor is default_per_tensor_qconfig)
    fused.qconfig = tq.default_qconfig if per_channel else tq.default_per_tensor_qconfig
    prepared = tq.prepare(fused)
    for _ in range(3):
        prepared(torch.randn(2, 8, 5, 5))
    qm = tq.convert(prepared)
    for name, cls in (("up", nnq.ConvTranspose2d), ("up1", nnq.ConvTranspose1d), ("up3", nnq.ConvTranspose3d)):
        mod = getattr(qm, name)
        assert type(mod) is cls
        w = mod.weight()
        if per_channel:  # per output channel: axis 1 of (IC, OC / groups, kernel...)
            assert w.qscheme() == torch.per_channel_affine and w.q_per_channel_axis() == 1
            assert w.q_per_channel_scales().numel() == w.shape[1]
        else:
            assert w.qscheme() == torch.per_tensor_affine
    # each converted layer within 1 step of the float64 reference on its own input
    xq = qm.quant(x)
    yq = qm.up(xq)
    ref.assert_within_steps(yq, _expect(qm.up, xq), 1)
    out = qm(x)
    for a, b in zip(out, ref_out):
        assert float((a - b).abs().max()) < 0.25 * float(b.abs().max())  # int8 close to fp32
    # scripted: same outputs, qplugin kernels only
    sm = torch.jit.script(qm)
    assert "qplugin::conv_transpose2d" in str(sm.inlined_graph) and "quantized::" not in str(sm.inlined_graph)
    for a, b in zip(sm(x), out):
        assert torch.equal(a, b)


def test_torch_ao_convert_with_our_mapping():
    m = _decoder(tao)
    m = tao.fuse_modules(m, [["up", "bn"]])  # torch's own ConvTranspose + BN fusion
    m.qconfig = tao.default_qconfig  # torch.ao refuses per-channel ConvTranspose at prepare
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = tao.prepare(m)
    prepared(torch.randn(2, 8, 5, 5))
    qm = tao.convert(prepared, mapping=tq.get_default_static_quant_module_mappings())
    assert type(qm.up) is nnq.ConvTranspose2d and type(qm.up3) is nnq.ConvTranspose3d
    xq = qm.quant(torch.randn(1, 8, 5, 5))
    ref.assert_within_steps(qm.up(xq), _expect(qm.up, xq), 1)
    assert tq.get_default_static_quant_module_mappings()[nn.ConvTranspose1d] is nnq.ConvTranspose1d


@pytest.mark.parametrize(
    "cls,bn,groups,x",
    [
        (nn.ConvTranspose2d, nn.BatchNorm2d, 2, (2, 6, 5, 4)),
        (nn.ConvTranspose1d, nn.BatchNorm1d, 3, (2, 6, 7)),
        (nn.ConvTranspose3d, nn.BatchNorm3d, 1, (1, 6, 3, 4, 3)),
    ],
)
def test_fuse_convtranspose_bn_any_groups(cls, bn, groups, x):
    # folded per output channel of every group (torch's fuse_conv_bn_eval(transpose=True) fails
    # for groups > 1)
    torch.manual_seed(3)
    m = nn.Sequential(cls(6, 4 * groups, 3, stride=2, groups=groups), bn(4 * groups)).eval()
    m[1].running_mean.uniform_(-1, 1)
    m[1].running_var.uniform_(0.5, 2)
    m[1].weight.data.uniform_(0.5, 1.5)
    m[1].bias.data.uniform_(-1, 1)
    inp = torch.randn(x)
    with torch.no_grad():
        want = m(inp)
        fused = tq.fuse_modules(m, [["0", "1"]])
        torch.testing.assert_close(fused(inp), want, atol=1e-5, rtol=1e-5)
    assert type(fused[0]) is cls and isinstance(fused[1], nn.Identity)


def test_fuse_convtranspose_bn_needs_eval():
    m = _decoder().train()
    with pytest.raises(ValueError, match="ConvTranspose \\+ BatchNorm fusion needs both modules in eval mode"):
        tq.fuse_modules(m, [["up", "bn"]])


def test_from_float_per_channel_observer_axis():
    f = nn.ConvTranspose2d(4, 6, 3, groups=2)
    f.qconfig = tq.default_per_channel_qconfig
    f.activation_post_process = f.qconfig.activation()
    f.activation_post_process(torch.randn(1, 6, 7, 7))
    m = nnq.ConvTranspose2d.from_float(f)
    w = m.weight()
    assert w.q_per_channel_axis() == 1 and w.q_per_channel_scales().numel() == 3
    # the weight observer saw axis 1: every (input channel, output channel) group's max within 1 step
    err = (w.dequantize() - f.weight.detach()).abs().transpose(0, 1).reshape(3, -1).amax(1)
    assert bool((err <= w.q_per_channel_scales().float() * 0.5 + 1e-6).all())
    with pytest.raises(TypeError, match="from_float only works for ConvTranspose2d"):
        nnq.ConvTranspose2d.from_float(nn.Conv2d(4, 6, 3))


def test_deepcopy_and_whole_module_save():
    m = nnq.ConvTranspose2d(6, 4, 3, stride=2, output_padding=1, groups=2)
    m.set_weight_bias(qweight_t((6, 2, 3, 3), True), torch.randn(4))
    m.scale, m.zero_point = 0.1, 5
    x = qx((1, 6, 5, 5))
    out = m(x)
    assert torch.equal(copy.deepcopy(m)(x).int_repr(), out.int_repr())
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=False)(x).int_repr(), out.int_repr())
    m2 = nnq.ConvTranspose2d(6, 4, 3, stride=2, output_padding=1, groups=2)
    m2.load_state_dict(m.state_dict())
    assert torch.equal(m2(x).int_repr(), out.int_repr())
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        nnq.ConvTranspose2d(6, 8, 3, stride=2, output_padding=1, groups=2).load_state_dict(m.state_dict())


def test_script_save_load_fresh_process(tmp_path):
    m = nn.Sequential(
        nnq.ConvTranspose2d(6, 4, 3, stride=2, output_padding=1, groups=2),
        nnq.ConvTranspose1d(4, 3, 2, stride=2),
        nnq.ConvTranspose3d(3, 2, 2, stride=(1, 2, 2)),
    )
    m[0].set_weight_bias(qweight_t((6, 2, 3, 3), True), torch.randn(4))
    m[1].set_weight_bias(qweight_t((4, 3, 2), False), None)
    m[2].set_weight_bias(qweight_t((3, 2, 2, 2, 2), True), torch.randn(2))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = m[0], m[1], m[2]

        def forward(self, x):
            y = self.a(x)
            return y, self.b(y[:, :, 0]), self.c(y[:, :3].unsqueeze(2))

    sm = torch.jit.script(Net())
    x = qx((1, 6, 4, 5))
    expected = [t.int_repr() for t in sm(x)]
    torch.jit.save(sm, str(tmp_path / "m.pt"))
    torch.save({"x": x, "expected": expected}, str(tmp_path / "io.pt"))
    code = textwrap.dedent(f"""
        import torch, torch_qplugin
        m = torch.jit.load({str(tmp_path / 'm.pt')!r})
        io = torch.load({str(tmp_path / 'io.pt')!r}, weights_only=False)
        ys = m(io["x"])
        assert all(torch.equal(y.int_repr(), e) for y, e in zip(ys, io["expected"]))
        assert "quantized::" not in str(m.inlined_graph)
        print("OK")
    """)
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-2000:]
