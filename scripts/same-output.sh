#!/usr/bin/env bash
# same-output.sh OLD_REV NEW_REV — proves that two revisions write byte-identical HFiles.
#
# Builds `hfload` at both revisions (git archive into a temp dir, so the worktree is not touched),
# generates the inputs once, runs the same loads with both binaries and compares every output file
# (HFiles and rejects; _manifest.json is left out: it records durations and the tool version) by
# path and SHA-256. The loads: `make demo`'s, the example job files, and the shapes the end-to-end
# tests load (jobs/run_e2e_test.go, run_tags_test.go): every codec and encoding, bloom rowcol,
# format v2, rolling files, Parquet input, cell tags, the duplicate policies, computed and uniform
# splits, aggregation. Exit 0 only if every load matched.
#
#   scripts/same-output.sh 6709b19 HEAD            # ROWS=200000 by default; KEEP=1 keeps the temp dir
#   ONLY='^demo$' ROWS=2000000 scripts/same-output.sh 6709b19 HEAD   # only the loads whose name matches
#   NAMES=ignore scripts/same-output.sh 6709b19 HEAD   # compare each directory's set of file contents, not
#                                                      # names (for revisions whose HFile naming differs)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_REV NEW_REV" >&2; exit 2; }
repo=$(git rev-parse --show-toplevel)
rows=${ROWS:-200000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT

build() { # build REV DIR
	local rev=$1 dir=$2
	mkdir -p "$dir/src"
	git -C "$repo" archive "$(git -C "$repo" rev-parse --verify "$rev^{commit}")" | tar -x -C "$dir/src"
	(cd "$dir/src" && go build -o "$dir/hfload" ./cmd/hfload)
	echo "built $rev ($(git -C "$repo" rev-parse --short "$rev"))"
}
build "$1" "$tmp/old"
build "$2" "$tmp/new"

in=$tmp/in
mkdir -p "$in"
gen=$tmp/old/hfload
"$gen" gen orders --rows "$rows" --seed 1 --out "$in/orders.csv"
"$gen" gen orders --rows "$((rows / 4))" --seed 2 --out "$in/orders.parquet"
"$gen" gen logs --rows "$rows" --seed 1 --out "$in/logs.csv"
"$gen" gen metrics --rows "$((rows / 2))" --seed 1 --out "$in/metrics.csv"
# Cell tags as run_tags_test.go writes them: TTL and visibility columns, some rows without.
awk 'BEGIN { print "id,name,ttl,vis"; for (i = 0; i < 20000; i++) {
	t = ""; v = ""; if (i % 3 == 0) { t = "86400000"; v = "secret|(admin&!guest)" } else if (i % 3 == 1) t = "60000";
	printf "k%c%05d,n%05d,%s,%s\n", 97 + i % 26, i, i, t, v } }' > "$in/tags.csv"
printf 'secret=3\nadmin=4\nguest=5\n' > "$in/labels"

ocols='HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment'
ts=1700000000000
# name | arguments after `hfload run` (INPUT is the input dir); the output dir is appended.
loads=(
	"demo|--input INPUT/orders.csv --header --columns $ocols --table orders --split-sample 4 --timestamp $ts"
	"example-orders|$repo/examples/orders.yaml --input INPUT/orders.csv --timestamp $ts"
	"example-logs|$repo/examples/logs.yaml --input INPUT/logs.csv --timestamp $ts"
	"example-metrics|$repo/examples/metrics-opentsdb.yaml --input INPUT/metrics.csv"
	"example-daily-revenue|$repo/examples/daily-revenue.yaml --input INPUT/orders.csv"
	"gz-prefix-rowcol|--input INPUT/orders.csv --header --columns $ocols --table t --split-uniform 3 --keyspace decimal --compression gz --encoding prefix --bloom rowcol --timestamp $ts"
	"snappy-diff|--input INPUT/orders.csv --header --columns $ocols --table t --split-sample 3 --compression snappy --encoding diff --timestamp $ts"
	"lz4-fastdiff-small-blocks|--input INPUT/orders.csv --header --columns $ocols --table t --compression lz4 --encoding fast_diff --block-size 4KiB --bloom none --timestamp $ts"
	"zstd-v2|--input INPUT/orders.csv --header --columns $ocols --table t --compression zstd --format-version 2 --timestamp $ts"
	"rolling|--input INPUT/orders.csv --header --columns $ocols --table t --split-sample 2 --max-file-size 2MiB --memory 64MiB --timestamp $ts"
	"parquet|--input INPUT/orders.parquet --columns $ocols --table t --split-sample 3 --timestamp $ts"
	"tags|--input INPUT/tags.csv --header --columns HBASE_ROW_KEY,d:name,HBASE_CELL_TTL,HBASE_CELL_VISIBILITY --labels INPUT/labels --table t --split-sample 3 --timestamp $ts"
	"dups-first|--input INPUT/logs.csv --header --columns HBASE_ROW_KEY,d:event,d:ts,d:level,d:msg --table t --duplicates first --timestamp $ts"
	"dups-last|--input INPUT/logs.csv --header --columns HBASE_ROW_KEY,d:event,d:ts,d:level,d:msg --table t --duplicates last --timestamp $ts"
	"dups-keep|--input INPUT/logs.csv --header --columns HBASE_ROW_KEY,d:event,d:ts,d:level,d:msg --table t --duplicates keep --timestamp $ts"
	"rejects-two-families|--input INPUT/orders.csv --header --columns HBASE_ROW_KEY,a:customer_id,b:product_id,b:order_ts,HBASE_TS_KEY,a:unit_price,b:status,a:comment --table t --max-rejects -1 --split-sample 2 --timestamp $ts"
)

fail=0
for l in "${loads[@]}"; do
	name=${l%%|*}
	args=${l#*|}
	[[ $name =~ ${ONLY:-.} ]] || continue
	args=${args//INPUT/$in}
	for side in old new; do
		# shellcheck disable=SC2086 # the arguments are split on purpose
		(cd "$tmp" && "$tmp/$side/hfload" run $args --out "$tmp/$side/out/$name" --no-progress \
			>"$tmp/$side/$name.log" 2>&1) || echo "exit $? ($side)" >>"$tmp/$side/$name.log"
		(cd "$tmp/$side/out/$name" 2>/dev/null && find . -type f ! -name _manifest.json | sort |
			xargs -r sha256sum) >"$tmp/$side/$name.sums" || true
		if [ "${NAMES:-}" = ignore ]; then # "<sha256> <directory>", sorted: contents per directory
			awk '{ d = $2; sub(/\/[^\/]*$/, "", d); print $1, d }' "$tmp/$side/$name.sums" | sort >"$tmp/$side/$name.sums.tmp"
			mv "$tmp/$side/$name.sums.tmp" "$tmp/$side/$name.sums"
		fi
	done
	n=$(grep -c . "$tmp/new/$name.sums" || true)
	if [ "$n" -eq 0 ]; then
		echo "FAIL  $name: no output (see logs)"; tail -3 "$tmp/new/$name.log"; fail=1
	elif cmp -s "$tmp/old/$name.sums" "$tmp/new/$name.sums"; then
		echo "same  $name: $n files"
	else
		echo "DIFF  $name:"; { diff "$tmp/old/$name.sums" "$tmp/new/$name.sums" | head || true; }; fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "same-output: every load run was byte-identical ($1 vs $2, ROWS=$rows${NAMES:+, NAMES=$NAMES})"
exit "$fail"
