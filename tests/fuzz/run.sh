#!/bin/sh
# Builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined)
# and runs each for a bounded time.  Usage: tests/fuzz/run.sh [SECONDS]
# (default 60 per harness; CI runs a short smoke run).  Harnesses: runfile
# (run files), options (argv parser), plot (plot on any CSV), main (every
# subcommand from main() on), sysfile (YAML system files, issue 15),
# checkpoint (--resume files, forged past their checksum too), study (sweep
# study files and the result files a rerun reads back).  Inputs that crashed
# once are kept in tests/fuzz/regressions/ and replayed first.
set -eu
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$top/build-fuzz}
mkdir -p "$out"
CC=${FUZZ_CC:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "fuzz: $CC not found (apt-get install clang libclang-rt-14-dev)"; exit 77
fi
flags="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
inc="-I$top/include -I$top/src -I$top/src/cli -I$top $(pkg-config --cflags inih)"
# system files (issue 15): the YAML reader when libyaml is installed (else
# the reader refuses every file and the sysfile harness checks just that)
yaml_libs=""
if [ -f /usr/include/yaml.h ]; then inc="$inc -DLV_HAVE_YAML"; yaml_libs="-lyaml"; fi
# the library once (objects reused by every harness), then each harness with
# the program files it drives
mkdir -p "$out/obj"
objs=""
for src in $(find "$top/src" -name '*.c' ! -path '*/cli/*' ! -path '*/fuzz/*') "$top"/models/*.c; do
  o="$out/obj/$(echo "${src#$top/}" | tr / _).o"
  $CC $flags -c $inc -I/usr/include/suitesparse "$src" -o "$o"
  objs="$objs $o"
done
cli="$top/src/cli/args.c $top/src/cli/common.c $top/src/cli/runfile.c $top/src/cli/plot.c $top/src/cli/meta.c $top/src/cli/rows.c $top/src/cli/json.c $top/src/cli/plugin.c $top/src/cli/theory.c $top/src/cli/reference.c"
# main.c dispatches to the sweep (issue 21; sweep_mpi.c without MPI: one rank)
cli="$cli $top/src/cli/sweep.c $top/src/cli/sweep_out.c $top/src/cli/sweep_mpi.c $top/src/cli/sweep_pool.c $top/src/cli/sweep_plot.c"
# ... and to livens list's table (issue 15)
cli="$cli $top/src/cli/listtable.c"
for h in runfile options plot main sysfile checkpoint study; do
  extra=$cli
  # main.c's main() becomes livens_main() for the whole-program harnesses
  case $h in main | study)
    [ -f "$out/obj/cli_main.o" ] && [ $h = study ] ||
      $CC $flags -c $inc -Dmain=livens_main "$top/src/cli/main.c" -o "$out/obj/cli_main.o"
    extra="$cli $out/obj/cli_main.o" ;;
  esac
  $CC $flags $inc "$top/tests/fuzz/fuzz_$h.c" $extra -o "$out/fuzz_$h" $objs \
    $(pkg-config --libs inih) -lumfpack -lklu -lamd -lopenblas -lm -ldl $yaml_libs
  corpus="$out/corpus_$h"
  mkdir -p "$corpus"
  cp "$top"/tests/fuzz/seeds_$h/* "$corpus"/ 2>/dev/null || true
  # replay inputs that crashed once (any file there, hidden ones included)
  past=$(find "$top/tests/fuzz/regressions/$h" -type f 2>/dev/null || true)
  if [ -n "$past" ] && ! "$out/fuzz_$h" -close_fd_mask=3 $past >"$out/replay_$h.log" 2>&1; then
    tail -30 "$out/replay_$h.log"; echo "fuzz: a kept regression input crashes $h again"; exit 1
  fi
  echo "fuzz: $h for $secs s"
  "$out/fuzz_$h" -close_fd_mask=3 -max_total_time="$secs" -max_len=4096 -artifact_prefix="$out/crash_$h-" "$corpus" 2>"$out/fuzz_$h.log" ||
    { grep -m1 'INFO: Seed:' "$out/fuzz_$h.log" || true
      # the report from its first line on (a sanitizer's ERROR or runtime
      # error; libFuzzer's deadly signal, timeout, out-of-memory or exit,
      # which it prints as ==PID== ERROR: libFuzzer: ...), else the log's end
      awk 'f || /==[0-9]+== ?ERROR|runtime error/ { f = 1; print }' "$out/fuzz_$h.log" | head -120 | grep . ||
        tail -40 "$out/fuzz_$h.log"
      # the input itself, so a crash seen only in CI's log can be replayed
      # (base64 -d > x; fuzz_$h "$PWD/x") and kept in tests/fuzz/regressions/$h
      for c in "$out/crash_$h-"*; do [ -f "$c" ] && { echo "fuzz: input $c (base64):"; base64 "$c" | head -c 16384; }; done
      echo "fuzz: $h found a crash (input in $out)"; exit 1; }
  grep -E '^#[0-9]+.*DONE' "$out/fuzz_$h.log" | tail -1
done
