#!/bin/sh
# Installs livens into a staging directory inside the build tree and builds
# the README's example against it through pkg-config, as a user would.
set -eu
builddir=$(pwd)
stage="$builddir/_inst"
# test_install.sh and test_prefix.sh both run make install in this build
# tree; under make -j check they would race (doxygen's doc/api, the
# installed files), so they take turns
if command -v flock >/dev/null 2>&1; then exec 9>"$builddir/.install-test.lock" && flock 9; fi
rm -rf "$stage"
make -s install DESTDIR="$stage" >/dev/null
pcdir=$(dirname "$(find "$stage" -name livens.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_SYSROOT_DIR="$stage"
cflags=$(pkg-config --cflags livens)
so=$(find "$stage" -name 'liblivens.so' | head -n 1)
if [ -n "$so" ]; then libs=$(pkg-config --libs livens); else libs=$(pkg-config --static --libs livens); fi
# CFLAGS/LDFLAGS are the build's own (e.g. the sanitizer flags of build-san).
libdir=$(dirname "${so:-$stage/x}")
for ex in pendulum own_model compare; do
  ${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$srcdir/examples/$ex.c" -o "$stage/$ex" ${LDFLAGS:-} $libs -lm
  out=$(LD_LIBRARY_PATH="$libdir" "$stage/$ex")
  echo "$out"
done
# Each example prints its summary; check the figures are there and sane.
LD_LIBRARY_PATH="$libdir" "$stage/pendulum" | grep -q '^max rel. energy error'
LD_LIBRARY_PATH="$libdir" "$stage/own_model" | grep -q '^paraboloid: max rel. energy error'
LD_LIBRARY_PATH="$libdir" "$stage/compare" | grep -q '^rattle '
test -n "$(find "$stage" -path '*/include/livens/livens.h')"
# the program and its man page are installed when configure found inih
if [ -x "$builddir/livens" ]; then
  test -n "$(find "$stage" -path '*/man1/livens.1')"
  test -n "$(find "$stage" -path '*/bin/livens')"
fi
test -n "$(find "$stage" -name guide.md)"
# the Python package (issue 16), when built: importable from the staged
# site-packages, and it runs
pymod=$(find "$stage" -name '_livens.so' | head -n 1)
if [ -n "${LIVENS_PYTHON:-}" ] && [ -n "$pymod" ]; then
  test -n "$(find "$stage" -path '*/livens/__init__.py')"
  PYTHONPATH=$(dirname "$(dirname "$pymod")") LD_LIBRARY_PATH="$libdir" PYTHONDONTWRITEBYTECODE=1 "$LIVENS_PYTHON" -c \
    'import livens; r = livens.simulate("pendulum3d", "rattle", 0.01, 1.0); assert r.status == "ok" and len(r) == 101; print(r.table())'
fi
# the model plugin of examples/plugin_model.c, built as doc/guide.md says,
# loaded by the installed program (issue 17; the program needs inih)
bin=$(find "$stage" -path '*/bin/livens' | head -n 1)
# (a shared liblivens only: a static, sanitized build cannot link a module)
if [ -n "$bin" ] && [ -n "$so" ]; then
  ${CC:-cc} -std=c11 ${CFLAGS:-} -shared -fPIC $cflags "$srcdir/examples/plugin_model.c" -o "$stage/libparaboloid.so" \
    ${LDFLAGS:-} $libs
  LD_LIBRARY_PATH="$libdir" OPENBLAS_NUM_THREADS=1 "$bin" run paraboloid --model-lib "$stage/libparaboloid.so" \
    --scheme em --t-end 1 | grep -q '^em .* ok$'
fi
rm -rf "$stage"
