#!/usr/bin/env python3
"""The programs the tests call (tests/**/*.rs), and whether this machine has them: for scripts/check-fresh-machine.sh,
which runs it in its fresh Debian root as `python3 -B scripts/test_programs.py CHECKOUT CACHE`. See that script's
header for what is read and how; exit 1 names each program missing or not known."""
import bisect, os, re, shutil, sys, textwrap
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# Where a program found in the cache comes from, for the hint.
INSTALLERS = {
    "nix/bin": "scripts/install-nix.sh",
    "tools/pypi/bin": "scripts/install-tools.sh",
    "tools/deadnix/bin": "scripts/install-tools.sh",
}
UNKNOWN = []  # the places whose program could not be told
NOBODY = (None, None)


def scan(src):
    """`src` with comments and the insides of string and char literals blanked (offsets kept), and its string
    literals as (start, end, text)."""
    out, lits, i, n = list(src), [], 0, len(src)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    raw = re.compile(r'b?r(#*)"')
    char = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
    while i < n:
        word_before = i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_")
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif not word_before and (m := raw.match(src, i)):
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            j = n if j < 0 else j
            lits.append((i, j + len(close), src[m.end():j]))
            blank(m.end(), j)
            i = j + len(close)
        elif src[i] == '"' or (not word_before and src.startswith('b"', i)):
            start = i
            i += 2 if src[i] == "b" else 1
            body = i
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            lits.append((start, i + 1, src[body:i]))
            blank(body, i)
            i += 1
        elif src[i] == "'" and (m := char.match(src, i)):
            blank(i + 1, m.end() - 1)
            i = m.end()
        else:
            i += 1
    return "".join(out), lits


