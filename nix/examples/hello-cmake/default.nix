# A small CMake CUDA derivation written with plain `stdenv`: no `effectiveStdenv`, no backendStdenv, no
# CMAKE_CUDA_HOST_COMPILER, no CMAKE_CUDA_ARCHITECTURES. The wrapped nvcc in nativeBuildInputs does the rest.
# The same file builds natively (./native.nix) and for Jetson from x86_64 (./jetson.nix).
{
  lib,
  stdenv,
  cmake,
  cudaPackages,
}:
stdenv.mkDerivation {
  pname = "hello-cuda";
  version = "0.1";

  src = ./.;
  # The program is the repository's example.
  postUnpack = ''
    cp ${../../../examples/hello.cu} "$sourceRoot/hello.cu"
  '';

  nativeBuildInputs = [
    cmake
    cudaPackages.nvcc-wrapped
  ];
  buildInputs = [ cudaPackages.cuda_cudart ];

  meta = {
    description = "examples/hello.cu built by CMake with nvcc-wrapper and plain stdenv";
    mainProgram = "hello";
    platforms = lib.platforms.linux;
  };
}
