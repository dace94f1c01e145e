# The project's stand-in for Nixpkgs' `lib`: the functions nix/ and tests/nix/ call, written here so that the Nix
# tests need nothing outside the clone. Each behaves as Nixpkgs documents it for the inputs these files give it
# (store-path-free stand-in packages, the three Linux systems the wrapper builds for); nothing else is provided, so
# a new use of `lib` in nix/ fails here with "attribute ... missing" until it is added, or is tested against the
# real `lib` (tests/real/nix/: NIXPKGS_LIB or `<nixpkgs/lib>` on NIX_PATH).
#
# Only builtins are used, none newer than Nix 2.8.
let
  inherit (builtins)
    all
    any
    attrNames
    concatLists
    concatStringsSep
    elem
    elemAt
    filter
    foldl'
    functionArgs
    genList
    head
    intersectAttrs
    isAttrs
    isBool
    isFunction
    isInt
    isList
    isString
    length
    listToAttrs
    map
    mapAttrs
    replaceStrings
    sort
    splitVersion
    substring
    stringLength
    tail
    ;

  # Lists and strings.
  take = n: list: genList (elemAt list) (if n < length list then n else length list);
  unique = foldl' (kept: x: if elem x kept then kept else kept ++ [ x ]) [ ];
  concatMap = f: list: concatLists (map f list);
  last = list: elemAt list (length list - 1);
  reverseList = list: genList (i: elemAt list (length list - 1 - i)) (length list);
  range = first: last': if first > last' then [ ] else genList (i: first + i) (last' - first + 1);
  findFirst =
    pred: default: list:
    let
      found = filter pred list;
    in
    if found == [ ] then default else head found;
  concatStrings = concatStringsSep "";
  concatMapStringsSep = sep: f: list: concatStringsSep sep (map f list);
  concatMapStrings = f: list: concatStrings (map f list);
  optional = cond: x: if cond then [ x ] else [ ];
  optionals = cond: list: if cond then list else [ ];
  optionalAttrs = cond: attrs: if cond then attrs else { };
  optionalString = cond: s: if cond then s else "";
  hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;
  hasSuffix =
    suffix: s:
    stringLength s >= stringLength suffix
    && substring (stringLength s - stringLength suffix) (stringLength suffix) s == suffix;
  stringToCharacters = s: genList (i: substring i 1 s) (stringLength s);
  lowerChars = stringToCharacters "abcdefghijklmnopqrstuvwxyz";
  upperChars = stringToCharacters "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  toLower = replaceStrings upperChars lowerChars;
  toUpper = replaceStrings lowerChars upperChars;
  removePrefix =
    prefix: s:
    if hasPrefix prefix s then substring (stringLength prefix) (stringLength s - stringLength prefix) s else s;
  boolToString = b: if b then "true" else "false";
  toInt =
    s:
    let
      n = builtins.fromJSON s;
    in
    if builtins.match "[0-9]+" s != null then n else throw "lib.toInt: ${s} is not a decimal integer";
  escapeShellArg =
    arg:
    let
      s = toString arg;
    in
    if builtins.match "[A-Za-z0-9_./=+-]+" s != null then s else "'${replaceStrings [ "'" ] [ "'\\''" ] s}'";
  escapeShellArgs = concatMapStringsSep " " escapeShellArg;

  # Attribute sets.
  nameValuePair = name: value: { inherit name value; };
  filterAttrs = pred: set: listToAttrs (concatMap (name: optional (pred name set.${name}) (nameValuePair name set.${name})) (attrNames set));
  mapAttrs' = f: set: listToAttrs (map (name: f name set.${name}) (attrNames set));
  mapAttrsToList = f: set: map (name: f name set.${name}) (attrNames set);
  genAttrs = names: f: listToAttrs (map (name: nameValuePair name (f name)) names);
  isDerivation = x: isAttrs x && x.type or null == "derivation";

  # Fixed points and overlays.
  fix =
    f:
    let
      x = f x;
    in
    x;
  extends =
    overlay: f: final:
    let
      prev = f final;
    in
    prev // overlay final prev;
  composeExtensions =
    f: g: final: prev:
    let
      fromF = f final prev;
    in
    fromF // g final (prev // fromF);
  composeManyExtensions = builtins.foldl' composeExtensions (_: _: { });
  makeExtensible =
    rattrs:
    fix (
      self:
      rattrs self
      // {
        extend = overlay: makeExtensible (extends overlay rattrs);
      }
    );
  # As the real one, an argument without a default that neither set has is refused at the call.
  callPackageWith =
    autoArgs: fn: args:
    let
      f = if isFunction fn then fn else import fn;
      given = intersectAttrs (functionArgs f) autoArgs // args;
      missing = filter (name: !(functionArgs f).${name} && !(given ? ${name})) (attrNames (functionArgs f));
    in
    if missing != [ ] then
      abort "lib.customisation.callPackageWith: Function called without required argument \"${head missing}\""
    else
      f given;

  # Packages' outputs.
  getOutput = output: pkg: pkg.${output} or pkg;
  getExe' = pkg: name: "${getOutput "bin" pkg}/bin/${name}";
  getExe =
    pkg:
    getExe' pkg (pkg.meta.mainProgram or (throw "lib.getExe: ${pkg.name or "a package"} has no meta.mainProgram"));

  # Versions.
  versions = {
    major = v: elemAt (splitVersion v) 0;
    majorMinor = v: concatStringsSep "." (take 2 (splitVersion v));
  };

  # Platforms: a system ("aarch64-linux") or an attribute set with `config` or `system`, elaborated to the attributes
  # these files read. Only the systems the wrapper builds for are known.
  knownSystems = {
    x86_64-linux = {
      config = "x86_64-unknown-linux-gnu";
      cpu = "x86_64";
    };
    aarch64-linux = {
      config = "aarch64-unknown-linux-gnu";
      cpu = "aarch64";
    };
    powerpc64le-linux = {
      config = "powerpc64le-unknown-linux-gnu";
      cpu = "powerpc64le";
    };
    # A system without CUDA, as Nixpkgs' CI evaluates it too.
    aarch64-darwin = {
      config = "arm64-apple-darwin";
      cpu = "aarch64";
      kernel = "darwin";
    };
  };
  systemOfConfig = listToAttrs (mapAttrsToList (system: known: nameValuePair known.config system) knownSystems);
  elaborate =
    given:
    let
      spec = if isString given then { system = given; } else given;
      system =
        spec.system or systemOfConfig.${spec.config}
          or (throw "the stand-in lib knows no system for config ${spec.config}");
      known = knownSystems.${system} or (throw "the stand-in lib knows no system ${system}");
    in
    {
      inherit system;
      inherit (known) config;
      parsed = {
        cpu.name = known.cpu;
        kernel.name = known.kernel or "linux";
      };
      isLinux = !(known ? kernel);
      isDarwin = known.kernel or "" == "darwin";
      # Every Linux config known here is *-linux-gnu.
      isGnu = !(known ? kernel);
      libc = if known ? kernel then "libSystem" else "glibc";
      isx86_64 = known.cpu == "x86_64";
      isAarch64 = known.cpu == "aarch64";
      isPower64 = known.cpu == "powerpc64le";
    };

  # Sources: a path filtered as builtins.path does it; a filtered source can be filtered again.
  cleanSourceWith =
    {
      src,
      filter ? _: _: true,
      name ? null,
    }:
    let
      origSrc = src.origSrc or src;
      both = path: type: (src.filter or (_: _: true)) path type && filter path type;
      resolvedName = if name != null then name else src.name or "source";
    in
    {
      inherit origSrc;
      filter = both;
      name = resolvedName;
      outPath = builtins.path {
        path = origSrc;
        name = resolvedName;
        filter = both;
      };
    };
  # Version-control and editor files, and build results, as Nixpkgs' cleanSource leaves out.
  cleanSource =
    src:
    cleanSourceWith {
      inherit src;
      filter =
        path: type:
        let
          base = baseNameOf (toString path);
        in
        !(
          (
            type == "directory"
            && elem base [
              ".git"
              ".svn"
              ".hg"
            ]
          )
          || builtins.match ".*~" base != null
          || builtins.match "\\.#.*" base != null
          || builtins.match "result(-.*)?" base != null
        );
    };

  # File sets, as far as nix/ uses them (`unions`, `toSource`): a file set is here the list of paths it was made of,
  # each an existing file or directory standing for every file under it. As in Nixpkgs, directories holding no file
  # are left out of `toSource`'s store path, which is always named "source".
  fileset =
    let
      isFileset = value: isAttrs value && value ? _standInFileset;
      coerce =
        context: value:
        if isFileset value then
          value._standInFileset
        else if !builtins.isPath value then
          throw "${context} is of type ${builtins.typeOf value}, but it should be a file set or a path instead."
        else if !builtins.pathExists value then
          throw "${context} (${toString value}) is a path that does not exist."
        else
          [ (toString value) ];
      make = paths: { _standInFileset = paths; };

      under = dir: path: path == dir || hasPrefix "${dir}/" path;
      # The type of an existing path as builtins.readDir names it (no builtins.readFileType before Nix 2.14).
      typeOf = path: if path == "/" then "directory" else (builtins.readDir (dirOf path)).${baseNameOf path};
      holdsFile =
        path: type:
        type != "directory"
        || (
          let
            entries = builtins.readDir path;
          in
          any (name: holdsFile "${path}/${name}" entries.${name}) (attrNames entries)
        );
    in
    {
      unions =
        list:
        make (
          concatLists (
            genList (i: coerce "lib.fileset.unions: Element ${toString i}" (elemAt list i)) (length list)
          )
        );

      toSource =
        { root, fileset }:
        let
          paths = coerce "lib.fileset.toSource: `fileset`" fileset;
          rootPath = toString root;
          outside = filter (path: !under rootPath path) paths;
          withFiles = filter (path: holdsFile path (typeOf path)) paths;
          keep =
            path: type:
            let
              p = toString path;
            in
            holdsFile p type
            && (any (set: under set p) withFiles || (type == "directory" && any (set: under p set) withFiles));
        in
        if !builtins.isPath root then
          throw "lib.fileset.toSource: `root` is of type ${builtins.typeOf root}, but it should be a path instead."
        else if !builtins.pathExists root then
          throw "lib.fileset.toSource: `root` (${rootPath}) is a path that does not exist."
        else if typeOf rootPath != "directory" then
          throw "lib.fileset.toSource: `root` (${rootPath}) is a file, but it should be a directory instead."
        else if outside != [ ] then
          throw "lib.fileset.toSource: `fileset` could contain files in ${head outside}, which is not under the `root` (${rootPath})."
        else
          {
            name = "source";
            outPath = builtins.path {
              name = "source";
              path = root;
              filter = keep;
            };
          };
    };
