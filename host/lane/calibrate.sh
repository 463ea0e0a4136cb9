#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Linux calibration (issue 46, docs/linux-calibration.md): what a Linux
# guest pays per IPI, measured beside ipibench's rows that claim it. One
# lane boot runs, for each preset, two traced frames: calib.PRESET, the
# rows (host/ipibench/kvmhost/calibrate.py, MODELS and OPS), and
# linux.PRESET, the lane's own Debian kernel as a KVM guest with
# host/lane/linux/calib.c as its whole userland, making IPIs through
# membarrier(), a futex wake and munmap(). Then the table: each Linux
# operation's exits beside its row's, every difference named or UNEXPLAINED.
#
# usage: host/lane/calibrate.sh [--presets x2apic,kvm-pv,hv,hv-xmm,hv-xmm-4]
#                               [--out DIR] [--timeout S] [--jobs]
#   --presets  the presets to calibrate (default x2apic)
#   --jobs     boot nothing: build the Linux guest's initramfs and print the
#              frames as lane.sh --jobs lines (the kvm-lane group's)
#   --out      the lane's folder (default build/kvm-lane/calib); the table
#              is DIR/calibration.txt too
#   --timeout  bound on the outer boot (lane.sh's default otherwise)
# exit: 0 every operation matches its row or names why not; 1 an unexplained
#   difference or a failed frame; 2 usage; 77 the lane cannot be prepared
#   here (prepare.sh says what to install); 124 the outer boot ran past
#   --timeout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
presets=x2apic out=$repo/build/kvm-lane/calib timeout=() jobs_only=0

help_text() { sed -n '/^# usage:/,/^#   --timeout/s/^# \{0,1\}//p' "$0"; }
usage() { help_text >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--presets) presets=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	--timeout) [[ "${2-}" =~ ^[1-9][0-9]*$ ]] || usage; timeout=(--timeout "$2"); shift ;;
	--jobs) jobs_only=1 ;;
	-h | --help) help_text; exit 0 ;;
	*) echo "calibrate.sh: unknown option '$1'" >&2; usage ;;
	esac
	shift
done
read -r -a list <<<"${presets//,/ }"
export PYTHONPATH=$repo/host
make -s -C "$repo" all linux_calib >/dev/null
rc=0
# KVM_LANE_PREPARED=1: the caller ran prepare.sh moments ago (lane.sh's rule).
[ "${KVM_LANE_PREPARED-}" = 1 ] && [ -f "$repo/build/kvm-lane/base.env" ] ||
	"$here/prepare.sh" -q || rc=$?
[ "$rc" = 0 ] || exit "$rc"
# shellcheck source=/dev/null
. "$repo/build/kvm-lane/base.env"
# The Linux guest's initramfs: /init alone (it mounts what it needs).
rd=$repo/build/lane/linux-calib
rm -rf "$rd/root"
mkdir -p "$rd/root"
cp "$rd/init" "$rd/root/init"
(cd "$rd/root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$rd.cpio"
if [ "$jobs_only" = 1 ]; then
	exec python3 -m ipibench.kvmhost.calibrate --jobs "$KVM_LANE_KERNEL" "$rd.cpio" "${list[@]}"
fi
mkdir -p "$out"
python3 -m ipibench.kvmhost.calibrate --jobs "$KVM_LANE_KERNEL" "$rd.cpio" "${list[@]}" \
	>"$out/jobs.in" || exit 2
rc=0
KVM_LANE_PREPARED=1 "$here/lane.sh" --image "$repo/build/ipibench.elf32" --jobs "$out/jobs.in" \
	--out "$out" "${timeout[@]}" >"$out/lane.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { tail -n 5 "$out/lane.txt" >&2; exit "$rc"; }
rc=0
python3 -m ipibench.kvmhost.calibrate "$out" "${list[@]}" | tee "$out/calibration.txt" || rc=$?
exit "$rc"
