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

# FindCUDAToolkit searches the real toolkit (the wrapper's package has no headers or libraries).
addToSearchPathWithCustomDelimiter ";" CUDAToolkit_ROOT @cudaToolkitRoot@
export CUDAToolkit_ROOT

# Nixpkgs' setup-cuda-hook (propagated by the real cuda_nvcc) would add -DCMAKE_CUDA_HOST_COMPILER and export
# CUDAHOSTCXX: the wrapper takes either as the user's own choice of host compiler and chooses nothing. This switch,
# which that hook reads when it runs, keeps it off the compiler; what else that step did is done below.
declare -g dontSetupCUDAToolkitCompilers=1

# Whether the derivation chose its own architectures: in cmakeFlags (a string, or an array with structuredAttrs),
# cmakeFlagsArray, or CMake's CUDAARCHS.
nvccWrapperCmakeArchitecturesSet() {
    # shellcheck disable=SC2154
    [[ " ${cmakeFlags[*]-} ${cmakeFlagsArray[*]-} " =~ [[:space:]]-DCMAKE_CUDA_ARCHITECTURES[:=] ]] || [[ -n ${CUDAARCHS-} ]]
}

nvccWrapperPreConfigure() {
    # setup-cuda-hook's step also passed -Xfatbin=-compress-all unless the derivation sets dontCompressFatbin. The
    # wrapper compresses fatbins itself, with each release's best flags (`[gpu] compress-fatbin`); a flag here would
    # count as the user's choice and stop that, so the hook only hands the derivation's opt-out to the wrapper.
    if [[ -n ${dontCompressFatbin-} ]]; then
        export NVCC_WRAPPER_COMPRESS_FATBIN=0
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
