# `cudaPackages.nvcc-wrapped`: the wrapped nvcc of a CUDA package set, for `nativeBuildInputs`.
#
# Like `gcc` in a package set, it runs on the set's host platform and builds for the set's target platform: its
# stdenv is that of `targetPackages`, the set whose derivations put it in nativeBuildInputs. In a native set all
# are the same. In a cross set (pkgsCross.aarch64-multiplatform), a derivation's nativeBuildInputs get the copy of
# this attribute from the build-host set (Nixpkgs' splicing), which is then: the x86_64 nvcc and wrapper, for the
# cross stdenv of the aarch64 set, with that set's capabilities, and the target's CUDA headers and libraries joined
# as `[target] cuda-root`.
#
# A package of the CUDA package set (Nixpkgs calls every `packages/<name>/package.nix` in it; nix/overlay.nix does the
# same for a checkout). The nvcc it wraps is the set's `cuda_nvcc`, or `cuda_nvcc-unwrapped` where the set has one
# (when `cuda_nvcc` is itself this package: nix/overlay-backend-stdenv.nix).
{
  lib,
  pkgs,
  cudaMajorMinorVersion,
  cuda_nvcc,
  cuda_nvcc-unwrapped ? cuda_nvcc,
  # The set's name prefix ("cuda12.9"), where the set has one (Nixpkgs' of 2025-26).
  cudaNamePrefix ? null,
}:
let
  consumer = pkgs.targetPackages or pkgs;
  setName = "cudaPackages_" + lib.replaceStrings [ "." ] [ "_" ] cudaMajorMinorVersion;
  # The same CUDA release, in the consumer's package set: its capabilities and platform are what the derivations
  # being built ask for.
  consumerCuda = consumer.${setName} or consumer.cudaPackages;
  inherit (consumerCuda) flags;

  isCross = consumer.stdenv.hostPlatform.system != consumer.stdenv.buildPlatform.system;

  # The target's CUDA files in one directory (include/, lib/), for a cross build: a store-path nvcc has no
  # targets/<dir> of another CPU.
  targetCudaRoot = pkgs.symlinkJoin {
    name = "cuda-target-root-${consumer.stdenv.hostPlatform.config}-${cudaMajorMinorVersion}";
    paths = lib.unique (
      lib.concatMap
        (p: [
          (lib.getDev p)
          (lib.getLib p)
          (lib.getOutput "static" p)
        ])
        (
          [
            consumerCuda.cuda_cudart
            consumerCuda.cuda_cccl
          ]
          # The target's CRT headers, where Nixpkgs packages them apart (CUDA 13).
          ++ lib.optional (consumerCuda ? cuda_crt) consumerCuda.cuda_crt
        )
    );
  };
in
consumerCuda.makeNvccWrapper {
  cuda_nvcc = cuda_nvcc-unwrapped;
  inherit (consumer) stdenv;
  inherit cudaMajorMinorVersion cudaNamePrefix;
  inherit (flags) cudaCapabilities cudaForwardCompat;
  # Nixpkgs keeps it on backendStdenv (no tree read has `flags.hostRedistSystem`; kept as a fallback).
  hostRedistSystem = consumerCuda.backendStdenv.hostRedistSystem or flags.hostRedistSystem or null;
  targetCudaRoot = if isCross then targetCudaRoot else null;
  # Nixpkgs has cuda_compat only for Jetson builds; its libcuda.so.1 is in compat/ (where Nixpkgs' own
  # autoAddCudaCompatRunpath hook points the runpath).
  cudaCompat =
    if (flags.isJetsonBuild or false) && (consumerCuda.cuda_compat or null) != null then
      "${consumerCuda.cuda_compat}/compat"
    else
      null;
}
