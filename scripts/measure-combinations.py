#!/usr/bin/env python3
"""Which lists of GPU capabilities real nvcc builds, and which it refuses (issue 24, item 2).

For every release under <cache>/toolkits (scripts/fetch-toolkits.sh; the cache is $NVCC_WRAPPER_CACHE or
~/.cache/nvcc-wrapper), takes the capabilities that release accepts by compat-data/capabilities.toml and runs the
real nvcc on lists of them, in each form the wrapper writes (src/plan/gpu.rs):

  gencode       -c k.cu     one -gencode=arch=compute_XY,code=sm_XY per capability
  gencode-ptx   -c k.cu     the same, plus -gencode=arch=compute_N,code=compute_N for the baseline of the highest
  lto           -dc k.cu    one -gencode=arch=compute_XY,code=lto_XY per capability
  lto-ptx       -dc k.cu    the same, plus the PTX flag
  lto-link      -dlink -dlto k.o   one -gencode=arch=compute_XY,code=sm_XY per capability (k.o: the lto form's object)

The list is in the wrapper's order (by number, then baseline < a < f). "dryrun" runs `nvcc --dryrun` (nvcc checks
its options and prints the steps, running none: about 10 ms); "real" runs the steps (about 1 s; host compiler
g++-11 for 11.8, g++-12 otherwise). Every nvcc runs under `nice -n 10`.

  measure-combinations.py [--releases 13.0,13.5] [--jobs N] [--out FILE] MODE

  pairs     every pair, every form, dryrun: the refused ones and counts           (--real: real compiles too)
  compare   dryrun against real compiles on a sample: every pair involving an a/f variant for 13.5, every pair
            the dryrun refuses, and --sample N (default 25) random pairs per release: any difference is printed
  singles   every number of capabilities.toml with each suffix, alone, every form, dryrun: what each release
            accepts, against capabilities.toml
  order     every pair in both orders, dryrun (and --sample N pairs per release in both orders, real)
  triples   every a/baseline/f triple of one number, every triple holding a refused pair, every list of two
            refused pairs, and --sample N random triples per release, dryrun: is the outcome what the pair rules
            predict (the message naming the lowest-numbered pair)?
  archmix   `[gpu] arch-flags = "append"`: the wrapper's -gencode for a configured capability, then a user's
            -arch=sm_XY (or the same -gencode again), dryrun, for every (configured, user) of a release
  check     every pair, every form, dryrun (or the records of --from FILE), against compat-data/combinations.toml
            (or --data FILE): exit 1 unless the pairs the rules refuse are exactly the refused ones, with nvcc's
            message

--out FILE writes every result as a JSON line (release, caps, form, how, ok, message, seconds).
"""

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("NVCC_WRAPPER_CACHE") or Path.home() / ".cache/nvcc-wrapper")
KERNEL = "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n"
FORMS = ["gencode", "gencode-ptx", "lto", "lto-ptx", "lto-link"]
FATAL = "nvcc fatal   : "
SUFFIX_ORDER = {"": 0, "a": 1, "f": 2}
KIND = {"": "baseline", "a": "arch-specific", "f": "family-specific"}


# --- capabilities ------------------------------------------------------------------------------------------------


def version(text):
    major, minor = text.split(".")[:2]
    return (int(major), int(minor))


def split(cap):
    """`10.0f` -> ((10, 0), "f")."""
    number = cap.rstrip("af")
    return version(number), cap[len(number):]


def sort_key(cap):
    number, suffix = split(cap)
    return (number, SUFFIX_ORDER[suffix])


def compact(cap):
    """`10.0f` -> `100f`, as in compute_100f."""
    (major, minor), suffix = split(cap)
    return f"{major}{minor}{suffix}"


def baseline(cap):
    return cap.rstrip("af")


def kind(cap):
    return KIND[split(cap)[1]]


def within(row, release):
    r = version(release)
    if version(row["first-cuda"]) > r:
        return False
    return "last-cuda" not in row or r <= version(row["last-cuda"])


def load_toml(name):
    with open(REPO / "compat-data" / name, "rb") as f:
        return tomllib.load(f)


