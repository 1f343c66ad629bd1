#!/bin/sh
# livens sweep under MPI (issue 21): `mpirun -n 2` and `-n 3` produce the
# summary of the plain run (identical figures; only the wall time differs),
# and every rank, rank 0 included, takes cases (dynamic hand-out).  Skipped (77)
# when this build has no MPI or mpirun is missing.
set -u
if [ -z "${LIVENS_MPI:-}" ]; then echo "skip: livens was built without MPI (configure found no mpicc)"; exit 77; fi
MPIRUN=${MPIRUN:-$(command -v mpirun || command -v mpiexec || true)}
if [ -z "$MPIRUN" ] || [ ! -x "$MPIRUN" ]; then echo "skip: no mpirun"; exit 77; fi
. "${srcdir:-.}/tests/cli_lib.sh"
# Open MPI refuses root without these (containers, CI)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no network interfaces needed between ranks of one machine
OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl OMPI_MCA_plm_rsh_agent
# under AddressSanitizer (setup.sh's build-san) Open MPI's own allocations
# that live until exit are not this program's leaks
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export ASAN_OPTIONS

# 12 cases of different cost: 3 schemes (VI-S blows up at h = 0.05) x 2
# steps x 2 spring stiffnesses
cat >m.ini <<'INI'
[run]
model = four-particle
t-end = 3
[axes]
scheme = vi-s, vi-a, em
step = 0.01, 0.05
param.k24 = 400, 500
INI
"$L" sweep m.ini --out plain >plain.txt 2>&1 || bad "plain sweep: $(cat plain.txt)"
# everything but the last column (wall_time)
fig() { awk -F, '{ NF--; print }' OFS=, "$1/summary.csv"; }
for n in 2 3; do
  if timeout 300 "$MPIRUN" -n $n --oversubscribe "$L" sweep m.ini --out np$n >np$n.txt 2>np$n.err; then
    if fig plain >a.csv && fig np$n >b.csv && cmp -s a.csv b.csv && [ "$(wc -l <b.csv)" -eq 13 ]; then
      ok "mpirun -n $n: the 12 rows equal the plain run's (figures, statuses; wall time aside)"
    else bad "mpirun -n $n summary differs: $(diff a.csv b.csv | head -5)"; fi
    [ "$(grep -c '^case .*(rank [0-9]*)$' np$n.txt)" -eq 12 ] && ok "mpirun -n $n: 12 cases committed by rank 0" ||
      bad "mpirun -n $n output: $(cat np$n.txt)"
  else bad "mpirun -n $n exits non-zero: $(cat np$n.txt np$n.err | head -20)"; fi
done
# rank 0 hands out and runs cases too (a second thread): every rank works
for n in 2 3; do
  per=$(grep -o '(rank [0-9]*)$' np$n.txt | sort | uniq -c | awk '{ printf "%s%s:%s", s, $3, $1; s = " " }' | tr -d ')')
  k=$(grep -o '(rank [0-9]*)$' np$n.txt | sort -u | wc -l)
  [ "$k" -ge 2 ] && ok "mpirun -n $n: $k of $n ranks ran cases on request, rank 0 among them if listed (rank:cases $per)" ||
    bad "mpirun -n $n hand-out: $per"
done
grep -q 'LV_EDIVERGED' np3/summary.csv && ok "a failed case is a row under MPI too" || bad "no failed row"

# resume under MPI: remove 5 results, rerun with 3 ranks, only those run
rm np3/case-00000[13579].res np3/summary.csv
timeout 300 "$MPIRUN" -n 3 --oversubscribe "$L" sweep m.ini --out np3 >re.txt 2>&1 &&
  grep -q '12 cases, 5 run now, 7 complete before' re.txt && fig np3 >c.csv && cmp -s a.csv c.csv &&
  ok "MPI rerun ran the 5 missing cases only; summary unchanged" || bad "MPI resume: $(cat re.txt)"

[ "$fails" -eq 0 ] || { echo "$fails MPI sweep check(s) failed"; exit 1; }
