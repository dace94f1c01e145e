# Not pkgs.formats.toml: it writes at build time (the tests compare the text at evaluation), sorts keys, has no null,
# inline tables or comments, and docs/reference/config.md documents the file in this order with its header comment.
#
# A small TOML writer for the wrapper's config file: a document is a list of tables, each an ordered list of
# key/value pairs, so the file reads in the order docs/reference/config.md documents the keys. Values are strings,
# booleans, integers, lists of values, and attribute sets (written as inline tables); a null value leaves its key
# out, so an optional fact that Nix does not know is simply absent.
#
# Strings are written as TOML basic strings through builtins.toJSON: for the strings Nix holds (no NUL), JSON's
# escapes (\" \\ \n \r \t \b \f \uXXXX) are all valid TOML escapes, and toJSON keeps a string's store-path context,
# so every store path the file names stays a dependency of the derivation that writes it.
{ lib }:
let
  inherit (lib)
    boolToString
    concatMapStringsSep
    concatStrings
    filter
    filterAttrs
    isAttrs
    isBool
    isInt
    isList
    isString
    ;

  # A key TOML takes bare: letters, digits, `_` and `-` only (told by its characters: nix/ parses no string).
  keyCharacters = characters "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  characters = text: builtins.genList (i: builtins.substring i 1 text) (builtins.stringLength text);
  bareKey = key: key != "" && builtins.all (c: builtins.elem c keyCharacters) (characters key);

  key = name: if bareKey name then name else builtins.toJSON name;

  present = value: value != null;

  value =
    v:
    if isString v then
      builtins.toJSON v
    else if isBool v then
      boolToString v
    else if isInt v then
      toString v
    else if isList v then
      "[" + concatMapStringsSep ", " value (filter present v) + "]"
    else if isAttrs v then
      inlineTable v
    else
      throw "toml.nix: cannot write a ${builtins.typeOf v} as a TOML value";

  # Derivations and paths are not written by accident: the caller turns them into strings first.
  inlineTable =
    attrs:
    if attrs ? outPath then
      throw "toml.nix: a derivation is not a TOML table; write \"\${drv}\" (or a path inside it) instead"
    else
      "{ "
      + lib.concatStringsSep ", " (
        map (name: "${key name} = ${value attrs.${name}}") (
          lib.sort inlineOrder (builtins.attrNames (filterAttrs (_: present) attrs))
        )
      )
      + " }";

  # `path` first (what a reader looks for in a compiler table), then the other keys alphabetically.
  inlineOrder = a: b: if a == "path" || b == "path" then a == "path" && b != "path" else a < b;

  pair = entry: "${key entry.name} = ${value entry.value}\n";

  table =
    t:
    let
      entries = filter (entry: present entry.value) t.entries;
      header = if t.name == null then "" else "\n[${concatMapStringsSep "." key t.name}]\n";
    in
    header + concatStrings (map pair entries);
in
{
  inherit value;

  /**
    A TOML document.

    `comment`: lines written first, each as `# line`. `tables`: a list of `{ name; entries; }`, where `name` is null
    for the top-level keys or a list of key parts (`[ "target" "host-compiler" ]`), and `entries` a list of
    `lib.nameValuePair key value`. Tables are written in the order given, keys in the order given.
  */
  document =
    {
      comment ? [ ],
      tables,
    }:
    concatStrings (map (line: "# ${line}\n") comment) + concatStrings (map table tables);
}
