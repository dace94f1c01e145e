"""fetch-toolkits.sh: fetch REAL NVIDIA nvcc toolkits from package registries
(PyPI wheels through pip, Debian .debs through apt) and assemble them into a
cache outside the checkout, in NVIDIA's standard toolkit layout, so that the
tests can compile real CUDA code with a real nvcc.

Usage: scripts/fetch-toolkits.sh [options] TARGET...

TARGET is one of
  X.Y          a full toolkit root      -> $CACHE/toolkits/X.Y/
               (13.0 .. 13.5 from PyPI; 11.8, 12.4, 12.5 from Debian)
  headers-X.Y  NVIDIA's real headers of a release (include/crt/host_config.h,
               ...) plus its ptxas where the wheel has one
                                        -> $CACHE/headers/X.Y/
  headers-all  every pinned headers-X.Y
  cuobjdump    a cuobjdump usable on any toolkit -> $CACHE/tools/cuobjdump
  default      13.0 13.5 12.4 11.8 headers-all cuobjdump (about 650 MB to
               download the first time; with no TARGET, nothing is fetched:
               this text is printed and the exit code is 2)
  sbsa-X.Y     cross target files (aarch64 servers, 13.0 .. 13.5, 12.4, 11.8)
  ppc64le-X.Y  cross target files (ppc64le, 12.4 11.8)
  jetson-12.4  the sbsa files of 12.4 laid out as Jetson's aarch64-linux:
               NOT real Jetson (L4T) files, see JETSON-SHAPED-FROM-SBSA.txt
               Each cross target (assembling its X.Y toolkit too) ->
                 $CACHE/toolkits/X.Y/targets/<dir>/{include,lib}
                 $CACHE/target-roots/<name>/{include,lib} (the same files)
               with <dir> sbsa-linux, ppc64le-linux or aarch64-linux
  cross        every cross target above (not part of default)

Options
  --print-root X.Y  assemble X.Y if needed, then print its root on stdout
                    (a cross target name: its toolkit's root)
  --print-target-root NAME  assemble cross target NAME if needed, then
                    print $CACHE/target-roots/NAME on stdout
  --smoke           after assembling, run scripts/smoke-toolkit.sh on each
                    toolkit named on the command line, and
                    scripts/smoke-cross.sh on each cross target (both ways:
                    --target-directory and the standalone target root)
  --list            print the pinned package versions and exit
  --releases [TARGET...]  print the NVCC releases whose toolkits TARGETs
                    assemble (a cross target brings its release's), oldest
                    first, one a line, and exit: the real tests read their
                    release lists from `--releases default cross`
  -h, --help        this text

Cache root: ${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper}. See
docs/toolkits.md for the layout contract, sizes and timings. The pins are
data in scripts/fetch_toolkits/pins.py.

Every target writes a stamp (its pins + ASSEMBLY_REV) last; a target whose
stamp matches is skipped without touching the network, so a warm run is a
few stat calls. An interrupted run leaves no stamp and is redone.
"""

# This package is run as a directory (`python3 scripts/fetch_toolkits`, from scripts/fetch-toolkits.sh), so its modules
# import each other by their plain names: pins (the data), common (cache paths, stamps, staging), pypi and debian (the
# two sources), layout (what no package provides: links, nvcc.profile, version.json), toolkits and cross (the
# targets), and this file (the command line).

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys

if sys.version_info < (3, 8):
    sys.exit("fetch-toolkits: error: python3 3.8 or newer is needed")

from common import CACHE, SCRIPTS, Fatal, die, target_root, toolkit_root  # noqa: E402
from cross import cross_fresh, do_cross  # noqa: E402
from pins import (CROSS, CROSS_TARGETS, CUOBJDUMP, DEBIAN_TOOLKITS, DEFAULT_TARGETS, HEADER_SETS,  # noqa: E402
                  PYPI_TOOLKITS, TOOLKITS)
from toolkits import cuobjdump_fresh, do_cuobjdump, do_headers, do_toolkit, headers_fresh, toolkit_fresh  # noqa: E402


def is_release(target: str) -> bool:
    """A name that looks like a release (X.Y): the toolkit targets."""
    return re.fullmatch(r"[0-9].*\.[0-9].*", target, re.S) is not None


def expand(targets: list[str]) -> list[str]:
    """The groups (default, headers-all, cross) replaced by the targets they stand for, in order."""
    out = []
    for t in targets:
        if t == "default":
            out += expand(DEFAULT_TARGETS)
        elif t == "headers-all":
            out += [f"headers-{h.release}" for h in HEADER_SETS]
        elif t == "cross":
            out += [c.name for c in CROSS_TARGETS]
        else:
            out.append(t)
    return out


def releases(targets: list[str]) -> list[str]:
    """The releases whose toolkits `targets` (expanded) assemble, oldest first."""
    found = {t for t in targets if is_release(t)} | {CROSS[t].release for t in targets if t in CROSS}
    unknown = sorted(r for r in found if r not in TOOLKITS)
    if unknown:
        die(f"--releases: no toolkit is pinned for {' '.join(unknown)} (known: {' '.join(TOOLKITS)})")
    return sorted(found, key=lambda r: tuple(int(p) for p in r.split(".")))


