# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced by both lanes (lane.sh, xen-lane.sh): the guest's command line for
# a hypervisor nested in QEMU TCG. The inner guest sees KVM or Xen and would
# take their defaults, which assume a vCPU that runs at a CPU's pace; every
# frame gets TCG's instead, each unless the command line sets it.
#
# nested_defaults ARGS: prints ARGS with the defaults added.
nested_defaults() {
	local args=$1 k
	# The suite's wake check calls a wake late past late_wake (10 ms under
	# KVM). Here every vCPU is a thread of an outer TCG on a shared host, and
	# a loaded host delays a wake by tens of ms (12 and 155 ms seen) without
	# losing it: the lane gives the inner guest TCG's own bound, 200 ms,
	# unless the command line sets one. A lost wake still fails.
	[[ " $args " == *" late_wake="* ]] || args="${args:+$args }late_wake=200000"
	# Likewise every wait's deadline: the guest sees KVM and would wait 1 s
	# for an IPI, which a loaded 2-core host spent on one delivery (1.7 ms
	# on average, past 1 s once: a FAILURE for an IPI that came). TCG's own
	# 10 s (bench_params_for_emulation) unless the command line sets one:
	# a late IPI is then a slow figure, a lost one still fails (the kvm-lane
	# group's loss.x2apic frame shows it at deadline=1000). A backend
	# switch waits max(deadline, 2 s) too (ipi/switch.c).
	[[ " $args " == *" deadline="* ]] || args="$args deadline=10000"
	# The same for an AP's start (2 s under KVM): its vCPU thread, too, can
	# wait seconds for an outer CPU on a loaded host.
	[[ " $args " == *" ap_timeout="* ]] || args="$args ap_timeout=10000"
	# And TCG's short loops (bench_params_for_emulation): under two layers
	# of emulation a figure counts behaviour and exits, not time, and the
	# ipi_benchmark view's 10000-iteration loops alone took most of the
	# README's 2-minute `run.sh --exits --accel kvm-in-tcg` of plan=default
	# (preset x2apic: 120 s before these, 55 s after, quiet 2-core host).
	for k in warmup=5 budget=2 norov_iters=100; do
		[[ " $args " == *" ${k%%=*}="* ]] || args="$args $k"
	done
	printf '%s\n' "$args"
}
