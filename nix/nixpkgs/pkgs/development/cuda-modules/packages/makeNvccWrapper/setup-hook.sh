# shellcheck shell=bash
# nvcc-wrapper's setup hook (makeNvccWrapper puts it in nix-support/setup-hook): make CMake, Meson and Makefiles run
# the wrapped nvcc, and keep every hook from fixing a host compiler behind its back. It exports what build systems
# read; it decides nothing (the wrapper chooses the host compiler, GPU targets and cross flags at each call).

# As a build tool only (nativeBuildInputs), as Nixpkgs' own CUDA hook; and once, however often it is propagated.
# shellcheck disable=SC2154
(("${hostOffset:-0}" == -1 && "${targetOffset:-0}" == 0)) || return 0
[[ -z ${nvccWrapperHookOnce-} ]] || return 0
declare -g nvccWrapperHookOnce=1

# The compiler CMake's CUDA language (CUDACXX) and Meson (NVCC) use; Makefiles find `nvcc` on PATH, where this
# package comes before the real one it propagates.
export CUDACXX=@out@/bin/nvcc
export NVCC=@out@/bin/nvcc

# `nvcc -lib` archives with `$(ccbin -print-prog-name=ar)`, which Nixpkgs' cc-wrapper answers with a bare `ar`; a
# cross build has only the target's prefixed one. This package's `ar` (the stdenv's bintools') comes last on PATH, so
# it is found only where the build has no `ar` of its own.
if [[ -d @out@/libexec/nvcc-wrapper/bin ]]; then
    export PATH="${PATH:+$PATH:}@out@/libexec/nvcc-wrapper/bin"
fi

# FindCUDAToolkit searches the real toolkit (the wrapper's package has no headers or libraries).
addToSearchPathWithCustomDelimiter ";" CUDAToolkit_ROOT @cudaToolkitRoot@
export CUDAToolkit_ROOT

# Nixpkgs' setup-cuda-hook (propagated by the real cuda_nvcc) would add -DCMAKE_CUDA_HOST_COMPILER and export
# CUDAHOSTCXX: the wrapper takes either as the user's own choice of host compiler and chooses nothing. This switch,
# which that hook reads when it runs, keeps it off the compiler; what else that step did is done below.
declare -g dontSetupCUDAToolkitCompilers=1

# Nixpkgs' drafted cuda_nvcc hook (NixOS/nixpkgs#545092) exports CUDAHOSTCXX and NVCC_CCBIN, when unset, as its
# backend compiler, where it is sourced; the wrapper would take either as the user's own choice and choose nothing.
# The unwrapped nvcc is this package's propagated input, so its hook is sourced after this one: what the two hold
# now is the derivation's own, kept; what differs at configure was exported by a hook after this one, and is taken
# back, with a line that says so. Whatever is kept as the caller's compiler is said too: a derivation that lists
# Nixpkgs' cuda_nvcc before this package has that hook sourced first, and keeps its compiler, visibly.
declare -g nvccWrapperOwnCUDAHOSTCXX=${CUDAHOSTCXX-} nvccWrapperOwnNVCC_CCBIN=${NVCC_CCBIN-}
declare -g nvccWrapperHadCUDAHOSTCXX=${CUDAHOSTCXX+1} nvccWrapperHadNVCC_CCBIN=${NVCC_CCBIN+1}

nvccWrapperTakeBackHostCompiler() {
    local var had own
    for var in CUDAHOSTCXX NVCC_CCBIN; do
        had=nvccWrapperHad$var own=nvccWrapperOwn$var
        if [[ ${!var+1} != "${!had}" || ${!var-} != "${!own}" ]]; then
            echo "nvcc-wrapper's setup hook: $var=${!var-} was exported by a setup hook sourced after it (Nixpkgs' cuda_nvcc's, NixOS/nixpkgs#545092): taken back, so that nvcc-wrapper chooses nvcc's host compiler; set $var in the derivation to choose one yourself" >&2
            if [[ -n ${!had} ]]; then
                export "$var=${!own}"
            else
                unset "$var"
            fi
        elif [[ -n ${!had} ]]; then
            echo "nvcc-wrapper's setup hook: $var=${!var} is the derivation's: kept, as the caller's choice of host compiler" >&2
        fi
    done
}
preConfigureHooks+=(nvccWrapperTakeBackHostCompiler)