def fresh(target: str) -> bool:
    """Is the target assembled and current? (No lock, no network.)"""
    if target == "cuobjdump":
        return cuobjdump_fresh()
    if target.startswith("headers-"):
        return headers_fresh(target[len("headers-"):])
    if is_release(target):
        return toolkit_fresh(target)
    return cross_fresh(target)


def build(target: str) -> None:
    if target == "cuobjdump":
        do_cuobjdump()
    elif target.startswith("headers-"):
        do_headers(target[len("headers-"):])
    elif is_release(target):
        do_toolkit(target)
    elif target in CROSS:
        do_cross(target)
    else:
        die(f"unknown target '{target}' (toolkits: {' '.join(TOOLKITS)}; cross targets: {' '.join(CROSS)}; "
            "see --help)")


def smoke(target: str) -> None:
    """--smoke: scripts/smoke-toolkit.sh on a toolkit, scripts/smoke-cross.sh both ways on a cross target."""
    if is_release(target):
        if subprocess.run([str(SCRIPTS / "smoke-toolkit.sh"), str(toolkit_root(target))]).returncode != 0:
            die(f"{target}: smoke test failed")
    elif target in CROSS:
        t = CROSS[target]
        args = [str(toolkit_root(t.release)), t.target_dir, t.smoke_cxx, t.smoke_sm]
        if subprocess.run([str(SCRIPTS / "smoke-cross.sh"), *args]).returncode != 0:
            die(f"{target}: cross smoke test failed")
        standalone = ["--target-root", str(target_root(target))]
        if subprocess.run([str(SCRIPTS / "smoke-cross.sh"), *standalone, *args]).returncode != 0:
            die(f"{target}: cross smoke test (standalone target root) failed")


def _table(title: str, rows: list[str]) -> None:
    print(title)
    cells = [r.split() for r in rows]
    widths = [max(len(c[i]) for c in cells if i < len(c)) for i in range(max(map(len, cells)))]
    for c in cells:
        print("  " + " ".join(w.ljust(widths[i]) for i, w in enumerate(c)).rstrip())


def list_pins() -> None:
    _table("toolkits from PyPI (release cuda nvcc crt nvvm runtime cccl cuobjdump culibos):",
           [t.pin_line() for t in PYPI_TOOLKITS])
    _table("toolkits from Debian (release cuda suite toolkit-deb cuda-dev-deb wheels nvcc runtime cccl):",
           [t.pin_line() for t in DEBIAN_TOOLKITS])
    _table("headers (release cuda package version):", [h.pin_line() for h in HEADER_SETS])
    print(f"cuobjdump: {CUOBJDUMP.name} {CUOBJDUMP.version}")
    _table("cross target files (name release dir debian-arch smoke-cxx smoke-sm runtime-wheel culibos-wheel "
           "nvidia-cuda-dev libcudart-deb):", [c.pin_line() for c in CROSS_TARGETS])


def main(argv: list[str]) -> int:
    run_smoke = False
    print_root = print_target_root = None
    args = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__, end="")
            return 0
        if a == "--list":
            list_pins()
            return 0
        if a == "--releases":
            print("\n".join(releases(expand(argv[i + 1:] or ["default"]))))
            return 0
        if a == "--smoke":
            run_smoke = True
        elif a in ("--print-root", "--print-target-root"):
            if i + 1 >= len(argv):
                die("--print-root needs a release" if a == "--print-root" else "--print-target-root needs a cross target")
            i += 1
            if a == "--print-root":
                print_root = argv[i]
            else:
                print_target_root = argv[i]
            args.append(argv[i])
        elif a.startswith("--print-root="):
            print_root = a.split("=", 1)[1]
            args.append(print_root)
        elif a.startswith("--print-target-root="):
            print_target_root = a.split("=", 1)[1]
            args.append(print_target_root)
        elif a.startswith("-"):
            die(f"unknown option {a} (see --help)")
        else:
            args.append(a)
        i += 1
    if print_target_root is not None and print_target_root not in CROSS:
        die(f"--print-target-root: '{print_target_root}' is not a cross target (known: {' '.join(CROSS)})")
    if not args:
        # A download of hundreds of MB is asked for by name, never started by a bare command.
        print(__doc__, end="", file=sys.stderr)
        return 2
    targets = expand(args)

    CACHE.mkdir(parents=True, exist_ok=True)
    lock = None
    if not all(fresh(t) for t in targets):
        # Serialise concurrent runs (parallel test processes): the second one waits, then finds the targets fresh.
        # The lock's holder writes its pid in it, so that a run that waits says for whom, instead of minutes of
        # silence. Opened without truncating: the holder's pid stays readable until this run holds the lock.
        lock = open(CACHE / ".lock", "a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "unknown"
            print(f"fetch-toolkits: waiting for another fetch (pid {holder}) to finish with {CACHE}", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
    for t in targets:
        build(t)
    if run_smoke:
        for t in targets:
            smoke(t)
    if print_root is not None:
        # A cross target's root is the toolkit root its files were installed in.
        release = CROSS[print_root].release if print_root in CROSS else print_root
        print(toolkit_root(release), flush=True)
    if print_target_root is not None:
        print(target_root(print_target_root), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fatal as err:
        print(f"fetch-toolkits: error: {err}", file=sys.stderr)
        sys.exit(1)
    except OSError as err:
        print(f"fetch-toolkits: error: {err}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
