#!/bin/sh
# Builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined)
# and runs each for a bounded time.  Usage: tests/fuzz/run.sh [SECONDS]
# (default 60 per harness; CI runs a short smoke run).  Inputs that crashed
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
lib="$top/src/core/kv.c $top/src/core/status.c $top/src/core/util.c"
for h in runfile options; do
  extra=""
  [ $h = runfile ] && extra="$top/src/cli/runfile.c $top/src/cli/common.c $top/src/cli/args.c"
  [ $h = options ] && extra="$top/src/cli/args.c $top/src/cli/common.c $top/src/cli/runfile.c"
  # the CLI files reference the rest of the library: link it whole
  $CC $flags $inc "$top/tests/fuzz/fuzz_$h.c" $extra -o "$out/fuzz_$h" \
    $(find "$top/src" -name '*.c' ! -path '*/cli/*' ! -path '*/fuzz/*') "$top"/models/*.c \
    $(pkg-config --libs inih) -I/usr/include/suitesparse -lumfpack -lklu -lamd -lopenblas -lm
  corpus="$out/corpus_$h"
  mkdir -p "$corpus"
  cp "$top"/tests/fuzz/seeds_$h/* "$corpus"/ 2>/dev/null || true
  # replay inputs that crashed once (any file there, hidden ones included)
  past=$(find "$top/tests/fuzz/regressions/$h" -type f 2>/dev/null || true)
  if [ -n "$past" ] && ! "$out/fuzz_$h" $past >"$out/replay_$h.log" 2>&1; then
    tail -30 "$out/replay_$h.log"; echo "fuzz: a kept regression input crashes $h again"; exit 1
  fi
  echo "fuzz: $h for $secs s"
  "$out/fuzz_$h" -max_total_time="$secs" -max_len=4096 -artifact_prefix="$out/crash_$h-" "$corpus" 2>"$out/fuzz_$h.log" ||
    { tail -40 "$out/fuzz_$h.log"; echo "fuzz: $h found a crash (input in $out)"; exit 1; }
  grep -E '^#[0-9]+.*DONE' "$out/fuzz_$h.log" | tail -1
done
