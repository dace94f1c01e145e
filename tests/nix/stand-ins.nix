# Stand-ins for the parts of Nixpkgs that are not in `lib` (no Nixpkgs tree is needed to test nix/): cc-wrapper
# packages, a stdenv, the unwrapped GCC and its `lib` output, and `cuda_nvcc`. Attribute names follow Nixpkgs' own
# (cc-wrapper's passthru `cc`, `isClang`, `isGNU`, `targetPrefix`; stdenv's `cc`, `buildPlatform`, `hostPlatform`),
# so that nix/ reads them exactly as it would read Nixpkgs'.
#
# `package name attrs` makes a package: for evaluation, a derivation-shaped attribute set whose outPath is a
# directory the test prepares (no store path is realised); for realisation, a real derivation (see realise.nix).
{ lib, package }:
rec {
  platform = lib.systems.elaborate;

  # The unwrapped GCC: `version`, and its libraries (libstdc++) in the `lib` output, as Nixpkgs' gcc.
  unwrappedGcc =
    {
      version,
      targetPrefix ? "",
      files ? { },
      libFiles ? { },
    }:
    package "${targetPrefix}gcc-${version}" files {
      pname = "${targetPrefix}gcc";
      inherit version;
      lib = package "${targetPrefix}gcc-${version}-lib" libFiles { };
    };

  # cc-wrapper's result: `bin/${targetPrefix}g++` (or clang++), and passthru `cc`, `isClang`, `isGNU`,
  # `targetPrefix`; its version is the wrapped compiler's.
  wrapCC =
    {
      cc,
      isClang ? false,
      targetPrefix ? "",
      files ? { },
      # bintools-wrapper: `bin/${targetPrefix}ar` and the rest; null: none recorded.
      bintools ? null,
    }:
    package "${cc.pname}-wrapper-${cc.version}" files (
      {
        inherit cc isClang targetPrefix;
        isGNU = !isClang;
        inherit (cc) version;
      }
      // (if bintools == null then { } else { inherit bintools; })
    );

  unwrappedClang =
    {
      version,
      files ? { },
    }:
    package "clang-${version}" files {
      pname = "clang";
      inherit version;
    };

  # A stdenv as makeNvccWrapper reads it. Platforms are lib.systems.elaborate'd, as Nixpkgs' are.
  stdenv =
    {
      cc,
      buildPlatform ? "x86_64-linux",
      hostPlatform ? buildPlatform,
    }:
    {
      inherit cc;
      buildPlatform = platform buildPlatform;
      hostPlatform = platform hostPlatform;
      targetPlatform = platform hostPlatform;
    };

  # `cudaPackages.cuda_nvcc`: a toolkit root with bin/nvcc (outputs are not split here, so getBin/getDev give it).
  cuda_nvcc =
    {
      version,
      files ? { },
    }:
    package "cuda_nvcc-${version}" files {
      pname = "cuda_nvcc";
      inherit version;
    };
}
