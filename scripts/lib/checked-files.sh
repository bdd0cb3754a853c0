# What the weight installers share (scripts/minilm.sh, scripts/mpnet.sh).
# Sourced, not run: the caller sets `files` ("name sha256" each), `root`
# (where they are installed) and `say`.

# Every file is in $root with its recorded sha256.
installed() {
  for entry in "${files[@]}"; do
    set -- $entry
    [ -f "$root/$1" ] || return 1
    [ "$(sha256sum "$root/$1" | cut -d' ' -f1)" = "$2" ] || return 1
  done
}

# Moves the files from folder $1 into $root once every one has its recorded
# sha256; otherwise refuses, naming the file and $2 (where it came from),
# and installs nothing.
keep_checked() {
  local from=$1 source=$2 got
  for entry in "${files[@]}"; do
    set -- $entry
    got=$(sha256sum "$from/$1" | cut -d' ' -f1)
    if [ "$got" != "$2" ]; then
      say "refusing $1 from $source: sha256 $got, expected $2"
      exit 1
    fi
  done
  mkdir -p "$root"
  for entry in "${files[@]}"; do
    set -- $entry
    mv "$from/$1" "$root/$1"
  done
  say "installed in $root"
  echo "$root"
}
