#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The real-KVM lane: boots a guest image under real KVM on a machine
# without /dev/kvm, by nesting KVM inside a QEMU TCG VM (TCG emulates AMD SVM;
# Debian's kvm_amd loads on it). One outer boot runs the image once per preset
# of host/ipibench/presets.conf, or once per job, each with an inner
# `qemu-system-x86_64 -accel kvm`: one framed guest console each.
#
# usage: host/lane/lane.sh --image PATH [--presets NAMES] [--append ARGS]
#                               [--machine M] [--out DIR] [--timeout S]
#                               [--inner-timeout S]
#        host/lane/lane.sh --image PATH --job SPEC... | --jobs FILE [...]
#        host/lane/lane.sh --resplit DIR
#        host/lane/lane.sh --dry-run [--presets ...|--job ...] ...
#   --image PATH         the kernel, booted with -kernel: multiboot (elf32-i386)
#                        or PVH (build/ipibench.elf)
#   --machine M          the inner QEMU's -M value for every preset, e.g.
#                        microvm,pic=off,pit=off,rtc=off (default: QEMU's
#                        own, pc)
#   --exits              trace the KVM events exit accounting reads (kvm_exit,
#                        kvm_pio, kvm_msr, hypercalls, Hyper-V IPI and flush
#                        calls, APICv/AVIC): the per-exit ones only inside the
#                        guest's marker windows (markers=1), in the kernel;
#                        keep each frame's trace as DIR/<frame>.trace
#   --module-param M.P=V load module M of the outer VM's KVM (kvm or kvm_amd)
#                        with P=V, and report what it granted (read back)
#   --presets NAMES      comma- or blank-separated preset names (default: the
#                        lane presets below)
#   --append ARGS        the guest's command line, the same for every preset
#   --job SPEC           one frame of its own, instead of --presets and
#                        --append (repeat it; they run in order):
#                        'FRAME | OPTIONS | ARGS', FRAME is [TAG.]PRESET (a
#                        unique name: suite.x2apic), OPTIONS '-' or words:
#                        exits (traced, as --exits), load (beside a CPU
#                        hog on each L1 CPU and a second QEMU under KVM,
#                        only its own QEMU traced), inner-timeout=S,
#                        module-param=M.P=V (as --module-param, for this
#                        frame: the modules are loaded again before it),
#                        machine=M and image=PATH (as --machine and
#                        --image, for this frame), initrd=PATH (QEMU's
#                        -initrd), linux (the image is a Linux kernel: ARGS
#                        is its command line as given, no ipibench keys
#                        added, and it gets 256 MB); ARGS the guest's
#                        command line
#   --jobs FILE          one SPEC a line ('#' comments)
#   --out DIR            where logs go (default build/kvm-lane/out)
#   --timeout S          bound on each outer boot (default 60 + 120 a frame)
#   --inner-timeout S    bound on each inner QEMU (default 60; a job's own
#                        inner-timeout= for its frame)
#   --dry-run            boot nothing: print each frame as DIR/jobs lists
#                        it, less its name and inner bound
#                        (cpu|smp|extra|traced|module param|image|command
#                        line; tests/kvm-lane/replay-lane.sh finds a frame
#                        so)
#   --resplit DIR        boot nothing: split DIR/outer.log into its frames
#                        again (a saved run, or the lane's own tests)
#
# Writes DIR/outer.log (the whole outer console), and for each frame (a
# preset, or a job's FRAME) DIR/<frame>.log (its guest console),
# DIR/<frame>.trace when traced (the outer kernel's ftrace text for that
# boot) and DIR/<frame>.status (the inner QEMU's exit status: (b << 1) | 1
# for a byte b the guest wrote to isa-debug-exit, 1 for a QEMU failure, 0
# when the guest reset or shut down without writing a byte (a triple fault
# under -no-reboot), 137 when the --inner-timeout bound killed it).
# DIR/jobs lists what each outer boot ran
# (frame|cpu|smp|extra|traced|inner bound|module param|image|command line).
#
# An outer kernel that soft-locks (an L1 CPU stuck in KVM for 20 s: it
# panics, softlockup_panic=1) or oopses (an int3 oops in finish_task_switch
# while tracepoints were being switched on, once: the outer TCG's
# cross-modifying-code handling under text patching) is booted once more for
# the frame it was in and those after it; a second such failure fails.
#
# exit: 0 the outer VM ran every frame to its end (whatever the guests'
# statuses: judging them is the caller's job); 1 the outer VM failed or a
# frame is missing; 2 usage; 77 cannot prepare (see prepare.sh); 124 the
# outer VM ran past --timeout (timeout(1)'s own code).
set -euo pipefail

# The presets the lane runs; every one must exist in presets.conf.
readonly LANE_PRESETS=(x2apic xapic hv hv-xmm hv-xmm-4 hv-vapic kvm-pv)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
conf=$repo/host/ipibench/presets.conf
cache=$repo/build/kvm-lane

image=
presets=
append=
machine=
out=$cache/out
timeout=
inner_timeout=60
exits=0
module_param=
tmp=
start=
resplit=
dry_run=0
# --job and --jobs, in order, as given (parsed in parse_jobs).
job_specs=()
# The frames of this run, one entry per frame, in order: name, preset,
# whether traced (0/1), inner bound in seconds, the guest's command line,
# the module parameter it runs with (M.P=V, or empty: the modules' defaults),
# the inner QEMU's -M (or empty), the image it boots (an absolute path) and
# whether it runs beside load (0/1: CPU hogs and a second QEMU in L1).
frames=() job_preset=() job_exits=() job_timeout=() job_append=() job_mparam=()
job_machine=() job_image=() job_load=() job_initrd=() job_linux=()

