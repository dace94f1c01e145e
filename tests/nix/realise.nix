# makeNvccWrapper realised with Nix over stand-in packages that are this machine's real toolchains: each stand-in is a
# derivation of symlinks into a real toolkit (a host-only view, as a store path has no targets/ of another CPU), a
# real Debian compiler, or a real cross target's CUDA files, laid out as the Nixpkgs package it stands for. The
# wrapper binary is the one cargo built, copied into the store by content.
#
# Built with plain `derivation`s (this Nix cannot fetch Nixpkgs): as root, `nix-build --option sandbox false
# --option build-users-group ""`.
{
  # A Nixpkgs `lib` directory: the real one, or the project's stand-in ./lib.
  nixpkgsLib,
  # The real toolkit cache (scripts/fetch-toolkits.sh): toolkits/X.Y, target-roots/NAME.
  cache,
  # The nvcc-wrapper executable to package.
  wrapperExe,
  # What this machine's compilers report (-dumpfullversion), so the stand-ins record true facts.
  gcc12Version,
  gcc11Version,
  crossGcc12Version,
}:
let
  lib = import nixpkgsLib;
  system = builtins.currentSystem;

  # A derivation with a shell script (bash -e, so a failing step fails the build).
  shellDerivation =
    name: env: script:
    derivation (
      env
      // {
        inherit name system;
        builder = "/bin/bash";
        args = [
          "-ec"
          ''
            PATH=/usr/bin:/bin
            ${script}
          ''
        ];
      }
    );

  # Nixpkgs' runCommand, as far as the tests use it: env becomes the builder's environment, with the `bin/` of its
  # nativeBuildInputs first on PATH; passthru and meta stay on the result.
  runCommand =
    name: env: script:
    shellDerivation name (removeAttrs env [
      "passthru"
      "meta"
    ]) (
      lib.concatMapStrings (input: ''
        PATH=${input}/bin:$PATH
      '') (lib.reverseList (env.nativeBuildInputs or [ ]))
      + script
    )
    // env.passthru or { }
    // {
      meta = env.meta or { };
    };

  # Nixpkgs' stdenvNoCC.mkDerivation, as far as makeNvccWrapper uses it: a function of finalAttrs (finalPackage
  # included); no unpacking; the install phase, then what stdenv's fixup phase does with `setupHook` (substituteAll:
  # each `@name@` of a lower-case attribute, and `@out@`) and `propagatedBuildInputs`
  # (nix-support/propagated-build-inputs), then the install check; passthru and meta stay on the result.
  stdenvNoCC.mkDerivation =
    f:
    let
      attrs = f (attrs // { finalPackage = result; });
      phaseAttrs = [
        "passthru"
        "meta"
        "pname"
        "version"
        "setupHook"
        "propagatedBuildInputs"
        "installPhase"
        "installCheckPhase"
        "doInstallCheck"
        "dontUnpack"
      ];
      substituted = lib.filter (
        name: builtins.match "[a-z][a-zA-Z0-9_]*" name != null && !(lib.elem name phaseAttrs)
      ) (lib.attrNames attrs);
      hook =
        builtins.replaceStrings
          ([ "@out@" ] ++ map (name: "@${name}@") substituted)
          ([ (builtins.placeholder "out") ] ++ map (name: toString attrs.${name}) substituted)
          (builtins.readFile attrs.setupHook);
      drv =
        shellDerivation (attrs.name or "${attrs.pname}-${attrs.version}")
          (
            removeAttrs attrs phaseAttrs
            // {
              setupHookText = hook;
              propagated = lib.concatMapStringsSep " " toString attrs.propagatedBuildInputs;
              passAsFile = attrs.passAsFile or [ ] ++ [ "setupHookText" ];
            }
          )
          ''
            runHook() { :; }
            ${attrs.installPhase}
            mkdir -p "$out/nix-support"
            cp "$setupHookTextPath" "$out/nix-support/setup-hook"
            echo "$propagated" > "$out/nix-support/propagated-build-inputs"
            ${lib.optionalString (attrs.doInstallCheck or false) attrs.installCheckPhase}
          '';
      result = drv // attrs.passthru // { inherit (attrs) passthru meta; };
    in
    result;

  # A package of symlinks: `files` maps a path in $out to what it points at.
  package =
    name: files: attrs:
    shellDerivation name { } (
      lib.concatStrings (
        lib.mapAttrsToList (path: target: ''
          mkdir -p "$(dirname "$out/${path}")"
          ln -s ${lib.escapeShellArg target} "$out/${path}"
        '') files
      )
      + ''
        mkdir -p "$out"
      ''
    )
    // attrs;

  s = import ./stand-ins.nix { inherit lib package; };

  # nvcc-wrapper as a package: bin/nvcc-wrapper, the binary copied into the store by content.
  nvcc-wrapper = package "nvcc-wrapper" {
    "bin/nvcc-wrapper" = builtins.path {
      path = /. + wrapperExe;
      name = "nvcc-wrapper-exe";
    };
  } { };

  # cuda_nvcc as a store path holds it: bin/, nvvm/, the host's target directory and include/lib; no other targets/.
  nvccView =
    release:
    let
      top = "${cache}/toolkits/${release}";
      bin = lib.mapAttrs' (name: _: lib.nameValuePair "bin/${name}" "${top}/bin/${name}") (builtins.readDir "${top}/bin");
    in
    s.cuda_nvcc {
      version = release;
      files = bin // {
        "nvvm" = "${top}/nvvm";
        "targets/x86_64-linux" = "${top}/targets/x86_64-linux";
        "include" = "${top}/targets/x86_64-linux/include";
        "lib" = "${top}/targets/x86_64-linux/lib";
        "lib64" = "${top}/targets/x86_64-linux/lib";
      };
    };

  # Debian's GCC laid out as Nixpkgs' gcc: lib/gcc/<Nix triple>/<version> (cc-wrapper's gcc-install-dir) and the lib
  # output's libstdc++.so.6 (for a cross GCC under <triple>/lib).
  gccStandIn =
    {
      version,
      targetPrefix ? "",
      triple,
      program,
      installDir,
      libstdcxx,
      archiver,
    }:
    s.wrapCC {
      inherit targetPrefix;
      cc = s.unwrappedGcc {
        inherit version targetPrefix;
        files."lib/gcc/${triple}/${version}" = installDir;
        libFiles."${lib.optionalString (targetPrefix != "") "${triple}/"}lib/libstdc++.so.6" = libstdcxx;
      };
      files."bin/${targetPrefix}g++" = program;
      bintools = package "${targetPrefix}binutils-wrapper" { "bin/${targetPrefix}ar" = archiver; } { };
    };

  gcc12 = gccStandIn {
    version = gcc12Version;
    triple = "x86_64-unknown-linux-gnu";
    program = "/usr/bin/g++-12";
    installDir = "/usr/lib/gcc/x86_64-linux-gnu/12";
    libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    archiver = "/usr/bin/ar";
  };
  gcc11 = gccStandIn {
    version = gcc11Version;
    triple = "x86_64-unknown-linux-gnu";
    program = "/usr/bin/g++-11";
    installDir = "/usr/lib/gcc/x86_64-linux-gnu/11";
    libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    archiver = "/usr/bin/ar";
  };
  aarch64Gcc12 = gccStandIn {
    version = crossGcc12Version;
    targetPrefix = "aarch64-unknown-linux-gnu-";
    triple = "aarch64-unknown-linux-gnu";
    program = "/usr/bin/aarch64-linux-gnu-g++-12";
    installDir = "/usr/lib/gcc-cross/aarch64-linux-gnu/12";
    libstdcxx = "/usr/aarch64-linux-gnu/lib/libstdc++.so.6";
    archiver = "/usr/bin/aarch64-linux-gnu-ar";
  };

  makeNvccWrapper = import ../../nix/nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper/package.nix {
    inherit lib;
    buildPackages = {
      inherit
        runCommand
        stdenvNoCC
        nvcc-wrapper
        gcc11
        ;
    };
  };

  native = s.stdenv { cc = gcc12; };

  targetRoot =
    name:
    package "cuda-target-${name}" {
      "include" = "${cache}/target-roots/${name}/include";
      "lib" = "${cache}/target-roots/${name}/lib";
    } { };
