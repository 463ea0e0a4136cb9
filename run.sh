#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh: the one host entry point. `run` (the default) builds the guest if
# needed, boots it under QEMU (KVM when /dev/kvm is usable, TCG otherwise,
# unless the configuration needs KVM: exit 31), streams the console, saves
# it with the results and the host's facts under results/, and exits with a
# status decoded from the guest's. `matrix` boots named configurations
# several times; `compare`, `gate` and `report` read what runs saved
# (tools/ipibench.py); `list` names the configurations.
# See `./run.sh --help`, docs/host-tools.md and docs/exit-codes.md.
set -uo pipefail

caller_dir=$PWD
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here" || exit 2

# Paths the caller gives are relative to where it ran run.sh.
abspath() {
	case "$1" in /*) echo "$1" ;; *) echo "$caller_dir/$1" ;; esac
}

# Exit codes of run.sh (docs/exit-codes.md lists them with their messages).
EX_OK=0 EX_USAGE=2 EX_ERROR=3 EX_FAILURE=4 EX_CRASH=5 EX_BADCMD=6 EX_TIMEOUT=7
EX_QEMU=8 EX_DEPS=9 EX_BUILD=10 EX_INTERRUPTED=11
EX_QEMU_OLD=27 EX_SAVE=28 EX_UNAVAILABLE=29	# 26, unknown configuration: tools/ipibench.py
EX_NEEDS_KVM=31

QEMU=${QEMU:-qemu-system-x86_64}	# another build of QEMU: QEMU=/path/to/qemu-system-x86_64
case "$QEMU" in */*) QEMU=$(abspath "$QEMU") ;; esac
results_root=results
[ -n "${IPIBENCH_RESULTS-}" ] && results_root=$(abspath "$IPIBENCH_RESULTS")
min_qemu=8.1
tools_py=(python3 "$here/tools/ipibench.py")

# State the signal trap works on: the job to stop, the log to mark.
interrupted="" fg_job="" log="" log_is_temp="" runtime_dir=""

usage() {
	cat <<'EOT'
usage: ./run.sh [run] [options]         boot one configuration (the default)
       ./run.sh matrix --presets A,B ... boot configurations x -smp values x N boots
       ./run.sh compare A B             A/B table: medians, change, significance
       ./run.sh gate --baseline B C     fail on a regression or incorrect run (TAP, JUnit)
       ./run.sh report INPUT...         plots (SVG, PNG) and an HTML/Markdown page
       ./run.sh list                    the named configurations (tools/presets.conf)
       ./run.sh SUBCOMMAND --help       the options of each

Results land in results/<UTC date>-<label>/ (console.log, results.json,
summary.txt); docs/host-tools.md describes the files and the statistics.
Exit codes: docs/exit-codes.md.
EOT
}

