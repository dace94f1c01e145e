# makeNvccWrapper: a drop-in `nvcc` for one stdenv, so a CUDA derivation can keep plain `stdenv` instead of switching
# to `cudaPackages.backendStdenv`.
#
# The result holds `bin/nvcc` (the nvcc-wrapper binary, under the name that makes it the drop-in),
# `share/nvcc-wrapper/config.toml` (found by the wrapper next to the `bin/nvcc` it was started as) and
# `nix-support/setup-hook`. The config records facts only: the real nvcc and its release, the stdenv compiler with
# its libstdc++ exactly as cc-wrapper computes them, the capabilities, and for a cross build the target. The binary
# makes every decision (which host compiler, which libstdc++ flags, which -gencode, which cross flags) at each call,
# as it does at a shell, and probes nothing because everything it would probe is written down.
#
# A request the wrapper would refuse (a Jetson capability for x86_64, a capability this release lacks, a platform it
# does not ship, no host compiler it accepts) stops the evaluation with the wrapper's own words (./compat.nix, from
# compat-data/); the build's install check then runs the wrapper on the config it wrote (`nvcc-wrapper explain`).
# `passthru.tests.answers` holds ./answers.json to the packaged binary's own answers; `passthru.tests.hello` compiles
# ./hello.cu with the result (and runs it, natively);
# `passthru.tests.reproducible` builds it to an object and two programs, for `nix-build --check`.
#
# The package is a build tool: it is built, like the compilers it records, by the build platform's stdenv.
{
  lib,
  buildPackages,
}:
{
  # The unwrapped nvcc (Nixpkgs' `cudaPackages.cuda_nvcc`): it runs on the build platform.
  cuda_nvcc,
  # The stdenv of the derivations that will use this nvcc: its compiler builds their C++ code, and nvcc's objects
  # must link with its libstdc++. A cross stdenv (pkgsCross.*) makes this a cross nvcc.
  stdenv,
  # The NVCC release, "12.4" (Nixpkgs' `cudaPackages.cudaMajorMinorVersion`); by default the release the tables name
  # nvcc's own version by.
  cudaMajorMinorVersion ? (import ./compat.nix { inherit lib; }).knownRelease cuda_nvcc.version,
  # GPU capabilities, as Nixpkgs' `config.cudaCapabilities` / `cudaPackages.flags.cudaCapabilities` (["8.6" "9.0a"]).
  cudaCapabilities ? [ ],
  # Also embed PTX for newer GPUs (Nixpkgs' `cudaForwardCompat`, default true there too).
  cudaForwardCompat ? true,
  # What the wrapper does when a build names its own GPU targets: "respect", "replace" or "append".
  archFlags ? "respect",
  # Add the flags that make nvcc's outputs the same bytes from build to build (`nix-build --check` passes), for
  # the releases and host compilers measured (the wrapper's `reproducible`, on by default). false turns them off.
  reproducible ? true,
  # More compilers the wrapper may choose from: cc-wrapper packages (`pkgs.clang_17`, `buildPackages.gcc12`) or
  # compiler tables `{ path; family; version; target; }`.
  extraCandidates ? [ ],
  # Whom the build is for. hostPlatform other than buildPlatform makes a cross nvcc.
  buildPlatform ? stdenv.buildPlatform,
  hostPlatform ? stdenv.hostPlatform,
  # Which CUDA platform the target's files are, in Nixpkgs' redist terms (`backendStdenv.hostRedistSystem`):
  # "linux-aarch64" is Jetson, "linux-sbsa" an Arm server (and, from 13.0, Jetson Thor). null: the wrapper's default.
  hostRedistSystem ? null,
  # For a cross build: a directory with the target's CUDA headers and libraries (`include/cuda_runtime.h`,
  # `lib/libcudart_static.a`), e.g. a symlinkJoin of the target's cuda_cudart and cuda_cccl. A store-path nvcc has no
  # `targets/<dir>` for another CPU.
  targetCudaRoot ? null,
  # Jetson: the directory of the CUDA forward-compatibility libcuda.so (cudaPackages.cuda_compat's `compat/`),
  # put first in the runpath of everything nvcc links for a Jetson (`[target] cuda-compat`). null: none.
  cudaCompat ? null,
  # The CUDA package set's name prefix (`cudaNamePrefix`, "cuda12.9"), which its packages' names start with; null:
  # none (a call by hand).
  cudaNamePrefix ? null,
  # Where the stdenv compiler's libstdc++ comes from, as cc-wrapper's `gccForLibs`: the GCC itself for a GCC stdenv;
  # for a Clang stdenv the GCC its wrapper was given (cc-wrapper does not expose it, so pass it).
  gccForLibs ?
    if stdenv.cc.isClang or false then
      stdenv.cc.gccForLibs
        or (throw "makeNvccWrapper: the stdenv compiler is Clang: pass `gccForLibs`, the GCC whose libstdc++ it uses")
    else
      stdenv.cc.cc,
  # The GCC (a cc-wrapper building for hostPlatform) of a major version ("13"), or null where the package set has none, for
  # when nvcc does not accept the stdenv compiler. The default, buildPackages."gccN", is the cross GCC in a cross
  # package set, as stdenv.cc is.
  gccForMajor ? major: buildPackages."gcc${toString major}" or null,
}:
let
  inherit (lib)
    nameValuePair
    optional
    optionalString
    optionals
    ;

  toml = import ./toml.nix { inherit lib; };

  # The wrapper's own cross machinery applies when the target is another CPU (another Nix system).
  isCross = hostPlatform.system != buildPlatform.system;
  # cc-wrapper's test for its library paths: any difference of platform (a musl target included).
  ccIsCross = !(lib.systems.equals buildPlatform hostPlatform);

  triple = hostPlatform.config;

  familyOf = cc: if cc.isClang or false then "clang" else "gcc";

  # A cc-wrapper package as the wrapper's compiler table: its C++ driver and what probing it would find. A table
  # given as such (extraCandidates) is written as it is.
  compiler =
    cc:
    if !lib.isDerivation cc then
      cc
    else
      {
        path = "${cc}/bin/${cc.targetPrefix or ""}${if familyOf cc == "clang" then "clang++" else "g++"}";
        family = familyOf cc;
        # As the package names it: the wrapper counts its first three numbers (a GCC snapshot has four).
        version = cc.cc.version or cc.version;
        target = triple;
      };

  stdenvCompiler = compiler stdenv.cc // {
    # Exactly what cc-wrapper puts on the link line for `gccForLibs` (its -L flags), so the wrapper can point another
    # compiler at the same libstdc++.
    gcc-install-dir = "${gccForLibs}/lib/gcc/${triple}/${gccForLibs.version}";
    libstdcxx-dir = "${lib.getLib gccForLibs}${optionalString ccIsCross "/${triple}"}/lib";
  };

  compat = import ./compat.nix { inherit lib; };

  # The binary's own table decides whether a second GCC enters the closure: when the stdenv compiler is newer than
  # this release accepts, the newest GCC it accepts that the package set has.
  acceptedMajors = compat.acceptedMajors cudaMajorMinorVersion;
  tooNew = compat.accepts cudaMajorMinorVersion stdenvCompiler == false;
  compatibleGcc = lib.findFirst (gcc: gcc != null) null (map gccForMajor (acceptedMajors "gcc"));

  candidates = optional (tooNew && compatibleGcc != null) (compiler compatibleGcc) ++ map compiler extraCandidates;

  platform =
    {
      linux-aarch64 = "jetson";
      linux-sbsa = "sbsa";
    }
    .${toString hostRedistSystem} or null;

  hostCompilerEntries = [
    (nameValuePair "stdenv" stdenvCompiler)
    (nameValuePair "candidates" (if candidates == [ ] then null else candidates))
  ];

  # The target is written for a cross build, and on aarch64 (where Jetson and Arm servers differ) natively too.
  writeTarget = isCross || hostPlatform.isAarch64 or false;

  configToml = toml.document {
    comment = [
      "Written by makeNvccWrapper: what Nixpkgs knows, recorded so that nvcc-wrapper probes nothing."
      "The wrapper makes every choice from these facts at each call: see `nvcc-wrapper explain -- ARGS`."
    ];
    tables = [
      {
        name = null;
        entries = [
          (nameValuePair "nvcc" (lib.getExe' cuda_nvcc "nvcc"))
          (nameValuePair "cuda-version" cudaMajorMinorVersion)
          (nameValuePair "reproducible" (if reproducible then null else false))
        ];
      }
    ]
    ++ optional (!isCross) {
      name = [ "host-compiler" ];
      entries = hostCompilerEntries;
    }
    ++ [
      {
        name = [ "gpu" ];
        entries = [
          (nameValuePair "capabilities" cudaCapabilities)
          (nameValuePair "forward-compat" cudaForwardCompat)
          (nameValuePair "arch-flags" archFlags)
        ];
      }
    ]
    ++ optionals writeTarget [
      {
        name = [ "target" ];
        entries = [
          (nameValuePair "system" hostPlatform.system)
          (nameValuePair "platform" platform)
          (nameValuePair "cuda-root" (if isCross && targetCudaRoot != null then "${targetCudaRoot}" else null))
          (nameValuePair "cuda-compat" (if cudaCompat != null then "${cudaCompat}" else null))
        ];
      }
    ]
    ++ optional isCross {
      name = [
        "target"
        "host-compiler"
      ];
      entries = hostCompilerEntries;
    };
  };

  # The same expansion the drop-in applies, in CMake's spelling, for CMAKE_CUDA_ARCHITECTURES: computed by the
  # binary, so CMake's flags and the wrapper's can never differ.
  gencodeArgs = [
    "--format"
    "cmake"
    "--cuda-version"
    cudaMajorMinorVersion
    "--system"
    hostPlatform.system
  ]
  ++ optionals (platform != null) [
    "--platform"
    platform
  ]
  ++ optional cudaForwardCompat "--forward-compat"
  ++ cudaCapabilities;

  # The unwrapped nvcc is propagated: its other tools (ptxas, fatbinary, nvlink, ...) stay on PATH behind the
  # wrapper, and its own setup hook still finds the CUDA libraries for CMake (our hook keeps it off the compiler).
  propagated = lib.unique [
    (lib.getDev cuda_nvcc)
    (lib.getBin cuda_nvcc)
  ];

  version = cuda_nvcc.version or cudaMajorMinorVersion;

  # What the binary would refuse, found now: the evaluation stops with its words (the build's `explain` would say the
  # same, later).
  refusal = compat.refusal {
    release = cudaMajorMinorVersion;
    inherit (hostPlatform) system;
    redist = hostRedistSystem;
    cross = isCross;
    capabilities = cudaCapabilities;
    forwardCompat = cudaForwardCompat;
    compilers = {
      stdenv = stdenvCompiler;
      inherit candidates;
    };
  };
  inherit (buildPackages) nvcc-wrapper runCommand stdenvNoCC;
in
if refusal != null then
  throw (compat.message "makeNvccWrapper" refusal)
else
  stdenvNoCC.mkDerivation (finalAttrs: {
    pname = "${optionalString isCross "${triple}-"}cuda_nvcc-wrapped";
    inherit version;

    dontUnpack = true;

    inherit configToml;
    passAsFile = [ "configToml" ];
    nvccWrapper = nvcc-wrapper;
    cmakeArchitectures = lib.escapeShellArgs gencodeArgs;
    hasCapabilities = cudaCapabilities != [ ];
    # The stdenv's archiver, for `nvcc -lib` (see ./setup-hook.sh).
    archiver = lib.optionalString (
      stdenv.cc ? bintools
    ) "${stdenv.cc.bintools}/bin/${stdenv.cc.targetPrefix or ""}ar";

    # stdenv's fixup phase writes nix-support/: the hook (./setup-hook.sh, its @out@ and @cudaToolkitRoot@
    # substituted) and the propagated inputs.
    setupHook = ./setup-hook.sh;
    cudaToolkitRoot = lib.getBin cuda_nvcc;
    propagatedBuildInputs = propagated;

    installPhase = ''
      runHook preInstall
      mkdir -p "$out/bin" "$out/share/nvcc-wrapper" "$out/nix-support"
      cp "$configTomlPath" "$out/share/nvcc-wrapper/config.toml"
      ln -s "$nvccWrapper/bin/nvcc-wrapper" "$out/bin/nvcc"
      ln -s "$nvccWrapper/bin/nvcc-wrapper" "$out/bin/nvcc-wrapper"
      if [ -n "$archiver" ]; then
        mkdir -p "$out/libexec/nvcc-wrapper/bin"
        ln -s "$archiver" "$out/libexec/nvcc-wrapper/bin/ar"
      fi
      if [ -n "$hasCapabilities" ]; then
        eval "set -- $cmakeArchitectures"
        "$nvccWrapper/bin/nvcc-wrapper" gencode "$@" > "$out/nix-support/cmake-cuda-architectures"
      fi
      runHook postInstall
    '';

    # The wrapper's verdict on the config it will read: a compile and link it cannot plan fails here, with its words.
    doInstallCheck = true;
    installCheckPhase = ''
      runHook preInstallCheck
      echo "nvcc-wrapper's plan for \`nvcc check.cu -o check\` with this config:"
      NVCC_WRAPPER_CONFIG="$out/share/nvcc-wrapper/config.toml" "$out/bin/nvcc-wrapper" explain -- check.cu -o check
      runHook postInstallCheck
    '';

    passthru = {
      inherit
        configToml
        cudaCapabilities
        cudaForwardCompat
        cudaMajorMinorVersion
        candidates
        ;
      unwrapped = cuda_nvcc;
      # Facts as the file records them, for tests and other tools.
      inherit stdenvCompiler isCross targetCudaRoot;
      # `nix-build -A <this>.passthru.tests`. answers: the binary's own answers are the file ./compat.nix looked up
      # (`nvcc-wrapper compat nix-answers`), so the evaluation refused what the binary refuses. hello: ./hello.cu
      # compiled and linked by this nvcc in a build, and run where it was built for this machine (without a GPU it
      # reports the CUDA error it got, which proves it started).
      tests.answers =
        runCommand "${finalAttrs.finalPackage.name}-test-answers"
          {
            nativeBuildInputs = [ nvcc-wrapper ];
            answers = ./answers.json;
          }
          ''
            nvcc-wrapper compat nix-answers > "$out"
            cmp "$answers" "$out" || {
              echo "answers.json is not what this nvcc-wrapper answers: regenerate it from its source" >&2
              exit 1
            }
          '';
      tests.hello =
        runCommand "${finalAttrs.finalPackage.name}-test-hello"
          {
            nativeBuildInputs = [ finalAttrs.finalPackage ];
            hello = ./hello.cu;
          }
          (
            ''
              cp "$hello" hello.cu
              nvcc hello.cu -o hello
            ''
            + (
              if isCross then
                ''
                  touch "$out"
                ''
              else
                ''
                  ./hello | tee "$out"
                  grep -q '^hello: ' "$out"
                ''
            )
          );
      # `nix-build --check -A <this>.passthru.tests.reproducible` builds it again and compares: an object, a program
      # linked from it, and one compiled and linked in one call (nvcc's temporary names, its pid in them, reach
      # each unless the wrapper's reproducible-builds flags are on).
      tests.reproducible =
        runCommand "${finalAttrs.finalPackage.name}-test-reproducible"
          {
            nativeBuildInputs = [ finalAttrs.finalPackage ];
            hello = ./hello.cu;
          }
          ''
            cp "$hello" hello.cu
            nvcc -c hello.cu -o hello.o
            nvcc hello.o -o hello
            nvcc hello.cu -o hello-one-call
            mkdir "$out"
            cp hello.o hello hello-one-call "$out/"
          '';
    };

    meta = {
      description = "CUDA compiler driver that chooses a supported host compiler, GPU targets and cross settings at each call";
      inherit (nvcc-wrapper.meta) homepage license;
      mainProgram = "nvcc";
      # Where NVIDIA ships nvcc for Nix's systems.
      platforms = [
        "aarch64-linux"
        "x86_64-linux"
      ];
      teams = [ lib.teams.cuda ];
    };
  }
  // lib.optionalAttrs (cudaNamePrefix != null) {
    name = "${cudaNamePrefix}-${finalAttrs.pname}-${finalAttrs.version}";
  })
