# nvcc-wrapper, the binary: a drop-in `nvcc` that chooses a host compiler nvcc accepts at each call. The wrapped nvcc
# of each CUDA package set (`cudaPackages.nvcc-wrapped`, pkgs/development/cuda-modules/packages/) is made from it.
#
# Linked with glibc inside (static-pie) where the platform's libc is glibc: every nvcc call of a build starts it, and
# a static binary spares each start the dynamic loader and its libraries (0.3 to 0.75 ms a call, measured in the
# project's docs/benchmarks.md).
{
  lib,
  stdenv,
  rustPlatform,
  fetchFromGitHub,
  glibc,
  file,
  runCommand,
  installShellFiles,
}:
let
  staticGlibc = stdenv.hostPlatform.isGnu;
in
rustPlatform.buildRustPackage (finalAttrs: {
  pname = "nvcc-wrapper";
  version = "0.1.0";

  # No release is published yet: the two hashes are the release tag's, filled in when it exists (empty until then:
  # nothing but this file's tests evaluates it); nix/package.nix builds a checkout instead.
  src = fetchFromGitHub {
    owner = "nvcc-wrapper";
    repo = "nvcc-wrapper";
    tag = "v${finalAttrs.version}";
    hash = "";
  };

  cargoHash = "";

  # As Nixpkgs asks of every new package (nixpkgs-vet's ratchets of 2026).
  __structuredAttrs = true;
  strictDeps = true;

  # The workspace's default members include the test doubles (tests/fakes), which are not installed. The check runs
  # the unit tests and the tests of the wrapper with a fake nvcc; those that need real toolchains are ignored.
  cargoBuildFlags = [
    "--package"
    "nvcc-wrapper"
  ];
  cargoTestFlags = [
    "--package"
    "nvcc-wrapper"
  ];

  # crt-static reaches the crates built for the target only (buildRustPackage passes --target), not the build scripts
  # and proc-macros, which stay dynamic. v0 symbol names, as the source's .cargo/config.toml asks (RUSTFLAGS replaces
  # it): build.rs links the functions a drop-in call runs first, named that way in link/hot-path.ld.
  buildInputs = lib.optionals staticGlibc [ glibc.static ];
  env.RUSTFLAGS = toString (
    [ "-C symbol-mangling-version=v0" ] ++ lib.optional staticGlibc "-C target-feature=+crt-static"
  );

  nativeBuildInputs = [ installShellFiles ];
  postInstall = ''
    installManPage docs/man/nvcc-wrapper.1
  '';

  passthru.tests.static =
    runCommand "${finalAttrs.finalPackage.name}-test-static" { nativeBuildInputs = [ file ]; }
      ''
        exe=${lib.getExe finalAttrs.finalPackage}
        file -L "$exe" | tee "$out"
        ${lib.optionalString staticGlibc ''grep -q 'static' "$out"''}
        "$exe" --version | grep -qx 'nvcc-wrapper ${finalAttrs.version}'
      '';

  meta = {
    description = "Drop-in nvcc that picks a supported host compiler, expands GPU capabilities and wires up cross-compilation";
    homepage = "https://github.com/nvcc-wrapper/nvcc-wrapper";
    license = with lib.licenses; [
      mit
      asl20
    ];
    mainProgram = "nvcc-wrapper";
    platforms = lib.platforms.linux;
    teams = [ lib.teams.cuda ];
  };
})
