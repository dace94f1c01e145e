# The Nixpkgs overlay, step 1: adds `nvcc-wrapper` (the binary), `makeNvccWrapper`, and to every CUDA package set
# `nvcc-wrapped`, so that a derivation needs only plain `stdenv` and `cudaPackages.nvcc-wrapped` in
# nativeBuildInputs. Nothing existing changes, so nothing is rebuilt: only what uses `nvcc-wrapped` builds.
#
#   import <nixpkgs> { overlays = [ (import ./nix/overlay.nix) ]; }
#
# Step 2, `./overlay-backend-stdenv.nix`, is opt-in: it makes `cudaPackages.backendStdenv` plain `stdenv` and
# `cudaPackages.cuda_nvcc` the wrapped nvcc, so existing `effectiveStdenv` code keeps working unchanged.
final: prev:
{
  nvcc-wrapper = final.callPackage ./package.nix { };

  makeNvccWrapper = final.callPackage ./make-nvcc-wrapper.nix { };
}
# Every CUDA package set (cudaPackages, cudaPackages_12_4, ...) gets these (./extend-cuda.nix says how).
// import ./extend-cuda.nix prev (
  finalCuda: prevCuda: {
    # NVIDIA's nvcc as Nixpkgs builds it, kept under its own name for when step 2 takes `cuda_nvcc`.
    cuda_nvcc-unwrapped = prevCuda.cuda_nvcc;
    nvcc-wrapped = finalCuda.callPackage ./cuda-nvcc-wrapped.nix { };
  }
)
