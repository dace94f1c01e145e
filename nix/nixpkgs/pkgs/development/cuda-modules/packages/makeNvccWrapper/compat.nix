# What nvcc-wrapper refuses, found at evaluation time so that a request it cannot build stops `nix-instantiate`
# instead of a build. Every answer and sentence is the binary's, looked up in ./answers.json, which the binary's own
# code writes from compat-data/ (src/nix_answers/; a test fails when the file is stale). What this file still
# decides is what depends on the request itself (a version with any patch number, a list of words, a set of
# compilers): the few rules nix/README.md lists, each beside the Rust that decides the same ("What compat.nix still
# decides"). Otherwise it looks words up, orders a list by the order the file gives, and fills the binary's frames.
# tests/real/nix/answers.rs compares the result with the binary's over every release, platform and capability, every
# pair, longer lists and sets of host compilers.
#
# A word the file does not know (a typo, a capability newer than the tables, or several words in one list element)
# is named alone, after the known capabilities' problems: the binary tells a misspelling from an unknown capability,
# which needs a parser this file does not have.
#
# It also gives the host-compiler majors each release accepts, so makeNvccWrapper can choose the second GCC (the
# newest major the release accepts that the package set has) from the same row as the binary.
{ lib }:
let
  inherit (lib)
    any
    concatMap
    concatStringsSep
    elem
    filter
    findFirst
    head
    last
    optional
    ;

  answers = lib.importJSON ./answers.json;
  inherit (answers) capabilities baselines;

  fill = template: names: values: builtins.replaceStrings names values template;
  said = s: { inherit (s) error help; };
  # A sentence the file keeps once for every release, `{release}` standing for the release.
  inRelease = release: text: fill text [ "{release}" ] [ release ];
  saidIn = release: s: {
    error = inRelease release s.error;
    help = inRelease release s.help;
  };

  # The release a version is of, as the tables name it ("12.4" for "12.4" and "12.4.131"), or the version itself when
  # the tables know none.
  knownRelease =
    version: findFirst (r: version == r || lib.hasPrefix "${r}." version) version (builtins.attrNames answers.releases);
  # The release's answers, or null for a release the tables do not know.
  releaseOf = release: answers.releases.${knownRelease release} or null;
  # Whether a compiler { family; version; } is of a major the release's row accepts.
  accepts = row: k: any (m: k.version == m || lib.hasPrefix "${m}." k.version) (acceptedMajors row k.family);
  majorsUpTo = newest: map toString (lib.reverseList (lib.range 1 newest));
  # The compiler majors a release accepts, newest first, as strings ("13").
  acceptedMajors = row: family: majorsUpTo row.newest.${family};

  # The platform a Nix system and Nixpkgs' redist system name: { platform; } or the binary's refusal.
  platformOf =
    system: redist:
    let
      choices = answers.systems.${system} or null;
      choice = if redist == "linux-aarch64" then choices.jetson else choices.other;
    in
    if choices == null then
      {
        error = fill answers.unknown-system.error [ "{system}" ] [ system ];
        inherit (answers.unknown-system) help;
      }
    else if builtins.isString choice then
      { platform = choice; }
    else
      said choice;

  # The host compilers: the stdenv compiler, else a candidate, must be one the release accepts. Compilers are
  # { path; family; version; } as the config records them; a version is of an accepted major when it is that major
  # or starts with it and a dot.
  hostCompilerProblem =
    {
      release,
      row,
      stdenv,
      candidates,
      platform,
      cross,
    }:
    let
      accepted = accepts row;
      considered = lib.foldl' (
        seen: k: if any (s: s.path == k.path) seen then seen else seen ++ [ k ]
      ) [ ] ([ stdenv ] ++ candidates);
      frames = answers.host-compilers;
      named = k: fill frames.compiler [ "{path}" "{family}" "{version}" ] [ k.path k.family k.version ];
    in
    if accepted stdenv || any accepted candidates then
      null
    else
      {
        error =
          fill (if cross then frames.error-cross else frames.error)
            [ "{release}" "{accepts}" "{considered}" "{platform}" ]
            [ release row.accepts (concatStringsSep ", " (map named considered)) platform ];
        help =
          fill frames.help
            (map (family: "{newest-${family}}") (builtins.attrNames row.newest))
            (map (family: toString row.newest.${family}) (builtins.attrNames row.newest));
      };

  # The capabilities, as the binary's GPU step checks them: each word's targets, the forward-compatible PTX, every
  # target's problem (machine code first, then PTX, each in the binary's order), then the pairs.
  capabilityProblem =
    {
      release,
      row,
      platform,
      words,
      forwardCompat,
    }:
    let
      here = row.platforms.${platform};
      meaningOf = word: if word == "all" || word == "all-major" then here.words.${word} else answers.words.${word} or null;
      meanings = map meaningOf words;
      unknown = filter (w: meaningOf w == null) words;
      refusedWord = findFirst (m: m != null && m ? error) null meanings;
      known = filter (m: m != null && m ? sass) meanings;
      inOrder = pick: filter (c: any (m: elem c (pick m)) known) capabilities;
      sass = inOrder (m: m.sass);
      ptxAsked = inOrder (m: m.ptx);
      highest =
        if sass != [ ] then
          last sass
        else if ptxAsked != [ ] then
          last ptxAsked
        else
          null;
      forwardPtx = if forwardCompat && highest != null then baselines.${highest} or highest else null;
      ptx = filter (c: elem c ptxAsked || c == forwardPtx) capabilities;
      checked = map (c: [ c false ]) sass ++ map (c: [ c true ]) (filter (c: !elem c sass) ptx);
      judge =
        target:
        let
          cap = head target;
          forPtx = last target;
          why = row.not-accepted.${cap} or null;
        in
        if why != null then
          { text = answers.capability-problems.${cap}.${why}.${if forPtx then "ptx" else "sass"}; }
        else if here.refused ? ${cap} then
          {
            text = answers.platform-problems.${platform}.${cap};
            help =
              if here.refused.${cap} == null then null else inRelease release answers.platform-helps.${here.refused.${cap}};
          }
        else
          null;
      verdicts = filter (v: v != null) (map judge checked);
      problems =
        map (v: v.text) verdicts ++ map (w: fill answers.unknown-capability [ "{word}" ] [ w ]) unknown;
      forms = answers.forms.${if ptx == [ ] then "without-ptx" else "with-ptx"};
      pairs = concatMap (form: row.pairs.${form}) forms;
      refusedPair = findFirst (p: elem p.a sass && elem p.b sass) null pairs;
      pairSaid = saidIn release answers.pair-refusals.${refusedPair.said};
    in
    if elem "native" words then
      said answers.native
    else if refusedWord != null then
      said refusedWord
    else if problems != [ ] then
      {
        error = fill answers.targets-error [ "{release}" "{problems}" ] [ release (concatStringsSep "; " problems) ];
        # Two capabilities of one Jetson part need the same setting: said once, as the binary does.
        help = concatStringsSep "; " (
          lib.unique ([ here.accepted ] ++ concatMap (v: optional (v.help or null != null) v.help) verdicts)
        );
      }
    else if refusedPair != null then
      pairSaid
    else
      null;

  firstOf = steps: findFirst (x: x != null) null steps;
