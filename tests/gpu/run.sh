#!/usr/bin/env bash
# GPU validation of the capability rules, on a Hopper machine (H100/H200) with NVIDIA's nvcc, through the wrapper.
#
#   tests/gpu/run.sh WRAPPER [NVCC] [OUT_DIR]
#
# WRAPPER is an x86-64 build of nvcc-wrapper (cargo build --release); NVCC defaults to /usr/local/cuda/bin/nvcc.
# It installs WRAPPER as `nvcc`, then builds tests/gpu/probe.cu for several capability sets and runs each:
#   1. 9.0a: the sm_90a-only branch (setmaxnreg, wgmma.fence) runs and gives the right answer; the same source
#      without its guard does not build for plain 9.0 (so the branch really needs sm_90a).
#   2. 8.0 with forward compat: no sm_90 code inside, so it runs through the driver's JIT of compute_80 PTX
#      (and fails with the JIT disabled, which proves it).
#   3. 8.0 without forward compat: fails with "no kernel image is available".
#   4. a capability the release cannot build is refused before nvcc runs.
#   5. device LTO across two files (examples/device-lto): LTO intermediates in the objects, machine code from the
#      device link, the cross-file call inlined, and the program runs; PREBUILT_DIR's programs (the same build by
#      other releases, made elsewhere) run too.
#   6. reproducible builds, on by default: the programs of 1, 2 and 5 built twice (other directories, pids and
#      TMPDIRs) are the same bytes, and they run; with the feature off two builds differ.
# cuobjdump lists what each binary embeds. Exit status: the number of failed checks.
set -u
WRAPPER=$(realpath "${1:?usage: run.sh WRAPPER [NVCC] [OUT_DIR]}")
NVCC=${2:-/usr/local/cuda/bin/nvcc}
OUT_DIR=${3:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
CUOBJDUMP=${CUOBJDUMP:-$(dirname "$NVCC")/cuobjdump}
failures=0

mkdir -p "$WORK/bin" "$OUT_DIR"
ln -s "$WRAPPER" "$WORK/bin/nvcc"
printf 'nvcc = "%s"\n' "$NVCC" > "$WORK/config.toml"
export PATH="$WORK/bin:$PATH" NVCC_WRAPPER_CONFIG="$WORK/config.toml"
cp "$HERE/probe.cu" "$WORK/"
cd "$WORK" || exit 99

# What a binary embeds, as a set: "cubin sm_90a ptx sm_90". cuobjdump names PTX after the real architecture of its
# virtual one (compute_90 PTX is `X.1.sm_90.ptx`), and an executable holds a second, empty cubin per architecture
# from the device link, so only the distinct architectures count.
embedded() { # FILE
    "$CUOBJDUMP" --list-elf --list-ptx "$1" 2>/dev/null |
        sed -nE 's/^(ELF|PTX) file +[0-9]+: .*\.(sm_[0-9]+[af]?)\.(cubin|ptx)$/\3 \2/p' | sort -u | paste -sd' '
}

export -f embedded
export CUOBJDUMP

check() { # NAME EXPECTED-STATUS PATTERN COMMAND...: run, show, and check the status and the output
    # EXPECTED-STATUS "fail" accepts any failure (nvcc exits 255 when ptxas fails, 1 for its own errors).
    local name=$1 want=$2 pattern=$3; shift 3
    echo "\$ $*"
    local text status
    text=$("$@" 2>&1); status=$?
    echo "$text"
    if [[ ($status == "$want" || ($want == fail && $status != 0)) && $text =~ $pattern ]]; then
        echo "PASS: $name"
    else
        echo "FAIL: $name (status $status, wanted $want and /$pattern/)"
        failures=$((failures + 1))
    fi
    echo
}

echo "== machine"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
"$NVCC" --version | tail -2
echo

echo "== 1. capability 9.0a: Hopper-only instructions"
check "gencode 9.0a against 13.0" 0 'compute_90a,code=sm_90a' "$WRAPPER" gencode --cuda-version 13.0 9.0a
check "build 9.0a" 0 '' env NVCC_WRAPPER_CAPABILITIES=9.0a NVCC_WRAPPER_LOG=debug nvcc -o p90a probe.cu
check "embeds sm_90a code only" 0 '^cubin sm_90a$' embedded p90a
check "9.0a runs the sm_90a branch" 0 'answer is right; branch 9001 ran' ./p90a
check "without the guard, plain 9.0 cannot assemble it" fail 'setmaxnreg|wgmma' \
    env NVCC_WRAPPER_CAPABILITIES=9.0 nvcc -DNO_GUARD -o p90 probe.cu
check "the model: nvcc's own -arch=sm_90a embeds sm_90a code, compute_90 and compute_90a PTX" 0 \
    '^cubin sm_90a ptx sm_90 ptx sm_90a$' bash -c "nvcc -arch=sm_90a -c probe.cu -o native.o && embedded native.o"
check "build 9.0a with forward compat" 0 '' env NVCC_WRAPPER_CAPABILITIES=9.0a NVCC_WRAPPER_FORWARD_COMPAT=1 nvcc -o p90a-fc probe.cu
check "9.0a + forward compat embeds sm_90a code and compute_90 PTX, no compute_90a PTX" 0 '^cubin sm_90a ptx sm_90$' \
    embedded p90a-fc
check "9.0a + forward compat still runs the sm_90a code" 0 'branch 9001 ran' ./p90a-fc

echo "== 2. capability 8.0 with forward compat: PTX JIT on sm_90"
check "build 8.0 + forward compat" 0 '' env NVCC_WRAPPER_CAPABILITIES=8.0 NVCC_WRAPPER_FORWARD_COMPAT=1 nvcc -o p80-fc probe.cu
check "embeds sm_80 code and compute_80 PTX" 0 '^cubin sm_80 ptx sm_80$' embedded p80-fc
check "8.0 + forward compat runs on sm_90 via PTX" 0 'answer is right; branch 800 ran' ./p80-fc
# The driver keeps JIT results in its compute cache, and uses them even with the JIT off: turn the cache off too.
check "and only via the PTX JIT" 2 'launch failed' env CUDA_CACHE_DISABLE=1 CUDA_DISABLE_PTX_JIT=1 ./p80-fc

echo "== 3. capability 8.0 without forward compat"
check "build 8.0" 0 '' env NVCC_WRAPPER_CAPABILITIES=8.0 nvcc -o p80 probe.cu
check "embeds sm_80 code only" 0 '^cubin sm_80$' embedded p80
check "8.0 alone has no image for sm_90" 2 'no kernel image is available' ./p80

echo "== 4. a release that cannot build the request"
check "10.1 on nvcc 13.0 is refused before nvcc runs" 65 '10.1 was last accepted by nvcc 12.9' \
    env NVCC_WRAPPER_CAPABILITIES=10.1 nvcc -o never probe.cu

echo "== 5. device LTO across files (issue 14): -dc -dlto, -dlink -dlto, link"
# Every fatbin entry of a file, in order: "lto sm_86" (a device-LTO intermediate), "ptx sm_90", "cubin sm_90a".
entries() { # FILE
    "$CUOBJDUMP" "$1" 2>/dev/null | sed -nE 's/^Fatbin (nvvm|ptx|elf) code:/\1/p; s/^arch = //p' | paste -d' ' - - |
        sed 's/^nvvm/lto/; s/^elf/cubin/' | paste -sd' '
}
calls() { # FILE: how many CALL instructions its sm_90a code has
    "$CUOBJDUMP" -sass -arch sm_90a "$1" 2>/dev/null | grep -c CALL || true
}
export -f entries calls
cp "$HERE/../../examples/device-lto/main.cu" "$HERE/../../examples/device-lto/square.cu" .
export NVCC_WRAPPER_CAPABILITIES="8.6;9.0a" NVCC_WRAPPER_FORWARD_COMPAT=1
check "compile main.cu with -dc -dlto" 0 '' nvcc -dc -dlto main.cu -o main.o
check "compile square.cu with -dc -dlto" 0 '' nvcc -dc -dlto square.cu -o square.o
check "the objects hold LTO intermediates for sm_86 and sm_90a, and no machine code" 0 \
    '^lto sm_86 lto sm_90a ptx sm_90$' entries square.o
check "device link with -dlto" 0 '' nvcc -dlink -dlto main.o square.o -o dlink.o
check "the device link holds machine code for sm_86 and sm_90a" 0 '^cubin sm_86 cubin sm_90a$' entries dlink.o
check "LTO inlined square_of across the files: no CALL in the sm_90a code" 0 '^0$' calls dlink.o
check "host link of the objects through the wrapper" 0 '' nvcc -dlto main.o square.o -o lto-program
check "the device-LTO program runs on the GPU" 0 'squared on the GPU with device LTO: 1 4 9 16' ./lto-program
check "the control, without LTO: separate compilation keeps the call" 0 '' nvcc -dc main.cu -o plain.o
check "the control's kernel calls square_of" 0 '^[1-9]' calls plain.o
unset NVCC_WRAPPER_CAPABILITIES NVCC_WRAPPER_FORWARD_COMPAT
# Programs built elsewhere (another nvcc release, on the development machine) by the same steps, to run here.
for program in ${PREBUILT_DIR:+"$PREBUILT_DIR"/*}; do
    check "prebuilt $(basename "$program") runs on the GPU" 0 'squared on the GPU with device LTO: 1 4 9 16' "$program"
done

echo "== 6. reproducible builds (issue 23): on by default, and what they build still runs"
# Every build above already went through the reproducible-builds flags (the config leaves them on). Here the same
# programs are built twice more, in two directories with the same relative paths, each with a TMPDIR of its own
# (so every nvcc has another pid and another temporary directory), and the bytes are compared: sm_90a code, the
# PTX a JIT compiles, and device LTO with relocatable device code.
check "explain shows the flags" 0 'objtemp \(before your arguments\): `reproducible`' \
    "$WRAPPER" explain -- -c probe.cu -o probe.o
build_in() { # DIR: build the three programs in DIR, its own TMPDIR
    mkdir -p "$1/tmp" && cp probe.cu main.cu square.cu "$1/" && cd "$1" || return 1
    export TMPDIR=$PWD/tmp
    NVCC_WRAPPER_CAPABILITIES=9.0a nvcc -c probe.cu -o p90a.o && nvcc -o p90a p90a.o &&
        NVCC_WRAPPER_CAPABILITIES=8.0 NVCC_WRAPPER_FORWARD_COMPAT=1 nvcc -c probe.cu -o p80-fc.o &&
        nvcc -o p80-fc p80-fc.o &&
        NVCC_WRAPPER_CAPABILITIES="8.6;9.0a" nvcc -dc -dlto main.cu -o main.o &&
        NVCC_WRAPPER_CAPABILITIES="8.6;9.0a" nvcc -dc -dlto square.cu -o square.o &&
        NVCC_WRAPPER_CAPABILITIES="8.6;9.0a" nvcc -dlto main.o square.o -o lto-program
}
export -f build_in
check "build in r1" 0 '' bash -c "build_in $WORK/r1"
check "build again in r1 (device LTO is tied to nvcc's working directory: docs/nvcc-facts.md)" 0 '' \
    bash -c "cp -r $WORK/r1 $WORK/r1-first && rm -rf $WORK/r1/tmp && build_in $WORK/r1"
check "build in r2" 0 '' bash -c "build_in $WORK/r2"
same() { # A B FILE...: every FILE the same bytes in A and B
    local a=$1 b=$2 f; shift 2
    for f in "$@"; do cmp "$a/$f" "$b/$f" || return 1; done
    echo "identical: $*"
}
export -f same
check "two directories, other pids and TMPDIRs: identical objects and programs" 0 'identical' \
    same "$WORK/r1" "$WORK/r2" p90a.o p90a p80-fc.o p80-fc
check "one directory twice: identical device-LTO objects and program" 0 'identical' \
    same "$WORK/r1-first" "$WORK/r1" main.o square.o lto-program
check "the reproducible 9.0a program runs the sm_90a branch" 0 'branch 9001 ran' "$WORK/r2/p90a"
check "the reproducible 8.0 program runs through the PTX JIT" 0 'branch 800 ran' "$WORK/r2/p80-fc"
check "the reproducible device-LTO program runs" 0 'squared on the GPU with device LTO: 1 4 9 16' "$WORK/r1/lto-program"
check "with the feature off, two builds differ (the control)" 1 'differ' bash -c "
    for d in off1 off2; do mkdir -p $WORK/\$d/tmp && cp probe.cu $WORK/\$d/ &&
        (cd $WORK/\$d && TMPDIR=\$PWD/tmp NVCC_WRAPPER_REPRODUCIBLE=0 NVCC_WRAPPER_CAPABILITIES=9.0a nvcc -c probe.cu -o p.o) || exit 2
    done; cmp $WORK/off1/p.o $WORK/off2/p.o"

echo "failed checks: $failures"
exit "$failures"
