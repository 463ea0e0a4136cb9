#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Xen lane: boots a guest image under the Xen hypervisor on a machine
# without Xen, by running Xen itself inside a QEMU TCG VM (TCG's nested SVM
# with NPT is enough for Xen's HVM support). A Linux dom0 starts each frame
# with `xl create`: a PVH guest (Xen's own boot protocol, build/ipibench.elf)
# or an HVM guest (its device model, hvmloader and SeaBIOS booting the
# multiboot image build/ipibench.elf32 with the frame's command line, through
# the device model's -kernel), as the frame's Xen preset says.
#
# usage: host/lane/xen-lane.sh [--image-pvh PATH] [--image-hvm PATH]
#                              [--presets NAMES] [--append ARGS]
#                              [--vcpus N] [--memory MIB] [--exits]
#                              [--out DIR] [--timeout S] [--inner-timeout S]
#        host/lane/xen-lane.sh ... --job SPEC... | --jobs FILE
#        host/lane/xen-lane.sh --resplit DIR
#   --image-pvh PATH     the PVH ELF (default build/ipibench.elf)
#   --image-hvm PATH     the multiboot ELF of HVM frames
#                        (default build/ipibench.elf32)
#   --presets NAMES      comma- or blank-separated Xen presets
#                        (host/ipibench/xen-presets.conf; default: all)
#   --append ARGS        the guest's command line, the same for every preset
#   --vcpus N            every frame's vCPUs (default: its preset's)
#   --memory MIB         every frame's memory (default 64)
#   --exits              trace every frame (the job option exits)
#   --job SPEC           a frame of its own: 'FRAME | OPTIONS | ARGS', FRAME
#                        [TAG.]PRESET and unique, OPTIONS '-' or words:
#                        inner-timeout=S, vcpus=N, memory=MIB, no-rerun (a
#                        triple fault at a RIP in Xen's code, the outer
#                        emulator's, is not run again: the frame expects
#                        it), exits (xentrace runs in dom0 for the frame:
#                        DIR/<frame>.trace), ARGS the guest's command line
#   --jobs FILE          one SPEC a line ('#' comments)
#   --out DIR            where logs go (default build/xen-lane/out)
#   --timeout S          bound on the outer boot (default 90 + 120 a frame)
#   --inner-timeout S    bound on each guest domain (default 120)
#   --resplit DIR        boot nothing: split DIR/outer.log into its frames
#                        again
#   --dry-run            boot nothing: print each frame as DIR/jobs would
#                        list it (FRAME|PRESET|the guest's whole command line)
#   --xl-cfg             with --dry-run: print each frame's xl.cfg instead
#   --from DIR --frame F boot nothing: hand over frame F of an earlier run's
#                        --out DIR (a --jobs run of many frames, run.sh's
#                        matrix) as this command's one frame, once F's line
#                        in DIR/jobs is the one --dry-run prints here
#
# Writes DIR/outer.log (the whole outer console: Xen's serial line, where
# dom0's console and every guest's debug-port lines land), and for each frame
# DIR/<frame>.log (its guest console, Xen's own lines about the domain
# included) and DIR/<frame>.status: the guest's status as the KVM lane writes
# it, (b << 1) | 1 for the status byte b its last status line names
# (65 SUCCESS .. 75 BAD-CMDLINE; a Xen guest has no isa-debug-exit, so the
# line is the status), 0 no status line (the domain crashed or was reset),
# 1 xl could not create the domain (its message is in the log), 137 the
# --inner-timeout bound destroyed it. A frame whose domain triple-faulted at
# a RIP in Xen's own code (the outer TCG's fault) runs once more: the
# console says "@@@ lane-rerun FRAME xen-rip: ...", and the frame's files
# are its second run; so does one whose --inner-timeout ended in the
# firmware, before the guest's first line ("... firmware: ..."). The
# guest's last line is its status line ("ipibench: status WORD",
# kernel/status.c) unless something went on after it, which Xen's own lines
# about the domain then show in the log.
# DIR/jobs lists the frames. A traced frame (exits) also has
# DIR/<frame>.trace: Xen's trace of the domain (xentrace -e 0x000a3000: HVM
# exits, their handlers' records, runstate changes), read into the lines
# of a KVM trace (host/ipibench/xenhost/xentrace.py); DIR/<frame>.xentrace.gz
# is the binary as dom0 sent it.
#
# exit: 0 every frame ran to its end (whatever the guests' statuses: judging
# them is the caller's job); 1 the outer VM failed or a frame is missing;
# 2 usage; 77 cannot prepare (see xen-prepare.sh); 124 the outer VM ran past
# --timeout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
conf=$repo/host/ipibench/xen-presets.conf

