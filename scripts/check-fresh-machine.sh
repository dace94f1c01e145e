#!/usr/bin/env bash
# check-fresh-machine.sh: proves that the README's two commands install what they need (issue 33, item 5). In a
# fresh Debian 12 root, as the README assumes one (mmdebstrap --variant=minbase with git, curl, ca-certificates and
# python3-pip, and the host's Rust), it first runs every script's --help and -h with the installers made to fail
# (nothing may be installed, downloaded or built), then scripts/demo.sh, then the installation steps of scripts/test.sh
# (install-deps.sh, install-tools.sh, install-nix.sh; not the NVCC downloads of fetch-toolkits.sh), and checks that
# every program the tests call is there. The programs are read from the tests themselves, not from a list kept
# here: what tests/**/*.rs look up on PATH (`which::which`, and so every name given to tests/common's
# `real_program`), run by name (`Command::new("make")`), or take from a `bin` directory of the cache (`cache_dir()`:
# install-tools.sh's PyPI tools, install-nix.sh's Nix and make 4.4). An argument that is no string literal is
# followed to the literals it comes from (a `let`, a `for`, a struct field, a tuple a function returns, the calls of
# the function it is a parameter of); one that cannot be followed fails the check, as does each missing program,
# named with the places in the tests that call it and the script that should install it.
#
# Usage: scripts/check-fresh-machine.sh [--worktree] [--keep] [--suite[=FILTER]]
#   --worktree  test the checkout as it is, uncommitted changes included (default: a clone of its HEAD, as CI's)
#   --keep      keep the run's root in $DIR/run (its overlay's upper layer, upper/) to look at afterwards
#   --suite     then run the README's second command itself in the root, `scripts/test.sh FILTER` (no filter: the
#               whole suite, about 50 minutes more, so CI leaves it out): it fetches the toolkits there (unpacked
#               from the shared downloads), builds every test and runs them
#
# Needs root (mounts, chroot), mmdebstrap (scripts/install-deps.sh installs it), unshare and overlayfs; CI runs it
# as root. It caches, outside the checkout, in $NVCC_WRAPPER_CACHE (default ~/.cache/nvcc-wrapper)/fresh-machine:
#   base/          the Debian 12 root, made once (base.STAMP names the recipe; change it below to make it again).
#                  Every run starts from it unchanged: it is the lower layer of an overlay whose upper layer, run/,
#                  is thrown away at the end, so each run is a fresh machine.
#   apt-archives/  the .debs of the root's apt, shared by all runs (at /var/cache/apt/archives in the root)
#   pip/           pip's cache, for install-tools.sh's wheels (at /root/.cache/pip)
# and it shares with the host, so that nothing large is downloaded again: $NVCC_WRAPPER_CACHE/downloads (the NVCC
# wheels the demo unpacks), cargo's registry (the crates), and the Rust toolchain (`rustc --print sysroot`,
# read-only). Everything else the two commands make (target/, the toolkit, the venv, the installed packages) is
# made in the root from scratch. The checkout is only read.
#
# Time, on the project's 2-core machine (a fast mirror): 3 minutes the first time, 36 s of it making the root; then
# 2.5 minutes, half of it cargo's release build in the demo. Each step's time is printed at the end.
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi

