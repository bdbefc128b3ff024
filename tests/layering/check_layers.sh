#!/usr/bin/env bash
# Layer-order check: fails when a source includes a layer it may not (tests/layering/layers.txt
# gives the order and the allow-list; its header explains the rules).
#
#   check_layers.sh [--root DIR] [--layers FILE] [FOLDER...]
#
# DIR defaults to the repository holding this script, FILE to DIR/tests/layering/layers.txt, the
# folders to sim topology models planner traces ui validator kernels (those that exist). Prints one
# line per violation, `FILE:LINE -> HEADER: layer A may not include layer B`, and exits 1 when
# there is any violation, layers.txt error or stale allow-list entry; exits 0 with a summary
# otherwise. Needs only bash, find, grep, sed, sort and a POSIX awk.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
layers=""
folders=()
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --layers) layers="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) folders+=("$1"); shift ;;
  esac
done
[ -n "$layers" ] || layers="$root/tests/layering/layers.txt"
[ ${#folders[@]} -gt 0 ] || folders=(sim topology models planner traces ui validator kernels)
if [ ! -f "$layers" ]; then
  echo "check_layers: no layer file $layers" >&2
  exit 2
fi
cd "$root"

present=()
for f in "${folders[@]}"; do [ -d "$f" ] && present+=("$f"); done
if [ ${#present[@]} -eq 0 ]; then
  echo "check_layers: none of ${folders[*]} exists under $root" >&2
  exit 2
fi

# The stream awk reads after layers.txt: "F<TAB>file" for every source, then
# "I<TAB>file<TAB>line<TAB>header" for every quoted include.
sources() {
  find "${present[@]}" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' \
    -o -name '*.cuh' \) | LC_ALL=C sort
}
stream() {
  local files
  files="$(sources)"
  [ -n "$files" ] || return 0
  printf '%s\n' "$files" | sed 's/^/F\t/'
  # grep -n prints FILE:LINE:TEXT (paths under these folders hold no ':').
  printf '%s\n' "$files" | tr '\n' '\0' |
    xargs -0 grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' /dev/null |
    sed -E 's/^([^:]+):([0-9]+):[^"]*"([^"]+)".*$/I\t\1\t\2\t\3/' || true
}

stream | awk -v LAYERS="$layers" -v TOPS="${folders[*]}" '
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function problem(msg) { print msg; bad++ }
# The longest layer that is `path` or a folder above it; "" when none.
function layer_of(path,    best, l) {
  best = ""
  for (l in is_layer)
    if ((path == l || index(path, l "/") == 1) && length(l) > length(best)) best = l
  return best
}
# Whether `name` (a layer or a parent folder of layers) covers layer `l`.
function covers(name, l) { return l == name || index(l, name "/") == 1 }
function permits(a, b,    d, pair) {
  if (a == b) return 1
  for (d in reach) {
    split(d, pair, SUBSEP)
    if (pair[1] == a && covers(pair[2], b)) return 1
  }
  return 0
}
BEGIN {
  FS = "\t"
  ntops = split(TOPS, tops, " ")
  for (i = 1; i <= ntops; i++) is_top[tops[i]] = 1
  n = 0
  while ((getline raw < LAYERS) > 0) {
    n++
    line = raw
    comment = ""
    if ((h = index(line, "#")) > 0) { comment = trim(substr(line, h + 1)); line = substr(line, 1, h - 1) }
    line = trim(line)
    if (line == "") continue
    if (line ~ /^allow[ \t]/) {
      rest = trim(substr(line, 6))
      if ((arrow = index(rest, "->")) == 0) { problem(LAYERS ":" n ": expected `allow FILE -> HEADER  # PENDING FIX`"); continue }
      f = trim(substr(rest, 1, arrow - 1)); hdr = trim(substr(rest, arrow + 2))
      if (f == "" || hdr == "" || f ~ /[ \t]/ || hdr ~ /[ \t]/) { problem(LAYERS ":" n ": expected `allow FILE -> HEADER  # PENDING FIX`"); continue }
      if (comment == "") { problem(LAYERS ":" n ": allow " f " -> " hdr ": say which fix removes it (a # comment)"); continue }
      allow[f, hdr] = n
      continue
    }
    if ((colon = index(line, ":")) == 0) { problem(LAYERS ":" n ": expected `LAYER: MAY-INCLUDE...` or `allow FILE -> HEADER`"); continue }
    name = trim(substr(line, 1, colon - 1))
    if (name == "" || name ~ /[ \t]/) { problem(LAYERS ":" n ": bad layer name \"" name "\""); continue }
    if (name in is_layer) { problem(LAYERS ":" n ": layer " name " is declared twice"); continue }
    is_layer[name] = 1
    layer_line[name] = n
    nd = split(trim(substr(line, colon + 1)), ds, /[ \t]+/)
    for (i = 1; i <= nd; i++) if (ds[i] != "") { dep[name, ds[i]] = 1; dep_line[name, ds[i]] = n }
  }
  close(LAYERS)
  # Every listed name must cover a declared layer (a typo would silently allow nothing).
  for (d in dep) {
    split(d, pair, SUBSEP)
    found = 0
    for (l in is_layer) if (covers(pair[2], l)) found = 1
    if (!found) problem(LAYERS ":" dep_line[d] ": " pair[1] " lists \"" pair[2] "\", which is no layer nor a folder of layers")
  }
  # What each layer may include: its list, and transitively what every layer those cover lists.
  for (d in dep) reach[d] = 1
  do {
    changed = 0
    for (r in reach) {
      split(r, pair, SUBSEP)
      a = pair[1]; via = pair[2]
      for (d in dep) {
        split(d, q, SUBSEP)
        if (covers(via, q[1]) && !((a, q[2]) in reach)) { reach[a, q[2]] = 1; changed = 1 }
      }
    }
  } while (changed)
  for (a in is_layer)
    for (b in is_layer)
      if (a < b && permits(a, b) && permits(b, a))
        problem(LAYERS ": layers " a " and " b " may include each other (a cycle): remove one direction")
}
$1 == "F" {
  files++
  if (layer_of($2) == "") problem($2 ": belongs to no layer: declare its folder in " LAYERS)
  next
}
$1 == "I" {
  file = $2; at = $3; hdr = $4
  includes++
  top = hdr; sub(/\/.*/, "", top)
  lf = layer_of(file)
  if (lf == "") next  # reported above
  lh = layer_of(hdr)
  if (lh == "") {
    if (top in is_top) problem(file ":" at " -> " hdr ": the header belongs to no layer (declare its folder in " LAYERS ")")
    next  # not one of ours (a system or third-party header in quotes)
  }
  if (permits(lf, lh)) next
  if ((file, hdr) in allow) { used[file, hdr] = 1; allowed++; next }
  problem(file ":" at " -> " hdr ": layer " lf " may not include layer " lh)
}
END {
  for (k in allow)
    if (!(k in used)) {
      split(k, pair, SUBSEP)
      problem(LAYERS ":" allow[k] ": allow " pair[1] " -> " pair[2] " matches no violating include any more: remove it")
    }
  if (bad > 0) {
    print "layering: " bad " problem(s) in " files + 0 " files (rules: " LAYERS ")"
    exit 1
  }
  print "layering: " files + 0 " files, " includes + 0 " includes checked, " allowed + 0 " on the allow-list"
}
'
