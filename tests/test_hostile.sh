#!/bin/sh
# Hostile input is harmless: file names and CSV headers never reach gnuplot
# as code, no user-controlled length overflows a buffer, and run files are
# read exactly (no split long lines, no silent continuation, no duplicate
# keys, no empty or non-regular files, bounded size).  Each case checks the
# exit status and the message.
set -u
. "${srcdir:-.}/tests/cli_lib.sh"

# expect STATUS "pattern" "description" args...: exit status and a stderr line matching pattern
expect() {
  want=$1 pat=$2 d=$3; shift 3
  timeout 20 "$L" "$@" >out.txt 2>err.txt; st=$?
  if [ "$st" -eq "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" err.txt; }; then ok "$d: $(head -c 200 err.txt)"
  else bad "$d (status $st, want $want; stderr: $(head -c 300 err.txt))"; fi
}

"$L" run pendulum3d --scheme rattle --step 0.01 --t-end 0.1 --out good.csv >/dev/null 2>&1 || bad "run for good.csv"

# --- plot: injection through the file name and through CSV column names.
# LIVENS_PLOT_NO_EXEC is not set here: with gnuplot installed, the script
# really runs, so an injection would create the marker file.
if command -v gnuplot >/dev/null 2>&1; then
  name="x'; system('touch PWNED'); a='.csv"
  cp good.csv "$name"
  "$L" plot "$name" >out.txt 2>err.txt; st=$?
  if [ ! -e PWNED ] && [ "$st" -eq 0 ] && [ -s "x'; system('touch PWNED'); a='.png" ]; then ok "file name is not code"
  else bad "file name injection (status $st, PWNED: $([ -e PWNED ] && echo created || echo absent), $(cat err.txt))"; fi
  rm -f PWNED
  printf "h,err_q,a'.system('touch PWNED2').'\n0.1,1e-3,1e-2\n0.05,2.5e-4,5e-3\n" >conv.csv
  "$L" plot conv.csv >out.txt 2>err.txt; st=$?
  if [ ! -e PWNED2 ] && [ "$st" -eq 0 ] && [ -s conv.png ]; then ok "convergence column name is not code"
  else bad "column name injection (status $st, $(cat err.txt))"; fi
  # a pipe as a file name ('<cmd' is gnuplot's input pipe)
  cp conv.csv "<touch PWNED3"
  "$L" plot "<touch PWNED3" --png pipe.png >out.txt 2>err.txt; st=$?
  if [ ! -e PWNED3 ] && [ "$st" -eq 0 ] && [ -s pipe.png ]; then ok "'<cmd' file name is a file"
  else bad "pipe file name (status $st, $(cat err.txt))"; fi
  # '|cmd' as output name is gnuplot's output pipe
  "$L" plot good.csv --png "|touch PWNED4" >out.txt 2>err.txt; st=$?
  if [ ! -e PWNED4 ] && [ "$st" -eq 0 ] && [ -s "|touch PWNED4" ]; then ok "'|cmd' png name is a file"
  else bad "pipe png name (status $st, $(cat err.txt))"; fi
else
  echo "skip injection tests with gnuplot: gnuplot is not installed"
fi

# --- stack overflows: the script is written but gnuplot is not run
export LIVENS_PLOT_NO_EXEC=1
long=$(awk 'BEGIN { while (i++ < 300000) printf "m" }')
printf 'h,%s\n0.1,1e-3\n0.05,2.5e-4\n' "$long" >longhead.csv
"$L" plot longhead.csv >out.txt 2>err.txt; st=$?
[ "$st" -eq 0 ] && ok "300 000-character convergence header" || bad "long convergence header (status $st, $(head -c 300 err.txt))"
printf 't,energy,g_norm,gv_norm,%s\n0,1,0,0,1\n1,1,0,0,1\n' "$long" >longrun.csv
"$L" plot longrun.csv >out.txt 2>err.txt; st=$?
[ "$st" -eq 0 ] && ok "300 000-character run header" || bad "long run header (status $st, $(head -c 300 err.txt))"
# a 2 000-character argument naming an existing file: ./././.../good.csv
arg=$(awk 'BEGIN { while (i++ < 1000) printf "./" }')good.csv
"$L" plot "$arg" >out.txt 2>err.txt; st=$?
[ "$st" -eq 0 ] && grep -q "good.png" out.txt && ok "2 000-character plot argument" ||
  bad "long plot argument (status $st, $(head -c 300 err.txt))"
unset LIVENS_PLOT_NO_EXEC

# --- run files
good='[run]
model = pendulum3d
scheme = rattle
step = 0.01
t-end = 0.05'
printf '%s\n' "$good" >good.ini
expect 0 '' "valid run file" run good.ini
# a commented-out setting at the end of a long line: inih would cut the line at 199 characters
pad=$(awk 'BEGIN { s = "every = 1 ; "; while (length(s) < 199) s = s "x"; printf "%s", s }')
{ printf '%s\n' "$good"; printf '%sstep = 0.05\n' "$pad"; } >long.ini
expect 2 'long.ini:6: line longer than' "long line with a commented tail" run long.ini
# long comment lines are fine
{ printf '%s\n' "$good"; printf '; %s\n' "$long"; } >longcomment.ini
expect 0 '' "300 000-character comment line" run longcomment.ini
{ printf '%s\n' "$good"; printf '  0.02\n'; } >indent.ini
expect 2 'indent.ini:6: indented line' "indented continuation" run indent.ini
{ printf '%s\n' "$good"; printf 'step = 0.02\n'; } >dup.ini
expect 2 "dup.ini:6: 'step' in \[run\] is given twice" "duplicate key" run dup.ini
printf '[run]\nmodel = pendulum3d\n[param]\nm = 1\nm = 2\n' >dupparam.ini
expect 2 "dupparam.ini:5: 'm' in \[param\] is given twice" "duplicate parameter" run dupparam.ini
mkdir dir.ini
expect 2 "run file 'dir.ini' is not a regular file" "directory as run file" run dir.ini
: >empty.ini
expect 2 "run file 'empty.ini' has no settings" "empty run file" run empty.ini
printf '; nothing\n# here\n\n' >comments.ini
expect 2 "run file 'comments.ini' has no settings" "comments-only run file" run comments.ini
ln -s /dev/zero zero.ini
expect 2 "run file 'zero.ini' is not a regular file" "/dev/zero as run file" run zero.ini
awk 'BEGIN { print "[run]"; while (i++ < 70000) print "; padding padding" }' >big.ini
expect 2 "run file 'big.ini' is larger than 1048576 bytes" "run file over 1 MiB" run big.ini

# an error after [param] and [opt] were read: under ASan/LSan a leak of
# those lists would change the exit status
printf '[run]\nmodel = pendulum3d\n[param]\nm = 2\n[opt]\ntheta = 0.5\n[run]\nbogus = 1\n' >leak.ini
expect 2 "leak.ini:8: unknown key 'bogus' in \[run\]" "run-file error after [param] and [opt]" run leak.ini

[ "$fails" -eq 0 ] || { echo "$fails hostile-input check(s) failed"; exit 1; }
