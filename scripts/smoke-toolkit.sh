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
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
# shellcheck source=scripts/lib/cuobjdump.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/cuobjdump.sh"

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

# The README's example program: a kernel and host code that reports the CUDA error it gets without a GPU.
cp "$(dirname "${BASH_SOURCE[0]}")/../examples/hello.cu" "$work/smoke.cu"

# argv[0] must be the real path: nvcc finds nvcc.profile next to argv[0].
start=$(date +%s.%N)
"$NVCC" -ccbin "$CCBIN" -cudart static "$@" -o "$work/smoke" "$work/smoke.cu" \
  >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "$release: nvcc failed to build the smoke test"; }
build_s=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)" 2>/dev/null || echo "?")

out=$("$work/smoke" 2>&1) || { echo "$out" >&2; die "$release: the smoke binary failed"; }
verdict=
case $out in
  *"squared on the GPU"*) verdict="ran on a GPU" ;;
  *"cuda error 35:"*|*"cuda error 100:"*) verdict="ran (no GPU here)" ;;
  *) echo "$out" >&2; die "$release: unexpected output from the smoke binary" ;;
esac

cuobjdump=$(find_cuobjdump "$ROOT")
elf=
if [[ -n $cuobjdump ]]; then
  elf=$("$cuobjdump" --list-elf "$work/smoke" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/p' | sort -u | tr '\n' ' ')
  elf=${elf% }
fi

printf 'smoke %s: nvcc %s, -ccbin %s, built in %ss, %s%s\n' \
  "$ROOT" "$(sed -n 's/.*, V\([0-9.]*\).*/\1/p' <<<"$version_out")" "$CCBIN" "$build_s" "$verdict" \
  "${elf:+, device code: $elf}"
printf '  %s\n' "$out"