# shellcheck source=host/lane/nested-defaults.sh
. "$here/nested-defaults.sh"
readonly LANE_TAG=kvm-lane
# shellcheck source=host/lane/lane-lib.sh
. "$here/lane-lib.sh"
help_text() { sed -n '/^# usage:/,/^#                        again/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
usage() { help_text >&2; exit 2; }

parse_args() {
	local appended=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--exits) exits=1; shift; continue ;;
		--dry-run) dry_run=1; shift; continue ;;
		-h | --help) help_text; exit 0 ;;
		esac
		[ $# -ge 2 ] || usage
		case "$1" in
		--image) image=$2 ;;
		--presets) presets=$2 ;;
		--append) append=$2 appended=1 ;;
		--job) job_specs+=("$2") ;;
		--jobs)
			[ -f "$2" ] || die "no jobs file at $2"
			local line
			while IFS= read -r line || [ -n "$line" ]; do
				[[ "$line" =~ ^[[:space:]]*(#|$) ]] || job_specs+=("$line")
			done <"$2" ;;
		--machine) machine=$2 ;;
		--out) out=$2 ;;
		--timeout) timeout=$2 ;;
		--inner-timeout) inner_timeout=$2 ;;
		--resplit) resplit=$2 ;;
		--module-param) module_param=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	if [ -n "$resplit" ]; then
		[ -f "$resplit/outer.log" ] || die "no outer.log in $resplit"
		return 0
	fi
	[ -n "$image" ] || [ "$dry_run" = 1 ] || usage
	[ -f "$image" ] || [ "$dry_run" = 1 ] || die "no image at $image"
	[[ "$inner_timeout" =~ ^[1-9][0-9]*$ ]] || die "--inner-timeout wants seconds"
	module_param_ok "$module_param" ||
		die "--module-param wants kvm.P=V or kvm_amd.P=V, not '$module_param'"
	[ -z "$timeout" ] || [[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds"
	machine_ok "$machine" || die "--machine wants a QEMU -M value without blanks, not '$machine'"
	if [ ${#job_specs[@]} -gt 0 ] && { [ -n "$presets" ] || [ "$appended" = 1 ]; }; then
		die "--job/--jobs give each frame its preset and command line: not with --presets or --append"
	fi
	return 0
}

# A -M value joins each preset's extra arguments, which init splits on blanks.
machine_ok() { [ -z "$1" ] || [[ "$1" =~ ^[a-z0-9][a-z0-9.,=_-]*$ ]]; }

# The module parameters lane.sh loads KVM with: kvm's or kvm_amd's (empty: none).
module_param_ok() { [ -z "$1" ] || [[ "$1" =~ ^(kvm|kvm_amd)\.[a-z_]+=[A-Za-z0-9]+$ ]]; }

# The frames: one per preset (--presets, --append and --exits for all), or
# one per job. A job is 'FRAME | OPTIONS | ARGS' (blanks around '|' do not
# count): FRAME is [TAG.]PRESET, OPTIONS '-' or words (exits,
# inner-timeout=S), ARGS the guest's command line (it may be empty).
parse_jobs() {
	local spec name opts args w t x m mach img l rd lx
	if [ ${#job_specs[@]} -eq 0 ]; then
		local list
		if [ -n "$presets" ]; then
			read -r -a list <<<"${presets//,/ }"
		else
			list=("${LANE_PRESETS[@]}")
		fi
		for name in "${list[@]}"; do
			add_frame "$name" "$name" "$exits" "$inner_timeout" "$append" "$module_param" \
				"$machine" "$image"
		done
		return 0
	fi
	for spec in "${job_specs[@]}"; do
		[[ "$spec" == *"|"*"|"* ]] || die "--job wants 'FRAME | OPTIONS | ARGS', not '$spec'"
		name=${spec%%|*} opts=${spec#*|}
		args=${opts#*|} opts=${opts%%|*}
		read -r name <<<"$name"
		x=$exits t=$inner_timeout m=$module_param mach=$machine img=$image l=0 rd='' lx=0
		for w in $opts; do
			case "$w" in
			-) ;;
			exits) x=1 ;;
			load) l=1 ;;
			inner-timeout=[1-9]*) t=${w#inner-timeout=}
				[[ "$t" =~ ^[0-9]+$ ]] || die "job $name: inner-timeout wants seconds, not '$t'" ;;
			module-param=*) m=${w#module-param=}
				module_param_ok "$m" || die "job $name: module-param wants kvm.P=V or kvm_amd.P=V, not '$m'" ;;
			machine=*) mach=${w#machine=}
				machine_ok "$mach" || die "job $name: machine wants a QEMU -M value, not '$mach'" ;;
			image=?*) img=${w#image=}
				[ -f "$img" ] || [ "$dry_run" = 1 ] || die "job $name: no image at $img" ;;
			initrd=?*) rd=${w#initrd=}
				[ -f "$rd" ] || [ "$dry_run" = 1 ] || die "job $name: no initrd at $rd" ;;
			linux) lx=1 ;;
			*) die "job $name: unknown option '$w' (exits, load, inner-timeout=S, module-param=M.P=V, machine=M, image=PATH, initrd=PATH, linux)" ;;
			esac
		done
		# Leading and trailing blanks are the spec's, not the guest's.
		args=${args#"${args%%[![:space:]]*}"} args=${args%"${args##*[![:space:]]}"}
		add_frame "$name" "${name##*.}" "$x" "$t" "$args" "$m" "$mach" "$img" "$l" "$rd" "$lx"
	done
}

add_frame() { # name preset exits timeout append module-param machine image [load [initrd [linux]]]
	local f
	# Names become file names and marker words.
	[[ "$1" =~ ^([a-z0-9][a-z0-9-]*\.)?[a-z0-9][a-z0-9-]*$ ]] ||
		die "bad frame name '$1' (a preset, or TAG.PRESET)"
	for f in "${frames[@]}"; do
		[ "$f" != "$1" ] || die "frame $1 twice: each frame needs a name of its own (TAG.PRESET)"
	done
	[[ "$5" != *$'\n'* ]] || die "frame $1: a command line on one line"
	local args=$5
	if [ "${11:-0}" != 1 ]; then
		args=$(nested_defaults "$5")
		# The console: each print whole to the virtio console run_preset gives
		# a frame (one exit a print instead of one a byte); microvm has no PCI.
		[[ " $args " == *" console="* || "$7" == microvm* ]] || args="$args console=virtio"
	fi
	frames+=("$1") job_preset+=("$2") job_exits+=("$3") job_timeout+=("$4") job_append+=("$args")
	job_mparam+=("$6") job_machine+=("$7") job_image+=("$(realpath -m "$8")") job_load+=("${9:-0}")
	# A Linux guest's initrd and memory ride in the preset's extra QEMU
	# arguments (the inner QEMU's last -m counts), so the frame line keeps
	# its fields.
	job_initrd+=("${10:+$(realpath -m "${10}")}") job_linux+=("${11:-0}")
}

# frame_line INDEX [IMAGE [INITRD]]: the frame as DIR/jobs lists it (and
# the outer VM's init reads it, with IMAGE and INITRD, their paths there,
# instead of the host's): name|cpu|smp|extra|traced|inner bound|module
# param|image|load|command line.
frame_line() {
	local i=$1 line m=${job_machine[$1]} rd=${3:-${job_initrd[$1]}} lx=
	[ "${job_linux[$1]}" = 0 ] || lx=" -m 256M"
	line=$(preset_line "${job_preset[$i]}") || die "no preset '${job_preset[$i]}' in $conf"
	[[ "$line" =~ ^[^|]*\|[^|]*\|[1-9][0-9]*\| ]] || die "preset ${job_preset[$i]}: bad smp field in $conf"
	printf '%s|%s|%s|%s|%s|%s|%s|%s\n' "${frames[$i]}" "${line#*|}${m:+ -M $m}${rd:+ -initrd $rd}$lx" \
		"${job_exits[$i]}" "${job_timeout[$i]}" "${job_mparam[$i]}" "${2:-${job_image[$i]}}" \
		"${job_load[$i]}" "${job_append[$i]}"
}

# Prints "name|cpu flags|smp|extra args" for one preset of presets.conf.
preset_line() {
	awk -F'|' -v want="$1" '
		/^[ \t]*(#|$)/ { next }
		{ for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i) }
		# smp "host" (one vCPU a host core): the two CPUs of the outer VM here.
		$1 == want { print $1 "|" $2 "|" ($3 == "host" ? 2 : $3) "|" $4; found = 1; exit }
		END { exit !found }' "$conf"
}

# Writes the outer VM's init. It runs under busybox ash, prints only framed
# lines or lines starting "@@@ ", "outer-dmesg: " or "outer-trace: " (a
# frame's last exits after a reset, its vCPUs' state near its bound), and
# always powers off.
write_init() {
	cat >"$1" <<'EOF'
#!/bin/sh
# Generated by host/lane/lane.sh: the outer VM's init.
export PATH=/bin:/usr/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
set -f
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
# Uptime in centiseconds, for the phase timings.
cs() { read -r u _ </proc/uptime; echo $((${u%.*} * 100 + 1${u#*.} - 100)); }
secs() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }
fail() { echo "@@@ lane-error $*"; dmesg | tail -n 20 | sed 's/^/outer-dmesg: /'; sleep 2; poweroff -f; }
t=$(cs)
echo "@@@ lane-info outer-boot $(secs "$t")s"
# No modules.dep: insmod in dependency order (prepare.sh checked it).
# load_kvm MP MODULE...: --module-param M.P=V (MP; empty: none): that
# module loads with P=V (kvm_amd's file is kvm-amd.ko), and what it
# granted is reported (read back).
load_kvm() {
	mp=$1
	shift
	for m in "$@"; do
		arg=
		[ -n "$mp" ] && [ "${mp%%.*}" = "$(echo $m | tr - _)" ] && arg=${mp#*.}
		insmod /lane/modules/$m.ko $arg || fail "insmod $m.ko $arg failed (no SVM in the outer CPU?)"
	done
	if [ -n "$mp" ]; then
		f=/sys/module/${mp%%.*}/parameters/$(echo "${mp#*.}" | cut -d= -f1)
		echo "@@@ lane-info module-param $mp got $(cat "$f" 2>/dev/null || echo '?')"
		dmesg | grep -iE 'avic|apicv' | tail -n 3 | sed 's/^/@@@ lane-info module-log /'
		case "$mp" in
		kvm_amd.avic=*)
			grep -qw avic /proc/cpuinfo ||
				echo "@@@ lane-info module-why the CPU has no AVIC (CPUID 0x8000000A EDX[13])" ;;
		kvm_amd.vnmi=*)
			grep -qw vnmi /proc/cpuinfo ||
				echo "@@@ lane-info module-why the CPU has no virtual NMI (CPUID 0x8000000A EDX[25])" ;;
		esac
	fi
	[ -c /dev/kvm ] || fail "no /dev/kvm after loading kvm-amd (does the outer CPU have SVM?)"
}
mp_now=$(cat /lane/module-param)
load_kvm "$mp_now" irqbypass ccp kvm kvm-amd
now=$(cs)
echo "@@@ lane-info modules $(secs $((now - t)))s"
dmesg | grep -iE 'kvm|svm' | sed 's/^/outer-dmesg: /'
dmesg -c >/dev/null
# Keep kernel messages out of the frames; they are printed after each one.
echo 1 >/proc/sys/kernel/printk
# Every KVM exit goes to the trace ring (the newest few thousand are kept):
# after a guest reset it tells a triple fault of the guest from the outer
# TCG's known SVM fault (see host-rip.sh).
# The events are kvm's: they go with the module and come back off when a
# frame's module parameter loads it again (reload_kvm), so trace_kvm and
# trace_exits run again then.
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null && echo 256 >$T/buffer_size_kb || T=
trace_kvm() {
if [ -n "$T" ] && echo 1 >$T/events/kvm/kvm_exit/enable; then
	echo "@@@ lane-info trace kvm_exit"
	# And what KVM injects: a reset that comes with no SHUTDOWN exit (seen
	# in hv-xmm's flush frames) is KVM's own triple fault, and the
	# exceptions it injected before it say which path made it (a fault
	# while delivering a #DF, say). Rare otherwise: a few in the negative
	# frames' expected #GP and #UD, and reset.x2apic's #UD, reinjected
	# before its SHUTDOWN exit.
	echo 1 >$T/events/kvm/kvm_inj_exception/enable 2>/dev/null &&
		echo "@@@ lane-info trace-also kvm_inj_exception"
else
	T=
	echo "@@@ lane-info trace unavailable: a guest reset cannot be explained"
fi
}
trace_kvm
# --exits: the events exit accounting reads, those this kernel has, in an
# instance of their own (the ring above stays for the reset check); the
# missing ones are named, not silently dropped (host/ipibench/kvmhost/trace.py). The
# per-exit events are recorded only inside the guest's marker windows: a
# begin marker's port write (port 0xed, even value) switches them on, the
# guest's next console output (a COM1 port exit, or the virtio console's
# notify, at a PCI I/O port: SeaBIOS puts them from 0xc000; SVM_EXIT_IOIO =
# 0x7b, the port in info1 bits 31:16) off again, in the kernel. Outside the windows
# the default plan makes some twenty times the exits it makes inside (its
# ipibench_benchmark part has no markers), and every one of them would
# cross the serial line as text.
exits=$(cat /lane/exits)
trace_exits() {
X=
if [ "$exits" = 1 ] && [ -n "$T" ] && { [ -d $T/instances/exits ] || mkdir $T/instances/exits 2>/dev/null; } &&
	echo 65536 >$T/instances/exits/buffer_size_kb; then
	X=$T/instances/exits
	E=$X/events/kvm
	# The guest's console (COM1, 0x3f8-0x3ff: a port exit a character; the
	# virtio console's notify, a PCI I/O port from 0xc000: one a print; all
	# outside the measured windows) would swamp the serial line that
	# carries the trace out: filtered in the kernel, and said so.
	echo 'exit_reason != 123 || ((info1 < 0x3f80000 || info1 >= 0x4000000) && info1 < 0xc0000000)' \
		>$E/kvm_exit/filter
	echo '(port < 0x3f8 || port > 0x3ff) && port < 0xc000' >$E/kvm_pio/filter
	# The PIT's line only: the guest stops the PIT after calibration, and
	# judge_exits.py wants it silent through the regions (kernel/pit.c).
	[ ! -d $E/kvm_set_irq ] || echo 'gsi == 0' >$E/kvm_set_irq/filter
	have= missing=
	# Always on: the markers, the APICv/AVIC state changes and the events
	# that are rare (AVIC's, which TCG's SVM lacks; the Hyper-V calls'
	# own, one a send or flush) or that kvmhost/trace_read.py reads only inside a
	# window (kvm_vcpu_wakeup); GSI 0's injections (kvm_set_irq, the PIT).
	for e in kvm_pio kvm_apicv_inhibit_changed kvm_apicv_update_request kvm_avic_ga_log kvm_pi_irte_update \
		kvm_hv_send_ipi kvm_hv_send_ipi_ex kvm_hv_flush_tlb kvm_hv_flush_tlb_ex \
		kvm_avic_incomplete_ipi kvm_avic_unaccelerated_access kvm_avic_kick_vcpu_slowpath \
		kvm_vcpu_wakeup kvm_set_irq; do
		if [ -d $E/$e ] && echo 1 >$E/$e/enable; then
			have="$have $e"
		else
			missing="$missing $e"
		fi
	done
	# Inside the windows only. ">>": writing a trigger file with O_TRUNC
	# would remove the triggers already there.
	# A begin marker's port write (even, and not a round trip's region-end
	# word 0xfffffffe, which every iteration writes, warm-up included)
	# switches them on; the guest's
	# next console output, its first COM1 or virtio console port exit after
	# the window, switches them off: the guest prints after each sampling, never inside
	# one. (Not the end marker: only kvm_pio carries the value, and an
	# event takes one enable or disable trigger per target, a second is
	# EEXIST; nor any exit at port 0xed, which would close the window at a
	# round trip's region mark, 0xfffffffe, and lose the other vCPU's exits
	# around it.) What comes between the end marker and that output is
	# outside every window: kvmhost/trace_read.py ignores it.
	# Few of them: each is a trigger that every exit inside a window
	# evaluates; with fourteen gated, a target's IPI took 3 ms to arrive
	# (median of 100), with these six 0.05 ms, as with none.
	for e in kvm_exit kvm_entry kvm_msr kvm_hypercall kvm_hv_hypercall kvm_apicv_accept_irq; do
		if [ -d $E/$e ] &&
			echo "disable_event:kvm:$e if exit_reason == 123 && ((info1 >= 0x3f80000 && info1 < 0x4000000) || info1 >= 0xc0000000)" \
				>>$E/kvm_exit/trigger &&
			echo "enable_event:kvm:$e if port == 0xed && !(val & 1) && val != 0xfffffffe" \
				>>$E/kvm_pio/trigger; then
			have="$have $e"
		else
			missing="$missing $e"
		fi
	done
	echo "@@@ lane-info exit-events traced:$have; not on this kernel:${missing:- none}"
	echo "@@@ lane-info exit-filter console port exits (COM1 0x3f8-0x3ff, PCI I/O from 0xc000) not traced; exits traced inside marker windows only"
	# What the L1 host's KVM allows, for the APICv/AVIC line (host/ipibench/kvmhost/apicv.py).
	params=
	for p in kvm_amd/avic kvm_amd/npt kvm_amd/nested kvm/halt_poll_ns; do
		[ -r /sys/module/$p ] || [ -r /sys/module/${p%/*}/parameters/${p#*/} ] &&
			params="$params ${p%/*}.${p#*/}=$(cat /sys/module/${p%/*}/parameters/${p#*/})"
	done
	echo "@@@ lane-info kvm-params$params"
elif [ "$exits" = 1 ]; then
	echo "@@@ lane-info exit-events unavailable: no tracefs instance for them"
fi
}
trace_exits
# reload_kvm MP: a frame's own module parameter (lane.sh --job's
# module-param=, empty for the defaults): kvm-amd and kvm are unloaded and
# loaded again with it, as at boot, so that a parameter read only at load
# time (kvm_amd.avic, kvm_amd.vnmi) counts as a fresh outer boot's would,
# for a second or two instead of an outer boot's ten; then tracing again,
# on the events the module brought back. Printed before the frame's begin
# marker: its preamble (tests/kvm-lane/replay-lane.sh hands it to run.sh
# with the frame).
reload_kvm() {
	# An event trigger that switches another event holds that event's
	# module: trace_exits' go first.
	if [ -n "$X" ]; then
		for e in kvm_exit kvm_entry kvm_msr kvm_hypercall kvm_hv_hypercall kvm_apicv_accept_irq; do
			echo "!disable_event:kvm:$e" >>$E/kvm_exit/trigger 2>/dev/null
			echo "!enable_event:kvm:$e" >>$E/kvm_pio/trigger 2>/dev/null
		done
	fi
	rmmod kvm_amd kvm || fail "rmmod kvm_amd kvm failed: $(cat /proc/modules | grep '^kvm')"
	load_kvm "$1" kvm kvm-amd
	mp_now=$1
	dmesg -c >/dev/null
	trace_kvm
	trace_exits
}
# Each job: its frame name, the preset's -cpu flags, -smp and extra
# arguments, whether it is traced, its inner bound and the guest's command
# line (/lane/jobs, one a line).
# $extra is split on blanks on purpose (presets.conf has no quoting; set -f
# above keeps it from globbing).
# KILL, not TERM: QEMU exits 0 on SIGTERM, which would read as a guest reset;
# this way 137 means the bound ran out and nothing else.
# kvm-apic.vapic=off: no kvmvapic, so KVM does not report TPR writes to user
# space; each such report, with the vCPU state read and written back around
# it, came right before the resets the outer TCG caused (README.md).
# comms DIR: "ID NAME" for each process or thread under DIR (/proc, or
# /proc/PID/task), from its comm file; one that ended meanwhile is left out.
comms() {
	local id comm
	for id in $(ls "$1" 2>/dev/null); do
		case "$id" in *[!0-9]*) continue ;; esac
		read -r comm 2>/dev/null <"$1/$id/comm" && echo "$id $comm"
	done
}

# pin_vcpus PID N: pins the inner QEMU's N vCPU threads ("CPU i/KVM",
# named by -name debug-threads=on) each to L1 CPU i, once QEMU has made
# them (within 100 tries, long before the guest has booted), when L1 has a
# CPU for each, and makes CPU 0 the housekeeping CPU: QEMU's other threads
# go there (and run_preset puts the console copier and the VM's kvm-pit
# worker there), beside vCPU 0, the sender of every benchmark, which spins
# while it waits. A guest with more vCPUs than L1 has CPUs is left to L1's
# scheduler, which can still move a busy vCPU away from an idle one.
# Why: KVM polls a halted vCPU only while nothing else is runnable on its
# CPU (kvm_vcpu_can_poll(): single_task_running() and !need_resched()).
# Left to L1's scheduler, the two vCPU threads of a 2-vCPU guest shared one
# of L1's two CPUs for whole samplings now and then (a halted target's
# thread hardly loads its CPU), and the copier's children, QEMU's main loop
# and kvm-pit were woken on the CPU where the target had just blocked, as
# it looked idle: the target's polling ended at once, and its wakes came
# after a block whatever kvm.halt_poll_ns was. Probably the same sharing
# once left debug=stall's report waiting behind the spinning vCPU.
# Evidence: unpinned, the halt-poll ab read b1.00 in a CI run, and a
# kvm_halt_poll_ns trace showed 0.8 ms halts blocking under a 4 ms window
# with both vCPU threads on CPU 0; with the vCPUs alone pinned, a CI run
# had 50 halts of 0.4-0.8 ms in a row blocking, and a sched_switch trace
# of the target's CPU showed the copier's children, QEMU's main thread,
# kvm-pit and rcu_preempt there. Per-CPU kworkers still end a poll now
# and then. (hv-xmm-4's 4 vCPUs on L1's 2 CPUs: QEMU also warns that 4
# exceeds the recommended vCPU count, two lines in its frame's log.) Prints
# what it did; sets $hk, the housekeeping CPU's mask, or leaves it empty.
# (ls, not a glob: this init runs under set -f.)
pin_vcpus() {
	local n=0 tries=0 pinned= others=0 l1 tid comm i mask
	hk=
	l1=$(nproc)
	if [ "$2" -gt "$l1" ]; then
		echo "@@@ lane-info vcpu-pin none: $2 vCPUs on $l1 L1 CPUs, left to L1's scheduler"
		return
	fi
	while [ "$n" -lt "$2" ] && [ "$tries" -lt 100 ]; do
		if ! kill -0 "$1" 2>/dev/null; then
			echo "@@@ lane-info vcpu-pin none: QEMU ended first"
			return
		fi
		n=$(comms /proc/$1/task | grep -c ' CPU [0-9]*/KVM$')
		[ "$n" -ge "$2" ] || { tries=$((tries + 1)); sleep 0.05; }
	done
	if [ "$n" -lt "$2" ]; then
		echo "@@@ lane-info vcpu-pin none: $n of $2 vCPU threads after $tries tries"
		return
	fi
	hk=1
	while read -r tid comm; do
		case "$comm" in
		"CPU "*/KVM)
			i=${comm#CPU } && i=${i%/KVM}
			# taskset's mask is hexadecimal.
			mask=$(printf %x $((1 << i)))
			if taskset -p "$mask" "$tid" >/dev/null 2>&1; then
				pinned="$pinned $i:$i"
			else
				pinned="$pinned $i:failed"
			fi ;;
		*) taskset -p "$hk" "$tid" >/dev/null 2>&1 && others=$((others + 1)) ;;
		esac
	done <<TASKS
$(comms /proc/$1/task)
TASKS
	echo "@@@ lane-info vcpu-pin vCPU:L1-CPU$pinned; housekeeping on L1 CPU 0: $others other threads"
}

# pin_kthread NAME MASK: the processes named NAME (kernel threads among
# them) to the CPUs of MASK; prints how many it moved.
pin_kthread() {
	local p comm n=0
	while read -r p comm; do
		[ "$comm" = "$1" ] && taskset -p "$2" "$p" >/dev/null 2>&1 && n=$((n + 1))
	done <<TASKS
$(comms /proc)
TASKS
	echo "$n"
}

# The statistics a host read asks for: the list of host/ipibench/kvmhost/hoststats.py
# (NAMES; tests/host/test_hoststats.py checks that the two agree).
HOST_READ_NAMES='"halt_successful_poll","halt_attempted_poll","halt_poll_invalid","halt_wakeup","halt_poll_success_ns","halt_poll_fail_ns","halt_wait_ns","halt_wait_hist","halt_exits","exits","irq_exits"'

# qmp_reply ID: the QMP reply to the command sent with "id": ID, read from
# fd 9 (events and replies to earlier commands that came after their 10 s
# passed over) in $r, or an error of our own after 10 s.
qmp_reply() {
	while read -t 10 -r r <&9; do
		case "$r" in *'"id": '"$1"'}'*) return 0 ;; esac
	done
	r='{"error":{"desc":"no reply from QMP within 10 s"}}'
}

# host_reads QPID: answers the guest's host reads (host_stats=1,
# kernel/host_read.c) as run.sh does (host/ipibench/kvmhost/hoststats.py,
# Answerer): at each edge line of the console, every vCPU's KVM statistics
# (QMP query-stats, over a pipe chardev: busybox has no UNIX-socket client)
# go to /tmp/frame.stats, then one byte to COM2's FIFO, which the guest
# waits on. It reads the console file line by line as it grows, and waits
# between looks with read -t on QMP's output (quiet between commands): no
# fork in the loop, which under the outer TCG cost a fork's 10 ms of L1 CPU
# each time (85 CPU-s more for the lane's suite with grep every 50 ms).
host_reads() {
	local q=$1 line part= r i n=0 letters=ABCDEFGHIJKLMNOPQRSTUVWXYZ
	exec 7</tmp/frame.console 8<>/tmp/qmp.in 9<>/tmp/qmp.out
	read -t 10 -r r <&9 # the greeting
	echo '{"execute":"qmp_capabilities","id":1}' >&8
	qmp_reply 1
	echo '{"execute":"query-cpus-fast","id":2}' >&8
	qmp_reply 2
	echo "@@@ host-read-cpus $r" >>/tmp/frame.stats
	while kill -0 "$q" 2>/dev/null; do
		if ! IFS= read -r line <&7; then
			# At the end of what QEMU wrote so far: keep the part of a
			# line read, wait 50 ms for more.
			part=$part$line
			read -t 0.05 -r r <&9
			continue
		fi
		line=$part$line
		part=
		case "$line" in
		"@@@ host-read "*" go"*) ;;
		*) continue ;;
		esac
		set -- $line
		# A garbled line (QEMU's stderr goes to the same file) is not an edge.
		case "$3" in begin | end) ;; *) continue ;; esac
		case "$4" in '' | *[!0-9]*) continue ;; esac
		case "$5" in cpu=[0-9]*) ;; *) continue ;; esac
		n=$((n + 1))
		echo '{"execute":"query-stats","arguments":{"target":"vcpu","providers":[{"provider":"kvm","names":['"$HOST_READ_NAMES"']}]},"id":'$((n + 2))'}' >&8
		qmp_reply $((n + 2))
		echo "@@@ host-read-stats $3 $4 ${5#cpu=} $r" >>/tmp/frame.stats
		# The byte that names this edge (kernel/host_read.c); the FIFO
		# opened read-write, which never waits, even with QEMU gone.
		i=$((2 * $4))
		[ "$3" != end ] || i=$((i + 1))
		i=$((i % 26))
		printf %s "${letters:$i:1}" 1<>/tmp/hostread.in
	done
	exec 7<&- 8>&- 9<&-
}

