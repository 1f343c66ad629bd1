#!/bin/sh
# livens run --checkpoint / --resume (issue 17): a run of 2 x 5e4 steps
# with a resume in between ends in the same state as 1e5 steps straight,
# bit for bit (17 significant digits in the CSV); likewise for a multistep
# and a generalized-alpha run; a SIGTERM'd run resumes from its last
# checkpoint; refused checkpoints exit 2 with one sentence.
set -u
T="timeout -s KILL 120"
. "${srcdir:-.}/tests/cli_lib.sh"

# same_end NAME CSV1 CSV2: the last data rows are identical
same_end() {
  a=$(data "$2" | tail -1); b=$(data "$3" | tail -1)
  if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$1: final rows identical"
  else bad "$1: final rows differ: '$a' vs '$b'"; fi
}

# 1e5 steps straight vs 5e4 + resume + 5e4 (rattle on the pendulum)
args="pendulum3d --scheme rattle --step 0.001"
$T "$L" run $args --t-end 100 --output-dt 50 --out straight.csv >/dev/null 2>err.txt || bad "straight run: $(cat err.txt)"
$T "$L" run $args --t-end 50 --checkpoint ck.bin --checkpoint-every 10000 >/dev/null 2>err.txt ||
  bad "first half: $(cat err.txt)"
$T "$L" run $args --t-end 100 --resume ck.bin --output-dt 50 --out resumed.csv >out.txt 2>err.txt ||
  bad "resumed half: $(cat err.txt)"
grep -q '^steps 100000,' out.txt && ok "resumed run counts 100000 steps" || bad "step count: $(grep steps out.txt)"
same_end "rattle 2 x 5e4 vs 1e5" straight.csv resumed.csv

# schemes with a private history: BLieDF (past steps) and generalized-alpha (a)
for s in bliedf4 genalpha; do
  args="heavy-top --scheme $s --step 0.001"
  $T "$L" run $args --t-end 1 --output-dt 1 --out s-$s.csv >/dev/null 2>err.txt || bad "$s straight: $(cat err.txt)"
  $T "$L" run $args --t-end 0.5 --checkpoint ck-$s.bin >/dev/null 2>err.txt || bad "$s first half: $(cat err.txt)"
  $T "$L" run $args --t-end 1 --resume ck-$s.bin --output-dt 1 --out r-$s.csv >/dev/null 2>err.txt ||
    bad "$s resumed: $(cat err.txt)"
  same_end "$s 2 x 500 vs 1000" s-$s.csv r-$s.csv
  grep -q "^# resumed_from = ck-$s.bin" r-$s.csv && ok "$s: the resumed CSV names its checkpoint" || bad "$s: no resumed_from line"
done

# the sparse back-ends (their symbolic analysis is redone on resume; sparse
# chooses again, from the same pattern, the same back-end)
for ls in umfpack klu sparse; do
  for s in vi-a genalpha; do
    m=four-particle; [ "$s" = genalpha ] && m=heavy-top
    args="$m --scheme $s --step 0.001 --linsol $ls"
    $T "$L" run $args --t-end 0.4 --output-dt 1 --out s-$ls-$s.csv >/dev/null 2>err.txt || bad "$ls $s straight: $(cat err.txt)"
    $T "$L" run $args --t-end 0.2 --checkpoint ck-$ls-$s.bin >/dev/null 2>err.txt || bad "$ls $s first half: $(cat err.txt)"
    $T "$L" run $args --t-end 0.4 --resume ck-$ls-$s.bin --output-dt 1 --out r-$ls-$s.csv >/dev/null 2>err.txt ||
      bad "$ls $s resumed: $(cat err.txt)"
    same_end "$s with $ls, 2 x 200 vs 400" s-$ls-$s.csv r-$ls-$s.csv
  done
done

# a run stopped by SIGTERM leaves a checkpoint of its last step, which resumes
$T "$L" run pendulum3d --scheme rattle --step 0.0001 --t-end 100000 --checkpoint term.bin --checkpoint-every 1000 \
  >/dev/null 2>err.txt &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
