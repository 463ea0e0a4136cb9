#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# usage: host-rip.sh MODULES TRACE
#   MODULES  a /proc/modules listing ("name size refs deps state base")
#   TRACE    ftrace text holding kvm:kvm_exit events
# Prints "RIP kvm_amd=BASE+SIZE" for the first kvm_exit whose guest RIP lies
# inside kvm_amd's own text, and exits 0; exits 1 when there is none (or no
# kvm_amd line), 2 on usage.
#
# Why: QEMU's TCG emulation of AMD SVM has been seen, under the KVM lane, to
# end a VMRUN with a #VMEXIT(NPF) that carries the L1 host's own RIP (just
# after its VMRUN, inside kvm_amd) and CR3 as the guest's state; the guest
# then resumes at that address and triple-faults. No guest code can run
# there: ipibench lives below 4 GiB and cannot know the host's addresses. So
# this signature tells the outer emulator's fault from a guest's own reset.
#
# Runs in the lane's outer VM (busybox ash and awk) and on the host (dash,
# mawk or gawk): plain POSIX awk, no 64-bit arithmetic. Addresses are
# compared as zero-padded hex strings, offsets on their low 32 bits: kernel
# modules live in one 1 GiB window, never across a 4 GiB boundary.
[ $# -eq 2 ] || { sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2; }
exec awk '
function pad(h) {	# "0x1f" -> 16 lowercase hex digits
	h = tolower(h)
	sub(/^0x/, "", h)
	while (length(h) < 16)
		h = "0" h
	return h
}
function low32(h,	i, n) {	# value of the last 8 digits of a padded address
	n = 0
	for (i = 9; i <= 16; i++)
		n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return n
}
FNR == NR {
	if ($1 == "kvm_amd" && $6 ~ /^0x[0-9a-fA-F]+$/ && $2 ~ /^[0-9]+$/) {
		base = pad($6); size = $2 + 0; base_text = $6
	}
	next
}
base != "" && / kvm_exit: / {
	for (i = 1; i < NF; i++) {
		if ($i != "rip" || $(i + 1) !~ /^0x[0-9a-fA-F]+$/)
			continue
		r = pad($(i + 1))
		if (substr(r, 1, 8) == substr(base, 1, 8) && r >= base &&
		    low32(r) - low32(base) < size) {
			print $(i + 1), "kvm_amd=" base_text "+" size
			found = 1
			exit
		}
	}
}
END { exit !found }' "$1" "$2"
