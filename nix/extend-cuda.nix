# How ./overlay.nix and ./overlay-backend-stdenv.nix add an extension (`finalCuda: prevCuda: { ... }`) to every CUDA
# package set, in the shapes Nixpkgs has had (read in its pkgs/top-level/cuda-packages.nix and
# pkgs/development/cuda-modules/_cuda/default.nix of several trees):
#
# - `_cuda` made by lib.makeExtensible with an `extensions` list, which every CUDA package set applies (the trees of
#   2025-26 whose manual documents `_cuda.extensions`): the extension is appended there, so every set, however it
#   is named, gets it.
# - `_cuda` without `extensions` (trees where its data is built by the module system, `_cuda.db` from
#   `dbEvaluation`), or no `_cuda` at all (older trees): each `cudaPackages_X_Y` of the package set is a scope, and
#   is extended with its `overrideScope`. Nixpkgs defines the aliases (`cudaPackages_X`, `cudaPackages`) as those
#   attributes of the final package set, so they follow.
#
# Returns the overlay's attributes for `prev`, the package set before the overlay.
prev: extension:
let
  inherit (prev) lib;
  viaExtensions = prev ? _cuda && prev._cuda ? extensions;
  # A package set named after its release: `cudaPackages_`, then digits, one `_`, digits (cudaPackages_12_4), told by
  # its characters (no pattern: nix/ parses no string, tests hold it to that).
  prefix = "cudaPackages_";
  characters = text: builtins.genList (i: builtins.substring i 1 text) (builtins.stringLength text);
  digits = characters "0123456789";
  isSetName =
    name:
    let
      rest = characters (builtins.substring (builtins.stringLength prefix) (builtins.stringLength name) name);
      count = builtins.length rest;
      digit = c: builtins.elem c digits;
    in
    builtins.substring 0 (builtins.stringLength prefix) name == prefix
    && count >= 3
    && builtins.length (builtins.filter (c: c == "_") rest) == 1
    && digit (builtins.head rest)
    && digit (builtins.elemAt rest (count - 1))
    && builtins.all (c: c == "_" || digit c) rest;
  sets = builtins.filter isSetName (builtins.attrNames prev);
  extendSet =
    name:
    if prev.${name} ? overrideScope then
      prev.${name}.overrideScope extension
    else
      throw "nvcc-wrapper's overlay: ${name} is not a scope (no `overrideScope`) and this Nixpkgs' `_cuda` has no `extensions`; it needs either (Nixpkgs' CUDA package sets are scopes in every tree read, and `_cuda.extensions` exists in the trees of 2025-26), or call makeNvccWrapper by hand";
in
if viaExtensions then
  {
    _cuda = prev._cuda.extend (
      _: prevCuda: {
        extensions = prevCuda.extensions ++ [ extension ];
      }
    );
  }
else
  lib.genAttrs sets extendSet
