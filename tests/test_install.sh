#!/bin/sh
# Installs livens into a staging directory inside the build tree and builds
# the README's example against it through pkg-config, as a user would.
set -eu
builddir=$(pwd)
stage="$builddir/_inst"
rm -rf "$stage"
make -s install DESTDIR="$stage" >/dev/null
pcdir=$(dirname "$(find "$stage" -name livens.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_SYSROOT_DIR="$stage"
cflags=$(pkg-config --cflags livens)
so=$(find "$stage" -name 'liblivens.so' | head -n 1)
if [ -n "$so" ]; then libs=$(pkg-config --libs livens); else libs=$(pkg-config --static --libs livens); fi
# CFLAGS/LDFLAGS are the build's own (e.g. the sanitizer flags of build-san).
${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$srcdir/examples/pendulum.c" -o "$stage/pendulum" ${LDFLAGS:-} $libs -lm
libdir=$(dirname "${so:-$stage/x}")
out=$(LD_LIBRARY_PATH="$libdir" "$stage/pendulum")
echo "$out"
# The example prints its summary; a run that conserves J3 and g is a pass.
echo "$out" | grep -q '^max rel. energy error'
test -n "$(find "$stage" -path '*/include/livens/livens.h')"
rm -rf "$stage"
