"""Stub shared libraries for the CUDA sonames that an aarch64 torch wheel links, so its CPU parts load.

Why this exists: PyPI's torch for manylinux aarch64 is a CUDA build. libtorch_cpu.so,
libtorch_cuda.so, libtorch_python.so, libc10_cuda.so and libtorch_global_deps.so have DT_NEEDED
entries for libcudart.so.13, libcublas.so.13, libcudnn.so.9, libnccl.so.2, ... which PyPI ships as
separate nvidia-* wheels, and the package index of the machine that runs the aarch64 smoke test
(scripts/test_aarch64_smoke.sh, under qemu-user on x86) has no aarch64 builds of those. Without
them ``import torch`` fails in the dynamic loader. The stubs generated here satisfy the loader and
nothing else: every function returns a CUDA-style error code (100, cudaErrorNoDevice /
CUDA_ERROR_NO_DEVICE), so torch sees no GPU and runs on the CPU. They are test scaffolding for a
machine without GPUs, never something to ship.

What is generated, per missing soname (a DT_NEEDED entry of some library in --libdir that is
neither in --libdir nor in the sysroot, and looks like a CUDA / NVIDIA library):

* every symbol the libraries in --libdir import from it: the versioned ``UND`` entries of
  ``readelf --dyn-syms`` whose version ``readelf -V`` attributes to that file, and the unversioned
  ``UND`` entries that no present library defines, given to the missing soname whose name is the
  longest prefix of the symbol (``cusparseLt*`` -> libcusparseLt.so.0, ``nvshmem*`` ->
  libnvshmem_host.so.3, ``cu*`` -> libcuda.so.1); an unversioned symbol that matches none is listed and left out;
* functions return 100; the ``*GetErrorString`` / ``*GetErrorName`` / ``*GetStatusString`` family
  returns a pointer to a fixed message instead (callers print it), ``__cudaRegisterFatBinary`` a
  pointer to zeroed memory (callers hand it back to the other registration stubs);
* data (OBJECT / TLS) symbols are zeroed 4 KiB objects: a shared library's ``UND`` entries carry no
  size, and 4 KiB covers the CUDA libraries' exported data (handles, version words);
* a linker version script with a node for every version name the importers need from that file
  (``readelf -V``'s version needs), so the loader's version check passes; unversioned symbols get
  the file's first version node as their default version, or no version when the file has none.

Usage:
    python scripts/aarch64_cuda_stubs.py --libdir SITE/torch/lib --sysroot SYSROOT --out DIR \
        [--provider SYSROOT/usr/bin/python3.11] [--cc aarch64-linux-gnu-gcc] [--readelf ...]

then run the aarch64 Python with DIR on LD_LIBRARY_PATH (``qemu-aarch64 -E LD_LIBRARY_PATH=DIR``).
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

# DT_NEEDED sonames that may be stubbed; any other missing soname is an error (it has to be
# installed into the sysroot: a stub of, say, libz would break torch's CPU code).
CUDA_SONAME = re.compile(r"^lib(cu|nv|nccl)[A-Za-z0-9_]*\.so(\.\d+)*$")
ERROR_STRING = re.compile(r"(GetErrorString|GetErrorName|GetStatusString|GetStatusName|GetLastErrorString)$")
RETURN_CODE = 100  # cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE
DATA_SIZE = 4096
SYSROOT_LIBDIRS = ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib", "lib64")

# readelf --dyn-syms -W:  Num: Value Size Type Bind Vis Ndx Name[@VERSION (n)]
SYM_LINE = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)")


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


class Elf:
    """What one ELF file needs (sonames, versions per file) and imports / defines."""

    def __init__(self, path, readelf):
        self.path = path
        dyn = run([readelf, "-d", "-W", path])
        self.needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
        m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
        self.soname = m.group(1) if m else os.path.basename(path)
        # version needs: version name -> file
        self.version_file = {}
        cur = None
        for line in run([readelf, "-V", "-W", path]).splitlines():
            m = re.search(r"Version: \d+\s+File: (\S+)\s+Cnt:", line)
            if m:
                cur = m.group(1)
                continue
            m = re.search(r"Name: (\S+)\s+Flags: \S+\s+Version: \d+", line)
            if m and cur is not None:
                self.version_file[m.group(1)] = cur
            if "Version definition section" in line or "Version symbols section" in line:
                cur = None
        self.undefined = []  # (name, version or None, type, bind)
        self.defined = set()
        for line in run([readelf, "--dyn-syms", "-W", path]).splitlines():
            m = SYM_LINE.match(line)
            if not m:
                continue
            _size, typ, bind, ndx, name = m.groups()
            if not name:
                continue
            ver = None
            if "@" in name:
                name, _, ver = name.partition("@")
                ver = ver.lstrip("@").split(" ")[0]
            if ndx == "UND":
                self.undefined.append((name, ver, typ, bind))
            else:
                self.defined.add(name)


def find_in(dirs, soname):
    for d in dirs:
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return p
    return None


def symbol_prefix(soname):
    """libcusparseLt.so.0 -> cusparselt; libnvshmem_host.so.3 -> nvshmem; libcuda.so.1 (the
    driver API: cuInit, cuModuleLoad, ...) -> cu."""
    stem = soname[3:].split(".so")[0]
    return {"cuda": "cu"}.get(stem, re.sub(r"_host$", "", stem).lower())


def collect(libdir, sysroot, providers, readelf):
    """{missing soname: {"versions": [names], "symbols": {name: (version, kind)}}}, unmatched."""
    elfs = [
        Elf(os.path.join(libdir, f), readelf)
        for f in sorted(os.listdir(libdir))
        if os.path.isfile(os.path.join(libdir, f)) and is_elf(os.path.join(libdir, f))
    ]
    sys_dirs = [os.path.join(sysroot, d) for d in SYSROOT_LIBDIRS]
    present = {e.soname for e in elfs} | {os.path.basename(e.path) for e in elfs}
    defined = set()
    for e in elfs:
        defined |= e.defined
    # defined symbols of the sysroot libraries the wheel's libraries need, transitively
    seen, todo = set(), [n for e in elfs for n in e.needed]
    missing = set()
    while todo:
        so = todo.pop()
        if so in seen or so in present:
            continue
        seen.add(so)
        p = find_in(sys_dirs, so)
        if p is None:
            missing.add(so)
            continue
        e = Elf(p, readelf)
        defined |= e.defined
        todo.extend(e.needed)
    for p in providers:
        defined |= Elf(p, readelf).defined
    bad = sorted(so for so in missing if not CUDA_SONAME.match(so))
    if bad:
        sys.exit(
            f"aarch64_cuda_stubs: {', '.join(bad)} missing from the sysroot {sysroot} "
            "(not a CUDA library: install it, it is not stubbed)"
        )

    stubs = {so: {"versions": [], "symbols": {}} for so in sorted(missing)}
    unmatched = set()
    for e in elfs:
        e_missing = [so for so in e.needed if so in missing]
        for ver, f in e.version_file.items():
            if f in stubs and ver not in stubs[f]["versions"]:
                stubs[f]["versions"].append(ver)
        for name, ver, typ, bind in e.undefined:
            kind = "data" if typ in ("OBJECT", "TLS") else "func"
            if typ == "TLS":
                kind = "tls"
            if ver is not None:
                f = e.version_file.get(ver)
                if f in stubs:
                    stubs[f]["symbols"].setdefault(name, (ver, kind))
                continue
            if name in defined or bind == "WEAK" or not e_missing:
                continue
            cands = [so for so in e_missing if name.lower().startswith(symbol_prefix(so))]
            if not cands:
                unmatched.add((name, os.path.basename(e.path)))
                continue
            so = max(cands, key=lambda s: len(symbol_prefix(s)))
            stubs[so]["symbols"].setdefault(name, (None, kind))
    return stubs, sorted(unmatched)


def c_source(soname, symbols):
    out = [
        f"/* Generated by scripts/aarch64_cuda_stubs.py: loader stub for {soname}; no device. */",
        "#include <stddef.h>",
        f'static const char stub_message[] = "{soname} is a stub: no CUDA device on this machine";',
        "static void *stub_fatbin[64];",
        "",
    ]
    for i, (name, (_ver, kind)) in enumerate(sorted(symbols.items())):
        label = f'__asm__("{name}")'
        if kind == "data":
            out.append(
                f"__attribute__((visibility(\"default\"), aligned(64))) "
                f"unsigned char stub_d{i}[{DATA_SIZE}] {label} = {{0}};"
            )
        elif kind == "tls":
            out.append(
                f"__attribute__((visibility(\"default\"), aligned(64))) "
                f"__thread unsigned char stub_t{i}[{DATA_SIZE}] {label} = {{0}};"
            )
        elif ERROR_STRING.search(name):
            out.append(f"const char *stub_f{i}(void) {label};")
            out.append(f"const char *stub_f{i}(void) {{ return stub_message; }}")
        elif name == "__cudaRegisterFatBinary":
            out.append(f"void **stub_f{i}(void) {label};")
            out.append(f"void **stub_f{i}(void) {{ return stub_fatbin; }}")
        else:
            out.append(f"long stub_f{i}(void) {label};")
            out.append(f"long stub_f{i}(void) {{ return {RETURN_CODE}; }}")
    return "\n".join(out) + "\n"


def version_script(versions, symbols):
    """One node per version name; unversioned symbols go to the first node (or none)."""
    if not versions:
        return None
    by_ver = defaultdict(list)
    for name, (ver, _kind) in symbols.items():
        by_ver[ver if ver in versions else versions[0]].append(name)
    nodes = []
    for v in versions:
        body = "".join(f"    {n};\n" for n in sorted(by_ver.get(v, [])))
        nodes.append(f"{v} {{\n  global:\n{body}" + ("  local: *;\n" if v == versions[0] else "") + "};\n")
    return "".join(nodes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libdir", required=True, help="the wheel's torch/lib")
    ap.add_argument("--sysroot", required=True, help="aarch64 sysroot (glibc, libstdc++, python)")
    ap.add_argument("--out", required=True, help="directory for the stub libraries")
    ap.add_argument(
        "--provider",
        action="append",
        default=[],
        help="another ELF whose exports count as present (the python executable)",
    )
    ap.add_argument("--cc", default="aarch64-linux-gnu-gcc")
    ap.add_argument("--readelf", default="aarch64-linux-gnu-readelf")
    args = ap.parse_args()

    stubs, unmatched = collect(args.libdir, args.sysroot, args.provider, args.readelf)
    os.makedirs(args.out, exist_ok=True)
    src_dir = os.path.join(args.out, "src")
    os.makedirs(src_dir, exist_ok=True)
    for soname, s in stubs.items():
        base = os.path.join(src_dir, soname.split(".so")[0])
        with open(base + ".c", "w") as f:
            f.write(c_source(soname, s["symbols"]))
        cmd = [
            args.cc,
            "-shared",
            "-fPIC",
            "-O1",
            "-nostdlib",
            "-o",
            os.path.join(args.out, soname),
            base + ".c",
            f"-Wl,-soname,{soname}",
        ]
        vs = version_script(s["versions"], s["symbols"])
        if vs is not None:
            with open(base + ".map", "w") as f:
                f.write(vs)
            cmd.append(f"-Wl,--version-script,{base}.map")
        subprocess.run(cmd, check=True)
        n_data = sum(1 for _v, k in s["symbols"].values() if k != "func")
        print(
            f"  {soname:<24} {len(s['symbols']):5d} symbols ({n_data} data), "
            f"versions: {', '.join(s['versions']) or '-'}"
        )
    if unmatched:
        print(f"  {len(unmatched)} unversioned undefined symbols match no missing library; not stubbed:")
        for name, lib in unmatched[:20]:
            print(f"    {name} ({lib})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