in
{
  inherit nvcc-wrapper;

  # nvcc 11.8 with Debian's GCC 12 as the stdenv compiler: GCC 11 joins as the candidate (Nixpkgs' data: 11.8 takes
  # GCC up to 11), and GCC 12's libstdc++ is recorded for the link.
  native = makeNvccWrapper {
    cuda_nvcc = nvccView "11.8";
    stdenv = native;
    cudaCapabilities = [ "8.6" ];
  };

  # pkgsCross.aarch64-multiplatform with Jetson Orin, nvcc 12.4: Debian's aarch64 GCC 12 as the cross stdenv's
  # compiler, the Jetson-shaped aarch64-linux files as the target's CUDA root.
  jetson = makeNvccWrapper {
    cuda_nvcc = nvccView "12.4";
    stdenv = s.stdenv {
      cc = aarch64Gcc12;
      hostPlatform = lib.systems.examples.aarch64-multiplatform;
    };
    cudaCapabilities = [ "8.7" ];
    hostRedistSystem = "linux-aarch64";
    targetCudaRoot = targetRoot "jetson-12.4";
  };

  # The same, with the reproducible-builds flags off (`nix-build --check` of its tests.reproducible fails).
  native-not-reproducible = makeNvccWrapper {
    cuda_nvcc = nvccView "11.8";
    stdenv = native;
    cudaCapabilities = [ "8.6" ];
    reproducible = false;
  };

  # Requests the wrapper refuses: their evaluation stops with its message, before anything builds.
  bad-jetson-on-x86_64 = makeNvccWrapper {
    cuda_nvcc = nvccView "12.4";
    stdenv = native;
    cudaCapabilities = [ "8.7" ];
  };
  bad-capability-for-release = makeNvccWrapper {
    cuda_nvcc = nvccView "11.8";
    stdenv = native;
    cudaCapabilities = [ "9.0a" ];
  };
}
