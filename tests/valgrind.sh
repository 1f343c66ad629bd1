#!/bin/sh
# make check's unit suites under valgrind memcheck (not part of CI's default
# path: over an hour on 2 cores -- 90 minutes on 2026-11-29 with a benchmark
# on the other core).  Builds statically in build-vg/ so
# valgrind sees the test programs themselves, not libtool wrappers, and runs
# Check in no-fork mode so every test is inside the traced process.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "valgrind not installed (apt-get install valgrind)"; exit 77; }
mkdir -p "$top/build-vg"
cd "$top/build-vg"
[ -f Makefile ] || ../configure -q --disable-shared CFLAGS="-O1 -g"
make -s -j"$(nproc)" >/dev/null
# every check program (make check with no tests to run builds them all,
# including those added with check_PROGRAMS +=)
make -s -j"$(nproc)" check TESTS= >/dev/null
status=0
for t in tests/check_*; do
  case "$t" in *.o | *.log | *.trs) continue ;; esac
  [ -x "$t" ] || continue
  if CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
      "$t" >"$t.vg.log" 2>&1; then
    echo "valgrind clean: $t"
  else
    echo "valgrind FAILED: $t (see build-vg/$t.vg.log)"
    status=1
  fi
done
exit $status