usage_run() {
	cat <<'EOT'
usage: ./run.sh [run] [options]

Boots ipibench once and prints its console. Unless --no-save, it lands in
results/<UTC date>-<label>/: console.log, results.json (the guest's records
and the host's facts) and summary.txt.

options:
  --preset NAME     a named configuration of tools/presets.conf (./run.sh list):
                    its -cpu flags, -smp and QEMU arguments
  --smp SPEC        QEMU -smp value (default: the preset's, else 4), e.g. 8 or 6,sockets=2,cores=3
  --cpu MODEL[,F]   QEMU -cpu value (default: host under KVM, max under TCG); with
                    --preset, the base model its flags are appended to
  --machine M       pc or q35 (default q35)
  --memory SIZE     guest RAM (default 256M)
  --append ARGS     kernel command line, e.g. 'plan=check' (help=1 lists keys)
  --accel A         kvm, tcg, tcg-single, kvm-in-tcg or auto (default auto: kvm when
                    /dev/kvm can run the vCPU model, else tcg-single, except for a
                    model with hv-* or kvm-pv-* flags: exit 31). tcg is QEMU's
                    multi-threaded TCG (vCPUs really in parallel, but spinning vCPUs
                    starve each other on a small host); tcg-single runs them in turn
                    in one thread, much faster here. kvm-in-tcg boots the preset (default
                    x2apic) under real KVM nested inside a TCG VM, the KVM lane: for
                    machines without /dev/kvm, to exercise the Hyper-V and KVM PV
                    paths; timings are then doubly emulated
  --allow-fallback  with --accel auto, run a preset or -cpu flags that need KVM (hv-*,
                    kvm-pv-*) under TCG when KVM cannot: each backend they add SKIPs
  --timeout S       seconds before the boot is killed (default 300)
  --iso             boot the GRUB ISO (build/ipibench.iso) instead of -kernel
  --label NAME      name of the results directory (default: preset, accel, machine, smp)
  --results-dir DIR save into DIR exactly (must not exist; matrix uses it)
  --pin[=CPUS]      KVM only: pin vCPU i to the i-th host CPU of CPUS (default: the
                    CPUs run.sh may use), before the guest starts; recorded
  --perf-kvm        KVM only: record `perf kvm stat` during the boot and attach the
                    VM-exit breakdown to the results
  -- ARGS...        everything after -- goes to QEMU as it is (e.g. -device ...)
  --quiet           do not stream the console, print only the final line
  --no-save         do not keep anything under results/
  -h, --help        this text

environment: QEMU=/path/to/qemu-system-x86_64 boots another QEMU build;
IPIBENCH_RESULTS=DIR puts results/ elsewhere.

exit status: 0 success (guest SUCCESS or SKIP), 2 usage, 3 guest ERROR,
4 guest FAILURE, 5 guest CRASH, 6 bad kernel command line, 7 timeout,
8 QEMU failed, died without a status or was killed by a signal, 9 missing
dependency, 10 build failed, 11 interrupted, 26 unknown configuration,
27 QEMU too old, 28 results could not be saved, 29 --pin or --perf-kvm
unavailable here, 31 the configuration needs KVM and KVM cannot run it here.
EOT
}

usage_matrix() {
	cat <<'EOT'
usage: ./run.sh matrix --presets NAME[,NAME...] [options]

Boots every named configuration at every -smp value, each --boots times, one
after the other. Each boot is a full run saved under
results/<UTC date>-<label>/<preset>-smp<N>/boot<i>/; summary.txt beside them
lists the boots. Compare two configurations with
  ./run.sh compare DIR/xapic-smp2 DIR/x2apic-smp2

options:
  --presets LIST    configurations (./run.sh list), comma-separated
  --smp LIST        vCPU counts, comma-separated (default: each preset's own)
  --boots N         boots of each configuration (default 5; the rank test needs
                    4 or more a side to reach p < 0.05)
  --label NAME      name of the matrix directory (default matrix)
  --append, --accel, --machine, --memory, --timeout, --pin[=CPUS], --perf-kvm,
  --allow-fallback  passed to every boot (./run.sh run --help); under --accel auto
                    a preset that needs KVM it cannot have stops the matrix at once
  --verbose         stream every console
  -h, --help        this text

exit status: 0 every boot succeeded; otherwise the run exit code of the first
boot that did not (3..8), or at once 2, 9, 10, 11, 26, 27, 28, 29 or 31.
EOT
}

usage_list() {
	cat <<'EOT'
usage: ./run.sh list [--names]

Lists the named configurations of tools/presets.conf with the QEMU options
each adds; --names prints the names only.
EOT
}

die() {
	echo "run.sh: $2" >&2
	exit "$1"
}

# --- signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the job in flight.
# The job runs in the background so that `wait` returns when a signal comes
# (bash runs a trap only after a foreground command ends). Background jobs of a
# non-interactive shell ignore SIGINT, so the job is sent SIGTERM; a second
# signal kills it.
on_signal() {
	if [ -n "$interrupted" ] && [ -n "$fg_job" ]; then
		pkill -KILL -P "$fg_job" 2>/dev/null
		kill -KILL "$fg_job" 2>/dev/null
	fi
	interrupted=$1
	[ -n "$fg_job" ] && kill -TERM "$fg_job" 2>/dev/null
	return 0
}
trap 'on_signal SIGINT' INT
trap 'on_signal SIGTERM' TERM
trap 'on_signal SIGHUP' HUP

cleanup() {
	[ -n "$log_is_temp" ] && rm -f "$log"
	[ -n "$runtime_dir" ] && rm -rf "$runtime_dir"
	return 0
}
trap cleanup EXIT

# Waits for fg_job and sets job_rc to its exit status; after a signal, waits
# until the job has really ended. (Not in $(...): a subshell cannot wait for
# its parent's jobs.)
wait_job() {
	# 2>/dev/null: bash's own "Killed" notice; the decoded status says it.
	wait "$fg_job" 2>/dev/null
	job_rc=$?
	while [ -n "$interrupted" ] && kill -0 "$fg_job" 2>/dev/null; do
		wait "$fg_job" 2>/dev/null
		job_rc=$?
	done
}

# An interrupted run: the console log says so on its last line, and no
# results file is written.
exit_interrupted() { # seconds
	if [ -n "$log" ] && [ -z "$log_is_temp" ] && [ -f "$log" ]; then
		printf '\nrun.sh: INCOMPLETE: interrupted by %s after %s s; %s\n' "$interrupted" "$1" \
			"this log is incomplete and no results were saved" >>"$log"
		echo "run.sh: interrupted by $interrupted; incomplete log: $log" >&2
	else
		echo "run.sh: interrupted by $interrupted" >&2
	fi
	exit $EX_INTERRUPTED
}

check_interrupt() {
	[ -z "$interrupted" ] || exit_interrupted "${1:-0}"
}

# The guest writes byte b = 0x20 + status to isa-debug-exit; QEMU exits
# (b << 1) | 1. This is the only place that knows the mapping. timeout(1)
# exits 124 when it stopped QEMU, 137 when it had to kill it, and 128 + N when
# QEMU died of signal N (it re-raises the signal); QEMU itself exits 0 after
# SIGTERM, SIGINT or SIGHUP and says so on stderr, which goes to the log.
decode_status() { # rc elapsed-seconds timeout log
	local sig
	case "$1" in
	65) echo "$EX_OK SUCCESS" ;;
	67) echo "$EX_OK SKIP" ;;
	69) echo "$EX_ERROR ERROR" ;;
	71) echo "$EX_FAILURE FAILURE" ;;
	73) echo "$EX_CRASH CRASH" ;;
	75) echo "$EX_BADCMD BAD-CMDLINE" ;;
	124) echo "$EX_TIMEOUT TIMEOUT" ;;
	0)
		sig=$(sed -n 's/.*terminating on signal \([0-9]*\).*/\1/p' "$4" 2>/dev/null | tail -n 1)
		if [ -n "$sig" ]; then
			echo "$EX_QEMU QEMU-KILLED (signal $sig: QEMU was told to terminate)"
		else
			echo "$EX_QEMU QEMU-EXITED (guest reset or powered off without a status: triple fault?)"
		fi ;;
	1) echo "$EX_QEMU QEMU-FAILED (QEMU could not start or load the image)" ;;
	*)
		if [ "$1" = 137 ] && [ "${2%.*}" -ge "$3" ]; then
			echo "$EX_TIMEOUT TIMEOUT"
		elif [ "$1" -gt 128 ] 2>/dev/null; then
			echo "$EX_QEMU QEMU-KILLED (signal $(($1 - 128)))"
		else
			echo "$EX_QEMU QEMU-UNKNOWN (exit $1)"
		fi ;;
	esac
}

