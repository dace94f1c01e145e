#!/usr/bin/env bash
# smoke-cross.sh: prove that a toolkit root cross-compiles CUDA code for
# another CPU with the real nvcc (no wrapper involved).
#
# Usage: scripts/smoke-cross.sh [--target-root DIR] ROOT TARGETDIR CROSSCXX ARCH [NVCC_ARGS...]
#
#   ROOT       an x86_64 toolkit root (scripts/fetch-toolkits.sh --print-root X.Y)
#   TARGETDIR  sbsa-linux, aarch64-linux or ppc64le-linux
#   CROSSCXX   the cross host compiler (aarch64-linux-gnu-g++,
#              aarch64-linux-gnu-g++-11, powerpc64le-linux-gnu-g++, ...)
#   ARCH       the GPU architecture, sm_NN[a] (sm_90a, sm_87, sm_70)
#
# Default: ROOT/targets/TARGETDIR holds the target files and the build is
#   nvcc -ccbin CROSSCXX --target-directory TARGETDIR
#        -gencode arch=compute_NN,code=sm_NN -cudart static
# --target-root DIR: the target files live outside the toolkit, in DIR/{include,lib}
#   (fetch-toolkits.sh --print-target-root NAME), as on Nix. nvcc is then run
#   from a host-only view of ROOT (a temporary directory whose bin/ links to
#   ROOT/bin/*, with nvvm/ and targets/x86_64-linux but no targets/TARGETDIR),
#   without --target-directory (nvcc refuses one whose directory is missing)
#   and with -I DIR/include -L DIR/lib (13.x also -isystem DIR/include/cccl).
#
# Checks, in order: nvcc -dryrun puts the expected include directory on the
# host compiler's command line; the build succeeds; `file` calls the result
# an ELF executable for the target CPU; it runs under qemu-user with the
# cross sysroot and, there being no CUDA driver in it, cudaGetDeviceCount
# returns error 35 (cudaErrorInsufficientDriver) or 100 (cudaErrorNoDevice);
# cuobjdump --list-elf (ROOT/bin or $CACHE/tools) shows the sm_NN cubin.

set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
# shellcheck source=scripts/lib/cuobjdump.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/cuobjdump.sh"

die() { printf 'smoke-cross: error: %s\n' "$*" >&2; exit 1; }
usage() { die "usage: $0 [--target-root DIR] ROOT TARGETDIR CROSSCXX ARCH [NVCC_ARGS...]"; }

