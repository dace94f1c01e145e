#!/usr/bin/env bash
# fetch-toolkits.sh: fetch REAL NVIDIA nvcc toolkits from package registries and assemble them into a cache outside the
# checkout. The entry point every test, script and document names; the fetcher itself is the Python package
# scripts/fetch_toolkits/ (pins.py holds the releases as data). `scripts/fetch-toolkits.sh --help` for the usage,
# docs/toolkits.md for the cache layout and how to add a release.
set -euo pipefail
command -v python3 >/dev/null ||
  { echo "fetch-toolkits: error: python3 is needed (scripts/install-deps.sh installs it)" >&2; exit 1; }
# -B: no __pycache__ in the checkout.
exec python3 -B "$(dirname "${BASH_SOURCE[0]}")/fetch_toolkits" "$@"
