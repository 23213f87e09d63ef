"""Build torch_qplugin: setup.py drives CMake (CMakeExtension + build_ext).

    pip install --no-build-isolation .        # regular install
    pip install --no-build-isolation -e .     # editable: library built into ./torch_qplugin/lib

Environment knobs: QPLUGIN_BUILD_DIR (CMake build dir, default build/cmake-<config>-torch<version>),
QPLUGIN_BUILD_TYPE (Release | Debug | RelWithDebInfo), MAX_JOBS (parallel compile jobs).

The package ships two libraries in torch_qplugin/lib: libtorch_qplugin_plain.so (the plain tier)
and libtorch_qplugin.so (the quantized tier, which links the plain one).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# The torch releases the suite passes on (CPU and CUDA wheels alike). A range, never a pin:
# installing torch_qplugin must not change the user's torch. The library is built against the
# torch installed at build time (--no-build-isolation) and records it (_build_info.py).
TORCH_REQUIREMENT = "torch>=2.13,<2.16"
PLAIN_LIB = "libtorch_qplugin_plain.so"


class CMakeExtension(Extension):
    def __init__(self, name: str):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def run(self):
        # setuptools clears self.inplace while building and copies into the source tree
        # afterwards; remember it so the generated files land there too.
        self._into_source = bool(self.inplace or getattr(self, "editable_mode", False))
        if self._into_source:
            (ROOT / "torch_qplugin" / "lib").mkdir(exist_ok=True)
        super().run()

    def get_ext_filename(self, ext_name):
        # A shared library without Python module init: lib/libtorch_qplugin.so (and, beside it,
        # lib/libtorch_qplugin_plain.so, which CMake builds with it)
        parts = ext_name.split(".")
        return os.path.join(*parts[:-1], "lib" + parts[-1] + ".so")

    def build_extension(self, ext):
        import torch

        lib_path = Path(self.get_ext_fullpath(ext.name)).resolve()
        # CMake's output package: the source package itself for editable / in-place builds (so a
        # later `cmake --build` of the same build dir updates what Python imports), else the
        # build tree's copy that setuptools packs.
        src_pkg = ROOT / "torch_qplugin"
        into_source = getattr(self, "_into_source", False)
        pkg_dir = src_pkg if into_source else lib_path.parent.parent
        build_type = os.environ.get("QPLUGIN_BUILD_TYPE", "Release")
        # One build directory per configuration and torch release: switching torch never reuses
        # objects compiled against another torch's headers.
        torch_mmp = torch.__version__.split("+")[0]
        default_dir = ROOT / "build" / f"cmake-{build_type.lower()}-torch{torch_mmp}"
        build_dir = Path(os.environ.get("QPLUGIN_BUILD_DIR", default_dir))
        build_dir.mkdir(parents=True, exist_ok=True)
        cfg = [
            f"-DCMAKE_BUILD_TYPE={build_type}",
            f"-DQPLUGIN_TORCH_DIR={Path(torch.__file__).parent}",
            f"-DQPLUGIN_PY_OUT={pkg_dir}",
            f"-DQPLUGIN_TORCH_VERSION={torch.__version__}",
            f"-DPython_EXECUTABLE={sys.executable}",
            # both libraries, even where the build dir was configured plain-only before (the plain
            # library alone is a CMake build: -DQPLUGIN_PLAIN_ONLY=ON or, on torch's stable ABI,
            # -DQPLUGIN_STABLE_ABI=ON; docs/design/plain.md)
            "-DQPLUGIN_PLAIN_ONLY=OFF",
            "-DQPLUGIN_STABLE_ABI=OFF",
        ]
        if os.environ.get("QPLUGIN_KERNEL_TESTS") == "1":  # the torch-free kernel testers too
            cfg.append("-DQPLUGIN_KERNEL_TESTS=ON")
        if shutil.which("ninja") and not (build_dir / "Makefile").exists():
            cfg.append("-GNinja")
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir)] + cfg)
        jobs = os.environ.get("MAX_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build_dir), "--parallel", jobs])
        built = pkg_dir / "lib" / lib_path.name
        for path in (pkg_dir / "lib" / PLAIN_LIB, built):
            if not path.exists():
                raise RuntimeError(f"CMake build did not produce {path}")
        if into_source and built != lib_path:
            # setuptools copies the extension's library from its build tree into the source
            # package afterwards: give it the library CMake wrote there.
            lib_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(built, lib_path)


setup(
    name="torch_qplugin",
    version="0.1.0",
    description="int8 quantized CPU kernels for PyTorch, registered as the qplugin:: op library",
    # Every subpackage (nn, nn.quantized, quantization, ...): a regular install or a wheel
    # must hold what an editable install sees (test/test_install.py compares them).
    packages=find_packages(include=["torch_qplugin", "torch_qplugin.*"]),
    package_data={"torch_qplugin": ["lib/*.so", "_build_info.py"]},
    ext_modules=[CMakeExtension("torch_qplugin.lib.torch_qplugin")],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=[TORCH_REQUIREMENT],
    extras_require={"progress": ["tqdm"], "test": ["pytest", "expecttest", "hypothesis"]},
    python_requires=">=3.9",
    zip_safe=False,
)
