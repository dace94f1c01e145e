"""The pins: every release, wheel, .deb and cross target the fetcher knows, as data.

Exact versions, so that a result is reproducible. Adding a release is adding a row to one of the tables below
(docs/toolkits.md, "Adding a release"); the code in the other modules reads them and never names a version.

Each pin has a `pin_line()`: its row as one line of words. The line is what a target's stamp records (with
ASSEMBLY_REV), so changing a pin makes exactly the targets built from it stale. The lines are word for word those of
the tables of the bash script this package replaced, so that a cache it filled stays fresh: keep the word order when
adding fields (a new field that is not part of the pin belongs outside `pin_line()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# Bump when the assembly logic changes: every stamp then mismatches and each target is rebuilt from the cached
# downloads.
ASSEMBLY_REV = 1


def _word(value: Optional[object]) -> str:
    """A pin field in a pin line: `-` for "no such package"."""
    return "-" if value is None else str(value)


@dataclass(frozen=True)
class Wheel:
    """A PyPI distribution at an exact version."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Deb:
    """A Debian binary package at an exact version (architecture chosen by the caller)."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}={self.version}"


# ---------------------------------------------------------------------------------------------------------------------
# 13.x toolkits: everything from PyPI wheels
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PypiToolkit:
    """A toolkit assembled from NVIDIA's PyPI wheels alone (13.x). `cuda` is the SDK version version.json reports."""

    release: str
    cuda: str
    nvcc: str
    crt: str
    nvvm: str
    runtime: str
    cccl: str
    cuobjdump: Optional[str]  # a wheel from 13.2 on only
    culibos: Optional[str]

    def pin_line(self) -> str:
        return " ".join(_word(v) for v in (self.release, self.cuda, self.nvcc, self.crt, self.nvvm, self.runtime,
                                           self.cccl, self.cuobjdump, self.culibos))

    def wheels(self) -> list[tuple[Wheel, str]]:
        """The wheels, in unpacking order (a later one may overwrite an earlier one's file), each with the key of its
        component in version.json."""
        out = [(Wheel("nvidia-cuda-nvcc", self.nvcc), "cuda_nvcc"),
               (Wheel("nvidia-cuda-crt", self.crt), "cuda_crt"),
               (Wheel("nvidia-nvvm", self.nvvm), "libnvvm"),
               (Wheel("nvidia-cuda-runtime", self.runtime), "cuda_cudart"),
               (Wheel("nvidia-cuda-cccl", self.cccl), "cuda_cccl")]
        if self.cuobjdump is not None:
            out.append((Wheel("nvidia-cuda-cuobjdump", self.cuobjdump), "cuda_cuobjdump"))
        if self.culibos is not None:
            out.append((Wheel("nvidia-cuda-culibos", self.culibos), "cuda_culibos"))
        return out


# Taken from the `cuda-toolkit` meta-package on PyPI, newest update of each minor ('all' extra): 13.0.3.0 (=13.0.2),
# 13.1.2.0 (=13.1.1), 13.2.2, 13.3.1, 13.4.3. 13.5 has no meta-package yet: its pins are the 13.5 wheels themselves,
# with the CCCL wheel published alongside them (13.3.5.0.6, i.e. CCCL 3.5.0) and SDK version 13.5.0 assumed.
# The GPU machine runs 13.0.88, which is 13.0 update 2: the 13.0 row matches.
PYPI_TOOLKITS = [
    #           release cuda      nvcc       crt        nvvm       runtime    cccl          cuobjdump  culibos
    PypiToolkit("13.0", "13.0.2", "13.0.88", "13.0.88", "13.0.88", "13.0.96", "13.0.85", None, "13.0.85"),
    PypiToolkit("13.1", "13.1.1", "13.1.115", "13.1.115", "13.1.115", "13.1.80", "13.1.115", None, "13.1.115"),
    PypiToolkit("13.2", "13.2.2", "13.2.86", "13.2.86", "13.2.86", "13.2.86", "13.2.86", "13.2.86", "13.2.86"),
    PypiToolkit("13.3", "13.3.1", "13.3.73", "13.3.73", "13.3.73", "13.3.29", "13.3.3.4.1", "13.3.73", "13.3.33"),
    PypiToolkit("13.4", "13.4.3", "13.4.92", "13.4.92", "13.4.92", "13.4.92", "13.3.4.3.1", "13.4.92", "13.4.92"),
    PypiToolkit("13.5", "13.5.0", "13.5.37", "13.5.37", "13.5.37", "13.5.37", "13.3.5.0.6", "13.5.37", "13.5.25"),
]

