#!/bin/sh
# The library boundary (issue 19): liblivens.so exports exactly the functions
# declared LV_API in the installed headers (include/livens/*.h).  Fails on an
# exported symbol that is not a declared lv_ function (an internal function
# leaking, or a public one nobody declared) and on a declared function that
# is not exported (a new public function without LV_API).
set -eu
builddir=$(pwd)
so="$builddir/.libs/liblivens.so"
if [ ! -f "$so" ]; then
  echo "test_symbols: no shared library (--disable-shared build): skipped"
  exit 77
fi
command -v nm >/dev/null 2>&1 || { echo "test_symbols: nm not found: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# exported: every defined dynamic symbol (functions and data)
nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sort -u >"$tmp/exported"

# declared: the functions the public headers declare, read from the
# preprocessed umbrella header: text inside braces (struct bodies, inline
# function bodies) is dropped, the rest split into declarations at ';', and a
# declaration that is neither a typedef nor static names its function as the
# first lv_ identifier followed by '('.
printf '#include "livens/livens.h"\n' >"$tmp/all.c"
${CC:-cc} -E -P -I"$srcdir/include" "$tmp/all.c" >"$tmp/all.i"
awk '
  { text = text " " $0 }
  END {
    depth = 0; flat = ""
    n = length(text)
    for (i = 1; i <= n; i++) {
      c = substr(text, i, 1)
      if (c == "{") { if (depth == 0) flat = flat ";"; depth++; continue }
      if (c == "}") { depth--; continue }
      if (depth == 0) flat = flat c
    }
    k = split(flat, decl, ";")
    for (j = 1; j <= k; j++) {
      d = decl[j]
      if (d ~ /(^|[^A-Za-z0-9_])(typedef|static)[^A-Za-z0-9_]/) continue
      if (match(d, /lv_[A-Za-z0-9_]+[ \t]*\(/)) {
        name = substr(d, RSTART, RLENGTH)
        sub(/[ \t]*\($/, "", name)
        print name
      }
    }
  }' "$tmp/all.i" | sort -u >"$tmp/declared"

fail=0
nd=$(wc -l <"$tmp/declared")
ne=$(wc -l <"$tmp/exported")
if [ "$nd" -lt 100 ]; then
  echo "test_symbols: only $nd declarations found in include/livens: the header parser is broken"
  fail=1
fi
leaked=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$leaked" ]; then
  echo "test_symbols: liblivens.so exports symbols no installed header declares (internal ones must not be LV_API):"
  echo "$leaked" | sed 's/^/  /'
  fail=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
  echo "test_symbols: declared in include/livens but not exported (mark the declaration LV_API, see lv_export.h):"
  echo "$missing" | sed 's/^/  /'
  fail=1
fi
echo "test_symbols: $ne exported, $nd declared"
exit $fail
