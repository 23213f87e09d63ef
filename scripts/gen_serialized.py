"""Writes the golden serialized files in test/serialized/ (backward-compatibility tests in test/bc/).

    python scripts/gen_serialized.py [--only linear]

Each family writes <family>_v<version>.pt (a torch.jit.save'd scripted module holding packed
params) and <family>_v<version>.io.pt (inputs and the outputs this version produced, as plain
tensors). Regenerate only when the format version changes on purpose, and keep the old files:
the tests load every file and compare outputs exactly.
"""
import argparse
import sys
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "serialized"
sys.path.insert(0, str(ROOT))


class LinearGolden(torch.nn.Module):
    """Per-channel weight with bias (static linear) and per-tensor weight without bias (dynamic)."""

    def __init__(self, p_static, p_dynamic):
        super().__init__()
        self.p_static = p_static
        self.p_dynamic = p_dynamic

    def forward(self, x: torch.Tensor, xf: torch.Tensor):
        y = torch.ops.qplugin.linear(x, self.p_static, 0.05, 100)
        z = torch.ops.qplugin.linear_relu_dynamic(xf, self.p_dynamic, False)
        return y, z


def gen_linear():
    import torch_qplugin  # noqa: F401

    g = torch.Generator().manual_seed(2024)
    N, K = 24, 37
    scales = torch.rand(N, generator=g, dtype=torch.float64) * 0.01 + 0.002
    zps = torch.randint(-5, 6, (N,), generator=g)
    w1 = torch.quantize_per_channel(torch.randn(N, K, generator=g) * 0.2, scales, zps, 0, torch.qint8)
    b1 = torch.randn(N, generator=g)
    w2 = torch.quantize_per_tensor(torch.randn(16, K, generator=g) * 0.2, 0.004, 3, torch.qint8)
    m = LinearGolden(torch.ops.qplugin.linear_prepack(w1, b1), torch.ops.qplugin.linear_prepack(w2, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sm = torch.jit.script(m)
        xu8 = torch.randint(0, 256, (5, K), generator=g, dtype=torch.uint8)
        x = torch._make_per_tensor_quantized_tensor(xu8, 0.03, 128)
        xf = torch.randn(5, K, generator=g)
        y, z = sm(x, xf)
        torch.jit.save(sm, str(OUT / "linear_v1.pt"))
    torch.save({"x_uint8": xu8, "x_scale": 0.03, "x_zero_point": 128, "xf": xf,
                "y_uint8": y.int_repr(), "y_scale": y.q_scale(), "y_zero_point": y.q_zero_point(), "z": z,
                "w_static_int8": w1.int_repr(), "w_static_scales": scales, "w_static_zero_points": zps,
                "b_static": b1, "w_dynamic_int8": w2.int_repr()},
               OUT / "linear_v1.io.pt")
    print("wrote", OUT / "linear_v1.pt", OUT / "linear_v1.io.pt")


class LinearFp16Golden(torch.nn.Module):
    """fp16 weights (LinearPackedParamsBase state version 2): with bias (linear_dynamic_fp16) and
    without (linear_relu_dynamic_fp16)."""

    def __init__(self, p_bias, p_nobias):
        super().__init__()
        self.p_bias = p_bias
        self.p_nobias = p_nobias

    def forward(self, x: torch.Tensor):
        return (torch.ops.qplugin.linear_dynamic_fp16(x, self.p_bias),
                torch.ops.qplugin.linear_relu_dynamic_fp16(x, self.p_nobias))


def gen_linear_fp16():
    import torch_qplugin  # noqa: F401

    g = torch.Generator().manual_seed(2026)
    N, K = 21, 35
    w1, b1 = torch.randn(N, K, generator=g), torch.randn(N, generator=g)
    w2 = torch.randn(18, K, generator=g) * 3
    m = LinearFp16Golden(torch.ops.qplugin.linear_prepack_fp16(w1, b1), torch.ops.qplugin.linear_prepack_fp16(w2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sm = torch.jit.script(m)
        x = torch.randn(6, K, generator=g)
        y, z = sm(x)
        torch.jit.save(sm, str(OUT / "linear_fp16_v2.pt"))
    torch.save({"x": x, "y": y, "z": z, "w_bias_fp16": w1.half(), "b": b1, "w_nobias_fp16": w2.half()},
               OUT / "linear_fp16_v2.io.pt")
    print("wrote", OUT / "linear_fp16_v2.pt", OUT / "linear_fp16_v2.io.pt")


FAMILIES = {"linear": gen_linear, "linear_fp16": gen_linear_fp16}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, fn in FAMILIES.items():
        if args.only and name not in args.only:
            continue
        fn()


if __name__ == "__main__":
    main()
