#!/usr/bin/env bash
# Tests of check_layers.sh itself on small fake trees: a clean tree passes, and each kind of
# problem (an upward include, a stale or unexplained allow-list entry, an undeclared folder, a
# cycle, a misspelt layer) fails with its message.
#   checker_test.sh CHECK_LAYERS.sh
set -euo pipefail
check="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

# A tree: low/a.hpp, mid/b.hpp (includes low), top/sub/c.cpp (includes mid and, transitively, low).
make_tree() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree/low" "$work/tree/mid" "$work/tree/top/sub"
  printf '#pragma once\n#include <vector>\n' > "$work/tree/low/a.hpp"
  printf '#pragma once\n#include "low/a.hpp"\n#include "third_party.h"\n' > "$work/tree/mid/b.hpp"
  printf '#include "mid/b.hpp"\n#include "low/a.hpp"\n#include "top/sub/c.hpp"\n' > "$work/tree/top/sub/c.cpp"
  printf '#pragma once\n' > "$work/tree/top/sub/c.hpp"
}
layers() { printf '%s\n' "$@" > "$work/layers.txt"; }
base_layers=("# test" "low:" "mid: low" "top: mid")
folders=(low mid top)

# expect CODE PATTERN: runs the checker on the tree; its exit code must be CODE and its output
# must contain PATTERN (a fixed string).
expect() {
  local want="$1" pattern="$2" out rc=0
  out="$(bash "$check" --root "$work/tree" --layers "$work/layers.txt" "${folders[@]}" 2>&1)" || rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$pattern" <<< "$out"; then
    echo "FAIL ($case_name): want exit $want and \"$pattern\"; got exit $rc:"
    printf '%s\n' "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: $case_name"
  fi
}

case_name="clean tree passes (direct and transitive includes, third-party headers ignored)"
make_tree; layers "${base_layers[@]}"
expect 0 "layering: 4 files, 5 includes checked, 0 on the allow-list"

case_name="an upward include fails with file:line, header and both layers"
make_tree; layers "${base_layers[@]}"
printf '#pragma once\n#include <vector>\n#include "top/sub/c.hpp"\n' > "$work/tree/low/a.hpp"
expect 1 "low/a.hpp:3 -> top/sub/c.hpp: layer low may not include layer top"

case_name="a sibling include fails (no path between the layers)"
make_tree; layers "low:" "mid: low" "side: low" "top: mid side"
mkdir -p "$work/tree/side"; printf '#include "mid/b.hpp"\n' > "$work/tree/side/s.cpp"
folders=(low mid side top)
expect 1 "side/s.cpp:1 -> mid/b.hpp: layer side may not include layer mid"
folders=(low mid top)

case_name="a sub-layer order inside a folder is enforced"
make_tree; layers "low:" "mid: low" "top: mid" "top/sub: top"
printf '#include "top/sub/c.hpp"\n' > "$work/tree/top/t.cpp"
expect 1 "top/t.cpp:1 -> top/sub/c.hpp: layer top may not include layer top/sub"

case_name="an allow-listed violation passes"
make_tree; layers "${base_layers[@]}" "allow low/a.hpp -> top/sub/c.hpp  # pending: the fix"
printf '#pragma once\n#include "top/sub/c.hpp"\n' > "$work/tree/low/a.hpp"
expect 0 "1 on the allow-list"

case_name="a stale allow-list entry fails (the list can only shrink)"
make_tree; layers "${base_layers[@]}" "allow low/a.hpp -> top/sub/c.hpp  # pending: the fix"
expect 1 "allow low/a.hpp -> top/sub/c.hpp matches no violating include any more: remove it"

case_name="an allow-list entry without its pending fix fails"
make_tree; layers "${base_layers[@]}" "allow low/a.hpp -> top/sub/c.hpp"
printf '#pragma once\n#include "top/sub/c.hpp"\n' > "$work/tree/low/a.hpp"
expect 1 "say which fix removes it"

case_name="a file in an undeclared folder fails"
make_tree; layers "low:" "mid: low"
expect 1 "top/sub/c.cpp: belongs to no layer"

case_name="an include of an undeclared folder fails"
make_tree; layers "low:" "mid: low" "top/sub: mid"
printf '#include "top/other/x.hpp"\n' >> "$work/tree/top/sub/c.cpp"
expect 1 "top/sub/c.cpp:4 -> top/other/x.hpp: the header belongs to no layer"

case_name="two layers that may include each other fail"
make_tree; layers "low: top" "mid: low" "top: mid"
expect 1 "may include each other (a cycle)"

case_name="a misspelt layer name fails"
make_tree; layers "low:" "mid: lwo" "top: mid"
expect 1 "mid lists \"lwo\", which is no layer nor a folder of layers"

if [ "$failures" -gt 0 ]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