# ---------------------------------------------------------------------------------------------------------------------
# 11.x/12.x toolkits: the nvcc driver from Debian, headers and libcudart from PyPI
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DebianToolkit:
    """A toolkit whose nvcc driver exists only in Debian's non-free nvidia-cuda-toolkit (NVIDIA's unmodified
    binaries). Headers and the shared cudart come from NVIDIA's PyPI wheels of the same release (`wheel_suffix` cu11 or
    cu12); the static libs (libcudart_static.a, libcudadevrt.a, libculibos.a) only from Debian's nvidia-cuda-dev, a
    0.8-0.9 GB .deb of which only those files are kept."""

    release: str
    cuda: str
    suite: str  # the Debian suite that has these versions (the private apt configuration lists every suite)
    toolkit_deb: str  # nvidia-cuda-toolkit and libnvvm4
    cuda_dev_deb: str  # nvidia-cuda-dev (static libs only)
    wheel_suffix: str
    nvcc_wheel: str  # its include/ only (crt/)
    runtime_wheel: str
    cccl_wheel: str

    def pin_line(self) -> str:
        return " ".join((self.release, self.cuda, self.suite, self.toolkit_deb, self.cuda_dev_deb, self.wheel_suffix,
                         self.nvcc_wheel, self.runtime_wheel, self.cccl_wheel))

    def debs(self) -> list[Deb]:
        return [Deb("nvidia-cuda-toolkit", self.toolkit_deb), Deb("libnvvm4", self.toolkit_deb)]

    @property
    def nvcc(self) -> Wheel:
        return Wheel(f"nvidia-cuda-nvcc-{self.wheel_suffix}", self.nvcc_wheel)

    @property
    def runtime(self) -> Wheel:
        return Wheel(f"nvidia-cuda-runtime-{self.wheel_suffix}", self.runtime_wheel)

    @property
    def cccl(self) -> Wheel:
        return Wheel(f"nvidia-cuda-cccl-{self.wheel_suffix}", self.cccl_wheel)


# The cccl wheels without .post1 are yanked on PyPI ("broken": they lack nv/).
DEBIAN_TOOLKITS = [
    #             release cuda   suite           nvidia-cuda-toolkit, libnvvm4  nvidia-cuda-dev
    #             wheels  nvcc        runtime     cccl
    DebianToolkit("11.8", "11.8.0", "bookworm", "11.8.89~11.8.0-5~deb12u1", "11.8.89~11.8.0-5~deb12u1",
                  "cu11", "11.8.89", "11.8.89", "11.8.89.post1"),
    DebianToolkit("12.4", "12.4.1", "sid", "12.4.131~12.4.1-8.2+b1", "12.4.127~12.4.1-8.2+b1",
                  "cu12", "12.4.131", "12.4.127", "12.4.127.post1"),
    DebianToolkit("12.5", "12.5.0", "experimental", "12.5.40~12.5.0-2+b1", "12.5.39~12.5.0-2+b1",
                  "cu12", "12.5.40", "12.5.39", "12.5.39.post1"),
]

# ---------------------------------------------------------------------------------------------------------------------
# Header sets: a release's include/crt (so host_config.h) and, for 11.x/12.x, its ptxas
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeaderSet:
    release: str
    cuda: str
    package: str
    version: str

    def pin_line(self) -> str:
        return " ".join((self.release, self.cuda, self.package, self.version))

    @property
    def wheel(self) -> Wheel:
        return Wheel(self.package, self.version)


