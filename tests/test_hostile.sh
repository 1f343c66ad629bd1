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
  # metadata (titles and legends, issue 17): quotes, backslashes, escaped
  # newlines, backquotes, @macros, markup and gnuplot commands in values
  data good.csv >body.csv
  { printf '# model = m\x27; system(\x27touch PWNED5\x27); a=\x27\n'
    printf '# scheme = `touch PWNED6` @a "q" \\n\\x0a set output \x27|touch PWNED7\x27\n'
    printf '# param.l = \x27\x27\x27 ; ! touch PWNED8 ; \x27 _{x}^2 \\\\ </text><script>\n'
    printf '# h = 0.01\n'; cat body.csv; } >evil1.csv
  { printf '# model = m\x27; system(\x27touch PWNED5\x27); a=\x27\n'
    printf '# scheme = \\write18{touch PWNED9} \\input{/etc/passwd} $x$ %% # & ~\n'
    printf '# h = 0.02\n'; cat body.csv; } >evil2.csv
  for fmt in png svg pdf tex; do
    LIVENS_PLOT_KEEP_SCRIPT=evil.gp "$L" plot evil1.csv evil2.csv --out "evil.$fmt" >out.txt 2>err.txt; st=$?
    # every script line is one of our commands: none was started by user text
    strange=$(grep -cvE "^(cd|set|unset|plot) " evil.gp)
    if [ "$st" -eq 0 ] && [ -s "evil.$fmt" ] && [ "$strange" -eq 0 ] && ! ls PWNED* >/dev/null 2>&1; then
      ok "hostile metadata in titles and legends ($fmt): no command ran, $(wc -l <evil.gp) script lines all ours"
    else bad "hostile metadata ($fmt): status $st, $strange foreign lines, $(ls PWNED* 2>/dev/null), $(cat err.txt)"; fi
  done
  python3_ok=0; [ -x /usr/bin/python3 ] && python3_ok=1
  [ "$python3_ok" -eq 0 ] || /usr/bin/python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert not d.getElementsByTagName("script")' evil.svg &&
    ok "SVG with '</text><script>' in the metadata: well-formed, no script element" || bad "hostile SVG"
  grep -q 'textbackslash{}write18\\{touch PWNED9\\}' evil.tex && ! grep -q '[^{]\\write18' evil.tex &&
    grep -q '\\_\\{x\\}\\^{}2' evil.tex && ok "LaTeX output: the metadata's TeX is escaped (\\write18, _, ^, braces)" ||
    bad "LaTeX escaping: $(grep -o '.\{20\}write18.\{20\}' evil.tex)"
  # --y column names and convergence column suffixes are text too
  { data good.csv | head -n 1 | sed "s/,q1,/,a'.system('touch PWNED10').',/"; data good.csv | sed 1d; } >ycol.csv
  LIVENS_PLOT_KEEP_SCRIPT=y.gp "$L" plot ycol.csv --y "a'.system('touch PWNED10').'" --out y.png >out.txt 2>err.txt; st=$?
  [ "$st" -eq 0 ] && [ ! -e PWNED10 ] && [ "$(grep -cvE "^(cd|set|unset|plot) " y.gp)" -eq 0 ] &&
    ok "--y with a quote-laden column name: drawn, no command ran" || bad "--y injection (status $st, $(cat err.txt))"
  printf "# scheme = x'); system('touch PWNED11\nh,err_q.a'; system('touch PWNED12'); b='\n0.1,1e-3\n0.05,2.5e-4\n" >convx.csv
  "$L" plot convx.csv --out convx.svg >out.txt 2>err.txt; st=$?
  [ "$st" -eq 0 ] && [ ! -e PWNED11 ] && [ ! -e PWNED12 ] && ok "convergence labels from metadata and column suffix are not code" ||
    bad "convergence label injection (status $st, $(cat err.txt))"
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
