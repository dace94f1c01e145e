# nix-build nix/examples/jetson.nix: the same CMake example cross-compiled on x86_64 for Jetson Orin (aarch64,
# capability 8.7). The cross set's derivation gets, through Nixpkgs' splicing, the x86_64 nvcc wrapped for the
# aarch64 cross stdenv, with the Jetson CUDA files as the target's.
{
  nixpkgs ? <nixpkgs>,
}:
let
  pkgs = import nixpkgs {
    overlays = [ (import ../overlay.nix) ];
    config = {
      allowUnfree = true;
      cudaSupport = true;
      cudaCapabilities = [ "8.7" ];
    };
  };
in
pkgs.pkgsCross.aarch64-multiplatform.callPackage ./hello-cmake { }
