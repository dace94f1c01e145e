#!/usr/bin/env bash
# What the wrapper costs per nvcc call, measured with hyperfine against the real nvcc 13.0 toolkit (fetched and cached
# by scripts/fetch-toolkits.sh). NVCC_WRAPPER_DRY_RUN=1 stops right before exec, so those rows are the wrapper's own
# work: parsing, config, finding nvcc, the release, probing compilers, planning. Results: docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "bench: install hyperfine (apt-get install hyperfine)" >&2; exit 1; }

cargo build --release --locked --quiet
root=$(scripts/fetch-toolkits.sh --print-root 13.0)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$PWD/target/release/nvcc-wrapper" "$work/bin/nvcc"
export PATH="$work/bin:$root/bin:$PATH"
cp examples/hello.cu "$work/"
cd "$work"

# Everything recorded: what a Nix package writes, so nothing is probed.
cat > recorded.toml <<TOML
nvcc = "$root/bin/nvcc"
cuda-version = "13.0"
[host-compiler]
stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0" }
TOML

# A cross build to Arm servers: the toolkit's targets/sbsa-linux (from `fetch-toolkits.sh cross`) and Debian's
# aarch64 cross g++, probed or recorded. Without those the cross rows are left out.
cross_rows=()
if [[ -d $root/targets/sbsa-linux ]] && command -v aarch64-linux-gnu-g++ >/dev/null; then
  cat > cross.toml <<TOML
nvcc = "$root/bin/nvcc"
[target]
system = "aarch64-linux"
TOML
  cat > cross-recorded.toml <<TOML
nvcc = "$root/bin/nvcc"
cuda-version = "13.0"
[target]
system = "aarch64-linux"
[target.host-compiler]
stdenv = { path = "/usr/bin/aarch64-linux-gnu-g++", family = "gcc", version = "12.2.0", target = "aarch64-linux-gnu" }
TOML
  cross_rows=(
    -n 'wrapper plan only, cross to sbsa, nothing recorded (probes aarch64-linux-gnu-g++)'
    "env NVCC_WRAPPER_DRY_RUN=1 NVCC_WRAPPER_CONFIG=cross.toml nvcc -c hello.cu"
    -n 'wrapper plan only, cross to sbsa, all recorded'
    "env NVCC_WRAPPER_DRY_RUN=1 NVCC_WRAPPER_CONFIG=cross-recorded.toml nvcc -c hello.cu"
  )
else
  echo "bench: no $root/targets/sbsa-linux or aarch64-linux-gnu-g++: cross rows left out (fetch-toolkits.sh cross)" >&2
fi

hyperfine --warmup 5 --runs "${RUNS:-50}" -N --export-markdown bench-overhead.md \
  -n 'real nvcc --version' "$root/bin/nvcc --version" \
  -n 'wrapper nvcc --version' "nvcc --version" \
  -n 'wrapper plan only, nothing recorded (probes g++)' "env NVCC_WRAPPER_DRY_RUN=1 nvcc -c hello.cu" \
  -n 'wrapper plan only, all recorded in the config' "env NVCC_WRAPPER_DRY_RUN=1 NVCC_WRAPPER_CONFIG=recorded.toml nvcc -c hello.cu" \
  "${cross_rows[@]}"
hyperfine --warmup 1 --runs "${COMPILE_RUNS:-5}" -N --export-markdown bench-compile.md \
  -n 'real nvcc -c hello.cu' "$root/bin/nvcc -ccbin=/usr/bin/g++-12 -c hello.cu" \
  -n 'wrapper nvcc -c hello.cu (recorded config)' "env NVCC_WRAPPER_CONFIG=recorded.toml nvcc -c hello.cu"
cat bench-overhead.md bench-compile.md