# Whether the derivation chose its own architectures: in cmakeFlags (a string, or an array with structuredAttrs),
# cmakeFlagsArray, or CMake's CUDAARCHS.
nvccWrapperCmakeArchitecturesSet() {
    # shellcheck disable=SC2154
    [[ " ${cmakeFlags[*]-} ${cmakeFlagsArray[*]-} " =~ [[:space:]]-DCMAKE_CUDA_ARCHITECTURES[:=] ]] || [[ -n ${CUDAARCHS-} ]]
}

nvccWrapperPreConfigure() {
    # setup-cuda-hook's step also passed -Xfatbin=-compress-all unless the derivation sets dontCompressFatbin (Nixpkgs'
    # drafted nvcc wrapper also reads dontCompressCudaFatbins and NIX_CUDA_DONT_COMPRESS_FATBINS). The wrapper
    # compresses fatbins itself, with each release's best flags (`[gpu] compress-fatbin`); a flag here would count as
    # the user's choice and stop that, so the hook only hands the derivation's opt-out to the wrapper.
    if [[ -n ${dontCompressFatbin-}${dontCompressCudaFatbins-}${NIX_CUDA_DONT_COMPRESS_FATBINS-} ]]; then
        export NVCC_WRAPPER_COMPRESS_FATBIN=0
    fi

    # nvcc runs nvlink itself for device code links (-rdc, -dlink), and nvlink sees none of NIX_LDFLAGS, which
    # cc-wrapper gives the host linker only: a device library in another store path is then not found, silently
    # (measured with nvcc 12.4: "nvlink error: Undefined reference"). nvcc passes its own -L to both linkers: hand it
    # the same library directories, after the caller's own flags.
    local flag dirs=()
    # shellcheck disable=SC2154
    for flag in ${NIX_LDFLAGS-}; do
        case $flag in
        -L?*) dirs+=("$flag") ;;
        esac
    done
    if ((${#dirs[@]})); then
        export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }${dirs[*]}"
    fi

    # The capabilities, for CMake projects that do not name their own: CMake then passes exactly the targets the
    # wrapper would add (the wrapper computed this value at build time), and the wrapper respects them.
    local archs=@out@/nix-support/cmake-cuda-architectures
    if [[ -s $archs ]] && ! nvccWrapperCmakeArchitecturesSet; then
        local value
        read -r value <"$archs"
        appendToVar cmakeFlags "-DCMAKE_CUDA_ARCHITECTURES=$value"
        export CUDAARCHS="$value"
    fi
}
preConfigureHooks+=(nvccWrapperPreConfigure)

# Threads for nvcc from free job slots (docs/guide/threads.md). GNU make 4.4 (Nixpkgs' gnumake) is its own jobserver,
# so a Makefile build's CUDA calls share `make -j$NIX_BUILD_CORES`'s slots with nothing more. Nixpkgs' Ninja build
# phase runs `ninja -j$NIX_BUILD_CORES`, and Ninja ignores a jobserver when given -j: a derivation opts in with
# `nvccWrapperJobserver = true;`, and its Ninja build then runs under the wrapper's jobserver of $NIX_BUILD_CORES
# slots, shared by Ninja (1.13 or later, without -j) and nvcc's threads.
nvccWrapperNinjaBuildPhase() {
    runHook preBuild
    local flagsArray=()
    # shellcheck disable=SC2154,SC2206
    flagsArray=(${ninjaFlags-} "${ninjaFlagsArray[@]}")
    local cores=1
    # shellcheck disable=SC2154
    [[ -z ${enableParallelBuilding-} ]] || cores=${NIX_BUILD_CORES:-1}
    echoCmd 'build flags' "${flagsArray[@]}"
    @out@/bin/nvcc-wrapper jobserver -j "$cores" -- ninja "${flagsArray[@]}"
    runHook postBuild
}

nvccWrapperUseJobserver() {
    if [[ -n ${nvccWrapperJobserver-} && ${buildPhase-} == ninjaBuildPhase ]]; then
        buildPhase=nvccWrapperNinjaBuildPhase
    fi
}
preConfigureHooks+=(nvccWrapperUseJobserver)