SUITE=bookworm
INCLUDE=git,curl,ca-certificates,python3-pip
MIRROR=${NVCC_WRAPPER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${NVCC_WRAPPER_CACHE:-${HOME:?}/.cache/nvcc-wrapper}
DIR=$CACHE/fresh-machine
RUN=$DIR/run
want="$SUITE minbase $INCLUDE layout 2"

log() { printf 'check-fresh-machine: %s\n' "$*" >&2; }
die() { printf 'check-fresh-machine: error: %s\n' "$*" >&2; exit 1; }
now() { printf '%s' "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# `timed NAME COMMAND...`: run it, and record its wall time in $RUN/timings.
timed() {
  local name=$1 start status=0
  shift
  log "== $name"
  start=$(now)
  "$@" || status=$?
  printf '%-44s %6s s%s\n' "$name" "$(since "$start")" "$( ((status)) && echo "   FAILED (exit $status)")" \
    >>"$RUN/timings"
  return "$status"
}

# ---------------------------------------------------------------------------------------------------------------
# Inside the mount and PID namespace (the script runs itself again there): the root, the run, the check.
# ---------------------------------------------------------------------------------------------------------------


inside() {
  local root=$RUN/root src=/root/nvcc-wrapper
  mkdir -p "$RUN/upper" "$RUN/work" "$root"
  mount -t overlay overlay -o "lowerdir=$DIR/base,upperdir=$RUN/upper,workdir=$RUN/work" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  # bind SOURCE TARGET [ro]: SOURCE at TARGET in the root (both made when missing).
  bind() {
    mkdir -p "$1" "$root$2"
    mount --bind "$1" "$root$2"
    [[ ${3-} != ro ]] || mount -o remount,bind,ro "$root$2"
  }
  bind "$SYSROOT" "$SYSROOT" ro
  bind "$CARGO_REGISTRY" /root/.cargo/registry
  bind "$CACHE/downloads" /root/.cache/nvcc-wrapper/downloads
  bind "$DIR/apt-archives" /var/cache/apt/archives
  bind "$DIR/pip" /root/.cache/pip
  # The network as the host sees it: its resolver, and its own certificate authorities (a proxy's, on a machine
  # whose HTTPS goes through one), which a fresh machine of the same site would have too.
  cp -L --remove-destination /etc/resolv.conf "$root/etc/resolv.conf"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
  fi
  # The root is thrown away: dpkg need not sync each file, and no service is started.
  echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/check-fresh-machine"
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"

  # The checkout: a clone of HEAD (what CI's fresh clone holds), with --worktree its uncommitted changes on top.
  git clone --quiet --no-hardlinks "$REPO" "$root$src"
  if ((WORKTREE)); then
    { git -C "$REPO" diff -z --name-only --no-renames --diff-filter=d HEAD
      git -C "$REPO" ls-files -z --others --exclude-standard; } |
      tar -C "$REPO" --null -T - -cf - | tar -C "$root$src" -xf -
    git -C "$REPO" diff -z --name-only --no-renames --diff-filter=D HEAD | (cd "$root$src" && xargs -0r rm -f --)
  fi
  log "the root: $(<"$root/etc/debian_version"), $(chroot "$root" dpkg-query -W -f='.\n' | wc -l) packages" \
    "($INCLUDE and minbase), Rust $(rustc --version | cut -d' ' -f2) from $SYSROOT; the checkout at $src," \
    "$(git -C "$root$src" log -1 --format='%h %s' | cut -c1-60)$( ((WORKTREE)) && echo ' + uncommitted changes')"

  # A login of root on the fresh machine: a clean environment, Rust first on PATH (after $FIRST, when set).
  in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
      PATH="${FIRST:+$FIRST:}$SYSROOT/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      /bin/bash -c 'cd "$0" && exec "$@"' "$src" "$@"
  }
  # Every script a user may run (the shell scripts, and the Python ones run by name) answers --help and -h on the
  # fresh machine, before anything is set up, with apt-get, pip, cargo and the other installers made to fail: each
  # exits 0 with its usage, no installer is called, and nothing is built or cached (issue 50).
  help_changes_nothing() {
    local stubs=/tmp/installers log=/tmp/installers.log name script flag bad=0 made before count=0
    before=$(cd "$root$src" && git status --porcelain --ignored)
    mkdir -p "$root$stubs"
    for name in apt-get apt pip pip3 cargo rustc curl wget mmdebstrap nix sudo dpkg; do
      printf '#!/bin/sh\necho "%s $*" >>%s\nexit 1\n' "$name" "$log" >"$root$stubs/$name"
      chmod +x "$root$stubs/$name"
    done
    for script in "$root$src"/scripts/*.sh "$root$src"/scripts/*.py; do
      name=${script##*/}
      [[ $(head -c2 "$script") == '#!' ]] || continue
      [[ $name == *.sh ]] || grep -q __main__ "$script" || [[ $name == test_programs.py ]] || continue
      count=$((count + 1))
      for flag in --help -h; do
        local run=(bash "scripts/$name" "$flag")
        [[ $name == *.py ]] && run=(python3 -B "scripts/$name" "$flag")
        if ! FIRST=$stubs in_root "${run[@]}" </dev/null >"$root/tmp/help.out" 2>&1 ||
          [[ ! -s $root/tmp/help.out ]]; then
          log "scripts/$name $flag: no usage, or a failure:"; cat "$root/tmp/help.out" >&2; bad=1
        fi
      done
    done
    if [[ -s $root$log ]]; then log "an installer ran:"; cat "$root$log" >&2; bad=1; fi
    made=$(cd "$root$src" && git status --porcelain --ignored)
    [[ $made == "$before" ]] && made=
    made+=$(find "$root/root/.cache/nvcc-wrapper" -mindepth 1 -maxdepth 1 ! -name downloads 2>/dev/null)
    if [[ -n $made ]]; then log "--help made: $made"; bad=1; fi
    ((count >= 20)) || { log "only $count scripts found"; bad=1; }
    log "$count scripts answered --help and -h; no installer ran, nothing was written"
    rm -rf "${root:?}$stubs" "$root$log" "$root/tmp/help.out"
    return "$bad"
  }
  # A dry run on package lists that name nothing (mmdebstrap empties them): it must say it would update first, not
  # warn that every package is missing, nor match other packages' names as patterns (issue 39).
  dry_run() {
    local said
    said=$(in_root scripts/install-deps.sh --dry-run 2>&1) || return 1
    printf '%s\n' "$said" >&2
    [[ $said == *"would run apt-get update, then install: "* && $said != *"no package"* ]]
  }
  local failed=0
  timed "every script's --help changes nothing" help_changes_nothing || failed=1
  if [[ -z $(find "$root/var/lib/apt/lists" -name '*_Packages*' -print -quit 2>/dev/null) ]]; then
    timed "install-deps.sh --dry-run on empty lists" dry_run || failed=1
  fi
  timed "scripts/demo.sh" in_root scripts/demo.sh || failed=1
  timed "scripts/install-deps.sh" in_root scripts/install-deps.sh || failed=1
  timed "scripts/install-tools.sh" in_root scripts/install-tools.sh || failed=1
  timed "scripts/install-nix.sh" in_root scripts/install-nix.sh || failed=1
  timed "every program the tests call is there" \
    in_root python3 -B "$src/scripts/test_programs.py" "$src" /root/.cache/nvcc-wrapper || failed=1
  if ((SUITE_RUN)) && ((!failed)); then
    # shellcheck disable=SC2086 # the filter is words for the test binaries, as the README's command takes them
    timed "scripts/test.sh ${SUITE_FILTER:-(everything)}" in_root scripts/test.sh $SUITE_FILTER || failed=1
  fi
  # Keep the shared .deb cache to what the archive still has.
  in_root apt-get -qq autoclean >/dev/null 2>&1 || true
  return "$failed"
}