# hang_facts QEMU_PID: where a frame's vCPUs are as it nears its bound: each
# vCPU thread's state, wait channel and kernel stack, and the last exits of
# the reset ring. A frame killed at its bound says nothing else ("Killed"),
# and such a hang (one in a few hundred frames on a loaded host) is the
# guest's, KVM's, the inner QEMU's or the outer emulator's: these tell which.
hang_facts() {
	local d c tid
	echo "@@@ lane-info hang-facts: the frame nears its bound; its vCPU threads and last exits"
	for tid in $(ls /proc/$1/task 2>/dev/null); do	# no glob: init runs under set -f
		d=/proc/$1/task/$tid
		read -r c <"$d/comm" 2>/dev/null || continue
		case "$c" in "CPU "*"/KVM") ;; *) continue ;; esac
		# stat's third field, after the comm's ")": the comm has spaces.
		echo "outer-trace: $c: state $(sed 's/.*) //; s/ .*//' "$d/stat" 2>/dev/null) wchan $(cat "$d/wchan" 2>/dev/null)"
		head -n 12 "$d/stack" 2>/dev/null | sed "s|^|outer-trace: $c: |"
	done
	[ -z "$T" ] || grep ' kvm_exit: ' $T/trace | tail -n 12 | sed 's/^ */outer-trace: /'
}

