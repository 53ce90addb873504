#!/usr/bin/env bash
# CLI benchmark, part two (make bench-cli runs it after scripts/bench-cli.sh; make bench-shapes alone):
# the seeds' key shapes, many regions and many families, each hfload run bracketed by GNU sort of the
# same file (the ratio is to the mean of the sorts just before and after it, as in bench-cli.sh).
#
# After regions-10000's first run, scripts/filefloor writes files of the same sizes as that output, as
# hfload writes small files, and prints what that alone took: the floor under the 10,000-region
# workloads on this machine and file system, whatever makes the files' bytes.
#
# Workloads (one generated CSV per key shape; 5 value columns, so SHAPE_ROWS rows give 5x cells):
#   customer-order       [customer][order] "C041092-0001340975", ~20 rows per customer; 5 regions (given splits)
#   host-event-revts     [host][event][reverse timestamp]; 5 regions
#   salted-id            [salt][monotonic id] "07|000000001234", 16 salts; 5 regions
#   regions-1000         customer-order input, 1,000 regions (given splits, keys taken evenly from the data)
#   regions-10000        customer-order input, 10,000 regions (given splits)
#   regions-10000-sample customer-order input, --split-sample 10000
#   families-5           customer-order input, the same cells as 5 families of one column each
# All with snappy, --memory $MEMORY. customer-order is also the 5-region and 1-family baseline of the
# region and family ratios.
#
# Each hfload run's CPU is shown as user+system seconds and, after the comma, the system (kernel) part alone.
# On ext4 without a journal (this project's benchmark VM: /sys/fs/ext4/vda/journal_task reads <none>) the kernel part
# of the 10,000-region runs depends on what was deleted lately, not on hfload: for every new inode,
# find_inode_bit in fs/ext4/ialloc.c skips each free inode of the block group that recently_deleted() says
# was freed less than 60 s ago (360 s while its inode table block is dirty: RECENTCY_MIN 60, RECENTCY_DIRTY
# 300), reading its inode to check. A run right after 10,000 files were deleted nearby scans them all on
# every create. Measured (1M rows, 10,000 given regions, same build, 2 rounds under load ~5-7, 2026-11-27):
#   (a) nothing deleted by the benchmark lately        sys 1.14 / 1.17 s   wall 6.6 / 7.2 s
#   (b) the previous 10,000-file output deleted before  sys 5.67 / 4.74 s   wall 5.7 / 6.9 s
#   (c) delete, sync, wait 6 s                          sys 5.72 / 6.84 s   wall 7.8 / 10.7 s
#   (d) delete, sync, wait 65 s                         sys 1.22 / 5.81 s   (the second within 360 s of the
#       previous delete while the run's own creates dirtied those inode table blocks again)
# So this script never deletes between timed runs: each previous output is moved aside (a rename frees no
# inode) and everything is deleted at the end; hfload itself deletes only its spill directory, an empty
# rejects file, the staging directory and its lock file, after the HFiles are written. Deletes by other
# processes on the same file system (test clean-ups, other benchmarks' ends) still land in the same
# block groups as /tmp: compare the sys figures of the builds, and run the 10,000-region workloads again
# if one shows several seconds more system time than the other.
#
# OLD_BIN=path/to/previous/hfload runs the previous code in the same rounds, the two builds taking turns
# at going first (each bracketed by sorts the same way), and checks that both write byte-identical HFiles (sha256 of every file,
# by family) in the first round; COMPARE=cells compares each family's cells instead (`hfload hfile dump` of
# all its files), for builds whose bytes differ on purpose (e.g. another snappy encoder). Build one with e.g.
#   git worktree add /tmp/hfload-old <commit> && (cd /tmp/hfload-old && go build -o /tmp/hfload-old.bin ./cmd/hfload)
#
#   SHAPE_ROWS=2000000 SHAPE_ROUNDS=3 MEMORY=256MiB OLD_BIN=/tmp/hfload-old.bin bash scripts/bench-shapes.sh
#   WORKLOADS="customer-order regions-1000" bash scripts/bench-shapes.sh
#   KEEP_WORK=1 bash scripts/bench-shapes.sh   # keep the work directory; delete it slowly afterwards
set -euo pipefail
rows=${SHAPE_ROWS:-200000}
rounds=${SHAPE_ROUNDS:-1}
memory=${MEMORY:-256MiB}
bin=${BIN:-bin/hfload}
old=${OLD_BIN:-}
workloads=${WORKLOADS:-customer-order host-event-revts salted-id regions-1000 regions-10000 regions-10000-sample families-5}
work=${WORK:-$(mktemp -d -t hfload-shapes.XXXXXX)}
mkdir -p "$work"
# KEEP_WORK=1 keeps the work directory (its path is printed first) instead of deleting it at the end, for
# removing its tens of thousands of files slowly (on journal-less ext4 a mass delete slows everyone's
# file creation for minutes, see above).
if [ -z "${KEEP_WORK:-}" ]; then trap 'rm -rf "$work"' EXIT; fi

