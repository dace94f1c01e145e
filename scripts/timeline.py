#!/usr/bin/env python3
"""Summarise the timelines scripts/tree_peak.py writes (TREE_PEAK_TIMELINE; scripts/bench.sh parallel's TIMELINES).

    scripts/timeline.py FILE.jsonl ...

For each build, one line: its length, the tree's peak MiB and which of nvcc's programs ran then (and their MiB),
the peak of its proportional MiB (every shared page counted once), what the stopped processes held of it then and
the eight command names that held most of it, the most programs running at once and stopped at once, and the mean
number running, over the whole build and over its last third (the tail, where threads that follow the build take
the slots the finished calls free).
"""
import json
import sys


def running(sample):
    return sum(kind["running"] for kind in sample["tools"].values())


def summary(path):
    samples = [json.loads(line) for line in open(path) if line.strip()]
    if not samples:
        return "%s: no samples" % path
    end = samples[-1]["t"]
    peak = max(samples, key=lambda s: s["mib"])
    at_peak = ", ".join(
        "%s %d+%d stopped (%d MiB)" % (name, kind["running"], kind["stopped"], kind["mib"])
        for name, kind in sorted(peak["tools"].items())
    )
    tail = [s for s in samples if s["t"] >= end * 2 / 3]
    mean = lambda ss: sum(running(s) for s in ss) / max(len(ss), 1)
    stopped = max(sum(k["stopped"] for k in s["tools"].values()) for s in samples)
    pss = max(samples, key=lambda s: s.get("pss_mib", 0))
    proportional = "; proportional peak %d MiB at %.0f s, %d MiB of it stopped (at most %d MiB stopped)" % (
        pss["pss_mib"], pss["t"], pss["stopped_pss_mib"], max(s["stopped_pss_mib"] for s in samples)) if "pss_mib" in pss else ""
    if "pss_by_name" in pss:
        held = sorted(pss["pss_by_name"].items(), key=lambda item: -item[1][1])
        proportional += " (%s)" % ", ".join("%d %s %.0f MiB" % (count, name, mib) for name, (count, mib) in held[:8])
    return "%s: %.0f s; peak %d MiB at %.0f s: %s%s; at once: at most %d running, %d stopped; mean running %.1f, %.1f in the last third" % (
        path, end, peak["mib"], peak["t"], at_peak or "none", proportional, max(running(s) for s in samples), stopped,
        mean(samples), mean(tail))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0)
    for path in sys.argv[1:]:
        print(summary(path))