kvm_usable() {
	[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]
}

# Some hosts offer a /dev/kvm that cannot run every vCPU model (nested or
# PVM-based KVM refusing an MSR QEMU sets for -cpu host). Create the machine
# paused and quit at once: if that fails, KVM cannot run this configuration.
kvm_probe() { # cpu machine -> prints QEMU's complaint on failure
	local out
	out=$(echo quit | timeout -k 2 20 "$QEMU" -accel kvm -cpu "$1" -M "$2" \
		-nodefaults -display none -S -monitor stdio 2>&1 >/dev/null)
	local rc=$?
	[ $rc -eq 0 ] && return 0
	echo "$out" | grep -v '^QEMU' | head -n 2
	return 1
}

qemu_version() { # binary
	"$1" --version 2>/dev/null | sed -n '1s/.*version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p'
}

qemu_too_old() { # binary -> true (and the message) when older than min_qemu
	local v
	v=$(qemu_version "$1")
	if [ -z "$v" ]; then
		echo "cannot tell the version of $1 ('$1 --version' names none); ipibench needs QEMU $min_qemu or later"
		return 0
	fi
	[ "$(printf '%s\n%s\n' "$min_qemu" "$v" | sort -V | head -n1)" = "$min_qemu" ] && return 1
	echo "QEMU $v ($(command -v "$1")) is too old: ipibench needs $min_qemu or later (x2APIC under TCG); tools/deps.sh build installs it (from bookworm-backports on Debian 12), or point QEMU= at a newer build"
	return 0
}

# Dependencies, QEMU's version and the build, once per command (a matrix's
# boots skip it: IPIBENCH_PREPARED).
prepare() {
	local why
	[ "${IPIBENCH_PREPARED-}" = 1 ] && return 0
	if ! tools/deps.sh build; then
		command -v qemu-system-x86_64 >/dev/null 2>&1 &&
			why=$(qemu_too_old qemu-system-x86_64) && die $EX_QEMU_OLD "$why"
		exit $EX_DEPS
	fi
	command -v "$QEMU" >/dev/null 2>&1 || die $EX_DEPS "QEMU=$QEMU: no such program"
	why=$(qemu_too_old "$QEMU") && die $EX_QEMU_OLD "$why"
	mkdir -p build
	# Two runs started at once must not build the same objects together.
	if command -v flock >/dev/null 2>&1; then
		flock build/.run.lock make -s all || die $EX_BUILD "build failed"
	else
		make -s all || die $EX_BUILD "build failed"
	fi
	check_interrupt
}