if [[ ${1-} == --inside ]]; then
  # Only as PID 1 of the namespaces made below: never mount over the host's own file system.
  ((BASHPID == 1)) || die "--inside is the script's own step in its namespaces, not an option"
  inside
  exit
fi

# ---------------------------------------------------------------------------------------------------------------
# Outside: the cached root, then the run in its own namespaces.
# ---------------------------------------------------------------------------------------------------------------

WORKTREE=0 KEEP=0 SUITE_RUN=0 SUITE_FILTER=
for arg in "$@"; do
  case $arg in
    --worktree) WORKTREE=1 ;;
    --keep) KEEP=1 ;;
    --suite) SUITE_RUN=1 ;;
    --suite=*) SUITE_RUN=1 SUITE_FILTER=${arg#--suite=} ;;
    *) die "unknown argument $arg (usage: $0 [--worktree] [--keep] [--suite[=FILTER]])" ;;
  esac
done
((EUID == 0)) || die "needs root (it mounts an overlay and chroots into it); CI runs it as root"
command -v mmdebstrap >/dev/null || die "mmdebstrap is needed (scripts/install-deps.sh installs it)"
for tool in unshare chroot git rustc; do
  command -v "$tool" >/dev/null || die "$tool is needed"
done
REPO=$(cd "$(dirname "$0")/.." && pwd)
SYSROOT=$(rustc --print sysroot)
[[ -x $SYSROOT/bin/cargo ]] || die "no cargo beside rustc in $SYSROOT (a rustup toolchain has one)"
CARGO_REGISTRY=${CARGO_HOME:-$HOME/.cargo}/registry
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock -n 9 || die "another check-fresh-machine.sh is running (it holds $DIR/.lock)"