class File:
    def __init__(self, path, root, tests):
        self.rel, self.tests = path.relative_to(root), tests
        self.shared = self.rel.parts[:2] == ("tests", "common")
        self.src = path.read_text()
        self.code, self.lits = scan(self.src)
        self.starts = [s for s, _, _ in self.lits]
        # Functions, and closures bound by `let`: (name, parameters' span, body's span).
        self.fns = []
        for m in re.finditer(rf"\bfn\s+({IDENT})\s*(?:<[^>{{]*>)?\s*\(", self.code):
            params_end = self.close(m.end() - 1)
            body = self.code.find("{", params_end)
            if body >= 0 and ";" not in self.code[params_end:body]:
                self.fns.append((m.group(1), (m.end(), params_end), (body, self.close(body))))
        for m in re.finditer(rf"\blet\s+({IDENT})\s*=\s*(?:move\s*)?\|", self.code):
            params_end = self.code.find("|", m.end())
            self.fns.append((m.group(1), (m.end(), params_end), (params_end, self.statement_end(params_end))))

    def where(self, pos):
        return f"{self.rel}:{self.code.count(chr(10), 0, pos) + 1}"

    def close(self, open_at):
        """The index of the bracket that closes the one at `open_at`."""
        depth = 0
        for k in range(open_at, len(self.code)):
            if self.code[k] in "([{":
                depth += 1
            elif self.code[k] in ")]}":
                depth -= 1
                if depth == 0:
                    return k
        sys.exit(f"{self.where(open_at)}: unbalanced bracket")

    def statement_end(self, start):
        depth = 0
        for k in range(start, len(self.code)):
            c = self.code[k]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == ";" and depth == 0:
                return k
        return len(self.code)

    def literals(self, a, b, values=False):
        """The string literals in code[a:b], as (text, where); with `values`, only those that can be its value (not
        one compared with `==`/`!=`, nor a `match` arm's pattern)."""
        k = bisect.bisect_left(self.starts, a)
        found = []
        while k < len(self.lits) and self.lits[k][1] <= b:
            s, e, text = self.lits[k]
            k += 1
            if values and (re.search(r"(==|!=|\|)\s*$", self.code[a:s])
                           or re.match(r"\s*(==|!=|=>|\|)", self.code[e:b])):
                continue
            found.append((text, self.where(s)))
        return found

    def literal(self, a, b):
        """The text of code[a:b] when it is one string literal, else None."""
        lits = self.literals(a, b)
        return lits[0][0] if len(lits) == 1 and re.fullmatch(r'\s*" *"\s*', self.code[a:b]) else None

    def args(self, a, b):
        """The spans of the top-level comma-separated parts of code[a:b]."""
        spans, depth, start = [], 0, a
        for k in range(a, b):
            c = self.code[k]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth == 0:
                spans.append((start, k))
                start = k + 1
        if self.code[start:b].strip():
            spans.append((start, b))
        return spans

    def calls(self, name):
        """The arguments' span of every call `name(...)`: not its definition, not a method."""
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", self.code):
            if not re.search(r"\bfn\s*$", self.code[max(0, m.start() - 10):m.start()]):
                yield m.end(), self.close(m.end() - 1)

    def enclosing(self, pos):
        inside = [f for f in self.fns if f[1][0] <= pos <= f[2][1]]
        return max(inside, key=lambda f: f[1][0], default=None)

    def resolve_expr(self, a, b, seen):
        """The string values the expression code[a:b] can have, as (text, where the literal is)."""
        lits = self.literals(a, b, values=True)
        if lits:
            return lits
        expr = self.code[a:b].strip().lstrip("&*").strip()
        m = re.fullmatch(rf"({IDENT}(?:\s*\.\s*{IDENT})*)(?:\s*\.\s*(?:iter|into_iter)\s*\(\s*\))?", expr)
        if not m:
            return []
        path = re.split(r"\s*\.\s*", m.group(1))
        if len(path) > 1:
            # A struct field: every `field: "literal"` of the file.
            return [self.literals(x.start(), x.end())[0]
                    for x in re.finditer(rf"\b{path[-1]}\s*:\s*\"[^\"]*\"", self.code)]
        return self.resolve_name(path[0], a, seen)

    def resolve_name(self, name, pos, seen):
        """The values of variable `name` where it is used at `pos`: from the binding closest before it in the
        enclosing function, or, for a parameter, from the calls of that function (in every test file for one of
        tests/common)."""
        if (self.rel, name, pos) in seen:
            return []
        seen = seen | {(self.rel, name, pos)}
        fn = self.enclosing(pos)
        lo = fn[2][0] if fn else 0
        region = self.code[lo:pos]
        patterns = {
            "let": rf"\blet\s+(?:mut\s+)?{name}\s*(?::[^=;]*)?=(?!=)",
            "let-tuple": rf"\blet\s*\(([^()]*)\)\s*=\s*({IDENT})\s*\(",
            "for": rf"\bfor\s+&?{name}\s+in\b",
            "for-tuple": rf"\bfor\s+&?\(([^()]*)\)\s+in\b",
            "closure": rf"\|\s*&?{name}\s*(?::[^|]*)?\|",
        }
        best = None
        for kind, pattern in patterns.items():
            for m in re.finditer(pattern, region):
                if kind.endswith("tuple") and name not in [p.strip() for p in m.group(1).split(",")]:
                    continue
                if best is None or m.start() > best[1].start():
                    best = (kind, m)
        if best:
            kind, m = best
            s = lo + m.end()
            if kind == "let":
                return self.resolve_expr(s, self.statement_end(s), seen)
            if kind == "for":
                return self.resolve_expr(s, self.code.find("{", s), seen)
            if kind == "closure":
                # An iterator's closure: the values of the receiver of `.iter()` before it.
                r = re.search(rf"({IDENT})\s*\.\s*(?:iter|into_iter)\s*\(\s*\)[^;{{]*$", region[:m.start()])
                return self.resolve_name(r.group(1), lo + r.start(), seen) if r else []
            # `let (a, b) = f(...)`: the literal tuples f returns; `for (a, b) in [...]`: the array's. This name's
            # place in each.
            names = [p.strip() for p in m.group(1).split(",")]
            if kind == "let-tuple":
                spans = [body for fname, _, body in self.fns if fname == m.group(2)]
            else:
                spans = [(s, self.code.find("{", s))]
            found = []
            for fa, fb in spans:
                for t in re.finditer(r"\(([^()]*)\)", self.code[fa:fb]):
                    parts = [self.literals(x, y) for x, y in self.args(fa + t.start(1), fa + t.end(1))]
                    if len(parts) == len(names) and all(len(p) == 1 for p in parts):
                        found.append(parts[names.index(name)][0])
            return found
        if fn:
            params = [re.sub(r"^(&|mut\s+)*", "", self.code[x:y].split(":")[0].strip()) for x, y in self.args(*fn[1])]
            if name in params:
                # A call whose argument cannot be told is named where it is; a function nobody calls has no values
                # (NOBODY, which is no program).
                index, found = params.index(name), [NOBODY]
                for f in self.tests if self.shared else [self]:
                    for ca, cb in f.calls(fn[0]):
                        spans = f.args(ca, cb)
                        if index < len(spans):
                            values = f.resolve_expr(*spans[index], seen)
                            if not values:
                                UNKNOWN.append(f"{f.where(ca)}: {fn[0]}({f.src[ca:cb].strip()})")
                            found += values
                return found
        return []


