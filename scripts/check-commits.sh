#!/usr/bin/env bash
# Commit subjects after the convention began: `area: imperative summary`, at
# most 72 characters; no unsquashed fixups or review mends. The history
# before the convention is left as it is.
#
#   scripts/check-commits.sh [BASE]   check BASE..HEAD (default: the last commit before the convention)
set -euo pipefail
cd "$(dirname "$0")/.."

# The last commit written before the convention.
base=${1:-99926ac164cdd4df4063b430a6d4ec5d6cab2d39}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-commits: $base is not in this clone's history (a shallow clone?); nothing checked" >&2
  exit 0
fi

bad=0
while IFS=$'\t' read -r sha subject; do
  why=
  if [ "${#subject}" -gt 72 ]; then
    why="${#subject} characters (at most 72)"
  elif ! [[ $subject =~ ^[a-z][a-z0-9_./-]*(,\ ?[a-z][a-z0-9_./-]*)*:\ [^\ ] ]]; then
    why="not 'area: imperative summary'"
  elif [[ $subject =~ ^(fixup|squash|amend)! ]] || [[ $subject =~ [Rr]eview\ mend ]]; then
    why="a mend to fold into the commit it mends (git rebase --autosquash)"
  fi
  if [ -n "$why" ]; then
    echo "check-commits: $sha \"$subject\": $why" >&2
    bad=1
  fi
done < <(git log --format='%h%x09%s' "$base..HEAD")

if [ "$bad" = 0 ]; then
  echo "check-commits: $(git rev-list --count "$base..HEAD") subjects after $base follow the convention" >&2
fi
exit "$bad"
