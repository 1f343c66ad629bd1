#!/bin/sh
# The Python package (issue 16): its pytest suite (tests/python) against the
# build tree.  Skipped (77) when configure left the package out.
set -u
if [ -z "${LIVENS_PYTHON:-}" ]; then
  echo "skip: the Python package is not built (configure found no python3 with numpy and cffi, or --disable-python)"
  exit 77
fi
so=python/livens/.libs/_livens.so
if [ ! -f "$so" ]; then
  echo "skip: no shared extension module $so (a --disable-shared build)"
  exit 77
fi
if ! "$LIVENS_PYTHON" -c 'import pytest' 2>/dev/null; then
  echo "skip: pytest is not installed for $LIVENS_PYTHON (apt-get install python3-pytest)"
  exit 77
fi
src=$(cd "${srcdir:-.}" && pwd)
build=$(pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# the package as it installs: the sources next to the built module
mkdir "$stage/livens"
for f in "$src"/python/livens/*.py; do ln -s "$f" "$stage/livens/"; done
ln -s "$build/$so" "$stage/livens/_livens.so"
PYTHONPATH="$stage" LIVENS_PROGRAM="$build/livens" MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1 \
  OPENBLAS_NUM_THREADS=1 "$LIVENS_PYTHON" -m pytest -q -rs -p no:cacheprovider --rootdir="$stage" \
  "$src/tests/python"
