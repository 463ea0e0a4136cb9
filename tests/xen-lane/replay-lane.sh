#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A stand-in for host/lane/xen-lane.sh (run.sh's IPIBENCH_XEN_LANE) that
# boots nothing: it hands run.sh a frame the xen-lane group's own outer boot
# ran minutes before (XEN_LANE_REPLAY=that boot's --out folder), and only
# the frame of the very preset and guest command line run.sh asks for, as
# xen-lane.sh --dry-run composes it. So the documented
#   ./run.sh --accel xen-in-tcg --preset xen-viridian --append '...'
# runs as written, its Xen boot shared with the group's other frames
# instead of paying for an outer boot of its own (docs/xen.md).
#
# usage: XEN_LANE_REPLAY=DIR replay-lane.sh --presets P --append ARGS --out OUT [...]
# exit: 0 the frame was handed over; 1 no such frame in DIR (a different
# preset or command line: it says which); 2 usage.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

preset="" append="" out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--presets) preset=$2; shift ;;
	--append) append=$2; shift ;;
	--out) out=$2; shift ;;
	--inner-timeout | --timeout) shift ;;
	*) echo "replay-lane.sh: unexpected '$1'" >&2; exit 2 ;;
	esac
	shift
done
dir=${XEN_LANE_REPLAY:?replay-lane.sh: XEN_LANE_REPLAY names no folder}
if [ -z "$preset" ] || [ -z "$out" ]; then
	echo "replay-lane.sh: --presets and --out" >&2
	exit 2
fi

want=$("$here/host/lane/xen-lane.sh" --presets "$preset" --append "$append" --dry-run) || exit 1
want=${want#*|}
frame=$(awk -F'|' -v w="$want" '{ f = $1; sub(/^[^|]*\|/, "") } $0 == w { print f; exit }' "$dir/jobs")
if [ -z "$frame" ] || [ ! -s "$dir/$frame.status" ]; then
	echo "xen-lane: error: no finished frame of '$want' in $dir/jobs" >&2
	exit 1
fi
echo "xen-lane: replaying frame $frame of $dir"
# xen-lane.sh's own hand-over (a matrix's): the frame under the name it
# gives run.sh's own (its preset), so that run.sh follows its guest's lines
# in outer.log as it would live.
exec "$here/host/lane/xen-lane.sh" --presets "$preset" --append "$append" --from "$dir" \
	--frame "$frame" --out "$out"
