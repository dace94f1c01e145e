# What nvcc-wrapper refuses, decided at evaluation time from the binary's own tables (compat-data/*.toml, read with
# lib.importTOML) and said in the binary's own words, so that a request it cannot build stops `nix-instantiate`
# instead of a build. The rules are those of src/plan/: the release must be in the tables; the target platform is
# resolved from the Nix system and Nixpkgs' redist system and must ship with the release (src/plan/cross.rs); some
# host compiler must be one the release accepts (src/plan/host_compiler.rs); every capability must be known,
# accepted by the release and buildable for the platform (src/plan/gpu.rs, `check`). Only the way a setting is named
# differs: the binary names the config's key or its own flag, this file the Nix argument.
#
# It also chooses the second GCC (the newest major the release accepts that the package set has), so the closure and
# the binary's choice come from the same row.
{ lib }:
let
  inherit (lib)
    any
    concatMap
    concatStringsSep
    filter
    findFirst
    head
    last
    optional
    optionals
    toInt
    ;

  table = name: lib.importTOML (../compat-data + "/${name}.toml");
  hostCompilers = (table "host-compilers").release;
  capabilityRows = (table "capabilities").capability;
  platformFile = table "platforms";
  platformRows = platformFile.platform;
  servedBy = platformFile.jetson-served-by;

  majorMinor = lib.versions.majorMinor;
  atLeast = version: bound: builtins.compareVersions (majorMinor version) (majorMinor bound) >= 0;
  atMost = version: bound: builtins.compareVersions (majorMinor version) (majorMinor bound) <= 0;
  within = release: first: last': atLeast release first && (last' == null || atMost release last');

  # A capability in the forms that mean machine code alone to the binary as well ("8.6", "9.0a", "10.0f",
  # "sm_86"): { major; minor; suffix; }, or null. The binary's other dialects (CMake's "86", PyTorch's "8.6+PTX",
  # "compute_90", "all") embed PTX or stand for other lists, so they are refused here rather than misread.
  parseCapability =
    text:
    let
      dotted = builtins.match "([1-9][0-9]*)\\.([0-9])([af]?)" text;
      sm = builtins.match "sm_([1-9][0-9]*)([0-9])([af]?)" text;
      parts = if dotted != null then dotted else sm;
    in
    if parts == null then
      null
    else
      {
        major = toInt (builtins.elemAt parts 0);
        minor = toInt (builtins.elemAt parts 1);
        suffix = builtins.elemAt parts 2;
      };
  showCapability = c: "${toString c.major}.${toString c.minor}${c.suffix}";
  # By number, then baseline < a < f, as the binary (and capabilities.toml) orders them.
  capabilityLess =
    a: b:
    if a.major != b.major then
      a.major < b.major
    else if a.minor != b.minor then
      a.minor < b.minor
    else
      a.suffix < b.suffix;
  rowOf = c: findFirst (row: row.capability == showCapability c) null capabilityRows;
  # The machine-code targets of a parsed list, as the binary's expansion writes them: sorted, each once.
  sortedReal =
    parsed:
    lib.sort capabilityLess (lib.foldl' (seen: c: if any (s: s == c) seen then seen else seen ++ [ c ]) [ ] parsed);

  # The release's row of host-compilers.toml: its major.minor row (what the binary uses for `cuda-version`).
  hostLimits = release: findFirst (row: row.nvcc == release) null hostCompilers;
  releases = map (row: row.nvcc) (filter (row: builtins.match "[0-9]+\\.[0-9]+" row.nvcc != null) hostCompilers);

  shippedIn = platform: release: any (range: within release range.first-cuda (range.last-cuda or null)) platform.shipped;
  servesPart =
    platform: part: release:
    platform.jetson
    || any (s: s.platform == platform.name && s.part == part && atLeast release s.first-cuda) servedBy;
  allows =
    platform: row: release:
    if row ? jetson-part then servesPart platform row.jetson-part release else !platform.jetson;
  describePlatform = platform: if platform.jetson then "${platform.name} (Jetson)" else platform.name;

  # How a Nix user picks a platform (the binary's `[target] system` and `platform`).
  settingsFor =
    platform:
    if platform.nix-system == "aarch64-linux" then
      "`hostPlatform` to aarch64-linux and `hostRedistSystem` to \"${platform.nvidia-redist}\""
    else
      "`hostPlatform` to ${platform.nix-system}";

  # The platform a Nix system and Nixpkgs' redist system name, as the binary resolves `[target] system` and
  # `platform`: { platform; } or { error; }.
  resolvePlatform =
    system: redist:
    let
      jetson = redist == "linux-aarch64";
      platformName =
        if jetson then
          "jetson"
        else if redist == "linux-sbsa" then
          "sbsa"
        else
          "";
      candidates = filter (p: p.nix-system == system) platformRows;
      match = findFirst (p: p.jetson == jetson) null candidates;
    in
    if candidates == [ ] then
      {
        error = "`hostPlatform.system` is \"${system}\", which is not a target nvcc builds for";
        help = "use one of ${concatStringsSep ", " (lib.unique (map (p: p.nix-system) platformRows))} (or a GNU triple of one)";
      }
    else if match == null then
      {
        error = "`hostRedistSystem` is \"${platformName}\", which does not exist for `hostPlatform.system` \"${system}\"";
        help = "`hostRedistSystem` (\"jetson\" or \"sbsa\") is for aarch64-linux only";
      }
    else
      { platform = match; };

  # src/plan/cross.rs, check_shipped: a cross target must ship with the release.
  shippedProblem =
    platform: release:
    let
      ranges = map (
        r: if r ? last-cuda then "${r.first-cuda} to ${r.last-cuda}" else "${r.first-cuda} on"
      ) platform.shipped;
      served = map (
        s:
        "Jetson ${s.part} from ${s.first-cuda} with ${
          if s.platform == "sbsa-linux" then "`hostRedistSystem = \"linux-sbsa\"`" else "the target ${s.platform}"
        }"
      ) servedBy;
    in
    if shippedIn platform release then
      null
    else
      {
        error = "nvcc ${release} does not build for the target ${platform.name} (${platform.nvidia-redist}): NVIDIA ships it in ${concatStringsSep ", " ranges} only";
        help =
          "use an nvcc release that ships it (${concatStringsSep ", " ranges})"
          + lib.optionalString (platform.jetson && served != [ ]) ", or build for ${concatStringsSep ", and " served}";
      };

  # src/plan/host_compiler.rs: the stdenv compiler, else a candidate, must be one the release accepts. Compilers are
  # { path; family; version; } as the config records them.
  hostCompilerProblem =
    {
      release,
      limits,
      stdenv,
      candidates,
      platform,
      cross,
    }:
    let
      newest = family: if family == "clang" then limits.newest-clang else limits.newest-gcc;
      accepted = k: toInt (lib.versions.major k.version) <= newest k.family;
      accepts = "GCC up to ${toString limits.newest-gcc} and Clang up to ${toString limits.newest-clang}";
      considered = lib.foldl' (
        seen: k: if any (s: s.path == k.path) seen then seen else seen ++ [ k ]
      ) [ ] ([ stdenv ] ++ candidates);
      target = lib.optionalString cross " for ${platform.name}";
    in
    if accepted stdenv || any accepted candidates then
      null
    else
      {
        error = "no usable host compiler${target}: nvcc ${release} accepts ${accepts}, and none of these is: ${
          concatStringsSep ", " (map (k: "${k.path} (${k.family} ${k.version})") considered)
        }";
        help = "give one in `extraCandidates` (a GCC up to ${toString limits.newest-gcc} or a Clang up to ${toString limits.newest-clang}), or a package set that has buildPackages.gcc${toString limits.newest-gcc}";
      };

  # src/plan/gpu.rs, check: every capability of the expansion (the forward-compatible PTX one too), with what would be
  # accepted instead.
  capabilityProblem =
    {
      release,
      platform,
      capabilities,
      forwardCompat,
    }:
    let
      parsed = map (text: {
        inherit text;
        value = parseCapability text;
      }) capabilities;
      unparsed = filter (p: p.value == null) parsed;
      real = sortedReal (map (p: p.value) parsed);
      ptx = if forwardCompat && real != [ ] then (last real) // { suffix = ""; } else null;
      checked =
        map (c: {
          capability = c;
          forPtx = false;
        }) real
        ++ optional (ptx != null && !(any (c: c == ptx) real)) {
          capability = ptx;
          forPtx = true;
        };
      judge =
        { capability, forPtx }:
        let
          cap = showCapability capability;
          what = if forPtx then "${cap} (for PTX)" else cap;
          row = rowOf capability;
          validFor =
            row:
            filter (p: allows p row release && shippedIn p release) platformRows;
        in
        if row == null then
          { problem = "${what} is not a known GPU capability"; }
        else if !(within release row.first-cuda (row.last-cuda or null)) then
          {
            problem =
              if row ? last-cuda && !(atMost release row.last-cuda) then
                "${what} was last accepted by nvcc ${row.last-cuda}"
              else
                "${what} needs nvcc ${row.first-cuda} or later";
          }
        else if allows platform row release then
          { }
        else if row ? jetson-part then
          {
            problem = "${cap} is Jetson ${row.jetson-part}, which the target ${describePlatform platform} is not";
            help =
              if validFor row == [ ] then
                "no target platform of nvcc ${release} serves Jetson ${row.jetson-part}"
              else
                "to build for Jetson ${row.jetson-part}, set ${concatStringsSep ", or " (map settingsFor (validFor row))}";
          }
        else
          {
            problem = "${cap} is not a Jetson capability, and the target ${describePlatform platform} takes only Jetson capabilities";
          };
      verdicts = map judge checked;
      problems = concatMap (v: optional (v ? problem) v.problem) verdicts;
      accepted = map (row: row.capability) (
        filter (row: within release row.first-cuda (row.last-cuda or null) && allows platform row release) capabilityRows
      );
    in
    if unparsed != [ ] then
      {
        error = "`${(head unparsed).text}` is not a GPU capability in Nixpkgs' form, like 8.6, 9.0a, 10.0f or sm_86";
        help = "name capabilities as Nixpkgs' cudaCapabilities does: \"8.6\", \"9.0a\" (the other dialects, such as 8.6+PTX or 86-real, are for the wrapper's config file and NVCC_WRAPPER_CAPABILITIES)";
      }
    else if problems == [ ] then
      null
    else
      {
        error = "nvcc ${release} cannot build these GPU targets: ${concatStringsSep "; " problems}";
        help = concatStringsSep "; " (
          [
            "nvcc ${release} accepts, for ${describePlatform platform}: ${
              if accepted == [ ] then "none" else concatStringsSep ", " accepted
            }"
          ]
          # Two capabilities of one Jetson part need the same setting: said once, as the binary does.
          ++ lib.unique (concatMap (v: optional (v ? help) v.help) verdicts)
        );
      };

  # src/plan/gpu/targets.rs, check_pairs: no two capabilities may be a pair the release refuses together
  # (compat-data/combinations.toml) in a form the build may use: compiled (with its PTX when asked), linked with
  # device LTO, or compiled for device LTO, in that order, each form's pairs lowest first. Asked once every
  # capability passed on its own.
  refusedPairs = (table "combinations").refused-pair;
  kindOf =
    c:
    if c.suffix == "a" then
      "arch-specific"
    else if c.suffix == "f" then
      "family-specific"
    else
      "baseline";
  sameAs =
    row: a: b:
    if row.same == "number" then
      a.major == b.major && a.minor == b.minor
    else
      throw "compat-data/combinations.toml: `same = \"${row.same}\"` is not a rule this file knows";
  refusedBy =
    release: form: a: b:
    findFirst (
      row:
      within release row.first-cuda (row.last-cuda or null)
      && builtins.elem form row.forms
      && lib.sort builtins.lessThan row.kinds == lib.sort builtins.lessThan [
        (kindOf a)
        (kindOf b)
      ]
      && sameAs row a b
    ) null refusedPairs;
  codeName =
    form: c:
    "${if form == "lto" || form == "lto-ptx" then "lto" else "sm"}_${toString c.major}${toString c.minor}${c.suffix}";
  pairProblem =
    {
      release,
      capabilities,
      forwardCompat,
    }:
    let
      real = sortedReal (map parseCapability capabilities);
      count = builtins.length real;
      at = builtins.elemAt real;
      pairs = concatMap (i: map (j: [ (at i) (at j) ]) (lib.range (i + 1) (count - 1))) (lib.range 0 (count - 1));
      forms =
        if forwardCompat then
          [
            "gencode-ptx"
            "lto-link"
            "lto-ptx"
          ]
        else
          [
            "gencode"
            "lto-link"
            "lto"
          ];
      refusals = concatMap (
        form:
        concatMap (
          pair:
          let
            row = refusedBy release form (head pair) (last pair);
          in
          optional (row != null) {
            inherit form row;
            a = head pair;
            b = last pair;
          }
        ) pairs
      ) forms;
      first = head refusals;
      a = showCapability first.a;
      b = showCapability first.b;
      doing =
        if first.form == "lto-link" then
          "nvcc ${release} cannot link ${a} and ${b} together with device LTO (`-dlink -dlto`)"
        else if first.form == "lto" || first.form == "lto-ptx" then
          "nvcc ${release} cannot compile ${a} and ${b} together for device LTO"
        else
          "nvcc ${release} cannot build ${a} and ${b} together";
    in
    if refusals == [ ] then
      null
    else
      {
        error = "${doing}: it refuses the pair (\"${
          builtins.replaceStrings [ "{later}" ] [ (codeName first.form first.b) ] first.row.message
        }\")";
        help = builtins.replaceStrings [ "{a}" "{b}" "{release}" ] [ a b release ] first.row.help;
      };

  firstOf = steps: findFirst (x: x != null) null steps;
