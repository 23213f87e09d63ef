"""Writes the golden serialized files for conv packed params (state version 1):

    test/serialized/conv_packed_params_v1.pt     a scripted module holding Conv2dPackedParamsBase
                                                 (conv1d, conv2d, depthwise) and Conv3dPackedParamsBase
    test/serialized/conv_packed_params_v1_io.pt  its inputs, outputs (int_repr) and original weights

test/bc/test_conv_serialized.py loads them with the current build: old files must keep loading and
give the same outputs. Regenerate only when adding a new state version (keep the old files).

    PYTHONPATH=. python scripts/gen_serialized_conv.py
"""
import warnings
from pathlib import Path
from typing import List

import torch

import torch_qplugin  # noqa: F401

OUT = Path(__file__).resolve().parent.parent / "test" / "serialized"
q = torch.ops.qplugin


def _w(g, *shape, per_channel=True):
    oc = shape[0]
    data = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    if per_channel:
        return torch._make_per_channel_quantized_tensor(
            data, torch.rand(oc, dtype=torch.double, generator=g) * 0.01 + 0.001,
            torch.randint(-3, 4, (oc,), generator=g), 0)
    return torch._make_per_tensor_quantized_tensor(data, 0.004, 0)


class GoldenConv(torch.nn.Module):
    def __init__(self, weights, biases):
        super().__init__()
        w1, w2, wdw, w3 = weights
        b1, b2 = biases
        self.p1 = q.conv1d_prepack(w1, b1, [2], [1], [1], 1)
        self.p2 = q.conv2d_prepack(w2, b2, [1, 1], [2, 1], [2, 1], 2)
        self.pdw = q.conv2d_prepack(wdw, None, [2, 2], [1, 1], [1, 1], 8)
        self.p3 = q.conv3d_prepack(w3, None, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> List[torch.Tensor]:
        y2 = torch.ops.qplugin.conv2d_relu(x2, self.p2, 0.05, 10)
        return [torch.ops.qplugin.conv1d(x1, self.p1, 0.05, 10),
                y2,
                torch.ops.qplugin.conv2d(y2, self.pdw, 0.05, 10),
                torch.ops.qplugin.conv3d(x3, self.p3, 0.05, 10)]


def main():
    warnings.filterwarnings("ignore")
    g = torch.Generator().manual_seed(2024)
    weights = [_w(g, 8, 4, 3), _w(g, 8, 2, 3, 3, per_channel=False), _w(g, 8, 1, 3, 3), _w(g, 6, 4, 2, 3, 3)]
    biases = [torch.randn(8, generator=g), torch.randn(8, generator=g)]

    def x(*shape):
        return torch._make_per_tensor_quantized_tensor(
            torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), 0.02, 9)

    xs = (x(2, 4, 11), x(1, 4, 9, 8), x(1, 4, 3, 5, 6))
    m = torch.jit.script(GoldenConv(weights, biases))
    ys = [y.int_repr() for y in m(*xs)]
    OUT.mkdir(parents=True, exist_ok=True)
    torch.jit.save(m, str(OUT / "conv_packed_params_v1.pt"))
    torch.save({"xs": xs, "expected": ys, "weights": weights, "biases": biases},
               str(OUT / "conv_packed_params_v1_io.pt"))
    print("wrote", OUT / "conv_packed_params_v1.pt", OUT / "conv_packed_params_v1_io.pt")


if __name__ == "__main__":
    main()
