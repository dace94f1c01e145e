//! Against real NVCC releases, fetched and cached by scripts/fetch-toolkits.sh. Filled in below.
