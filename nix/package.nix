# nvcc-wrapper, built from this checkout: `callPackage ./nix/package.nix { }`.
#
# The package Nixpkgs would have (./nixpkgs/pkgs/by-name/nv/nvcc-wrapper/package.nix, which fetches a release), with
# this checkout as its source: one recipe for both. The source holds what the build, its unit tests and the install
# read, and nothing else (no target/, .git, the guide or the integration tests), so an edit elsewhere does not
# rebuild the package; the crates are those of the checkout's Cargo.lock, and the version its Cargo.toml's.
{
  lib,
  callPackage,
  rustPlatform,
}:
let
  root = ./..;
  cargoToml = lib.importTOML (root + "/Cargo.toml");
  released = callPackage ./nixpkgs/pkgs/by-name/nv/nvcc-wrapper/package.nix { };
in
released.overrideAttrs {
  inherit (cargoToml.package) version;
  # build.rs compiles compat-data/ in and hands the linker link/hot-path.ld; Cargo.toml names the benchmark
  # (benches/plan.rs) and the workspace's other member (tests/fakes), which must exist for cargo to load the manifest;
  # the unit tests read compat-data/, tests/fixtures/probe/ (captured outputs) and the reference they check against
  # the code (docs/reference/, docs/man/), whose man page is installed. (lib.fileset is for a checkout only: Nixpkgs'
  # CI evaluates without it.)
  src = lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions [
      ../Cargo.toml
      ../Cargo.lock
      ../build.rs
      ../link
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
  cargoDeps = rustPlatform.importCargoLock { lockFile = root + "/Cargo.lock"; };
}
