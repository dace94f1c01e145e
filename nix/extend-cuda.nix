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
  sets = lib.filter (name: builtins.match "cudaPackages_[0-9]+_[0-9]+" name != null) (lib.attrNames prev);
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
