#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The Xen frames' runner: creates each frame's domain with xl, waits for it
# to go (or for its bound), says what happened, and runs a frame again when
# the outer emulator's known faults, not the guest, ended it. The Xen lane's
# dom0 runs it (xen-lane.sh's init), and so does a real dom0 (run.sh
# --accel xen, xen-lane.sh --dom0): one frame logic, not two.
#
# usage: xen-frames.sh DIR CONSOLE
#   DIR      DIR/list: a frame a line, NAME|BOUND S|RERUN 1/0|TRACED 1/0
#            [|CONSOLE]; DIR/NAME.cfg its xl.cfg (xen-lane.sh writes both)
#   CONSOLE  where the frames run and their guests' lines go, unless a
#            frame's line names its own:
#            xen: the lane's dom0 (its own machine); the guest's lines reach
#            Xen's console, this script's stdout's neighbour (the lane's
#            serial line, "(dN) ...");
#            file: a real dom0; the domain's COM1 goes to DIR/NAME.console
#            (its xl.cfg's serial="file:..."), whose lines this script
#            prints as they come, each "@@@ guest LINE" (a release Xen logs
#            the debug port at debug level only). A lane frame may take
#            file too (its list line), to run this path under real Xen.
# Prints the lane's protocol: "@@@ lane-begin NAME", "@@@ lane-info ...",
# "@@@ lane-trace-begin/end NAME" around a traced frame's xentrace file
# (gzip in base64), "@@@ lane-rerun NAME why", "@@@ lane-end NAME
# status=S time=Ts" (S: - the domain ran to its end, 1 xl could not create
# it, 2 not run: traced where another xentrace runs, "@@@ lane-info not-run
# NAME: why", 137 its bound destroyed it).
# POSIX sh: busybox ash in the lane's dom0, dash in a distribution's.
frames=${1:?usage: xen-frames.sh DIR xen|file}
console=${2:?usage: xen-frames.sh DIR xen|file}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Stopped (Ctrl-C, run.sh's bound): the frame's domain and xentrace go too,
# on a real host above all. ours: the domain is the one this script made.
ours=""
stop() {
	[ -z "${xtpid-}" ] || kill -INT "$xtpid" 2>/dev/null
	[ -z "$ours" ] || xlt 30 destroy ipibench >/dev/null 2>&1
	exit 143
}
trap stop INT TERM
# xl's cores: in the lane's dom0, its own machine, this script says where
# they go; a real dom0's kernel.core_pattern is its owner's, and is only
# said (xl_died).
cores=${XEN_FRAMES_CORES:-$tmp}
if [ "$console" = xen ]; then
	# shellcheck disable=SC3045 # busybox ash has ulimit -c
	ulimit -c unlimited 2>/dev/null || :
	echo "$cores/core.%e.%p" >"${XEN_FRAMES_CORE_PATTERN:-/proc/sys/kernel/core_pattern}" 2>/dev/null || :
fi
# xl_died NAME RC: xl killed by a signal (a bare "Segmentation fault" twice
# under the outer TCG) is named; its core goes out after the frame
# (send_cores). 137 is the deadline's SIGKILL (xlt), not a crash.
xl_died() {
	if [ "$2" -le 128 ] || [ "$2" = 137 ]; then
		return 0
	fi
	echo "@@@ lane-info xl create died of signal $(($2 - 128))"
	[ "$console" = xen ] ||
		echo "@@@ lane-info xl's core, if any: where this host's kernel.core_pattern puts it ($(cat /proc/sys/kernel/core_pattern 2>/dev/null))"
}
# send_cores NAME: xl's cores on the console (gzip in base64, as a trace),
# which xen-lane.sh keeps as DIR/NAME.xl-core.gz. After the frame's end
# only: the guest's lines share the console while its domain runs (xl died
# once after the domain was up, and a core sent then garbled its records).
# Another program's core (a shell's "Segmentation fault (core dumped)"
# line: the outer TCG has crashed busybox's applets in dom0 too) is named.
send_cores() {
	[ "$console" = xen ] || return 0
	for c in "$cores"/core.*; do
		[ -e "$c" ] || continue
		case ${c##*/} in
		core.xl*)
			echo "@@@ lane-core-begin $1 gzip-base64"
			gzip -c "$c" | base64 | sed 's/^/outer-core64: /'
			echo "@@@ lane-core-end $1" ;;
		*) echo "@@@ lane-info dom0 program died with a core: ${c##*/}" ;;
		esac
		rm -f "$c"
	done
}
cs() { read -r u _ </proc/uptime; echo $((${u%.*} * 100 + 1${u#*.} - 100)); }
secs() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }
# show_console NAME [all]: the console file's new whole lines ("all": its
# last line too, whole or not), each "@@@ guest LINE", CR dropped. Made
# into a file and counted before one cat prints them: a helper that dies
# on the way (busybox's sed did, under the outer TCG) leaves them to the
# next call, never lost.
show_console() {
	f=$frames/$1.console
	[ -e "$f" ] || return 0
	n=$(wc -l <"$f") || return 0
	if [ "$n" -gt "$shown" ]; then
		# A subshell: the message of a helper's death is its, not the console's.
		(sed -n "$((shown + 1)),${n}p" "$f" | tr -d '\r' | sed 's/^/@@@ guest /' >"$tmp/show") \
			2>"$tmp/show.err"
		if [ "$(grep -c '^@@@ guest ' "$tmp/show" 2>/dev/null)" != $((n - shown)) ]; then
			echo "@@@ lane-info the console's reader failed, read again: $(tr '\n' ' ' <"$tmp/show.err")"
			return 0
		fi
		cat "$tmp/show"
		shown=$n
	fi
	if [ "${2-}" = all ] && [ -n "$(tail -c 1 "$f")" ]; then
		tail -n 1 "$f" | tr -d '\r' | sed 's/^/@@@ guest /'
		echo
	fi
}
# guest_lines NAME DOMID: what the guest printed so far, without prefixes.
guest_lines() {
	if [ "$fconsole" = file ]; then
		tr -d '\r' <"$frames/$1.console" 2>/dev/null
	else
		xlt 30 dmesg 2>/dev/null | sed -n "s/^(d$2) //p"
	fi
}
# Every toolstack call has a deadline of its own (busybox timeout): a hung
# xl would otherwise hold the frames after it until the outer VM's bound.
# xl create's watcher outlives it by design (it detaches) and is not killed.
xlt() { # seconds, then xl's arguments (ash: no ${@:2})
	t=$1
	shift
	timeout -k 5 "$t" xl "$@"
}

# xen_rip DOMID: Xen reported a triple fault of the domain with a RIP in
# Xen's own code segment (e008) in a guest context: the outer TCG handed
# the guest its L1's state (as the KVM lane's host-RIP resets), never a
# guest's own fault, which would show the guest's RIP.
xen_rip() {
	xlt 30 dmesg 2>/dev/null | awk -v d="$1" '
		index($0, "(XEN) d" d "v") && /Triple fault/ { t = 1; n = 0; next }
		t && ++n <= 4 && /RIP: +e008:/ { hit = 1 }
		END { exit !hit }'
}
# A traced frame (exits): xentrace records while the domain runs, into
# dom0's RAM, and the file goes out on the console after the frame, gzip in
# base64 between lane-trace lines, as the KVM lane sends its trace. Its
# mask: the HVM class's entry/exit and handler subclasses (VMEXIT, VMENTRY,
# the MSR, port, MMIO and VMMCALL records an exit's handling adds) and the
# scheduler's runstate changes (HVM records name no vCPU: the CPU's current
# one made them); Xen matches class and subclass bits apart (__trace_var()),
# so 0x000a3000 also takes the scheduler's own subclass, which is read past.
# 256 pages a CPU: xentrace drains them every 100 ms.
# xentrace enables tracing only once it has its file open: the first
# records written (dom0's own runstate changes come every few ms) say so.
trace_start() {
	rm -f "$tmp/frame.xentrace"
	xentrace -D -e 0x000a3000 -S 256 "$tmp/frame.xentrace" >"$tmp/xentrace.log" 2>&1 &
	xtpid=$!
	i=0
	until [ -s "$tmp/frame.xentrace" ]; do
		i=$((i + 1))
		if [ $i -gt 50 ] || ! kill -0 "$xtpid" 2>/dev/null; then
			echo "@@@ lane-info xentrace did not start: $(cat "$tmp/xentrace.log")"
			break
		fi
		sleep 0.1
	done
}
# XEN_FRAMES_TRACE_FILTER (build/lane/xentrace-filter, where it is): the
# file goes without credit2's records, some 70% of it, which the reader
# reads past (host/lane/xen/trace_filter.c); a file it refuses goes whole.
trace_send() { # frame
	kill -INT "$xtpid" 2>/dev/null
	wait "$xtpid"
	[ -s "$tmp/frame.xentrace" ] || { echo "@@@ lane-info xentrace wrote nothing: $(cat "$tmp/xentrace.log")"; return; }
	if [ -x "${XEN_FRAMES_TRACE_FILTER-}" ]; then
		if "$XEN_FRAMES_TRACE_FILTER" "$tmp/frame.xentrace" "$tmp/frame.kept" 2>"$tmp/filter.log"; then
			mv "$tmp/frame.kept" "$tmp/frame.xentrace"
		else
			echo "@@@ lane-info xentrace-filter refused the file, sent whole: $(cat "$tmp/filter.log")"
		fi
	fi
	echo "@@@ lane-trace-begin $1 gzip-base64"
	gzip -c "$tmp/frame.xentrace" | base64 | sed 's/^/outer-trace64: /'
	echo "@@@ lane-trace-end $1"
}
while IFS='|' read -r name bound rerun traced fconsole; do
	cfg=$frames/$name.cfg
	fconsole=${fconsole:-$console}
	tries=0
	while :; do
	tries=$((tries + 1))
	echo "@@@ lane-begin $name"
	t0=$(cs)
	domid=""
	status=-
	# A domain of that name already there is not this script's: on a real
	# dom0 it is left alone and the frame not run; the lane's dom0 is ours.
	if xlt 30 domid ipibench >/dev/null 2>&1; then
		if [ "$console" = file ]; then
			echo "@@@ lane-info a domain named ipibench runs already: left alone, the frame not run"
			echo "@@@ lane-end $name status=1 time=0.00s"
			break
		fi
		xlt 30 destroy ipibench >/dev/null 2>&1
	fi
	# xentrace -D empties Xen's trace buffers and sets its event mask, and
	# its end turns tracing off: state of the whole host. On a real dom0
	# another xentrace's trace would break: the frame is not run.
	others=""
	[ "$traced" != 1 ] || [ "$console" != file ] ||
		others=$(pgrep -x xentrace 2>/dev/null | tr '\n' ' ')
	if [ -n "$others" ]; then
		echo "@@@ lane-info not-run $name: another xentrace runs on this host (pid ${others% }): the frame's own would reset Xen's trace buffers and event mask, and turn tracing off at its end; stop it, or run without --exits"
		echo "@@@ lane-end $name status=2 time=0.00s"
		break
	fi
	[ "$traced" != 1 ] || trace_start
	[ "$fconsole" != file ] || : >"$frames/$name.console"
	shown=0
	ours=1
	xlt 120 create "$cfg" </dev/null >"$tmp/xl.log" 2>&1
	xl_rc=$?
	# xl once aborted after the domain was up: what counts is the domain.
	if [ $xl_rc != 0 ] && xlt 30 domid ipibench >/dev/null 2>&1; then
		sed 's/^/xl: /' "$tmp/xl.log"
		xl_died "$name" "$xl_rc"
		echo "@@@ lane-info xl create exited $xl_rc, but the domain runs"
		xl_rc=0
	fi
	if [ $xl_rc = 0 ]; then
		domid=$(xlt 30 domid ipibench 2>/dev/null)
		echo "@@@ lane-info domid $domid"
		end=$((t0 + bound * 100))
		# Gone when three lookups in a row miss it: one xl call in a few
		# failed (even crashed) while the domain ran on, in the middle of
		# the toolstack's own xenstore traffic. Shut down or crashed (the
		# state's s or c: xl's own watcher did not destroy it) ends it too.
		misses=0
		while [ $misses -lt 3 ]; do
			state=$(xlt 30 list ipibench 2>/dev/null | awk 'NR == 2 { print $5 }')
			case "$state" in
			"") misses=$((misses + 1)) ;;
			*[sc]*) xlt 30 destroy ipibench >/dev/null 2>&1; misses=0 ;;
			*) misses=0 ;;
			esac
			if [ "$(cs)" -ge "$end" ]; then
				xlt 30 destroy ipibench >/dev/null 2>&1
				status=137
				break
			fi
			# 1 s between lookups while the domain runs: each is an xl
			# run in dom0 (its start, libxl's, a xenstore round trip)
			# under the outer TCG, which takes a CPU from the guest's
			# vCPUs while they spin-wait on each other (a look
			# every 0.2 s: the group took 82 CPU-s; every 1 s: 61);
			# 0.2 s once one missed, to confirm it.
			[ "$fconsole" != file ] || show_console "$name"
			if [ $misses = 0 ]; then sleep 1; else sleep 0.2; fi
		done
	else
		sed 's/^/xl: /' "$tmp/xl.log"
		# An HVM domain's device model says why it stopped in its own log.
		f=/var/log/xen/qemu-dm-ipibench.log
		[ ! -s "$f" ] || sed 's/^/qemu-dm: /' "$f"
		# xl itself killed by a signal is no answer about the domain.
		xl_died "$name" "$xl_rc"
		status=1
	fi
	[ "$fconsole" != file ] || show_console "$name" all
	# The lane's dom0 is ours; a real one keeps its logs.
	[ "$console" = file ] || rm -f /var/log/xen/qemu-dm-ipibench.log
	echo "@@@ lane-end $name status=$status time=$(secs $(($(cs) - t0)))s"
	[ "$traced" != 1 ] || trace_send "$name"
	send_cores "$name"
	# The next frame reuses the name.
	xlt 30 destroy ipibench >/dev/null 2>&1
	ours=""
	# The outer emulator's fault earns one more run (lane-rerun, which
	# judge.py notes), unless the frame expects it (no-rerun).
	if [ "$status" = - ] && [ "$tries" = 1 ] && [ "$rerun" = 1 ] && [ -n "$domid" ] &&
		xen_rip "$domid"; then
		echo "@@@ lane-rerun $name xen-rip: a triple fault at a RIP in Xen's code"
		continue
	fi
	# So does an xl create that died of a signal before any domain ran.
	if [ "$status" = 1 ] && [ "$tries" = 1 ] && [ "$rerun" = 1 ] && [ -z "$domid" ] &&
		[ "$xl_rc" -gt 128 ] && [ "$xl_rc" != 137 ]; then
		echo "@@@ lane-rerun $name xl-signal: xl create died of signal $((xl_rc - 128)), no domain ran"
		continue
	fi
	# So does a bound that ended in the firmware, before the guest said a
	# word: SeaBIOS reading an HVM frame's CD took minutes under a loaded
	# outer TCG, where it takes seconds alone. Xen's console ring holds
	# the domain's "(dN) " lines, its newest 16 KiB: a guest that ran on
	# until its bound fills it with lines only the guest prints (its first
	# line scrolled out after some 500), the firmware prints none of them.
	if [ "$status" = 137 ] && [ "$tries" = 1 ] && [ "$rerun" = 1 ] && [ -n "$domid" ] &&
		! guest_lines "$name" "$domid" |
		grep -qE "^(ipibench |cmdline: |smp: |tsc: |\{\"record\"|ok |not ok |\[ *[0-9])"; then
		echo "@@@ lane-rerun $name firmware: the bound ended before the guest's first line"
		continue
	fi
	break
	done
done <"$frames/list"