def accepted(release):
    rows = load_toml("capabilities.toml")["capability"]
    return sorted((row["capability"] for row in rows if within(row, release)), key=sort_key)


def releases(wanted):
    found = sorted((p.name for p in (CACHE / "toolkits").iterdir() if (p / "bin/nvcc").is_file()), key=version)
    if wanted:
        missing = [r for r in wanted if r not in found]
        if missing:
            sys.exit(f"measure-combinations: no toolkit {', '.join(missing)} under {CACHE}/toolkits "
                     "(scripts/fetch-toolkits.sh)")
        return wanted
    return found


# --- running nvcc ------------------------------------------------------------------------------------------------


def gencode(cap, code):
    return f"-gencode=arch=compute_{compact(cap)},code={code}_{compact(cap)}"


def ptx_flag(caps):
    base = compact(baseline(max(caps, key=sort_key)))
    return f"-gencode=arch=compute_{base},code=compute_{base}"


def form_args(form, caps):
    """nvcc's arguments for `caps` (in the order given) in `form`, less the output."""
    if form == "gencode":
        return ["-c", "k.cu"] + [gencode(c, "sm") for c in caps]
    if form == "gencode-ptx":
        return ["-c", "k.cu"] + [gencode(c, "sm") for c in caps] + [ptx_flag(caps)]
    if form == "lto":
        return ["-dc", "k.cu"] + [gencode(c, "lto") for c in caps]
    if form == "lto-ptx":
        return ["-dc", "k.cu"] + [gencode(c, "lto") for c in caps] + [ptx_flag(caps)]
    if form == "lto-link":
        return ["-dlink", "-dlto", "k.o"] + [gencode(c, "sm") for c in caps]
    raise ValueError(form)


def host_compiler(release):
    return "g++-11" if version(release) < (12, 0) else "g++-12"


def nvcc(release, args, dryrun, cwd):
    """Run nvcc; (ok, first fatal/error line or "", seconds)."""
    cmd = ["nice", "-n", "10", str(CACHE / "toolkits" / release / "bin/nvcc"), "-ccbin", host_compiler(release)]
    cmd += (["--dryrun"] if dryrun else []) + args
    start = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    lines = [l.strip() for l in p.stderr.splitlines() if "fatal" in l or "error" in l.lower()]
    if p.returncode == 0 and lines:
        lines = []  # an "error" word in a warning of a build that worked
    if p.returncode != 0 and not lines:
        lines = [l.strip() for l in p.stderr.splitlines() if l.strip() and not l.startswith("#$")][-1:] or ["(no message)"]
    return p.returncode == 0, (lines[0] if lines else ""), seconds


class Workdir:
    """A directory with k.cu, one per thread, for real compiles."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="combos-")
        Path(self.dir.name, "k.cu").write_text(KERNEL)

    @property
    def path(self):
        return self.dir.name


_dry = Workdir()


def measure(release, caps, form, how, work=None):
    """One record: `how` is "dryrun" or "real"; a real lto-link first compiles the lto form's object."""
    args = form_args(form, caps)
    if how == "dryrun":
        ok, message, seconds = nvcc(release, args + ["-o", "out.o"], True, _dry.path)
    else:
        work = work or Workdir()
        seconds = 0.0
        if form == "lto-link":
            ok, message, s = nvcc(release, form_args("lto", caps) + ["-o", "k.o"], False, work.path)
            seconds += s
            if not ok:
                return record(release, caps, form, how, None, "lto compile refused: " + message, seconds)
        ok, message, s = nvcc(release, args + ["-o", "out.o"], False, work.path)
        seconds += s
    return record(release, caps, form, how, ok, message, seconds)


def record(release, caps, form, how, ok, message, seconds):
    return {"release": release, "caps": list(caps), "form": form, "how": how, "ok": ok, "message": message,
            "seconds": round(seconds, 3)}


def run_all(jobs, tasks, how):
    """Run (release, caps, form) tasks; real ones on `jobs` threads, each with its own directory."""
    if how == "dryrun" or jobs <= 1:
        work = Workdir() if how == "real" else None
        return [measure(r, c, f, how, work) for r, c, f in tasks]
    import threading
    local = threading.local()

    def one(task):
        if not hasattr(local, "work"):
            local.work = Workdir()
        return measure(*task, how, local.work)

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, tasks))