# run_preset NAME CPU SMP EXTRA TRACED BOUND ARGS: one framed inner boot;
# sets $st.
# A frame beside load (the job option load): a CPU hog on every L1 CPU and
# a second QEMU under KVM that boots the image over and over, as a busy
# host's other tenants would; and only this frame's QEMU traced
# (set_event_pid: its threads, then the in-kernel PIT's), so that the
# other VM's exits are not read as this one's targets'.
start_load() {
	loadpids= i=0
	while [ "$i" -lt "$(nproc)" ]; do
		( while :; do :; done ) &
		taskset -p "$(printf %x $((1 << i)))" $! >/dev/null 2>&1
		loadpids="$loadpids $!" i=$((i + 1))
	done
	(
		while :; do
			qemu-system-x86_64 -accel kvm -cpu host -smp 2 -m 64M -nodefaults -display none \
				-no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$kernel" \
				-append "plan=bench bench=send-cost,self console=serial" </dev/null >/dev/null 2>&1 &
			echo $! >/tmp/load.qemu
			wait $!
		done
	) &
	loadpids="$loadpids $!"
	echo "@@@ lane-info load: $i CPU hogs and a second QEMU beside $1"
}
stop_load() {
	# The loop first, so that it starts no other QEMU.
	kill $loadpids 2>/dev/null
	[ ! -s /tmp/load.qemu ] || kill -9 "$(cat /tmp/load.qemu)" 2>/dev/null
	wait $loadpids 2>/dev/null
	rm -f /tmp/load.qemu
	[ -z "$X" ] || echo >$X/set_event_pid
	[ -z "$T" ] || echo >$T/set_event_pid
}
# trace_only PID: this QEMU's threads, and its PIT's once QEMU made it, in
# the exits instance and in the reset ring: the other VM's exits would
# otherwise fill the ring too (some thousands of events a CPU), and its
# last lines, printed after a reset, would be that VM's, not this one's.
trace_only() {
	local tids r
	[ -n "$X$T" ] || return 0
	tids=$(ls /proc/$1/task | while read -r tid; do printf '%s ' "$tid"; done)
	for r in $X $T; do echo "$tids" >$r/set_event_pid; done
	n=0
	while [ "$n" -lt 20 ]; do
		while read -r p comm; do
			[ "$comm" != "kvm-pit/$1" ] || {
				for r in $X $T; do echo "$p" >>$r/set_event_pid; done
				return 0
			}
		done <<TASKS
$(comms /proc)
TASKS
		n=$((n + 1))
		sleep 0.1
	done
}
run_preset() {
	t=$(cs)
	[ -z "$T" ] || echo >$T/trace
	traced=
	if [ -n "$X" ]; then
		echo >$X/trace
		# Only a traced job's exits are kept (and sent).
		[ "$5" = 1 ] && traced=1
		echo "${traced:-0}" >$X/tracing_on
	fi
	echo "@@@ lane-begin $1"
	# The guest's console (and QEMU's messages) go to a file, and from
	# there to the outer console in what has come each half second: QEMU
	# writes each byte the guest sends with a write of its own, which on
	# the tty cost L1 a trip through the 8250 driver and its interrupt a
	# byte (a frame 15-20% faster so). A frame cut short loses at most the
	# last half second of its console. The copier runs at nice 19, so that
	# L1's load balancer hardly counts it: once, with the copier at nice 0,
	# debug=stall's report (printed by the vCPU that is not spinning with
	# IF=0) took 240 s instead of 10, as if that vCPU's thread had been
	# moved onto the L1 CPU running the spinning one and starved there.
	: >/tmp/frame.console
	: >/tmp/frame.stats
	# Host reads (host_stats=1 in the guest's command line): COM2 and QMP
	# on pipe chardevs, whose FIFOs host_reads uses.
	hr=
	case " $7 " in
	*" host_stats=1 "*)
		rm -f /tmp/hostread.in /tmp/hostread.out /tmp/qmp.in /tmp/qmp.out
		mkfifo /tmp/hostread.in /tmp/hostread.out /tmp/qmp.in /tmp/qmp.out &&
			hr="-chardev pipe,id=hostread,path=/tmp/hostread -serial chardev:hostread
				-chardev pipe,id=qmp,path=/tmp/qmp -mon chardev=qmp,mode=control" ;;
	esac
	# The console: COM1 and, where the machine has PCI, a virtio console,
	# both on one chardev (mux). Each byte to COM1 is an exit to this QEMU
	# and some 150 us of the frame's time (a frame's console was half of
	# the lane's time); the guest sends whole lines to the virtio console
	# (kernel/console.c), one exit each: flush.hv-xmm's 83 KB went from
	# 17.1 s to 1.6 s, the kvm-lane group from 205 s to 116 s (264 to 146
	# CPU-s); help=1's 2 KB had taken 0.3 s on COM1. ioeventfd=off: the
	# notify is handled before its exit returns, so the guest's wait for
	# the used ring ends at once.
	vcon="-device virtio-serial-pci,disable-legacy=off,ioeventfd=off -device virtconsole,chardev=con"
	# Lost PIT ticks discarded, as run.sh gives every KVM boot (host/ipibench/boot/qemu.py,
	# PIT_DISCARD): QEMU's default keeps KVM's PIT reinjecting, which inhibits
	# AVIC for the VM's life (APICV_INHIBIT_REASON_PIT_REINJ); unless the
	# preset sets a policy itself. microvm has no PIT.
	pit="-global kvm-pit.lost_tick_policy=discard"
	case " $4 " in *" -M microvm"*) vcon= pit= ;; *lost_tick_policy*) pit= ;; esac
	[ "$8" != 1 ] || start_load "$1"
	timeout -s KILL "$6" qemu-system-x86_64 -accel kvm -cpu "host${2:+,$2}" \
		-smp "$3" -m 128M -nodefaults -display none -no-reboot -name ipibench,debug-threads=on \
		-chardev file,id=con,path=/tmp/frame.console,append=on,mux=on -serial chardev:con $vcon $hr \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -global kvm-apic.vapic=off $pit $4 \
		-kernel "$kernel" -append "$7" </dev/null >>/tmp/frame.console 2>&1 &
	qpid=$!
	hpid=
	if [ -n "$hr" ]; then
		host_reads $qpid &
		hpid=$!
	fi
	pin_vcpus $qpid "$3"
	[ "$8" != 1 ] || trace_only $qpid
	[ -z "$hpid" ] || [ -z "$hk" ] || taskset -p "$hk" $hpid >/dev/null 2>&1
	# 3 s before the bound's SIGKILL (busybox timeout execs QEMU: $qpid is QEMU's).
	( sleep $(($6 > 6 ? $6 - 3 : 3)); kill -0 $qpid 2>/dev/null && hang_facts $qpid ) &
	wpid=$!
	# The copier reads the file through one descriptor, whose offset keeps
	# its place: a cat each half second, two forks with the sleep (under
	# TCG a fork and exec of busybox costs some 10 ms of L1's time).
	(
		exec 4</tmp/frame.console
		look=4
		while kill -0 $qpid 2>/dev/null; do
			sleep 0.5
			cat <&4 >&2
			# QEMU creates the PIT after the vCPU threads, so it is
			# sought here, in the first two seconds (microvm has none).
			if [ -n "$hk" ] && [ "$look" -gt 0 ]; then
				look=$((look - 1))
				[ "$(pin_kthread "kvm-pit/$qpid" "$hk")" = 0 ] || look=0
			fi
		done
		cat <&4 >&2
	) &
	cpid=$!
	renice -n 19 -p $cpid >/dev/null 2>&1
	[ -z "$hk" ] || taskset -p "$hk" $cpid >/dev/null 2>&1
	wait $qpid
	st=$?
	[ "$8" != 1 ] || stop_load
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	wait $cpid
	[ -z "$hpid" ] || wait $hpid
	cat /tmp/frame.stats >&2
	now=$(cs)
	echo "@@@ lane-end $1 status=$st time=$(secs $((now - t)))s"
	dmesg -c | sed 's/^/outer-dmesg: /'
	if [ -n "$traced" ]; then
		# What the ring overwrote (none, unless the guest made millions of
		# exits inside its windows): host/ipibench/kvmhost/trace.py says so.
		lost=$(cat $X/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }')
		# The serial line carries some 400 KB/s here, and each byte costs
		# the host a system call or two; the trace's text shrinks some 20
		# times under gzip, which takes a tenth of a second a megabyte even
		# in TCG. base64 keeps it to printable lines.
		echo "@@@ lane-trace-begin $1 gzip-base64"
		{
			echo "# ipibench-trace: windows-only"
			echo "# ipibench-trace: lost $lost"
			[ "$(cat $E/kvm_set_irq/enable 2>/dev/null)" != 1 ] || echo "# ipibench-trace: pit-traced"
			cat $X/trace
		} | gzip -c | base64 | sed 's/^/outer-trace64: /'
		echo "@@@ lane-trace-end $1"
	fi
}
# RCU's grace-period thread wakes every few ms; on L1 CPU 1, where a pinned
# target halts, each wake would end KVM's polling (pin_vcpus): it runs on
# the housekeeping CPU, 0.
pin_kthread rcu_preempt 1 >/dev/null
while IFS='|' read -r name cpu smp extra traced_job bound mparam kernel load args; do
	[ "$mparam" = "$mp_now" ] || reload_kvm "$mparam"
	run_preset "$name" "$cpu" "$smp" "$extra" "$traced_job" "$bound" "$args" "$load"
	# A reset: the last exits, then, if it has the outer emulator's
	# signature (host-rip.sh), or if no vCPU left the guest with a SHUTDOWN
	# exit (a guest's own triple fault is one, as reset.x2apic's is: this
	# reset was KVM's, seen in the flush frames under the outer TCG's SVM),
	# one more run, which the host side reports. Any other reset stands.
	if [ "$st" = 0 ] && [ -n "$T" ]; then
		grep ' kvm_exit: ' $T/trace | tail -n 4 | sed 's/^ */outer-trace: /'
		grep ' kvm_inj_exception: ' $T/trace | tail -n 4 | sed 's/^ */outer-trace: /'
		# The vCPU that shut down and the exits it made just before: a
		# reset that is neither the outer emulator's nor planted (a CI run
		# once lost suite.hv-xmm-4 so, beside three loaded boots) can then
		# be read after the fact.
		grep ' kvm_exit: .* reason shutdown ' $T/trace | tail -n 2 | sed 's/^ */outer-trace: /'
		v=$(grep ' kvm_exit: .* reason shutdown ' $T/trace | tail -n 1 | sed -n 's/.* vcpu \([0-9]*\) .*/\1/p')
		[ -z "$v" ] || grep " kvm_exit: vcpu $v " $T/trace | tail -n 12 | sed 's/^ */outer-trace: /'
		if sig=$(sh /lane/host-rip.sh /proc/modules $T/trace); then
			echo "@@@ lane-rerun $name host-rip=${sig% *} ${sig#* }"
			run_preset "$name" "$cpu" "$smp" "$extra" "$traced_job" "$bound" "$args" "$load"
		elif ! grep -q ' kvm_exit: .* reason shutdown ' $T/trace; then
			echo "@@@ lane-rerun $name no-shutdown-exit: the reset came with no SHUTDOWN exit"
			run_preset "$name" "$cpu" "$smp" "$extra" "$traced_job" "$bound" "$args" "$load"
		fi
	fi
