"""The parts of NVIDIA's toolkit layout no package provides: development links, the root's directory links,
bin/nvcc.profile, version.json; and the check that a library is code for the CPU it claims."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from common import TARGET_DIR, die
from pins import Arch


def add_dev_links(*dirs: Path) -> None:
    """Shared libraries in the wheels and debs exist only under their soname (libcudart.so.13, libnvvm.so.4): add the
    unversioned development links the linker needs for -lcudart and that a real installation has. With several
    versioned names (libcudart.so.12, libcudart.so.12.4.127) the link names the first in sorted order."""
    for directory in dirs:
        if not directory.is_dir():
            continue
        for f in sorted(directory.glob("lib*.so.*")):
            if not f.exists():
                continue  # a dangling link
            base = directory / (f.name.split(".so.", 1)[0] + ".so")
            if not os.path.lexists(base):
                os.symlink(f.name, base)


def add_root_links(root: Path) -> None:
    """The directory links of a standard installation: include, lib64 (and lib) point into targets/x86_64-linux.
    nvcc itself goes through $(TOP)/$(_TARGET_DIR_), but CMake and other tools look at include/ and lib64/."""
    for name, to in (("include", "include"), ("lib64", "lib"), ("lib", "lib")):
        link = root / name
        if os.path.lexists(link):
            link.unlink()
        os.symlink(f"{TARGET_DIR}/{to}", link)


# bin/nvcc.profile in NVIDIA's upstream form, per release family. nvcc reads it from dirname(argv[0]) and predefines
# _HERE_, _SPACE_, _TARGET_DIR_ (targets/x86_64-linux when that directory exists, else empty), _TARGET_SIZE_ (empty, or
# 64) and _NVVM_BRANCH_ (nvvm). Written here rather than taken from a package: Debian's is absolute
# (/usr/lib/nvidia-cuda-toolkit) and the 13.5 wheel's hard-codes $(TOP)/include and $(TOP)/lib, which silently ignores
# --target-directory.
PROFILES = {
    # CUDA 11.x to 12.4
    "11.8-12.4": """
TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/$(_NVVM_BRANCH_)/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/$(_NVVM_BRANCH_)/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
""",
    # CICC_PATH appears in 12.5
    "12.5-12.9": """
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
CICC_NEXT_PATH   = $(TOP)/nvvm-next/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
""",
    # 13.x: CCCL moved to include/cccl, found through -isystem
    "13": """
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)
SYSTEM_INCLUDES +=  "-isystem" "$(TOP)/$(_TARGET_DIR_)/include/cccl" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
""",
}


def profile_family(release: str) -> str:
    """The PROFILES key of a release."""
    major, minor = (int(x) for x in release.split(".")[:2])
    if major >= 13:
        return "13"
    if major == 12 and minor >= 5:
        return "12.5-12.9"
    return "11.8-12.4"


def write_profile(root: Path, release: str) -> None:
    (root / "bin/nvcc.profile").write_text(PROFILES[profile_family(release)])


# NVIDIA's names of the components version.json lists.
COMPONENT_NAMES = {
    "cuda": "CUDA SDK", "cuda_nvcc": "CUDA NVCC", "cuda_crt": "CUDA CRT",
    "cuda_cudart": "CUDA Runtime (cudart)", "cuda_cccl": "CUDA C++ Core Compute Libraries",
    "libnvvm": "NVVM", "cuda_cuobjdump": "CuObjDump", "cuda_culibos": "CUDA Static Library: culibos",
}


def write_version_json(path: Path, source: str, packages: list[str], components: list[tuple[str, str]]) -> None:
    """A version.json shaped like NVIDIA's ({"cuda": {"name": ..., "version": ...}, "cuda_nvcc": ...}), plus an
    "nvcc_wrapper" entry naming the source and the packages the root was assembled from."""
    doc = {key: {"name": COMPONENT_NAMES.get(key, key), "version": ver} for key, ver in components}
    doc["nvcc_wrapper"] = {"source": source, "packages": packages}
    with open(path, "w") as f:
        json.dump(doc, f, indent=3, sort_keys=True)
        f.write("\n")


def check_elf_machine(arch: Arch, *files: Path) -> None:
    """Every file (an ELF file, or an ar archive of them: its first member is read) is code for ARCH."""
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read(1 << 20)
        at = data.find(b"\x7fELF")
        if at < 0:
            die(f"{f}: no ELF object found")
        endian = "<" if data[at + 5] == 1 else ">"
        machine = struct.unpack(endian + "H", data[at + 18:at + 20])[0]
        if machine != arch.elf_machine:
            die(f"{f}: ELF machine {machine}, expected {arch.elf_machine} ({arch.debian})")
