"""Which kernel path (scalar / avx2 / avx512) the ops run.

The best path the CPU supports is chosen at load time; the environment variable
``QPLUGIN_ISA`` caps it, and :func:`kernel_isa` forces one for a block (tests use
it to run every path the CPU has).
"""
import contextlib
from typing import Iterator, List

import torch

ISAS = ("scalar", "avx2", "avx512")


def active_isa() -> str:
    return torch.ops.qplugin._active_isa()


def cpu_isa() -> str:
    return torch.ops.qplugin._cpu_isa()


def supported_isas() -> List[str]:
    best = ISAS.index(cpu_isa())
    return list(ISAS[: best + 1])


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