# --- the data file -----------------------------------------------------------------------------------------------


DATA = REPO / "compat-data" / "combinations.toml"


def rules():
    with open(DATA, "rb") as f:
        return tomllib.load(f).get("refused-pair", [])


def same(rule, a, b):
    (na, _), (nb, _) = split(a), split(b)
    if rule["same"] == "number":
        return na == nb
    raise ValueError(f"combinations.toml: unknown same = {rule['same']!r}")


def predicted(release, caps, form):
    """The message the data file says nvcc refuses `caps` (in this order) with, or None: the README's rule."""
    for rule in rules():
        if not within(rule, release) or form not in rule["forms"]:
            continue
        for i, j in itertools.combinations(range(len(caps)), 2):
            a, b = caps[i], caps[j]
            if sorted([kind(a), kind(b)]) == sorted(rule["kinds"]) and same(rule, a, b):
                code = "sm" if form != "lto" and form != "lto-ptx" else "lto"
                return FATAL + rule["message"].format(later=f"{code}_{compact(b)}")
    return None


# --- modes -------------------------------------------------------------------------------------------------------


def pairs_of(release):
    return list(itertools.combinations(accepted(release), 2))


def summary(results, label):
    refused = [r for r in results if r["ok"] is False]
    by = {}
    for r in refused:
        by.setdefault((r["release"], r["form"]), []).append(r)
    for (release, form), rs in sorted(by.items(), key=lambda kv: (version(kv[0][0]), FORMS.index(kv[0][1]))):
        print(f"{release} {form}: refused {len(rs)}: " + ", ".join("+".join(r["caps"]) for r in rs))
    messages = sorted({r["message"] for r in refused})
    for m in messages:
        print(f"  message: {m}")
    secs = sum(r["seconds"] for r in results)
    print(f"{label}: {len(results)} runs, {len(refused)} refused, {secs:.1f} s of nvcc")


def mode_pairs(args, rels):
    tasks = [(r, p, f) for r in rels for p in pairs_of(r) for f in FORMS]
    for r in rels:
        n = len(accepted(r))
        print(f"{r}: {n} capabilities, {n * (n - 1) // 2} pairs, {len(FORMS)} forms")
    results = run_all(args.jobs, tasks, "dryrun")
    summary(results, "pairs (dryrun)")
    if args.real:
        real = run_all(args.jobs, tasks, "real")
        summary(real, "pairs (real)")
        results += real
        differ(results)
    return results


def differ(results):
    """Print every task whose dryrun and real outcomes differ; the count."""
    seen = {}
    for r in results:
        seen.setdefault((r["release"], tuple(r["caps"]), r["form"]), {})[r["how"]] = r
    n = 0
    compared = 0
    for key, hows in seen.items():
        if "dryrun" in hows and "real" in hows:
            compared += 1
            d, real = hows["dryrun"], hows["real"]
            if real["ok"] is None:
                continue
            if d["ok"] != real["ok"] or d["message"] != real["message"]:
                n += 1
                print(f"DIFFERENT {key}: dryrun {d['ok']} {d['message']!r}; real {real['ok']} {real['message']!r}")
    print(f"dryrun against real: {compared} compared, {n} different")
    return n


def mode_compare(args, rels):
    rng = random.Random(args.seed)
    tasks = []
    for r in rels:
        chosen = set()
        dry = run_all(1, [(r, p, f) for p in pairs_of(r) for f in FORMS], "dryrun")
        chosen |= {tuple(d["caps"]) for d in dry if not d["ok"]}
        if r == "13.5":
            chosen |= {p for p in pairs_of(r) if any(split(c)[1] for c in p)}
        pool = sorted(set(pairs_of(r)) - chosen)
        chosen |= set(rng.sample(pool, min(args.sample, len(pool))))
        print(f"{r}: {len(chosen)} pairs compared")
        tasks += [(r, p, f) for p in sorted(chosen, key=lambda p: [sort_key(c) for c in p]) for f in FORMS]
    dry = run_all(1, tasks, "dryrun")
    real = run_all(args.jobs, tasks, "real")
    summary(real, "compare (real)")
    differ(dry + real)
    return dry + real