image_pvh=$repo/build/ipibench.elf
image_hvm=$repo/build/ipibench.elf32
presets="" append="" out="" timeout="" inner_timeout=120 resplit="" dry_run=0 show_cfg=0
vcpus="" memory="" from="" from_frame="" exits=0
specs=()
frames=() frame_preset=() frame_timeout=() frame_append=() frame_rerun=()
frame_vcpus=() frame_memory=() frame_traced=()

# shellcheck source=host/lane/nested-defaults.sh
. "$here/nested-defaults.sh"
readonly LANE_TAG=xen-lane
# shellcheck source=host/lane/lane-lib.sh
. "$here/lane-lib.sh"
usage() { sed -n '/^# usage:/,/^#                        again/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--image-pvh) image_pvh=${2:?}; shift ;;
		--image-hvm) image_hvm=${2:?}; shift ;;
		--presets) presets=${2?}; shift ;;
		--append) append=${2?}; shift ;;
		--vcpus) vcpus=${2:?}; shift ;;
		--memory) memory=${2:?}; shift ;;
		--exits) exits=1 ;;
		--job) specs+=("${2:?}"); shift ;;
		--jobs)
			[ -r "${2:?}" ] || die "--jobs: cannot read $2"
			while IFS= read -r l; do
				[[ "$l" =~ ^[[:space:]]*(#|$) ]] || specs+=("$l")
			done <"$2"
			shift ;;
		--out) out=${2:?}; shift ;;
		--timeout) timeout=${2:?}; shift ;;
		--inner-timeout) inner_timeout=${2:?}; shift ;;
		--resplit) resplit=${2:?}; shift ;;
		--from) from=${2:?}; shift ;;
		--frame) from_frame=${2:?}; shift ;;
		--dry-run) dry_run=1 ;;
		--xl-cfg) show_cfg=1 ;;
		-h | --help) usage ;;
		*) echo "xen-lane: unknown option '$1'" >&2; usage ;;
		esac
		shift
	done
	for n in "$inner_timeout" "${timeout:-1}"; do
		[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "xen-lane: a bound takes seconds, not '$n'" >&2; exit 2; }
	done
	for n in "${vcpus:-1}" "${memory:-1}"; do
		[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "xen-lane: --vcpus and --memory take a count, not '$n'" >&2; exit 2; }
	done
	if [ ${#specs[@]} -gt 0 ] && { [ -n "$presets" ] || [ -n "$append" ] || [ -n "$vcpus$memory" ] || [ "$exits" = 1 ]; }; then
		echo "xen-lane: --job/--jobs go without --presets, --append, --vcpus, --memory and --exits" >&2
		exit 2
	fi
}

# name|type|vcpus|xl settings|guest keys|description for one preset, or nothing.
preset_line() {
	sed -e 's/[[:space:]]*|[[:space:]]*/|/g' -e 's/^[[:space:]]*//' "$conf" |
		awk -F'|' -v n="$1" '$1 == n && !/^#/ { print; exit }'
}

add_frame() { # name preset timeout append rerun(1, 0: no-rerun) [vcpus] [memory] [traced 0/1]
	local f
	[[ "$1" =~ ^[a-z0-9][a-z0-9.-]*$ ]] || die "frame '$1': letters, digits, '.', '-' only"
	for f in "${frames[@]}"; do
		[ "$f" != "$1" ] || die "frame '$1' given twice"
	done
	[ -n "$(preset_line "$2")" ] || die "no Xen preset '$2' in $conf"
	case "$4" in *[\"\\]*) die "frame '$1': the command line may not hold a quote or a backslash (xl.cfg's string)" ;; esac
	# The preset's guest keys, each unless the command line sets it.
	local args=$4 k keys
	IFS='|' read -r _ _ _ _ keys _ <<<"$(preset_line "$2")"
	for k in $keys; do
		[[ " $args " == *" ${k%%=*}="* ]] || args="${args:+$args }$k"
	done
	frames+=("$1") frame_preset+=("$2") frame_timeout+=("$3") frame_rerun+=("${5:-1}")
	frame_vcpus+=("${6-}") frame_memory+=("${7-}") frame_traced+=("${8:-0}")
	frame_append+=("$(nested_defaults "$args")")
}

trim() { # text: without its leading and trailing blanks
	local t=$1
	t=${t#"${t%%[![:space:]]*}"}
	printf '%s' "${t%"${t##*[![:space:]]}"}"
}

parse_frames() {
	local s name opts args o t r v m x
	if [ ${#specs[@]} -eq 0 ]; then
		[ -n "$presets" ] ||
			presets=$(sed -n 's/^\([a-z0-9-][a-z0-9-]*\)[[:space:]]*|.*/\1/p' "$conf" | tr '\n' ' ')
		for name in ${presets//,/ }; do
			add_frame "$name" "$name" "$inner_timeout" "$append" 1 "$vcpus" "$memory" "$exits"
		done
		return
	fi
	for s in "${specs[@]}"; do
		[[ "$s" == *"|"*"|"* ]] || die "--job '$s': want 'FRAME | OPTIONS | ARGS'"
		name=$(trim "${s%%|*}")
		s=${s#*|}
		opts=$(trim "${s%%|*}")
		args=$(trim "${s#*|}")
		t=$inner_timeout r=1 v="" m="" x=0
		for o in $opts; do
			case "$o" in
			-) ;;
			no-rerun) r=0 ;;
			exits) x=1 ;;
			inner-timeout=[1-9]*) t=${o#inner-timeout=} ;;
			vcpus=[1-9]*) v=${o#vcpus=} ;;
			memory=[1-9]*) m=${o#memory=} ;;
			*) die "--job '$name': unknown option '$o'" ;;
			esac
		done
		add_frame "$name" "${name##*.}" "$t" "$args" "$r" "$v" "$m" "$x"
	done
}

# One frame's xl configuration. Every frame is domain "ipibench"; the
# domain powers itself off (all vCPUs halted with IF=0: Xen's hvm_hlt()
# takes that as the guest's poweroff), and then goes.
# An HVM frame boots the multiboot image directly (xl.cfg kernel=): the
# device model's -kernel hands it to its multiboot option ROM, which
# SeaBIOS runs after hvmloader. It works because the image's multiboot
# header gives its load addresses (boot/multiboot.asm): without them
# QEMU registers the ELF's segments as ROM blobs at their load addresses
# (0x100000..), which the device model writes into guest RAM at its
# reset, over the hvmloader libxl put at 0x100000, and the vCPU entered
# the kernel's header at hvmloader's entry, EAX 0. A solo HVM frame
# (plan=boot) through a GRUB CD took 14 s: 5.3 s for xl create and the
# device model, 4.4 s in SeaBIOS (2.5 s of it the "Press ESC for boot
# menu" wait, which a direct boot skips), 3.8 s in GRUB, 0.14 s in
# ipibench. PVH: 1.6 s.
write_xl_cfg() { # frame preset append file vcpus memory
	xl_cfg "$1" "$2" "$3" "$5" "$6" >"$4"
}

# Prints a frame's xl.cfg (for --dry-run --xl-cfg, and for the frame).
xl_cfg() { # frame preset append [vcpus] [memory MiB]: the preset's, 64
	local line type vcpus settings image
	line=$(preset_line "$2")
	IFS='|' read -r _ type vcpus settings _ <<<"$line"
	case "$type" in
	pvh) image=/lane/ipibench.elf ;;
	hvm) image=/lane/ipibench.elf32 ;;
	*) die "preset $2: type '$type' is not pvh or hvm" ;;
	esac
	{
		echo 'name="ipibench"'
		echo "type=\"$type\""
		echo "kernel=\"$image\""
		echo "cmdline=\"$3\""
		echo "vcpus=${4:-$vcpus}"
		echo "memory=${5:-64}"
		# The TSC runs native: the guest times with it, and Xen's default
		# mode may trap RDTSC (TCG then reports an RDTSCP as an RDTSC
		# exit, docs/xen.md).
		echo 'tsc_mode="native"'
		echo 'on_poweroff="destroy"'
		echo 'on_reboot="destroy"'
		echo 'on_crash="destroy"'
		if [ "$type" = hvm ]; then
			# No UART: the guest's console falls back to port 0xe9, which
			# Xen prints as it does a PVH guest's. No display, no disk.
			echo 'serial="none"'
			echo 'vga="none"'
			echo 'nographic=1'
			echo 'vnc=0'
		fi
		[ -z "$settings" ] || tr ';' '\n' <<<"$settings"
	}
}

write_init() {
	cat >"$1" <<'EOF'
#!/bin/sh
# Generated by host/lane/xen-lane.sh: dom0's init.
export PATH=/bin:/usr/lib/xen-4.17/bin
# /lib/x86_64-linux-gnu: libgcc_s.so.1, which glibc's pthread_cancel
# dlopens (xl aborts without it).
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib/xen-4.17/lib/x86_64-linux-gnu
cs() { read -r u _ </proc/uptime; echo $((${u%.*} * 100 + 1${u#*.} - 100)); }
secs() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }
fail() { echo "@@@ lane-error $*"; dmesg | tail -n 20 | sed 's/^/dom0-dmesg: /'; sleep 1; poweroff -f; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /proc/xen /var/run/xenstored
mount -t devpts pts /dev/pts
echo 1 >/proc/sys/kernel/printk
echo "@@@ lane-info dom0-boot $(secs "$(cs)")s"
for m in xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs; do
	insmod /lane/xen/$m.ko || fail "insmod $m failed"
done
mount -t xenfs xenfs /proc/xen || fail "cannot mount xenfs"
xenstored --no-fork >/tmp/xenstored.log 2>&1 &
i=0
until [ -S /var/run/xenstored/socket ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "xenstored did not start: $(cat /tmp/xenstored.log)"
	sleep 0.1
done
# Every toolstack call has a deadline of its own (busybox timeout): a hung
# xl would otherwise hold the frames after it until the outer VM's bound.
# xl create's watcher outlives it by design (it detaches) and is not killed.
xlt() { # seconds, then xl's arguments (ash: no ${@:2})
	t=$1
	shift
	timeout -k 5 "$t" xl "$@"
}
timeout -k 5 60 xen-init-dom0 >/tmp/init-dom0.log 2>&1 ||
	fail "xen-init-dom0: $(cat /tmp/init-dom0.log)"
xenconsoled --log=none >/dev/null 2>&1 &
echo "@@@ lane-info toolstack $(secs "$(cs)")s"
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
	rm -f /tmp/frame.xentrace
	xentrace -D -e 0x000a3000 -S 256 /tmp/frame.xentrace >/tmp/xentrace.log 2>&1 &
	xtpid=$!
	i=0
	until [ -s /tmp/frame.xentrace ]; do
		i=$((i + 1))
		if [ $i -gt 50 ] || ! kill -0 $xtpid 2>/dev/null; then
			echo "@@@ lane-info xentrace did not start: $(cat /tmp/xentrace.log)"
			break
		fi
		sleep 0.1
	done
}
trace_send() { # frame
	kill -INT $xtpid 2>/dev/null
	wait $xtpid
	[ -s /tmp/frame.xentrace ] || { echo "@@@ lane-info xentrace wrote nothing: $(cat /tmp/xentrace.log)"; return; }
	echo "@@@ lane-trace-begin $1 gzip-base64"
	gzip -c /tmp/frame.xentrace | base64 | sed 's/^/outer-trace64: /'
	echo "@@@ lane-trace-end $1"
}
while IFS='|' read -r name bound rerun traced; do
	tries=0
	while :; do
	tries=$((tries + 1))
	echo "@@@ lane-begin $name"
	t0=$(cs)
	domid=""
	status=-
	[ "$traced" != 1 ] || trace_start
	xlt 120 create /lane/frames/$name.cfg </dev/null >/tmp/xl.log 2>&1
	xl_rc=$?
	# xl once aborted after the domain was up: what counts is the domain.
	if [ $xl_rc != 0 ] && xlt 30 domid ipibench >/dev/null 2>&1; then
		sed 's/^/xl: /' /tmp/xl.log
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
			if [ $misses = 0 ]; then sleep 1; else sleep 0.2; fi
		done
	else
		sed 's/^/xl: /' /tmp/xl.log
		# An HVM domain's device model says why it stopped in its own log.
		for f in /var/log/xen/qemu-dm-*.log; do
			[ ! -s "$f" ] || sed 's/^/qemu-dm: /' "$f"
		done
		# xl itself killed by a signal (a bare "Segmentation fault" twice
		# under the outer TCG) is no answer about the domain: said by name.
		[ "$xl_rc" -le 128 ] || [ "$xl_rc" = 137 ] ||
			echo "@@@ lane-info xl create died of signal $((xl_rc - 128))"
		status=1
	fi
	rm -f /var/log/xen/qemu-dm-*.log
	echo "@@@ lane-end $name status=$status time=$(secs $(($(cs) - t0)))s"
	[ "$traced" != 1 ] || trace_send "$name"
	# The next frame reuses the name.
	xlt 30 destroy ipibench >/dev/null 2>&1
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
		! xlt 30 dmesg 2>/dev/null |
		grep -qE "^\(d$domid\) (ipibench |cmdline: |smp: |tsc: |\{\"record\"|ok |not ok |\[ *[0-9])"; then
		echo "@@@ lane-rerun $name firmware: the bound ended before the guest's first line"
		continue
	fi
	break
	done
done </lane/frames/list
echo "@@@ lane-done"
poweroff -f
EOF
	chmod +x "$1"
}

build_initrd() {
	local dir=$1 i
	rm -rf "$dir"
	mkdir -p "$dir/root/lane/frames"
	write_init "$dir/root/init"
	cp "$image_pvh" "$dir/root/lane/ipibench.elf"
	[ ! -e "$image_hvm" ] || cp "$image_hvm" "$dir/root/lane/ipibench.elf32"
	: >"$dir/root/lane/frames/list"
	for i in "${!frames[@]}"; do
		write_xl_cfg "${frames[$i]}" "${frame_preset[$i]}" "${frame_append[$i]}" \
			"$dir/root/lane/frames/${frames[$i]}.cfg" "${frame_vcpus[$i]}" "${frame_memory[$i]}"
		echo "${frames[$i]}|${frame_timeout[$i]}|${frame_rerun[$i]}|${frame_traced[$i]}" >>"$dir/root/lane/frames/list"
		printf '%s|%s|%s\n' "${frames[$i]}" "${frame_preset[$i]}" "${frame_append[$i]}" >>"$out/jobs"
		# Kept beside its console: what --from checks a frame against.
		cp "$dir/root/lane/frames/${frames[$i]}.cfg" "$out/${frames[$i]}.xl.cfg"
	done
	(cd "$dir/root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$dir/run.cpio"
	cat "$XEN_LANE_BASE" "$dir/run.cpio" >"$dir/initrd.cpio"
	rm -f "$dir/run.cpio"
}

# The status a guest's console ends with, as the KVM lane's exit status.
status_code() {
	case "$1" in
	SUCCESS) echo 65 ;; SKIP) echo 67 ;; ERROR) echo 69 ;; FAILURE) echo 71 ;;
	CRASH) echo 73 ;; BAD-CMDLINE) echo 75 ;; *) echo 0 ;;
	esac
}

