#!/usr/bin/env bash
# A real project's build through the wrapper against nvcc directly (issue 31's "done when"): ggml
# (github.com/ggml-org/ggml) with CUDA for four GPU targets, CMake + Ninja, the same number of job slots, and
# ggml's own MUL_MAT tests on the GPU for the library the wrapper built. Results and how to read them:
# docs/benchmarks.md, "Threads from free job slots (issue 31)". Run by hand on a machine with a GPU, never in CI.
#
#   GGML=DIR NVCC=/path/to/real/nvcc WRAPPER=/path/to/nvcc-wrapper scripts/bench-ggml.sh
#
# Settings by variable:
#   GGML       ggml's source tree (required); GGML_COMMIT names its commit where it is no git checkout
#   NVCC       the real nvcc (default: nvcc on PATH)
#   WRAPPER    a built wrapper binary (required; the static one of the README's install line)
#   NINJA      Ninja 1.13 or later, which takes part in the wrapper's jobserver (default: ninja on PATH)
#   JOBS       job slots of every build (default: nproc)
#   RUNS       builds of each kind (default 2)
#   ARCHS      CMAKE_CUDA_ARCHITECTURES (default "80;86;89;90")
#   CXX        the host compiler of both builds, as CMAKE_CUDA_HOST_COMPILER (default: g++ on PATH)
#   TARGETS    Ninja targets to build (default: none, which is all)
#   CMAKE_ARGS more configure arguments, split on spaces (for a trial without a GPU, say)
#   TEST       1 (default): run `test-backend-ops test -o MUL_MAT -b CUDA0` from the wrapper's first build
#   OUT_DIR    where the logs and results.tsv go (default: a new temporary folder); results already in its
#              results.tsv count in the table, and new runs are numbered after them
#   WORK_DIR   where the build folders go (default: a new temporary folder, removed at the end)
#   CPUSETS    CPU lists, one per build ("0-15 16-31 32-47 48-63" for RUNS=2): every build of the runs starts at
#              once, each pinned to its own list (taskset), direct and wrapper alternating over the lists; for a
#              machine with that many cores, where one build at a time would outlast the time a command may run
#              (the builds then share the memory and the disk, each kind alike). Default: one build at a time.
#
# The wrapper is installed as `nvcc` in a prefix of its own, with a config file that names the real nvcc and turns
# off the reproducible-builds flags and fatbin compression, so that the two builds differ only in threads (ggml
# passes its own `-compress-mode=size` to both). Each run configures a fresh build folder for each kind (not timed)
# and times the build alone: nvcc directly under `ninja -j JOBS`, and the wrapper under `nvcc-wrapper jobserver -j
# JOBS -- ninja` (no `-j` for Ninja, which would make it ignore the jobserver: docs/guide/threads.md). The order
# alternates (direct first in odd runs, the wrapper first in even ones). The wall time and the peak memory of the
# whole build come from scripts/tree_peak.py. The wrapper's builds run with NVCC_WRAPPER_LOG=debug, so that its log
# says how many calls took threads. ggml's ccache use is turned off (GGML_CCACHE=OFF) in both.
#
# It takes long: one build for the four default targets had 134 of its 253 steps done after 9 minutes on the
# 16-core H100 host, so the four builds of RUNS=2 and the test take about an hour (estimated). Where one
# command may run only minutes, start it in a session of its own (setsid nohup ... &) with OUT_DIR and WORK_DIR set,
# and read OUT_DIR from later commands; a second invocation with the same OUT_DIR (and TEST=0) adds its runs to the
# table.
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
here=$(cd "$(dirname "$0")" && pwd)

ggml=$(cd "${GGML:?bench-ggml: set GGML to the ggml source tree}" && pwd)
nvcc=$(readlink -f "${NVCC:-$(command -v nvcc)}")
wrapper=$(readlink -f "${WRAPPER:?bench-ggml: set WRAPPER to a built nvcc-wrapper}")
ninja=$(readlink -f "${NINJA:-$(command -v ninja)}")
cxx=$(readlink -f "${CXX:-$(command -v g++)}")
jobs=${JOBS:-$(nproc)}
runs=${RUNS:-2}
archs=${ARCHS:-80;86;89;90}
read -r -a targets <<<"${TARGETS:-}"
read -r -a extra <<<"${CMAKE_ARGS:-}"
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -n ${WORK_DIR:-} ]]; then
  work=$WORK_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