# A new directory results/<UTC date>-<label>[.N]: mkdir is atomic, so two
# runs started in the same second still get one directory each.
new_results_dir() { # label
	local base n
	mkdir -p "$results_root" || die $EX_SAVE "cannot create $results_root"
	base="$results_root/$(date -u +%Y%m%dT%H%M%SZ)-$1"
	mkdir "$base" 2>/dev/null && { echo "$base"; return 0; }
	for n in $(seq 2 999); do
		mkdir "$base.$n" 2>/dev/null && { echo "$base.$n"; return 0; }
	done
	die $EX_SAVE "cannot create a new directory $base.N"
}

sanitize() {
	local s=${1//[^A-Za-z0-9_.-]/_}
	echo "${s#.}"
}

# Reads a preset into preset_cpu, preset_smp and preset_extra.
load_preset() { # name
	local out lines
	out=$("${tools_py[@]}" presets "$1") || exit $?
	mapfile -t lines <<<"$out"
	preset_cpu=${lines[0]} preset_smp=${lines[1]}
	preset_extra=("${lines[@]:2}")
}

elapsed_since() { # start-ns -> seconds with 3 decimals
	local ms=$((($(date +%s%N) - $1) / 1000000))
	printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

# --pin and --perf-kvm need a real KVM, QMP, and for perf its tracepoints.
check_kvm_extras() { # accel pin perf
	local why
	if [ -n "$2$3" ] && [ "$1" != kvm ] && [ "${IPIBENCH_PIN_ANY_ACCEL-}" != 1 ]; then
		why=${2:+--pin}${3:+${2:+ and }--perf-kvm}
		die $EX_UNAVAILABLE "$why needs KVM (accel is $1): under TCG vCPU threads emulate and their placement measures nothing; use --accel kvm on a host with /dev/kvm"
	fi
	if [ -n "$3" ]; then
		command -v perf >/dev/null 2>&1 ||
			die $EX_UNAVAILABLE "--perf-kvm: perf is missing (Debian package linux-perf)"
		[ -e /sys/kernel/tracing/events/kvm/kvm_exit ] ||
			[ -e /sys/kernel/debug/tracing/events/kvm/kvm_exit ] ||
			die $EX_UNAVAILABLE "--perf-kvm: no kvm:kvm_exit tracepoint (tracefs not mounted, kvm not loaded, or not root)"
	fi
	return 0
}

# Started paused for --pin/--perf-kvm: attach perf, pin, then let it run.
start_paused_guest() { # pin perf pinmap -> exit code
	local qpid="" i
	if [ -n "$2" ]; then
		for i in $(seq 100); do
			[ -s "$runtime_dir/qemu.pid" ] && break
			sleep 0.1
		done
		qpid=$(cat "$runtime_dir/qemu.pid" 2>/dev/null) ||
			{ echo "run.sh: --perf-kvm: QEMU wrote no pid file" >&2; return $EX_UNAVAILABLE; }
		perf kvm stat record -o "$runtime_dir/perf.data" -p "$qpid" \
			>"$runtime_dir/perf.log" 2>&1 &
		perf_job=$!
		sleep 1	# perf attaches its tracepoints before the guest runs
		kill -0 "$perf_job" 2>/dev/null || { sed 's/^/perf: /' "$runtime_dir/perf.log" >&2
			echo "run.sh: --perf-kvm: perf kvm stat record failed" >&2
			return $EX_UNAVAILABLE; }
	fi
	local args=(qmp-start --qmp "$runtime_dir/qmp.sock" --watch "$fg_job")
	[ -n "$1" ] && args+=(--pin "${1#auto}" --out "$3")
	"${tools_py[@]}" "${args[@]}"
}

stop_perf() { # dir (empty: no save)
	[ -n "${perf_job-}" ] || return 0
	# perf record ends cleanly on SIGTERM (a background job ignores SIGINT).
	kill -TERM "$perf_job" 2>/dev/null
	wait "$perf_job" 2>/dev/null
	[ -n "$1" ] || return 0
	if perf kvm stat report -i "$runtime_dir/perf.data" --stdio >"$1/.perf-kvm.txt.tmp" 2>&1; then
		mv -n "$1/.perf-kvm.txt.tmp" "$1/perf-kvm.txt"
	else
		echo "run.sh: warning: perf kvm stat report failed:" >&2
		sed 's/^/  /' "$1/.perf-kvm.txt.tmp" | tail -n 3 >&2
		rm -f "$1/.perf-kvm.txt.tmp"
	fi
}

# cmd_run's steps below share its locals (bash scoping is dynamic).

parse_run_options() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--preset) preset=${2:?}; shift ;;
		--smp) smp=${2:?}; shift ;;
		--cpu) cpu=${2:?}; shift ;;
		--machine) machine=${2:?}; shift ;;
		--memory) memory=${2:?}; shift ;;
		--append) append=${2-}; shift ;;
		--accel) accel=${2:?}; shift ;;
		--timeout) timeout=${2:?}; shift ;;
		--iso) iso=1 ;;
		--label) label=${2:?}; shift ;;
		--results-dir) fixed_dir=$(abspath "${2:?}"); shift ;;
		--pin) pin=auto ;;
		--pin=*) pin=auto${1#--pin=} ;;
		--perf-kvm) perf=1 ;;
		--allow-fallback) allow_fallback=1 ;;
		--quiet) quiet=1 ;;
		--no-save) save=0 ;;
		-h | --help) usage_run; exit 0 ;;
		--) shift; extra_qemu=("$@"); break ;;
		*) usage_run >&2; die $EX_USAGE "unknown option '$1'" ;;
		esac
		shift
	done
	case "$machine" in pc | q35) ;; *) die $EX_USAGE "--machine takes pc or q35, not '$machine'" ;; esac
	case "$timeout" in '' | *[!0-9]*) die $EX_USAGE "--timeout takes whole seconds, not '$timeout'" ;; esac
	if [ "$iso" = 1 ] && [ -n "$append" ]; then
		die $EX_USAGE "--iso boots with the ISO's own command line; --append needs -kernel"
	fi
	return 0
}

