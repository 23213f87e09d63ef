"""Shared pytest fixtures: kernel-path forcing, seeding, tensor assertions."""

import random

import numpy as np
import pytest
import torch

import torch_qplugin
from torch_qplugin import _isa

SUPPORTED_ISAS = _isa.supported_isas()


@pytest.fixture(params=SUPPORTED_ISAS)
def isa(request):
    """Runs the test once per kernel path this CPU supports (scalar reference first)."""
    with torch_qplugin.kernel_isa(request.param):
        yield request.param


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    yield


def pytest_report_header(config):
    return (
        f"torch {torch.__version__}; qplugin kernel paths tested: {', '.join(SUPPORTED_ISAS)} "
        f"(CPU best: {_isa.cpu_isa()}); threads {torch.get_num_threads()}"
    )
