#!/bin/sh
# Set-up of the livens-vs-IDA benchmark (benchmarks/bench_ida.c), kept out of
# the main build so that livens itself never depends on SUNDIALS:
#   1. installs Debian's libsundials-dev (IDA, serial N_Vector, sparse
#      SUNMatrix, KLU SUNLinearSolver) if it is missing;
#   2. builds livens in build/ if that has not been done (./setup.sh does the
#      same; the tests are not run here);
#   3. compiles build/benchmarks/bench_ida against build/.libs/liblivens and
#      SUNDIALS (pkg-config has no .pc files for SUNDIALS on Debian, hence the
#      plain -l flags);
#   4. with "run" (the default), runs it in build/benchmarks, where the CSV
#      files land; extra arguments go to bench_ida (e.g. --quick).
# Usage: benchmarks/setup_ida.sh [build|run] [bench_ida options...]
set -eu
mode=${1:-run}
case "$mode" in build | run) shift 2>/dev/null || true ;; -*) mode=run ;; *) echo "usage: $0 [build|run] [options]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

if ! dpkg -s libsundials-dev >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup_ida: installing libsundials-dev"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libsundials-dev >/dev/null
fi
ver=$(dpkg-query -W -f='${Version}' libsundials-dev)
echo "setup_ida: SUNDIALS $ver"

# livens itself (the same steps as ./setup.sh, without the tests)
if [ ! -f build/.libs/liblivens.so ] && [ ! -f build/.libs/liblivens.a ]; then
  [ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] || autoreconf -fi >/dev/null
  mkdir -p build
  (cd build && { [ -f Makefile ] || ../configure -q; } && make -s -j"$jobs" >/dev/null)
else
  (cd build && make -s -j"$jobs" >/dev/null)
fi

mkdir -p build/benchmarks
suitesparse=""
[ -d /usr/include/suitesparse ] && suitesparse="-I/usr/include/suitesparse"
cc=${CC:-cc}
$cc -O2 -std=c11 -Wall -Wextra -Wno-unused-parameter -I"$top/include" $suitesparse \
  benchmarks/bench_ida.c -o build/benchmarks/bench_ida \
  -L"$top/build/.libs" -Wl,-rpath,"$top/build/.libs" -llivens \
  -lsundials_ida -lsundials_nvecserial -lsundials_sunmatrixsparse -lsundials_sunlinsolklu -lklu -lm
echo "setup_ida: built build/benchmarks/bench_ida"

if [ "$mode" = run ]; then
  cd build/benchmarks
  exec ./bench_ida "$@"
fi
