"""Writes the golden serialized files of test/serialized/, which the backward-compatibility tests
in test/bc/ load with the current build, comparing outputs exactly.

    python scripts/gen_serialized.py --list                # the families and the files they write
    python scripts/gen_serialized.py linear conv           # write these families' files
    python scripts/gen_serialized.py plain_buffers --force

Families (each file name carries the format version the running build writes):
  linear          LinearPackedParamsBase, int8 state: a scripted module (static linear, per-channel
                  weight with bias; dynamic linear_relu, per-tensor weight) + its inputs / outputs
  linear_fp16     LinearPackedParamsBase, fp16 state: linear_dynamic_fp16 with bias and
                  linear_relu_dynamic_fp16 without
  conv            Conv2dPackedParamsBase (conv1d, grouped conv2d_relu, depthwise conv2d) and
                  Conv3dPackedParamsBase (conv3d) + inputs, outputs (int_repr) and weights
  conv_transpose  the transposed-conv state: conv_transpose1d / 2d (per output channel, groups 2) / 3d
  plain_buffers   the plain tier's packed buffers (plain_linear_prepack on every kernel path the CPU
                  runs, plain_conv_prepack, plain_conv_transpose_prepack) with the weights they were
                  packed from, an input and each op's output

A file that exists is kept: old format versions must stay readable, so a new version's files go
beside the old ones (--force overwrites, for a family whose format is still unreleased).
"""

import argparse
import sys
import warnings
from pathlib import Path
from typing import List

import torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "serialized"
sys.path.insert(0, str(ROOT))

import torch_qplugin  # noqa: E402
from torch_qplugin import _isa  # noqa: E402

q = torch.ops.qplugin
# torch's deprecations of the quantized-tensor factories and of TorchScript, which these files exist
# to cover
warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")


def _write(files, out, force):
    """files: {name: (writer, object)} with writer torch.jit.save or torch.save."""
    for name, (writer, obj) in files.items():
        path = out / name
        if path.exists() and not force:
            print(f"kept {path} (exists; --force overwrites)")
            continue
        writer(obj, str(path))
        print("wrote", path)


def _script(m):
    return torch.jit.script(m)


def _state_version(packed):
    """The state version: the first int of the pickled state (nested: conv's is
    ((version, kind, groups), ...))."""
    v = packed.__getstate__()
    while isinstance(v, tuple):
        v = v[0]
    return v


def _x_u8(g, *shape):
    return torch._make_per_tensor_quantized_tensor(
        torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), 0.02, 9
    )


# ---------------------------------------------------------------------------------------- linear
class LinearGolden(torch.nn.Module):
    def __init__(self, p_static, p_dynamic):
        super().__init__()
        self.p_static = p_static
        self.p_dynamic = p_dynamic

    def forward(self, x: torch.Tensor, xf: torch.Tensor):
        y = torch.ops.qplugin.linear(x, self.p_static, 0.05, 100)
        z = torch.ops.qplugin.linear_relu_dynamic(xf, self.p_dynamic, False)
        return y, z


def gen_linear():
    g = torch.Generator().manual_seed(2024)
    N, K = 24, 37
    scales = torch.rand(N, generator=g, dtype=torch.float64) * 0.01 + 0.002
    zps = torch.randint(-5, 6, (N,), generator=g)
    w1 = torch.quantize_per_channel(torch.randn(N, K, generator=g) * 0.2, scales, zps, 0, torch.qint8)
    b1 = torch.randn(N, generator=g)
    w2 = torch.quantize_per_tensor(torch.randn(16, K, generator=g) * 0.2, 0.004, 3, torch.qint8)
    p_static = q.linear_prepack(w1, b1)
    sm = _script(LinearGolden(p_static, q.linear_prepack(w2, None)))
    xu8 = torch.randint(0, 256, (5, K), generator=g, dtype=torch.uint8)
    x = torch._make_per_tensor_quantized_tensor(xu8, 0.03, 128)
    xf = torch.randn(5, K, generator=g)
    y, z = sm(x, xf)
    v = _state_version(p_static)
    return {
        f"linear_v{v}.pt": (torch.jit.save, sm),
        f"linear_v{v}.io.pt": (
            torch.save,
            {
                "x_uint8": xu8,
                "x_scale": 0.03,
                "x_zero_point": 128,
                "xf": xf,
                "y_uint8": y.int_repr(),
                "y_scale": y.q_scale(),
                "y_zero_point": y.q_zero_point(),
                "z": z,
                "w_static_int8": w1.int_repr(),
                "w_static_scales": scales,
                "w_static_zero_points": zps,
                "b_static": b1,
                "w_dynamic_int8": w2.int_repr(),
            },
        ),
    }


