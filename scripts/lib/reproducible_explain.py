"""Why two outputs of scripts/measure_reproducible.py differ: where (ELF sections, archive member headers,
cuobjdump's view of the embedded device code) and which run-specific value the differing bytes hold. A module of
that script, not run by itself.
"""

import re
import struct
import subprocess
import tempfile
from pathlib import Path

from reproducible_build import CACHE


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
