#!/usr/bin/env bash
# CLI benchmark (make bench-cli): end-to-end hfload run on a generated export versus GNU sort of the same
# file, measured in the same run on the same machine. GNU sort is the floor: it only moves lines, while
# hfload parses, types, keys, sorts cells, writes blocks, indexes and blooms, verifies and fsyncs.
#
# Two hfload runs: the HBase defaults (no compression, no encoding: every cell written as a full
# KeyValue, about 4.5x the CSV bytes) and a typical production family (FAST_DIFF + snappy).
# Machines (VMs especially) change speed from minute to minute, so GNU sort runs before and after
# every hfload run (sort, defaults, sort, fast_diff, sort, defaults, ...) and each hfload run is
# compared with the mean of the two sorts around it: its baseline is measured within seconds of it,
# on the machine as fast or as slow as it was then. Every round reports its own ratios.
#
#   SIZE=1GB MEMORY=256MiB ROUNDS=3 bash scripts/bench-cli.sh
set -euo pipefail
size=${SIZE:-1GB}
memory=${MEMORY:-256MiB}
rounds=${ROUNDS:-3}
work=${WORK:-$(mktemp -d -t hfload-bench.XXXXXX)}
bin=${BIN:-bin/hfload}
trap 'rm -rf "$work"' EXIT

echo "# generating a $size orders export in $work"
"$bin" gen orders --size "$size" --seed 1 --out "$work/orders.csv"
bytes=$(stat -c %s "$work/orders.csv")
echo "# input: $bytes bytes, $(nproc) cores, memory budget $memory, $rounds rounds"

measure() { # name, command...: prints "wall-seconds peak-RSS-KiB"
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "$name failed:" >&2; cat "$work/err.$name" >&2; exit 1; }
  cat "$work/time.$name"
}

hfload_run() { # name, extra flags...
  local name=$1; shift
  rm -rf "$work/hfiles"
  sync
  measure "$name" "$bin" run --input "$work/orders.csv" --header \
    --columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
    --table orders --out "$work/hfiles" --timestamp 1700000000000 --split-sample 8 --memory "$memory" \
    --max-rejects -1 --no-progress "$@"
  grep -E '^(hfiles|time) ' "$work/out.$name" | sed 's/^/#   /' >&2
}

budget_kib=$(numfmt --from=iec-i "${memory%B}" 2>/dev/null | awk '{print int($1/1024)}' || echo 0)
run_sort() { # prints "wall-seconds peak-RSS-KiB"
  sync
  measure sort env LC_ALL=C sort -t, -k1,1 -S 256M -T "$work" -o "$work/sorted.csv" "$work/orders.csv"
  rm -f "$work/sorted.csv"
}
ratio() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN{printf "%.2f", a/((b+c)/2)}'; }
printf "\n| round | sort before / between / after | hfload defaults | ratio | hfload fast_diff+snappy | ratio | peak RSS MiB (sort / defaults / fast_diff) |\n"
printf "|---|---|---|---|---|---|---|\n"
ratios1=() ratios2=() maxrss=0
read -r s0 sr < <(run_sort)
for r in $(seq "$rounds"); do
  read -r hs hr < <(hfload_run defaults)
  read -r s1 _ < <(run_sort)
  read -r fs fr < <(hfload_run fastdiff-snappy --encoding fast_diff --compression snappy)
  read -r s2 _ < <(run_sort)
  q1=$(ratio "$hs" "$s0" "$s1")
  q2=$(ratio "$fs" "$s1" "$s2")
  ratios1+=("$q1"); ratios2+=("$q2")
  for k in "$hr" "$fr"; do [ "$k" -gt "$maxrss" ] && maxrss=$k; done
  printf "| %d | %.2f / %.2f / %.2f s | %.2f s | %sx | %.2f s | %sx | %.0f / %.0f / %.0f |\n" "$r" "$s0" "$s1" "$s2" "$hs" "$q1" "$fs" "$q2" \
    "$(echo "$sr/1024" | bc -l)" "$(echo "$hr/1024" | bc -l)" "$(echo "$fr/1024" | bc -l)"
  s0=$s2
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf "\nmedian wall / mean of the sorts around it: defaults %sx, fast_diff+snappy %sx (target <= 1.5x)\n" "$(median "${ratios1[@]}")" "$(median "${ratios2[@]}")"
if [ "$budget_kib" -gt 0 ]; then
  printf "largest hfload peak RSS: %.0f MiB for a %s budget (target <= budget + 64 MiB)\n" "$(echo "$maxrss/1024" | bc -l)" "$memory"
fi