class LinearFp16Golden(torch.nn.Module):
    def __init__(self, p_bias, p_nobias):
        super().__init__()
        self.p_bias = p_bias
        self.p_nobias = p_nobias

    def forward(self, x: torch.Tensor):
        return (
            torch.ops.qplugin.linear_dynamic_fp16(x, self.p_bias),
            torch.ops.qplugin.linear_relu_dynamic_fp16(x, self.p_nobias),
        )


def gen_linear_fp16():
    g = torch.Generator().manual_seed(2026)
    N, K = 21, 35
    w1, b1 = torch.randn(N, K, generator=g), torch.randn(N, generator=g)
    w2 = torch.randn(18, K, generator=g) * 3
    p_bias = q.linear_prepack_fp16(w1, b1)
    sm = _script(LinearFp16Golden(p_bias, q.linear_prepack_fp16(w2)))
    x = torch.randn(6, K, generator=g)
    y, z = sm(x)
    v = _state_version(p_bias)
    return {
        f"linear_fp16_v{v}.pt": (torch.jit.save, sm),
        f"linear_fp16_v{v}.io.pt": (
            torch.save,
            {"x": x, "y": y, "z": z, "w_bias_fp16": w1.half(), "b": b1, "w_nobias_fp16": w2.half()},
        ),
    }


# ------------------------------------------------------------------------------------------ conv
def _qweight(g, shape, axis, per_channel, zp):
    """A qint8 weight of random bytes: per channel along `axis` (scales ~0.001-0.011, zero points
    -3..3), or per tensor (0.004, zp)."""
    data = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    if per_channel:
        n = shape[axis]
        return torch._make_per_channel_quantized_tensor(
            data,
            torch.rand(n, dtype=torch.double, generator=g) * 0.01 + 0.001,
            torch.randint(-3, 4, (n,), generator=g),
            axis,
        )
    return torch._make_per_tensor_quantized_tensor(data, 0.004, zp)


class ConvGolden(torch.nn.Module):
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
        return [
            torch.ops.qplugin.conv1d(x1, self.p1, 0.05, 10),
            y2,
            torch.ops.qplugin.conv2d(y2, self.pdw, 0.05, 10),
            torch.ops.qplugin.conv3d(x3, self.p3, 0.05, 10),
        ]


def gen_conv():
    g = torch.Generator().manual_seed(2024)
    weights = [
        _qweight(g, (8, 4, 3), 0, True, 0),
        _qweight(g, (8, 2, 3, 3), 0, False, 0),
        _qweight(g, (8, 1, 3, 3), 0, True, 0),
        _qweight(g, (6, 4, 2, 3, 3), 0, True, 0),
    ]
    biases = [torch.randn(8, generator=g), torch.randn(8, generator=g)]
    xs = (_x_u8(g, 2, 4, 11), _x_u8(g, 1, 4, 9, 8), _x_u8(g, 1, 4, 3, 5, 6))
    return _conv_files("conv_packed_params", ConvGolden(weights, biases), xs, weights, biases)


def _conv_files(stem, m, xs, weights, biases):
    """The scripted module and its io file (inputs, outputs' int_repr, weights, biases)."""
    sm = _script(m)
    ys = [y.int_repr() for y in sm(*xs)]
    v = _state_version(m.p1)
    return {
        f"{stem}_v{v}.pt": (torch.jit.save, sm),
        f"{stem}_v{v}_io.pt": (torch.save, {"xs": xs, "expected": ys, "weights": weights, "biases": biases}),
    }