in
{
  inherit knownRelease;

  /**
    Whether nvcc `release` accepts the compiler `{ family; version; }` (its version as its package names it); null
    for a release the tables do not know.
  */
  accepts =
    release: compiler:
    let
      row = releaseOf release;
    in
    if row == null then null else accepts row compiler;

  /**
    The host-compiler majors ("13", "12", ...) nvcc `release` ("12.4") accepts of `family` ("gcc" or "clang"),
    newest first; null for a release the tables do not know.
  */
  acceptedMajors =
    release: family:
    let
      row = releaseOf release;
    in
    if row == null then null else acceptedMajors row family;

  /**
    Why nvcc-wrapper would refuse this request, as `{ error; help; }` in the binary's words, or null.

    `release`: "12.4". `system`: the target's Nix system. `redist`: Nixpkgs' redist system of the target
    ("linux-aarch64" for Jetson, "linux-sbsa", or null). `cross`: whether the target is another machine than the one
    nvcc runs on. `capabilities`, `forwardCompat`: as Nixpkgs' flags (one word of any of the binary's dialects per
    element). `compilers`: null to leave the host compiler unchecked, or `{ stdenv; candidates; }` as the config
    records them.
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
      # As the tables name it, for the binary's sentences ("12.4" for "12.4.131").
      known = knownRelease release;
      row = releaseOf release;
      resolved = platformOf system redist;
      inherit (resolved) platform;
    in
    if row == null then
      {
        error = fill answers.unknown-release.error [ "{release}" ] [ release ];
        inherit (answers.unknown-release) help;
      }
    else if resolved ? error then
      resolved
    else
      firstOf [
        (
          if cross && row.platforms.${platform}.shipped != null then
            saidIn known answers.not-shipped.${row.platforms.${platform}.shipped}
          else
            null
        )
        (
          if compilers == null then
            null
          else
            hostCompilerProblem {
              release = known;
              inherit
                row
                platform
                cross
                ;
              inherit (compilers) stdenv candidates;
            }
        )
        (capabilityProblem {
          release = known;
          inherit
            row
            platform
            forwardCompat
            ;
          words = capabilities;
        })
      ];

  /**
    The refusal as the text of a `throw`: who speaks, the binary's error, then its help line.
  */
  message = who: refusal: "${who}: ${refusal.error}\nhelp: ${refusal.help}";
}
