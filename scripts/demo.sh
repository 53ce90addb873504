#!/usr/bin/env bash
# make demo: runs hfload's main job on sample data it generates. See README.md.
set -euo pipefail
out=${1:-demo-out}
bin=bin/hfload
rm -rf "$out"; mkdir -p "$out"
"$bin" --help