in
{
  inherit hostLimits parseCapability;

  /**
    The newest major of `family` ("gcc" or "clang") that nvcc `release` ("12.4") accepts, from
    compat-data/host-compilers.toml; null for a release the table does not know.
  */
  newestMajor =
    release: family:
    let
      row = hostLimits release;
    in
    if row == null then null else if family == "clang" then row.newest-clang else row.newest-gcc;

  /**
    Why nvcc-wrapper would refuse this request, as `{ error; help; }` in the binary's words, or null.

    `release`: "12.4". `system`: the target's Nix system. `redist`: Nixpkgs' redist system of the target
    ("linux-aarch64" for Jetson, "linux-sbsa", or null). `cross`: whether the target is another machine than the one
    nvcc runs on. `capabilities`, `forwardCompat`: as Nixpkgs' flags. `compilers`: null to leave the host compiler
    unchecked, or `{ stdenv; candidates; }` as the config records them.
  */
  refusal =
    {
      release,
      system,
      redist ? null,
      cross ? false,
      capabilities,
      forwardCompat ? true,
      compilers ? null,
    }:
    let
      limits = hostLimits release;
      resolved = resolvePlatform system redist;
      inherit (resolved) platform;
    in
    if limits == null then
      {
        error = "`cudaMajorMinorVersion` \"${release}\" is not an NVCC release the tables know";
        help = "give a release from ${head releases} to ${last releases}, with its minor part (12.4, 13.0)";
      }
    else if resolved ? error then
      resolved
    else
      firstOf [
        (if cross then shippedProblem platform release else null)
        (
          if compilers == null then
            null
          else
            hostCompilerProblem {
              inherit
                release
                limits
                platform
                cross
                ;
              inherit (compilers) stdenv candidates;
            }
        )
        (capabilityProblem {
          inherit
            release
            platform
            capabilities
            forwardCompat
            ;
        })
        (pairProblem {
          inherit release capabilities forwardCompat;
        })
      ];

  /**
    The refusal as the text of a `throw`: who speaks, the binary's error, then its help line.
  */
  message = who: refusal: "${who}: ${refusal.error}\nhelp: ${refusal.help}";
}