$T "$L" run pendulum3d --scheme rattle --step 0.0001 --t-end 100000 --resume term.bin --t-end 1e-9 \
  >out.txt 2>err.txt; st=$?
[ "$st" -eq 0 ] && ok "a SIGTERM'd run's checkpoint resumes" || bad "resume after SIGTERM (status $st, $(cat err.txt))"

# written atomically: every checkpoint goes to a new temporary file that is
# renamed over the old one, never opened in place (strace shows the calls)
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
  rm -f at.bin
  $T strace -f -e trace=openat,rename,renameat,renameat2 -o tr.txt "$L" run pendulum3d --scheme rattle --step 0.01 \
    --t-end 0.05 --checkpoint at.bin --checkpoint-every 2 >/dev/null 2>&1
  nt=$(grep -c 'openat(.*"at\.bin\.[A-Za-z0-9]\{6\}", O_RDWR|O_CREAT|O_EXCL' tr.txt)
  nr=$(grep -c 'rename.*"at\.bin\.[A-Za-z0-9]\{6\}".*"at\.bin"' tr.txt)
  [ "$nt" -eq 3 ] && [ "$nr" -eq 3 ] && ! grep -q '"at\.bin", O_' tr.txt &&
    ok "checkpoints written atomically: 3 new temporary files, each renamed over at.bin, at.bin never opened for writing" ||
    bad "atomic checkpoint: $nt temporaries, $nr renames: $(grep at.bin tr.txt | head -4)"
else skip "no usable strace: the checkpoint's write-then-rename is not traced"; fi
# and a run killed (SIGKILL) while checkpointing every step leaves a
# checkpoint that resumes, every time
for k in 1 2 3; do
  rm -f kill.bin
  # the program itself in the background (not under $T: SIGKILL to timeout
  # would leave its child running), with an end it reaches by itself in
  # seconds should the kill miss
  "$L" run pendulum3d --scheme rattle --step 0.0001 --t-end 20 --checkpoint kill.bin --checkpoint-every 1 \
    >/dev/null 2>&1 &
  pid=$!
  i=0
  while [ "$i" -lt 100 ] && [ ! -s kill.bin ]; do sleep 0.05; i=$((i + 1)); done
  sleep 0.$k
  kill -KILL $pid
  wait $pid 2>/dev/null
  $T "$L" run pendulum3d --scheme rattle --step 0.0001 --resume kill.bin --t-end 1e-9 >out.txt 2>err.txt; st=$?
  [ "$st" -eq 0 ] && ok "SIGKILL during checkpoints every step ($k): the checkpoint resumes" || bad "checkpoint after SIGKILL ($k): status $st, $(cat err.txt)"
done

# refusals: one sentence, exit 2
expect_usage "resume with another model" run pendulum2d --scheme rattle --step 0.001 --resume ck.bin
expect_usage "resume with another scheme" run pendulum3d --scheme em --step 0.001 --resume ck.bin
expect_usage "resume with another step" run pendulum3d --scheme rattle --step 0.002 --resume ck.bin
head -c 100 ck.bin >trunc.bin
expect_usage "resume from a truncated file" run pendulum3d --scheme rattle --step 0.001 --resume trunc.bin
echo "t,q1" >notck.bin
expect_usage "resume from a CSV" run pendulum3d --scheme rattle --step 0.001 --resume notck.bin
expect_usage "--checkpoint on compare" compare pendulum3d --schemes rattle,em --checkpoint x.bin
expect_usage "--checkpoint-every 0" run pendulum3d --checkpoint x.bin --checkpoint-every 0
expect_usage "--checkpoint = --out" run pendulum3d --t-end 0.1 --checkpoint same.csv --out same.csv
$T "$L" run pendulum3d --t-end 0.1 --checkpoint no-such-dir/ck.bin >/dev/null 2>err.txt; st=$?
[ "$st" -eq 1 ] && grep -q 'checkpoint no-such-dir/ck.bin: No such file or directory' err.txt && ok "unwritable checkpoint: $(cat err.txt)" ||
  bad "unwritable checkpoint (status $st, $(cat err.txt))"

[ "$fails" -eq 0 ]
