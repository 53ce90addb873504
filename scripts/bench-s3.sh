#!/usr/bin/env bash
# Object-storage benchmark (make bench-s3): the generated export loaded from and to a local S3 server
# (the Versity gateway, posix backend, on loopback) against the same load from and to local disk, in
# the same run, alternating local / s3 rounds. The gateway's directory is on the same disk as the
# local run's output, so the bucket run writes every byte to disk too, plus the gateway's own work
# (it joins the parts into the object when an upload completes). The input object is the export
# file placed in the bucket's directory; hfload streams it through the S3 API. Not part of make test.
#
#   SIZE=1GB MEMORY=256MiB ROUNDS=3 bash scripts/bench-s3.sh
#
# HFLOAD_FLAGS adds options to every load, local and bucket alike (e.g. HFLOAD_FLAGS="--compression snappy":
# the table's usual codec; the default run writes HBase's default, no compression, about 4.6 GiB of HFiles
# for the 1 GB export).
#
# OLD=path/to/an/older/hfload adds that build's bucket load to every round (bracketed old/new figures
# from the same run; the rounds alternate which of the two goes first). GWFLAGS passes options to the
# gateway's posix backend (e.g. GWFLAGS=--data-integrity-etag: CRC ETags instead of MD5; the default
# run uses none). Columns: wall and CPU (user+sys) seconds; "gateway CPU" is the gateway's during that
# load; "commit" is the load's commit phase from hfload's summary (completing the uploads: the gateway
# joins each object's parts, then deletes them); "s3 discards" is the discard requests of the gateway
# directory's block device during the load and the device's time on them (device-wide: other
# processes' deletes count too; on a file system mounted with discard, ext4 without a journal waits
# for the discard of every extent and xattr block it frees when the gateway deletes the parts);
# "CPU s3/local" is (hfload + gateway) / local.
#
# GWALT (default "--data-integrity-etag"; GWALT= for none) starts a second gateway over the same
# directory with those operator options and adds BIN's bucket load through it to every round ("ALT"
# columns): what the same load costs when the gateway's operator turns off what hfload cannot (the
# MD5 of every part for its ETag). The last lines say where the bucket load's extra time goes: its
# commit (the gateway copying every part into its object) and the rest (the gateway's CPU beside
# hfload's while the files are written).
#
# GWFS (opt-in, root only; default unset: the gateway's directory is on the same file system as the
# local run's output) is a labelled scenario, never part of make test: the gateway's directory on a
# fresh file system in a loop device (losetup --direct-io=on over a sparse image of GWFS_SIZE, default
# 16G, under WORK), to measure what its commit costs there. The local run stays where it always is.
#   GWFS=xfs           XFS with reflink=1: copy_file_range shares the parts' blocks instead of copying them
#   GWFS=btrfs         btrfs: the same by its clone ioctl
#   GWFS=ext4          ext4 without a journal (as this VM's root) mounted without discard
#   GWFS=ext4-discard  the same mounted with discard (as this VM's root): the loop device's own cost
set -euo pipefail
size=${SIZE:-1GB}
memory=${MEMORY:-256MiB}
rounds=${ROUNDS:-3}
work=${WORK:-$(mktemp -d -t hfload-bench-s3.XXXXXX)}
bin=${BIN:-bin/hfload}
old=${OLD:-}
[ -z "$old" ] || [ -x "$old" ] || { echo "OLD=$old is not an executable" >&2; exit 1; }
gwbin=${VERSITYGW:-$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")}
[ -x "$gwbin" ] || { echo "versitygw not found: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2; exit 1; }
alt=${GWALT---data-integrity-etag}
gwfs=${GWFS:-}
gwpid= altpid= loopdev=
cleanup() {
  for p in $gwpid $altpid; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
  if [ -n "$loopdev" ]; then umount "$work/gw" 2>/dev/null; losetup -d "$loopdev" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/gw" "$work/tmp"
if [ -n "$gwfs" ]; then # the gateway's directory on its own file system (see GWFS above)
  [ "$(id -u)" = 0 ] || { echo "GWFS needs root (mkfs, losetup, mount)" >&2; exit 1; }
  truncate -s "${GWFS_SIZE:-16G}" "$work/gwfs.img"
  mountopts=
  case $gwfs in
    xfs) mkfs.xfs -q -m reflink=1 "$work/gwfs.img" ;;
    btrfs) mkfs.btrfs -q "$work/gwfs.img" ;;
    ext4) mkfs.ext4 -q -O ^has_journal "$work/gwfs.img"; mountopts=nodiscard ;;
    ext4-discard) mkfs.ext4 -q -O ^has_journal "$work/gwfs.img"; mountopts=discard ;;
    *) echo "GWFS=$gwfs: want xfs, btrfs, ext4 or ext4-discard" >&2; exit 1 ;;
  esac
  loopdev=$(losetup -f --show --direct-io=on "$work/gwfs.img")
  mount ${mountopts:+-o "$mountopts"} "$loopdev" "$work/gw"
  echo "# SCENARIO GWFS=$gwfs: the gateway's directory on $gwfs${mountopts:+ ($mountopts)} in $loopdev (direct I/O) over a sparse ${GWFS_SIZE:-16G} image; the local run on $(df --output=fstype "$work" | tail -1) as always"
