"""Deployment of plain models (docs/deploy.md): thin conveniences over torch's own calls, which
work on a plain model directly (QTensor activations included, qtensor.py):

    torch.export.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=1024)},))
    # ^ size-oblivious for an AOTI package that takes batch 1
    torch.compile(model, fullgraph=True)      # batch dim marked dynamic, first call size-oblivious
    torch._inductor.aoti_compile_and_package(ep, package_path=...)   # size-oblivious

What these helpers add, and nothing else:

* ``export``: the ``dynamic_shapes`` spec (dim ``batch_dim`` of every tensor argument one batch
  in [1, max_batch]), ``torch.no_grad()`` and ``batch_oblivious()``: the exported program runs at
  batch 1 either way, but an AOTInductor package compiled from a program exported without it
  takes batch >= 2 only ("dim value is too small ... expected it to be >= 2").
* ``compile``: ``torch._dynamo.mark_dynamic`` on the batch dims and, for the first call (the one
  that compiles), ``batch_oblivious()``: torch specializes a dynamic size that is 1 (its 0/1 rule),
  so without it batch 1 and batch 8 compile apart. Only the batch dims are dynamic
  (``dynamic=True`` duck-sizes a channel dim of 1 with a batch of 1 and recompiles at batch 8).
* ``aoti_package``: ``torch.no_grad()`` (without it AOTInductor compiles a training graph) and
  ``batch_oblivious()`` (inductor's lowering may otherwise assume the batch >= 2, same message).
"""
import torch

__all__ = ["export", "compile", "aoti_package", "batch_oblivious"]


def batch_oblivious():
    """Context: torch's size-oblivious mode for backed sizes (a dynamic batch traced at 8 is not
    assumed to be >= 2, so batch 1 needs no graph of its own)."""
    return torch.fx.experimental._config.patch(backed_size_oblivious=True)


def _tensor_args(args):
    if not isinstance(args, tuple):
        raise TypeError(f"torch_qplugin.deploy: args should be a tuple of example inputs, got {type(args).__name__}")
    return [a for a in args if torch.is_tensor(a)]


def export(model, args, *, batch_dim=0, max_batch=1024):
    """torch.export.export(model, args) under no_grad and size-oblivious, dim ``batch_dim`` of
    every tensor argument one dynamic batch in [1, max_batch]."""
    _tensor_args(args)
    batch = torch.export.Dim("batch", min=1, max=max_batch)
    dynamic = tuple({batch_dim: batch} if torch.is_tensor(a) else None for a in args)
    with torch.no_grad(), batch_oblivious():
        return torch.export.export(model, args, dynamic_shapes=dynamic)


def compile(model, *, batch_dim=0, **compile_kwargs):  # noqa: A001 - torch.compile's name
    """torch.compile(model, fullgraph=True, **compile_kwargs) as a callable run under no_grad whose
    first call (the one that compiles) marks dim ``batch_dim`` of its tensor arguments dynamic and
    compiles size-oblivious: one graph for every batch size."""
    compiled = torch.compile(model, fullgraph=True, **compile_kwargs)
    first = [True]

    def run(*args):
        with torch.no_grad():
            if not first[0]:
                return compiled(*args)
            for a in _tensor_args(args):
                torch._dynamo.mark_dynamic(a, batch_dim)
            with batch_oblivious():
                out = compiled(*args)
            first[0] = False
            return out

    run.__wrapped__ = compiled
    return run


def aoti_package(ep, package_path, **inductor_configs):
    """torch._inductor.aoti_compile_and_package(ep, package_path=package_path) under no_grad and
    size-oblivious (batch 1 in the package's range; ``ep`` from ``export``, or exported
    size-oblivious too). Load it with
    torch._inductor.aoti_load_package after ``import torch_qplugin`` (or, without Python, with
    libtorch_qplugin.so loaded: the package calls the qplugin ops by name)."""
    with torch.no_grad(), batch_oblivious():
        return torch._inductor.aoti_compile_and_package(ep, package_path=str(package_path),
                                                        inductor_configs=inductor_configs or None)
