#!/usr/bin/env bash
# hfload-beam's two ways of moving records from map to reduce tasks, measured on the same inputs
# (make bench-beam-shuffle): --shuffle files (run files on storage, only their names through Beam's
# shuffle) and --shuffle beam (the records through Beam's GroupByKey), both on Prism in process, with
# `hfload run` of the same job as the reference and `hfload-beam --runner local` (the same map and
# reduce tasks with run files, one after the other in one process, without Beam: what hfload's own
# tasks cost); runs alternated round by round. Reports CPU
# (user+sys), peak RSS and wall per run (/usr/bin/time), the bytes each moved (hfload-beam --json) and
# checks that all three wrote the same HFiles (a fixed --timestamp: the run's start time would name them). Prism holds every grouped element in its memory, so keep
# SIZE modest. Not part of make test.
# OLD_BIN=dir (a build of another commit: dir/hfload-beam) adds that build's `--runner local` and
# `--shuffle files` runs to every round (old-local, old-files), bracketed with this build's.
#
#   FILES=2 ROWS=300000 ROUNDS=2 bash scripts/bench-beam-shuffle.sh
#   OLD_BIN=/tmp/old/bin ROWS=300000 ROUNDS=2 bash scripts/bench-beam-shuffle.sh
set -euo pipefail
files=${FILES:-2}
rows=${ROWS:-300000}
rounds=${ROUNDS:-2}
bindir=${BIN:-bin}
oldbin=${OLD_BIN:-}
work=${WORK:-$(mktemp -d -t hfload-bench-shuffle.XXXXXX)}
keep=${KEEP_WORK:-}
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$work/in"
if [ -z "$(ls "$work/in" 2>/dev/null)" ]; then
  for f in $(seq "$files"); do "$bindir/hfload" gen logs --rows "$rows" --seed "$f" -o "$work/in/logs-$f.csv" 2>/dev/null; done
fi
echo "input: $(du -sb "$work/in" | cut -f1) bytes in $files files of $rows rows (hfload gen logs), examples/logs.yaml; load average $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # name, command...
  local name=$1; shift
  rm -rf "$work/out-$name"
  /usr/bin/time -f "%U %S %M %e" -o "$work/time" "$@" --timestamp 1700000000000 --input "$work/in/*.csv" --out "$work/out-$name" --no-progress --json >"$work/$name.json" 2>"$work/$name.err" ||
    { echo "$name failed:"; tail -5 "$work/$name.err"; exit 1; }
  read -r u s m e <"$work/time"
  local moved=""
  if [ "$name" != run ]; then
    moved=$(python3 -c '
import json,sys
b=json.load(open(sys.argv[1]))["beam"]
print("moved %d bytes, %d records, %d run files; maps spilled %d, reducers read %d, spilled %d" % (b["run_bytes"], b["run_records"], b["run_files"],
      b.get("map_spill_bytes", 0), b.get("read_bytes", b["run_bytes"] if b["shuffle"] == "files" else 0), b.get("spill_bytes", 0)))' "$work/$name.json")
  fi
  printf '%-9s cpu %6.2f s  rss %5d MiB  wall %6.1f s  %s\n' "$name" "$(echo "$u + $s" | bc)" $((m / 1024)) "$e" "$moved"
}
for r in $(seq "$rounds"); do
  echo "round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  run run "$bindir/hfload" run examples/logs.yaml
  run local "$bindir/hfload-beam" examples/logs.yaml --runner local
  run files "$bindir/hfload-beam" examples/logs.yaml --shuffle files
  run beam "$bindir/hfload-beam" examples/logs.yaml --shuffle beam
  variants="local files beam"
  if [ -n "$oldbin" ]; then
    run old-local "$oldbin/hfload-beam" examples/logs.yaml --runner local
    run old-files "$oldbin/hfload-beam" examples/logs.yaml --shuffle files
    variants="$variants old-local old-files"
  fi
  for v in $variants; do
    a=$(cd "$work/out-run" && find . -type f ! -name '_*' -exec sha256sum {} + | sort)
    b=$(cd "$work/out-$v" && find . -type f ! -name '_*' -exec sha256sum {} + | sort)
    [ "$a" = "$b" ] || { echo "HFiles of $v differ from hfload run's"; exit 1; }
  done
  echo "       HFiles identical ($(cd "$work/out-run" && find . -type f ! -name '_*' | wc -l) files)"
done
