#!/usr/bin/env bash
# smoke-toolkit.sh: prove that a toolkit root really compiles, links and runs
# CUDA code.
#
# Usage: scripts/smoke-toolkit.sh ROOT [-ccbin COMPILER] [NVCC_ARGS...]
#
# Builds a .cu with a kernel and a host main() that calls cudaGetDeviceCount,
# with `-cudart static`, runs it, and judges the result:
#   - a GPU is present: the kernel must run and give the right answer;
#   - no GPU / no driver: cudaGetDeviceCount returns error 35
#     (cudaErrorInsufficientDriver) or 100 (cudaErrorNoDevice). That counts
#     as ran: the binary was linked against the real static cudart and
#     reached the driver probe.
# The host compiler defaults to g++-11 for nvcc 11.x (which rejects GCC 12)
# and to the system g++ otherwise. When a cuobjdump is found (ROOT/bin, or
# the fetch script's $CACHE/tools) the embedded device code is listed too.

set -euo pipefail

die() { printf 'smoke-toolkit: error: %s\n' "$*" >&2; exit 1; }

(($# >= 1)) || die "usage: $0 ROOT [-ccbin COMPILER] [NVCC_ARGS...]"
ROOT=$(cd "$1" && pwd) || die "no such toolkit root: $1"
shift
NVCC=$ROOT/bin/nvcc
[[ -x $NVCC ]] || die "$NVCC is missing or not executable"

CCBIN=
if [[ ${1:-} == -ccbin ]]; then
  [[ $# -ge 2 ]] || die "-ccbin needs a compiler"
  CCBIN=$2; shift 2
fi

# nvcc --version's last line: "Build cuda_13.0.r13.0/compiler.36424714_0";
# the "release X.Y" line gives the release.
version_out=$("$NVCC" --version) || die "$NVCC --version failed"
release=$(sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p' <<<"$version_out")
[[ -n $release ]] || die "cannot read the release from: $version_out"
if [[ -z $CCBIN ]]; then
  case $release in
    11.*) CCBIN=g++-11 ;;
    *) CCBIN=g++ ;;
  esac
fi
command -v "$CCBIN" >/dev/null || die "host compiler $CCBIN not found (scripts/install-deps.sh installs it)"

work=$(mktemp -d "${TMPDIR:-/tmp}/nvcc-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/smoke.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

int main() {
  int count = -1;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    std::printf("smoke: cudaGetDeviceCount -> error %d (%s)\n", (int)e, cudaGetErrorName(e));
    return 0;
  }
  std::printf("smoke: cudaGetDeviceCount -> %d device(s)\n", count);
  const int n = 256;
  int host[n], *dev = nullptr;
  for (int i = 0; i < n; ++i) host[i] = i;
  if (cudaMalloc(&dev, sizeof host) != cudaSuccess) { std::printf("smoke: cudaMalloc failed\n"); return 1; }
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  add_one<<<(n + 127) / 128, 128>>>(dev, n);
  e = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) { std::printf("smoke: kernel -> error %d (%s)\n", (int)e, cudaGetErrorName(e)); return 1; }
  for (int i = 0; i < n; ++i)
    if (host[i] != i + 1) { std::printf("smoke: kernel gave a wrong result at %d\n", i); return 1; }
  std::printf("smoke: kernel ran: OK\n");
  return 0;
}
EOF

# argv[0] must be the real path: nvcc finds nvcc.profile next to argv[0].
start=$(date +%s.%N)
"$NVCC" -ccbin "$CCBIN" -cudart static "$@" -o "$work/smoke" "$work/smoke.cu" \
  >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "$release: nvcc failed to build the smoke test"; }
build_s=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)" 2>/dev/null || echo "?")

out=$("$work/smoke" 2>&1) || { echo "$out" >&2; die "$release: the smoke binary failed"; }
verdict=
case $out in
  *"kernel ran: OK"*) verdict="ran on a GPU" ;;
  *"error 35 "*|*"error 100 "*) verdict="ran (no GPU here)" ;;
  *) echo "$out" >&2; die "$release: unexpected output from the smoke binary" ;;
esac

cuobjdump=
for c in "$ROOT/bin/cuobjdump" "${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper}/tools/cuobjdump"; do
  [[ -x $c ]] && { cuobjdump=$c; break; }
done
elf=
if [[ -n $cuobjdump ]]; then
  elf=$("$cuobjdump" --list-elf "$work/smoke" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/p' | sort -u | tr '\n' ' ')
  elf=${elf% }
fi

printf 'smoke %s: nvcc %s, -ccbin %s, built in %ss, %s%s\n' \
  "$ROOT" "$(sed -n 's/.*, V\([0-9.]*\).*/\1/p' <<<"$version_out")" "$CCBIN" "$build_s" "$verdict" \
  "${elf:+, device code: $elf}"
printf '  %s\n' "$out"
