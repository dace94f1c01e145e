#!/usr/bin/env bash
# What the wrapper costs per nvcc call, side by side with what any wrapper costs (issue 13). Results and how to read
# them: docs/benchmarks.md. Run by hand, never in CI; on a shared machine hold the build lock for the whole run
# (`flock /tmp/cargo.lock scripts/bench.sh`) so that no build runs during a measurement.
#
#   scripts/bench.sh            per-call rows (hyperfine -N, all in one run), peak RSS, execve counts
#   scripts/bench.sh payoff     real NVCC 13.x: examples/kernels.cu for NVIDIA's nine sample targets, directly,
#                               versus one target through the wrapper (`arch-flags = "replace"`)
#   scripts/bench.sh depfile    a call that writes a dependency file (the wrapper waits for nvcc and adds its
#                               inputs) against the same call without one, in one run; with BASELINE=BINARY (an
#                               older static build of the wrapper) both calls through it too, in the same run
#
# The "real nvcc" of the per-call rows is a static no-op C program built here and installed as nvcc in a
# toolkit-shaped directory (with a version.json, as NVIDIA's installers write), so that each row measures only what
# comes before it. RUNS (default 600) sets the runs per row.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
for tool in hyperfine strace /usr/bin/time cc; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing: run scripts/install-deps.sh" >&2; exit 1; }
done

# The release binary as `cargo build --release` makes it (glibc linked dynamically), and the same with glibc linked
# in (static-pie), built in a target directory of its own so that neither build undoes the other.
cargo build --release --locked --quiet --bin nvcc-wrapper
CARGO_TARGET_DIR=target/static cargo rustc --release --locked --quiet --bin nvcc-wrapper -- -C target-feature=+crt-static
dynamic=$repo/target/release/nvcc-wrapper
static=$repo/target/static/release/nvcc-wrapper

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

payoff() {
  local root=${1:-$(scripts/fetch-toolkits.sh --print-root 13.0)}
  local targets=(75 80 86 87 89 90 100 110 120) flags=() t
  for t in "${targets[@]}"; do flags+=("-gencode=arch=compute_$t,code=sm_$t"); done
  mkdir -p "$work/bin" "$work/share/nvcc-wrapper"
  ln -s "$dynamic" "$work/bin/nvcc"
  cat > "$work/share/nvcc-wrapper/config.toml" <<TOML
nvcc = "$root/bin/nvcc"
cuda-version = "$("$root/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')"
[host-compiler]
stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0" }
[gpu]
capabilities = ["${CAPABILITY:-9.0}"]
arch-flags = "replace"
TOML
  cp examples/kernels.cu "$work/"
  cd "$work"
  echo "payoff: $root/bin/nvcc, ${#targets[@]} targets directly vs ${CAPABILITY:-9.0} through the wrapper"
  hyperfine --warmup 1 --runs "${COMPILE_RUNS:-3}" -N --export-markdown payoff.md \
    -n "nvcc directly, ${#targets[@]} targets (${targets[*]})" \
    "$root/bin/nvcc -ccbin=/usr/bin/g++-12 ${flags[*]} -c kernels.cu -o direct.o" \
    -n "through the wrapper, same command line, arch-flags = replace, capability ${CAPABILITY:-9.0}" \
    "bin/nvcc -ccbin=/usr/bin/g++-12 ${flags[*]} -c kernels.cu -o wrapped.o"
  cat payoff.md
  printf '\n| object | bytes |\n|---|---:|\n| direct.o (%s targets) | %s |\n| wrapped.o (1 target) | %s |\n' \
    "${#targets[@]}" "$(stat -c %s direct.o)" "$(stat -c %s wrapped.o)"
  echo
  echo "what the wrapper ran:"
  NVCC_WRAPPER_DRY_RUN=1 bin/nvcc -ccbin=/usr/bin/g++-12 "${flags[@]}" -c kernels.cu -o wrapped.o
  # Linked programs, for running on a GPU machine (docs/benchmarks.md).
  if [[ -n ${PAYOFF_OUT:-} ]]; then
    mkdir -p "$PAYOFF_OUT"
    "$root/bin/nvcc" -ccbin=/usr/bin/g++-12 "${flags[@]}" kernels.cu -o "$PAYOFF_OUT/kernels-direct"
    bin/nvcc -ccbin=/usr/bin/g++-12 "${flags[@]}" kernels.cu -o "$PAYOFF_OUT/kernels-wrapped"
  fi
}

