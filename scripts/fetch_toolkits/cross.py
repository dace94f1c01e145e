"""Targets for another CPU: the cross target files of CROSS_TARGETS, into $CACHE/toolkits/X.Y/targets/<dir> and
$CACHE/target-roots/<name>."""

from __future__ import annotations

import json

import debian
from common import (TARGET_DIR, begin_stage, cp, cp_a, die, finish_stage, is_fresh, ready, rmtree, stamp_text,
                    target_root, toolkit_root)
from layout import add_dev_links, check_elf_machine
from pins import CROSS, TOOLKITS, CrossTarget
from pypi import fetch_wheels, unpack_wheel, wheel_path
from toolkits import do_toolkit, toolkit_fresh

# What each cross target must end up with.
REQUIRED = ("include/crt/host_config.h", "include/cuda_runtime.h", "lib/libcudart.so", "lib/libcudart_static.a",
            "lib/libcudadevrt.a", "lib/libculibos.a")

JETSON_NOTE = """NOT NVIDIA's Jetson (L4T) target files.

No Jetson (aarch64-linux, L4T) CUDA files are reachable from the machines
nvcc-wrapper is developed on. This directory holds the sbsa-linux (Arm server)
files of CUDA {release}, laid out under the Jetson directory name (aarch64-linux)
by nvcc-wrapper's scripts/fetch-toolkits.sh (target {name}), so that tests can
exercise --target-directory aarch64-linux and Jetson-shaped layouts. Binaries
built against it are aarch64 Linux binaries with real device code; they have
not been run on a Jetson, and NVIDIA's L4T cudart may differ.
Packages: {packages}
"""


def cross_stamp(t: CrossTarget) -> str:
    """A cross target's stamp covers its own pin line and its toolkit's (its include/ is a copy of that toolkit's)."""
    return stamp_text(t.pin_line(), "| toolkit " + TOOLKITS[t.release].pin_line())


def installed_dir(t: CrossTarget):
    return toolkit_root(t.release) / "targets" / t.target_dir


def cross_fresh(name: str) -> bool:
    """Its toolkit and both copies stamped and current."""
    t = CROSS.get(name)
    if t is None or not toolkit_fresh(t.release):
        return False
    stamp = cross_stamp(t)
    return is_fresh(installed_dir(t), stamp) and is_fresh(target_root(name), stamp)


def do_cross(name: str) -> None:
    t = CROSS.get(name)
    if t is None:
        die(f"no pinned cross target '{name}' (known: {' '.join(CROSS)})")
    do_toolkit(t.release)
    root = toolkit_root(t.release)
    tdest, sdest = installed_dir(t), target_root(name)
    stamp = cross_stamp(t)
    if is_fresh(tdest, stamp) and is_fresh(sdest, stamp):
        ready(name, tdest, f" and {sdest} (cached)")
        return

    arch = t.arch
    if t.wheels:
        fetch_wheels(t.wheels, arch.cpu)
    if t.cudart_deb is not None:
        debian.fetch_debs([(t.cudart_deb, arch)])
    static = debian.static_libs(t.cuda_dev_deb, arch) if t.cuda_dev_deb is not None else None

    # The standalone copy is assembled first, then hard-linked (copied where links fail) into the toolkit root.
    stage = begin_stage(sdest)
    (stage / "include").mkdir()
    (stage / "lib").mkdir()
    cp_a(root / TARGET_DIR / "include", stage / "include")
    if (root / TARGET_DIR / "lib/cmake").is_dir():
        cp_a(root / TARGET_DIR / "lib/cmake", stage / "lib/cmake")
    packages = []
    for wheel in t.wheels:
        unpack_wheel(wheel_path(wheel, arch.cpu), stage, tdir=".")
        packages.append(f"{wheel}({arch.cpu})")
    if t.cudart_deb is not None:
        unpacked = stage / ".deb"
        debian.unpack_deb(t.cudart_deb, arch, unpacked)
        for f in sorted((unpacked / "usr/lib" / arch.triple).glob("libcudart.so.*")):
            cp_a(f, stage / "lib" / f.name)
        rmtree(unpacked)
        packages.append(f"{t.cudart_deb.name}:{arch.debian}={t.cudart_deb.version}")
    if static is not None:
        for a in sorted(static.glob("lib*.a")):
            cp(a, stage / "lib")
        if (static / "stubs/libcuda.so").is_file():
            (stage / "lib/stubs").mkdir(exist_ok=True)
            cp(static / "stubs/libcuda.so", stage / "lib/stubs")
        packages.append(f"nvidia-cuda-dev:{arch.debian}={t.cuda_dev_deb}(static-libs)")
    add_dev_links(stage / "lib")
    for f in REQUIRED:
        if not (stage / f).exists():
            die(f"{name}: the packages gave no {f}")
    check_elf_machine(arch, *(stage / "lib" / f for f in ("libcudart.so", "libcudart_static.a", "libcudadevrt.a")))
    if t.jetson_shaped:
        (stage / "JETSON-SHAPED-FROM-SBSA.txt").write_text(
            JETSON_NOTE.format(release=t.release, name=name, packages=" ".join(packages)))
    doc = {"name": name, "release": t.release, "target_directory": t.target_dir, "cpu": arch.cpu,
           "jetson_shaped_from_sbsa": t.jetson_shaped, "packages": packages}
    with open(stage / "nvcc-wrapper-target.json", "w") as f:
        json.dump(doc, f, indent=3)
        f.write("\n")

    tstage = begin_stage(tdest)
    try:
        cp_a(stage, tstage, link=True)
    except OSError:
        rmtree(tstage)
        tstage.mkdir(parents=True)
        cp_a(stage, tstage)
    finish_stage(tstage, tdest, stamp)
    finish_stage(stage, sdest, stamp)
    ready(name, tdest, f" and {sdest}")
