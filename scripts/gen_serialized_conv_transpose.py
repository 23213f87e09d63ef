"""Writes the golden serialized files for transposed-conv packed params (state version 2):

    test/serialized/conv_transpose_packed_params_v2.pt     a scripted module holding
                                                           conv_transpose1d / 2d (per output channel,
                                                           groups 2) / 3d packed params
    test/serialized/conv_transpose_packed_params_v2_io.pt  its inputs, outputs (int_repr) and weights

test/bc/test_conv_serialized.py loads them with the current build. Regenerate only when adding a
new state version (keep the old files).

    PYTHONPATH=. python scripts/gen_serialized_conv_transpose.py
"""
import warnings
from pathlib import Path
from typing import List

import torch

import torch_qplugin  # noqa: F401

OUT = Path(__file__).resolve().parent.parent / "test" / "serialized"
q = torch.ops.qplugin


def _w(g, *shape, per_channel=True):
    ocg = shape[1]
    data = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    if per_channel:  # along axis 1, the output channels of a group
        return torch._make_per_channel_quantized_tensor(
            data, torch.rand(ocg, dtype=torch.double, generator=g) * 0.01 + 0.001,
            torch.randint(-3, 4, (ocg,), generator=g), 1)
    return torch._make_per_tensor_quantized_tensor(data, 0.004, 2)


class GoldenConvT(torch.nn.Module):
    def __init__(self, weights, biases):
        super().__init__()
        w1, w2, w3 = weights
        self.p1 = q.conv_transpose1d_prepack(w1, biases[0], [2], [1], [1], [1], 1)
        self.p2 = q.conv_transpose2d_prepack(w2, biases[1], [2, 1], [1, 0], [1, 0], [1, 2], 2)
        self.p3 = q.conv_transpose3d_prepack(w3, None, [1, 2, 2], [0, 1, 0], [0, 1, 1], [1, 1, 1], 1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> List[torch.Tensor]:
        return [torch.ops.qplugin.conv_transpose1d(x1, self.p1, 0.05, 10),
                torch.ops.qplugin.conv_transpose2d(x2, self.p2, 0.05, 10),
                torch.ops.qplugin.conv_transpose3d(x3, self.p3, 0.05, 10)]


def main():
    warnings.filterwarnings("ignore")
    g = torch.Generator().manual_seed(2026)
    weights = [_w(g, 4, 6, 3), _w(g, 8, 3, 3, 2), _w(g, 4, 2, 2, 3, 2, per_channel=False)]
    biases = [torch.randn(6, generator=g), torch.randn(6, generator=g)]

    def x(*shape):
        return torch._make_per_tensor_quantized_tensor(
            torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), 0.02, 9)

    xs = (x(2, 4, 7), x(1, 8, 5, 4), x(1, 4, 2, 3, 3))
    m = torch.jit.script(GoldenConvT(weights, biases))
    ys = [y.int_repr() for y in m(*xs)]
    OUT.mkdir(parents=True, exist_ok=True)
    torch.jit.save(m, str(OUT / "conv_transpose_packed_params_v2.pt"))
    torch.save({"xs": xs, "expected": ys, "weights": weights, "biases": biases},
               str(OUT / "conv_transpose_packed_params_v2_io.pt"))
    print("wrote", OUT / "conv_transpose_packed_params_v2.pt", OUT / "conv_transpose_packed_params_v2_io.pt")


if __name__ == "__main__":
    main()
