"""Which kernel path (scalar / avx2 / avxvnni / avx512) the ops run.

The best path the CPU supports is chosen at load time (avx512 before avxvnni before
avx2); the environment variable ``QPLUGIN_ISA`` caps it (the best path the CPU runs at
or below the one named, in the order of ``ISAS``), and :func:`kernel_isa` forces one
the CPU runs for a block (tests use it to run every path the CPU has). ``avxvnni`` is the AVX2 path with the int8 GEMM (linear, conv, transposed conv,
the RNN layers) on 256-bit VNNI: Intel Core 12th gen and later, Intel's E-core Xeons,
AMD Zen 5. A CPU may have avx512 without avxvnni (AMD Zen 4, Intel Ice Lake).
"""
import contextlib
from typing import Iterator, List

import torch

ISAS = ("scalar", "avx2", "avxvnni", "avx512")


def active_isa() -> str:
    return torch.ops.qplugin._active_isa()


def cpu_isa() -> str:
    return torch.ops.qplugin._cpu_isa()


def supported_isas() -> List[str]:
    """The paths this CPU runs, in ISAS order (scalar first)."""
    return list(torch.ops.qplugin._supported_isas())


def set_isa(isa: str) -> str:
    """Forces kernel path ``isa``; returns the previous one."""
    return torch.ops.qplugin._set_isa(isa)


@contextlib.contextmanager
def kernel_isa(isa: str) -> Iterator[None]:
    previous = set_isa(isa)
    try:
        yield
    finally:
        set_isa(previous)
