#!/bin/sh
# The API reference (issue 17): every public declaration in include/livens/*.h
# (whatever headers exist) is documented, and every LV_API function has a
# page in the generated reference.  Runs Doxygen with the project's
# configuration (doc/Doxyfile, written by configure) into a temporary
# directory; fails on any "is not documented" warning (printed) and on an
# LV_API function with neither a man3 page nor an entry in the HTML index of
# functions (e.g. a header without its @file comment, whose members Doxygen
# then leaves out).  Skipped (77) without doxygen.
set -eu
srcdir=${srcdir:-.}
builddir=$(pwd)
DOXYGEN=${DOXYGEN:-doxygen}
if ! command -v "$DOXYGEN" >/dev/null 2>&1; then
  echo "test_apidoc: doxygen not found (apt-get install doxygen): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
inc=$(cd "$srcdir/include/livens" && pwd)

# the project's configuration, with the output and the warnings redirected
# and the input pinned to this source tree's headers
if [ -f "$builddir/doc/Doxyfile" ]; then
  cat "$builddir/doc/Doxyfile" >"$tmp/Doxyfile"
else
  # run outside a configured tree: the settings that matter for the count
  cat >"$tmp/Doxyfile" <<EOC
OPTIMIZE_OUTPUT_FOR_C = YES
EXTRACT_ALL = NO
EXTRACT_STATIC = YES
WARN_IF_UNDOCUMENTED = YES
ENABLE_PREPROCESSING = YES
MACRO_EXPANSION = YES
EXPAND_ONLY_PREDEF = YES
PREDEFINED = LV_API= "LV_DEPRECATED(x)="
GENERATE_HTML = YES
GENERATE_LATEX = NO
GENERATE_MAN = YES
MAN_EXTENSION = .3
MAN_LINKS = YES
EOC
fi
cat >>"$tmp/Doxyfile" <<EOC
INPUT = $inc
FILE_PATTERNS = *.h
OUTPUT_DIRECTORY = $tmp/out
HTML_OUTPUT = html
MAN_OUTPUT = man
WARN_LOGFILE = $tmp/warnings.log
QUIET = YES
HAVE_DOT = NO
EOC
if ! "$DOXYGEN" "$tmp/Doxyfile" >"$tmp/doxygen.out" 2>&1; then
  echo "test_apidoc: doxygen failed:"
  cat "$tmp/doxygen.out"
  exit 1
fi
fail=0

# 1. no undocumented public item
grep 'is not documented' "$tmp/warnings.log" | sed "s|$inc/|include/livens/|" >"$tmp/undoc" || true
nu=$(wc -l <"$tmp/undoc")
if [ "$nu" -ne 0 ]; then
  echo "test_apidoc: $nu undocumented public items (add a /** ... */ comment):"
  cat "$tmp/undoc"
  fail=1
else
  echo "test_apidoc: 0 undocumented items in $(ls "$inc"/*.h | wc -l) headers"
fi
other=$(grep -v 'is not documented' "$tmp/warnings.log" | grep -c 'warning' || true)
if [ "$other" -ne 0 ]; then
  echo "test_apidoc: note: $other other Doxygen warnings (not counted):"
  grep -v 'is not documented' "$tmp/warnings.log" | sed "s|$inc/|include/livens/|" | head -20
fi

# 2. every LV_API function is in the reference.  The names come from each
# header preprocessed with LV_API turned into a marker (comments dropped by
# the preprocessor): the identifier before the first '(' after the marker.
: >"$tmp/api"
for h in "$inc"/*.h; do
  ${CC:-cc} -E -P -DLV_API=__lv_api_mark__ '-DLV_DEPRECATED(m)=' -I"$inc/.." "$h" 2>"$tmp/cpp.err" |
    tr '\n' ' ' | grep -o '__lv_api_mark__[^;{(]*(' |
    sed 's/[[:space:]]*($//; s/.*[^A-Za-z0-9_]//' >>"$tmp/api" || {
    echo "test_apidoc: cannot preprocess $h:"; cat "$tmp/cpp.err"; fail=1; }
done
sort -u "$tmp/api" -o "$tmp/api"
na=$(wc -l <"$tmp/api")
if [ "$na" -lt 100 ]; then
  echo "test_apidoc: only $na LV_API functions found in include/livens: the parser is broken"
  fail=1
fi
cat "$tmp"/out/html/globals_func*.html >"$tmp/index.html" 2>/dev/null || : >"$tmp/index.html"
missing=""
while read -r f; do
  [ -f "$tmp/out/man/man3/$f.3" ] && continue
  grep -q ">$f()<" "$tmp/index.html" && continue
  missing="$missing $f"
done <"$tmp/api"
if [ -n "$missing" ]; then
  echo "test_apidoc: LV_API functions missing from the generated reference (is their header's @file comment there?):"
  for f in $missing; do echo "  $f"; done
  fail=1
else
  echo "test_apidoc: all $na LV_API functions have a man3 page"
fi
exit $fail