# The features of a -cpu value that only KVM offers, comma-separated: hv-*
# and kvm-pv-* flags not turned off (tools/ipibench.py kvm-only has the rule).
kvm_only_flags() { # cpu
	"${tools_py[@]}" kvm-only -- "$1"
}

# --accel auto found no KVM that runs the vCPU model ($2 says why). Under TCG
# every Hyper-V and KVM PV backend SKIPs, so a model that asks for them would
# pass having tested none of it: stop (exit 31) with the ways to run it, unless
# --allow-fallback accepted TCG. Other models (the x2apic and xapic presets)
# mean as much under TCG and fall back with a notice.
fallback_or_stop() { # model why
	local need what="-cpu $1"
	need=$(kvm_only_flags "$1") || exit $?
	[ -n "$preset" ] && what="preset $preset"
	if [ -z "$need" ]; then
		# Without /dev/kvm, cmd_run's own notice says so.
		kvm_usable && echo "run.sh: $2; using TCG" >&2
		return 0
	fi
	if [ "$allow_fallback" = 1 ]; then
		echo "run.sh: warning: $2; running $what under TCG as --allow-fallback asks:" \
			"only KVM offers $need, so every backend these add will SKIP" >&2
		return 0
	fi
	local lane="./run.sh --accel kvm-in-tcg --preset ${preset:-NAME}" msg
	[ -n "$preset" ] || lane+=" (the lane boots presets only: ./run.sh list)"
	msg="$what needs KVM, the only accelerator that offers $need, but $2."
	msg+=" Under TCG every backend these add would SKIP and the run pass having tested"
	msg+=" none of it: run it under real KVM nested in TCG with $lane, or accept TCG"
	msg+=" knowingly with --allow-fallback (or --accel tcg)"
	die $EX_NEEDS_KVM "$msg"
}

# Sets accel and cpu (the preset's flags on the accelerator's base model).
choose_accel() {
	local why model base=$cpu
	case "$accel" in
	auto)
		model=${base:-host}${preset_cpu:+,$preset_cpu}
		if ! kvm_usable; then
			why="there is no usable /dev/kvm"
		elif why=$(kvm_probe "$model" "$machine"); then
			accel=kvm
		else
			why="/dev/kvm cannot run -cpu $model here ($why)"
		fi
		if [ "$accel" != kvm ]; then
			fallback_or_stop "$model" "$why"
			accel=tcg-single base=${base/#host/max}
		fi ;;
	kvm) kvm_usable || die $EX_USAGE "--accel kvm: /dev/kvm is missing or not accessible" ;;
	tcg | tcg-single) ;;
	kvm-in-tcg) [ -n "$preset" ] || preset=x2apic ;;
	*) die $EX_USAGE "--accel takes kvm, tcg, tcg-single, kvm-in-tcg or auto, not '$accel'" ;;
	esac
	if [ -z "$base" ]; then
		if [ "$accel" = kvm ]; then base=host; else base=max; fi
	fi
	cpu=$base${preset_cpu:+,$preset_cpu}
}

