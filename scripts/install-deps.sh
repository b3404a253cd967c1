#!/usr/bin/env bash
# Installs what fieldstore needs to build and test on Debian 12, skipping what is present:
# ecCodes (library, headers, tools and definitions) and a Rust toolchain.
set -euo pipefail

as_root() { if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi; }

# Installs the Debian packages given that are not installed yet.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "fieldstore: installing Debian packages: ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_packages libeccodes-dev libeccodes-tools pkg-config gcc util-linux

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
