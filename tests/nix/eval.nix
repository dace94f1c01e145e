# The configs makeNvccWrapper writes for each case, evaluated (nothing is built): tests/real/nix/ compares each
# file with the expected text, then runs `nvcc-wrapper explain` on it against real toolkits.
#
# `root`: a directory the test fills with what the stand-in packages' paths name (host-only views of real toolkits
# as `cuda_nvcc-X.Y`, empty executables for the compilers, which the wrapper must never run since every fact is
# recorded). `cache`: the real toolkit cache (target-roots/ for the cross builds' CUDA files).
{
  # A Nixpkgs `lib` directory: the real one, or the project's stand-in ./lib.
  nixpkgsLib,
  root,
  cache,
}:
let
  lib = import nixpkgsLib;

  package =
    name: _files: attrs:
    {
      type = "derivation";
      inherit name;
      outPath = "${root}/${name}";
    }
    // attrs;

  s = import ./stand-ins.nix { inherit lib package; };

  # Nixpkgs' stdenvNoCC.mkDerivation and runCommand: only passthru is read here, nothing is instantiated.
  stdenvNoCC.mkDerivation =
    f:
    let
      attrs = f (attrs // { finalPackage = result; });
      result = {
        type = "derivation";
        name = attrs.name or "${attrs.pname}-${attrs.version}";
        outPath = "${root}/${attrs.pname}-${attrs.version}";
      }
      // attrs.passthru;
    in
    result;
  runCommand = name: _env: _script: package name { } { };

  gcc =
    version: targetPrefix:
    s.wrapCC {
      cc = s.unwrappedGcc { inherit version targetPrefix; };
      inherit targetPrefix;
    };
  clang =
    version:
    s.wrapCC {
      cc = s.unwrappedClang { inherit version; };
      isClang = true;
    };

  nvccFor = version: s.cuda_nvcc { inherit version; };

  # makeNvccWrapper as a package set whose buildPackages has the GCCs a release may need, for the stdenv's target.
  makeNvccWrapper =
    targetPrefix:
    import ../../nix/nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper/package.nix {
      inherit lib;
      buildPackages = {
        inherit runCommand stdenvNoCC;
        nvcc-wrapper = package "nvcc-wrapper" { } { };
        gcc11 = gcc "11.5.0" targetPrefix;
        gcc13 = gcc "13.3.0" targetPrefix;
        gcc15 = gcc "15.1.0" targetPrefix;
      };
    };


  configOf = drv: drv.configToml;
in
lib.mapAttrs (_: configOf) {
  # GCC 13 and nvcc 12.4 (GCC up to 13): the stdenv compiler alone, no second GCC in the closure.
  native-in-range = makeNvccWrapper "" {
    cuda_nvcc = nvccFor "12.4";
    stdenv = s.stdenv { cc = gcc "13.3.0" ""; };
    cudaCapabilities = [
      "8.6"
      "8.9"
    ];
  };

  # GCC 14 is too new for 12.4: Nixpkgs' data brings GCC 13 as a candidate; the libstdc++ is still GCC 14's.
  native-stdenv-too-new = makeNvccWrapper "" {
    cuda_nvcc = nvccFor "12.4";
    stdenv = s.stdenv { cc = gcc "14.2.0" ""; };
    cudaCapabilities = [
      "8.6"
      "9.0a"
    ];
  };

  # A Clang 19 stdenv (too new for 12.4), its libstdc++ from GCC 14, with Clang 17 offered as well.
  clang-stdenv = makeNvccWrapper "" {
    cuda_nvcc = nvccFor "12.4";
    stdenv = s.stdenv { cc = clang "19.1.7"; };
    gccForLibs = s.unwrappedGcc { version = "14.2.0"; };
    extraCandidates = [ (clang "17.0.6") ];
    cudaCapabilities = [ "8.9" ];
    cudaForwardCompat = false;
  };

  # pkgsCross.aarch64-multiplatform with Jetson Orin: nvcc 12.4 and a GCC 14 cross stdenv.
  jetson-cross = makeNvccWrapper "aarch64-unknown-linux-gnu-" {
    cuda_nvcc = nvccFor "12.4";
    stdenv = s.stdenv {
      cc = gcc "14.2.0" "aarch64-unknown-linux-gnu-";
      hostPlatform = lib.systems.examples.aarch64-multiplatform;
    };
    cudaCapabilities = [ "8.7" ];
    hostRedistSystem = "linux-aarch64";
    targetCudaRoot = "${cache}/target-roots/jetson-12.4";
    # A stand-in for cuda_compat's compat/ (none is reachable here): a directory with a libcuda.so.
    cudaCompat = "${cache}/target-roots/jetson-12.4/lib/stubs";
  };

  # An Arm server (Grace Hopper) and Jetson Thor, both from the sbsa files of nvcc 13.0.
  sbsa-cross = makeNvccWrapper "aarch64-unknown-linux-gnu-" {
    cuda_nvcc = nvccFor "13.0";
    stdenv = s.stdenv {
      cc = gcc "14.2.0" "aarch64-unknown-linux-gnu-";
      hostPlatform = "aarch64-linux";
    };
    cudaCapabilities = [
      "9.0a"
      "11.0"
    ];
    hostRedistSystem = "linux-sbsa";
    targetCudaRoot = "${cache}/target-roots/sbsa-13.0";
  };

  # POWER9 with nvcc 12.4, the last release for ppc64le.
  ppc64le-cross = makeNvccWrapper "powerpc64le-unknown-linux-gnu-" {
    cuda_nvcc = nvccFor "12.4";
    stdenv = s.stdenv {
      cc = gcc "14.2.0" "powerpc64le-unknown-linux-gnu-";
      hostPlatform = "powerpc64le-linux";
    };
    cudaCapabilities = [ "7.0" ];
    targetCudaRoot = "${cache}/target-roots/ppc64le-12.4";
  };
}
