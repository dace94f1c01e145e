#!/usr/bin/env bash
# The main job on a real example: build the wrapper, install it as `nvcc` in front of a real NVCC toolkit (fetched and
# cached by scripts/fetch-toolkits.sh), show what it decides, compile examples/hello.cu through it and run the result.
#
# Usage: scripts/demo.sh [RELEASE]   (default 13.0)
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:-13.0}

echo "== building the wrapper (cargo build --release: about a minute the first time)" >&2
cargo build --release --locked
echo "== fetching real NVCC $release into ~/.cache/nvcc-wrapper (about 120 MB the first time; cached after)" >&2
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
echo "== compile, link and run"
NVCC_WRAPPER_LOG=debug nvcc -cudart static examples/hello.cu -o "$work/hello"
"$work/hello"