fi
mkdir -p "$work/gw/bench"
port=$((20000 + RANDOM % 20000))
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
# shellcheck disable=SC2086 # GWFLAGS is a list of options
ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY "$gwbin" --port "127.0.0.1:$port" posix ${GWFLAGS:-} "$work/gw" \
  >"$work/gw.log" 2>&1 &
gwpid=$!
if [ -n "$alt" ]; then # the same directory (bucket, input object) behind a gateway with the operator options
  altport=$((port + 1))
  # shellcheck disable=SC2086 # GWALT is a list of options
  ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY "$gwbin" --port "127.0.0.1:$altport" posix $alt "$work/gw" \
    >"$work/gwalt.log" 2>&1 &
  altpid=$!
fi
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true \
  AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
for p in $port ${altport:-}; do
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$p/" && break; sleep 0.1; done
done

echo "# generating a $size orders export"
"$bin" gen orders --size "$size" --seed 1 --out "$work/orders.csv"
cp "$work/orders.csv" "$work/gw/bench/orders.csv" # the input object
bytes=$(stat -c %s "$work/orders.csv")
echo "# input: $bytes bytes, $(nproc) cores, memory budget $memory, $rounds rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"

measure() { # name, command...: prints "wall-seconds cpu-seconds peak-RSS-KiB"
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "$name failed:" >&2; cat "$work/err.$name" >&2; exit 1; }
  awk '{printf "%s %.2f %s\n", $1, $2+$3, $4}' "$work/time.$name"
}
load() { # name, binary, input, out, extra flags...
  local name=$1 b=$2 in=$3 out=$4; shift 4
  sync
  # shellcheck disable=SC2086 # HFLOAD_FLAGS is a list of options
  measure "$name" "$b" run --input "$in" --header \
    --columns 'HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment' \
    --table orders --out "$out" --timestamp 1700000000000 --split-sample 8 --memory "$memory" \
    --max-rejects -1 --no-progress ${HFLOAD_FLAGS:-} "$@"
}
sums() { (cd "$1" && find . -path ./_manifest.json -prune -o -type f -not -name '_*' -print0 | sort -z | xargs -0 sha256sum); }

gwcpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/${1:-$gwpid}/stat"; } # a gateway's CPU seconds so far (Linux)

# The gateway directory's block device: its discards (Linux /sys/class/block/DEV/stat fields 12 and 15,
# device-wide: other processes' deletes count too). On a file system mounted with discard, deleting
# the parts after the commit's copy issues them, and without a journal ext4 waits for each.
gwdev=$(basename "$(df --output=source "$work/gw" | tail -1)")
discards() { awk 'NF >= 15 {print $12, $15; next} {print 0, 0}' "/sys/class/block/$gwdev/stat" 2>/dev/null || echo "0 0"; }

