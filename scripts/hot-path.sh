#!/usr/bin/env bash
# Regenerates link/hot-path.ld, the linker script that places the code a drop-in call runs at the front of the
# binary's text (docs/benchmarks.md, "The drop-in's code in one place"). It builds the static wrapper as the README's
# install line does, runs it under callgrind on the calls bench.sh measures (a recorded config; four targets under a
# jobserver with no free slot, up to where its keeper holds nvcc; no config, with a warm probe cache) and on a new
# user's call (a recorded config, the probe cache in the home directory), each up to its exec of a no-op nvcc, and
# lists every function they ran, in the order callgrind met them (a call that writes a dependency file is left out:
# its keeper's posix_spawn fails under valgrind; it runs the recorded call's code up to its fork):
#   - Rust functions by their v0 symbol (.cargo/config.toml asks for v0 mangling: it spells generic arguments in the
#     name, where the legacy scheme leaves them to a hash), each crate's hash left to a wildcard, so that the names
#     still match after a compiler or dependency update; the C `main` by its name;
#   - glibc's functions (a static build links libc.a) and libgcc's unwinder's by the archive member that holds them,
#     a string function's variant by its whole family (memmove-*.o): under valgrind glibc picks the variant for
#     valgrind's CPU, not the machine's; the call stubs of those variants (.iplt); and what valgrind hides: execve,
#     and the vDSO's set-up (valgrind gives a program no vDSO).
# It also runs them under lackey, which lists every load and store, and places the read-only data they read (the input
# sections that hold it, found in a link map) at the front of .rodata, in a section of its own: the glibc start's and
# Rust's constants lay spread over six 64 KiB windows of the file, each a page fault of its own. The variables they
# read or write (.data, .bss) are placed together the same way, at the end of .data and the front of .bss.
# Run it after a change on the drop-in's path (or one that adds or removes constants: Rust's unnamed ones are listed
# by their numbers in this build); the stand-in test of tests/wrapper/layout.rs fails when too few of the listed
# function names match the binary.
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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The link map says which input section each byte of read-only data came from (the binary is the same without it).
CARGO_TARGET_DIR=target/static cargo rustc --release --locked --quiet --bin nvcc-wrapper -- \
  -C target-feature=+crt-static -C relocation-model=static -C link-arg=-Wl,-Map="$work/wrapper.map"
wrapper=$repo/target/static/release/nvcc-wrapper

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
# A variable of every name length up to 48, for the runs that list the data read: the wrapper reads the name of a
# variable it looks up only when the environment holds one of that length to compare it with.
lengths=()
for ((i = 1; i <= 48; i++)); do lengths+=("$(printf "%${i}s" | tr ' ' Z)=1"); done
# [-f] NAME [-u VAR | VAR=VALUE]... COMMAND...: callgrind's record of COMMAND, in that environment, up to its exec,
# one file per process and part; then lackey's list of every load and store of the same run, with `lengths` added.
# The environment is valgrind's own: valgrind follows no exec, so `env VAR=VALUE COMMAND` would record env. -f:
# COMMAND fails under valgrind past the code to record, and its record stands.
profile() {
  local fails=false
  [[ $1 == -f ]] && { fails=true; shift; }
  local name=$1 vars=()
  shift
  while [[ $1 == -u || $1 == *=* ]]; do
    [[ $1 == -u ]] && { vars+=("$1"); shift; }
    vars+=("$1")
    shift
  done
  n=$((n + 1))
  env "${vars[@]}" valgrind --tool=callgrind --demangle=no --dump-before=execve \
    --callgrind-out-file="$work/cg.$n.$name.%p" "$@" >/dev/null 2>"$work/valgrind.$name.log" ||
    $fails || { cat "$work/valgrind.$name.log" >&2; exit 1; }
  env "${vars[@]}" "${lengths[@]}" valgrind --tool=lackey --trace-mem=yes --log-file="$work/reads.$n.$name.%p" \
    "$@" >/dev/null 2>"$work/valgrind.$name.log" || $fails || { cat "$work/valgrind.$name.log" >&2; exit 1; }
}
profile recorded recorded/bin/nvcc -c kernel.cu -o kernel.o
# Under a jobserver the wrapper forks a keeper, which holds nvcc under a seccomp filter that valgrind cannot set up
# (system call 317): the records of the wrapper and of its keeper, up to there, stand.
profile -f slots MAKEFLAGS="-j4 --jobserver-auth=fifo:$work/slots" NVCC_WRAPPER_CAPABILITIES="8.0;8.6;8.9;9.0" \
  recorded/bin/nvcc -c kernel.cu -o kernel.o
