"""`python -m torch_qplugin`: build info, CPU features and the kernel path per op family."""
import sys

import torch

import torch_qplugin
from torch_qplugin import _build_info, _isa

# Op families and the ISA paths their kernels have. A family whose kernels
# only have a scalar path runs scalar whatever the CPU.
FAMILIES = {
    "quantize / dequantize / int_repr": ("scalar", "avx2", "avx512"),
}

# Which family each op belongs to (for the coverage table in docs/ops.md).
_OP_FAMILY = {
    "quantize / dequantize / int_repr": (
        "quantize_per_tensor", "quantize_per_tensor_dynamic", "quantize_per_channel", "dequantize",
        "int_repr", "make_per_tensor_quantized_tensor", "make_per_channel_quantized_tensor"),
}


def family_of(op: str) -> str:
    for fam, ops in _OP_FAMILY.items():
        if op in ops:
            return fam
    return "other"


def main() -> int:
    print(f"torch_qplugin {torch_qplugin.__version__}")
    print(f"  built against torch {_build_info.TORCH_VERSION} ({_build_info.CXX_COMPILER}, {_build_info.BUILD_TYPE})")
    print(f"  running torch       {torch.__version__}")
    print(f"  library             {torch_qplugin._ops.library_path()}")
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
