#!/bin/sh
# Accesses to struct lv_model's fields outside src/model/ (issue 19's measure
# "struct lv_model field accesses outside src/model/: 63+ -> 0").
#   benchmarks/count_model_access.sh [BUILDDIR]   (run from the source tree)
# Counted by the compiler, not by grep (nq, nv, nc are also fields of other
# structs): the tree is copied, the definition `struct lv_model { ... };` is
# removed from every header that has it, and every C file outside src/model/
# is parsed with clang -fsyntax-only; each use of a field (or sizeof) of the
# then incomplete type is one "incomplete ... type" error naming lv_model.
# Prints one line per file with accesses and the total.  BUILDDIR (default
# ./build) supplies config.h.  Files that fail to parse for another reason are
# named on stderr (their count would be a lower bound).
set -eu
src=$(pwd)
build=${1:-$src/build}
[ -f "$src/src/lv_internal.h" ] || { echo "run from the livens source tree" >&2; exit 2; }
[ -f "$build/config.h" ] || { echo "no $build/config.h: configure first" >&2; exit 2; }
command -v clang >/dev/null 2>&1 || { echo "clang not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for d in include src models tests python benchmarks examples; do
  [ -d "$src/$d" ] && cp -R "$src/$d" "$tmp/$d"
done
cp "$build/config.h" "$tmp/config.h"
# drop the definition (from "struct lv_model {" to the first line "};")
find "$tmp" -name '*.h' | while read -r h; do
  if grep -q '^struct lv_model {' "$h"; then
    awk '/^struct lv_model \{/ { skip = 1 } !skip { print } skip && /^\};/ { skip = 0 }' "$h" >"$h.new"
    mv "$h.new" "$h"
  fi
done
py=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || echo /usr/include)
# the flags configure found (SuiteSparse, MPI), else the Debian defaults
mkvar() { [ -f "$build/Makefile" ] && sed -n "s/^$1 = //p" "$build/Makefile" | head -n 1; }
ss=$(mkvar UMFPACK_CFLAGS)
[ -n "$ss" ] || ss=-I/usr/include/suitesparse
mpi="$(mkvar MPI_CPPFLAGS) $(mkvar MPI_CFLAGS)"
[ -n "${mpi# }" ] || mpi=$(mpicc --showme:compile 2>/dev/null || true)
total=0
cd "$tmp"
for f in $(find src models tests python benchmarks examples -name '*.c' ! -path 'src/model/*' | sort); do
  out=$(clang -fsyntax-only -ferror-limit=0 -std=c11 -DHAVE_CONFIG_H -I. -Iinclude -Isrc -Ipython \
    -Isrc/cli $ss -I"$py" $mpi -w "$f" 2>&1 || true)
  n=$(printf '%s\n' "$out" | grep -c "error: .*incomplete.*lv_model" || true)
  other=$(printf '%s\n' "$out" | grep "error:" | grep -vc "incomplete.*lv_model" || true)
  [ "$other" -gt 0 ] && echo "note: $f: $other other errors (count is a lower bound)" >&2
  if [ "$n" -gt 0 ]; then
    printf '%5d %s\n' "$n" "$f"
    total=$((total + n))
  fi
done
echo "total: $total accesses to struct lv_model outside src/model/"
