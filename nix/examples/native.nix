# nix-build nix/examples/native.nix: the CMake example for this machine, with Nixpkgs' default stdenv (whatever
# GCC it has, newer than nvcc accepts or not).
{
  nixpkgs ? <nixpkgs>,
  cudaCapabilities ? [ "8.6" "8.9" ],
}:
let
  pkgs = import nixpkgs {
    overlays = [ (import ../overlay.nix) ];
    config = {
      allowUnfree = true;
      cudaSupport = true;
      inherit cudaCapabilities;
    };
  };
in
pkgs.callPackage ./hello-cmake { }
