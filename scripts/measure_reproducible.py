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

This file runs the cases and prints what they give; two modules in scripts/lib/ do the rest: reproducible_build.py (the
setups, steps and fixes, and the nvcc runs) and reproducible_explain.py (where and why two outputs differ).
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Its modules, in scripts/lib/ where files that are not run by themselves live (an entry point answers --help).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from reproducible_build import (CACHE, FIXES, KINDS, RELEASES, Launcher, build, make_ar_shim,  # noqa: E402
                                resolve_fixset, setups)
from reproducible_explain import explain  # noqa: E402


# ---------------------------------------------------------------------------------------------------------------------
# Measuring: the runs of one case, compared output by output, and what is printed of them.


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