commit() { sed -n 's/^time .*commit \([0-9.]*\)s.*/\1/p' "$work/out.$1" "$work/err.$1" | head -1; } # the load's commit seconds
bucket() { # name, binary[, gateway port, gateway pid]: a bucket load; prints "wall cpu rss gateway-cpu commit discards discard-s"
  local g0 d0 w c r gp=${4:-$gwpid}
  rm -rf "$work/gw/bench/out"
  g0=$(gwcpu "$gp")
  d0=$(discards)
  read -r w c r < <(AWS_ENDPOINT_URL_S3=http://127.0.0.1:${3:-$port} load "$1" "$2" "s3://bench/orders.csv" "s3://bench/out" --tmp-dir "$work/tmp")
  echo "$w $c $r $(awk -v a="$(gwcpu "$gp")" -v b="$g0" 'BEGIN{printf "%.2f", a-b}') $(commit "$1") $(echo "$d0 $(discards)" | awk '{printf "%d %.1f", $3-$1, ($4-$2)/1000}')"
}

hdr="| round | local wall | local CPU | s3 wall | s3 CPU | gateway CPU | s3 commit | s3 discards | s3 / local wall | CPU s3 / local | s3 peak RSS MiB |"
sep="|---|---|---|---|---|---|---|---|---|---|---|"
[ -z "$old" ] || { hdr="$hdr OLD s3 wall | OLD s3 CPU | OLD gateway CPU | OLD s3 commit | OLD s3 / local wall |"; sep="$sep---|---|---|---|---|"; }
[ -z "$alt" ] || { hdr="$hdr ALT s3 wall | ALT s3 CPU | ALT gateway CPU | ALT s3 commit | ALT s3 / local wall |"; sep="$sep---|---|---|---|---|"; }
[ -z "$alt" ] || echo "# ALT: the same bucket load through a second gateway run with: $alt"
printf "\n%s\n%s\n" "$hdr" "$sep"
ratios=()
oratios=()
aratios=()
nocommit=()
commits=()
dsecs=()
for r in $(seq "$rounds"); do
  rm -rf "$work/local"
  read -r lw lc _ < <(load local "$bin" "$work/orders.csv" "$work/local")
  if [ -n "$old" ] && [ $((r % 2)) = 0 ]; then read -r ow oc _ og ocm _ _ < <(bucket s3old "$old"); fi
  read -r sw sc sr gc cm dn ds < <(bucket s3 "$bin")
  if [ "$r" = 1 ]; then
    lsums=$(sums "$work/local") # hashed once: 4.6 GiB at 1 GB
    if [ "$lsums" != "$(sums "$work/gw/bench/out")" ]; then echo "HFILES DIFFER between local and s3" >&2; exit 1; fi
    echo "# round 1: the HFiles in the bucket are byte-identical to the local ones ($(echo "$lsums" | wc -l) files)" >&2
  fi
  if [ -n "$old" ] && [ $((r % 2)) = 1 ]; then read -r ow oc _ og ocm _ _ < <(bucket s3old "$old"); fi
  if [ -n "$alt" ]; then
    read -r aw ac _ ag acm _ _ < <(bucket s3alt "$bin" "$altport" "$altpid")
    if [ "$r" = 1 ] && [ "$lsums" != "$(sums "$work/gw/bench/out")" ]; then echo "HFILES DIFFER between local and s3 (ALT gateway)" >&2; exit 1; fi
  fi
  q=$(awk -v a="$sw" -v b="$lw" 'BEGIN{printf "%.2f", a/b}')
  ratios+=("$q")
  nocommit+=("$(awk -v a="$sw" -v c="${cm:-0}" -v b="$lw" 'BEGIN{printf "%.2f", (a-c)/b}')")
  commits+=("${cm:-0}")
  dsecs+=("${ds:-0}")
  line=$(printf "| %d | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %s s | %s / %s s | %sx | %sx | %.0f |" "$r" "$lw" "$lc" "$sw" "$sc" "$gc" "$cm" "$dn" "$ds" "$q" \
    "$(awk -v a="$sc" -v g="$gc" -v b="$lc" 'BEGIN{printf "%.2f", (a+g)/b}')" "$(echo "$sr/1024" | bc -l)")
  if [ -n "$old" ]; then
    oq=$(awk -v a="$ow" -v b="$lw" 'BEGIN{printf "%.2f", a/b}')
    oratios+=("$oq")
    line="$line $(printf " %.2f s | %.2f s | %.2f s | %s s | %sx |" "$ow" "$oc" "$og" "$ocm" "$oq")"
  fi
  if [ -n "$alt" ]; then
    aq=$(awk -v a="$aw" -v b="$lw" 'BEGIN{printf "%.2f", a/b}')
    aratios+=("$aq")
    line="$line $(printf " %.2f s | %.2f s | %.2f s | %s s | %sx |" "$aw" "$ac" "$ag" "$acm" "$aq")"
  fi
  echo "$line"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
[ -z "$gwfs" ] || printf "\nSCENARIO GWFS=%s (the gateway's directory on %s in a loop device; not the default figure)" "$gwfs" "$gwfs"
printf "\nwhere the extra time goes (medians): the commit %s s (the gateway copies every part into its object at\n" "$(median "${commits[@]}")"
printf "CompleteMultipartUpload with copy_file_range: a full copy on ext4, shared blocks on XFS/btrfs; then it deletes the\n"
printf "parts: a discard per freed extent on a file system mounted with discard); without it the bucket load is %sx the local one\n" "$(median "${nocommit[@]}")"
printf "the device's time on discards during a bucket load (median, device-wide): %s s\n" "$(median "${dsecs[@]}")"
printf "median s3 / local wall: %sx (target <= 1.3x)" "$(median "${ratios[@]}")"
[ -z "$old" ] || printf "; OLD build: %sx" "$(median "${oratios[@]}")"
[ -z "$alt" ] || printf "; ALT gateway (%s): %sx" "$alt" "$(median "${aratios[@]}")"
printf "; load average at the end %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