# Sets qemu, the full command line.
compose_qemu() {
	local boot=(-kernel build/ipibench.elf32 -append "$append")
	[ "$iso" = 1 ] && boot=(-cdrom build/ipibench.iso -boot d)
	local accel_arg=$accel
	# One host thread running every vCPU in turn: spinning vCPUs then cost
	# nothing to the others (40x faster at -smp 6 on two host cores).
	[ "$accel" = tcg-single ] && accel_arg=tcg,thread=single
	qemu=("$QEMU" -accel "$accel_arg" -M "$machine" -cpu "$cpu" -smp "$smp"
		-m "$memory" -nodefaults -display none -no-reboot -serial stdio
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 "${preset_extra[@]}" "${extra_qemu[@]}"
		"${boot[@]}")
	if [ -n "$pin$perf" ]; then
		runtime_dir=$(mktemp -d /tmp/ipibench-run.XXXXXX) ||
			die $EX_SAVE "cannot create a temporary directory"
		qemu+=(-S -qmp "unix:$runtime_dir/qmp.sock,server=on,wait=off")
		[ -n "$perf" ] && qemu+=(-pidfile "$runtime_dir/qemu.pid")
	fi
	return 0
}

# Sets dir (the run's new directory) and log.
open_log() {
	[ -n "$label" ] || label="${preset:+$preset-}$accel-$machine-smp$smp"
	label=$(sanitize "$label")
	if [ "$save" = 0 ]; then
		log=$(mktemp)
		log_is_temp=1
		return 0
	fi
	if [ -n "$fixed_dir" ]; then
		mkdir -p "$(dirname "$fixed_dir")" && mkdir "$fixed_dir" ||
			die $EX_SAVE "cannot create $fixed_dir (it must not exist: results are never overwritten)"
		dir=$fixed_dir
	else
		dir=$(new_results_dir "$label") || exit $?
	fi
	log="$dir/console.log"
	: >"$log"
}

# --accel kvm-in-tcg: the preset under real KVM nested in a TCG VM (the
# KVM lane, tests/kvm-lane/); sets rc and seconds like boot_qemu.
boot_lane() {
	local out start_ns lane_rc
	out=$(mktemp -d /tmp/ipibench-lane.XXXXXX) || die $EX_SAVE "cannot create a temporary directory"
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	start_ns=$(date +%s%N)
	echo "run.sh: KVM nested inside QEMU TCG (preset $preset): timings are doubly emulated, only behaviour counts" >&2
	run_job tests/kvm-lane/lane.sh --image build/ipibench.elf32 --presets "$preset" \
		--append "$append" --out "$out" --inner-timeout "$timeout" >"$out/lane.txt" 2>&1
	lane_rc=$?
	seconds=$(elapsed_since "$start_ns")
	[ $lane_rc -eq $EX_INTERRUPTED ] && check_interrupt "$seconds"
	case $lane_rc in
	0) cat "$out/$preset.log" >"$log"; rc=$(cat "$out/$preset.status")
	   grep -q '^@@@ lane-rerun ' "$out/outer.log" &&
		echo "run.sh: the first boot reset with the outer TCG's known SVM fault (tests/kvm-lane/README.md); this is the second" >&2 ;;
	77) tail -n 3 "$out/lane.txt" >&2; rm -rf "$out"; die $EX_DEPS "the KVM lane cannot be prepared here" ;;
	*) cat "$out/lane.txt" >"$log"; rc=1 ;;
	esac
	[ "$quiet" = 0 ] && cat "$log"
	rm -rf "$out"
}

# Boots QEMU in the background, streaming the log; sets rc and seconds.
boot_qemu() {
	local start_ns tail_job=""
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	start_ns=$(date +%s%N)
	timeout -k 5 "$timeout" "${qemu[@]}" </dev/null >"$log" 2>&1 &
	fg_job=$!
	if [ "$quiet" = 0 ]; then
		tail -n +1 -s 0.1 --pid="$fg_job" -f "$log" &
		tail_job=$!
	fi
	if [ -n "$pin$perf" ]; then
		start_paused_guest "$pin" "$perf" "${dir:-$runtime_dir}/pin.json"
		rc=$?
		if [ $rc -ne 0 ]; then
			kill -TERM "$fg_job" 2>/dev/null
			wait "$fg_job" 2>/dev/null
			stop_perf ""
			die "$rc" "could not start the guest paused for --pin/--perf-kvm (above)"
		fi
	fi
	wait_job
	rc=$job_rc
	seconds=$(elapsed_since "$start_ns")
	[ -n "$tail_job" ] && wait "$tail_job" 2>/dev/null
	fg_job=""
	stop_perf "${dir-}"
	check_interrupt "$seconds"
}