profile plain plain/bin/nvcc -c kernel.cu -o kernel.o
# A new user's call: no probe cache named, the user's cache directory looked for (and found) under HOME.
mkdir -p home/.cache
profile home -u NVCC_WRAPPER_PROBE_CACHE_DIR HOME="$work/home" recorded/bin/nvcc -c kernel.cu -o kernel.o

# glibc's archive, and libgcc's unwinder (whose frame registration every static start runs): ARCHIVE MEMBER KIND NAME.
libc=$(cc -print-file-name=libc.a)
for archive in "$libc" "$(cc -print-file-name=libgcc_eh.a)"; do
  nm -A --defined-only "$archive" 2>/dev/null |
    awk -v a="$(basename "$archive")" '$2 ~ /^[TtWwi]$/ {n = split($1, p, ":"); print a, p[n - 1], $2, $3}'
done >"$work/archives.txt"
python3 - "$work" "$repo/link/hot-path.ld" "$(rustc --version)" "$(basename "$libc") of $(ldd --version | head -n1)" <<'PY'
import bisect, glob, os, re, sys
work, out, rustc, libc = sys.argv[1:5]
member, dispatcher = {}, set()
for line in open(os.path.join(work, "archives.txt")):
    archive, m, kind, name = line.split()
    member.setdefault(name, archive + ":" + m)
    if kind == "i":
        dispatcher.add(name)
def files(kind):
    # A tool's records (KIND.N.NAME.PID) with the scenarios in their order; in each, callgrind's part up to the exec
    # (dumped there: .1) first.
    def key(path):
        n, _, pid = os.path.basename(path).split(".")[1:4]
        return int(n), int(pid), 0 if path.endswith(".1") else 1
    return sorted(glob.glob(os.path.join(work, kind + ".*")), key=key)
names, seen = [], set()
for path in files("cg"):
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
# Named by hand, what callgrind cannot see: glibc's execve, which runs where each record ends; and the link map glibc's
# start makes for the vDSO, and the lookups of its functions (valgrind gives a program no vDSO).
names += [n for n in ("execve", "_dl_new_object", "_dl_setup_hash", "_dl_lookup_direct",
                                  "_dl_lookup_symbol_x") if n not in seen]
rust, own, members, families = [], [], [], []
for name in names:
    if name.startswith("_R"):
        pattern = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
        if pattern not in rust:
            rust.append(pattern)
        continue
    m = member.get(name) or member.get(name.split(".")[0])
    if not m:
        # The binary's own functions of an unmangled name (its C `main`): their section is named after them.
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name not in own:
            own.append(name)
        continue
    # A string function that ran stands for its whole family (strlen.o, strlen-avx2.o, strlen-evex.o...): glibc picks
    # the variant for the CPU. One whose dispatcher alone ran (every static start runs each, to pick), for itself;
    # but those Rust's code calls are named by their dispatcher's symbol in callgrind's record.
    stem = re.match(r"libc\.a:([^-.]+)", m)
    stem = stem and stem.group(1)
    called = name not in dispatcher or name in ("memset", "memcpy", "memmove", "memcmp", "bcmp", "memchr", "strlen")
    if stem and called and re.fullmatch(r"(mem|str|stp|wcs|wmem|rawmem)[a-z_]*", stem):
        if "libc.a:" + stem + "-*.o" not in families:
            families.append("libc.a:" + stem + "-*.o")
    if m not in members:
        members.append(m)
