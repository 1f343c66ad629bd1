#!/bin/sh
# User-facing text cites papers by authors and year, never by the developers'
# internal labels (issue 17): `livens list`, `livens theory genalpha`, the man
# page, README.md and doc/*.md (except doc/claims.md, a table of claim ids by
# design) hold no "seed 00N" / "spec 00N" / "spec E11" / "claim 11" label,
# and every DOI they cite is in doc/references.md.
set -u
src="${srcdir:-.}"
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
labels='[Ss]eeds? ?0[0-9]{2}|[Ss]eeds? [0-9]{3}|[Ss]pecs? [0-9]{3}|[Ss]pec §|[Ss]pec'"'"'s |[Ss]pec E[0-9]|[Ss]pec 0|[Cc]laim [0-9]+|\(E[0-9]{1,2}\)|[Ii]ssue [0-9]+\)'

check_text() { # name file
  if grep -n -E "$labels" "$2" >"$tmp/hits"; then
    bad "$1 carries internal labels: $(head -n 3 "$tmp/hits" | tr '\n' ' ')"
  else
    ok "$1: no internal labels"
  fi
}

if [ -x ./livens ]; then
  OPENBLAS_NUM_THREADS=1 ./livens list >"$tmp/list.txt" 2>&1 || bad "livens list failed"
  check_text "livens list" "$tmp/list.txt"
  grep -q 'doc/references.md' "$tmp/list.txt" && ok "livens list points to doc/references.md" ||
    bad "livens list does not point to doc/references.md"
  for i in 3 2; do
    OPENBLAS_NUM_THREADS=1 ./livens theory genalpha --index $i >"$tmp/theory$i.txt" 2>&1 || bad "livens theory genalpha failed"
    check_text "livens theory genalpha --index $i" "$tmp/theory$i.txt"
  done
else
  echo "(the program is not built: livens list and theory not checked)"
  : >"$tmp/list.txt"
fi
check_text "doc/livens.1" "$src/doc/livens.1"
grep -q '^\.SH REFERENCES' "$src/doc/livens.1" && ok "the man page has a REFERENCES section" ||
  bad "the man page has no REFERENCES section"
check_text "README.md" "$src/README.md"
for f in "$src"/doc/*.md; do
  case "$f" in */claims.md) continue ;; esac
  check_text "doc/${f##*/}" "$f"
done
# claims.md keeps its ids but says which paper each spec number is
grep -q 'Kinon' "$src/doc/claims.md" && grep -q 'Wieloch' "$src/doc/claims.md" && ok "doc/claims.md maps spec numbers to papers" ||
  bad "doc/claims.md does not map its spec numbers to the papers"

# every DOI cited anywhere user-facing is in the reference list
cat "$tmp/list.txt" "$src/doc/livens.1" "$src/README.md" "$src"/doc/*.md |
  grep -o -E '10\.[0-9]{4,9}/[^] ,;)>"]+' | sed 's/[.]$//' | sort -u >"$tmp/dois"
n=$(wc -l <"$tmp/dois")
[ "$n" -gt 0 ] || bad "no DOI found at all (the reference list should cite some)"
missing=""
while read -r d; do
  grep -q -F "$d" "$src/doc/references.md" || missing="$missing $d"
done <"$tmp/dois"
[ -z "$missing" ] && ok "all $n DOIs cited are in doc/references.md" || bad "DOIs missing from doc/references.md:$missing"
# and the man page's DOIs are the reference list's
for d in $(grep -o -E '10\.[0-9]{4,9}/[^] ,;)>"]+' "$src/doc/livens.1" | sed 's/[.]$//'); do
  grep -q -F "$d" "$src/doc/references.md" || bad "man page DOI $d not in doc/references.md"
done
exit $fail