# The nvcc wheel of the newest update of each minor (`cuda-toolkit` meta-package pins, except 12.5.1 whose
# meta-package still pins 12.5.0's nvcc 12.5.40; 12.5.82 is the newest 12.5 wheel). 11.x/12.x wheels
# (nvidia-cuda-nvcc-cuXX) carry include/crt, ptxas, libnvvm and libdevice; for 13.x the crt/ headers are their own
# wheel (nvidia-cuda-crt).
HEADER_SETS = [
    HeaderSet("11.8", "11.8.0", "nvidia-cuda-nvcc-cu11", "11.8.89"),
    HeaderSet("12.0", "12.0.1", "nvidia-cuda-nvcc-cu12", "12.0.140"),
    HeaderSet("12.1", "12.1.1", "nvidia-cuda-nvcc-cu12", "12.1.105"),
    HeaderSet("12.2", "12.2.2", "nvidia-cuda-nvcc-cu12", "12.2.140"),
    HeaderSet("12.3", "12.3.2", "nvidia-cuda-nvcc-cu12", "12.3.107"),
    HeaderSet("12.4", "12.4.1", "nvidia-cuda-nvcc-cu12", "12.4.131"),
    HeaderSet("12.5", "12.5.1", "nvidia-cuda-nvcc-cu12", "12.5.82"),
    HeaderSet("12.6", "12.6.3", "nvidia-cuda-nvcc-cu12", "12.6.85"),
    HeaderSet("12.8", "12.8.1", "nvidia-cuda-nvcc-cu12", "12.8.93"),
    HeaderSet("12.9", "12.9.1", "nvidia-cuda-nvcc-cu12", "12.9.86"),
    HeaderSet("13.0", "13.0.2", "nvidia-cuda-crt", "13.0.88"),
    HeaderSet("13.1", "13.1.1", "nvidia-cuda-crt", "13.1.115"),
    HeaderSet("13.2", "13.2.2", "nvidia-cuda-crt", "13.2.86"),
    HeaderSet("13.3", "13.3.1", "nvidia-cuda-crt", "13.3.73"),
    HeaderSet("13.4", "13.4.3", "nvidia-cuda-crt", "13.4.92"),
    HeaderSet("13.5", "13.5.0", "nvidia-cuda-crt", "13.5.37"),
]

# ---------------------------------------------------------------------------------------------------------------------
# Cross target files: targets/<dir>/{include,lib} for another CPU, for nvcc's --target-directory
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arch:
    """A CPU as Debian, GNU, PyPI and ELF name it."""

    debian: str  # the Debian architecture (apt's name)
    triple: str  # the GNU triple: the directory under /usr/lib in Debian's packages
    cpu: str  # the manylinux2014_<cpu> wheel platform
    elf_machine: int  # ELF e_machine of its code


ARCHES = {a.debian: a for a in (
    Arch("amd64", "x86_64-linux-gnu", "x86_64", 62),
    Arch("arm64", "aarch64-linux-gnu", "aarch64", 183),
    Arch("ppc64el", "powerpc64le-linux-gnu", "ppc64le", 21),
)}
HOST = ARCHES["amd64"]


@dataclass(frozen=True)
class CrossTarget:
    """One cross target: installed into the x86_64 toolkit root of its release
    ($CACHE/toolkits/X.Y/targets/<target_dir>) and, as the same files, into a standalone
    $CACHE/target-roots/<name>/{include,lib} (target files outside the toolkit, as on Nix)."""

    name: str
    release: str
    target_dir: str  # sbsa-linux, aarch64-linux (Jetson) or ppc64le-linux
    debian_arch: str  # a key of ARCHES
    smoke_cxx: str  # the cross host compiler --smoke builds with
    smoke_sm: str  # the GPU architecture --smoke builds for
    runtime_wheel: Optional[Wheel]  # the target CPU's libcudart.so.N (and, 13.x, static libs and headers)
    culibos_wheel: Optional[Wheel]
    cuda_dev_deb: Optional[str]  # nvidia-cuda-dev:<arch> version: the static libs
    cudart_deb: Optional[Deb]  # Debian's libcudart.so.N, where no wheel exists (ppc64le)

    def pin_line(self) -> str:
        return " ".join(_word(v) for v in (self.name, self.release, self.target_dir, self.debian_arch, self.smoke_cxx,
                                           self.smoke_sm, self.runtime_wheel, self.culibos_wheel, self.cuda_dev_deb,
                                           self.cudart_deb))

    @property
    def arch(self) -> Arch:
        return ARCHES[self.debian_arch]

    @property
    def wheels(self) -> list[Wheel]:
        return [w for w in (self.runtime_wheel, self.culibos_wheel) if w is not None]

    @property
    def jetson_shaped(self) -> bool:
        return self.name.startswith("jetson-")


