"""What every source and target shares: the cache paths, messages, stamps, staging and file copies."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

from pins import ASSEMBLY_REV

# Cache root: ${NVCC_WRAPPER_CACHE:-$HOME/.cache/nvcc-wrapper} (an empty variable counts as unset).
CACHE = Path(os.environ.get("NVCC_WRAPPER_CACHE") or Path(os.environ.get("HOME") or Path.home()) / ".cache/nvcc-wrapper")
DOWNLOADS = CACHE / "downloads"
APT_DIR = CACHE / "apt"
SCRIPTS = Path(__file__).resolve().parent.parent  # scripts/, where the smoke scripts live

# The host's target directory inside a toolkit root.
TARGET_DIR = "targets/x86_64-linux"


def toolkit_root(release: str) -> Path:
    return CACHE / "toolkits" / release


def headers_root(release: str) -> Path:
    return CACHE / "headers" / release


def target_root(name: str) -> Path:
    return CACHE / "target-roots" / name


TOOLS = CACHE / "tools"

# ---------------------------------------------------------------------------------------------------------------------
# Messages: everything goes to stderr; stdout carries only what --print-root / --print-target-root print.
# ---------------------------------------------------------------------------------------------------------------------


class Fatal(Exception):
    """A failure the user must act on: printed as `fetch-toolkits: error: MESSAGE`, exit status 1."""


def log(msg: str) -> None:
    print(f"fetch-toolkits: {msg}", file=sys.stderr, flush=True)


def die(msg: str) -> NoReturn:
    raise Fatal(msg)


def ready(name: str, where: object, suffix: str = "") -> None:
    """The one line per target on stderr: `13.0: ready at PATH`, ` (cached)` when nothing was done."""
    print(f"{name}: ready at {where}{suffix}", file=sys.stderr, flush=True)


def indented(text: str) -> None:
    """A tool's own output (pip's, apt's), shown under the failure it explains."""
    for line in text.splitlines():
        print(f"    {line}", file=sys.stderr)


def run_logged(cmd: list[str], log_file: Path, cwd: Path | None = None, env: dict | None = None) -> int:
    """Run `cmd` with stdout and stderr into `log_file`; the exit status."""
    with open(log_file, "wb") as out:
        return subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env).returncode


# ---------------------------------------------------------------------------------------------------------------------
# Stamps and staging
# ---------------------------------------------------------------------------------------------------------------------

STAMP = ".nvcc-wrapper-stamp"


def stamp_text(*parts: str) -> str:
    """A target's stamp: ASSEMBLY_REV and its pin line(s), runs of spaces squeezed. Any change to either makes the
    target stale. (The same text as the bash script's `printf 'rev=%s\\n%s\\n' ... | tr -s ' '`.)"""
    return re.sub(" +", " ", f"rev={ASSEMBLY_REV}\n" + " ".join(parts))


def stamp_matches(path: Path, text: str) -> bool:
    try:
        return path.read_text().rstrip("\n") == text
    except (FileNotFoundError, NotADirectoryError):
        return False


def is_fresh(directory: Path, text: str) -> bool:
    return stamp_matches(directory / STAMP, text)


def begin_stage(dest: Path) -> Path:
    """Assembly happens in DEST.partial, renamed into place once the stamp is written (finish_stage): a reader never
    sees a half-built root, and an interrupted run leaves no stamp and is redone from scratch."""
    stage = dest.with_name(dest.name + ".partial")
    rmtree(stage)
    stage.mkdir(parents=True)
    return stage


def finish_stage(stage: Path, dest: Path, text: str) -> None:
    (stage / STAMP).write_text(text + "\n")
    rmtree(dest)
    stage.rename(dest)


# ---------------------------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------------------------


def rmtree(path: Path) -> None:
    """rm -rf"""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def cp(src: Path, dest_dir: Path) -> None:
    """`cp SRC DIR/`: the content, with a new file's mode the source's less the umask (an existing file keeps its
    mode), as plain cp does."""
    dest = dest_dir / src.name
    existed = dest.exists()
    shutil.copyfile(src, dest)
    if not existed:
        os.chmod(dest, stat.S_IMODE(src.stat().st_mode) & ~_umask())


def cp_a(src: Path, dest: Path, link: bool = False) -> None:
    """`cp -a SRC DEST` (`cp -al` with link=True: files become hard links) for a file, a symbolic link or a directory
    tree; into an existing directory DEST, the tree's content is merged as `cp -a SRC/. DEST/` does."""
    if src.is_symlink():
        rmtree(dest)
        if link:
            os.link(src, dest, follow_symlinks=False)  # as cp -al: a hard link to the symbolic link itself
        else:
            os.symlink(os.readlink(src), dest)
    elif src.is_dir():
        dest.mkdir(exist_ok=True)
        for entry in sorted(os.listdir(src)):
            cp_a(src / entry, dest / entry, link)
        shutil.copystat(src, dest)
    elif link:
        rmtree(dest)
        os.link(src, dest)
    else:
        rmtree(dest)
        shutil.copy2(src, dest)


def move_into(srcs: list[Path], dest_dir: Path) -> None:
    """`mv SRC... DIR/`"""
    for src in srcs:
        shutil.move(str(src), str(dest_dir / src.name))
