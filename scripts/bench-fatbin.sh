#!/usr/bin/env bash
# How large a multi-target object is under each of nvcc's fatbin compression settings, and what each costs to
# compile (issue 14: smallest fatbins by default). Results and how to read them: docs/benchmarks.md, "Fatbin
# compression". Run by hand, never in CI. It reports CPU time rather than wall time, so it needs no quiet machine
# (and holds no build lock: a run takes half an hour on two cores).
#
#   scripts/bench-fatbin.sh [RELEASE...]            default: 12.4 13.0 13.5 (toolkits from scripts/fetch-toolkits.sh)
#   scripts/bench-fatbin.sh fatbinary [RELEASE...]  default: 13.0 13.5: the fatbinary step alone
#   scripts/bench-fatbin.sh load DIR                on a machine with a GPU: what loading each DIR/*.fatbin costs
#
# Each release compiles examples/fatbin-kernels.cu (`-c`, real nvcc, no wrapper) for the nine targets NVIDIA's
# samples use (75 80 86 87 89 90 100 110 120, less those the release does not list in `--list-gpu-code`) plus
# forward-compatible PTX of the highest, once per setting: nvcc's default, `-Xfatbin=-compress-all`,
# `--no-compress`, and where `nvcc --help` lists them every `--compress-mode` value and `--concat`. For each it
# prints the object's bytes, the CPU time of the whole compile (user + sys of nvcc and every process it runs, from
# /usr/bin/time: the machine is shared, so wall time would measure the other work), the median of RUNS (default 3),
# and the fatbinary step's own time from nvcc's `--time` table; and it checks with cuobjdump that the object still
# lists every target's ELF and the PTX. The three CPU times of each row are printed too.
#
# `fatbinary` compiles the same file once (13.0's nvcc, `-keep`), then runs each release's fatbinary on those cubins
# and PTX with each setting, 5 times: its CPU time alone, which the whole compile's noise hides. With FATBIN_OUT=DIR
# it leaves the fatbins there, for `load` (benches/fatbin-load.c: cuModuleLoadData of each, 41 times, in one context).
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
cd "$(dirname "$0")/.."
repo=$PWD
# shellcheck source=scripts/lib/cuobjdump.sh
source scripts/lib/cuobjdump.sh
command -v /usr/bin/time >/dev/null || { echo "bench-fatbin: /usr/bin/time is missing: run scripts/install-deps.sh" >&2; exit 1; }
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp examples/fatbin-kernels.cu "$work/k.cu"

