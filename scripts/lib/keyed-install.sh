# The key of a pinned install, shared by every install script. Sourced, not
# run. An install records its key in a marker file beside it and is done
# again only when the key changes.

# The key: the pin files' contents (not their paths, which differ from
# clone to clone; `<(echo ...)` adds a setting that is part of it), then the
# Python the install is made with.
pins_key() {
  { cat "$@"; python3 -c 'import sys, platform; print(sys.version.split()[0], platform.machine())'; } \
    | sha256sum | cut -d' ' -f1
}

# Whether marker file $1 records key $2: what is installed is what the pins ask for.
keyed() {
  [ "$(cat "$1" 2>/dev/null)" = "$2" ]
}