done </lane/jobs
echo "@@@ lane-done"
# poweroff -f does not wait for the console: what is still in the tty buffer
# (the last frame's end marker, lane-done) would be lost, as a clean-clone
# run under load once showed. Give the serial line time to drain (lane.sh
# does not wait for it: it stops the outer VM once lane-done has come).
sync
sleep 2
poweroff -f
EOF
	chmod 755 "$1"
}

# The per-boot archive, appended to the cached base: the kernel unpacks
# concatenated newc archives in order, later files on top.
# build_initrd DIR INDEX...: the frames given by index; DIR/initrd.cpio.
# The jobs are written to $out/jobs too: what each outer boot ran.
build_initrd() {
	local dir=$1 i traced=0 img n=0
	local -A there=()
	shift
	rm -rf "$dir"
	mkdir -p "$dir/root/lane"
	write_init "$dir/root/init"
	# --image at /ipibench.elf (the path the guest's command line starts
	# with), a job's own image=, where another, under /images/N/.
	cp "$image" "$dir/root/ipibench.elf"
	there[$(realpath -m "$image")]=/ipibench.elf
	cp "$here/host-rip.sh" "$dir/root/lane/host-rip.sh"
	echo "$module_param" >"$dir/root/lane/module-param"
	: >"$dir/root/lane/jobs"
	for i in "$@"; do
		for img in "${job_image[$i]}" "${job_initrd[$i]}"; do
			if [ -z "$img" ] || [ -n "${there[$img]-}" ]; then continue; fi
			n=$((n + 1))
			mkdir -p "$dir/root/images/$n"
			cp "$img" "$dir/root/images/$n/" || die "cannot copy $img"
			there[$img]=/images/$n/$(basename "$img")
		done
		img=${job_initrd[$i]}
		frame_line "$i" "${there[${job_image[$i]}]}" "${img:+${there[$img]}}" >>"$dir/root/lane/jobs"
		frame_line "$i" >>"$out/jobs"
		[ "${job_exits[$i]}" = 0 ] || traced=1
	done
	echo "$traced" >"$dir/root/lane/exits"
	(cd "$dir/root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) \
		>"$dir/run.cpio"
	cat "$KVM_LANE_BASE" "$dir/run.cpio" >"$dir/initrd.cpio"
	rm -f "$dir/run.cpio"
}

status_name() {
	case "$1" in
	65) echo SUCCESS ;; 67) echo SKIP ;; 69) echo ERROR ;; 71) echo FAILURE ;;
	73) echo CRASH ;; 75) echo BAD-CMDLINE ;; 1) echo "QEMU failed" ;;
	0) echo "no exit byte: reset or shutdown" ;; 137) echo "timed out" ;;
	*) echo "unknown" ;;
	esac
}