TROOT=
if [[ ${1:-} == --target-root ]]; then
  [[ $# -ge 2 ]] || usage
  TROOT=$(cd "$2" && pwd) || die "no such target root: $2"
  shift 2
fi
(($# >= 4)) || usage
ROOT=$(cd "$1" && pwd) || die "no such toolkit root: $1"
TDIR=$2 CXX=$3 ARCH=$4
shift 4

case $TDIR in
  sbsa-linux|aarch64-linux) QEMU=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu FILE_CPU="ARM aarch64" ;;
  ppc64le-linux) QEMU=qemu-ppc64le SYSROOT=/usr/powerpc64le-linux-gnu FILE_CPU="64-bit PowerPC" ;;
  *) die "unknown target directory $TDIR (sbsa-linux, aarch64-linux, ppc64le-linux)" ;;
esac
[[ $ARCH =~ ^sm_([0-9]+[a-z]?)$ ]] || die "ARCH must look like sm_87 or sm_90a, not $ARCH"
SM=${BASH_REMATCH[1]}
for t in "$CXX" "$QEMU" file; do
  command -v "$t" >/dev/null || die "$t not found (scripts/install-deps.sh installs it)"
done
[[ -d $SYSROOT/lib ]] || die "no cross sysroot at $SYSROOT (the cross g++ package provides it)"
[[ -x $ROOT/bin/nvcc ]] || die "$ROOT/bin/nvcc is missing or not executable"

work=$(mktemp -d "${TMPDIR:-/tmp}/nvcc-smoke-cross.XXXXXX")
trap 'rm -rf "$work"' EXIT

NVCC=$ROOT/bin/nvcc
target_args=(--target-directory "$TDIR")
expect_include=$ROOT/bin/../targets/$TDIR/include
mode="--target-directory $TDIR"
if [[ -z $TROOT ]]; then
  [[ -d $ROOT/targets/$TDIR ]] ||
    die "$ROOT has no targets/$TDIR (scripts/fetch-toolkits.sh --list names the cross targets that install it)"
else
  [[ -f $TROOT/include/cuda_runtime.h && -f $TROOT/lib/libcudart_static.a ]] ||
    die "$TROOT does not look like a target root (include/cuda_runtime.h, lib/libcudart_static.a)"
  # argv[0] decides where nvcc looks for nvcc.profile and TOP: a bin/ of
  # links to the real files gives a root without the target directory.
  view=$work/root
  mkdir -p "$view/bin" "$view/targets"
  for f in "$ROOT"/bin/*; do ln -s "$f" "$view/bin/"; done
  ln -s "$ROOT/nvvm" "$view/nvvm"
  ln -s "$ROOT/targets/x86_64-linux" "$view/targets/x86_64-linux"
  NVCC=$view/bin/nvcc
  target_args=(-I "$TROOT/include" -L "$TROOT/lib")
  [[ -d $TROOT/include/cccl ]] && target_args+=(-isystem "$TROOT/include/cccl")
  expect_include=$TROOT/include
  mode="standalone target root $TROOT"
fi

version_out=$("$NVCC" --version) || die "$NVCC --version failed"
nvcc_ver=$(sed -n 's/.*, V\([0-9.]*\).*/\1/p' <<<"$version_out")

# The README's example program: a kernel and host code that reports the CUDA error it gets without a GPU.
cp "$(dirname "${BASH_SOURCE[0]}")/../examples/hello.cu" "$work/smoke.cu"

cmd=("$NVCC" -ccbin "$CXX" "${target_args[@]}" -gencode "arch=compute_$SM,code=sm_$SM" -cudart static "$@")

# 1. nvcc's plan: the host compiler gets the target include directory.
dry=$("${cmd[@]}" -dryrun -o "$work/smoke" "$work/smoke.cu" 2>&1) || { echo "$dry" >&2; die "nvcc -dryrun failed"; }
grep -F "#\$ $CXX " <<<"$dry" | grep -qF -- "$expect_include" ||
  { echo "$dry" >&2; die "nvcc -dryrun does not give $CXX $expect_include"; }
target_dir_line=$(grep -o '_TARGET_DIR_=[^ ]*' <<<"$dry" | tail -1)

# 2. The build.
start=$(date +%s.%N)
"${cmd[@]}" -o "$work/smoke" "$work/smoke.cu" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; echo "command: ${cmd[*]} -o smoke smoke.cu" >&2; die "nvcc $nvcc_ver failed to cross-build for $TDIR"; }
build_s=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
size=$(stat -c %s "$work/smoke")

# 3. The binary is for the target CPU.
file_out=$(file -b "$work/smoke")
[[ $file_out == *ELF*"$FILE_CPU"* ]] || die "the result is not an ELF for $FILE_CPU: $file_out"

# 4. It runs under qemu and reaches the driver probe.
out=$("$QEMU" -L "$SYSROOT" "$work/smoke" 2>&1) || { echo "$out" >&2; die "the binary failed under $QEMU"; }
case $out in
  *"cuda error 35:"*|*"cuda error 100:"*) verdict="ran under $QEMU, no driver" ;;
  *"squared on the GPU"*) verdict="ran under $QEMU on a GPU (?)" ;;
  *) echo "$out" >&2; die "unexpected output under $QEMU" ;;
esac

# 5. The embedded device code.
cuobjdump=$(find_cuobjdump "$ROOT")
elf=
if [[ -n $cuobjdump ]]; then
  elf=$("$cuobjdump" --list-elf "$work/smoke" 2>&1) || { echo "$elf" >&2; die "cuobjdump --list-elf failed"; }
  grep -q "\.sm_$SM\." <<<"$elf" || { echo "$elf" >&2; die "no sm_$SM cubin in the binary"; }
  elf=$(sed -n 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/p' <<<"$elf" | sort -u | tr '\n' ' ')
  elf=${elf% }
fi

printf 'smoke-cross %s: nvcc %s, -ccbin %s, %s (%s), built in %ss, %s bytes\n' \
  "$ROOT" "$nvcc_ver" "$CXX" "$mode" "${target_dir_line:-_TARGET_DIR_ not shown}" "$build_s" "$size"
printf '  file: %s\n' "$file_out"
printf '  %s: %s\n' "$verdict" "$out"
[[ -z $elf ]] || printf '  device code (cuobjdump --list-elf): %s\n' "$elf"