for f in "$nvcc" "$wrapper" "$ninja" "$cxx"; do
  [[ -x $f ]] || { echo "bench-ggml: $f is not an executable" >&2; exit 1; }
done

prefix=$work/prefix
mkdir -p "$prefix/bin" "$prefix/share/nvcc-wrapper"
ln -sfn "$wrapper" "$prefix/bin/nvcc"
ln -sfn "$wrapper" "$prefix/bin/nvcc-wrapper"
cat >"$prefix/share/nvcc-wrapper/config.toml" <<TOML
nvcc = "$nvcc"
reproducible = false
[gpu]
compress-fatbin = false
TOML

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(nproc) cores (nproc), $(free -g | awk '/^Mem:/{print $2}') GiB, $(uname -m)"
  if command -v nvidia-smi >/dev/null; then echo "gpu: $(nvidia-smi -L | head -n1)"; fi
  if [[ -e $ggml/.git ]]; then
    echo "ggml: $(git -C "$ggml" rev-parse HEAD)"
  else
    echo "ggml: ${GGML_COMMIT:-unknown}"
  fi
  echo "nvcc: $("$nvcc" --version | tail -n2 | tr '\n' ' ')"
  echo "wrapper: $("$wrapper" --version)"
  echo "cmake: $(cmake --version | head -n1)"
  echo "ninja: $("$ninja" --version)"
  echo "host compiler: $cxx: $("$cxx" --version | head -n1)"
  echo "jobs: $jobs; runs: $runs; archs: $archs; targets: ${targets[*]:-all}"
} | tee -a "$out/env.txt"

results=$out/results.tsv
touch "$results"
first=$(awk 'BEGIN{n=0} {if ($1 > n) n = $1} END{print n + 1}' "$results")

# build KIND RUN: configure a fresh folder (not timed), then time the build; appends "run kind wall_s peak_mib rc"
build() {
  local kind=$1 run=$2 dir=$work/build-$1-$2 compiler cmd
  rm -rf "$dir"
  if [[ $kind == direct ]]; then
    compiler=$nvcc
    cmd=("$ninja" -C "$dir" -j "$jobs" "${targets[@]}")
  else
    compiler=$prefix/bin/nvcc
    cmd=(env NVCC_WRAPPER_LOG=debug "$prefix/bin/nvcc-wrapper" jobserver -j "$jobs" --
      "$ninja" -C "$dir" "${targets[@]}")
  fi
  cmake -S "$ggml" -B "$dir" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$compiler" -DCMAKE_CUDA_HOST_COMPILER="$cxx" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")" -DGGML_CUDA=ON -DGGML_BUILD_TESTS=ON -DGGML_CCACHE=OFF \
    "${extra[@]}" >"$out/configure-$kind-$run.log" 2>&1 ||
    { tail -n 40 "$out/configure-$kind-$run.log" >&2; echo "bench-ggml: configure $kind $run failed" >&2; exit 1; }
  if [[ -n ${3:-} ]]; then cmd=(taskset -c "$3" "${cmd[@]}"); fi
  echo "run $run, $kind: building ${3:+on CPUs $3 }..."
  local json
  json=$(python3 "$here/tree_peak.py" "$kind $run" -- "${cmd[@]}" 2>"$out/build-$kind-$run.log") || true
  echo "$json"
  python3 -c 'import json, sys; r = json.loads(sys.argv[1])
