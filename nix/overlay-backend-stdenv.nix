# The Nixpkgs overlay, step 2 (opt-in, after ./overlay.nix): in every CUDA package set, `backendStdenv` becomes
# plain `stdenv` and `cuda_nvcc` the wrapped nvcc. Code written `effectiveStdenv = if cudaSupport then
# cudaPackages.backendStdenv else stdenv` keeps working unchanged, and builds with the stdenv compiler and its
# libstdc++; nvcc-wrapper chooses nvcc's host compiler at each call.
#
#   import <nixpkgs> { overlays = [ (import ./nix/overlay.nix) (import ./nix/overlay-backend-stdenv.nix) ]; }
#
# This changes the inputs of every CUDA package (each uses backendStdenv or cuda_nvcc), so all of them rebuild, except
# the unwrapped nvcc (`cuda_nvcc-unwrapped`): that one is Nixpkgs' own, the same derivation as without the overlays.
_final: prev:
import ./extend-cuda.nix prev (
  finalCuda: prevCuda':
  let
    inherit (finalCuda.pkgs) lib stdenv;
    # True in the copy of this package set that holds Nixpkgs' own nvcc (see cuda_nvcc-unwrapped): there,
    # this extension changes nothing.
    asNixpkgs = finalCuda.nvccWrapperAsNixpkgs or false;
  in
  {
    # The stdenv, with the attributes Nixpkgs' backendStdenv carries besides (cudaCapabilities,
    # cudaForwardCompat, hasJetsonCudaCapability, hostRedistSystem, ...), which flags and packages read.
    # Nixpkgs' backendStdenv refuses capabilities at evaluation; this one does too, with nvcc-wrapper's rules
    # and words (makeNvccWrapper's compat.nix; the host compiler is cuda_nvcc's to check). Newer Nixpkgs derives `flags`
    # from backendStdenv, so the request is read from Nixpkgs' own backendStdenv first (whose own checks,
    # where it has them, then speak first).
    backendStdenv =
      let
        original = prevCuda'.backendStdenv;
        extra = lib.filterAttrs (name: _: !(stdenv ? ${name})) original;
        compat = import ./nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper/compat.nix { inherit lib; };
        inherit (finalCuda) flags;
        refusal = compat.refusal {
          release = finalCuda.cudaMajorMinorVersion;
          inherit (stdenv.hostPlatform) system;
          redist = original.hostRedistSystem or flags.hostRedistSystem or null;
          cross = stdenv.hostPlatform.system != stdenv.buildPlatform.system;
          capabilities = original.cudaCapabilities or flags.cudaCapabilities;
          forwardCompat = original.cudaForwardCompat or flags.cudaForwardCompat or true;
        };
      in
      # Where CUDA is not (darwin), Nixpkgs' backendStdenv is the plain stdenv, so that evaluating it breaks nothing:
      # kept as it is.
      if asNixpkgs || (original.hostRedistSystem or null) == "unsupported" then
        original
      else if refusal != null then
        throw (compat.message "backendStdenv (nix/overlay-backend-stdenv.nix)" refusal)
      else
        stdenv
        // extra
        // {
          nvccHostCCMatchesStdenvCC = true;
        };

    cuda_nvcc =
      if asNixpkgs then
        prevCuda'.cuda_nvcc
      else
        finalCuda.nvcc-wrapped
          or (throw "nix/overlay-backend-stdenv.nix needs nix/overlay.nix before it (it provides nvcc-wrapped)");

    # Nixpkgs' own nvcc, exactly: taken from a copy of this package set in which this extension changes
    # nothing, so that it and everything it is built from (its nvcc.profile's compiler-bindir, the redist
    # builder, the setup hook) come from Nixpkgs' backendStdenv, not from the stdenv above. Only the
    # copy's marker attribute differs, and no package takes it as an argument.
    cuda_nvcc-unwrapped =
      if asNixpkgs then
        prevCuda'.cuda_nvcc-unwrapped or prevCuda'.cuda_nvcc
      else if finalCuda ? overrideScope then
        (finalCuda.overrideScope (_: _: { nvccWrapperAsNixpkgs = true; })).cuda_nvcc
      else
        throw "nix/overlay-backend-stdenv.nix needs CUDA package sets that are scopes (`overrideScope`), as Nixpkgs' are (lib.makeScope, makeScopeWithSplicing')";
  }
)