# results.json and summary.txt, through tools/ipibench.py; sets code on failure.
save_results() { # status-word
	"${tools_py[@]}" save "$dir" --label "$label" --config "$label" --preset "$preset" \
		--accel "$accel" --qemu-bin "$(command -v "$QEMU")" \
		--qemu-version "$("$QEMU" --version | head -n 1)" --status "$1" \
		--started "$started" --seconds "$seconds" --qemu-exit "$rc" --exit "$code" \
		-- "${qemu[@]}" || code=$EX_SAVE
	# A Ctrl-C that reached the saver as well: it wrote nothing.
	[ -e "$dir/results.json" ] || check_interrupt "$seconds"
}

cmd_run() {
	local smp="" cpu="" machine=q35 memory=256M append="" accel=auto timeout=300
	local iso=0 label="" quiet=0 save=1 preset="" pin="" perf="" dir="" fixed_dir=""
	local preset_cpu="" preset_smp="" preset_extra=() extra_qemu=() qemu=() started="" seconds=""
	local rc perf_job="" decoded code what allow_fallback=0
	parse_run_options "$@"
	local smp_given=$smp cpu_given=$cpu
	[ "$accel" = kvm-in-tcg ] && [ -z "$preset" ] && preset=x2apic
	[ -n "$preset" ] && load_preset "$preset"
	[ -n "$smp" ] || smp=${preset_smp:-4}
	prepare
	choose_accel
	check_kvm_extras "$accel" "$pin" "$perf"
	if [ "$iso" = 1 ]; then
		make -s iso || die $EX_BUILD "ISO build failed"
	fi
	[ "${accel#tcg}" != "$accel" ] && [ "${IPIBENCH_PREPARED-}" != 1 ] &&
		echo "run.sh: no usable /dev/kvm: running under TCG; timings are emulated, only behaviour counts" >&2
	compose_qemu
	open_log
	check_interrupt
	if [ "$accel" = kvm-in-tcg ]; then
		[ -n "$cpu_given$smp_given" ] && echo "run.sh: --accel kvm-in-tcg takes -cpu and -smp from the preset ($preset)" >&2
		qemu=(tests/kvm-lane/lane.sh --presets "$preset" --append "$append")
		boot_lane
	else
		boot_qemu
	fi

	decoded=$(decode_status "$rc" "$seconds" "$timeout" "$log")
	code=${decoded%% *}
	what=${decoded#* }
	if [ "$save" = 1 ]; then
		save_results "${what%% *}"
		echo "run.sh: $what (QEMU exit $rc); results: $dir" >&2
	else
		echo "run.sh: $what (QEMU exit $rc)" >&2
	fi
	return "$code"
}

# Runs one command as the job in flight, so that a signal stops it (see
# on_signal); prints nothing, returns its status (11 after a signal).
run_job() {
	"$@" &
	fg_job=$!
	wait_job
	fg_job=""
	[ -n "$interrupted" ] && return $EX_INTERRUPTED
	return "$job_rc"
}

# Before a matrix's first boot: under --accel auto, a preset that needs KVM
# and cannot have it stops the matrix at once (exit 31, the message naming
# it), not after the presets before it have booted. Notices of presets that
# may fall back are left to their boots.
check_matrix_accel() { # preset...
	local p out rc preset preset_cpu preset_smp preset_extra=() cpu="" accel
	for p; do
		out=$(preset=$p accel=auto; load_preset "$p"; choose_accel 2>&1 >/dev/null)
		rc=$?
		[ $rc -eq 0 ] || { printf '%s\n' "$out" >&2; exit $rc; }
	done
}

cmd_matrix() {
	local presets="" smps="" boots=5 label=matrix verbose=0 pass=()
	local accel=auto machine=q35 allow_fallback=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--presets) presets=${2:?}; shift ;;
		--smp) smps=${2:?}; shift ;;
		--boots) boots=${2:?}; shift ;;
		--label) label=${2:?}; shift ;;
		--accel) accel=${2:?}; pass+=("$1" "$2"); shift ;;
		--machine) machine=${2:?}; pass+=("$1" "$2"); shift ;;
		--append | --memory | --timeout) pass+=("$1" "${2-}"); shift ;;
		--allow-fallback) allow_fallback=1; pass+=("$1") ;;
		--pin | --pin=* | --perf-kvm) pass+=("$1") ;;
		--verbose) verbose=1 ;;
		-h | --help) usage_matrix; exit 0 ;;
		*) usage_matrix >&2; die $EX_USAGE "matrix: unknown option '$1'" ;;
		esac
		shift
	done
	[ -n "$presets" ] || { usage_matrix >&2; die $EX_USAGE "matrix: --presets is required"; }
	case "$boots" in '' | *[!0-9]* | 0)
		die $EX_USAGE "matrix: --boots takes a positive count, not '$boots'" ;;
	esac
	local names=() counts=() p s
	IFS=, read -r -a names <<<"$presets"
	[ -n "$smps" ] && IFS=, read -r -a counts <<<"$smps"
	for s in "${counts[@]}"; do
		case "$s" in '' | *[!0-9]* | 0) die $EX_USAGE "matrix: --smp takes vCPU counts, not '$s'" ;; esac
	done
	for p in "${names[@]}"; do
		"${tools_py[@]}" presets "$p" >/dev/null || exit $?
	done
	prepare
	[ "$accel" = auto ] && check_matrix_accel "${names[@]}"
	export IPIBENCH_PREPARED=1
	local mdir
	mdir=$(new_results_dir "$(sanitize "$label")") || exit $?
	echo "matrix: $presets at -smp ${smps:-per preset}, $boots boots each, into $mdir" >&2

	local first_bad=0 rc i n=0 lines=() cfgs=() cfg t0 out=()
	[ "$verbose" = 1 ] || out=(--quiet)
	for p in "${names[@]}"; do
		local these=("${counts[@]}")
		if [ ${#these[@]} -eq 0 ]; then
			load_preset "$p"
			these=("$preset_smp")
		fi
		for s in "${these[@]}"; do
			cfg="$p-smp$s"
			cfgs+=("$cfg")
			for i in $(seq "$boots"); do
				n=$((n + 1))
				t0=$(date +%s%N)
				run_job "$0" run --preset "$p" --smp "$s" --label "$cfg" \
					--results-dir "$mdir/$cfg/boot$i" "${out[@]}" "${pass[@]}"
				rc=$?
				[ -n "$interrupted" ] && rc=$EX_INTERRUPTED
				echo "matrix: [$n] $cfg boot $i: exit $rc ($(elapsed_since "$t0") s)" >&2
				lines+=("$cfg boot$i exit $rc $(exit_word "$rc")")
				case "$rc" in
				0) ;;
				2 | 9 | 10 | 11 | 26 | 27 | 28 | 29 | 31) exit "$rc" ;;
				*) [ "$first_bad" -ne 0 ] || first_bad=$rc ;;
				esac
			done
		done
	done
	# Written under a temporary name and renamed, like every result file.
	printf '%s\n' "matrix $label: presets $presets, -smp ${smps:-per preset}, $boots boots" \
		"${lines[@]}" >"$mdir/.summary.txt.tmp" && mv -n "$mdir/.summary.txt.tmp" "$mdir/summary.txt"
	echo "matrix: done: $mdir" >&2
	[ ${#cfgs[@]} -ge 2 ] &&
		echo "matrix: compare with: ./run.sh compare $mdir/${cfgs[0]} $mdir/${cfgs[1]}" >&2
	return "$first_bad"
}

exit_word() { # run.sh exit code -> what it means, for summaries
	case "$1" in
	0) echo "SUCCESS or SKIP" ;; 3) echo ERROR ;; 4) echo FAILURE ;; 5) echo CRASH ;;
	6) echo BAD-CMDLINE ;; 7) echo TIMEOUT ;; 8) echo "QEMU failed or was killed" ;;
	*) echo "see docs/exit-codes.md" ;;
	esac
}

