#!/usr/bin/env bash
# Issue 31's last question, by measurement: should the wrapper hold a call back (a bounded wait) when starting it
# would run the machine out of memory? Such a hold-back could only look at the memory free when the call starts. Here
# JOBS compiles of examples/thrust-heavy.cu (one GPU target each, so no call takes threads) start at once under GNU
# make inside a memory cgroup of LIMIT_MIB, with nvcc directly; each records, as it starts, the memory the cgroup has
# free (what a hold-back would read), then its exit code. A sampler records the cgroup's peak. Results and how to
# read them: docs/benchmarks.md, "Threads from free job slots (issue 31)". Needs root (a cgroup of its own), run by
# hand, never in CI.
#
#   NVCC=/path/to/nvcc scripts/measure-holdback.sh
#
# Settings by variable: NVCC (default: nvcc on PATH), CXX (g++-12), LIMIT_MIB (2048), JOBS (4), TARGET (80),
# STAGGER (seconds between starts; default 0, all at once, as make starts them).
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
cd "$(dirname "$0")/.."
nvcc=${NVCC:-$(command -v nvcc)} cxx=${CXX:-g++-12} limit=$((${LIMIT_MIB:-2048} << 20)) jobs=${JOBS:-4}
target=${TARGET:-80} stagger=${STAGGER:-0}
work=$(mktemp -d)
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
if [[ -n $own ]]; then # cgroup v1
  cg=/sys/fs/cgroup/memory${own%/}/holdback-$$ usage=memory.usage_in_bytes
  mkdir "$cg"; echo "$limit" >"$cg/memory.limit_in_bytes"
else
  cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/holdback-$$ usage=memory.current
  cg=${cg/\/\//\/}; mkdir "$cg"; echo "$limit" >"$cg/memory.max"
fi
cleanup() { kill "${sampler:-0}" 2>/dev/null || true; sleep 0.5; rmdir "$cg" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
sources=()
for ((i = 1; i <= jobs; i++)); do cp examples/thrust-heavy.cu "$work/f$i.cu"; sources+=("f$i.o"); done
# Each rule: wait its turn (STAGGER), write what a hold-back would read (the cgroup's limit less its usage), compile,
# write the exit code.
cat >"$work/call.sh" <<SH
#!/bin/sh
n=\${1#f}; n=\${n%.cu}
sleep \$(( (n - 1) * $stagger ))
echo "\$1 start \$(date +%s.%N) free_mib \$(( ($limit - \$(cat $cg/$usage)) >> 20 ))" >>$work/calls.log
"$nvcc" -ccbin "$cxx" -gencode=arch=compute_$target,code=sm_$target -t 1 -c "\$1" -o "\$2" 2>>$work/nvcc.log
rc=\$?
echo "\$1 end \$(date +%s.%N) rc \$rc" >>$work/calls.log
exit \$rc
SH
chmod +x "$work/call.sh"
printf 'all: %s\n%%.o: %%.cu\n\t%s $< $@\n' "${sources[*]}" "$work/call.sh" >"$work/Makefile"
( while :; do cat "$cg/$usage"; sleep 0.1; done >"$work/usage.log" ) &
sampler=$!
echo "holdback: $(nproc) cores, cgroup limit $((limit >> 20)) MiB, $jobs compiles of thrust-heavy.cu for sm_$target at once (stagger ${stagger}s), $("$nvcc" --version | tail -n1)"
start=$(date +%s.%N)
sh -c 'echo $$ >"$1/cgroup.procs"; exec make -k -C "$2" -j"$3"' sh "$cg" "$work" "$jobs" >"$work/make.log" 2>&1 && rc=0 || rc=$?
end=$(date +%s.%N)
kill "$sampler"; sampler=
peak=$(sort -n "$work/usage.log" | tail -n1)
echo "make exit code $rc after $(echo "$end - $start" | bc) s; cgroup peak $((peak >> 20)) MiB"
sort -k3 -n "$work/calls.log" | awk -v t0="$start" '{ printf "  %s %s at %+.1f s: %s %s\n", $1, $2, $3 - t0, $4, $5 }'
[[ -e $cg/memory.oom_control ]] && grep oom_kill "$cg/memory.oom_control" | sed 's/^/  cgroup /'
[[ -e $cg/memory.events ]] && grep oom_kill "$cg/memory.events" | sed 's/^/  cgroup /'
grep -m3 -i -E 'killed|signal|error' "$work/nvcc.log" | sed 's/^/  nvcc: /' || true
