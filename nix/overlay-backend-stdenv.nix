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
          # Nixpkgs' backendStdenv refuses capabilities at evaluation; this one does too, with nvcc-wrapper's rules
          # and words (./compat.nix; the host compiler is cuda_nvcc's to check, below).
          backendStdenv =
            let
              inherit (finalCuda.pkgs) lib stdenv;
              original = prevCuda'.backendStdenv;
              extra = lib.filterAttrs (name: _: !(stdenv ? ${name})) original;
              compat = import ./compat.nix { inherit lib; };
              inherit (finalCuda) flags;
              refusal = compat.refusal {
                release = finalCuda.cudaMajorMinorVersion;
                inherit (stdenv.hostPlatform) system;
                redist = flags.hostRedistSystem or original.hostRedistSystem or null;
                cross = stdenv.hostPlatform.system != stdenv.buildPlatform.system;
                capabilities = flags.cudaCapabilities or original.cudaCapabilities;
                forwardCompat = flags.cudaForwardCompat or original.cudaForwardCompat or true;
              };
            in
            if refusal != null then
              throw (compat.message "backendStdenv (nix/overlay-backend-stdenv.nix)" refusal)
            else
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
