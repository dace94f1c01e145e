#!/usr/bin/env bash
# install-nix.sh: a Nix that current Nixpkgs accepts (its lib/minfeatures.nix asks for 2.18 or newer; Debian 12's
# nix-bin is 2.8), from Debian's own packages, for the Nix tests (tests/real/nix/). Debian 13 (trixie)'s nix-bin
# is unpacked with its libraries by mmdebstrap into the cache outside the checkout:
#   $NVCC_WRAPPER_CACHE (default ~/.cache/nvcc-wrapper)/nix/root      the unpacked packages (nothing is configured)
#   $NVCC_WRAPPER_CACHE/nix/bin/{nix,nix-instantiate,nix-build,nix-store}
# The programs in bin/ run that Nix through bubblewrap with no network: the host's file system read-only (the
# checkout, the toolkit cache and Debian's compilers the tests' stand-ins point at, all at their own paths), /nix and
# the temporary directory writable (the store is the host's, so the tests read realised outputs where Nix put them).
# The Nix binary is started by the root's own dynamic loader on the root's libraries: trixie's glibc and libstdc++
# are newer than the host's. A chroot into the root is not needed (nor enough: Nix reads /proc/self/exe).
#
# Usage: scripts/install-nix.sh
#
# Idempotent: when the cache holds a root made by this version of the script (its STAMP file) it only prints the
# version, in well under a second. Changing RELEASE or PACKAGES below makes the root again from scratch.
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi

RELEASE=trixie
# make: GNU make 4.4, whose jobserver is a FIFO any child can open (Debian 12's 4.3 passes a pipe to `+` rules only),
# for the jobserver tests (tests/real/threads.rs), as $NVCC_WRAPPER_CACHE/nix/bin/make-4.4.
PACKAGES=nix-bin,make
MIRROR=${NVCC_WRAPPER_DEBIAN_MIRROR:-http://deb.debian.org/debian}

log() { printf 'install-nix: %s\n' "$*" >&2; }
die() { printf 'install-nix: error: %s\n' "$*" >&2; exit 1; }

CACHE=${NVCC_WRAPPER_CACHE:-${HOME:?}/.cache/nvcc-wrapper}
DIR=$CACHE/nix
want="$RELEASE $PACKAGES layout 2"

if [[ -f $DIR/STAMP && $(<"$DIR/STAMP") == "$want" && -x $DIR/bin/nix-build && -x $DIR/bin/make-4.4 ]]; then
  log "$("$DIR/bin/nix-instantiate" --version) from Debian $RELEASE's $PACKAGES is installed in $DIR"
  exit 0
fi

command -v mmdebstrap >/dev/null || die "mmdebstrap is needed (scripts/install-deps.sh installs it)"
command -v bwrap >/dev/null || die "bwrap is needed (scripts/install-deps.sh installs bubblewrap)"

log "unpacking Debian $RELEASE's $PACKAGES into $DIR/root"
# The STAMP file is written last: an install that was killed half way has none, and is made again from scratch.
rm -rf "$DIR"
mkdir -p "$DIR/bin"
# `extract`: the packages and their dependencies unpacked, no maintainer scripts run (Nix is never run inside the root,
# only from its libraries), and no documentation but the copyright files.
mmdebstrap --quiet --variant=extract --include="$PACKAGES" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  "$RELEASE" "$DIR/root" "$MIRROR"
[[ -x $DIR/root/usr/bin/nix && -e $DIR/root/usr/lib64/ld-linux-x86-64.so.2 ]] ||
  die "$DIR/root has no usr/bin/nix or no dynamic loader after mmdebstrap"

# One script under every name; Nix's multi-call binary dispatches on the name it is given.
cat >"$DIR/bin/nix" <<EOF
#!/usr/bin/env bash
# Written by scripts/install-nix.sh: Debian $RELEASE's Nix from $DIR/root, run offline through bubblewrap.
set -euo pipefail
root=$(printf %q "$DIR/root")
EOF
cat >>"$DIR/bin/nix" <<'EOF'
# Debian's nix-bin has no daemon: as root it creates and writes /nix itself.
[[ -d /nix ]] || mkdir -p /nix
binds=(--ro-bind / / --dev /dev --proc /proc --bind /nix /nix --bind /tmp /tmp)
if [[ -n ${TMPDIR-} && -d $TMPDIR && $TMPDIR != /tmp ]]; then
  binds+=(--bind "$TMPDIR" "$TMPDIR")
fi
# Nix starts its build hook as /proc/self/exe, which here is the dynamic loader: no remote builders, no hook.
export NIX_CONFIG="${NIX_CONFIG-}
build-hook ="
exec bwrap --unshare-net --die-with-parent "${binds[@]}" -- \
  "$root/usr/lib64/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" \
  --argv0 "${0##*/}" "$root/usr/bin/nix" "$@"
EOF
chmod +x "$DIR/bin/nix"
for name in nix-instantiate nix-build nix-store; do
  ln -s nix "$DIR/bin/$name"
done
# GNU make 4.4 from the same root, on its libraries; the programs it runs are the host's.
printf '#!/usr/bin/env bash\n# Written by scripts/install-nix.sh: Debian %s GNU make from the root beside it.\nexec %q --library-path %q --argv0 make %q "$@"\n' \
  "$RELEASE" "$DIR/root/usr/lib64/ld-linux-x86-64.so.2" "$DIR/root/usr/lib/x86_64-linux-gnu" "$DIR/root/usr/bin/make" \
  >"$DIR/bin/make-4.4"
chmod +x "$DIR/bin/make-4.4"
"$DIR/bin/make-4.4" --version | head -n1 | grep -q 'GNU Make 4[.]4' || die "$DIR/bin/make-4.4 is not GNU make 4.4"

export NIX_CONFIG="build-users-group ="
version=$("$DIR/bin/nix-instantiate" --version) || die "the unpacked Nix does not start through bwrap"
"$DIR/bin/nix-instantiate" --eval --expr 'builtins.compareVersions builtins.nixVersion "2.18" >= 0' | grep -qx true ||
  die "$version is older than 2.18"
printf '%s\n' "$want" >"$DIR/STAMP"
log "done: $version, $(du -sh "$DIR/root" | cut -f1), $(find "$DIR/root" | wc -l) files"
