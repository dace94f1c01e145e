# nix/overlay.nix and nix/overlay-backend-stdenv.nix applied to stand-in package sets shaped as Nixpkgs' (a `lib`,
# the real one or tests/nix/lib; `_cuda` an extensible set whose `extensions` every CUDA package set applies, as
# Nixpkgs' does; a CUDA scope with `cudaMajorMinorVersion`, `cuda_nvcc`, `flags`, `backendStdenv`, `pkgs`),
# evaluated, not built. Returns the facts tests/real/nix/ asserts.
#
# Two package-set shapes: a native x86_64 set, and a cross pair as pkgsCross.aarch64-multiplatform has it, the
# aarch64 set (`cross`) and its build-host set (`crossBuildHost`, x86_64 host, aarch64 target), whose
# `cudaPackages.nvcc-wrapped` is what splicing gives a cross derivation's nativeBuildInputs.
{
  # A Nixpkgs `lib` directory: the real one, or the project's stand-in ./lib.
  nixpkgsLib,
}:
let
  lib = import nixpkgsLib;
  root = "/stand-in";

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
      result = package "${attrs.pname}-${attrs.version}" { } attrs.passthru;
    in
    result;
  runCommand = name: _env: _script: package name { } { };

  gcc =
    version: targetPrefix:
    s.wrapCC {
      cc = s.unwrappedGcc { inherit version targetPrefix; };
      inherit targetPrefix;
    };

  # A scope, as lib.makeScope makes one: a fixed point that can be extended again (`overrideScope`).
  scope =
    f:
    let
      self = f self // {
        overrideScope = g: scope (lib.extends g f);
      };
    in
    self;

  # A CUDA package set as current Nixpkgs builds one: a scope over the package set, extended by `_cuda.extensions`;
  # `flags` derived from backendStdenv, which carries the capabilities and the redist system.
  cudaPackagesFor =
    pkgs: shape: version: capabilities: jetson:
    let
      base = self: {
        inherit pkgs;
        cudaMajorMinorVersion = version;
        callPackage = lib.callPackageWith (pkgs // self);
        # Nixpkgs' nvcc, whose nvcc.profile names backendStdenv's compiler: a derivation (never built), so that its
        # drvPath says whether it is exactly the same.
        cuda_nvcc = self.callPackage (
          { backendStdenv }:
          derivation {
            name = "cuda_nvcc-${version}.131";
            pname = "cuda_nvcc";
            version = "${version}.131";
            system = "x86_64-linux";
            builder = "/bin/sh";
            compilerBindir = "${backendStdenv.cc}/bin";
          }
        ) { };
        cuda_cudart = package "cuda_cudart-${pkgs.stdenv.hostPlatform.config}-${version}" { } { };
        cuda_cccl = package "cuda_cccl-${pkgs.stdenv.hostPlatform.config}-${version}" { } { };
        flags = {
          inherit (self.backendStdenv) cudaCapabilities cudaForwardCompat;
          isJetsonBuild = self.backendStdenv.hasJetsonCudaCapability;
        };
        # Nixpkgs' backendStdenv: a GCC nvcc accepts, with the attributes flags and packages read.
        backendStdenv = s.stdenv { cc = gcc "13.3.0" ""; } // {
          cudaCapabilities = capabilities;
          cudaForwardCompat = true;
          hasJetsonCudaCapability = jetson;
          hostRedistSystem = if jetson then "linux-aarch64" else "linux-${pkgs.stdenv.hostPlatform.parsed.cpu.name}";
          nvccHostCCMatchesStdenvCC = false;
        };
      };
    in
    if shape == "extensions" then
      scope (lib.extends (lib.composeManyExtensions pkgs._cuda.extensions) base)
    else if shape == "modules" then
      scope base
    else
      lib.fix base;

  # A package set: `stdenv`, the GCCs it offers (for its target), `_cuda`, `cudaPackages_X_Y` (the default set), and
  # the overlays.
  packageSet =
    {
      stdenv,
      gccPrefix,
      capabilities,
      version ? "12.4",
      gccs ? [ "13.3.0" ],
      jetson ? false,
      buildPackages ? null,
      targetPackages ? null,
      # "extensions": `_cuda.extensions`, which every CUDA set applies (Nixpkgs of 2025-26); "modules": `_cuda`
      # without `extensions` (its data built by the module system), each CUDA set a scope of its own; "plain":
      # neither (a CUDA set that is no scope), which the overlay cannot extend.
      shape ? "extensions",
      overlays,
    }:
    let
      setName = "cudaPackages_" + lib.replaceStrings [ "." ] [ "_" ] version;
    in
    lib.fix (
      lib.extends (lib.composeManyExtensions overlays) (
        self:
        lib.listToAttrs (
          map (v: lib.nameValuePair "gcc${lib.versions.major v}" (gcc v gccPrefix)) gccs
        )
        // {
          inherit
            lib
            stdenv
            stdenvNoCC
            runCommand
            ;
          callPackage = lib.callPackageWith self;
          buildPackages = if buildPackages == null then self else buildPackages;
          targetPackages = if targetPackages == null then self else targetPackages;
          # Nixpkgs' rustPlatform, recording what package.nix asks it to build (a set, or a function of finalAttrs).
          rustPlatform.buildRustPackage =
            f:
            let
              args = if lib.isFunction f then f (args // { finalPackage = result; }) else f;
              result = package "${args.pname}-${args.version}" { } { recorded = args; };
            in
            result;
          glibc = package "glibc-2.40" { } { static = package "glibc-2.40-static" { } { }; };
          file = package "file-5.45" { } { };
          installShellFiles = package "install-shell-files" { } { };
          symlinkJoin = args: package args.name { } { inherit (args) paths; };
          _cuda = lib.makeExtensible (
            _:
            if shape == "extensions" then
              { extensions = [ ]; }
            else
              {
                dbEvaluation = { };
                db = { };
              }
          );
          ${setName} = cudaPackagesFor self shape version capabilities jetson;
          cudaPackages = self.${setName};
        }
      )
    );

  step1 = import ../../nix/overlay.nix;
  step2 = import ../../nix/overlay-backend-stdenv.nix;

  nativeStdenv = s.stdenv { cc = gcc "14.2.0" ""; };
  nativeSet =
    shape: overlays:
    packageSet {
      stdenv = nativeStdenv;
      gccPrefix = "";
      capabilities = [ "8.6" ];
      inherit shape overlays;
    };

  crossPrefix = "aarch64-unknown-linux-gnu-";
  crossStdenv = s.stdenv {
    cc = gcc "14.2.0" crossPrefix;
    hostPlatform = lib.systems.examples.aarch64-multiplatform;
  };
  cross = packageSet {
    stdenv = crossStdenv;
    gccPrefix = crossPrefix;
    capabilities = [ "8.7" ];
    jetson = true;
    buildPackages = crossBuildHost;
    overlays = [ step1 ];
  };
  crossBuildHost = packageSet {
    stdenv = nativeStdenv;
    gccPrefix = crossPrefix;
    capabilities = [ "8.7" ];
    jetson = false;
    targetPackages = cross;
    overlays = [ step1 ];
  };

  nativeFacts =
    shape:
    let
      native = nativeSet shape [
        step1
        step2
      ];
      nativeStep1 = nativeSet shape [ step1 ];
      nativeNone = nativeSet shape [ ];
    in
    {
      packageName = native.nvcc-wrapper.name;
      packageArgs = {
        inherit (native.nvcc-wrapper.recorded) pname version;
      };
      wrapped = native.cudaPackages.nvcc-wrapped.configToml;
      # makeNvccWrapper called by hand with what the overlay reads from the package set: the same file.
      byHand =
        (native.makeNvccWrapper {
          cuda_nvcc = native.cudaPackages.cuda_nvcc-unwrapped;
          inherit (native) stdenv;
          cudaCapabilities = [ "8.6" ];
          hostRedistSystem = "linux-x86_64";
        }).configToml;
      wrappedName = native.cudaPackages.nvcc-wrapped.name;
      # Nixpkgs' own nvcc, without the overlays, with step 1 and with both steps.
      unwrapped =
        let
          facts = nvcc: {
            inherit (nvcc) drvPath compilerBindir;
          };
        in
        {
          nixpkgs = facts nativeNone.cudaPackages.cuda_nvcc;
          step1 = facts nativeStep1.cudaPackages.cuda_nvcc-unwrapped;
          step2 = facts native.cudaPackages.cuda_nvcc-unwrapped;
          # What step 2's package set builds with its own backendStdenv, for contrast.
          withStep2Stdenv = native.cudaPackages.backendStdenv.cc.name;
        };
      step1 = {
        cudaNvcc = nativeStep1.cudaPackages.cuda_nvcc.name;
        backendStdenvCc = nativeStep1.cudaPackages.backendStdenv.cc.name;
      };
      step2 = {
        cudaNvcc = native.cudaPackages.cuda_nvcc.name;
        unwrapped = native.cudaPackages.cuda_nvcc-unwrapped.name;
        backendStdenvCc = native.cudaPackages.backendStdenv.cc.name;
        backendStdenvIsStdenv = native.cudaPackages.backendStdenv.cc == native.stdenv.cc;
        inherit (native.cudaPackages.backendStdenv)
          cudaCapabilities
          hasJetsonCudaCapability
          nvccHostCCMatchesStdenvCC
          ;
      };
      example = {
        nativeBuildInputs = names (example native).nativeBuildInputs;
        buildInputs = names (example native).buildInputs;
      };
    };

  # Requests nvcc-wrapper refuses, each in a native package set (GCC 14 stdenv) with the GCCs listed.
  refusalCases = {
    unknown-capability = {
      version = "12.4";
      capabilities = [
        "8.6"
        "9.5"
      ];
      gccs = [ "13.3.0" ];
    };
    capability-too-new = {
      version = "11.8";
      capabilities = [ "9.0a" ];
      gccs = [ "11.5.0" ];
    };
    capability-dropped = {
      version = "13.0";
      capabilities = [
        "7.0"
        "8.6"
      ];
      gccs = [ "13.3.0" ];
    };
    baseline-with-family = {
      version = "13.0";
      capabilities = [
        "8.6"
        "10.0f"
        "10.0"
      ];
      gccs = [ "13.3.0" ];
    };
    jetson-on-x86_64 = {
      version = "12.4";
      capabilities = [
        "8.6"
        "8.7"
      ];
      gccs = [ "13.3.0" ];
    };
    unknown-release = {
      version = "12.7";
      capabilities = [ "8.6" ];
      gccs = [ "13.3.0" ];
    };
    # GCC 14 stdenv, nvcc 11.8 (GCC up to 11), and no GCC 11 or older in the package set.
    host-compiler-out-of-range = {
      version = "11.8";
      capabilities = [ "8.6" ];
      gccs = [
        "12.4.0"
        "13.3.0"
      ];
    };
  };


  names = map (p: p.name);

  # A native package set (GCC 14 stdenv) asking for what nvcc-wrapper refuses, with step 1 and with both steps: what
  # uses the wrapped nvcc, or step 2's backendStdenv, must stop evaluating with the binary's words.
  refused =
    shape:
    {
      version,
      capabilities,
      gccs,
    }:
    let
      set =
        overlays:
        packageSet {
          stdenv = nativeStdenv;
          gccPrefix = "";
          inherit
            capabilities
            version
            gccs
            shape
            overlays
            ;
        };
      both = set [
        step1
        step2
      ];
    in
    {
      step1 = (set [ step1 ]).cudaPackages.nvcc-wrapped.name;
      step2 = {
        cudaNvcc = both.cudaPackages.cuda_nvcc.name;
        backendStdenv = both.cudaPackages.backendStdenv.cc.name;
      };
    };

  # The example derivation, with a stdenv whose mkDerivation records its arguments.
  example =
    pkgs:
    import ../../nix/examples/hello-cmake {
      inherit lib;
      stdenv = pkgs.stdenv // {
        mkDerivation = args: args;
      };
      cmake = package "cmake-3.30" { } { };
      inherit (pkgs) cudaPackages;
    };
in
{
  refusals = lib.genAttrs [
    "extensions"
    "modules"
  ] (shape: lib.mapAttrs (_: refused shape) refusalCases);

  native = nativeFacts "extensions";
  # The same, in a Nixpkgs whose `_cuda` has no `extensions`.
  nativeModules = nativeFacts "modules";
  # Neither shape: evaluating what the overlay adds stops with what it needs.
  unsupported = (nativeSet "plain" [ step1 ]).cudaPackages.nvcc-wrapped.name;
  cross = {
    # What a cross derivation's nativeBuildInputs get from `cudaPackages.nvcc-wrapped`.
    wrapped = crossBuildHost.cudaPackages.nvcc-wrapped.configToml;
    wrappedName = crossBuildHost.cudaPackages.nvcc-wrapped.name;
    # The target's CUDA files: the aarch64 set's cudart and cccl.
    targetCudaRoot = names crossBuildHost.cudaPackages.nvcc-wrapped.targetCudaRoot.paths;
  };
}