in
{
  inherit
    all
    any
    attrNames
    boolToString
    callPackageWith
    cleanSource
    cleanSourceWith
    composeExtensions
    composeManyExtensions
    concatMap
    concatMapStrings
    concatMapStringsSep
    concatStrings
    concatStringsSep
    elem
    escapeShellArg
    escapeShellArgs
    extends
    filter
    filterAttrs
    fileset
    findFirst
    fix
    foldl'
    genAttrs
    getExe
    getExe'
    getOutput
    hasPrefix
    hasSuffix
    head
    isAttrs
    isBool
    isDerivation
    isFunction
    isInt
    isList
    isString
    last
    listToAttrs
    makeExtensible
    mapAttrs
    mapAttrs'
    mapAttrsToList
    nameValuePair
    optional
    optionalAttrs
    stringToCharacters
    toLower
    toUpper
    optionalString
    optionals
    range
    removePrefix
    replaceStrings
    reverseList
    sort
    splitVersion
    tail
    take
    toInt
    unique
    versions
    ;
  getBin = getOutput "bin";
  getDev = getOutput "dev";
  getLib = getOutput "lib";
  importJSON = path: builtins.fromJSON (builtins.readFile path);
  importTOML = path: builtins.fromTOML (builtins.readFile path);

  systems = {
    inherit elaborate;
    examples.aarch64-multiplatform.config = "aarch64-unknown-linux-gnu";
    # Platforms are plain data here, so equal platforms are equal values.
    equals = a: b: a == b;
  };
  platforms.linux = [
    "x86_64-linux"
    "aarch64-linux"
    "powerpc64le-linux"
  ];
  licenses = {
    mit.spdxId = "MIT";
    asl20.spdxId = "Apache-2.0";
  };
}