# Seconds since the outer VM was started, host clock.
since_start() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%5.1fs", e - s }'; }

# Reads the outer console as it streams, appends it without carriage returns
# to outer.log and prints one progress line a phase, stamped with the host's
# time since the outer VM started. (A filter such as tr would hold the stream
# back in its stdio buffer until the end.)
show_progress() { # PIDFILE: the outer VM's, stopped once lane-done is here
	local line name st t f
	exec 3>>"$out/outer.log"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		printf '%s\n' "$line" >&3
		case "$line" in
		"@@@ lane-done")
			# Everything has come: no need to wait out the outer VM's
			# drain and power-off (2.5 s a boot).
			: >"$1.done"
			kill -TERM "$(cat "$1")" 2>/dev/null || true ;;
		"@@@ lane-info outer-boot "*)
			say "[$(since_start)] outer VM: init started, kernel up ${line##* }" ;;
		"@@@ lane-info modules "*)
			say "[$(since_start)] outer VM: /dev/kvm ready, modules took ${line##* }" ;;
		"@@@ lane-error "*) say "[$(since_start)] outer VM: ${line#@@@ lane-error }" ;;
		"@@@ lane-begin "*) say "[$(since_start)] ${line#@@@ lane-begin }: booting" ;;
		"@@@ lane-info trace "* | "@@@ lane-info exit-"* | "@@@ lane-info kvm-params"* | \
			"@@@ lane-info module-"*)
			say "[$(since_start)] outer VM: ${line#@@@ lane-info }" ;;
		"@@@ lane-rerun "*)
			read -r -a f <<<"${line#@@@ lane-rerun }"
			say "[$(since_start)] ${f[0]}: the outer TCG handed KVM a host RIP" \
				"(${f[1]#host-rip=}, in kvm_amd): not the guest's fault; once more" ;;
		*"@@@ lane-end "*)
			read -r -a f <<<"${line#*@@@ lane-end }"
			name=${f[0]} st=${f[1]#status=} t=${f[2]#time=}
			say "[$(since_start)] $name: status $st ($(status_name "$st")) in $t" ;;
		*"BUG: soft lockup"* | *"not syncing: softlockup"*)
			say "[$(since_start)] outer VM: ${line#*watchdog: }" ;;
		esac
	done
	exec 3>&-
}

