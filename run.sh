#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh: the one host entry point. Builds the guest if needed, boots it
# under QEMU (KVM when /dev/kvm is usable, TCG otherwise), streams the
# console, saves it under results/, and exits with a status decoded from the
# guest's. See `./run.sh --help` and docs/exit-codes.md.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here" || exit 2

# Exit codes of run.sh (docs/exit-codes.md lists them with their messages).
EX_OK=0 EX_USAGE=2 EX_ERROR=3 EX_FAILURE=4 EX_CRASH=5 EX_BADCMD=6 EX_TIMEOUT=7
EX_QEMU=8 EX_DEPS=9 EX_BUILD=10 EX_INTERRUPTED=11
log="" log_is_temp=""

usage() {
	cat <<'EOT'
usage: ./run.sh [run] [options]

Boots ipibench once and prints its console; the log is saved under results/.

options:
  --smp SPEC        QEMU -smp value (default 4), e.g. 8 or 6,sockets=2,cores=3
  --cpu MODEL[,F]   QEMU -cpu value (default: host under KVM, max under TCG)
  --machine M       pc or q35 (default q35)
  --memory SIZE     guest RAM (default 256M)
  --append ARGS     kernel command line, e.g. 'plan=check' (help=1 lists keys)
  --accel A         kvm, tcg or auto (default auto: kvm when /dev/kvm is usable)
  --timeout S       seconds before the boot is killed (default 300)
  --iso             boot the GRUB ISO (build/ipibench.iso) instead of -kernel
  --label NAME      name of the results directory (default: the configuration)
  --quiet           do not stream the console, print only the final line
  --no-save         do not keep the log under results/
  -h, --help        this text

exit status: 0 success (guest SUCCESS or SKIP), 2 usage, 3 guest ERROR,
4 guest FAILURE, 5 guest CRASH, 6 bad kernel command line, 7 timeout,
8 QEMU failed or died without a status, 9 missing dependency, 10 build failed,
11 interrupted.
EOT
}

die() {
	echo "run.sh: $2" >&2
	exit "$1"
}

# The guest writes byte b = 0x20 + status to isa-debug-exit; QEMU exits
# (b << 1) | 1. This is the only place that knows the mapping.
decode_status() {
	case "$1" in
	65) echo "$EX_OK SUCCESS" ;;
	67) echo "$EX_OK SKIP" ;;
	69) echo "$EX_ERROR ERROR" ;;
	71) echo "$EX_FAILURE FAILURE" ;;
	73) echo "$EX_CRASH CRASH" ;;
	75) echo "$EX_BADCMD BAD-CMDLINE" ;;
	124 | 137) echo "$EX_TIMEOUT TIMEOUT" ;;
	0) echo "$EX_QEMU QEMU-EXITED (guest reset or powered off without a status: triple fault?)" ;;
	1) echo "$EX_QEMU QEMU-FAILED (QEMU could not start or load the image)" ;;
	*) if [ "$1" -gt 128 ] 2>/dev/null; then
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
	out=$(echo quit | timeout -k 2 20 qemu-system-x86_64 -accel kvm -cpu "$1" -M "$2" \
		-nodefaults -display none -S -monitor stdio 2>&1 >/dev/null)
	local rc=$?
	[ $rc -eq 0 ] && return 0
	echo "$out" | grep -v '^QEMU' | head -n 2
	return 1
}

cmd_run() {
	local smp=4 cpu="" machine=q35 memory=256M append="" accel=auto timeout=300
	local iso=0 label="" quiet=0 save=1
	while [ $# -gt 0 ]; do
		case "$1" in
		--smp) smp=${2:?}; shift ;;
		--cpu) cpu=${2:?}; shift ;;
		--machine) machine=${2:?}; shift ;;
		--memory) memory=${2:?}; shift ;;
		--append) append=${2-}; shift ;;
		--accel) accel=${2:?}; shift ;;
		--timeout) timeout=${2:?}; shift ;;
		--iso) iso=1 ;;
		--label) label=${2:?}; shift ;;
		--quiet) quiet=1 ;;
		--no-save) save=0 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die $EX_USAGE "unknown option '$1'" ;;
		esac
		shift
	done
	case "$machine" in pc | q35) ;; *) die $EX_USAGE "--machine takes pc or q35, not '$machine'" ;; esac
	case "$timeout" in '' | *[!0-9]*) die $EX_USAGE "--timeout takes whole seconds, not '$timeout'" ;; esac
	tools/deps.sh build || exit $EX_DEPS
	local why
	case "$accel" in
	auto)
		accel=tcg
		if kvm_usable; then
			if why=$(kvm_probe "${cpu:-host}" "$machine"); then
				accel=kvm
			else
				echo "run.sh: /dev/kvm cannot run -cpu ${cpu:-host} here ($why); using TCG" >&2
				cpu=${cpu/#host/max}
			fi
		fi ;;
	kvm) kvm_usable || die $EX_USAGE "--accel kvm: /dev/kvm is missing or not accessible" ;;
	tcg) ;;
	*) die $EX_USAGE "--accel takes kvm, tcg or auto, not '$accel'" ;;
	esac
	if [ -z "$cpu" ]; then
		if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
	fi
	if [ "$iso" = 1 ] && [ -n "$append" ]; then
		die $EX_USAGE "--iso boots with the ISO's own command line; --append needs -kernel"
	fi

	make -s all || die $EX_BUILD "build failed"
	if [ "$iso" = 1 ]; then
		make -s iso || die $EX_BUILD "ISO build failed"
	fi

	[ "$accel" = tcg ] && echo "run.sh: no usable /dev/kvm: running under TCG; timings are emulated, only behaviour counts" >&2

	local boot=(-kernel build/ipibench.elf32 -append "$append")
	[ "$iso" = 1 ] && boot=(-cdrom build/ipibench.iso -boot d)
	local qemu=(qemu-system-x86_64 -accel "$accel" -M "$machine" -cpu "$cpu" -smp "$smp"
		-m "$memory" -nodefaults -display none -no-reboot -serial stdio
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 "${boot[@]}")

	local dir
	[ -n "$label" ] || label="$accel-$machine-smp$(echo "$smp" | tr -c 'a-zA-Z0-9\n' '_')"
	if [ "$save" = 1 ]; then
		mkdir -p results
		dir=$(mktemp -d "results/$(date -u +%Y%m%dT%H%M%SZ)-$label.XXXX") || die $EX_ERROR "cannot create a results directory"
		log="$dir/console.log"
		printf '%q ' "${qemu[@]}" >"$dir/qemu-cmdline"
		echo >>"$dir/qemu-cmdline"
	else
		log=$(mktemp)
		trap 'rm -f "$log"' EXIT
		log_is_temp=1
	fi

	local rc
	if [ "$quiet" = 1 ]; then
		timeout -k 5 "$timeout" "${qemu[@]}" </dev/null >"$log" 2>&1
		rc=$?
	else
		timeout -k 5 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
	fi

	local decoded code what
	decoded=$(decode_status "$rc")
	code=${decoded%% *}
	what=${decoded#* }
	if [ -n "${log_is_temp-}" ]; then
		echo "run.sh: $what (QEMU exit $rc)" >&2
	else
		echo "run.sh: $what (QEMU exit $rc); log: $log" >&2
	fi
	if [ "$save" = 1 ]; then
		echo "$rc $what" >"$dir/status"
	fi
	return "$code"
}

case "${1-}" in
run) shift; cmd_run "$@" ;;
-h | --help) usage ;;
*) cmd_run "$@" ;;
esac
