#!/usr/bin/env python3
"""Measure what nvcc's --threads costs each release in memory, for compat-data/threads.toml (issue 31).

For each release, compiles examples/thrust-heavy.cu for four targets (sm_80, sm_86, sm_89, sm_90) with -objtemp at
--threads 1, 2 and 4, one compile at a time, sampling /proc every 10 ms for the memory of nvcc and every process it
runs (their resident sizes summed: what the machine must hold at once), and checks that the objects are the same
bytes. Prints one JSON line per compile and a table; run by hand, never in CI:

    scripts/measure-threads.py [RELEASE ...]        (default: 11.8 12.4 13.5; toolkits from scripts/fetch-toolkits.sh)

Each compile takes one to two minutes on two cores. `peak-per-thread-mib` in compat-data/threads.toml is the largest
single process (cicc) of the release: what each thread more adds.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tree_peak import run as measure  # noqa: E402

TARGETS = ["-gencode=arch=compute_%s,code=sm_%s" % (c, c) for c in ("80", "86", "89", "90")]
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "examples", "thrust-heavy.cu")
CACHE = os.environ.get("NVCC_WRAPPER_CACHE") or os.path.expanduser("~/.cache/nvcc-wrapper")


def main():
    releases = sys.argv[1:] or ["11.8", "12.4", "13.5"]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for release in releases:
            nvcc = os.path.join(CACHE, "toolkits", release, "bin", "nvcc")
            host = ["-ccbin", "g++-11"] if release == "11.8" else []
            objects = {}
            for threads in (1, 2, 4):
                out = os.path.join(work, "%s-t%d.o" % (release, threads))
                command = [nvcc, *host, *TARGETS, "--threads", str(threads), "-objtemp", "-c", SOURCE, "-o", out]
                rc, wall, peak, single, name, _ = measure(command, work, 0.01)
                row = dict(release=release, threads=threads, rc=rc, wall_s=round(wall, 1), tree_peak_mib=round(peak),
                           largest_mib=round(single), largest=name)
                print(json.dumps(row), flush=True)
                rows.append(row)
                with open(out, "rb") as f:
                    objects[threads] = f.read()
            same = objects[1] == objects[2] == objects[4]
            print(json.dumps(dict(release=release, same_bytes_at_1_2_4=same)), flush=True)
    print("\n| nvcc | threads | wall s | tree peak MiB | largest process MiB |\n|---|---:|---:|---:|---|")
    for r in rows:
        print("| %s | %d | %.1f | %d | %d (%s) |" % (r["release"], r["threads"], r["wall_s"], r["tree_peak_mib"],
                                                  r["largest_mib"], r["largest"]))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0)
    main()