class ConvTransposeGolden(torch.nn.Module):
    def __init__(self, weights, biases):
        super().__init__()
        w1, w2, w3 = weights
        self.p1 = q.conv_transpose1d_prepack(w1, biases[0], [2], [1], [1], [1], 1)
        self.p2 = q.conv_transpose2d_prepack(w2, biases[1], [2, 1], [1, 0], [1, 0], [1, 2], 2)
        self.p3 = q.conv_transpose3d_prepack(w3, None, [1, 2, 2], [0, 1, 0], [0, 1, 1], [1, 1, 1], 1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> List[torch.Tensor]:
        return [
            torch.ops.qplugin.conv_transpose1d(x1, self.p1, 0.05, 10),
            torch.ops.qplugin.conv_transpose2d(x2, self.p2, 0.05, 10),
            torch.ops.qplugin.conv_transpose3d(x3, self.p3, 0.05, 10),
        ]


def gen_conv_transpose():
    g = torch.Generator().manual_seed(2026)
    # per channel along axis 1, the output channels of a group
    weights = [
        _qweight(g, (4, 6, 3), 1, True, 2),
        _qweight(g, (8, 3, 3, 2), 1, True, 2),
        _qweight(g, (4, 2, 2, 3, 2), 1, False, 2),
    ]
    biases = [torch.randn(6, generator=g), torch.randn(6, generator=g)]
    xs = (_x_u8(g, 2, 4, 7), _x_u8(g, 1, 8, 5, 4), _x_u8(g, 1, 4, 2, 3, 3))
    return _conv_files("conv_transpose_packed_params", ConvTransposeGolden(weights, biases), xs, weights, biases)


# ----------------------------------------------------------------------------------- plain buffers
def gen_plain_buffers():
    sx, zx, sy, zy = 0.05, 100, 0.3, 80
    g = torch.Generator().manual_seed(41)
    n, k = 33, 31
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
    s = torch.rand(n, dtype=torch.double, generator=g) * 0.01 + 0.001
    z = torch.randint(-5, 5, (n,), generator=g)
    b = torch.randn(n, generator=g)
    x = torch.randint(0, 256, (7, k), dtype=torch.uint8, generator=g)
    out = {"linear": {"w": w, "w_scales": s, "w_zero_points": z, "bias": b, "x": x, "buffers": {}}}
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            buf = q.plain_linear_prepack(w, s, z)
            out["linear"]["buffers"][isa] = buf
            out["linear"]["y"] = q.plain_linear(x, sx, zx, w, s, z, b, buf, sy, zy)
    cw = torch.randint(-128, 128, (6, 2, 3, 3), dtype=torch.int8, generator=g)
    cs = torch.rand(6, dtype=torch.double, generator=g) * 0.01 + 0.001
    cz = torch.randint(-3, 4, (6,), generator=g)
    cx = torch.randint(0, 256, (1, 4, 7, 7), dtype=torch.uint8, generator=g)
    geo = ([2, 1], [1, 0], [1, 1], 2)
    cbuf = q.plain_conv_prepack(cw, cs, cz, None, *geo)
    out["conv2d"] = {
        "w": cw,
        "w_scales": cs,
        "w_zero_points": cz,
        "x": cx,
        "buffer": cbuf,
        "y": q.plain_conv2d(cx, sx, zx, cw, cs, cz, None, cbuf, *geo, sy, zy),
    }
    tw = torch.randint(-128, 128, (4, 3, 2, 2), dtype=torch.int8, generator=g)
    ts = torch.rand(6, dtype=torch.double, generator=g) * 0.01 + 0.001
    tz = torch.randint(-3, 4, (6,), generator=g)
    tgeo = ([2, 1], [0, 1], [1, 0], [1, 1], 2)
    tbuf = q.plain_conv_transpose_prepack(tw, ts, tz, None, *tgeo)
    out["conv_transpose2d"] = {
        "w": tw,
        "w_scales": ts,
        "w_zero_points": tz,
        "x": cx,
        "buffer": tbuf,
        "y": q.plain_conv_transpose2d(cx, sx, zx, tw, ts, tz, None, tbuf, *tgeo, sy, zy),
    }
    version = int(buf[8:16].view(torch.int64))  # header word 1: the buffer format version
    return {f"plain_buffers_v{version}.pt": (torch.save, out)}


FAMILIES = {
    "linear": gen_linear,
    "linear_fp16": gen_linear_fp16,
    "conv": gen_conv,
    "conv_transpose": gen_conv_transpose,
    "plain_buffers": gen_plain_buffers,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("families", nargs="*", help=f"of {', '.join(FAMILIES)} (default: all)")
    ap.add_argument("--list", action="store_true", help="the files each family writes with this build")
    ap.add_argument("--force", action="store_true", help="overwrite files that exist")
    ap.add_argument("--out", type=Path, default=OUT, help="default test/serialized")
    args = ap.parse_args()
    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown:
        ap.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.families or list(FAMILIES):
        files = FAMILIES[name]()
        if args.list:
            print(f"{name}: " + ", ".join(files))
        else:
            _write(files, args.out, args.force)


if __name__ == "__main__":
    main()