def collect(root):
    """{(program, where it must be): {call sites}}, and the lookups whose program could not be told. A program is
    one the tests look up on PATH (`which::which(...)`, which tests/common's real_program calls) or run by its name
    (`Command::new("...")`), or one they take from a `bin` directory of the cache (`cache_dir().join(...)`: what
    install-tools.sh and install-nix.sh install)."""
    tests = []
    for path in sorted((root / "tests").rglob("*.rs")):
        tests.append(File(path, root, tests))
    programs, unknown = {}, UNKNOWN

    def add(name, place, where):
        if name is not None:
            programs.setdefault((name, place), set()).add(where)

    for f in tests:
        for a, b in f.calls("which::which"):
            values = f.resolve_expr(a, b, frozenset())
            if not values:
                unknown.append(f"{f.where(a)}: which::which({f.src[a:b].strip()})")
            for name, where in values:
                add(name, "PATH", where)
        for a, b in f.calls("Command::new"):
            if (name := f.literal(a, b)) is not None:
                add(name, "PATH", f.where(a))
        for m in re.finditer(r"\bcache_dir\s*\(\s*\)", f.code):
            # The chain of joins: literal parts, then at most one expression.
            pos, parts = m.end(), []
            while j := re.compile(r"\s*\.\s*join\s*\(").match(f.code, pos):
                parts.append((j.end(), f.close(j.end() - 1)))
                pos = parts[-1][1] + 1
            prefix, rest = [], None
            for a, b in parts:
                if (text := f.literal(a, b)) is None:
                    rest = (a, b)
                    break
                prefix.append(text)
            path = "/".join(prefix)
            if rest is None and "/" in path and path.rsplit("/", 1)[0].endswith("bin"):
                add(path.rsplit("/", 1)[1], path.rsplit("/", 1)[0], f.where(m.start()))
            elif rest is not None and path.endswith("bin"):
                values = f.resolve_expr(*rest, frozenset())
                if not values:
                    unknown.append(f"{f.where(m.start())}: {f.src[m.start():rest[1] + 1].strip()}")
                for name, where in values:
                    add(name, path, where)
    return programs, unknown


def main():
    root, cache = Path(sys.argv[1]), Path(sys.argv[2])
    programs, unknown = collect(root)
    missing = []
    for (name, place), sites in sorted(programs.items()):
        if place == "PATH":
            found = os.access(name, os.X_OK) if "/" in name else shutil.which(name) is not None
            what, installer = name, "scripts/install-deps.sh"
        else:
            found = os.access(cache / place / name, os.X_OK)
            what, installer = f"$NVCC_WRAPPER_CACHE/{place}/{name}", INSTALLERS.get(place, f"what fills {place}")
        if not found:
            sites = sorted(sites, key=lambda w: (w.split(":")[0], int(w.split(":")[1])))
            missing.append(f"  MISSING  {what}: {installer} should install it; the tests name it at {', '.join(sites)}")
    print(f"{len(programs)} programs the tests call ({sum(map(len, programs.values()))} places in tests/):")
    order = sorted(programs, key=lambda k: (k[1] != "PATH", k[1], k[0]))
    names = ", ".join(n if p == "PATH" else f"{p}/{n}" for n, p in order)
    print("\n".join(textwrap.wrap(names, 116, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)))
    for line in missing:
        print(line)
    for u in unknown:
        print(f"  UNKNOWN  {u}: which program this is could not be read from the tests; name it with a literal")
    if missing or unknown:
        print(f"{len(missing)} missing, {len(unknown)} not known")
        sys.exit(1)
    print("all are there")


if sys.argv[1:2] in (["-h"], ["--help"]):
    print(__doc__.strip())
    sys.exit(0)
main()