# Splits outer.log into <frame>.log and <frame>.status. A guest that ends
# without a newline leaves the end marker mid-line: the text before it is log.
# A frame run again (lane-rerun) keeps its last run; outer.log has both. A
# frame the console left unfinished (a bound ran out, the outer kernel
# soft-locked) keeps its console so far and no status.
split_console() {
	local packed name
	awk -v dir="$out" '
		/^@@@ lane-begin / {
			name = $3; log_file = dir "/" name ".log"; open[name] = 1
			close(log_file); printf "" >log_file; close(log_file); next
		}
		/@@@ lane-end / {
			i = index($0, "@@@ lane-end ")
			if (name != "" && i > 1) print substr($0, 1, i - 1) >>log_file
			split(substr($0, i), f, " ")
			st = f[4]; sub(/^status=/, "", st)
			if (f[3] == name) {
				status_file = dir "/" name ".status"
				print st >status_file; close(status_file)
				open[name] = 0
			}
			name = ""; next
		}
		# lane.sh between two outer boots: what the first left unfinished
		# is not continued by the second (which starts the frame again).
		/^@@@ lane-rerun [^ ]* (soft-lockup|outer-oops)/ {
			if (trace_file != "") { close(trace_file); close(packed_file) }
			name = ""; trace_file = ""; next
		}
		/^@@@ lane-trace-begin / {
			# Text (outer-ftrace: lines, as lane.sh sent it before it
			# compressed the trace), or gzip in base64 (outer-trace64:).
			trace_file = dir "/" $3 ".trace"; close(trace_file); printf "" >trace_file
			packed_file = trace_file "64"; close(packed_file); printf "" >packed_file
			next
		}
		/^@@@ lane-trace-end / {
			close(trace_file); close(packed_file); trace_file = ""; next
		}
		trace_file != "" && /^outer-ftrace: / { print substr($0, 15) >>trace_file; next }
		trace_file != "" && /^outer-trace64: / { print substr($0, 16) >>packed_file; next }
		name != "" { print >>log_file }
		END { for (n in open) if (open[n]) print n }' "$out/outer.log" |
		while IFS= read -r name; do
			# Begun again and not ended: an earlier run's status is not its.
			rm -f "$out/$name.status"
		done
	for packed in "$out"/*.trace64; do
		[ -e "$packed" ] || continue
		# A trace cut short by the outer VM's bound decodes as far as it
		# got (gzip then complains, and says so).
		if [ -s "$packed" ] && ! base64 -d <"$packed" 2>/dev/null | gzip -dc >>"${packed%64}" 2>/dev/null; then
			# Most likely mid-line: the note goes on a line of its own.
			[ -z "$(tail -c 1 "${packed%64}")" ] || echo >>"${packed%64}"
			echo "# ipibench-trace: cut short (the outer VM stopped sending it)" >>"${packed%64}"
		fi
		rm -f "$packed"
	done
}

# ", running preset NAME" (or frame) when the console stopped inside a frame,
# or ", sending the trace of preset NAME" inside its trace.
running_preset() {
	awk '/^@@@ lane-begin / { n = $3 } /@@@ lane-end / { n = "" }
		/^@@@ lane-trace-begin / { t = $3 } /^@@@ lane-trace-end / { t = "" }
		END { w = (n t) ~ /\./ ? "frame" : "preset"
			if (n != "") printf ", running %s %s", w, n
			else if (t != "") printf ", sending the trace of %s %s", w, t }' "$out/outer.log"
}

# run_outer DIR BOUND N: one outer boot of DIR/initrd.cpio (N frames); its
# console is appended to outer.log. Returns QEMU's status (timeout's 124
# past the bound).
run_outer() {
	start=$(date +%s.%N)
	say "outer VM: booting ($3 frames, bound $2s)"
	# softlockup_panic: an L1 CPU stuck in KVM (seen in hv-xmm's flush
	# hypercalls) ends the outer VM 20 s on, not at the bound; lane.sh
	# then boots it once more (README.md). tsc=reliable: TCG's TSC is one
	# clock for every vCPU, but on a loaded host the clocksource watchdog
	# saw the HPET read late, called the TSC unstable and moved the L1
	# kernel (and KVM's master clock) to the HPET, an emulated MMIO read
	# per clock read. mitigations=off: a throwaway VM's kernel, whose
	# entry and exit paths every inner exit crosses twice. noirqdebug: on a
	# loaded host the emulated UART's IRQ 4 came often with nothing pending,
	# the kernel disabled it as spurious and its KERN_EMERG line cut a
	# guest's record in two on the console. initcall_blacklist: the
	# built-in SP800-108 KDF's self-test (crypto_kdf108_init, HMAC-SHA256
	# under TCG) took 1.0 s of every outer boot's 4.6 s to init
	# (initcall_debug), for a KDF that nothing here uses; cryptomgr.notests
	# does not skip it. The rest (certificates 0.12 s, ACPI 0.1 s, many
	# small steps) has nothing cheap left to cut.
	run_piped "$1" show_progress \
		timeout -k 5 "$2" "${KVM_LANE_OUTER:-qemu-system-x86_64}" -accel tcg,thread=multi \
		-cpu max -smp 2 -m 2G -nodefaults -display none -serial stdio -no-reboot \
		-kernel "$KVM_LANE_KERNEL" -initrd "$1/initrd.cpio" \
		-append "console=ttyS0 quiet panic=-1 softlockup_panic=1 tsc=reliable mitigations=off noirqdebug initcall_blacklist=crypto_kdf108_init"
}

# unfinished FIRST INDEX...: of the frames given by index, those (their
# indices) the console from line FIRST on did not finish: no end marker
# after their last begin (or run again after it), or, traced, no end of
# their trace.
unfinished() {
	local first=$1 i
	shift
	tail -n +"$first" "$out/outer.log" | awk '
		/^@@@ lane-begin / { s[$3] = "begun"; next }
		/@@@ lane-end / { i = index($0, "@@@ lane-end "); split(substr($0, i), f, " ")
			if (s[f[3]] == "begun") s[f[3]] = "ended"; next }
		/^@@@ lane-trace-end / { if (s[$3] == "ended") s[$3] = "traced"; next }
		/^@@@ lane-rerun / { s[$3] = "again" }
		END { for (n in s) print n, s[n] }' >"$tmp/states"
	for i in "$@"; do
		case "$(awk -v n="${frames[$i]}" '$1 == n { print $2 }' "$tmp/states")" in
		traced) ;;
		ended) [ "${job_exits[$i]}" = 1 ] && echo "$i" ;;
		*) echo "$i" ;;
		esac
	done
}

# lane_done FIRST: the console from line FIRST on has the lane's last line.
# (Not tail | grep -q: under pipefail, grep leaving at the match while tail
# still writes the line after it, QEMU's own, fails the pipe with SIGPIPE;
# a clean-clone run once read a finished lane as stopped so.)
lane_done() {
	awk -v first="$1" 'NR >= first && /^@@@ lane-done$/ { done = 1 } END { exit !done }' \
		"$out/outer.log"
}

check_frames() {
	local name missing=0
	for name in "${frames[@]}"; do
		if [ ! -f "$out/$name.status" ]; then
			echo "kvm-lane: error: frame $name: no complete frame in $out/outer.log" >&2
			missing=1
		fi
	done
	[ "$missing" -eq 0 ] || exit 1
}

main() {
	local rc=0 name i first bound lockup boot=1 pending=() again=()
	parse_args "$@"
	if [ -n "$resplit" ]; then
		out=$resplit
		split_console
		exit 0
	fi
	parse_jobs
	[ ${#frames[@]} -gt 0 ] || die "no presets"
	if [ "$dry_run" = 1 ]; then
		for i in "${!frames[@]}"; do
			frame_line "$i" | cut -d'|' -f2-5,7-
		done
		exit 0
	fi
	if [[ " ${job_exits[*]} " == *" 1 "* ]]; then
		if ! command -v base64 >/dev/null || ! command -v gzip >/dev/null; then
			die "--exits needs base64 and gzip on the host (coreutils, gzip)"
		fi
	fi
	# KVM_LANE_PREPARED=1: the caller ran prepare.sh itself moments ago
	# (lane-test.sh), and its check of the cache hashes some 80 MB again.
	[ "${KVM_LANE_PREPARED-}" = 1 ] && [ -f "$cache/base.env" ] || "$here/prepare.sh" || rc=$?
	[ "$rc" -eq 0 ] || exit "$rc"
	# shellcheck source=/dev/null
	. "$cache/base.env"
	mkdir -p "$out" "$cache"
	rm -f "$out/outer.log" "$out/jobs"
	: >"$out/outer.log"
	for name in "${frames[@]}"; do
		rm -f "$out/$name.log" "$out/$name.status" "$out/$name.trace" "$out/$name.trace64"
	done
	tmp=$(mktemp -d "$cache/run.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	for i in "${!frames[@]}"; do pending+=("$i"); done
	while :; do
		echo "# outer boot $boot (image $image): frame|cpu|smp|extra|traced|inner bound|module param|image|load|command line" >>"$out/jobs"
		build_initrd "$tmp/boot$boot" "${pending[@]}"
		bound=${timeout:-$((60 + 120 * ${#pending[@]}))}
		first=$(($(wc -l <"$out/outer.log") + 1))
		rc=0
		run_outer "$tmp/boot$boot" "$bound" "${#pending[@]}" || rc=$?
		rm -rf "${tmp:?}/boot$boot"
		# The outer kernel soft-locked (its watchdog's message, on the
		# console at any log level): the rest of the lane runs in a fresh
		# outer VM, once.
		# (Cut into by the guest's console, the panic's line still says it.)
		lockup=$(tail -n +"$first" "$out/outer.log" |
			grep -m 1 -o -E 'BUG: soft lockup.*|not syncing: softlockup.*' || true)
		kind=soft-lockup
		if [ -z "$lockup" ]; then
			# The outer kernel's own oops (not the guest's: the guest runs in L2).
			lockup=$(tail -n +"$first" "$out/outer.log" |
				grep -m 1 -o -E '^\[ *[0-9.]*\] Oops: .*' || true)
			kind=outer-oops
		fi
		if [ -n "$lockup" ] && ! lane_done "$first"; then
			mapfile -t again < <(unfinished "$first" "${pending[@]}")
			if [ ${#again[@]} -gt 0 ]; then
				name=${frames[${again[0]}]}
				if [ "$boot" -ge 2 ]; then
					split_console
					die "the outer VM's kernel failed again ($kind), in frame $name ($lockup); a second failure is not retried (see $out/outer.log)"
				fi
				echo "@@@ lane-rerun $name $kind: $lockup" >>"$out/outer.log"
				say "$name: the outer VM's kernel failed ($kind: $lockup): not the guest's" \
					"fault; a fresh outer VM for it and the $((${#again[@]} - 1)) frame(s) after it"
				pending=("${again[@]}") boot=$((boot + 1))
				continue
			fi
		fi
		break
	done
	# Whatever happened, what came is kept, split: the frames that ended
	# (logs, statuses, traces) and the guest console of one that did not
	# (its log, no status).
	split_console
	case "$rc" in
	0) ;;
	124 | 137)
		echo "kvm-lane: error: outer VM timed out after ${bound}s$(running_preset) (see $out/outer.log)" >&2
		exit 124 ;;
	*) die "outer VM failed with status $rc (see $out/outer.log)" ;;
	esac
	grep -q '^@@@ lane-error ' "$out/outer.log" &&
		die "outer VM: $(sed -n 's/^@@@ lane-error //p' "$out/outer.log" | head -n1)"
	lane_done "$first" ||
		die "outer VM stopped before the end of the lane$(running_preset) (see $out/outer.log)"
	check_frames
	say "[$(since_start)] lane done; logs in $out"
	for name in "${frames[@]}"; do
		printf 'kvm-lane:   %-10s %3s %s\n' "$name" "$(cat "$out/$name.status")" \
			"$(status_name "$(cat "$out/$name.status")")"
	done
}

main "$@"
