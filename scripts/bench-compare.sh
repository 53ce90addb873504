#!/usr/bin/env bash
# bench-compare.sh OLD_REV NEW_REV — make bench-cli's hfload runs, old build against new build, in one
# bracketed run, with the HFiles of both builds compared.
#
# Builds `hfload` at both revisions (git archive into a temp dir: the worktree is not touched), generates
# one orders export of SIZE, then for ROUNDS rounds runs bench-cli's two loads (HBase defaults, and
# FAST_DIFF + snappy) with both builds, alternating which goes first (old new | new old | old new ...) so
# that a machine getting faster or slower during the run favours neither. Each run's wall time and CPU
# time (user + sys) are recorded; per load the table gives new/old per round and the median. On a
# shared or loaded machine CPU time says more than wall time; quote either with the machine's state.
#
# The first round also compares the HFiles: sha256 of every output file but _manifest.json, per
# family directory, names ignored (NAMES=strict compares names too: revisions before the name seed,
# e.g. 6709b19, name files differently). COMPARE=cells compares each family's cells instead (every file
# dumped with `hfload hfile dump` by the new build, lines sorted), for builds whose bytes differ on purpose
# (e.g. another snappy encoder). Outputs are deleted after each run. Exit 0 only if every comparison matched.
#
#   scripts/bench-compare.sh 6709b19 HEAD                  # SIZE=1GB ROUNDS=3 MEMORY=256MiB
#   SIZE=200MB ROUNDS=4 scripts/bench-compare.sh 6709b19 main
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_REV NEW_REV" >&2; exit 2; }
repo=$(git rev-parse --show-toplevel)
size=${SIZE:-1GB}
rounds=${ROUNDS:-3}
memory=${MEMORY:-256MiB}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT

build() { # build REV DIR
	local rev=$1 dir=$2
	mkdir -p "$dir/src"
	git -C "$repo" archive "$(git -C "$repo" rev-parse --verify "$rev^{commit}")" | tar -x -C "$dir/src"
	(cd "$dir/src" && go build -o "$dir/hfload" ./cmd/hfload)
	rm -rf "$dir/src"
	echo "# built $rev ($(git -C "$repo" rev-parse --short "$rev"))"
}
build "$1" "$tmp/old"
build "$2" "$tmp/new"

echo "# generating a $size orders export"
"$tmp/old/hfload" gen orders --size "$size" --seed 1 --out "$tmp/orders.csv"
echo "# input: $(stat -c %s "$tmp/orders.csv") bytes, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), memory budget $memory, $rounds rounds"

loads=("defaults|" "fast_diff+snappy|--encoding fast_diff --compression snappy")
run() { # run SIDE LOAD_INDEX: prints "wall cpu"
	local side=$1 args=${loads[$2]#*|} out=$tmp/out
	rm -rf "$out"
	sync
	# shellcheck disable=SC2086 # the extra arguments are split on purpose
	/usr/bin/time -f "%e %U %S" -o "$tmp/time" "$tmp/$side/hfload" run --input "$tmp/orders.csv" --header \
		--columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
		--table orders --out "$out" --timestamp 1700000000000 --split-sample 8 --memory "$memory" \
		--max-rejects -1 --no-progress $args >"$tmp/log" 2>&1 || { echo "$side ${loads[$2]%%|*} failed:" >&2; tail -5 "$tmp/log" >&2; exit 1; }
	if [ "${CHECKED[$2$side]:-}" = "" ]; then # the first run of each build and load: its files' sums
		if [ "${COMPARE:-bytes}" = cells ]; then # each family's cells, dumped by the new build and sorted
			for d in "$out"/*/; do
				printf '%s %s\n' "$(find "$d" -type f -print0 | sort -z | xargs -0 -r "$tmp/new/hfload" hfile dump | LC_ALL=C sort | sha256sum | cut -d' ' -f1)" "$(basename "$d")"
			done >"$tmp/$side.$2.sums"
		else
			(cd "$out" && find . -type f ! -name _manifest.json | sort | xargs -r sha256sum) >"$tmp/$side.$2.sums"
		fi
		if [ "${COMPARE:-bytes}" = bytes ] && [ "${NAMES:-ignore}" = ignore ]; then
			awk '{ d = $2; sub(/\/[^\/]*$/, "", d); print $1, d }' "$tmp/$side.$2.sums" | sort >"$tmp/sums" && mv "$tmp/sums" "$tmp/$side.$2.sums"
		fi
		CHECKED[$2$side]=1
	fi
	rm -rf "$out"
	awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/time"
}

declare -A CHECKED
declare -a wr cr # per load: new/old ratios of wall and CPU, space-separated
printf "\n| round | load | order | old wall / CPU s | new wall / CPU s | new/old wall | new/old CPU |\n|---|---|---|---|---|---|---|\n"
for r in $(seq "$rounds"); do
	for l in "${!loads[@]}"; do
		if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
		for side in $order; do
			read -r w c < <(run "$side" "$l")
			eval "${side}_w=$w ${side}_c=$c"
		done
		qw=$(awk -v a="$new_w" -v b="$old_w" 'BEGIN { printf "%.3f", a / b }')
		qc=$(awk -v a="$new_c" -v b="$old_c" 'BEGIN { printf "%.3f", a / b }')
		wr[l]="${wr[l]:-} $qw"; cr[l]="${cr[l]:-} $qc"
		printf "| %d | %s | %s | %s / %s | %s / %s | %s | %s |\n" "$r" "${loads[$l]%%|*}" "${order/ /, }" "$old_w" "$old_c" "$new_w" "$new_c" "$qw" "$qc"
	done
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
for l in "${!loads[@]}"; do
	# shellcheck disable=SC2086 # the ratio lists are split on purpose
	printf "%s: median new/old wall %s, CPU %s (%d rounds, %s, load average now %s)\n" "${loads[$l]%%|*}" \
		"$(median ${wr[l]})" "$(median ${cr[l]})" "$rounds" "$size" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
fail=0
for l in "${!loads[@]}"; do
	n=$(grep -c . "$tmp/new.$l.sums" || true)
	if [ "$n" -gt 0 ] && cmp -s "$tmp/old.$l.sums" "$tmp/new.$l.sums"; then
		if [ "${COMPARE:-bytes}" = cells ]; then
			echo "same  ${loads[$l]%%|*}: the cells of $n families identical (COMPARE=cells)"
		else
			echo "same  ${loads[$l]%%|*}: $n files byte-identical (NAMES=${NAMES:-ignore})"
		fi
	else
		echo "DIFF  ${loads[$l]%%|*}:"; diff "$tmp/old.$l.sums" "$tmp/new.$l.sums" | head || true; fail=1
	fi
done
exit "$fail"
