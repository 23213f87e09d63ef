"""Fresh-process side of the deployment tests: loads saved artifacts as a deployment would and
runs them (python deploy_child.py <jobs.pt> <results.pt>; see deploy_lib.run_fresh).

Each job is (kind, artifact, inputs): kind "export" loads a torch.export.save file with
torch.export.load, kind "aoti" an AOTInductor package with torch._inductor.aoti_load_package.
The qplugin ops are registered first, either by `import torch_qplugin` or, for "library", by
dlopen-ing the op library alone (what a C++ program would link), without the Python package.
"""

import ctypes
import sys

import torch


def main(spec_path, result_path):
    spec = torch.load(spec_path)
    if spec["load"] == "import":
        import torch_qplugin

        isa = torch_qplugin.active_isa()
    else:
        ctypes.CDLL(spec["library"], mode=ctypes.RTLD_GLOBAL)
        assert "torch_qplugin" not in sys.modules
        isa = torch.ops.qplugin._active_isa()
    results = []
    for kind, artifact, inputs_path in spec["jobs"]:
        inputs = torch.load(inputs_path)
        if kind == "export":
            run = torch.export.load(artifact).module()
        elif kind == "aoti":
            run = torch._inductor.aoti_load_package(artifact)
        else:
            raise ValueError(f"deploy_child: kind should be export or aoti, got {kind}")
        outs, ops = {}, set()
        with torch.no_grad():
            for batch, args in inputs.items():
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    outs[batch] = run(*args)
                ops |= {e.name for e in prof.events()}
        results.append({"outputs": outs, "ops": sorted(ops)})
    torch.save({"results": results, "isa": isa, "imported": "torch_qplugin" in sys.modules}, result_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
