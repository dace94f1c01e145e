# The Nixpkgs overlay, step 2 (opt-in, after ./overlay.nix): in every CUDA package set, `backendStdenv` becomes
# plain `stdenv` and `cuda_nvcc` the wrapped nvcc. Code written `effectiveStdenv = if cudaSupport then
# cudaPackages.backendStdenv else stdenv` keeps working unchanged, and builds with the stdenv compiler and its
# libstdc++; nvcc-wrapper chooses nvcc's host compiler at each call.
#
#   import <nixpkgs> { overlays = [ (import ./nix/overlay.nix) (import ./nix/overlay-backend-stdenv.nix) ]; }
#
# This changes the inputs of every CUDA package (each uses backendStdenv or cuda_nvcc), so all of them rebuild.
final: prev: {
  _cuda = prev._cuda.extend (
    _: prevCuda: {
      extensions = prevCuda.extensions ++ [
        (finalCuda: prevCuda': {
          # The stdenv, with the attributes Nixpkgs' backendStdenv carries besides (cudaCapabilities,
          # cudaForwardCompat, hasJetsonCudaCapability, hostRedistSystem, ...), which flags and packages read.
          backendStdenv =
            let
              inherit (finalCuda.pkgs) lib stdenv;
              extra = lib.filterAttrs (name: _: !(stdenv ? ${name})) prevCuda'.backendStdenv;
            in
            stdenv
            // extra
            // {
              nvccHostCCMatchesStdenvCC = true;
            };

          cuda_nvcc =
            finalCuda.nvcc-wrapped
              or (throw "nix/overlay-backend-stdenv.nix needs nix/overlay.nix before it (it provides nvcc-wrapped)");
        })
      ];
    }
  );
}
