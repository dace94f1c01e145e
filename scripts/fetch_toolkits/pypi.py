"""Source: NVIDIA's wheels on PyPI, downloaded with pip and unpacked into NVIDIA's toolkit layout."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from common import DOWNLOADS, TARGET_DIR, die, indented, log, rmtree
from pins import Wheel


def wheel_dir(cpu: str = "x86_64") -> Path:
    """x86_64 wheels live in downloads/pypi, those of another CPU in downloads/pypi-CPU: the lookup must never hand an
    aarch64 wheel to an x86_64 assembly (an older copy of the bash script globs downloads/pypi by name and version
    only)."""
    return DOWNLOADS / ("pypi" if cpu == "x86_64" else f"pypi-{cpu}")


def cached_wheel(wheel: Wheel, cpu: str = "x86_64") -> Path | None:
    """The cached wheel file, found by name alone, so that a rebuild works offline. Wheel file names use the
    normalised distribution name (PEP 427)."""
    name = wheel.name.replace("-", "_")
    found = sorted(wheel_dir(cpu).glob(f"{name}-{wheel.version}-*{cpu}.whl"))
    return next((f for f in found if f.is_file()), None)


def wheel_path(wheel: Wheel, cpu: str = "x86_64") -> Path:
    path = cached_wheel(wheel, cpu)
    if path is None:
        die(f"wheel {wheel} ({cpu}) is not in {wheel_dir(cpu)}")
    return path


def fetch_wheels(wheels: list[Wheel], cpu: str = "x86_64") -> None:
    """Download every wheel of `wheels` that is not cached, for the manylinux2014_CPU platform whatever the host is,
    in parallel (pip's start-up dominates for the small ones)."""
    directory = wheel_dir(cpu)
    directory.mkdir(parents=True, exist_ok=True)
    missing = [w for w in wheels if cached_wheel(w, cpu) is None]
    if not missing:
        return
    if subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        die(f"pip is needed to fetch {missing[0]} (install python3-pip: scripts/install-deps.sh)")
    running = []
    for wheel in missing:
        # pip downloads into a temporary directory first, so that a killed download leaves nothing that would later
        # pass for a complete wheel. --no-deps: the pins are the whole closure.
        tmp = Path(tempfile.mkdtemp(prefix=".tmp.", dir=directory))
        log(f"downloading {wheel} ({cpu}) from PyPI")
        out = open(tmp / "log", "wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--platform", f"manylinux2014_{cpu}", "--python-version", "3.11", "--implementation", "cp",
             "--dest", str(tmp), str(wheel)],
            stdout=out, stderr=subprocess.STDOUT)
        running.append((wheel, tmp, proc, out))
    failed = False
    for wheel, tmp, proc, out in running:
        proc.wait()
        out.close()
        downloaded = sorted(tmp.glob("*.whl"))
        if proc.returncode == 0 and downloaded:
            for f in downloaded:
                f.rename(directory / f.name)
        else:
            log(f"pip download of {wheel} failed:")
            indented((tmp / "log").read_text(errors="replace"))
            failed = True
        rmtree(tmp)
    if failed:
        die("could not download the wheels above from PyPI")


def unpack_wheel(whl: Path, dest: Path, include_only: bool = False, tdir: str = TARGET_DIR) -> None:
    """Unpack one NVIDIA wheel into a toolkit root laid out like NVIDIA's installer does. Wheels put everything under
    nvidia/<dir>/ (cu13, or cuda_nvcc/cuda_runtime/cuda_cccl for cu11/cu12); that prefix maps onto the root:

        bin/, nvvm/             -> bin/, nvvm/
        include/nvvm.h          -> nvvm/include/nvvm.h   (13.x nvvm wheel)
        lib/libnvvm.so*         -> nvvm/lib64/           (13.x nvvm wheel)
        include/, lib/          -> TDIR/{include,lib}/   (TDIR: targets/x86_64-linux)
        cccl/lib/cmake          -> TDIR/lib/cmake        (CCCL >= 3.5)

    include_only keeps only include/ (the headers of a wheel whose binaries come from elsewhere). TDIR "." unpacks
    include/ and lib/ straight into DEST (the cross target files). Zip files carry no symlinks; file modes come from
    the zip's external attributes (ptxas, nvcc, cicc must stay executable)."""
    n = 0
    try:
        with zipfile.ZipFile(whl) as z:
            for info in z.infolist():
                parts = info.filename.split("/")
                if info.is_dir() or len(parts) < 3 or parts[0] != "nvidia":
                    continue  # dist-info, nvidia/__init__.py
                rel = parts[2:]
                if rel[-1] == "__init__.py" or rel[0] == ".metadata":
                    continue
                r = "/".join(rel)
                if include_only and rel[0] != "include":
                    continue
                if r == "include/nvvm.h":
                    out = "nvvm/include/nvvm.h"
                elif rel[0] == "lib" and rel[-1].startswith("libnvvm.so"):
                    out = "nvvm/lib64/" + rel[-1]
                elif rel[0] in ("bin", "nvvm"):
                    out = r
                elif rel[0] in ("include", "lib"):
                    out = tdir + "/" + r
                elif rel[:2] == ["cccl", "lib"]:
                    out = tdir + "/" + "/".join(rel[1:])
                else:
                    continue  # cccl/LICENSE and the like
                path = os.path.join(dest, out)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(info) as src, open(path, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                # The wheels record executables as 0744: make them usable by every user of a shared cache.
                perm = (info.external_attr >> 16) & 0o777
                os.chmod(path, 0o755 if perm & 0o100 else 0o644)
                n += 1
    except (OSError, zipfile.BadZipFile) as err:
        die(f"unpacking {whl.name} failed: {err}")
    if n == 0:
        die(f"unpacking {whl.name} failed: nothing to unpack (unexpected wheel layout)")
