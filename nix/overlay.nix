# The Nixpkgs overlay, step 1: adds `nvcc-wrapper` (the binary, built from this checkout), `makeNvccWrapper`, and to
# every CUDA package set `makeNvccWrapper` and `nvcc-wrapped`, so that a derivation needs only plain `stdenv` and
# `cudaPackages.nvcc-wrapped` in nativeBuildInputs. Nothing existing changes, so nothing is rebuilt: only what uses
# `nvcc-wrapped` builds.
#
#   import <nixpkgs> { overlays = [ (import ./nix/overlay.nix) ]; }
#
# The packages are the files of the change set for Nixpkgs (./nixpkgs/, at the paths they would have there), called
# as Nixpkgs would call them; only the binary's source differs (./package.nix: this checkout, not a release).
#
# Step 2, `./overlay-backend-stdenv.nix`, is opt-in: it makes `cudaPackages.backendStdenv` plain `stdenv` and
# `cudaPackages.cuda_nvcc` the wrapped nvcc, so existing `effectiveStdenv` code keeps working unchanged.
final: prev:
let
  cudaModules = ./nixpkgs/pkgs/development/cuda-modules/packages;
in
{
  nvcc-wrapper = final.callPackage ./package.nix { };

  makeNvccWrapper = final.callPackage (cudaModules + "/makeNvccWrapper/package.nix") { };
}
# Every CUDA package set (cudaPackages, cudaPackages_12_4, ...) gets these (./extend-cuda.nix says how).
// import ./extend-cuda.nix prev (
  finalCuda: prevCuda: {
    # NVIDIA's nvcc as Nixpkgs builds it, kept under its own name for when step 2 takes `cuda_nvcc`.
    cuda_nvcc-unwrapped = prevCuda.cuda_nvcc;
    makeNvccWrapper = finalCuda.callPackage (cudaModules + "/makeNvccWrapper/package.nix") { };
    nvcc-wrapped = finalCuda.callPackage (cudaModules + "/nvcc-wrapped/package.nix") { };
  }
)