# Splits outer.log into the frames. Inside a frame, a guest's debug-port
# line comes as "(dN) text"; Xen prints a line of its buffer when it is full
# (DOMAIN_PBUF_SIZE 200: 199 characters and the NUL), so a piece of 199 is
# joined to the next one, and an empty piece after one ends a line of
# exactly 199. Xen's own lines ("(XEN) ...") and dom0's are kept as they are.
split_console() {
	local name st word
	# LC_ALL=C: a piece's length in bytes, as Xen counts it (gawk would
	# count characters in a UTF-8 locale).
	LC_ALL=C awk -v dir="$out" '
		function flush_guest() { if (pending != "") { print pending >>log_file; pending = "" } }
		{ sub(/\r$/, "") }
		/^@@@ lane-begin / {
			name = $3; log_file = dir "/" name ".log"; pending = ""
			close(log_file); printf "" >log_file; open[name] = 1; next
		}
		/^@@@ lane-end / {
			flush_guest()
			st = $4; sub(/^status=/, "", st)
			if ($3 == name) { f = dir "/" name ".status0"; print st >f; close(f); open[name] = 0 }
			close(log_file); name = ""; next
		}
		# A traced frame'"'"'s trace, after its lane-end (trace_send).
		/^@@@ lane-trace-begin / {
			packed = dir "/" $3 ".xentrace64"; close(packed); printf "" >packed; next
		}
		/^@@@ lane-trace-end / { close(packed); packed = ""; next }
		packed != "" && /^outer-trace64: / { print substr($0, 16) >>packed; next }
		name == "" || /^@@@ / { next }
		/^\(d[1-9][0-9]*\) / {
			piece = substr($0, index($0, " ") + 1)
			pending = pending piece
			if (length(piece) != 199) { print pending >>log_file; pending = "" }
			next
		}
		{ print >>log_file }
		END {
			flush_guest()
			for (n in open) if (open[n]) print n
		}' "$out/outer.log" |
		while IFS= read -r name; do
			rm -f "$out/$name.status"
		done
	read_traces
	for st in "$out"/*.status0; do
		[ -e "$st" ] || continue
		name=$(basename "$st" .status0)
		case "$(cat "$st")" in
		-)
			word=$(sed -n 's/^ipibench: status \([A-Z-]*\)$/\1/p' "$out/$name.log" | tail -n1)
			status_code "$word" >"$out/$name.status" ;;
		*) cp "$st" "$out/$name.status" ;;
		esac
		rm -f "$st"
	done
}

# Each traced frame's xentrace file, as dom0 sent it (gzip in base64),
# into DIR/<frame>.xentrace.gz and its lines for the KVM trace reader,
# DIR/<frame>.trace (a cycle a nanosecond: only the order of times is read).
# A transfer the outer VM's end cut short is read as far as every CPU's came.
read_traces() {
	local packed name cut
	for packed in "$out"/*.xentrace64; do
		[ -e "$packed" ] || continue
		name=$(basename "$packed" .xentrace64)
		base64 -d <"$packed" >"$out/$name.xentrace.gz" 2>/dev/null || true
		rm -f "$packed"
		cut=
		gzip -t "$out/$name.xentrace.gz" 2>/dev/null || cut=--cut
		if ! gzip -dc "$out/$name.xentrace.gz" 2>/dev/null >"$out/$name.xentrace" && [ -z "$cut" ]; then
			cut=--cut
		fi
		PYTHONPATH=$repo/host python3 -m ipibench.xenhost.xentrace "$out/$name.xentrace" \
			$cut >"$out/$name.trace" ||
			echo "# ipibench-trace: unreadable (xenhost/xentrace.py said why on the console)" >>"$out/$name.trace"
		rm -f "$out/$name.xentrace"
	done
}

since_start() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%5.1fs", e - s }'; }

show_progress() { # PIDFILE
	local line f
	exec 3>>"$out/outer.log"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		printf '%s\n' "$line" >&3
		case "$line" in
		"@@@ lane-done")
			: >"$1.done"
			kill -TERM "$(cat "$1")" 2>/dev/null || true ;;
		"@@@ lane-info dom0-boot "*) say "[$(since_start)] dom0: init started, up ${line##* }" ;;
		"@@@ lane-info toolstack "*) say "[$(since_start)] dom0: xenstored and xl ready at ${line##* }" ;;
		"@@@ lane-error "*) say "[$(since_start)] dom0: ${line#@@@ lane-error }" ;;
		"@@@ lane-begin "*) say "[$(since_start)] ${line#@@@ lane-begin }: xl create" ;;
		"@@@ lane-trace-begin "*)
			read -r -a f <<<"${line#@@@ lane-trace-begin }"
			say "[$(since_start)] ${f[0]}: sending Xen's trace" ;;
		"@@@ lane-end "*)
			read -r -a f <<<"${line#@@@ lane-end }"
			say "[$(since_start)] ${f[0]}: domain gone after ${f[2]#time=} (${f[1]})" ;;
		"(XEN) "*"Panic"* | "(XEN) "*"FATAL"*) say "[$(since_start)] Xen: ${line#(XEN) }" ;;
		esac
	done
	exec 3>&-
}

run_outer() { # dir bound
	start=$(date +%s.%N)
	say "outer VM: booting Xen (${#frames[@]} frames, bound $2s)"
	# Xen: its console on COM1, synchronous (sync_console): a guest's lines
	# and dom0's would otherwise share a 16 KiB transmit buffer that drops
	# characters when full; guest_loglvl=all prints the guests' debug-port
	# lines; noreboot: a crash stops instead of looping; bootscrub=0: Xen
	# need not zero the free memory of a throwaway VM, which took seconds
	# under TCG. dom0: 768 MiB, hvc0, and the same throwaway-VM options as
	# the KVM lane's outer kernel (its KDF self-test skipped).
	run_piped "$1" show_progress \
		timeout -k 5 "$2" "${XEN_LANE_OUTER:-qemu-system-x86_64}" -accel tcg,thread=multi \
		-M q35 -cpu max -smp 2 -m 1536M -nodefaults -display none -serial stdio -no-reboot \
		-kernel "$XEN_LANE_XEN" \
		-append "console=com1 com1=115200,8n1 sync_console dom0_mem=768M loglvl=warning guest_loglvl=all/all noreboot bootscrub=0" \
		-initrd "$XEN_LANE_KERNEL console=hvc0 quiet panic=-1 tsc=reliable mitigations=off initcall_blacklist=crypto_kdf108_init,$1/initrd.cpio"
}

# Every frame has a status: else exit 1 naming the first without.
check_frames() {
	local f
	for f in "${frames[@]}"; do
		[ -s "$out/$f.status" ] || { say "frame $f did not finish"; return 1; }
	done
}

# --from DIR --frame F: frame F of DIR handed over as this command's only
# frame, as if it had just run: its console and status under this frame's
# name, and DIR's outer.log with F renamed so (run.sh follows the frame by
# its name there). The frame must be the one this command would have run.
# (tests/xen-lane/replay-lane.sh hands frames over through it too.)
hand_over() {
	local want got
	if [ -z "$from_frame" ] || [ ${#frames[@]} -ne 1 ]; then
		die "--from takes --frame and one frame (--presets P)"
	fi
	# Blanks as words: the jobs list's lines are trimmed, an --append need not be.
	want=$(echo "${frame_preset[0]}|${frame_append[0]}" | tr -s ' ' | sed 's/ *$//; s/| */|/')
	got=$(awk -F'|' -v f="$from_frame" '$1 == f { sub(/^[^|]*\|/, ""); print; exit }' \
		"$from/jobs" 2>/dev/null | tr -s ' ' | sed 's/ *$//; s/| */|/')
	[ "$got" = "$want" ] || die "--from: frame $from_frame of $from ran '$got', not '$want'"
	# The domain too (vCPUs, memory, the preset's settings), as xl.cfg says it.
	if ! diff <(xl_cfg "${frames[0]}" "${frame_preset[0]}" "${frame_append[0]}" \
		"${frame_vcpus[0]}" "${frame_memory[0]}" | tr -s ' ') \
		<(tr -s ' ' <"$from/$from_frame.xl.cfg" 2>/dev/null) >/dev/null; then
		die "--from: frame $from_frame of $from ran another domain (its xl.cfg) than this one asks for"
	fi
	[ -s "$from/$from_frame.status" ] || die "--from: frame $from_frame of $from did not finish"
	out=${out:-$repo/build/xen-lane/out}
	mkdir -p "$out"
	cp "$from/$from_frame.log" "$out/${frames[0]}.log"
	cp "$from/$from_frame.status" "$out/${frames[0]}.status"
	# Its trace, where the batch traced it (exits).
	if [ -e "$from/$from_frame.trace" ]; then
		cp "$from/$from_frame.trace" "$out/${frames[0]}.trace"
		cp "$from/$from_frame.xentrace.gz" "$out/${frames[0]}.xentrace.gz" 2>/dev/null || true
	elif [ "${frame_traced[0]}" = 1 ]; then
		die "--from: frame $from_frame of $from was not traced (its jobs option exits)"
	fi
	# outer.log: Xen's and dom0's boot (run.sh reads Xen's facts there),
	# then this frame alone, with its reruns: not every boot a copy of all.
	awk -v f="$from_frame" -v to="${frames[0]}" '
		!begun && !/^@@@ lane-begin / { print; next }
		/^@@@ lane-begin / { begun = 1; inf = ($3 == f); if (inf) print "@@@ lane-begin " to; next }
		/^@@@ lane-rerun / && $3 == f { $3 = to; print; next }
		inf { if (/^@@@ lane-end /) { $3 = to; inf = 0 } print }' \
		"$from/outer.log" >"$out/outer.log"
	say "frame ${frames[0]}: frame $from_frame of $from"
}

