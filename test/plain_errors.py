"""The exception type a plain op's argument error (a ValueError in the ATen build) reaches Python as.

The stable-ABI plain library (QPLUGIN_STABLE_ABI=ON) throws std::invalid_argument for those: torch's
stable boundary turns it into ValueError under torch 2.13 and 2.14, and into RuntimeError from 2.15
on (docs/design/plain.md, "The plain library on torch's stable ABI"). The message is the same.
"""

import torch

from torch_qplugin import _build_info


def _release(version):
    return tuple(int(p) for p in version.split("+")[0].split(".")[:2])


STABLE_ABI = bool(getattr(_build_info, "STABLE_ABI", False))
VALUE_ERROR = RuntimeError if STABLE_ABI and _release(torch.__version__) >= (2, 15) else ValueError
