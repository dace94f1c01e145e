# Sourced by the smoke scripts: find_cuobjdump ROOT prints the cuobjdump to use, ROOT/bin's or the one
# fetch-toolkits.sh caches under $NVCC_WRAPPER_CACHE/tools (PyPI toolkits carry none), or nothing.
find_cuobjdump() {
  local c
  for c in "$1/bin/cuobjdump" "${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper}/tools/cuobjdump"; do
    [[ -x $c ]] && { printf '%s\n' "$c"; return; }
  done
  return 0
}
