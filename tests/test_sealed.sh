#!/bin/sh
# Sealed model layer (issue 19): struct lv_model is defined only in
# src/model/model_impl.h, that header is included only by the model layer,
# and no C file outside src/model/ touches a field (counted by the compiler,
# benchmarks/count_model_access.sh).  TRANSITIONAL lists files allowed to
# read fields while a rewrite is under way (none now).
set -eu
TRANSITIONAL=""
TRANSITIONAL_HEADERS=""
builddir=$(pwd)
cd "${srcdir:-.}"
fail=0

# 1. the definition lives in model_impl.h alone
defs=$(grep -rl '^struct lv_model {' include src models tests python 2>/dev/null | sort || true)
if [ "$defs" != "src/model/model_impl.h" ]; then
  echo "FAIL: struct lv_model is defined in: $defs (expected src/model/model_impl.h only)"
  fail=1
fi

# 2. only the model layer (and the transitional headers) include it
for f in $(grep -rl 'model_impl\.h' include src models tests python benchmarks examples 2>/dev/null | sort); do
  case $f in
    src/model/*.c | src/model/model_impl.h) ;;
    *)
      ok=0
      for t in $TRANSITIONAL_HEADERS; do [ "$f" = "$t" ] && ok=1; done
      # a mention in a comment is not an include
      grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"model/model_impl\.h"' "$f" || ok=1
      if [ $ok = 0 ]; then
        echo "FAIL: $f includes model/model_impl.h (private to src/model/)"
        fail=1
      fi
      ;;
  esac
done

# 3. no field access outside src/model/, by the compiler
if ! command -v clang >/dev/null 2>&1; then
  echo "test_sealed: clang not found: field-access count skipped"
  exit $fail
fi
out=$(sh benchmarks/count_model_access.sh "$builddir" 2>/dev/null)
echo "$out"
echo "$out" | grep -q '^total:' || { echo "FAIL: count_model_access.sh did not finish"; exit 1; }
for f in $(echo "$out" | awk '$1 ~ /^[0-9]+$/ { print $2 }'); do
  ok=0
  for t in $TRANSITIONAL; do [ "$f" = "$t" ] && ok=1; done
  if [ $ok = 0 ]; then
    echo "FAIL: $f reads struct lv_model's fields: use the accessors (livens/lv_model.h, lv_internal.h)"
    fail=1
  fi
done
exit $fail
