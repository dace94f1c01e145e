#!/usr/bin/env bash
# Regenerates link/hot-path.ld, the linker script that places the code a drop-in call runs at the front of the
# binary's text (docs/benchmarks.md, "The drop-in's code in one place"). It builds the static wrapper as the README's
# install line does, runs it under callgrind on the calls bench.sh measures (a recorded config; four targets under a
# jobserver with no free slot; no config, with a warm probe cache), each up to its exec of a no-op nvcc, and lists
# every function they ran, in the order callgrind met them (a call that writes a dependency file is left out: its
# keeper's posix_spawn fails under valgrind; it runs the recorded call's code up to its fork):
#   - Rust functions by their v0 symbol (.cargo/config.toml asks for v0 mangling: it spells generic arguments in the
#     name, where the legacy scheme leaves them to a hash), each crate's hash left to a wildcard, so that the names
#     still match after a compiler or dependency update;
#   - glibc's functions (a static build links libc.a) by the archive member that holds them, a string function's
#     variant by its whole family (memmove-*.o): under valgrind glibc picks the variant for valgrind's CPU, not the
#     machine's.
# Run it after a change that renames or moves functions on the drop-in's path; the stand-in test of
# tests/wrapper/layout.rs fails when too few of the listed names match the binary.
# Needs valgrind, nm and a C compiler (Debian: valgrind binutils gcc).
#
#   scripts/hot-path.sh         build, profile, write link/hot-path.ld (commit it with the change that moved code)
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
cd "$(dirname "$0")/.."
repo=$PWD
for tool in valgrind nm cc python3; do
  command -v "$tool" >/dev/null || { echo "hot-path: $tool is missing (Debian: apt install valgrind binutils gcc)" >&2; exit 1; }
done

CARGO_TARGET_DIR=target/static cargo rustc --release --locked --quiet --bin nvcc-wrapper -- \
  -C target-feature=+crt-static -C relocation-model=static
wrapper=$repo/target/static/release/nvcc-wrapper
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A toolkit-shaped no-op nvcc, as bench.sh's.
mkdir -p "$work/cuda/bin" "$work/recorded/bin" "$work/recorded/share/nvcc-wrapper" "$work/plain/bin"
printf 'int main(void) { return 0; }\n' >"$work/noop.c"
cc -static -O2 -o "$work/cuda/bin/nvcc" "$work/noop.c"
touch -d '1 hour ago' "$work/cuda/bin/nvcc" # the probe cache keeps nothing changed in the last two seconds
printf '{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}\n' >"$work/cuda/version.json"
install -m755 "$wrapper" "$work/recorded/bin/nvcc"
install -m755 "$wrapper" "$work/plain/bin/nvcc"
printf 'nvcc = "%s"\ncuda-version = "13.0"\n[host-compiler]\nstdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0" }\n[gpu]\ncapabilities = ["8.6"]\n' \
  "$work/cuda/bin/nvcc" >"$work/recorded/share/nvcc-wrapper/config.toml"
cd "$work"
mkfifo slots
exec 9<>slots # held open with no token in it: every slot is taken
export NVCC_WRAPPER_PROBE_CACHE_DIR=$work/probe-cache PATH="$work/cuda/bin:$PATH"
plain/bin/nvcc -c kernel.cu -o kernel.o # fills the probe cache

n=0
profile() { # NAME COMMAND...: callgrind's record of COMMAND up to its exec, one file per process and part
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --dump-before=execve --callgrind-out-file="$work/cg.$n.$1.%p" "${@:2}" \
    >/dev/null 2>"$work/valgrind.$1.log" || { cat "$work/valgrind.$1.log" >&2; exit 1; }
}
profile recorded recorded/bin/nvcc -c kernel.cu -o kernel.o
profile slots env MAKEFLAGS="-j4 --jobserver-auth=fifo:$work/slots" NVCC_WRAPPER_CAPABILITIES="8.0;8.6;8.9;9.0" \
  recorded/bin/nvcc -c kernel.cu -o kernel.o
profile plain plain/bin/nvcc -c kernel.cu -o kernel.o

libc=$(cc -print-file-name=libc.a)
nm -A --defined-only "$libc" 2>/dev/null | awk '$2 ~ /^[TtWwi]$/ {n = split($1, p, ":"); print p[n - 1], $2, $3}' >"$work/libc.txt"
python3 - "$work" "$repo/link/hot-path.ld" "$(rustc --version)" "$(basename "$libc") of $(ldd --version | head -n1)" <<'PY'
import glob, os, re, sys
work, out, rustc, libc = sys.argv[1:5]
member, dispatcher = {}, set()
for line in open(os.path.join(work, "libc.txt")):
    m, kind, name = line.split()
    member.setdefault(name, m)
    if kind == "i":
        dispatcher.add(name)
def files():
    # The scenarios in their order (cg.N.NAME.PID), in each the part up to the exec (dumped there: .1) first.
    def key(path):
        n, _, pid = os.path.basename(path).split(".")[1:4]
        return int(n), int(pid), 0 if path.endswith(".1") else 1
    return sorted(glob.glob(os.path.join(work, "cg.*")), key=key)
names, seen = [], set()
for path in files():
    ids = {}
    for line in open(path):
        m = re.match(r"^c?fn=\((\d+)\)(?: (\S+))?", line)
        if not m:
            continue
        if m.group(2):
            ids[m.group(1)] = m.group(2)
        # callgrind marks a recursive call's frames `name'2`.
        name = re.sub(r"'\d+$", "", ids.get(m.group(1), ""))
        if name and name not in seen:
            seen.add(name)
            names.append(name)
rust, libc_members, families = [], [], []
for name in names:
    if name.startswith("_R"):
        pattern = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
        if pattern not in rust:
            rust.append(pattern)
        continue
    m = member.get(name) or member.get(name.split(".")[0])
    if not m:
        continue
    # A string function that ran stands for its whole family (strlen.o, strlen-avx2.o, strlen-evex.o...): glibc picks
    # the variant for the CPU. One whose dispatcher alone ran (every static start runs each, to pick), for itself;
    # but those Rust's code calls are named by their dispatcher's symbol in callgrind's record.
    stem = re.match(r"[^-.]+", m).group(0)
    called = name not in dispatcher or name in ("memset", "memcpy", "memmove", "memcmp", "bcmp", "memchr", "strlen")
    if called and re.fullmatch(r"(mem|str|stp|wcs|wmem|rawmem)[a-z_]*", stem):
        if stem + "-*.o" not in families:
            families.append(stem + "-*.o")
    if m not in libc_members:
        libc_members.append(m)
with open(out, "w") as f:
    f.write("/* Generated by scripts/hot-path.sh: the code a drop-in call runs, placed first, in the order callgrind\n"
            "   met it; the rest of the text follows as the linker lays it out (INSERT keeps its own layout). build.rs\n"
            "   hands this script to the linker. Profiled with %s and %s. */\n" % (rustc, libc))
    f.write("SECTIONS\n{\n  .text.hot_path :\n  {\n    *crt*.o(.text .text.*)\n")
    for p in rust:
        f.write("    *(.text.%s .text.unlikely.%s)\n" % (p, p))
    for m in libc_members:
        f.write("    *libc.a:%s(.text .text.*)\n" % m)
    for m in families:
        f.write("    *libc.a:%s(.text .text.*)\n" % m)
    f.write("  }\n}\nINSERT BEFORE .text;\n")
print("hot-path: %d Rust functions, %d glibc members, %d string families -> %s"
      % (len(rust), len(libc_members), len(families), "link/hot-path.ld"))
PY
