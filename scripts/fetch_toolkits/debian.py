"""Source: the Debian archive, through a private apt configuration; .debs unpacked with dpkg-deb."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import APT_DIR, DOWNLOADS, die, indented, log, rmtree, run_logged
from pins import ARCHES, CROSS_TARGETS, DEBIAN_TOOLKITS, HOST, Arch, Deb

MIRROR = os.environ.get("NVCC_WRAPPER_DEBIAN_MIRROR") or "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
DEBS = DOWNLOADS / "debian"

# The suites the pins live in, in the order of the DEBIAN_TOOLKITS rows (the cross targets' .debs are of the same
# releases, so in the same suites).
SUITES = list(dict.fromkeys(t.suite for t in DEBIAN_TOOLKITS))

# The static libraries nvidia-cuda-dev is fetched for (plus stubs/libcuda.so where it has one).
STATIC_LIBS = ("libcudart_static.a", "libcudadevrt.a", "libculibos.a")

# apt-get download's messages when the lists do not know a version (a suite moved on since the last update).
STALE_LISTS = re.compile(r"Can't find a source|Version '.*' for '.*' was not found|Unable to locate")


def deb_path(deb: Deb, arch: Arch = HOST) -> Path:
    """apt-get download names files NAME_VERSION_ARCH.deb, with ':' as %3a."""
    return DEBS / f"{deb.name}_{deb.version.replace(':', '%3a')}_{arch.debian}.deb"


def _apt_conf() -> str:
    user = pwd.getpwuid(os.getuid()).pw_name
    # The cross targets' architectures (arm64, ppc64el) come after the host's, in the order of ARCHES.
    used = [HOST.debian] + [a for a in ARCHES if a != HOST.debian and any(t.debian_arch == a for t in CROSS_TARGETS)]
    architectures = " ".join(f'"{a}";' for a in used)
    return f"""// Written by nvcc-wrapper's scripts/fetch-toolkits.sh; used through APT_CONFIG.