def mode_singles(args, rels):
    rows = load_toml("capabilities.toml")["capability"]
    numbers = sorted({baseline(r["capability"]) for r in rows}, key=version)
    candidates = [n + s for n in numbers for s in ["", "a", "f"]]
    results = []
    disagree = 0
    for r in rels:
        table = set(accepted(r))
        res = run_all(1, [(r, [c], f) for c in candidates for f in FORMS], "dryrun")
        results += res
        ok = {}
        for x in res:
            ok.setdefault(x["caps"][0], []).append(x["ok"])
        for c in candidates:
            forms_ok = ok[c]
            measured = all(forms_ok)
            if any(forms_ok) and not measured:
                print(f"{r} {c}: accepted in some forms only: "
                      + ", ".join(f"{f}={o}" for f, o in zip(FORMS, forms_ok)))
            if measured != (c in table):
                disagree += 1
                print(f"DISAGREE {r} {c}: nvcc {'accepts' if measured else 'refuses'}, "
                      f"capabilities.toml says {'accepted' if c in table else 'not accepted'}")
        refusals = {x["message"] for x in res if not x["ok"]}
        print(f"{r}: nvcc accepts {sum(all(ok[c]) for c in candidates)} of {len(candidates)} candidates; "
              f"table {len(table)}; refusals say: {sorted(refusals)[:3]}")
    print(f"singles: {len(results)} runs, {disagree} disagreements with capabilities.toml")
    return results


def mode_order(args, rels):
    rng = random.Random(args.seed)
    results = []
    different = 0
    for r in rels:
        ps = pairs_of(r)
        fwd = run_all(1, [(r, p, f) for p in ps for f in FORMS], "dryrun")
        back = run_all(1, [(r, p[::-1], f) for p in ps for f in FORMS], "dryrun")
        results += fwd + back
        for a, b in zip(fwd, back):
            if a["ok"] != b["ok"]:
                different += 1
                print(f"ORDER MATTERS {r} {a['form']} {a['caps']}: {a['ok']} / reversed {b['ok']}")
            elif a["message"] != b["message"]:
                print(f"{r} {a['form']}: {'+'.join(a['caps'])}: {a['message']!r}; reversed: {b['message']!r}")
        sample = rng.sample(ps, min(args.sample, len(ps)))
        refused = sorted({tuple(x["caps"]) for x in fwd if not x["ok"]})
        tasks = [(r, p, f) for p in sample + refused[:2] for f in ["gencode", "gencode-ptx"]]
        tasks += [(r, p[::-1], f) for p in sample + refused[:2] for f in ["gencode", "gencode-ptx"]]
        real = run_all(args.jobs, tasks, "real")
        results += real
        half = len(real) // 2
        for a, b in zip(real[:half], real[half:]):
            if a["ok"] != b["ok"]:
                different += 1
                print(f"ORDER MATTERS (real) {r} {a['form']} {a['caps']}: {a['ok']} / reversed {b['ok']}")
        print(f"{r}: {len(ps)} pairs both ways (dryrun), {len(sample) + len(refused[:2])} both ways (real)")
    print(f"order: {len(results)} runs, {different} pairs whose outcome depends on the order")
    return results


