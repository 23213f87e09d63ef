"""The small qplugin model the saved-model mutation fuzzer saves, mutates and loads (fuzzlib.py)."""

import torch
import torch_qplugin  # noqa: F401  (loads torch.ops.qplugin)

q = torch.ops.qplugin


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        w2 = torch._make_per_channel_quantized_tensor(
            torch.randint(-128, 128, (4, 3, 3, 3), dtype=torch.int8, generator=g),
            torch.rand(4, dtype=torch.double, generator=g) * 0.01 + 0.001,
            torch.zeros(4, dtype=torch.long),
            0,
        )
        self.c = q.conv2d_prepack(w2, torch.randn(4, generator=g), [1, 1], [1, 1], [1, 1], 1)
        wl = torch._make_per_tensor_quantized_tensor(
            torch.randint(-128, 128, (5, 36), dtype=torch.int8, generator=g), 0.01, 0
        )
        self.l = q.linear_prepack(wl, torch.randn(5, generator=g))

    def forward(self, x):
        y = q.conv2d(x, self.c, 0.1, 100)
        y = q.relu(y)
        return q.linear(y.reshape(y.shape[0], -1), self.l, 0.2, 120)


def example():
    return torch._make_per_tensor_quantized_tensor(torch.randint(0, 256, (2, 3, 3, 3), dtype=torch.uint8), 0.05, 128)