# include/ starts as a copy of the release's x86_64 include/ (NVIDIA's headers are the same for every CPU; the aarch64
# wheels' headers were checked byte-identical, and they lack crt/ and CCCL) with the target wheel's headers laid over
# it. lib/ is the target CPU's libcudart.so.N, libcudart_static.a, libcudadevrt.a, libculibos.a and, from Debian,
# stubs/libcuda.so, plus CCCL's CMake files copied from x86_64.
#   - aarch64, 13.x: everything from PyPI's manylinux2014_aarch64 wheels.
#   - aarch64, 11.8/12.4: libcudart.so.N from the aarch64 runtime wheel; the static libs (which those wheels lack)
#     from Debian's nvidia-cuda-dev:arm64.
#   - ppc64le: no wheels exist; libcudart.so.N from Debian's libcudart*:ppc64el, the static libs from
#     nvidia-cuda-dev:ppc64el. NVIDIA's last ppc64le release is 12.4.
#   - jetson-X.Y: NO JETSON (L4T) FILES ARE REACHABLE. It is the sbsa files of the release laid out as
#     targets/aarch64-linux (the Jetson directory name), marked by a JETSON-SHAPED-FROM-SBSA.txt file, for tests of
#     the directory logic. It is not NVIDIA's L4T cudart.
CROSS_TARGETS = [
    CrossTarget("sbsa-13.0", "13.0", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.0.96"), Wheel("nvidia-cuda-culibos", "13.0.85"), None, None),
    CrossTarget("sbsa-13.1", "13.1", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.1.80"), Wheel("nvidia-cuda-culibos", "13.1.115"), None, None),
    CrossTarget("sbsa-13.2", "13.2", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.2.86"), Wheel("nvidia-cuda-culibos", "13.2.86"), None, None),
    CrossTarget("sbsa-13.3", "13.3", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.3.29"), Wheel("nvidia-cuda-culibos", "13.3.33"), None, None),
    CrossTarget("sbsa-13.4", "13.4", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.4.92"), Wheel("nvidia-cuda-culibos", "13.4.92"), None, None),
    CrossTarget("sbsa-13.5", "13.5", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime", "13.5.37"), Wheel("nvidia-cuda-culibos", "13.5.25"), None, None),
    CrossTarget("sbsa-12.4", "12.4", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++", "sm_90a",
                Wheel("nvidia-cuda-runtime-cu12", "12.4.127"), None, "12.4.127~12.4.1-8.2+b1", None),
    CrossTarget("sbsa-11.8", "11.8", "sbsa-linux", "arm64", "aarch64-linux-gnu-g++-11", "sm_87",
                Wheel("nvidia-cuda-runtime-cu11", "11.8.89"), None, "11.8.89~11.8.0-5~deb12u1", None),
    CrossTarget("jetson-12.4", "12.4", "aarch64-linux", "arm64", "aarch64-linux-gnu-g++", "sm_87",
                Wheel("nvidia-cuda-runtime-cu12", "12.4.127"), None, "12.4.127~12.4.1-8.2+b1", None),
    CrossTarget("ppc64le-12.4", "12.4", "ppc64le-linux", "ppc64el", "powerpc64le-linux-gnu-g++", "sm_70",
                None, None, "12.4.127~12.4.1-8.2+b1", Deb("libcudart12", "12.4.127~12.4.1-8.2+b1")),
    CrossTarget("ppc64le-11.8", "11.8", "ppc64le-linux", "ppc64el", "powerpc64le-linux-gnu-g++-11", "sm_70",
                None, None, "11.8.89~11.8.0-5~deb12u1", Deb("libcudart11.0", "11.8.89~11.8.0-5~deb12u1")),
]

# ---------------------------------------------------------------------------------------------------------------------
# Tools and groups
# ---------------------------------------------------------------------------------------------------------------------

# cuobjdump works on the fatbinaries of every release; the newest is used.
CUOBJDUMP = Wheel("nvidia-cuda-cuobjdump", "13.5.37")

# What `default` (or no target at all) means. `cross` is every CROSS_TARGETS row, `headers-all` every HEADER_SETS row.
DEFAULT_TARGETS = ["13.0", "13.5", "12.4", "11.8", "headers-all", "cuobjdump"]


def _by_key(rows, key):
    table = {}
    for row in rows:
        k = getattr(row, key)
        assert k not in table, f"pins.py: {k} is pinned twice"
        table[k] = row
    return table


TOOLKITS = _by_key(PYPI_TOOLKITS + DEBIAN_TOOLKITS, "release")
HEADERS = _by_key(HEADER_SETS, "release")
CROSS = _by_key(CROSS_TARGETS, "name")
# Every cross target's toolkit is pinned (its include/ is that toolkit's).
assert all(t.release in TOOLKITS for t in CROSS_TARGETS), "pins.py: a cross target names a release with no toolkit"
