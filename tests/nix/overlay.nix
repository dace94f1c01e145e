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
      result = package (attrs.name or "${attrs.pname}-${attrs.version}") { } attrs.passthru;
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
        # As Nixpkgs' of 2025-26 (pkgs/development/cuda-modules/default.nix): what the set's packages' names start with.
        cudaNamePrefix = "cuda${version}";
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
        # Nixpkgs' backendStdenv: a GCC nvcc accepts, with every attribute Nixpkgs' own adds (packages/
        # backendStdenv.nix, read with the search look-up: the 13 of `backendStdenvAttributes`), here computed from the
        # case's list; where CUDA is not (darwin: hostRedistSystem "unsupported"), the plain stdenv, as there. A
        # Jetson list of Thor's only (10.1 and 11.0 families) is of the linux-sbsa redist, as getRedistSystem says.
        backendStdenv =
          let
            thor = [
              "10.1"
              "10.1a"
              "10.1f"
              "11.0"
              "11.0a"
              "11.0f"
            ];
            redist =
              if !pkgs.stdenv.hostPlatform.isLinux then
                "unsupported"
              else if jetson && lib.all (c: lib.elem c thor) capabilities then
                "linux-sbsa"
              else if jetson then
                "linux-aarch64"
              else
                "linux-${pkgs.stdenv.hostPlatform.parsed.cpu.name}";
            suffixed = suffix: lib.filter (c: lib.hasSuffix suffix c) capabilities;
            jetsons = if jetson then capabilities else [ ];
          in
          (if redist == "unsupported" then pkgs.stdenv else s.stdenv { cc = gcc "13.3.0" ""; })
          // {
            nvccHostCCMatchesStdenvCC = redist == "unsupported";
            hostNixSystem = pkgs.stdenv.hostPlatform.system;
            hostRedistSystem = redist;
            cudaForwardCompat = true;
            supportedCudaCapabilities = capabilities ++ [ "12.0" ];
            defaultCudaCapabilities = [ "8.6" ];
            cudaCapabilities = capabilities;
            requestedArchitectureSpecificCudaCapabilities = suffixed "a";
            hasArchitectureSpecificCudaCapability = suffixed "a" != [ ];
            requestedFamilySpecificCudaCapabilities = suffixed "f";
            hasFamilySpecificCudaCapability = suffixed "f" != [ ];
            requestedJetsonCudaCapabilities = jetsons;
            hasJetsonCudaCapability = jetsons != [ ];
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
          # Nixpkgs' rustPlatform, recording what package.nix asks it to build (a function of finalAttrs, which
          # nix/package.nix overrides with mkDerivation's overrideAttrs), and fetchFromGitHub.
          rustPlatform = {
            buildRustPackage =
              f:
              let
                args = f (args // { finalPackage = result; });
                result = package "${args.pname}-${args.version}" { } {
                  recorded = args;
                  overrideAttrs = more: self.rustPlatform.buildRustPackage (final: f final // more);
                };
              in
              result;
            importCargoLock = lock: lock;
          };
          fetchFromGitHub = args: package "source" { } args;
          glibc = package "glibc-2.40" { } { static = package "glibc-2.40-static" { } { }; };
          file = package "file-5.45" { } { };
          installShellFiles = package "install-shell-files" { } { };
          symlinkJoin = args: package args.name { } { inherit (args) paths; };
          # A package that does not use CUDA, built by the stdenv: a derivation (never built), so that its drvPath
          # says whether an overlay rebuilds it.
          zlib = derivation {
            name = "zlib-1.3.1";
            system = "x86_64-linux";
            builder = "/bin/sh";
            cc = "${stdenv.cc}";
          };
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
      # A package that does not use CUDA, without the overlays, with step 1 and with both: the same derivation.
      notCuda = map (set: set.zlib.drvPath) [
        nativeNone
        nativeStep1
        native
      ];
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

  # Whether evaluating `value` deeply fails in a way `builtins.tryEval` catches (a `throw`, as Nixpkgs' CI's own
  # tryEval skips); an `abort` would stop the whole evaluation instead.
  fails = value: !(builtins.tryEval (builtins.deepSeq value value)).success;

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
      # The refusal breaks only what is CUDA's, and as a failure tryEval catches: the package outside CUDA evaluates.
      caught = {
        notCuda = fails both.zlib.drvPath;
        step1 = fails (set [ step1 ]).cudaPackages.nvcc-wrapped.name;
        cudaNvcc = fails both.cudaPackages.cuda_nvcc.name;
        backendStdenv = fails both.cudaPackages.backendStdenv.cc.name;
      };
    };

  # The names Nixpkgs' backendStdenv adds to the stdenv's (packages/backendStdenv.nix at
  # c10e8fecb9071c4d786f84d2ee04a11122476e36, read with the search look-up).
  backendStdenvAttributes = [
    "nvccHostCCMatchesStdenvCC"
    "hostNixSystem"
    "hostRedistSystem"
    "cudaForwardCompat"
    "supportedCudaCapabilities"
    "defaultCudaCapabilities"
    "cudaCapabilities"
    "requestedArchitectureSpecificCudaCapabilities"
    "hasArchitectureSpecificCudaCapability"
    "requestedFamilySpecificCudaCapabilities"
    "hasFamilySpecificCudaCapability"
    "requestedJetsonCudaCapabilities"
    "hasJetsonCudaCapability"
  ];

  # backendStdenv's contract under step 2 (issue 58, item 3): for the default list and the Jetson ones, each of
  # Nixpkgs' attributes, as Nixpkgs' backendStdenv has it (without the overlays) and as step 2's (and step 2's after
  # the CUDA set's overrideScope, which a user's override goes through).
  contract =
    let
      cases = {
        default = {
          system = "x86_64-linux";
          version = "12.4";
          capabilities = [
            "8.6"
            "8.9"
            "9.0"
          ];
          jetson = false;
        };
        orin = {
          system = "aarch64-linux";
          version = "12.4";
          capabilities = [ "8.7" ];
          jetson = true;
        };
        xavier-and-orin = {
          system = "aarch64-linux";
          version = "12.4";
          capabilities = [
            "7.2"
            "8.7"
          ];
          jetson = true;
        };
        thor = {
          system = "aarch64-linux";
          version = "13.0";
          capabilities = [ "11.0" ];
          jetson = true;
        };
      };
      set =
        case: overlays:
        packageSet {
          stdenv = s.stdenv {
            cc = gcc "14.2.0" "";
            buildPlatform = case.system;
          };
          gccPrefix = "";
          inherit (case) version capabilities jetson;
          inherit overlays;
        };
      attributes = stdenv: lib.genAttrs backendStdenvAttributes (name: stdenv.${name} or "(missing)");
    in
    lib.mapAttrs (
      _: case:
      let
        both = set case [
          step1
          step2
        ];
      in
      {
        nixpkgs = attributes (set case [ ]).cudaPackages.backendStdenv;
        step2 = attributes both.cudaPackages.backendStdenv;
        overridden = attributes (both.cudaPackages.overrideScope (_: _: { })).backendStdenv;
        isStdenv = both.cudaPackages.backendStdenv.cc.name;
      }
    ) cases;

  # A package set where CUDA is not (aarch64-darwin, a Clang stdenv, as Nixpkgs' CI evaluates it): nothing outside
  # CUDA fails, step 2's backendStdenv is Nixpkgs' (the plain stdenv, as there), and what needs nvcc fails in a way
  # tryEval catches.
  darwin =
    let
      set =
        overlays:
        packageSet {
          stdenv = s.stdenv {
            cc = s.wrapCC {
              cc = s.unwrappedClang { version = "19.1.7"; };
              isClang = true;
            };
            buildPlatform = "aarch64-darwin";
          };
          gccPrefix = "";
          capabilities = [ "8.6" ];
          shape = "extensions";
          inherit overlays;
        };
      both = set [
        step1
        step2
      ];
    in
    {
      notCuda = map (overlays: fails (set overlays).zlib.drvPath) [
        [ ]
        [ step1 ]
        [
          step1
          step2
        ]
      ];
      backendStdenv = both.cudaPackages.backendStdenv.cc.name;
      wrapped = fails (set [ step1 ]).cudaPackages.nvcc-wrapped.name;
      cudaNvcc = fails both.cudaPackages.cuda_nvcc.name;
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

  inherit darwin contract;
  # The evaluation cost of each step (NIX_SHOW_STATS): the same native package set without the overlays, with step 1
  # and with both.
  cost = {
    none = nativeSet "extensions" [ ];
    step1 = nativeSet "extensions" [ step1 ];
    both = nativeSet "extensions" [
      step1
      step2
    ];
  };
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