cmd_list() {
	case "${1-}" in
	-h | --help) usage_list; exit 0 ;;
	--names) "${tools_py[@]}" presets | awk '/^[a-z0-9-]/ { print $1 }' ;;
	'') "${tools_py[@]}" presets ;;
	*) usage_list >&2; die $EX_USAGE "list: unknown option '$1'" ;;
	esac
}

# compare, gate, report: tools/ipibench.py (its --help describes each).
cmd_tool() { # subcommand args...
	command -v python3 >/dev/null 2>&1 ||
		die $EX_DEPS "python3 is missing (tools/deps.sh build installs it)"
	if [ "$1" = report ] && [ "${2-}" != --help ] && [ "${2-}" != -h ]; then
		tools/deps.sh report || exit $EX_DEPS
	fi
	cd "$caller_dir" || exit $EX_USAGE
	run_job "${tools_py[@]}" "$@"
}

# One compound command that ends in exit: bash has parsed all of it before it
# runs, so editing this file under a running instance cannot derail it.
{
	case "${1-}" in
	run) shift; cmd_run "$@" ;;
	matrix) shift; cmd_matrix "$@" ;;
	compare | gate | report) cmd_tool "$@" ;;
	list) shift; cmd_list "$@" ;;
	-h | --help | help) usage ;;
	*) cmd_run "$@" ;;
	esac
	exit
}