if [[ ${1:-} == payoff ]]; then
  shift
  payoff "$@"
  exit 0
fi

depfile() {
  # A static "nvcc" that writes the dependency file it is asked for (`-MF FILE`), as nvcc does, and nothing else.
  mkdir -p "$work/cuda/bin"
  cat > "$work/writer.c" <<'C'
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "-MF") == 0) {
      FILE *f = fopen(argv[i + 1], "w");
      if (!f) return 1;
      fputs("kernel.o : kernel.cu \\\n    /usr/include/stdc-predef.h\n", f);
      fclose(f);
    }
  return 0;
}
C
  cc -static -O2 -o "$work/cuda/bin/nvcc" "$work/writer.c"
  printf '{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}\n' > "$work/cuda/version.json"
  install_wrapper recorded-static "$static" "nvcc = \"$work/cuda/bin/nvcc\"
[host-compiler]
stdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\" }
[gpu]
capabilities = [\"8.6\"]
"
  cd "$work"
  export NVCC_WRAPPER_PROBE_CACHE_DIR=$work/probe-cache
  recorded-static/bin/nvcc -c kernel.cu -o kernel.o   # the release, probed once into the cache
  local baseline=()
  if [[ -n ${BASELINE:-} ]]; then
    install_wrapper baseline "$BASELINE" "$(cat recorded-static/share/nvcc-wrapper/config.toml)"
    baseline/bin/nvcc -c kernel.cu -o kernel.o
    baseline=(-n 'baseline build, no dependency file (exec)' "baseline/bin/nvcc -c kernel.cu -o kernel.o"
      -n 'baseline build, -MD -MF kernel.d' "baseline/bin/nvcc -MD -MF kernel.d -c kernel.cu -o kernel.o")
  fi
  echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r)"
  hyperfine -N --warmup 20 --runs "${RUNS:-600}" --export-markdown depfile.md --export-json depfile.json \
    -n 'writer as nvcc, directly, -MD -MF' "cuda/bin/nvcc -MD -MF kernel.d -c kernel.cu -o kernel.o" \
    -n 'wrapper (static glibc), no dependency file (exec)' "recorded-static/bin/nvcc -c kernel.cu -o kernel.o" \
    -n 'wrapper (static glibc), -MD -MF kernel.d (waits, adds its inputs)' \
    "recorded-static/bin/nvcc -MD -MF kernel.d -c kernel.cu -o kernel.o" "${baseline[@]}"
  cat depfile.md
  echo
  echo "| row | median [ms] |"
  echo "|---|---:|"
  python3 -c '
import json
for r in json.load(open("depfile.json"))["results"]:
    print("| %s | %.3f |" % (r["command"], r["median"] * 1000))'
  echo
  echo "kernel.d after the wrapper:"
  cat kernel.d
}

# The no-op "nvcc", in a toolkit-shaped tree, and a compiler-free config recording everything.
mkdir -p "$work/cuda/bin"
printf 'int main(void) { return 0; }\n' > "$work/noop.c"
cc -static -O2 -o "$work/cuda/bin/nvcc" "$work/noop.c"
printf '{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}\n' > "$work/cuda/version.json"
touch -d '1 hour ago' "$work/cuda/bin/nvcc"   # the probe cache keeps nothing changed in the last two seconds
nvcc=$work/cuda/bin/nvcc
install_wrapper() { # NAME BINARY [CONFIG TEXT]: NAME/bin/nvcc -> BINARY, the config beside it as an installed one is
  mkdir -p "$work/$1/bin"
  ln -s "$2" "$work/$1/bin/nvcc"
  if [[ -n ${3:-} ]]; then
    mkdir -p "$work/$1/share/nvcc-wrapper"
    printf '%s' "$3" > "$work/$1/share/nvcc-wrapper/config.toml"
  fi
}
if [[ ${1:-} == depfile ]]; then
  depfile
  exit 0