if [[ ${1:-} == load ]]; then
  dir=$(realpath "${2:?usage: scripts/bench-fatbin.sh load DIR}")
  cc -O2 -o "$work/fatbin-load" benches/fatbin-load.c -ldl
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  for mode in EAGER LAZY; do
    echo "CUDA_MODULE_LOADING=$mode"
    CUDA_MODULE_LOADING=$mode "$work/fatbin-load" "$dir"/*.fatbin
  done
  exit 0
fi

cd "$work"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r); $(date -u +%F)"

if [[ ${1:-} == fatbinary ]]; then
  shift
  releases=("$@")
  [[ ${#releases[@]} -gt 0 ]] || releases=(13.0 13.5)
  root=$("$repo/scripts/fetch-toolkits.sh" --print-root 13.0 2>/dev/null)
  images=() flags=()
  for t in 75 80 86 87 89 90 100 110 120; do flags+=("-gencode=arch=compute_$t,code=sm_$t"); done
  mkdir -p kd
  "$root/bin/nvcc" -ccbin=/usr/bin/g++-12 "${flags[@]}" -gencode=arch=compute_120,code=compute_120 -fatbin -keep \
    -keep-dir kd k.cu -o k.fatbin
  for t in 75 80 86 87 89 90 100 110; do images+=("--image3=kind=elf,sm=$t,file=kd/k.compute_$t.cubin"); done
  images+=("--image3=kind=ptx,sm=120,file=kd/k.compute_120.ptx" "--image3=kind=elf,sm=120,file=kd/k.compute_120.sm_120.cubin")
  echo "fatbinary on the cubins and PTX of nvcc 13.0.88 (9 targets + compute_120 PTX); 5 runs per row"
  echo
  echo "| fatbinary | setting | fatbin bytes | CPU s (each run) |"
  echo "|---|---|---:|---|"
  for release in "${releases[@]}"; do
    fatbinary=$("$repo/scripts/fetch-toolkits.sh" --print-root "$release" 2>/dev/null)/bin/fatbinary
    help=$("$fatbinary" --help)
    for setting in "" -compress=false -compress-all --compress-mode=default --compress-mode=size \
      --compress-mode=speed --compress-mode=balance --compress-mode=none "-compress-all --compress-mode=size" \
      --concat "--concat --compress-mode=size" "--concat -compress-all"; do
      [[ $setting != *--concat* ]] || grep -q -- '^--concat' <<<"$help" || continue
      [[ $setting != *--compress-mode* ]] || grep -q -- '^--compress-mode' <<<"$help" || continue
      read -r -a extra <<<"$setting"
      name=$release${setting// /_}
      cpus=()
      for _ in 1 2 3 4 5; do
        /usr/bin/time -o cpu.txt -f '%U %S' "$fatbinary" --create="out.fatbin" -64 \
          --cicc-cmdline="-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 " "${extra[@]}" "${images[@]}"
        cpus+=("$(awk '{ printf "%.2f", $1 + $2 }' cpu.txt)")
      done
      [[ -z ${FATBIN_OUT:-} ]] || { mkdir -p "$FATBIN_OUT"; cp out.fatbin "$FATBIN_OUT/${name//=/-}.fatbin"; }
      label=$setting
      [[ -n $label ]] || label="fatbinary's default"
      printf '| %s | %s | %s | %s |\n' "$release" "$label" "$(stat -c %s out.fatbin)" "${cpus[*]}"
    done
  done
  exit 0
fi

releases=("$@")
[[ ${#releases[@]} -gt 0 ]] || releases=(12.4 13.0 13.5)
echo "source: examples/fatbin-kernels.cu ($(grep -c '^template __global__' k.cu) kernel instantiations); $runs runs per row"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for release in "${releases[@]}"; do
  root=$("$repo/scripts/fetch-toolkits.sh" --print-root "$release" 2>/dev/null)
  nvcc=$root/bin/nvcc
  cuobjdump=$(find_cuobjdump "$root")
  [[ -n $cuobjdump ]] || { echo "bench-fatbin: no cuobjdump: scripts/fetch-toolkits.sh cuobjdump" >&2; exit 1; }
  # 11.x takes GCC 11 at most.
  ccbin=/usr/bin/g++-12
  [[ $release == 11.* ]] && ccbin=/usr/bin/g++-11
  version=$("$nvcc" --version | sed -n 's/.*, V\([0-9.]*\)$/\1/p')
  listed=$("$nvcc" --list-gpu-code)
  targets=() flags=()
  for t in 75 80 86 87 89 90 100 110 120; do
    grep -qx "sm_$t" <<<"$listed" && targets+=("$t")
  done
  for t in "${targets[@]}"; do flags+=("-gencode=arch=compute_$t,code=sm_$t"); done
  ptx=${targets[-1]}
  flags+=("-gencode=arch=compute_$ptx,code=compute_$ptx")
  help=$("$nvcc" --help)
  settings=("" "-Xfatbin=-compress-all" "--no-compress")
  if grep -q -- '--compress-mode' <<<"$help"; then
    modes=$(sed -n 's/^--compress-mode \[\([a-z,]*\)\].*/\1/p' <<<"$help")
    for m in ${modes//,/ }; do settings+=("--compress-mode=$m"); done
    settings+=("-Xfatbin=-compress-all --compress-mode=size")
  fi
  if grep -q -- '^--concat' <<<"$help"; then
    settings+=("--concat" "--concat --compress-mode=size" "--concat -Xfatbin=-compress-all")
  fi
  echo
  echo "## nvcc $version ($ccbin): ${#targets[@]} targets (${targets[*]}) + compute_$ptx PTX"
  echo
  echo "| setting | object bytes | vs default | CPU s (median) | CPU s (each run) | fatbinary step ms (median) | cuobjdump |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  default_bytes=
  for setting in "${settings[@]}"; do
    read -r -a extra <<<"$setting"
    cpus=() steps=()
    for ((run = 1; run <= runs; run++)); do
      rm -f k.o time.csv
      /usr/bin/time -o cpu.txt -f '%U %S' "$nvcc" -ccbin="$ccbin" "${flags[@]}" "${extra[@]}" --time time.csv \
        -c k.cu -o k.o
      cpus+=("$(awk '{ printf "%.2f", $1 + $2 }' cpu.txt)")
      # nvcc's --time table: one CSV row per phase, its name second, its milliseconds next to last.
      steps+=("$(awk -F' , ' '$2 ~ /^fatbinary/ { s += $(NF - 1) } END { printf "%.0f", s }' time.csv)")
    done
    bytes=$(stat -c %s k.o)
    [[ -n $default_bytes ]] || default_bytes=$bytes
    # Every target's ELF and the PTX must still be there.
    listing=$("$cuobjdump" --list-elf --list-ptx k.o)
    missing=()
    for t in "${targets[@]}"; do grep -q "sm_$t\." <<<"$listing" || missing+=("sm_$t"); done
    grep -q "compute_$ptx\.\|sm_$ptx\.ptx" <<<"$listing" || missing+=("compute_$ptx PTX")
    label=$setting
    [[ -n $label ]] || label="nvcc's default"
    check="all $((${#targets[@]} + 1)) listed"
    [[ ${#missing[@]} -eq 0 ]] || check="MISSING ${missing[*]}"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$(sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$bytes")" \
      "$(awk -v b="$bytes" -v d="$default_bytes" 'BEGIN { printf "%+.1f%%", (b - d) * 100 / d }')" \
      "$(printf '%s\n' "${cpus[@]}" | median)" "${cpus[*]}" "$(printf '%s\n' "${steps[@]}" | median)" "$check"
  done
done
