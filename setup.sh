#!/bin/sh
# One command from a fresh Debian machine to a result:
#   ./setup.sh demo   install dependencies, build, run the default demo
#   ./setup.sh test   install dependencies, build, run the whole test suite
#                     (make check, then the unit suites again under ASan+UBSan)
set -eu
mode=${1:-demo}
case "$mode" in demo | test) ;; *) echo "usage: ./setup.sh demo|test" >&2; exit 2 ;; esac
cd "$(dirname "$0")"
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# --- dependencies (Debian packages) -----------------------------------------
pkgs="build-essential autoconf automake libtool pkg-config libsuitesparse-dev libopenblas-dev check libinih-dev gnuplot-nox libyaml-dev libdouble-conversion-dev"
# the test path also builds the libFuzzer harnesses
[ "$mode" = test ] && pkgs="$pkgs clang libclang-rt-14-dev"
# Open MPI for the sweep test under mpirun (issue 21)
[ "$mode" = test ] && pkgs="$pkgs libopenmpi-dev openmpi-bin"
# and the Python package with its pytest suite (issue 16)
[ "$mode" = test ] && pkgs="$pkgs python3-dev python3-numpy python3-cffi python3-pytest python3-matplotlib"
# and Doxygen for the API reference test, tests/test_apidoc.sh (issue 17)
[ "$mode" = test ] && pkgs="$pkgs doxygen"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# --- build (out of tree, so the sanitizer build can share the sources) ------
mkdir -p build
# autoreconf's "installing 'build-aux/...'" chatter goes to a log, shown only
# when it fails (issue 17: the demo's output is the demo's)
if ! { [ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ]; }; then
  autoreconf -fi >build/autoreconf.log 2>&1 || { cat build/autoreconf.log >&2; exit 1; }
fi
cd build
[ -f Makefile ] || ../configure -q
make -s -j"$jobs" >/dev/null

if [ "$mode" = demo ]; then
  # the demo prints the absolute paths of the plots it writes (to build/livens-demo/)
  exec ./livens demo
fi

# --- tests ------------------------------------------------------------------
if ! make -s -j"$jobs" check; then
  cat test-suite.log
  exit 1
fi

echo "setup: unit suites again under AddressSanitizer + UndefinedBehaviorSanitizer"
mkdir -p "$top/build-san"
cd "$top/build-san"
[ -f Makefile ] || ../configure -q --disable-shared \
  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
  LDFLAGS="-fsanitize=address,undefined"
make -s -j"$jobs" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the suites' timeouts are ten times their plain run time; sanitized code is
# slower (tests/testutil.h, tu_tcase)
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4}
if ! make -s -j"$jobs" check; then
  cat test-suite.log
  exit 1
fi
echo "setup: the threading test under ThreadSanitizer (one model, integrators in two threads)"
mkdir -p "$top/build-tsan"
cd "$top/build-tsan"
[ -f Makefile ] || ../configure -q --disable-shared CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread"
make -s -j"$jobs" tests/check_threads >/dev/null
OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1 ./tests/check_threads
echo "setup: fuzz smoke run (tests/fuzz/run.sh; longer runs: tests/fuzz/run.sh 600)"
set +e
FUZZ_OUT="$top/build-fuzz" "$top/tests/fuzz/run.sh" 10
fz=$?
set -e
if [ "$fz" -eq 77 ]; then echo "setup: fuzzing skipped (no clang)"; elif [ "$fz" -ne 0 ]; then exit 1; fi
echo "setup: all tests passed (plain and sanitized builds)"
# Check's own summary lines, and their total as a plain closing line (with
# the pytest suite of the Python package, issue 16, in the same form).
{
  grep -h '^[0-9]*%: Checks:' "$top"/build/tests/*.log "$top"/build-san/tests/*.log
  if [ -f "$top/build/tests/test_python.sh.log" ]; then
    sed -n 's/^\([0-9][0-9]*\) passed.* in .*/100%: Checks: \1, Failures: 0, Errors: 0 (pytest, tests\/python)/p' \
      "$top/build/tests/test_python.sh.log"
  fi
} |
  awk -F'[:,]' '{ n += $3; f += $5 + $7; print } END { printf "%d passed, %d failed\n", n - f, f }'