fi
recorded="nvcc = \"$nvcc\"
cuda-version = \"13.0\"
[host-compiler]
stdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\" }
[gpu]
capabilities = [\"8.6\"]
"
install_wrapper recorded "$dynamic" "$recorded"
install_wrapper recorded-static "$static" "$recorded"
install_wrapper plain "$dynamic"
install_wrapper plain-static "$static"

# A wrapper of the kind other projects ship: settings from a file beside it, -ccbin and -gencode added, exec.
mkdir -p "$work/bash/bin" "$work/bash/share"
cat > "$work/bash/share/settings.sh" <<SH
NVCC=$nvcc
CCBIN=/usr/bin/g++-12
CAPABILITIES="86"
SH
cat > "$work/bash/bin/nvcc" <<'SH'
#!/usr/bin/env bash
source "${0%/*}/../share/settings.sh"
flags=(-ccbin="$CCBIN")
for c in $CAPABILITIES; do flags+=("-gencode=arch=compute_$c,code=sm_$c"); done
exec "$NVCC" "${flags[@]}" "$@"
SH
chmod +x "$work/bash/bin/nvcc"

cd "$work"
args=(-c kernel.cu -o kernel.o)
export NVCC_WRAPPER_PROBE_CACHE_DIR=$work/probe-cache
# The no-config rows find the no-op as the first nvcc on PATH after the wrapper, and g++ as the stdenv compiler.
export PATH="$work/cuda/bin:$PATH"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r)"
echo "binaries: dynamic $(stat -c %s "$dynamic") bytes, static $(stat -c %s "$static") bytes"
hyperfine -N --warmup 20 --runs "${RUNS:-600}" --export-markdown per-call.md --export-json per-call.json \
  --prepare true --prepare true --prepare true --prepare true --prepare true --prepare true \
  --prepare "rm -rf $work/probe-cache" --prepare true --prepare true \
  -n 'static no-op as nvcc, run directly' "$nvcc ${args[*]}" \
  -n 'env in front of it (one extra exec)' "env $nvcc ${args[*]}" \
  -n 'env env in front of it (two extra execs)' "env env $nvcc ${args[*]}" \
  -n 'wrapper, recorded config' "recorded/bin/nvcc ${args[*]}" \
  -n 'wrapper (static glibc), recorded config' "recorded-static/bin/nvcc ${args[*]}" \
  -n 'bash wrapper (-ccbin, -gencode, exec)' "bash/bin/nvcc ${args[*]}" \
  -n 'wrapper, no config, cold probe cache (probes g++)' "plain/bin/nvcc ${args[*]}" \
  -n 'wrapper, no config, warm probe cache' "plain/bin/nvcc ${args[*]}" \
  -n 'wrapper (static glibc), no config, warm probe cache' "plain-static/bin/nvcc ${args[*]}"
cat per-call.md
echo
echo "| row | median [ms] |"
echo "|---|---:|"
python3 -c '
import json, sys
for r in json.load(open("per-call.json"))["results"]:
    print("| %s | %.3f |" % (r["command"], r["median"] * 1000))'

echo
echo "| peak RSS of a plan-only call (NVCC_WRAPPER_DRY_RUN=1, /usr/bin/time -f %M, best of 5) | KiB |"
echo "|---|---:|"
rss() { local best=; for _ in 1 2 3 4 5; do
  local kib; kib=$(NVCC_WRAPPER_DRY_RUN=1 /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1)
  [[ -z $best || $kib -lt $best ]] && best=$kib; done; echo "$best"; }
echo "| wrapper, recorded config | $(rss recorded/bin/nvcc "${args[@]}") |"
echo "| wrapper (static glibc), recorded config | $(rss recorded-static/bin/nvcc "${args[@]}") |"
echo "| wrapper, no config, warm probe cache | $(rss plain/bin/nvcc "${args[@]}") |"
echo "| static no-op (for scale) | $(NVCC_WRAPPER_DRY_RUN=1 /usr/bin/time -f %M "$nvcc" 2>&1 | tail -n 1) |"

echo
echo "| processes started (strace -f -e trace=execve; the first is the wrapper itself) | execve | probe cache files opened |"
echo "|---|---:|---:|"
trace() { strace -f -qq -e trace=execve,openat -o trace.txt "$@" >/dev/null 2>&1 || true
  echo "$(grep -c 'execve(' trace.txt) | $(grep -c "probe-cache/" trace.txt)"; }
echo "| wrapper, recorded config | $(trace recorded/bin/nvcc "${args[@]}") |"
echo "| wrapper, no config, warm probe cache | $(trace plain/bin/nvcc "${args[@]}") |"
rm -rf "$work/probe-cache"
echo "| wrapper, no config, cold probe cache | $(trace plain/bin/nvcc "${args[@]}") |"