# gen SHAPE FILE: SHAPE_ROWS rows, key then five value columns (~85 bytes a row), deterministic.
gen() {
  awk -v shape="$1" -v n="$rows" 'BEGIN {
    srand(1); split("NEW PAID SHIPPED DELIVERED CANCELLED", st, " ")
    for (i = 0; i < n; i++) {
      if (shape == "customer-order") key = sprintf("C%06d-%010d", int(rand() * n / 20), i)
      else if (shape == "host-event-revts") key = sprintf("host-%03d.dc1|ev%02d|922337%013d", int(rand() * 50), int(rand() * 8), 336854775807 - i * 997)
      else key = sprintf("%02d|%012d", i % 16, i)
      printf "%s,%d,%.2f,%s,%d,note %d\n", key, int(rand() * 1000000), rand() * 1000, st[1 + int(rand() * 5)], 1700000000 + i, int(rand() * 100000)
    }
  }' > "$2"
}
# splits FILE N: N-1 split keys taken evenly from the sorted keys of FILE.
splits() {
  cut -d, -f1 "$1" | LC_ALL=C sort -S 256M -T "$work" | awk -v n="$2" -v total="$rows" \
    'BEGIN { step = total / n } NR > 1 && NR >= next_at { print; k++; next_at = int(step * (k + 1)) } NR == 1 { next_at = int(step) }' |
    head -n $(($2 - 1)) > "$work/splits.$(basename "$1" .csv).$2"
}

declare -A input cols flags
one='HBASE_ROW_KEY,d:a,d:b,d:c,d:e,d:f'
for w in $workloads; do
  case $w in
    customer-order|host-event-revts|salted-id) input[$w]=$w; cols[$w]=$one; flags[$w]="--splits $work/splits.$w.5" ;;
    regions-1000) input[$w]=customer-order; cols[$w]=$one; flags[$w]="--splits $work/splits.customer-order.1000" ;;
    regions-10000) input[$w]=customer-order; cols[$w]=$one; flags[$w]="--splits $work/splits.customer-order.10000" ;;
    regions-10000-sample) input[$w]=customer-order; cols[$w]=$one; flags[$w]="--split-sample 10000" ;;
    families-5) input[$w]=customer-order; cols[$w]='HBASE_ROW_KEY,a:v,b:v,c:v,e:v,f:v'; flags[$w]="--splits $work/splits.customer-order.5" ;;
    *) echo "unknown workload $w" >&2; exit 2 ;;
  esac
done

echo "# $rows rows per input, $rounds round(s), memory $memory, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), in $work"
for s in $(printf '%s\n' "${input[@]}" | sort -u); do
  gen "$s" "$work/$s.csv"
  splits "$work/$s.csv" 5
  echo "# $s: $(stat -c %s "$work/$s.csv") bytes, e.g. $(head -1 "$work/$s.csv")"
done
for n in 1000 10000; do [ -f "$work/customer-order.csv" ] && splits "$work/customer-order.csv" $n; done