# The read-only data the same calls read, by the input section that holds it (the link map), in the order first read.
# Rust's unnamed constants have names of this build (.Lanon.HASH.N, N counting the crate's constants): a change that
# adds or removes one renumbers those after it, and the list then places other constants first (pages, not results).
# The writable data too (.data and .bss), each in a section of its own beside the linker's: a page of it a call
# writes is a fault of its own (a write is never mapped around), and glibc's and Rust's variables lay spread over
# seven pages. Where each goes: hot .data after .data, hot .bss before .bss, so the two meet (and GNU ld counts a
# section inserted before .data into the pages it makes read-only after the start: glibc's first write to it then
# faults). The relocated read-only data (.data.rel.ro) stays as it is: lld refuses a section of another name inside
# that range.
kinds = (".rodata", ".data", ".bss")
where = {".rodata": "BEFORE", ".data": "AFTER", ".bss": "BEFORE"}
inputs, output = [], None
for line in open(os.path.join(work, "wrapper.map")):
    m = re.match(r"^ +[0-9a-f]+ +[0-9a-f]+ +[0-9a-f]+ +\d+ (\.\S+)$", line)
    if m:
        output = m.group(1)
        continue
    m = re.match(r"^ +([0-9a-f]+) +[0-9a-f]+ +([0-9a-f]+) +\d+ +(\S+):\((\S+)\)$", line)
    kind = output and output.removesuffix(".hot_path")
    if m and kind in kinds:
        inputs.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4), kind))
inputs.sort()
starts = [i[0] for i in inputs]
data, placed = {kind: [] for kind in kinds}, set()
for path in files("reads"):
    for line in open(path):
        m = re.match(r"^ [LSM] ([0-9a-f]+),", line)
        if not m:
            continue
        at = int(m.group(1), 16)
        i = bisect.bisect_right(starts, at) - 1
        if i < 0 or at >= inputs[i][0] + inputs[i][1] or i in placed:
            continue
        placed.add(i)
        _, _, obj, section, kind = inputs[i]
        archive = re.search(r"([^/]+\.a)\(([^)]+)\)$", obj)
        if archive:
            pattern = "*%s:%s(%s)" % (archive.group(1), archive.group(2), section)
        elif section == kind:
            # A start file's own section (crtbeginT.o's .bss): by its file, `*(.bss)` would take every file's.
            pattern = "*%s(%s)" % (os.path.basename(obj), section)
        else:
            # The linker's merged constants and strings (`<internal>`), or Rust's, each crate's hash a wildcard.
            pattern = "*(%s)" % re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", section)
        if pattern not in data[kind]:
            data[kind].append(pattern)
with open(out, "w") as f:
    f.write("/* Generated by scripts/hot-path.sh: the code a drop-in call runs, placed first, in the order callgrind\n"
            "   met it, and the read-only data it reads and the variables it touches, in the order lackey saw them\n"
            "   used; the rest follows as the linker lays it out (INSERT keeps its own layout). build.rs hands this\n"
            "   script to the linker. Profiled with %s and %s. */\n" % (rustc, libc))
    # The stubs through which glibc's CPU-specific string functions are called (.iplt), with the start files.
    f.write("SECTIONS\n{\n  .text.hot_path :\n  {\n    *crt*.o(.text .text.*)\n    *(.iplt)\n")
    for p in rust:
        f.write("    *(.text.%s .text.unlikely.%s)\n" % (p, p))
    for name in own:
        f.write("    *(.text.%s)\n" % name)
    for m in members + families:
        f.write("    *%s(.text .text.*)\n" % m)
    f.write("  }\n}\nINSERT BEFORE .text;\n")
    for kind in kinds:
        f.write("SECTIONS\n{\n  %s.hot_path :\n  {\n" % kind)
        for p in data[kind]:
            f.write("    %s\n" % p)
        f.write("  }\n}\nINSERT %s %s;\n" % (where[kind], kind))
print("hot-path: %d Rust functions, %d unmangled, %d archive members, %d string families, %s -> %s"
      % (len(rust), len(own), len(members), len(families),
         ", ".join("%d %s sections" % (len(data[kind]), kind) for kind in kinds), "link/hot-path.ld"))
PY
