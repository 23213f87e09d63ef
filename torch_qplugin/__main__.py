"""`python -m torch_qplugin`: build info, CPU features and the kernel path per op family."""

import sys

import torch

import torch_qplugin
from torch_qplugin import _build_info, _isa

# Op families and the ISA paths their kernels have. Every family is built for the base paths
# (scalar, avx2, avx512 on x86-64; scalar, neon on aarch64); the int8 GEMM families also for
# the dot-product paths (avxvnni; dotprod, i8mm), where the other families run their base
# path's kernels. linear / conv use AVX-512 VNNI dot products on the avx512 path.
ALL_PATHS = _isa.BASE_ISAS
GEMM_PATHS = _isa.ISAS
# Per architecture, for docs/ops.md (written on either): the base and the GEMM families' paths,
# and the families whose neon build runs the scalar loop (no NEON vector code yet).
ARCH_PATHS = {
    "x86-64": (("scalar", "avx2", "avx512"), ("scalar", "avx2", "avxvnni", "avx512")),
    "aarch64": (("scalar", "neon"), ("scalar", "neon", "dotprod", "i8mm")),
}
NEON_SCALAR_LOOP = {"embeddings (8-bit / 4-bit rows)"}
FAMILIES = {
    "quantize / dequantize / int_repr": ALL_PATHS,
    "add / mul / matmul": ALL_PATHS,
    "cat": ALL_PATHS,
    "comparators": ALL_PATHS,
    "sort / topk / reductions": ALL_PATHS,
    "activations": ALL_PATHS,
    "normalization / softmax": ALL_PATHS,
    "pooling / upsample": ALL_PATHS,
    "linear (static, dynamic)": GEMM_PATHS,
    "fp16 dynamic linear": ALL_PATHS,
    "dynamic LSTM / GRU layer": GEMM_PATHS,
    "embeddings (8-bit / 4-bit rows)": ALL_PATHS,
    "conv 1d/2d/3d, depthwise, fused add": GEMM_PATHS,
    "transposed conv 1d/2d/3d (GEMM + col2im)": GEMM_PATHS,
}

# Which family each op belongs to (for the coverage table in docs/ops.md).
_OP_FAMILY = {
    "quantize / dequantize / int_repr": (
        "quantize_per_tensor",
        "quantize_per_tensor_dynamic",
        "quantize_per_channel",
        "dequantize",
        "int_repr",
        "make_per_tensor_quantized_tensor",
        "make_per_channel_quantized_tensor",
    ),
    "add / mul / matmul": (
        "add",
        "add_relu",
        "add_scalar",
        "add_scalar_relu",
        "mul",
        "mul_relu",
        "mul_scalar",
        "matmul",
    ),
    "cat": ("cat", "cat_relu"),
    "comparators": ("eq", "ne", "ge", "le", "gt", "lt", "equal"),
    "sort / topk / reductions": ("sort", "argsort", "topk", "max", "min", "argmax", "argmin", "mean"),
    "activations": (
        "relu",
        "relu6",
        "leaky_relu",
        "hardswish",
        "hardsigmoid",
        "sigmoid",
        "elu",
        "clamp",
        "celu",
        "threshold",
    ),
    "normalization / softmax": (
        "softmax",
        "layer_norm",
        "group_norm",
        "instance_norm",
        "batch_norm2d",
        "batch_norm3d",
        "batch_norm2d_relu",
        "batch_norm3d_relu",
        "prelu",
    ),
    "pooling / upsample": (
        "max_pool2d",
        "avg_pool2d",
        "adaptive_avg_pool2d",
        "upsample_nearest2d",
        "upsample_bilinear2d",
        "avg_pool3d",
        "adaptive_avg_pool3d",
    ),
    "linear (static, dynamic)": (
        "linear_prepack",
        "linear_unpack",
        "linear",
        "linear_relu",
        "linear_dynamic",
        "linear_relu_dynamic",
    ),
    "fp16 dynamic linear": (
        "linear_prepack_fp16",
        "linear_unpack_fp16",
        "linear_dynamic_fp16",
        "linear_relu_dynamic_fp16",
    ),
    "dynamic LSTM / GRU layer": ("_rnn_layer_dynamic",),
    "embeddings (8-bit / 4-bit rows)": (
        "embedding_bag_prepack",
        "embedding_bag_unpack",
        "embedding_byte",
        "embedding_4bit",
        "embedding_bag_byte",
        "embedding_bag_4bit",
        "embedding_bag_byte_prepack",
        "embedding_bag_byte_unpack",
        "embedding_bag_4bit_prepack",
        "embedding_bag_4bit_unpack",
        "embedding_bag_byte_rowwise_offsets",
        "embedding_bag_4bit_rowwise_offsets",
    ),
    "conv 1d/2d/3d, depthwise, fused add": (
        "conv1d_prepack",
        "conv2d_prepack",
        "conv3d_prepack",
        "conv1d_unpack",
        "conv2d_unpack",
        "conv3d_unpack",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv1d_relu",
        "conv2d_relu",
        "conv3d_relu",
        "conv2d_add",
        "conv2d_add_relu",
    ),
    "transposed conv 1d/2d/3d (GEMM + col2im)": (
        "conv_transpose1d_prepack",
        "conv_transpose2d_prepack",
        "conv_transpose3d_prepack",
        "conv_transpose1d_unpack",
        "conv_transpose2d_unpack",
        "conv_transpose3d_unpack",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ),
}