measure() { # name, command...: prints "wall-seconds cpu-seconds system-seconds"
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "$name failed:" >&2; tail -20 "$work/err.$name" >&2; exit 1; }
  awk '{printf "%s %.2f %.2f\n", $1, $2 + $3, $3}' "$work/time.$name"
}
run_sort() { # input name: prints "wall-seconds cpu-seconds system-seconds"
  sync
  measure sort env LC_ALL=C sort -t, -k1,1 -S 256M -T "$work" -o "$work/sorted.csv" "$work/$1.csv"
  rm -f "$work/sorted.csv"
}
run_hfload() { # binary, workload, outdir: prints "wall-seconds cpu-seconds system-seconds"
  local b=$1 w=$2 out=$3
  # The previous output is moved aside, not deleted, until the script ends: on ext4 without a journal
  # (this benchmark's VM), creating a file skips inodes freed in the last minutes of its block group,
  # so deleting 10,000 HFiles just before a run slowed that run's file creation several-fold.
  if [ -e "$out" ]; then mv "$out" "$(mktemp -d "$work/trash.XXXXXX")/"; fi
  sync
  # shellcheck disable=SC2086
  measure "$w" "$b" run --input "$work/${input[$w]}.csv" --columns "${cols[$w]}" --table shapes --out "$out" \
    --timestamp 1700000000000 --compression snappy --memory "$memory" --no-progress ${flags[$w]}
}
digest() { # outdir: "family sha256" of every HFile, sorted; with COMPARE=cells one line per family: the
  # sha256 of its cells, dumped by the new build (which reads both builds' files) and sorted
  if [ "${COMPARE:-bytes}" = cells ]; then
    local b d; b=$(realpath "$bin")
    for d in "$1"/*/; do
      printf '%s %s\n' "$(basename "$d")" "$(find "$d" -type f -print0 | sort -z | xargs -0 -r "$b" hfile dump | LC_ALL=C sort | sha256sum | cut -d' ' -f1)"
    done
    return
  fi
  (cd "$1" && find . -mindepth 2 -type f -exec sha256sum {} + | awk '{n = split($2, p, "/"); print p[n-1], $1}' | sort)
}
ratio() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN{printf "%.2f", a/((b+c)/2)}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

go build -o "$work/filefloor" ./scripts/filefloor
declare -A rnew rold tnew told
printf "\n| workload | round | sort s | hfload s (cpu s, sys s) | / sort |%s\n" "${old:+ old s (cpu s, sys s) | / sort | new / old |}"
printf "|---|---|---|---|---|%s\n" "${old:+---|---|---|}"
for r in $(seq "$rounds"); do
  for w in $workloads; do
    # With OLD_BIN, the two builds take turns at going first (odd rounds the new one): whichever runs
    # first in a round ran measurably slower here (page cache, the previous workload's writeback), which
    # once showed as a 5-15% "slowdown" of the new build on regions-1000 that alternating did not.
    read -r s0 _ < <(run_sort "${input[$w]}")
    if [ -n "$old" ] && [ $((r % 2)) = 0 ]; then
      read -r ho co so < <(run_hfload "$old" "$w" "$work/old")
      read -r s1 _ < <(run_sort "${input[$w]}")
      read -r hn cn sn < <(run_hfload "$bin" "$w" "$work/new")
      read -r s2 _ < <(run_sort "${input[$w]}")
      q=$(ratio "$hn" "$s1" "$s2"); qo=$(ratio "$ho" "$s0" "$s1")
      sorts=$(printf "%.2f / %.2f / %.2f (old first)" "$s0" "$s1" "$s2")
    else
      read -r hn cn sn < <(run_hfload "$bin" "$w" "$work/new")
      read -r s1 _ < <(run_sort "${input[$w]}")
      q=$(ratio "$hn" "$s0" "$s1")
      sorts=$(printf "%.2f / %.2f" "$s0" "$s1")
      if [ -n "$old" ]; then
        read -r ho co so < <(run_hfload "$old" "$w" "$work/old")
        read -r s2 _ < <(run_sort "${input[$w]}")
        qo=$(ratio "$ho" "$s1" "$s2")
        sorts+=$(printf " / %.2f" "$s2")
      fi
    fi
    rnew[$w]+="$q "; tnew[$w]+="$hn "
    line=$(printf "| %s | %d | %s | %.2f (%.1f, %.1f) | %sx |" "$w" "$r" "$sorts" "$hn" "$cn" "$sn" "$q")
    if [ -n "$old" ]; then
      rold[$w]+="$qo "; told[$w]+="$ho "
      line+=$(printf " %.2f (%.1f, %.1f) | %sx | %.2f |" "$ho" "$co" "$so" "$qo" "$(awk -v a="$hn" -v b="$ho" 'BEGIN{print a/b}')")
      if [ "$r" = 1 ]; then
        if ! cmp -s <(digest "$work/new") <(digest "$work/old"); then
          echo "$w: HFiles differ between $bin and $old:" >&2; diff <(digest "$work/new") <(digest "$work/old") | head >&2; exit 1
        fi
        if [ "${COMPARE:-bytes}" = cells ]; then
          line+=" same cells ($(find "$work/new" -mindepth 2 -type f | wc -l) / $(find "$work/old" -mindepth 2 -type f | wc -l) HFiles)"
        else
          line+=" identical HFiles ($(digest "$work/new" | wc -l))"
        fi
      fi
    fi
    echo "$line"
    if [ "$w" = regions-10000 ] && [ "$r" = 1 ]; then
      # What writing these files alone costs (scripts/filefloor: the same sizes, as DirSink writes
      # small files, 2 writers, with its syncs): the floor under the 10,000-region workloads here.
      floor_line=$("$work/filefloor" -like "$work/new" -out "$(mktemp -d "$work/floor.XXXXXX")/o")
      echo "|   files alone (scripts/filefloor, like regions-10000's output): $floor_line |"
    fi
  done
done

echo
echo "median hfload / GNU sort (target <= 1.5x; goal <= 1.0x):"
for w in $workloads; do
  # shellcheck disable=SC2086
  printf "  %-22s %sx%s\n" "$w" "$(median ${rnew[$w]})" "${old:+   (old $(median ${rold[$w]})x)}"
done
base=$(median ${tnew[customer-order]:-0})
if [ "${base:-0}" != 0 ]; then
  echo "median wall time against customer-order (5 regions, 1 family) on the same input:"
  for w in regions-1000:1.2 regions-10000:2 regions-10000-sample:2 families-5:1.3; do
    n=${w%%:*}; [ -n "${tnew[$n]:-}" ] || continue
    # shellcheck disable=SC2086
    printf "  %-22s %.2fx (target <= %sx)%s\n" "$n" "$(awk -v a="$(median ${tnew[$n]})" -v b="$base" 'BEGIN{print a/b}')" "${w##*:}" \
      "${old:+$(printf '   (old %.2fx)' "$(awk -v a="$(median ${told[$n]})" -v b="$(median ${told[customer-order]})" 'BEGIN{print a/b}')")}"
  done
fi
