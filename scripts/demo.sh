#!/usr/bin/env bash
# make demo: generate a sample orders export, load it into HFiles with split points computed from the data,
# inspect and verify one output file, and show the bulk-load command. Takes well under a minute.
set -euo pipefail
out=${1:-demo-out}
bin=bin/hfload
rows=${ROWS:-200000}
rm -rf "$out"; mkdir -p "$out"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. generate a sample export: $rows order lines (hfload gen orders)"
"$bin" gen orders --rows "$rows" --seed 1 --out "$out/orders.csv"
head -4 "$out/orders.csv" || true

step "2. load it: ImportTsv-style columns, 4 regions of equal size computed from the data"
"$bin" run --input "$out/orders.csv" --header \
  --columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
  --table orders --out "$out/hfiles" --split-sample 4 --timestamp 1700000000000

step "3. the output: <out>/<family>/<hfile> + _manifest.json"
find "$out/hfiles" -type f | sort | while read -r f; do printf '%12d  %s\n' "$(stat -c %s "$f")" "$f"; done

first=$(find "$out/hfiles/d" -type f | sort | head -1)
step "4. inspect one file (hfload hfile inspect)"
{ "$bin" hfile inspect "$first" || true; } | head -45

step "5. verify every file: checksums, key order, index, blooms, counts (hfload hfile verify)"
"$bin" hfile verify "$out"/hfiles/d/*

step "6. first cells of that file (hfload hfile dump)"
{ "$bin" hfile dump "$first" || true; } | head -8
