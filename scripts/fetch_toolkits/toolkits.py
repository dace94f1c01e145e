"""Targets on the host: toolkit roots (X.Y), header sets (headers-X.Y) and the cuobjdump tool."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import debian
from common import (TARGET_DIR, TOOLS, begin_stage, cp, die, finish_stage, headers_root, is_fresh, move_into, ready,
                    rmtree, stamp_matches, stamp_text, toolkit_root)
from layout import add_dev_links, add_root_links, write_profile, write_version_json
from pins import CUOBJDUMP, HEADERS, TOOLKITS, DebianToolkit, PypiToolkit
from pypi import fetch_wheels, unpack_wheel, wheel_path

# ---------------------------------------------------------------------------------------------------------------------
# Toolkit roots
# ---------------------------------------------------------------------------------------------------------------------


def toolkit_stamp(release: str) -> str:
    return stamp_text(TOOLKITS[release].pin_line())


def toolkit_fresh(release: str) -> bool:
    return release in TOOLKITS and is_fresh(toolkit_root(release), toolkit_stamp(release))


def do_toolkit(release: str) -> None:
    tk = TOOLKITS.get(release)
    if tk is None:
        hint = ""
        if release in HEADERS:
            hint = f"; no nvcc driver of {release} is reachable, but headers-{release} gives its headers"
        die(f"no pinned toolkit for release '{release}' (known: {' '.join(TOOLKITS)}){hint}")
    dest = toolkit_root(release)
    if toolkit_fresh(release):
        ready(release, dest, " (cached)")
        return
    if isinstance(tk, PypiToolkit):
        build_pypi_toolkit(tk, dest)
    else:
        build_debian_toolkit(tk, dest)
    ready(release, dest)


def _check_root(stage: Path, what: str) -> None:
    if not (os.access(stage / "bin/nvcc", os.X_OK) and os.access(stage / "nvvm/bin/cicc", os.X_OK)
            and (stage / TARGET_DIR / "include/crt/host_config.h").is_file()):
        die(what)


def build_pypi_toolkit(tk: PypiToolkit, dest: Path) -> None:
    """13.x: everything from PyPI wheels."""
    wheels = tk.wheels()
    fetch_wheels([w for w, _ in wheels])
    stage = begin_stage(dest)
    for wheel, _ in wheels:
        unpack_wheel(wheel_path(wheel), stage)
    _check_root(stage, f"{tk.release}: the wheels did not give bin/nvcc, nvvm/bin/cicc and crt/host_config.h")
    add_dev_links(stage / TARGET_DIR / "lib", stage / "nvvm/lib64")
    add_root_links(stage)
    write_profile(stage, tk.release)
    write_version_json(stage / "version.json", "pypi", [str(w) for w, _ in wheels],
                       [("cuda", tk.cuda)] + [(key, w.version) for w, key in wheels])
    finish_stage(stage, dest, toolkit_stamp(tk.release))


# Debian spreads NVIDIA's bin/ over /usr/bin (these tools) and /usr/lib/nvidia-cuda-toolkit/bin (nvcc, cicc, crt/).
# /usr/bin/nvcc is Debian's shell wrapper, and the gcc/g++ scripts next to the real nvcc are Debian's compiler pinning:
# neither is NVIDIA's, both are left out.
DEBIAN_TOOLS = ("bin2c", "cudafe++", "fatbinary", "nvlink", "ptxas", "cuobjdump", "nvdisasm", "nvprune", "cu++filt",
                "__nvcc_device_query")


def build_debian_toolkit(tk: DebianToolkit, dest: Path) -> None:
    """11.8, 12.4, 12.5: nvcc from Debian, headers, libcudart.so.N and CCCL from PyPI, static libs from Debian's
    nvidia-cuda-dev."""
    debian.fetch_debs([(deb, debian.HOST) for deb in tk.debs()])
    fetch_wheels([tk.nvcc, tk.runtime, tk.cccl])
    static = debian.static_libs(tk.cuda_dev_deb)

    stage = begin_stage(dest)
    tmp = stage / ".deb"
    tmp.mkdir()
    toolkit_deb, nvvm_deb = tk.debs()
    debian.unpack_deb(toolkit_deb, debian.HOST, tmp / "tk")
    debian.unpack_deb(nvvm_deb, debian.HOST, tmp / "nvvm")
    for sub in ("bin", "nvvm/bin", "nvvm/lib64", "nvvm/include"):
        (stage / sub).mkdir(parents=True, exist_ok=True)
    usr = tmp / "tk/usr"
    move_into([usr / "bin" / t for t in DEBIAN_TOOLS if (usr / "bin" / t).is_file()], stage / "bin")
    nvidia = usr / "lib/nvidia-cuda-toolkit"
    move_into([nvidia / "bin/nvcc", nvidia / "bin/crt"], stage / "bin")
    move_into([nvidia / "bin/cicc"], stage / "nvvm/bin")
    (nvidia / "libdevice").rename(stage / "nvvm/libdevice")
    move_into([usr / "include/nvvm.h"], stage / "nvvm/include")
    move_into(sorted((tmp / "nvvm/usr/lib" / debian.HOST.triple).glob("libnvvm.so.*")), stage / "nvvm/lib64")
    rmtree(tmp)

    # Headers (cudart's, crt/ from the nvcc wheel, CCCL) and libcudart.so.N.
    unpack_wheel(wheel_path(tk.runtime), stage)
    unpack_wheel(wheel_path(tk.nvcc), stage, include_only=True)
    unpack_wheel(wheel_path(tk.cccl), stage)
    lib = stage / TARGET_DIR / "lib"
    (lib / "stubs").mkdir(parents=True, exist_ok=True)
    for a in sorted(static.glob("lib*.a")):
        cp(a, lib)
    if (static / "stubs/libcuda.so").is_file():
        cp(static / "stubs/libcuda.so", lib / "stubs")
    _check_root(stage, f"{tk.release}: incomplete root (bin/nvcc, nvvm/bin/cicc, crt/host_config.h)")
    add_dev_links(lib, stage / "nvvm/lib64")
    add_root_links(stage)
    write_profile(stage, tk.release)
    cccl = tk.cccl_wheel
    cccl = cccl[: cccl.rfind(".post")] if ".post" in cccl else cccl
    write_version_json(
        stage / "version.json", "debian",
        [f"nvidia-cuda-toolkit={tk.toolkit_deb}", f"libnvvm4={tk.toolkit_deb}", f"nvidia-cuda-dev={tk.cuda_dev_deb}",
         str(tk.nvcc), str(tk.runtime), str(tk.cccl)],
        [("cuda", tk.cuda), ("cuda_nvcc", tk.nvcc_wheel), ("libnvvm", tk.nvcc_wheel),
         ("cuda_cudart", tk.runtime_wheel), ("cuda_cccl", cccl)])
    finish_stage(stage, dest, toolkit_stamp(tk.release))


# ---------------------------------------------------------------------------------------------------------------------
# Header sets
# ---------------------------------------------------------------------------------------------------------------------


def headers_stamp(release: str) -> str:
    return stamp_text(HEADERS[release].pin_line())


def headers_fresh(release: str) -> bool:
    return release in HEADERS and is_fresh(headers_root(release), headers_stamp(release))


def do_headers(release: str) -> None:
    hs = HEADERS.get(release)
    if hs is None:
        die(f"no pinned headers for release '{release}' (known: {' '.join(HEADERS)})")
    dest = headers_root(release)
    if headers_fresh(release):
        ready(f"headers-{release}", dest, " (cached)")
        return
    fetch_wheels([hs.wheel])
    stage = begin_stage(dest)
    # Keep include/ and ptxas (its --help lists the real targets); libnvvm and libdevice are of no use without a
    # driver.
    unpacked = stage / ".unpacked"
    unpack_wheel(wheel_path(hs.wheel), unpacked)
    (unpacked / TARGET_DIR / "include").rename(stage / "include")
    if (unpacked / "bin/ptxas").is_file():
        (stage / "bin").mkdir()
        move_into([unpacked / "bin/ptxas"], stage / "bin")
    rmtree(unpacked)
    if not (stage / "include/crt/host_config.h").is_file():
        die(f"{hs.wheel} has no include/crt/host_config.h")
    write_version_json(stage / "version.json", "pypi", [str(hs.wheel)], [("cuda", hs.cuda), ("cuda_nvcc", hs.version)])
    finish_stage(stage, dest, headers_stamp(release))
    ready(f"headers-{release}", dest)


# ---------------------------------------------------------------------------------------------------------------------
# cuobjdump: $CACHE/tools/cuobjdump, for the toolkits that carry none
# ---------------------------------------------------------------------------------------------------------------------

CUOBJDUMP_STAMP = TOOLS / ".cuobjdump-stamp"


def cuobjdump_stamp() -> str:
    return stamp_text(f"cuobjdump {CUOBJDUMP.name} {CUOBJDUMP.version}")


def cuobjdump_fresh() -> bool:
    return stamp_matches(CUOBJDUMP_STAMP, cuobjdump_stamp())


def do_cuobjdump() -> None:
    tool = TOOLS / "cuobjdump"
    if os.access(tool, os.X_OK) and cuobjdump_fresh():
        ready("cuobjdump", tool, " (cached)")
        return
    fetch_wheels([CUOBJDUMP])
    TOOLS.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp.", dir=TOOLS))
    unpack_wheel(wheel_path(CUOBJDUMP), tmp)
    (tmp / "bin/cuobjdump").rename(tool)
    rmtree(tmp)
    CUOBJDUMP_STAMP.write_text(cuobjdump_stamp() + "\n")
    ready("cuobjdump", tool)
