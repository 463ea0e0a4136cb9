#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A stand-in for host/lane/lane.sh (run.sh's IPIBENCH_LANE) that boots
# nothing: it hands run.sh a frame that the kvm-lane group's one outer boot
# ran minutes before (KVM_LANE_REPLAY=that boot's --out folder), and only
# the frame of the very preset, machine, tracing, module parameter, image
# and guest command line run.sh asks for, as lane.sh --dry-run composes them.
# So the group's run.sh commands (matrix --exits, run --exits, ab
# --module-param) run as written, their boots shared with the group's
# other frames instead of paying for an outer boot each (what
# tests/xen-lane/replay-lane.sh does for the Xen lane), and so do the
# docs group's hv-xmm command (run.sh's IPIBENCH_LANE) and its lane.sh
# --presets kvm-pv command (run with this script in lane.sh's place).
#
# What run.sh gets is what lane.sh would have left in --out: the frame's
# console (PRESET.log), status and trace, and an outer.log made of the
# boot's own lines before its first frame, the lines the outer VM printed
# for this frame before its begin marker (a module parameter loaded again
# for it: module-param, kvm-params, which then stand instead of the boot's)
# and the frame itself.
#
# usage: KVM_LANE_REPLAY=DIR replay-lane.sh --image I --presets P [--machine M]
#            [--exits] [--module-param M.P=V] --append ARGS --out OUT [...]
# exit: 0 the frame was handed over; 1 no such finished frame in DIR (it
# says which it wanted); 2 usage.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

image="" preset="" machine="" exits="" mparam="" append="" out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--exits) exits=1; shift; continue ;;
	--image) image=$2 ;;
	--presets) preset=$2 ;;
	--machine) machine=$2 ;;
	--module-param) mparam=$2 ;;
	--append) append=$2 ;;
	--out) out=$2 ;;
	--inner-timeout | --timeout) ;;
	*) echo "replay-lane.sh: unexpected '$1'" >&2; exit 2 ;;
	esac
	shift 2 || { echo "replay-lane.sh: $1 wants a value" >&2; exit 2; }
done
dir=${KVM_LANE_REPLAY:?replay-lane.sh: KVM_LANE_REPLAY names no folder}
if [ -z "$preset" ] || [ -z "$out" ] || [ -z "$image" ]; then
	echo "replay-lane.sh: --image, --presets and --out" >&2
	exit 2
fi

want=$("$here/host/lane/lane.sh" --dry-run --image "$image" --presets "$preset" \
	${machine:+--machine "$machine"} ${exits:+--exits} ${mparam:+--module-param "$mparam"} \
	--append "$append") || exit 1
# DIR/jobs: frame|cpu|smp|extra|traced|inner bound|module param|image|load|
# command line. The inner bound is not matched, nor the load: a frame beside
# load is replayed only where KVM_LANE_FRAME names it (the lane test's), and
# no other frame is taken for it.
want=$(echo "$want" | cut -d'|' -f1-6,8-)
frame=$(awk -F'|' -v w="$want" -v named="${KVM_LANE_FRAME:-}" '
	/^#/ { next }
	{ f = $1; l = $2 "|" $3 "|" $4 "|" $5 "|" $7 "|" $8; for (i = 10; i <= NF; i++) l = l "|" $i }
	l == w && (named == "" ? $9 == "0" : f == named) { print f; exit }' "$dir/jobs")
if [ -z "$frame" ] || [ ! -s "$dir/$frame.status" ]; then
	echo "kvm-lane: error: no finished frame of '$want' in $dir/jobs" >&2
	exit 1
fi
if [ -n "$exits" ] && [ ! -s "$dir/$frame.trace" ]; then
	echo "kvm-lane: error: frame $frame of $dir has no trace" >&2
	exit 1
fi
echo "kvm-lane: replaying frame $frame of $dir"
mkdir -p "$out"
cp "$dir/$frame.log" "$out/$preset.log"
cp "$dir/$frame.status" "$out/$preset.status"
[ -z "$exits" ] || cp "$dir/$frame.trace" "$out/$preset.trace"
# The boot's lines before its first frame, then this frame's preamble (its
# last run's: a frame run again is judged on that) and the frame, to its
# trace's end. A preamble's line stands instead of the boot's of its kind
# (the third word: module-param, kvm-params, trace...): run.sh reads the
# first it finds.
awk -v f="$frame" '
	!begun && !/^@@@ lane-begin / { head[++nh] = $0; next }
	/^@@@ lane-begin / {
		begun = 1; inf = ($3 == f); other = !inf; ended = 0; tr = 0
		if (inf) {
			n = 0; body[++n] = $0
			# A rerun right after a reset has no preamble of its own.
			if (np) { nf = 0; for (i = 1; i <= np; i++) fpre[++nf] = pre[i] }
		}
		np = 0; next
	}
	/^@@@ lane-rerun / && $3 == f { rerun = $0; next }
	# Another frame: nothing of it is the preamble of this one.
	other { if (index($0, "@@@ lane-end ")) other = 0; next }
	inf && !ended { body[++n] = $0; if (index($0, "@@@ lane-end ")) ended = 1; next }
	inf && /^@@@ lane-trace-begin / && $3 == f { tr = 1 }
	inf && (tr || /^outer-dmesg: /) { body[++n] = $0; if (/^@@@ lane-trace-end /) inf = 0; next }
	/^@@@ lane-info / { pre[++np] = $0 }
	END {
		for (i = 1; i <= nf; i++) { split(fpre[i], w, " "); own[w[3]] = 1 }
		for (i = 1; i <= nh; i++) {
			split(head[i], w, " ")
			if (!(head[i] ~ /^@@@ lane-info / && (w[3] in own))) print head[i]
		}
		for (i = 1; i <= nf; i++) print fpre[i]
		if (rerun != "") print rerun
		for (i = 1; i <= n; i++) print body[i]
	}' "$dir/outer.log" >"$out/outer.log"
# lane.sh's last line for a frame, as a docs command's reader wants it.
printf 'kvm-lane:   %-10s %3s (replayed)\n' "$preset" "$(cat "$out/$preset.status")"