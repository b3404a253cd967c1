#!/usr/bin/env bash
# Installs fieldstore's shell completions (bash, zsh, fish) and man pages, generated from the
# command-line definition, under PREFIX (default ~/.local):
#   PREFIX/share/bash-completion/completions/fieldstore
#   PREFIX/share/zsh/site-functions/_fieldstore
#   PREFIX/share/fish/vendor_completions.d/fieldstore.fish
#   PREFIX/share/man/man1/fieldstore.1, fieldstore-list.1, ...
#   PREFIX/bin/fdb-list, ...: links to the binary, which run as FDB5's tools of those names
#   (its options, its output: docs/fdb5-users.md)
# The binary is $FIELDSTORE_BIN, else `fieldstore` on PATH, else this checkout's release build
# (built if missing).
#   scripts/install-shell-files.sh [PREFIX]        (sudo scripts/install-shell-files.sh /usr/local)
set -euo pipefail
prefix=${1:-$HOME/.local}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FIELDSTORE_BIN:-$(command -v fieldstore || true)}
if [[ -z $bin ]]; then
  (cd "$here" && cargo build --release -q -p fieldstore-cli)
  bin=$here/target/release/fieldstore
fi
install_generated() { # FILE COMMAND...
  mkdir -p "$(dirname "$1")"
  "${@:2}" > "$1.tmp" && mv "$1.tmp" "$1"
}
install_generated "$prefix/share/bash-completion/completions/fieldstore" "$bin" completions bash
install_generated "$prefix/share/zsh/site-functions/_fieldstore" "$bin" completions zsh
install_generated "$prefix/share/fish/vendor_completions.d/fieldstore.fish" "$bin" completions fish
"$bin" --quiet man --out "$prefix/share/man/man1"
mkdir -p "$prefix/bin"
for tool in $("$bin" fdb5-tools); do
  # FDB5's own tool of that name, installed there, is left alone.
  if [[ -e $prefix/bin/$tool && ! -L $prefix/bin/$tool ]]; then
    echo "left $prefix/bin/$tool alone: it is not a link (FDB5's own tool?)" >&2
    continue
  fi
  ln -sfn "$(realpath "$bin")" "$prefix/bin/$tool"
done
echo "installed completions, man pages and FDB5's tools' names ($("$bin" fdb5-tools | tr '\n' ' ')) under $prefix (man fieldstore-list; bash: new shells complete 'fieldstore li<TAB>')"
