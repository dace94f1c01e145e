#!/usr/bin/env bash
# CMake on a GPU machine (issue 15): tests/real/cmake-project configured with the wrapper as CMAKE_CUDA_COMPILER,
# no host compiler given, built with Ninja and run, for the GPU target settings a user picks:
#   1. CMAKE_CUDA_ARCHITECTURES=native under `respect`: nvcc's own `-arch=native`, the machine's GPU;
#   2. native under `replace`, capabilities 8.6;9.0a: the wrapper's targets instead;
#   3. OFF, capabilities 8.6;9.0a: CMake passes no target, the wrapper adds its own.
# Each build's objects are listed with cuobjdump and the program must compute 41 on the GPU.
#
#   tests/gpu/cmake.sh WRAPPER [NVCC] [CMAKE]
#
# Exit status: the number of failed checks.
set -u
WRAPPER=$(realpath "${1:?usage: cmake.sh WRAPPER [NVCC] [CMAKE]}")
NVCC=${2:-/usr/local/cuda/bin/nvcc}
CMAKE=${3:-cmake}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
CUOBJDUMP=${CUOBJDUMP:-$(dirname "$NVCC")/cuobjdump}
failures=0

mkdir -p "$WORK/bin"
ln -s "$WRAPPER" "$WORK/bin/nvcc"

# The distinct machine code of a library or program: "sm_86 sm_90a".
machine_code() { # FILE
    "$CUOBJDUMP" "$1" 2>/dev/null | awk '/^Fatbin [a-z]+ code:/ { kind = $2 } /^arch = / && kind == "elf" { print $3 }' |
        sort -u | paste -sd' '
}

build() { # NAME ARCH-FLAGS-POLICY CAPABILITIES CMAKE-DEFINE: configure, build, list and run
    local name=$1 policy=$2 caps=$3 define=$4 dir="$WORK/$1"
    RESULT_CODE='' RESULT_RUN=''
    printf 'nvcc = "%s"\n[gpu]\narch-flags = "%s"\n' "$NVCC" "$policy" > "$WORK/$name.toml"
    echo "== $name: arch-flags $policy, capabilities '${caps:-none}', $define"
    NVCC_WRAPPER_CONFIG="$WORK/$name.toml" NVCC_WRAPPER_CAPABILITIES="$caps" \
        "$CMAKE" -S "$HERE/../real/cmake-project" -B "$dir" -G Ninja -DCMAKE_CUDA_COMPILER="$WORK/bin/nvcc" \
        "$define" > "$dir.configure.log" 2>&1 &&
        NVCC_WRAPPER_CONFIG="$WORK/$name.toml" NVCC_WRAPPER_CAPABILITIES="$caps" \
            "$CMAKE" --build "$dir" > "$dir.build.log" 2>&1
    local status=$?
    grep -E 'probe: id=' "$dir.configure.log"
    if [[ $status != 0 ]]; then
        tail -n 20 "$dir.configure.log" "$dir.build.log"
        echo "FAIL: $name builds"
        failures=$((failures + 1))
        return
    fi
    grep -m1 -oE -- '(-arch=native|--generate-code=[^ ]+|-gencode=[^ ]+)( -gencode=[^ ]+)*' "$dir.build.log" | head -1
    RESULT_CODE=$(machine_code "$dir/libkern.a")
    RESULT_RUN=$("$dir/app" 2>&1)
    echo "libkern.a holds: $RESULT_CODE"
    echo "runs: $RESULT_RUN"
}

check() { # NAME WANT GOT
    if [[ $3 =~ $2 ]]; then echo "PASS: $1"; else echo "FAIL: $1 (got '$3', wanted /$2/)"; failures=$((failures + 1)); fi
}

echo "== machine"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
"$NVCC" --version | tail -1
"$CMAKE" --version | head -1
echo

build native-respect respect "8.6;9.0a" -DCMAKE_CUDA_ARCHITECTURES=native
check "native under respect: the machine's GPU (sm_90 on Hopper)" '^sm_90$' "$RESULT_CODE"
check "native under respect: the kernels ran" 'value 41$' "$RESULT_RUN"

build native-replace replace "8.6;9.0a" -DCMAKE_CUDA_ARCHITECTURES=native
check "native under replace: the configured capabilities" '^sm_86 sm_90a$' "$RESULT_CODE"
check "native under replace: the kernels ran (the sm_90a code)" 'value 41$' "$RESULT_RUN"

build off respect "8.6;9.0a" -DCMAKE_CUDA_ARCHITECTURES=OFF
check "OFF: exactly the configured capabilities" '^sm_86 sm_90a$' "$RESULT_CODE"
check "OFF: the kernels ran" 'value 41$' "$RESULT_RUN"

echo "failed checks: $failures"
exit "$failures"