print(sys.argv[2], sys.argv[3], r["wall_s"], r["peak_mib"], r["rc"], sep="\t")' "$json" "$run" "$kind" >>"$results"
  if [[ $kind == wrapper ]]; then
    local cuda taken
    cuda=$(grep -c 'Building CUDA object' "$out/build-$kind-$run.log" || true)
    taken=$(grep -c 'nvcc runs with --threads [0-9]' "$out/build-$kind-$run.log" || true)
    echo "run $run, wrapper: $taken of $cuda CUDA compiles took threads from free job slots" | tee -a "$out/env.txt"
    grep -o 'nvcc runs with --threads [0-9]*' "$out/build-$kind-$run.log" | sort | uniq -c | sed 's/^/  /' |
      tee -a "$out/env.txt" || true
  fi
  if [[ $(tail -n1 "$results" | cut -f5) != 0 ]]; then
    tail -n 40 "$out/build-$kind-$run.log" >&2
    echo "bench-ggml: build $kind $run failed" >&2
    exit 1
  fi
}

# The MUL_MAT tests on the wrapper's build of run $1.
mul_mat() {
  local run=$1 rc=0
  echo "test-backend-ops test -o MUL_MAT -b CUDA0, the wrapper's build of run $run:"
  "$work/build-wrapper-$run/bin/test-backend-ops" test -o MUL_MAT -b CUDA0 >"$out/test-backend-ops.log" 2>&1 || rc=$?
  echo "exit code: $rc" >>"$out/test-backend-ops.log"
  # Its verdicts are coloured: take the escapes out before reading them.
  sed 's/\x1b\[[0-9;]*m//g' "$out/test-backend-ops.log" >"$out/test-backend-ops.txt"
  echo "  not supported by CUDA0: $(grep -c 'not supported' "$out/test-backend-ops.txt" || true)"
  grep -E 'FAIL' "$out/test-backend-ops.txt" | head -n 20 || true
  grep -E 'tests passed|backends passed|Backend CUDA0:|^exit code' "$out/test-backend-ops.txt" | sed 's/^ */  /'
}

if [[ -n ${CPUSETS:-} ]]; then
  read -r -a sets <<<"$CPUSETS"
  ((${#sets[@]} >= 2 * runs)) || { echo "bench-ggml: CPUSETS names ${#sets[@]} lists, and $runs runs need $((2 * runs))" >&2; exit 1; }
  i=0
  pids=()
  for ((run = first; run < first + runs; run++)); do
    for kind in direct wrapper; do
      build "$kind" "$run" "${sets[$i]}" &
      pids+=($!)
      i=$((i + 1))
    done
  done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  ((failed == 0)) || { echo "bench-ggml: a build failed" >&2; exit 1; }
  if [[ ${TEST:-1} == 1 ]]; then mul_mat "$first"; fi
  runs=0
fi

for ((run = first; run < first + runs; run++)); do
  if ((run % 2)); then order=(direct wrapper); else order=(wrapper direct); fi
  for kind in "${order[@]}"; do
    build "$kind" "$run"
    if [[ $kind == direct ]]; then rm -rf "$work/build-direct-$run"; fi
  done
  if [[ ${TEST:-1} == 1 && $run == "$first" ]]; then mul_mat "$run"; fi
  if ((run != first)); then rm -rf "$work/build-wrapper-$run"; fi
done

echo
echo "| run | direct s | wrapper s | wrapper / direct | direct peak GiB | wrapper peak GiB |"
echo "|---:|---:|---:|---:|---:|---:|"
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    run, kind, wall, peak, rc = line.split()
    rows.setdefault(int(run), {})[kind] = (float(wall), float(peak) / 1024, int(rc))
direct, wrapper = [], []
for run in sorted(rows):
    r = rows[run]
    if "direct" not in r or "wrapper" not in r:
        continue
    d, w = r["direct"], r["wrapper"]
    direct.append(d[0]); wrapper.append(w[0])
    print("| %d | %.1f | %.1f | %.3f | %.1f | %.1f |" % (run, d[0], w[0], w[0] / d[0], d[1], w[1]))
if direct:
    md, mw = statistics.median(direct), statistics.median(wrapper)
    print("\nmedians: direct %.1f s, wrapper %.1f s, wrapper / direct %.3f" % (md, mw, mw / md))
PY