total=$(now)
rm -rf "$RUN"
mkdir -p "$RUN" "$DIR/apt-archives" "$DIR/pip" "$CACHE/downloads"
: >"$RUN/timings"
((KEEP)) || trap 'rm -rf "$RUN"' EXIT

if [[ -f $DIR/base.STAMP && $(<"$DIR/base.STAMP") == "$want" && -x $DIR/base/usr/bin/git ]]; then
  log "the Debian 12 root is cached in $DIR/base"
else
  # base.STAMP is written last: a root made half way has none, and is made again from scratch.
  make_base() {
    rm -rf "$DIR/base" "$DIR/base.tmp" "$DIR/base.STAMP"
    # The .debs stay in apt-archives (sync-in before, sync-out after; --skip: mmdebstrap deletes none in between).
    # No documentation or translations, in this root and in what is installed into it.
    mmdebstrap --quiet --variant=minbase --include="$INCLUDE" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --skip=download/empty --skip=essential/unlink \
      --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
      --setup-hook="sync-in $DIR/apt-archives /var/cache/apt/archives" \
      --customize-hook="sync-out /var/cache/apt/archives $DIR/apt-archives" \
      "$SUITE" "$DIR/base.tmp" "$MIRROR"
    rm -f "$DIR/base.tmp/var/cache/apt/archives/"*.deb
    mv "$DIR/base.tmp" "$DIR/base"
    printf '%s\n' "$want" >"$DIR/base.STAMP"
  }
  timed "the Debian 12 root (mmdebstrap, once)" make_base
fi

# A mount namespace (every mount goes with it) and a PID namespace (so does every process started in the root).
status=0
WORKTREE=$WORKTREE SUITE_RUN=$SUITE_RUN SUITE_FILTER=$SUITE_FILTER REPO=$REPO SYSROOT=$SYSROOT \
  CARGO_REGISTRY=$CARGO_REGISTRY \
  unshare --mount --propagation private --pid --fork --kill-child -- \
  bash "$REPO/scripts/check-fresh-machine.sh" --inside || status=$?
if ((!KEEP)); then
  timed "removing the run's root" rm -rf "$RUN/upper" "$RUN/work" "$RUN/root"
fi
printf '%-44s %6s s\n' "total" "$(since "$total")" >>"$RUN/timings"
log "times:"
sed 's/^/  /' "$RUN/timings" >&2
((KEEP)) && log "the run's root is kept in $RUN/upper (over $DIR/base)"
if ((status)); then
  die "a fresh Debian 12 machine is not enough for the README's commands (see above)"
fi
if ((SUITE_RUN)); then
  log "ok: on a fresh Debian 12 machine, scripts/demo.sh runs and scripts/test.sh ${SUITE_FILTER:-(the whole suite)} passes"
else
  log "ok: on a fresh Debian 12 machine, scripts/demo.sh runs and the tests' programs are installed"
fi
