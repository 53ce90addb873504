#!/usr/bin/env bash
# CLI benchmark (make bench-cli): end-to-end hfload run on a generated export versus GNU sort of the same
# file, measured in the same run on the same machine. GNU sort is the floor: it only moves lines, while
# hfload parses, types, keys, sorts cells, writes blocks, indexes and blooms, fsyncs and verifies.
#
# Two hfload runs: the HBase defaults (no compression, no encoding: every cell written as a full
# KeyValue, about 4.5x the CSV bytes) and a typical production family (FAST_DIFF + snappy).
#
#   SIZE=1GB MEMORY=256MiB bash scripts/bench-cli.sh
set -euo pipefail
size=${SIZE:-1GB}
memory=${MEMORY:-256MiB}
work=${WORK:-$(mktemp -d -t hfload-bench.XXXXXX)}
bin=${BIN:-bin/hfload}
trap 'rm -rf "$work"' EXIT

echo "# generating a $size orders export in $work"
"$bin" gen orders --size "$size" --seed 1 --out "$work/orders.csv"
bytes=$(stat -c %s "$work/orders.csv")
echo "# input: $bytes bytes, $(nproc) cores, memory budget $memory"

measure() { # name, command...: prints "name wall-seconds peak-RSS-KiB"
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "$name failed:"; cat "$work/err.$name"; exit 1; }
  read -r secs rss <"$work/time.$name"
  echo "$name $secs $rss"
}

hfload_run() { # name, extra flags...
  local name=$1; shift
  rm -rf "$work/hfiles"
  sync
  measure "$name" "$bin" run --input "$work/orders.csv" --header \
    --columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
    --table orders --out "$work/hfiles" --timestamp 1700000000000 --split-sample 8 --memory "$memory" \
    --max-rejects -1 --no-progress "$@"
  grep -E '^(hfiles|time) ' "$work/out.$name" | sed 's/^/#   /'
}

sync
sortline=$(measure sort env LC_ALL=C sort -t, -k1,1 -S 256M -T "$work" -o "$work/sorted.csv" "$work/orders.csv")
rm -f "$work/sorted.csv"
hfline=$(hfload_run hfload-none)
echo "$hfline" | grep '^#' || true
hfline=$(echo "$hfline" | grep -v '^#')
hfline2=$(hfload_run hfload-fastdiff-snappy --encoding fast_diff --compression snappy)
echo "$hfline2" | grep '^#' || true
hfline2=$(echo "$hfline2" | grep -v '^#')

read -r _ ssecs srss <<<"$sortline"
read -r _ hsecs hrss <<<"$hfline"
read -r _ h2secs h2rss <<<"$hfline2"
budget_kib=$(numfmt --from=iec-i "$memory" 2>/dev/null | awk '{print int($1/1024)}' || echo 0)
awk -v b="$bytes" -v ss="$ssecs" -v hs="$hsecs" -v h2="$h2secs" -v sr="$srss" -v hr="$hrss" -v h2r="$h2rss" -v budget="$budget_kib" 'BEGIN {
  printf "| command | wall s | input MB/s | peak RSS MiB | wall / sort |\n|---|---|---|---|---|\n"
  printf "| LC_ALL=C sort -t, -k1,1 -S 256M | %.2f | %.0f | %.0f | 1.00x |\n", ss, b/1e6/ss, sr/1024
  printf "| hfload run (defaults: none, no encoding) | %.2f | %.0f | %.0f | %.2fx |\n", hs, b/1e6/hs, hr/1024, hs/ss
  printf "| hfload run --encoding fast_diff --compression snappy | %.2f | %.0f | %.0f | %.2fx |\n", h2, b/1e6/h2, h2r/1024, h2/ss
  printf "\ntargets: wall <= 1.5x sort; peak RSS <= budget + 64 MiB\n"
  if (budget > 0) printf "peak RSS - budget: %.0f MiB (defaults), %.0f MiB (fast_diff+snappy)\n", (hr-budget)/1024, (h2r-budget)/1024
}'
