#!/usr/bin/env bash
# hfload-beam measured against `hfload run` on the same inputs, runs alternated round by round
# (make bench-beam-shuffle): CPU (user+sys), peak RSS and wall per run (/usr/bin/time), the bytes each
# run moved (hfload-beam --json) per input byte, and a check that every run wrote the same HFiles (a
# fixed --timestamp: the run's start time would name them). Not part of make test.
#
# Variants (VARIANTS, space-separated; default "local files beam"):
#   local        hfload-beam --runner local: the map, plan and reduce tasks one after the other in one
#                process, without Beam (what hfload's own tasks cost: a worker of a real runner)
#   files, beam  hfload-beam on Prism in process, --shuffle files (run files on storage, only their
#                names through Beam's shuffle) or --shuffle beam (the records through Beam's GroupByKey;
#                Prism holds every grouped element in memory, so keep the size modest)
#   local-spill  --runner local with --memory $SPILL_MEMORY (default 96MiB): the maps' sorters spill
#   local-nc, files-nc, beam-nc
#                as local, files, beam with --no-map-combine (aggregate jobs: the maps do not fold)
# JOB (default examples/logs.yaml) and GEN (the `hfload gen` dataset of its input, default logs) choose
# the job; FILES files of ROWS rows each. OLD_BIN=dir (a build of another commit: dir/hfload-beam) adds
# that build's `--runner local` and `--shuffle files` runs (old-local, old-files).
#
#   FILES=2 ROWS=300000 ROUNDS=2 bash scripts/bench-beam-shuffle.sh
#   FILES=4 ROWS=600000 VARIANTS="local files beam local-spill" bash scripts/bench-beam-shuffle.sh
#   JOB=examples/daily-revenue.yaml GEN=orders VARIANTS="local local-nc files files-nc" bash scripts/bench-beam-shuffle.sh
set -euo pipefail
files=${FILES:-2}
rows=${ROWS:-300000}
rounds=${ROUNDS:-2}
job=${JOB:-examples/logs.yaml}
gen=${GEN:-logs}
variants=${VARIANTS:-local files beam}
spillmem=${SPILL_MEMORY:-96MiB}
bindir=${BIN:-bin}
oldbin=${OLD_BIN:-}
work=${WORK:-$(mktemp -d -t hfload-bench-shuffle.XXXXXX)}
keep=${KEEP_WORK:-}
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$work/in"
if [ -z "$(ls "$work/in" 2>/dev/null)" ]; then
  for f in $(seq "$files"); do "$bindir/hfload" gen "$gen" --rows "$rows" --seed "$f" -o "$work/in/$gen-$f.csv" 2>/dev/null; done
fi
inbytes=$(du -sb "$work/in" | cut -f1)
echo "input: $inbytes bytes in $files files of $rows rows (hfload gen $gen), $job; nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # name, command...
  local name=$1; shift
  rm -rf "$work/out-$name"
  /usr/bin/time -f "%U %S %M %e" -o "$work/time" "$@" --timestamp 1700000000000 --input "$work/in/*.csv" --out "$work/out-$name" --no-progress --json >"$work/$name.json" 2>"$work/$name.err" ||
    { echo "$name failed:"; tail -5 "$work/$name.err"; exit 1; }
  read -r u s m e <"$work/time"
  local cpu moved=""
  cpu=$(echo "$u + $s" | bc)
  if [ "$name" != run ]; then
    moved=$(python3 - "$work/$name.json" "$inbytes" "$cpu" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["beam"]
n, cpu = float(sys.argv[2]), float(sys.argv[3])
read = b.get("read_bytes", 0) if b["shuffle"] == "files" else 0
print("per input byte: shuffled %.3f (%d bytes, %d records, %d run files), run reads %.3f, map spills %.3f, reducer spills %.3f, HFiles %.3f; map-combined %d cells; %.1f MB/CPU-s"
      % (b["run_bytes"] / n, b["run_bytes"], b["run_records"], b["run_files"], read / n,
         b.get("map_spill_bytes", 0) / n, b.get("spill_bytes", 0) / n, b["hfile_bytes"] / n, b.get("map_combined", 0), n / 1e6 / cpu))
EOF
)
  fi
  printf '%-11s cpu %7.2f s  rss %5d MiB  wall %7.1f s  %s\n' "$name" "$cpu" $((m / 1024)) "$e" "$moved"
}
variant() { # name
  case $1 in
    local) run local "$bindir/hfload-beam" "$job" --runner local ;;
    files) run files "$bindir/hfload-beam" "$job" --shuffle files ;;
    beam) run beam "$bindir/hfload-beam" "$job" --shuffle beam ;;
    local-spill) run local-spill "$bindir/hfload-beam" "$job" --runner local --memory "$spillmem" ;;
    local-nc) run local-nc "$bindir/hfload-beam" "$job" --runner local --no-map-combine ;;
    files-nc) run files-nc "$bindir/hfload-beam" "$job" --shuffle files --no-map-combine ;;
    beam-nc) run beam-nc "$bindir/hfload-beam" "$job" --shuffle beam --no-map-combine ;;
    old-local) run old-local "$oldbin/hfload-beam" "$job" --runner local ;;
    old-files) run old-files "$oldbin/hfload-beam" "$job" --shuffle files ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
}
[ -z "$oldbin" ] || variants="$variants old-local old-files"
for r in $(seq "$rounds"); do
  echo "round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  run run "$bindir/hfload" run "$job"
  for v in $variants; do variant "$v"; done
  for v in $variants; do
    a=$(cd "$work/out-run" && find . -type f ! -name '_*' -exec sha256sum {} + | sort)
    b=$(cd "$work/out-$v" && find . -type f ! -name '_*' -exec sha256sum {} + | sort)
    [ "$a" = "$b" ] || { echo "HFiles of $v differ from hfload run's"; exit 1; }
  done
  echo "            HFiles identical ($(cd "$work/out-run" && find . -type f ! -name '_*' | wc -l) files); load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
