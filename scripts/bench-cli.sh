#!/usr/bin/env bash
# CLI benchmark (make bench-cli): end-to-end hfload run on a generated export versus GNU sort of the same
# file, measured in the same run on the same machine. GNU sort is the floor: it only moves lines, while
# hfload parses, types, keys, sorts cells, writes blocks, indexes and blooms.
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
echo "# input: $bytes bytes, $(nproc) cores"

measure() { # name, command...: prints wall seconds and peak RSS (KiB)
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "$name failed:"; cat "$work/err.$name"; exit 1; }
  read -r secs rss <"$work/time.$name"
  echo "$name $secs $rss"
}

sync
sortline=$(measure sort env LC_ALL=C sort -t, -k1,1 -S 256M -T "$work" -o "$work/sorted.csv" "$work/orders.csv")
rm -f "$work/sorted.csv"
sync
hfline=$(measure hfload "$bin" run --input "$work/orders.csv" --header \
  --columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
  --table orders --out "$work/hfiles" --timestamp 1700000000000 --split-sample 8 --memory "$memory" \
  --max-rejects -1 --no-progress)

read -r _ ssecs srss <<<"$sortline"
read -r _ hsecs hrss <<<"$hfline"
budget_kib=$(numfmt --from=iec-i "$memory" 2>/dev/null | awk '{print int($1/1024)}' || echo 0)
awk -v b="$bytes" -v ss="$ssecs" -v hs="$hsecs" -v sr="$srss" -v hr="$hrss" -v budget="$budget_kib" 'BEGIN {
  printf "| tool | wall s | MB/s | peak RSS MiB |\n|---|---|---|---|\n"
  printf "| GNU sort -S 256M | %.2f | %.0f | %.0f |\n", ss, b/1e6/ss, sr/1024
  printf "| hfload run --memory | %.2f | %.0f | %.0f |\n", hs, b/1e6/hs, hr/1024
  printf "\nhfload wall time / sort wall time = %.2fx (target <= 1.5x)\n", hs/ss
  if (budget > 0) printf "hfload peak RSS - budget = %.0f MiB (target <= 64 MiB)\n", (hr-budget)/1024
}'
