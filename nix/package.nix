# nvcc-wrapper, built from this repository: `callPackage ./nix/package.nix { }`.
#
# The binary alone; `makeNvccWrapper` (./make-nvcc-wrapper.nix) makes the drop-in `nvcc` of a toolkit from it.
{
  lib,
  rustPlatform,
}:
let
  root = ./..;
  cargoToml = lib.importTOML (root + "/Cargo.toml");

  # What the build and its unit tests read, and nothing else (no target/, .git, docs or integration tests), so an
  # edit elsewhere does not rebuild the package. The workspace's other member (tests/fakes) must exist for cargo to
  # load the workspace; the unit tests read compat-data/ (built in) and tests/fixtures/probe/ (captured outputs).
  # lib.fileset would say this shorter, but needs a newer Nix than the one this project is tested with.
  files = [
    "Cargo.toml"
    "Cargo.lock"
    "tests/fakes/Cargo.toml"
  ];
  trees = [
    "src"
    "compat-data"
    "tests/fixtures/probe"
    "tests/fakes/src"
  ];
  kept =
    path: type:
    let
      rel = lib.removePrefix (toString root + "/") (toString path);
      under = dir: rel == dir || lib.hasPrefix "${dir}/" rel;
      leadsTo = wanted: lib.hasPrefix "${rel}/" wanted;
    in
    lib.elem rel files
    || lib.any under trees
    || (type == "directory" && lib.any leadsTo (files ++ trees));

  src = lib.cleanSourceWith {
    name = "nvcc-wrapper-source";
    src = lib.cleanSource root;
    filter = kept;
  };
in
rustPlatform.buildRustPackage {
  pname = cargoToml.package.name;
  inherit (cargoToml.package) version;
  inherit src;

  cargoLock.lockFile = root + "/Cargo.lock";

  # The wrapper only: the workspace's default members also hold the test doubles (tests/fakes), which are not
  # installed. The check runs the unit tests; those that need a real toolkit skip (NVCC_WRAPPER_REQUIRE_REAL unset).
  cargoBuildFlags = [
    "--package"
    cargoToml.package.name
  ];
  cargoTestFlags = [
    "--package"
    cargoToml.package.name
  ];

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
}
