"""torch.export of a plain model with its batch dim dynamic: the first step of every deployment
route (torch_qplugin.deploy re-exports these; torch_qplugin._onnx builds on them)."""

import torch

__all__ = ["export", "batch_oblivious"]


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
