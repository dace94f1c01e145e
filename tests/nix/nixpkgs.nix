# The change set for Nixpkgs (nix/nixpkgs/), evaluated as Nixpkgs' CI evaluates a package: `lib.fileset` aborts (CI
# passes `__allowFileset = false`), the fetched source is a derivation that is never built (the caller evaluates
# with `allow-import-from-derivation` off, so reading it would fail), and `meta` is held to the types check-meta
# accepts and to nixpkgs-vet's rules for a description. Stand-ins for what is not in `lib` (rustPlatform,
# fetchFromGitHub, runCommand, glibc, `lib.teams`) record what the package asks of them. Returns the facts
# tests/real/nix/nixpkgs.rs asserts.
{
  # A Nixpkgs `lib` directory: the real one, or the project's stand-in ./lib.
  nixpkgsLib,
}:
let
  realLib = import nixpkgsLib;
  # What Nixpkgs' CI gives a package: no fileset (an abort, as __allowFileset = false makes it), and the teams of
  # maintainers/, which is not part of `lib` alone (the real lib's `teams` reads files outside lib/): a stand-in for
  # the CUDA team.
  lib = realLib // {
    fileset = abort "lib.fileset is not available: Nixpkgs' CI evaluates with __allowFileset = false";
    teams.cuda = {
      shortName = "CUDA";
      scope = "Maintain CUDA-enabled packages";
      members = [ ];
    };
  };
  inherit (builtins)
    all
    attrNames
    elem
    filter
    isAttrs
    isBool
    isInt
    isList
    isString
    substring
    ;

  system = "x86_64-linux";
  standIn = name: {
    type = "derivation";
    inherit name;
    outPath = "/stand-in/${name}";
  };

  # A derivation that is never built: reading a file of it at evaluation is import from derivation.
  fetchFromGitHub =
    args:
    derivation {
      name = "source";
      inherit system;
      builder = "/bin/sh";
      args = [
        "-c"
        "exit 1"
      ];
    }
    // {
      fetched = args;
    };

  # buildRustPackage of a function of finalAttrs, with overrideAttrs (of an attribute set, as nix/package.nix uses it)
  # as mkDerivation's: the override's attributes win, and finalAttrs sees them.
  rustPlatform = {
    buildRustPackage =
      f:
      let
        make =
          attrsOf:
          let
            args = attrsOf (args // { finalPackage = result; });
            result = standIn "${args.pname}-${args.version}" // {
              inherit (args) meta passthru;
              recorded = args;
              overrideAttrs = more: make (final: attrsOf final // more);
            };
          in
          result;
      in
      make f;
    importCargoLock = args: { importedCargoLock = args; };
  };

  runCommand = name: env: script: {
    inherit name script;
    nativeBuildInputs = map (d: d.name) env.nativeBuildInputs;
  };

  pkgs = {
    inherit
      lib
      rustPlatform
      fetchFromGitHub
      runCommand
      callPackage
      ;
    stdenv.hostPlatform = lib.systems.elaborate system;
    glibc = standIn "glibc" // {
      static = standIn "glibc-static";
    };
    file = standIn "file";
    installShellFiles = standIn "install-shell-files";
  };
  callPackage = lib.callPackageWith pkgs;

  # check-meta's types, key by key (pkgs/stdenv/generic/check-meta.nix); a key it does not list is refused.
  listOf = ok: v: isList v && all ok v;
  strOrList = v: isString v || listOf isString v;
  isLicense = v: isAttrs v || isString v;
  any' = _: true;
  metaTypes = {
    description = isString;
    longDescription = isString;
    mainProgram = isString;
    branch = isString;
    downloadPage = isString;
    homepage = strOrList;
    changelog = strOrList;
    license = v: isLicense v || listOf isLicense v;
    sourceProvenance = listOf isAttrs;
    maintainers = listOf isAttrs;
    nonTeamMaintainers = listOf isAttrs;
    teams = listOf isAttrs;
    priority = isInt;
    pkgConfigModules = listOf isString;
    platforms = listOf (v: isString v || isAttrs v);
    badPlatforms = listOf (v: isString v || isAttrs v);
    hydraPlatforms = listOf isString;
    broken = isBool;
    unfree = isBool;
    unsupported = isBool;
    insecure = isBool;
    timeout = isInt;
    knownVulnerabilities = listOf isString;
    isHydraChannel = isBool;
    problems = isAttrs;
    maxSilent = isInt;
    name = isString;
    version = isString;
    tag = isString;
    executables = listOf isString;
    outputsToInstall = listOf isString;
    position = isString;
    available = isBool;
    schedulingPriority = isInt;
    identifiers = isAttrs;
    maintainersPosition = any';
    teamsPosition = any';
    isBuildPythonPackage = any';
    isFcitxEngine = any';
    isIbusEngine = any';
    isGutenprint = any';
  };
  metaProblems =
    meta:
    map (key: "meta.${key} is not a key check-meta knows") (
      filter (key: !(metaTypes ? ${key})) (attrNames meta)
    )
    ++ map (key: "meta.${key} is not of the type check-meta wants") (
      filter (key: metaTypes ? ${key} && !(metaTypes.${key} meta.${key})) (attrNames meta)
    );

  # nixpkgs-vet's rules for meta.description: a capital first letter, no article first, not the package's name
  # first, no punctuation last.
  descriptionProblems =
    pname: text:
    let
      first = substring 0 1 text;
      last = substring (builtins.stringLength text - 1) 1 text;
      firstWord = builtins.head (builtins.match "([^ ]*).*" text);
    in
    lib.optional (lib.toUpper first != first) "it starts with a small letter"
    ++ lib.optional (elem (lib.toLower firstWord) [
      "a"
      "an"
      "the"
    ]) "it starts with an article"
    ++ lib.optional (lib.hasPrefix (lib.toLower pname) (lib.toLower text)) "it starts with the package's name"
    ++ lib.optional (elem last [
      "."
      ","
      ";"
      ":"
      "!"
      "?"
    ]) "it ends with punctuation";

  byName = callPackage ../../nix/nixpkgs/pkgs/by-name/nv/nvcc-wrapper/package.nix { };
  recorded = byName.recorded;
in
{
  byName = {
    inherit (recorded)
      pname
      version
      __structuredAttrs
      strictDeps
      cargoHash
      cargoBuildFlags
      cargoTestFlags
      ;
    src = recorded.src.fetched;
    srcIsDerivation = recorded.src.type or null == "derivation";
    tests = attrNames byName.passthru.tests;
    staticTest = byName.passthru.tests.static;
    metaProblems = metaProblems byName.meta;
    descriptionProblems = descriptionProblems recorded.pname byName.meta.description;
    inherit (byName.meta) description homepage mainProgram;
    teams = map (t: t.shortName) byName.meta.teams;
  };
  # The checkout's package (nix/package.nix: the same recipe, its source a lib.fileset of the checkout), whose
  # source aborts here as it would in Nixpkgs' CI: `-A checkoutSource` fails.
  checkoutSource = "${(callPackage ../../nix/package.nix { }).recorded.src}";
  # Reading the fetched source at evaluation, as a package that imported its Cargo.toml would: with
  # allow-import-from-derivation off, `-A readsSource` fails.
  readsSource = builtins.readFile "${recorded.src}/Cargo.toml";
  # The checks can fail: the meta of the package before issue 58 (homepage null, as Cargo.toml had no repository)
  # and a description as Cargo.toml words it.
  refused = {
    meta = metaProblems {
      homepage = null;
      description = "x";
      maintainer = [ ];
    };
    description = descriptionProblems "nvcc-wrapper" "A drop-in nvcc.";
  };
}
