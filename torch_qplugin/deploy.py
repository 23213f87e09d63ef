"""Deployment of plain models (docs/deploy.md): torch.export, torch.compile and AOTInductor with a
dynamic batch, outputs byte for byte those of the eager model.

    ep = torch_qplugin.deploy.export(plain_model, (x,))             # ExportedProgram, qplugin ops only
    torch.export.save(ep, "model.pt2")                               # load: import torch_qplugin first
    fast = torch_qplugin.deploy.compile(plain_model, (x,))           # torch.compile of the export
    torch_qplugin.deploy.aoti_package(ep, "model_aoti.pt2")          # aoti_load_package elsewhere

Three torch settings are made here so that callers need none of them:

* Plain modules pass ``QTensor`` activations (a tensor subclass) from layer to layer.
  ``torch.export.export`` traces in pre-dispatch mode, whose proxy mode cannot run a subclass made
  inside the traced code, and dynamo (torch.compile, strict export) cannot build a QTensor with a
  Quantizer argument. ``export`` therefore traces non-strict below autograd (torch's inference-IR
  trace, ``pre_dispatch=False``): every QTensor op runs its ``__torch_dispatch__`` on the integers
  and the graph holds only the plain ops and aten views. ``compile`` compiles that graph.
* torch specializes a dynamic size that is 1 (its 0/1 rule) and AOTInductor compiles a backed size
  for >= 2: all three steps run in torch's size-oblivious mode, so batch 1 and batch 8 share one
  graph and one package.
* Only the batch dims are dynamic (``dynamic=True`` would also duck-size a channel dim of 1 to a
  batch of 1 and recompile).

Everything runs under ``torch.no_grad()`` (AOTInductor without it compiles a training graph).
"""
import torch

__all__ = ["export", "compile", "aoti_package", "batch_oblivious"]


def batch_oblivious():
    """Context: torch's size-oblivious mode for backed sizes (a dynamic batch traced at 8 is not
    assumed to be >= 2, so batch 1 needs no graph of its own)."""
    return torch.fx.experimental._config.patch(backed_size_oblivious=True)


def _batch_spec(args, batch_dim, max_batch):
    if not isinstance(args, tuple):
        raise TypeError(f"torch_qplugin.deploy: args should be a tuple of example inputs, got {type(args).__name__}")
    batch = torch.export.Dim("batch", min=1, max=max_batch)
    return tuple({batch_dim: batch} if torch.is_tensor(a) else None for a in args)


def export(model, args, *, batch_dim=0, max_batch=1024):
    """ExportedProgram of ``model`` called on the tuple ``args``, dim ``batch_dim`` of every tensor
    argument one dynamic batch in [1, max_batch]. Works for plain-module models (QTensor
    activations) and for code calling the plain ops directly."""
    from torch.export._trace import _export

    dynamic = _batch_spec(args, batch_dim, max_batch)
    with torch.no_grad(), batch_oblivious():
        return _export(model, args, dynamic_shapes=dynamic, strict=False, pre_dispatch=False)


def compile(model, args, *, batch_dim=0, max_batch=1024, **compile_kwargs):  # noqa: A001 - torch.compile's name
    """torch.compile(fullgraph=True) of ``export(model, args)``'s module: a callable taking what
    ``model`` takes, run under no_grad, compiled once for every batch size (at the first call).
    compile_kwargs go to torch.compile (backend, mode, options)."""
    gm = export(model, args, batch_dim=batch_dim, max_batch=max_batch).module()
    compiled = torch.compile(gm, fullgraph=True, **compile_kwargs)
    first = [True]

    def run(*call_args):
        with torch.no_grad():
            if not first[0]:
                return compiled(*call_args)
            # the first call compiles: batch dims dynamic, size-oblivious (its guards hold for
            # batch 1 too); later calls run the guards only (the config patch costs ~0.5 ms a call)
            with batch_oblivious():
                for a in call_args:
                    if torch.is_tensor(a):
                        torch._dynamo.mark_dynamic(a, batch_dim)
                out = compiled(*call_args)
            first[0] = False
            return out

    run.__wrapped__ = compiled
    return run


def aoti_package(ep, package_path, **inductor_configs):
    """torch._inductor.aoti_compile_and_package of ``ep`` (from ``export``) to ``package_path``
    (a .pt2 file), under no_grad and with batch 1 inside the compiled range. Load it with
    torch._inductor.aoti_load_package after ``import torch_qplugin`` (or, without Python,
    with libtorch_qplugin.so loaded: the package calls the qplugin ops by name)."""
    with torch.no_grad(), batch_oblivious():
        return torch._inductor.aoti_compile_and_package(ep, package_path=str(package_path),
                                                        inductor_configs=inductor_configs or None)