main() {
	local rc
	parse_args "$@"
	if [ -n "$resplit" ]; then
		out=$resplit
		[ -r "$out/outer.log" ] || die "--resplit: no $out/outer.log"
		split_console
		return 0
	fi
	parse_frames
	[ ${#frames[@]} -gt 0 ] || die "no frames to run"
	if [ -n "$from" ]; then
		hand_over
		return 0
	fi
	if [ "$dry_run" = 1 ]; then
		for rc in "${!frames[@]}"; do
			if [ "$show_cfg" = 1 ]; then
				echo "# ${frames[$rc]}.cfg"
				xl_cfg "${frames[$rc]}" "${frame_preset[$rc]}" "${frame_append[$rc]}" \
					"${frame_vcpus[$rc]}" "${frame_memory[$rc]}"
			else
				printf '%s|%s|%s\n' "${frames[$rc]}" "${frame_preset[$rc]}" "${frame_append[$rc]}"
			fi
		done
		return 0
	fi
	[ -r "$image_pvh" ] || die "cannot read $image_pvh (make)"
	out=${out:-$repo/build/xen-lane/out}
	rc=0
	# XEN_LANE_PREPARED=1: the caller ran xen-prepare.sh itself moments
	# ago (tests/xen-lane/lane-test.sh), and its check hashes the cache again.
	[ "${XEN_LANE_PREPARED-}" = 1 ] && [ -f "$repo/build/xen-lane/base.env" ] ||
		"$here/xen-prepare.sh" -q || rc=$?
	[ "$rc" -eq 0 ] || exit "$rc"
	# shellcheck source=/dev/null
	. "$repo/build/xen-lane/base.env"
	mkdir -p "$out"
	rm -f "$out"/*.log "$out"/*.status "$out"/*.xl.cfg "$out"/*.trace "$out"/*.xentrace.gz "$out/jobs"
	build_initrd "$out/boot"
	rc=0
	run_outer "$out/boot" "${timeout:-$((90 + 120 * ${#frames[@]}))}" || rc=$?
	split_console
	rm -rf "${out:?}/boot"
	case "$rc" in
	0) check_frames || return 1 ;;
	124) say "the outer VM ran past its bound"; return 124 ;;
	*) say "the outer VM failed (exit $rc)"; check_frames || true; return 1 ;;
	esac
}

main "$@"