def mode_triples(args, rels):
    rng = random.Random(args.seed)
    results = []
    wrong = 0
    for r in rels:
        acc = accepted(r)
        all3 = list(itertools.combinations(acc, 3))
        refused = {tuple(x["caps"]) for x in run_all(1, [(r, p, "gencode") for p in pairs_of(r)], "dryrun")
                   if not x["ok"]}
        chosen = {t for t in all3 if len({baseline(c) for c in t}) == 1}
        chosen |= {t for t in all3 if any(p in refused for p in itertools.combinations(t, 2))}
        rest = sorted(set(all3) - chosen)
        chosen |= set(rng.sample(rest, min(args.sample, len(rest))))
        if args.sample < 0:
            chosen = set(all3)
        # Lists of four made of two refused pairs: which pair does the message name?
        chosen |= {tuple(sorted(p + q, key=sort_key)) for p, q in itertools.combinations(sorted(refused), 2)}
        tasks = [(r, list(t), f) for t in sorted(chosen, key=lambda t: [sort_key(c) for c in t]) for f in FORMS]
        res = run_all(1, tasks, "dryrun")
        results += res
        for x in res:
            expect = predicted(x["release"], x["caps"], x["form"])
            if (expect is None) != x["ok"] or (expect is not None and expect != x["message"]):
                wrong += 1
                print(f"NOT PAIRWISE {r} {x['form']} {x['caps']}: nvcc {x['ok']} {x['message']!r}; "
                      f"the pair rules say {expect!r}")
        fours = sum(1 for t in chosen if len(t) == 4)
        print(f"{r}: {len(chosen) - fours} triples of {len(all3)} and {fours} lists of four, "
              f"{sum(not x['ok'] for x in res)} refused runs")
    print(f"triples: {len(results)} runs, {wrong} not as the pair rules predict")
    return results


def mode_archmix(args, rels):
    results = []
    for r in rels:
        acc = accepted(r)
        res = []
        for configured in acc:
            for user in acc:
                for form, ptx in [("gencode", False), ("gencode-ptx", True)]:
                    wrapper = [gencode(configured, "sm")] + ([ptx_flag([configured])] if ptx else [])
                    for spelled in ([f"-arch=sm_{compact(user)}"]
                                    + ([gencode(user, "sm")] if user == configured else [])):
                        ok, message, s = nvcc(r, ["-c", "k.cu"] + wrapper + [spelled, "-o", "out.o"], True,
                                              _dry.path)
                        x = record(r, [configured, spelled], "append-" + form, "dryrun", ok, message, s)
                        res.append(x)
        refused = [x for x in res if not x["ok"]]
        for x in refused:
            print(f"{r} {x['form']}: configured {x['caps'][0]}, user {x['caps'][1]}: {x['message']}")
        print(f"{r}: {len(res)} runs, {len(refused)} refused")
        results += res
    return results


def mode_check(args, rels):
    if args.from_file:
        results = [json.loads(l) for l in open(args.from_file)]
        results = [x for x in results if x["form"] in FORMS and x["ok"] is not None]
    else:
        results = run_all(1, [(r, p, f) for r in rels for p in pairs_of(r) for f in FORMS], "dryrun")
    bad = 0
    for x in results:
        expect = predicted(x["release"], x["caps"], x["form"])
        got = None if x["ok"] else x["message"]
        if expect != got:
            bad += 1
            print(f"MISMATCH {x['release']} {x['form']} {'+'.join(x['caps'])} ({x['how']}): nvcc says {got!r}, "
                  f"combinations.toml says {expect!r}")
    refused = sum(1 for x in results if not x["ok"])
    print(f"check: {len(results)} runs ({refused} refused) against compat-data/combinations.toml: "
          f"{bad} mismatches")
    if bad:
        sys.exit(1)
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["pairs", "compare", "singles", "order", "triples", "archmix", "check"])
    p.add_argument("--releases", help="comma-separated, default every toolkit in the cache")
    p.add_argument("--jobs", type=int, default=1, help="parallel real compiles (at most 2 on a shared machine)")
    p.add_argument("--sample", type=int, default=25, help="random pairs/triples per release (triples: -1 = all)")
    p.add_argument("--seed", type=int, default=24)
    p.add_argument("--real", action="store_true", help="pairs: real compiles of every pair too (slow)")
    p.add_argument("--from", dest="from_file", help="check: the JSON lines of an earlier --out instead")
    p.add_argument("--data", help="check/triples: this file in place of compat-data/combinations.toml")
    p.add_argument("--out", help="write every result as a JSON line")
    args = p.parse_args()
    if args.data:
        global DATA
        DATA = Path(args.data)
    rels = releases(args.releases.split(",") if args.releases else None)
    start = time.monotonic()
    results = globals()["mode_" + args.mode](args, rels)
    print(f"{args.mode}: {time.monotonic() - start:.0f} s wall, releases {' '.join(rels)}")
    if args.out:
        with open(args.out, "w") as f:
            for x in results:
                f.write(json.dumps(x) + "\n")


if __name__ == "__main__":
    main()
