"""Ten lines of torch_qplugin: quantize, inspect, dequantize through torch.ops.qplugin."""

import torch

import torch_qplugin  # noqa: F401  (loads the qplugin:: op library)

x = torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last)
qx = torch.ops.qplugin.quantize_per_tensor(x, 0.05, 128, torch.quint8)  # same args as torch.quantize_per_tensor
print("qparams:", qx.q_scale(), qx.q_zero_point(), qx.dtype)
print("int_repr[0,0]:\n", torch.ops.qplugin.int_repr(qx)[0, 0])
w = torch.ops.qplugin.quantize_per_channel(
    torch.randn(8, 16), torch.rand(8) * 0.01 + 0.01, torch.zeros(8, dtype=torch.long), 0, torch.qint8
)
xd = torch.ops.qplugin.dequantize(qx)
print("max |x - dequantize(quantize(x))| =", (x - xd).abs().max().item(), "<= scale/2 =", 0.05 / 2)
print(
    "bit-identical to torch:",
    torch.equal(qx.int_repr(), torch.quantize_per_tensor(x, 0.05, 128, torch.quint8).int_repr()),
)
print("per-channel weight:", w.qscheme(), w.q_per_channel_scales().shape)
