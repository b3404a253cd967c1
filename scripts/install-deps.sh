#!/usr/bin/env bash
# Installs what fieldstore needs to build and test on Debian 12, skipping what is present:
# ecCodes (library, headers, tools and definitions), HDF5's tools and a Rust toolchain.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"

# openssl and curl: the remote tests make certificates and read a server as curl does.
# hdf5-tools: `bench ior --api hdf5` loads the HDF5 library it brings, and the tests check its
# files with its h5dump.
ensure_packages libeccodes-dev libeccodes-tools pkg-config gcc util-linux openssl curl hdf5-tools

if ! command -v cargo >/dev/null 2>&1; then
  if [[ -x $HOME/.cargo/bin/cargo ]]; then
    export PATH=$HOME/.cargo/bin:$PATH
  else
    ensure_packages curl ca-certificates
    echo "fieldstore: installing Rust with rustup" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile default >&2
    export PATH=$HOME/.cargo/bin:$PATH
  fi
fi

# The test command checks formatting and lints.
for tool in rustfmt clippy; do
  if ! cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
    rustup component add "$tool" >&2
  fi
done