def family_paths_doc(fam: str) -> str:
    """The paths of family ``fam`` on both architectures, for docs/ops.md."""
    gemm = FAMILIES.get(fam) is GEMM_PATHS and GEMM_PATHS != ALL_PATHS
    parts = []
    for arch, (base, dot) in ARCH_PATHS.items():
        paths = ", ".join(dot if gemm else base)
        if arch == "aarch64" and fam in NEON_SCALAR_LOOP:
            paths += " (neon: the scalar loop)"
        parts.append(f"{arch}: {paths}")
    return "; ".join(parts)


def family_of(op: str) -> str:
    """The family of an op; a plain-tier op (plain_<op>) belongs to the family of <op>."""
    if op.startswith("plain_"):
        op = op[len("plain_") :]
        op = {
            "quantize_per_tensor": "quantize_per_tensor",
            "dequantize_per_tensor": "dequantize",
            "dequantize_per_channel": "dequantize",
            "add_scalar_qparams": "add_scalar",
            "mul_scalar_qparams": "mul_scalar",
            "rnn_layer_dynamic": "_rnn_layer_dynamic",
            "conv_prepack": "conv2d_prepack",
            "conv_transpose_prepack": "conv_transpose2d_prepack",
        }.get(op, op)
    for fam, ops in _OP_FAMILY.items():
        if op in ops:
            return fam
    return "other"


def main() -> int:
    print(f"torch_qplugin {torch_qplugin.__version__}")
    print(
        f"  built against torch {_build_info.TORCH_VERSION} ({_build_info.CXX_COMPILER}, "
        f"{_build_info.CXX_STANDARD}, {_build_info.BUILD_TYPE}"
        f"{', stable ABI: loads under that torch and later' if getattr(_build_info, 'STABLE_ABI', False) else ''})"
    )
    print(f"  running torch       {torch.__version__}")
    print(f"  plain library       {torch_qplugin._ops.plain_library_path()}")
    quantized = torch_qplugin._ops.library_path() if torch_qplugin._ops.has_quantized() else None
    print(f"  quantized library   {quantized or '(not built: QPLUGIN_PLAIN_ONLY=ON)'}")
    print(f"  compiled ISA paths  {', '.join(_build_info.COMPILED_ISAS)}")
    feats = torch.ops.qplugin._cpu_features()
    print(f"  CPU features        {' '.join(feats) if feats else '(none of interest)'}")
    print(f"  best CPU path       {_isa.cpu_isa()}")
    print(f"  active path         {_isa.active_isa()}  (QPLUGIN_ISA caps it)")
    print(f"  threads             {torch.get_num_threads()}")
    print("kernel path per op family:")
    active = _isa.ISAS.index(_isa.active_isa())
    for fam, paths in FAMILIES.items():
        use = max((p for p in paths if _isa.ISAS.index(p) <= active), key=_isa.ISAS.index)
        print(f"  {fam:<40} {use}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
