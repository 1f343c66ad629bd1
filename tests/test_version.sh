#!/bin/sh
# The version in one place (issue 19): `livens --version`, configure's
# PACKAGE_VERSION (read from include/livens/lv_version.h), livens.pc and the
# shared library's file name (libtool -version-number) all say the same.
# (lv_version() against the header: check_core.)
set -eu
builddir=$(pwd)
fail=0
ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$builddir/config.h")
hdr=$(awk '/^#define LIVENS_VERSION_(MAJOR|MINOR|PATCH) / { printf "%s%s", s, $3; s = "." }' "$srcdir/include/livens/lv_version.h")
[ -n "$ver" ] || { echo "test_version: no PACKAGE_VERSION in config.h"; exit 1; }
if [ "$ver" != "$hdr" ]; then
  echo "test_version: configure says $ver, include/livens/lv_version.h says $hdr (re-run configure)"
  fail=1
fi
if [ -x "$builddir/livens" ]; then
  out=$("$builddir/livens" --version)
  if [ "$out" != "livens $ver" ]; then
    echo "test_version: livens --version printed '$out', expected 'livens $ver'"
    fail=1
  fi
else
  echo "test_version: no livens program (configure found no inih): --version not checked"
fi
pcv=$(sed -n 's/^Version: //p' "$builddir/livens.pc")
if [ "$pcv" != "$ver" ]; then
  echo "test_version: livens.pc says '$pcv', expected '$ver'"
  fail=1
fi
if [ -f "$builddir/.libs/liblivens.so" ]; then
  if [ ! -f "$builddir/.libs/liblivens.so.$ver" ]; then
    echo "test_version: no .libs/liblivens.so.$ver (the libtool version does not follow the package version):"
    ls "$builddir/.libs" | grep '^liblivens\.so' | sed 's/^/  /'
    fail=1
  fi
fi
[ $fail -eq 0 ] && echo "test_version: $ver everywhere"
exit $fail