Dir::Etc::Parts "{APT_DIR}/apt.conf.d";
Dir::Etc::Main "/dev/null";
Dir::Etc::SourceList "{APT_DIR}/sources.list";
Dir::Etc::SourceParts "{APT_DIR}/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "{APT_DIR}/preferences.d";
Dir::State "{APT_DIR}";
Dir::State::Lists "{APT_DIR}/lists";
Dir::State::status "{APT_DIR}/status";
Dir::Cache "{APT_DIR}";
Dir::Cache::Archives "{APT_DIR}/archives";
APT::Architecture "{HOST.debian}";
// arm64 and ppc64el: the cross target files (nvidia-cuda-dev:arm64, ...).
APT::Architectures {{ {architectures} }};
APT::Sandbox::User "{user}";
Acquire::Languages "none";
// The Debian mirror these machines reach serves a frozen snapshot, so the
// Release files of sid and experimental are past their Valid-Until date.
// Their signatures are still checked (signed-by above).
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
"""


def setup_private_apt() -> None:
    """A private apt configuration: own sources list (the non-free component of the pinned suites), own lists, own
    cache, an empty dpkg status, and none of /etc/apt's configuration parts. It never reads or writes the system's
    apt state or takes the dpkg lock, and works without root."""
    for sub in ("lists/partial", "archives/partial", "apt.conf.d", "sources.list.d", "preferences.d"):
        (APT_DIR / sub).mkdir(parents=True, exist_ok=True)
    (APT_DIR / "status").touch()
    files = {
        "sources.list": "".join(f"deb [signed-by={KEYRING}] {MIRROR} {suite} non-free\n" for suite in SUITES),
        "apt.conf": _apt_conf(),
    }
    # Only replace a file when it changed, so that the lists stay valid.
    for name, text in files.items():
        path = APT_DIR / name
        if not path.is_file() or path.read_text() != text:
            new = path.with_name(name + ".new")
            new.write_text(text)
            new.rename(path)
            rmtree(APT_DIR / "lists/.updated")


def _apt_env() -> dict:
    return dict(os.environ, APT_CONFIG=str(APT_DIR / "apt.conf"))


def apt_update() -> None:
    log(f"apt-get update (private configuration in {APT_DIR})")
    update_log = APT_DIR / "update.log"
    if run_logged(["apt-get", "update", "-qq"], update_log, env=_apt_env()) != 0:
        indented(update_log.read_text(errors="replace"))
        die("apt-get update of the private Debian configuration failed")
    (APT_DIR / "lists/.updated").touch()


def fetch_debs(debs: list[tuple[Deb, Arch]]) -> None:
    """apt-get download each .deb that is not in downloads/debian yet. The lists are fetched once, and again only
    when a pinned version is not found in them (a suite moved on since)."""
    DEBS.mkdir(parents=True, exist_ok=True)
    missing = [(deb, arch) for deb, arch in debs if not deb_path(deb, arch).is_file()]
    if not missing:
        return
    specs = [str(deb) if arch == HOST else f"{deb.name}:{arch.debian}={deb.version}" for deb, arch in missing]
    if shutil.which("apt-get") is None:
        die(f"apt-get is needed to fetch {' '.join(specs)}")
    setup_private_apt()
    if not (APT_DIR / "lists/.updated").is_file():
        apt_update()
    tmp = Path(tempfile.mkdtemp(prefix=".tmp.", dir=DEBS))
    log(f"downloading {' '.join(specs)} from Debian")
    download = ["apt-get", "download", "-q", *specs]
    rc = run_logged(download, tmp / "log", cwd=tmp, env=_apt_env())
    if rc != 0 and STALE_LISTS.search((tmp / "log").read_text(errors="replace")):
        apt_update()  # stale lists: refresh once and retry
        rc = run_logged(download, tmp / "log", cwd=tmp, env=_apt_env())
    if rc != 0:
        indented((tmp / "log").read_text(errors="replace"))
        rmtree(tmp)
        die(f"apt-get download of {' '.join(specs)} failed (is the version still in Debian? see the pins in "
            "scripts/fetch_toolkits/pins.py)")
    for f in sorted(tmp.glob("*.deb")):
        f.rename(DEBS / f.name)
    rmtree(tmp)


def unpack_deb(deb: Deb, arch: Arch, dest: Path) -> None:
    """dpkg-deb -x: the package's files under DEST, modes and symlinks as packaged."""
    if subprocess.run(["dpkg-deb", "-x", str(deb_path(deb, arch)), str(dest)]).returncode != 0:
        die(f"unpacking {deb.name}:{arch.debian} {deb.version} failed")


def static_libs(version: str, arch: Arch = HOST) -> Path:
    """The static libraries of nvidia-cuda-dev:ARCH VERSION, cached as extracted files: the .deb they live in is
    0.7-0.9 GB and is deleted afterwards. The host's directory is downloads/debian/nvidia-cuda-dev_VERSION_static,
    another CPU's nvidia-cuda-dev_VERSION_ARCH_static."""
    suffix = "" if arch == HOST else f"_{arch.debian}"
    directory = DEBS / f"nvidia-cuda-dev_{version}{suffix}_static"
    if (directory / ".complete").is_file():
        return directory
    deb = Deb("nvidia-cuda-dev", version)
    fetch_debs([(deb, arch)])
    path = deb_path(deb, arch)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp.", dir=DEBS))
    log(f"extracting the static libraries from {path.name}")
    # tar reads through the whole data archive; only these members are kept.
    members = [f"./usr/lib/{arch.triple}/{lib}" for lib in STATIC_LIBS + ("stubs/libcuda.so",)]
    dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(path)], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", str(tmp), "--wildcards", "--no-wildcards-match-slash", *members],
                         stdin=dpkg.stdout)
    dpkg.stdout.close()
    if dpkg.wait() != 0 or tar.returncode != 0:
        rmtree(tmp)
        die(f"extracting the static libraries from {path} failed")
    rmtree(directory)
    (tmp / "usr/lib" / arch.triple).rename(directory)
    rmtree(tmp)
    for lib in STATIC_LIBS:
        if not (directory / lib).is_file():
            die(f"nvidia-cuda-dev:{arch.debian} {version} has no {lib}")
    (directory / ".complete").touch()
    path.unlink()
    return directory
