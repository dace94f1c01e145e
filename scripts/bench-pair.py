#!/usr/bin/env python3
"""Two builds of the wrapper, paired, per call: `scripts/bench-pair.py NEW OLD [RUNS]`.

NEW and OLD are wrapper binaries (for example the static builds of two commits). Each is installed as `nvcc` with
the same recorded config in front of a stand-in nvcc (a static C program that writes the dependency file it is asked
for and nothing else), and the rows run A B A B ...: on a VM whose speed drifts from one second to the next, the
ratio of each pair keeps its meaning where two rows measured one after the other do not. Printed per row: each
side's median wall time and the median of the per-pair ratios NEW/OLD. Rows: `exec` (a plain compile: the wrapper
execs), `depfile` (`-MD -MF`: the wrapper waits for nvcc and completes the file), `slots` (four targets under a
jobserver with no free slot). Results: docs/benchmarks.md. Needs cc (static glibc, Debian's libc6-dev).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WRITER = r"""
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
"""

ROWS = {
    "exec": ["-c", "kernel.cu", "-o", "kernel.o"],
    "depfile": ["-MD", "-MF", "kernel.d", "-c", "kernel.cu", "-o", "kernel.o"],
    "slots": ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90", "-c", "kernel.cu",
              "-o", "kernel.o"],
}


def timed(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    new, old = (os.path.abspath(p) for p in sys.argv[1:3])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    work = tempfile.mkdtemp()
    os.makedirs(f"{work}/cuda/bin")
    with open(f"{work}/writer.c", "w") as f:
        f.write(WRITER)
    subprocess.run(["cc", "-static", "-O2", "-o", f"{work}/cuda/bin/nvcc", f"{work}/writer.c"], check=True)
    with open(f"{work}/cuda/version.json", "w") as f:
        f.write('{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}\n')
    # The probe cache keeps nothing changed in the last two seconds.
    old_time = time.time() - 3600
    os.utime(f"{work}/cuda/bin/nvcc", (old_time, old_time))
    open(f"{work}/kernel.cu", "w").close()
    config = (f'nvcc = "{work}/cuda/bin/nvcc"\n[host-compiler]\n'
              'stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0" }\n'
              '[gpu]\ncapabilities = ["8.6"]\n')
    for name, binary in (("new", new), ("old", old)):
        os.makedirs(f"{work}/{name}/bin")
        os.makedirs(f"{work}/{name}/share/nvcc-wrapper")
        # A copy, as `install` makes and scripts/bench.sh installs: a file as the linker wrote it, run through a link,
        # took about 0.2 ms more a call than a copy of it (docs/benchmarks.md, "The drop-in's own cost").
        shutil.copy(binary, f"{work}/{name}/bin/nvcc")
        with open(f"{work}/{name}/share/nvcc-wrapper/config.toml", "w") as f:
            f.write(config)
    os.mkfifo(f"{work}/slots")
    held = os.open(f"{work}/slots", os.O_RDWR | os.O_NONBLOCK)  # held open with no token: every slot taken
    os.chdir(work)
    env = dict(os.environ, NVCC_WRAPPER_PROBE_CACHE_DIR=f"{work}/probe-cache")
    env.pop("MAKEFLAGS", None)
    for row, args in ROWS.items():
        row_env = dict(env)
        if row == "slots":
            row_env["MAKEFLAGS"] = f"-j4 --jobserver-auth=fifo:{work}/slots"
        a, b = ["new/bin/nvcc"] + args, ["old/bin/nvcc"] + args
        for _ in range(20):
            timed(a, row_env)
            timed(b, row_env)
        times_a, times_b, ratios = [], [], []
        for _ in range(runs):
            x, y = timed(a, row_env), timed(b, row_env)
            times_a.append(x)
            times_b.append(y)
            ratios.append(x / y)
        print(f"| {row} | {statistics.median(times_a) * 1e3:.3f} | {statistics.median(times_b) * 1e3:.3f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.2f} to {max(ratios):.2f}) |")
    os.close(held)


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0)
    main()
