#!/usr/bin/env bash
# The main job on a real example: build the wrapper, install it as `nvcc` in front of a real NVCC toolkit (fetched and
# cached by scripts/fetch-toolkits.sh), show what it decides, compile examples/hello.cu through it and run the result.
#
# Usage: scripts/demo.sh [RELEASE]   (default 13.0)
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
cd "$(dirname "$0")/.."
release=${1:-13.0}

# Besides Rust, the demo needs `cc` (cargo links with it), a g++ or clang++ for nvcc's host code (the wrapper picks
# the one this release accepts: Debian 12's g++ 12 for 12.x and 13.x), and python3's pip for the download. What is
# missing, scripts/install-deps.sh --demo installs on Debian (gcc, g++, libc6-dev, python3-pip; as root or through
# sudo); nothing is run or printed when all are there.
missing=()
command -v cc >/dev/null || missing+=(cc)
command -v g++ >/dev/null || command -v clang++ >/dev/null || missing+=("g++ (or clang++)")
python3 -c 'import pip' 2>/dev/null || missing+=("python3's pip")
if ((${#missing[@]})); then
  list=$(printf '%s, ' "${missing[@]}")
  if ! command -v apt-get >/dev/null; then
    printf 'demo: error: not found: %s; install them (on Debian: scripts/install-deps.sh --demo)\n' "${list%, }" >&2
    exit 1
  fi
  echo "== installing what the demo lacks: ${list%, } (scripts/install-deps.sh --demo)" >&2
  scripts/install-deps.sh --demo
fi

echo "== building the wrapper (cargo build --release: about 3 minutes the first time on 2 cores, measured 2026-11-28; its last step, whole-program optimisation, prints nothing for a minute or more)" >&2
# The wrapper alone: the test suite's stand-ins (src/bin/) are not the demo's.
cargo build --release --locked --bin nvcc-wrapper
# The sizes the README's table measured for 13.0 (tests/wrapper/docs.rs checks that they are the table's).
size="the first time"
if [[ $release == 13.0 ]]; then size="105 MB to download and 383 MB kept, the first time"; fi
# The download cache of this project's scripts (toolkits and tools); the wrapper itself never reads it.
echo "== fetching real NVCC $release into the scripts' download cache, ${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper} ($size; cached after)" >&2
root=$(scripts/fetch-toolkits.sh --print-root "$release")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$PWD/target/release/nvcc-wrapper" "$work/bin/nvcc"
export PATH="$work/bin:$root/bin:$PATH"

echo "== nvcc is the wrapper: $(command -v nvcc) -> $(readlink "$work/bin/nvcc")"
echo "== nvcc --version (nvcc's own output, through the wrapper)"
nvcc --version
echo "== what the wrapper will run"
target/release/nvcc-wrapper explain -- -cudart static examples/hello.cu -o "$work/hello"
# Without NVCC_WRAPPER_LOG=debug: it would print explain's lines again, as the call's log.
echo "== compile, link and run (nvcc as a build runs it: the wrapper says nothing)"
nvcc -cudart static examples/hello.cu -o "$work/hello"
"$work/hello"

# What to type next, with the paths this demo used: the README's install steps, and the real nvcc after the wrapper.
cat <<EOF
== next: install the wrapper as nvcc in ~/.local/bin, before the real NVCC $release the demo used (README, "Install",
   builds it linked statically, which saves a fraction of a millisecond a call; the demo's build, linked dynamically,
   is the same wrapper and works as well)
  \$ install -D target/release/nvcc-wrapper ~/.local/bin/nvcc-wrapper && ln -sfn nvcc-wrapper ~/.local/bin/nvcc
  \$ export PATH="\$HOME/.local/bin:$root/bin:\$PATH"
  \$ nvcc-wrapper doctor
then compile as before (nvcc -c kernel.cu), give your GPUs in ~/.config/nvcc-wrapper/config.toml (README, "A first
config"), and \`nvcc-wrapper explain -- ARGS\` shows what a call gets, and why.
EOF
