#!/usr/bin/env bash
# measure-reproducible.sh: which outputs of real nvcc releases are bit-identical across two builds, what differs in
# the others, and which flags remove each difference (issue 23). Real nvcc, no wrapper: this is how the facts in
# docs/nvcc-facts.md, "Reproducible builds", and the rows of compat-data/reproducible.toml were measured. The work is
# done by scripts/measure_reproducible.py (with scripts/lib/reproducible_build.py and reproducible_explain.py); run by
# hand, never in CI (a full pass takes about ten minutes on two busy cores, every nvcc under `nice -n 10`).
#
#   scripts/measure-reproducible.sh [--releases 11.8,13.5] [--setups gcc,clang,sbsa,jetson] [--kinds obj,dc,...]
#                                   [--fixes SET]... [--same-build-dir] [--launcher ccache|sccache]
#                                   [--json FILE] [--work DIR] [-v]
#
# Each release in the cache (scripts/fetch-toolkits.sh) builds examples/hello.cu and the two-file relocatable device
# code of tests/fixtures/reproducible/ to every output kind (-c, -dc, -dlink, -lib, an executable, -ptx, -cubin,
# -fatbin, compressed fatbins, device LTO and its link, host LTO, -g, -G, -lineinfo), with GCC and Clang host
# compilers and an aarch64 cross compiler (and a Jetson-shaped target for 12.4), twice: another pid for every nvcc,
# another TMPDIR, another build directory with the same relative paths (or, with --same-build-dir, the same one, as
# Nix builds in /build) and another time. It prints every output that differs, where (ELF sections, archive
# headers, cuobjdump's view of the device code) and why (causes: pid, tmpdir, build-dir, module-id, ar-date,
# debug-ptx-name, device-opaque, unexplained), and ends with a count. A fix set (`--fixes`) adds flags before each
# call's own: `none`, `proposal` (what the wrapper should add), `proposal-X` (all but X), or fixes joined by `+`:
#   seed         --frandom-seed=<output> (13.0 on), -Xcompiler=-frandom-seed=<output> (before)
#   tmpmap       -Xcompiler=-ffile-prefix-map=$TMPDIR/tmpxft_<pid of nvcc as 8 hex digits>_=tmpxft_
#   objtemp      -objtemp on -c and -dc calls (intermediates named after the object, not the pid)
#   keep         --keep --keep-dir=out/keep (intermediates named after the input)
#   cudafe-path  -Xcudafe=--orig_src_path_name=<input as given> (the module id hashes cudafe++'s absolute path)
#   cicc-path    -Xcicc=--orig_src_path_name=<input as given>
#   ar           -Xarchive=-D on -lib calls (ar's deterministic mode)
#   build-map    -Xcompiler=-ffile-prefix-map=<build dir>=. (the build's own map; not the wrapper's to add)
#   source-mtime not a flag: the sources get modification time 1, as in Nix's store
# With --launcher, nvcc runs behind ccache (Debian's) or sccache (scripts/install-tools.sh) as the wrapper's
# `launcher` runs it, three times: two misses with caches of their own, then a hit with the first cache.
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
command -v python3 >/dev/null ||
  { echo "measure-reproducible: error: python3 is needed (scripts/install-deps.sh installs it)" >&2; exit 1; }
# -B: no __pycache__ in the checkout.
exec python3 -B "$(dirname "${BASH_SOURCE[0]}")/measure_reproducible.py" "$@"
