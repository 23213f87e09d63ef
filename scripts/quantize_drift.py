"""How often quantize's rounding rule moves a value: qplugin's quantize_per_tensor / _channel against
torch's quantize under torch 2.13 (the rule qplugin followed before: ``x * inv_scale + zero_point``
rounded in one step for 8-bit per tensor, ``float32(float32(x * inv_scale) + zero_point)`` for
per channel and qint32) and against torch's FakeQuantize (``fake_quantize_per_tensor_affine`` /
``_per_channel_affine``, the 8-bit rule qplugin follows now). Counts elements whose integers differ.

    python scripts/quantize_drift.py            # 2,000,000 values a row
    python scripts/quantize_drift.py --n 100000

Under torch >= 2.14 torch's quantize already follows the new 8-bit rule, so the "old" column needs
torch 2.13 and says n/a otherwise. FakeQuantize's integers come back exactly from its float output
for 8-bit ((q - zero_point) * float32(scale), |q - zero_point| <= 255); for qint32 it computes in
float32 (x * float32 inv_scale) where qplugin divides in float64, so its column counts the
elements where that float32 rule picks another integer.
"""

import argparse
import warnings

import numpy as np
import torch
from torch.torch_version import TorchVersion

import torch_qplugin  # noqa: F401  (registers torch.ops.qplugin)

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
q = torch.ops.qplugin
QRANGE = {torch.quint8: (0, 255), torch.qint8: (-128, 127), torch.qint32: (-(2**31), 2**31 - 1)}

# (dtype, scale, zero_point, distribution, per_channel): distribution "range" is uniform over the
# represented range and a step beyond each end; "normal:k" is normal with sigma 2^k steps.
SETTINGS = [
    (torch.quint8, 0.07, 128, "range", False),
    (torch.quint8, 1 / 255, 0, "range", False),  # sigmoid-like outputs; not a float32 scale
    (torch.quint8, 0.5, 5, "range", False),
    (torch.qint8, 0.02, 0, "range", False),
    (torch.qint8, 0.1, -3, "range", False),
    (torch.qint8, 0.01, 0, "normal:5", True),  # symmetric per-channel weights, 4 channels
    (torch.quint8, 0.03, 77, "range", True),
    (torch.qint32, 1e-4, 0, "normal:20", False),  # bias-like
    (torch.qint32, 0.07, 1000, "normal:26", False),
    (torch.qint32, 1.0, 2**31 - 1, "normal:30", False),
]
CHANNELS = 4


def values(rng, n, dtype, scale, zp, dist):
    if dist == "range":
        lo, hi = QRANGE[dtype]
        return rng.uniform((lo - zp - 1) * scale, (hi - zp + 1) * scale, n).astype(np.float32)
    k = int(dist.split(":")[1])
    return (rng.standard_normal(n) * scale * 2.0**k).astype(np.float32)


def channel_params(scale, zp):
    scales = torch.tensor([scale * (1 + 0.37 * c) for c in range(CHANNELS)], dtype=torch.double)
    return scales, torch.full((CHANNELS,), zp, dtype=torch.long)


def ours(x, dtype, scale, zp, per_channel):
    if per_channel:
        s, z = channel_params(scale, zp)
        return q.quantize_per_channel(x, s, z, 1, dtype).int_repr().long()
    return q.quantize_per_tensor(x, scale, zp, dtype).int_repr().long()


def torch_quantize(x, dtype, scale, zp, per_channel):
    if per_channel:
        s, z = channel_params(scale, zp)
        return torch.quantize_per_channel(x, s, z, 1, dtype).int_repr().long()
    return torch.quantize_per_tensor(x, scale, zp, dtype).int_repr().long()


def fake_quantize_ints(x, dtype, scale, zp, per_channel):
    lo, hi = QRANGE[dtype]
    if per_channel:
        s, z = channel_params(scale, zp)
        f = torch.fake_quantize_per_channel_affine(x, s.float(), z.int(), 1, lo, hi)
        return torch.round(f.double() / s.float().double()).long() + z
    sf = torch.tensor(scale, dtype=torch.float32).double()
    if dtype == torch.qint32:  # its float output cannot hold |q - zp| > 2^24: its rule, in numpy
        inv = np.float32(1.0) / np.float32(scale)
        t = np.rint((x.numpy() * inv).astype(np.float32)).astype(np.float64) + zp
        return torch.from_numpy(np.clip(np.nan_to_num(t), lo, hi).astype(np.int64))
    f = torch.fake_quantize_per_tensor_affine(x, scale, zp, lo, hi)
    return torch.round(f.double() / sf).long() + zp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000, help="values a row")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    old_available = TorchVersion(torch.__version__) < "2.14"
    rng = np.random.default_rng(args.seed)
    print(f"torch {torch.__version__}, {args.n:,} values a row (seed {args.seed})\n")
    print(
        "| dtype | scheme | scale | zero point | values | differ from torch 2.13's quantize (the old rule) "
        "| differ from torch's FakeQuantize |"
    )
    print("|---|---|---|---|---|---|---|")
    for dtype, scale, zp, dist, per_channel in SETTINGS:
        n = args.n - args.n % CHANNELS
        x = torch.from_numpy(values(rng, n, dtype, scale, zp, dist))
        if per_channel:
            x = x.reshape(-1, CHANNELS)
        new = ours(x, dtype, scale, zp, per_channel)
        old = f"{int((new != torch_quantize(x, dtype, scale, zp, per_channel)).sum()):,}" if old_available else "n/a"
        fake = int((new != fake_quantize_ints(x, dtype, scale, zp, per_channel)).sum())
        scheme = (
            f"per channel ({CHANNELS}, scale x1..x{1 + 0.37 * (CHANNELS - 1):.2f})" if per_channel else "per tensor"
        )
        print(f"| {str(dtype)[6:]} | {scheme} | {scale:.6g} | {zp} | {dist} | {old} | {fake:,} |")


if __name__ == "__main__":
    main()
