# nvcc-wrapper, built from this repository: `callPackage ./nix/package.nix { }`.
#
# The binary alone, with its man page; `makeNvccWrapper` (./make-nvcc-wrapper.nix) makes the drop-in `nvcc` of a
# toolkit from it.
#
# Built as the README's install line builds it: with glibc linked in (static-pie), which spares every nvcc call the
# dynamic loader and its shared libraries (docs/benchmarks.md: 0.3 to 0.75 ms a call).
{
  lib,
  stdenv,
  rustPlatform,
  glibc,
  file,
  runCommand,
  installShellFiles,
}:
let
  root = ./..;
  cargoToml = lib.importTOML (root + "/Cargo.toml");

  # What the build, its unit tests and the install read, and nothing else (no target/, .git, the guide or the
  # integration tests), so an edit elsewhere does not rebuild the package. build.rs compiles compat-data/ in;
  # Cargo.toml names the benchmark (benches/plan.rs) and the workspace's other member (tests/fakes), which must exist
  # for cargo to load the manifest; the unit tests read compat-data/, tests/fixtures/probe/ (captured outputs) and the
  # reference they check against the code (docs/reference/, docs/man/), whose man page is installed.
  src = lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions [
      ../Cargo.toml
      ../Cargo.lock
      ../build.rs
      ../src
      ../compat-data
      ../benches/plan.rs
      ../tests/fixtures/probe
      ../tests/fakes/Cargo.toml
      ../tests/fakes/src
      ../docs/reference
      ../docs/man
    ];
  };

  # crt-static links glibc into the binary; buildRustPackage passes `--target`, so the flag reaches the target's
  # crates (the binary and its unit tests) and not the build scripts or proc-macros, which must stay dynamic.
  staticGlibc = stdenv.hostPlatform.isGnu;
in
rustPlatform.buildRustPackage (finalAttrs: {
  pname = cargoToml.package.name;
  inherit (cargoToml.package) version;
  inherit src;

  cargoLock.lockFile = root + "/Cargo.lock";

  # The wrapper only: the workspace's default members also hold the test doubles (tests/fakes), which are not
  # installed. The check runs the quick tier; the tests that need real toolchains are #[ignore]d, so not run.
  cargoBuildFlags = [
    "--package"
    cargoToml.package.name
  ];
  cargoTestFlags = [
    "--package"
    cargoToml.package.name
  ];

  buildInputs = lib.optionals staticGlibc [ glibc.static ];
  env.RUSTFLAGS = lib.optionalString staticGlibc "-C target-feature=+crt-static";

  # nvcc-wrapper(1), made from the code (src/reference/), into share/man/man1.
  nativeBuildInputs = [ installShellFiles ];
  postInstall = ''
    installManPage docs/man/nvcc-wrapper.1
  '';

  # `nix-build -A nvcc-wrapper.passthru.tests`: the binary is linked statically and starts.
  passthru.tests.static =
    runCommand "${finalAttrs.finalPackage.name}-test-static" { nativeBuildInputs = [ file ]; }
      ''
        exe=${lib.getExe finalAttrs.finalPackage}
        file -L "$exe" | tee "$out"
        ${lib.optionalString staticGlibc ''grep -q 'static' "$out"''}
        "$exe" --version >> "$out"
      '';

  meta = {
    inherit (cargoToml.package) description;
    homepage = cargoToml.package.repository or null;
    license = with lib.licenses; [
      mit
      asl20
    ];
    mainProgram = "nvcc-wrapper";
    platforms = lib.platforms.linux;
  };
})
