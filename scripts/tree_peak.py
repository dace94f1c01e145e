#!/usr/bin/env python3
"""Run a command and report its wall time and the peak of the memory its whole process tree holds at once.

    scripts/tree_peak.py LABEL -- COMMAND [ARG ...]     prints one JSON line: label, rc, wall_s, peak_mib, pss_peak_mib

The tree's memory is the resident size of the command and every process below it, summed, sampled every 50 ms
(every 10 ms with TREE_PEAK_INTERVAL=0.01): what the machine must hold at once, which the largest single process
(`/usr/bin/time`'s figure) understates for a build. A page two processes share (a library's, or all of nvcc's in a
child it forked that has not yet called exec) counts in each of them there; the line also gives the peak of the
proportional sizes (`pss_peak_mib`: each shared page divided among its holders, `/proc/PID/smaps_rollup`), which
counts every page once. Used by scripts/bench.sh parallel and scripts/measure-threads.py.

With TREE_PEAK_TIMELINE=FILE it also appends one JSON line per sample to FILE: the seconds since the start, the
tree's MiB, and how many of nvcc's programs (cicc, ptxas, cudafe++, the host compiler's cc1plus, fatbinary, nvlink)
run and how many are stopped (the keeper's SIGSTOP), with the MiB each kind holds, and the tree's proportional MiB
and that of its stopped processes (every kind, `sh` and the forks included), and for every command name (`nvcc`,
`sh` and the wrapper too) how many processes bear it and their proportional MiB: what ran at once, and when.
"""
import json
import os
import subprocess
import sys
import time


def processes():
    """pid -> (parent pid, command name), for every process now."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        close = stat.rfind(")")
        found[int(entry)] = (int(stat[close + 2:].split()[1]), stat[stat.find("(") + 1:close])
    return found


def kib_of(pid, name, key):
    """A size in KiB from a file of `/proc/PID/` (`status`'s `VmRSS:`, `smaps_rollup`'s `Pss:`), or 0 when gone."""
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def resident_kib(pid):
    return kib_of(pid, "status", "VmRSS:")


def proportional_kib(pid):
    """The process's proportional set size (each shared page divided among the processes that map it)."""
    return kib_of(pid, "smaps_rollup", "Pss:")


TOOLS = ("cicc", "ptxas", "cudafe++", "cc1plus", "fatbinary", "nvlink")


def state(pid):
    """The process's state letter (`T`: stopped), or '?' when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        return stat[stat.rfind(")") + 2]
    except OSError:
        return "?"


def run(command, cwd=None, interval=None):
    """Run `command`: (exit code, wall seconds, peak MiB of the tree, largest single process MiB and its name, peak
    proportional MiB of the tree)."""
    interval = interval or float(os.environ.get("TREE_PEAK_INTERVAL", "0.05"))
    start = time.monotonic()
    # The command's output goes to stderr: stdout is the JSON line's.
    proc = subprocess.Popen(command, cwd=cwd, stdout=sys.stderr)
    peak, single, name, pss_peak = 0, 0, "", 0
    timeline = os.environ.get("TREE_PEAK_TIMELINE")
    timeline = open(timeline, "a") if timeline else None
    while proc.poll() is None:
        table = processes()
        children = {}
        for pid, (parent, _) in table.items():
            children.setdefault(parent, []).append(pid)
        total, pss, stopped_pss, stack = 0, 0, 0, [proc.pid]
        tools, names = {}, {}
        while stack:
            pid = stack.pop()
            kib = resident_kib(pid)
            total += kib
            share = proportional_kib(pid)
            pss += share
            comm = table.get(pid, (0, "?"))[1]
            if kib > single:
                single, name = kib, comm
            if timeline:
                stopped = state(pid) == "T"
                stopped_pss += share if stopped else 0
                held = names.setdefault(comm, [0, 0])
                held[0] += 1
                held[1] += share
                if comm in TOOLS:
                    kind = tools.setdefault(comm, {"running": 0, "stopped": 0, "mib": 0})
                    kind["stopped" if stopped else "running"] += 1
                    kind["mib"] += kib // 1024
            stack.extend(children.get(pid, []))
        peak = max(peak, total)
        pss_peak = max(pss_peak, pss)
        if timeline:
            sample = {"t": round(time.monotonic() - start, 2), "mib": total // 1024, "pss_mib": pss // 1024,
                      "stopped_pss_mib": stopped_pss // 1024, "tools": tools,
                      "pss_by_name": {n: [count, round(kib / 1024, 1)] for n, (count, kib) in names.items()}}
            timeline.write(json.dumps(sample) + "\n")
        time.sleep(interval)
    if timeline:
        timeline.close()
    return proc.returncode, time.monotonic() - start, peak / 1024, single / 1024, name, pss_peak / 1024


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0)
    label, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    rc, wall, peak, _, _, pss_peak = run(command)
    line = dict(label=label, rc=rc, wall_s=round(wall, 1), peak_mib=round(peak), pss_peak_mib=round(pss_peak))
    print(json.dumps(line), flush=True)
    sys.exit(0 if rc == 0 else 1)
