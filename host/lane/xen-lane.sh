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
#        host/lane/xen-lane.sh --dom0 ... (on a Xen host's dom0, as root)
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
#   --dom0               no outer VM: run the frames on this host's Xen, from
#                        its dom0 (root, xl), with the runner the lane's dom0
#                        runs (host/lane/xen-frames.sh); HVM presets only, the
#                        guest's COM1 to a file (a PVH guest's console is
#                        Xen's debug port, which a release Xen logs at debug
#                        level only, hvm_print_line(), into a ring of 16 KiB
#                        by default); the device model must be QEMU 8.0 or
#                        later (HVM frames, above; XEN_LANE_DEVICE_MODEL
#                        names it where xl's is elsewhere); exit 77 where
#                        this is no dom0 or the device model is missing or
#                        older; exit 2 for debug=corrupt-vpset (or
#                        debug=all): on a Xen before 4.17.6 its VP sets may
#                        corrupt Xen's memory (XSA-475)
#   --job SPEC           a frame of its own: 'FRAME | OPTIONS | ARGS', FRAME
#                        [TAG.]PRESET and unique, OPTIONS '-' or words:
#                        inner-timeout=S, vcpus=N, memory=MIB, no-rerun (a
#                        triple fault at a RIP in Xen's code, the outer
#                        emulator's, is not run again: the frame expects
#                        it), exits (xentrace runs in dom0 for the frame:
#                        DIR/<frame>.trace), console=file (an HVM frame's
#                        COM1 to a file, as a real dom0 runs it: --dom0),
#                        ARGS the guest's command line
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
# 1 xl could not create the domain (its message is in the log), 2 not run:
# a traced frame on a real dom0 where another xentrace runs (xen-frames.sh;
# "@@@ lane-info not-run FRAME: why"), 137 the --inner-timeout bound
# destroyed it. A frame whose domain triple-faulted at a RIP in Xen's own
# code (the outer TCG's fault) runs once more: the console says
# "@@@ lane-rerun FRAME xen-rip: ...", and the frame's files are its
# second run; so does one whose --inner-timeout ended in the firmware,
# before the guest's first line ("... firmware: ..."). The
# guest's last line is its status line ("ipibench: status WORD",
# kernel/status.c) unless something went on after it, which Xen's own lines
# about the domain then show in the log.
# DIR/jobs lists the frames. A traced frame (exits) also has
# DIR/<frame>.trace: Xen's trace of the domain (xentrace -e 0x000a3000: HVM
# exits, their handlers' records, runstate changes), read into the lines
# of a KVM trace (host/ipibench/xenhost/xentrace.py); DIR/<frame>.xentrace.gz
# is the binary as dom0 sent it. A frame whose xl create died of a signal
# keeps xl's core as DIR/<frame>.xl-core.gz.
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
# What dom0 runs on a traced frame's file before it sends it (xen-frames.sh).
trace_filter=$repo/build/lane/xentrace-filter
presets="" append="" out="" timeout="" inner_timeout=120 resplit="" dry_run=0 show_cfg=0
vcpus="" memory="" from="" from_frame="" exits=0 dom0=0
# Where a frame's xl.cfg finds its images, and its HVM console: the lane's
# initrd and no UART (the debug port); a real dom0's build and a file.
cfg_pvh=/lane/ipibench.elf cfg_hvm=/lane/ipibench.elf32 cfg_console=""
specs=()
frames=() frame_preset=() frame_timeout=() frame_append=() frame_rerun=()
frame_vcpus=() frame_memory=() frame_traced=() frame_console=()

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
		--dom0) dom0=1 ;;
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

add_frame() { # name preset timeout append rerun(1, 0: no-rerun) [vcpus] [memory] [traced 0/1] [console]
	local f
	[[ "$1" =~ ^[a-z0-9][a-z0-9.-]*$ ]] || die "frame '$1': letters, digits, '.', '-' only"
	for f in "${frames[@]}"; do
		[ "$f" != "$1" ] || die "frame '$1' given twice"
	done
	[ -n "$(preset_line "$2")" ] || die "no Xen preset '$2' in $conf"
	case "$4" in *[\"\\]*) die "frame '$1': the command line may not hold a quote or a backslash (xl.cfg's string)" ;; esac
	# The preset's guest keys, each unless the command line sets it; on a
	# real dom0 not its skip=, which the lane's outer emulator needs.
	local args=$4 k keys
	IFS='|' read -r _ _ _ _ keys _ <<<"$(preset_line "$2")"
	for k in $keys; do
		[ "$dom0" = 0 ] || [ "${k%%=*}" != skip ] || continue
		[[ " $args " == *" ${k%%=*}="* ]] || args="${args:+$args }$k"
	done
	# A real dom0 reruns nothing: its triple fault at a Xen RIP is a Xen bug
	# to report, and a hang in the firmware no emulator's.
	local rerun=${5:-1}
	[ "$dom0" = 0 ] || rerun=0
	frames+=("$1") frame_preset+=("$2") frame_timeout+=("$3") frame_rerun+=("$rerun")
	frame_vcpus+=("${6-}") frame_memory+=("${7-}") frame_traced+=("${8:-0}")
	frame_console+=("${9-}")
	# The lane's bounds for its nested emulation; a real dom0 runs the guest's own.
	if [ "$dom0" = 1 ]; then
		frame_append+=("$args")
	else
		frame_append+=("$(nested_defaults "$args")")
	fi
}

trim() { # text: without its leading and trailing blanks
	local t=$1
	t=${t#"${t%%[![:space:]]*}"}
	printf '%s' "${t%"${t##*[![:space:]]}"}"
}

parse_frames() {
	local s name opts args o t r v m x c
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
		t=$inner_timeout r=1 v="" m="" x=0 c=""
		for o in $opts; do
			case "$o" in
			-) ;;
			no-rerun) r=0 ;;
			exits) x=1 ;;
			console=file) c="file" ;;
			inner-timeout=[1-9]*) t=${o#inner-timeout=} ;;
			vcpus=[1-9]*) v=${o#vcpus=} ;;
			memory=[1-9]*) m=${o#memory=} ;;
			*) die "--job '$name': unknown option '$o'" ;;
			esac
		done
		add_frame "$name" "${name##*.}" "$t" "$args" "$r" "$v" "$m" "$x" "$c"
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
write_xl_cfg() { # frame preset append file vcpus memory [console dir]
	cfg_console=${7:-$cfg_console} xl_cfg "$1" "$2" "$3" "$5" "$6" >"$4"
}

# Prints a frame's xl.cfg (for --dry-run --xl-cfg, and for the frame).
xl_cfg() { # frame preset append [vcpus] [memory MiB]: the preset's, 64
	local line type vcpus settings image
	line=$(preset_line "$2")
	IFS='|' read -r _ type vcpus settings _ <<<"$line"
	case "$type" in
	pvh) image=$cfg_pvh ;;
	hvm) image=$cfg_hvm ;;
	*) die "preset $2: type '$type' is not pvh or hvm" ;;
	esac
	{
		echo 'name="ipibench"'
		echo "type=\"$type\""
		echo "kernel=\"$image\""
		echo "cmdline=\"$3\""
		echo "vcpus=${4:-$vcpus}"
		# xen-evtchn binds 64 ports a vCPU (xl's default is 1023 in all).
		echo "max_event_channels=$((64 * ${4:-$vcpus} + 64))"
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
			# Xen prints as it does a PVH guest's; on a real dom0 COM1 to
			# a file (Xen's ring keeps too little). No display, no disk.
			if [ -n "$cfg_console" ]; then
				echo "serial=\"file:$cfg_console/$1.console\""
			else
				echo 'serial="none"'
			fi
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
timeout -k 5 60 xen-init-dom0 >/tmp/init-dom0.log 2>&1 ||
	fail "xen-init-dom0: $(cat /tmp/init-dom0.log)"
xenconsoled --log=none >/dev/null 2>&1 &
echo "@@@ lane-info toolstack $(secs "$(cs)")s"
# The frames: the same runner a real dom0 runs (run.sh --accel xen).
XEN_FRAMES_TRACE_FILTER=/lane/xentrace-filter sh /lane/xen-frames.sh /lane/frames xen
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
	cp "$here/xen-frames.sh" "$dir/root/lane/xen-frames.sh"
	[ ! -x "$trace_filter" ] || cp "$trace_filter" "$dir/root/lane/xentrace-filter"
	cp "$image_pvh" "$dir/root/lane/ipibench.elf"
	[ ! -e "$image_hvm" ] || cp "$image_hvm" "$dir/root/lane/ipibench.elf32"
	: >"$dir/root/lane/frames/list"
	for i in "${!frames[@]}"; do
		write_xl_cfg "${frames[$i]}" "${frame_preset[$i]}" "${frame_append[$i]}" \
			"$dir/root/lane/frames/${frames[$i]}.cfg" "${frame_vcpus[$i]}" "${frame_memory[$i]}" \
			"${frame_console[$i]:+/lane/frames}"
		echo "${frames[$i]}|${frame_timeout[$i]}|${frame_rerun[$i]}|${frame_traced[$i]}|${frame_console[$i]}" >>"$dir/root/lane/frames/list"
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
	# Xen writes a guest's line whole, between two writes of dom0's: a dom0
	# line whose newline had not come yet carries the guest's piece on its
	# end ("@@@ lane-info domid 3(d3) text", once in a CI-sized run, which
	# lost the piece and broke a record). The first pass puts every such
	# piece on a line of its own (not inside Xen's own "(XEN) " lines).
	# LC_ALL=C: a piece's length in bytes, as Xen counts it (gawk would
	# count characters in a UTF-8 locale).
	LC_ALL=C awk '{ sub(/\r$/, "") }
		!/^\(XEN\) / && match($0, /\(d[1-9][0-9]*\) /) && RSTART > 1 {
			print substr($0, 1, RSTART - 1); print substr($0, RSTART); next
		}
		{ print }' "$out/outer.log" |
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
		# xl'"'"'s core, where xl died of a signal (xen-frames.sh xl_died).
		/^@@@ lane-core-begin / {
			core = dir "/" $3 ".xl-core64"; close(core); printf "" >core; next
		}
		/^@@@ lane-core-end / { close(core); core = ""; next }
		core != "" && /^outer-core64: / { print substr($0, 15) >>core; next }
		# A real dom0'"'"'s runner prints the guest'"'"'s COM1 lines so (xen-frames.sh file).
		name != "" && /^@@@ guest / { print substr($0, 11) >>log_file; next }
		# ... and its newline, when it came, an empty line.
		name == "" || /^@@@ / || /^$/ { next }
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
		}' |
		while IFS= read -r name; do
			rm -f "$out/$name.status"
		done
	read_traces
	for st in "$out"/*.xl-core64; do
		[ -e "$st" ] || continue
		base64 -d <"$st" >"${st%64}.gz" 2>/dev/null || true
		rm -f "$st"
	done
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
	local packed name cut domid vmx
	for packed in "$out"/*.xentrace64; do
		[ -e "$packed" ] || continue
		name=$(basename "$packed" .xentrace64)
		# Its domain only (a real host runs others), and VMX's exit reasons
		# on Intel (the guest's env record names the vendor).
		domid=$(awk -v f="$name" '/^@@@ lane-begin / { in_f = ($3 == f) }
			in_f && /^@@@ lane-info domid [0-9]+$/ { d = $4 } END { print d }' "$out/outer.log")
		vmx=
		! grep -q '"record":"env".*"vendor":"GenuineIntel"' "$out/$name.log" 2>/dev/null || vmx=--vmx
		base64 -d <"$packed" >"$out/$name.xentrace.gz" 2>/dev/null || true
		rm -f "$packed"
		cut=
		gzip -t "$out/$name.xentrace.gz" 2>/dev/null || cut=--cut
		if ! gzip -dc "$out/$name.xentrace.gz" 2>/dev/null >"$out/$name.xentrace" && [ -z "$cut" ]; then
			cut=--cut
		fi
		PYTHONPATH=$repo/host python3 -m ipibench.xenhost.xentrace "$out/$name.xentrace" \
			${domid:+--domain "$domid"} $vmx $cut >"$out/$name.trace" ||
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
		"@@@ lane-info not-run "*) say "[$(since_start)] ${line#@@@ lane-info not-run }" ;;
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

# --dom0: this host is a Xen dom0. Its Xen runs the frames through the
# runner the lane's dom0 runs; the runner's output is the outer.log a lane
# run's serial line would have been, and splits the same way.
check_dom0() {
	local caps=${XEN_LANE_DOM0_CAPS:-/proc/xen/capabilities}
	if ! grep -qs control_d "$caps"; then
		say "not a Xen dom0: $caps does not say control_d (--accel xen runs in a Xen host's dom0; anywhere else --accel xen-in-tcg)"
		exit 77
	fi
	command -v xl >/dev/null || { say "no xl on PATH (Debian: xen-utils-common)"; exit 77; }
	if [ -z "${XEN_LANE_DOM0_CAPS-}" ] && [ "$(id -u)" != 0 ]; then
		say "xl needs root: sudo ./run.sh --accel xen ..."
		exit 77
	fi
	check_device_model
}

# The device model xl runs for an HVM frame (its default: Debian's
# qemu-system-xen, else upstream Xen's own build), or XEN_LANE_DEVICE_MODEL
# where xl.cfg's device_model_override names another: QEMU 8.0 or later,
# else the frame's ROM waits forever (docs/xen.md, xen-prepare.sh); exit 77.
check_device_model() {
	local dm="" p v install="Debian 12: apt-get install -t bookworm-backports qemu-system-xen"
	local paths=(/usr/libexec/xen-qemu-system-i386 /usr/lib/xen/bin/qemu-system-i386)
	[ -z "${XEN_LANE_DEVICE_MODEL-}" ] || paths=("$XEN_LANE_DEVICE_MODEL")
	for p in "${paths[@]}"; do
		[ -x "$p" ] && { dm=$p; break; }
	done
	if [ -z "$dm" ]; then
		say "no device model for HVM frames at ${paths[*]} (QEMU 8.0 or later; $install; XEN_LANE_DEVICE_MODEL=PATH names another)"
		exit 77
	fi
	v=$("$dm" --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1) || true
	if [ -z "$v" ]; then
		say "the device model $dm says no QEMU version (--version): an HVM frame needs QEMU 8.0 or later ($install)"
		exit 77
	fi
	if [ "${v%%.*}" -lt 8 ]; then
		say "the device model $dm is QEMU $v: an HVM frame needs 8.0 or later, whose fw_cfg has the DMA its direct kernel boot waits for ($install)"
		exit 77
	fi
}

# debug=corrupt-vpset (debug=all plants it too) names VPs past the domain's
# in Hyper-V VP sets: a Xen before 4.17.6 then writes past a CPU mask
# (XSA-475). The lane's own Xen is fixed (xen-prepare.sh); a host's may not
# be: refused there, exit 2.
refuse_corrupt_vpset() {
	local i w words
	for i in "${!frames[@]}"; do
		read -r -a words <<<"${frame_append[$i]}"
		for w in "${words[@]}"; do
			[ "${w%%=*}" = debug ] || continue
			case ",${w#*=}," in
			*,corrupt-vpset,* | ,all,)
				echo "xen-lane: --dom0: frame ${frames[$i]}: $w is refused on a real Xen host: on a Xen before 4.17.6 its malformed VP sets may corrupt Xen's memory (XSA-475); the lane (--accel xen-in-tcg) runs it on its own, fixed Xen" >&2
				exit 2 ;;
			esac
		done
	done
}

run_dom0() { # bound
	local i dir=$out/frames type
	for i in "${!frames[@]}"; do
		IFS='|' read -r _ type _ <<<"$(preset_line "${frame_preset[$i]}")"
		if [ "$type" != hvm ]; then
			echo "xen-lane: --dom0: frame ${frames[$i]} is PVH, whose console is Xen's debug port, which a release Xen logs at debug level only (and into a 16 KiB ring); use an HVM preset (xen-viridian)" >&2
			exit 2
		fi
	done
	rm -rf "$dir"
	mkdir -p "$dir"
	cfg_console=$dir
	: >"$dir/list"
	for i in "${!frames[@]}"; do
		write_xl_cfg "${frames[$i]}" "${frame_preset[$i]}" "${frame_append[$i]}" \
			"$dir/${frames[$i]}.cfg" "${frame_vcpus[$i]}" "${frame_memory[$i]}"
		echo "${frames[$i]}|${frame_timeout[$i]}|${frame_rerun[$i]}|${frame_traced[$i]}" >>"$dir/list"
		printf '%s|%s|%s\n' "${frames[$i]}" "${frame_preset[$i]}" "${frame_append[$i]}" >>"$out/jobs"
		cp "$dir/${frames[$i]}.cfg" "$out/${frames[$i]}.xl.cfg"
	done
	start=$(date +%s.%N)
	say "this host's Xen (dom0): ${#frames[@]} frames, bound $1s"
	# What ran them, as a lane run reads it from Xen's boot lines.
	# shellcheck disable=SC2016 # $0 and $1 are sh -c's own
	XEN_FRAMES_TRACE_FILTER=$trace_filter run_piped "$dir" show_progress timeout -k 5 "$1" sh -c '
		xl info 2>/dev/null | sed -n "s/^\(xen_version\|xen_commandline\) *: /@@@ lane-info xl-\1 /p"
		echo "@@@ lane-info dom0-kernel $(uname -r)"
		exec sh "$0" "$1" file' "$here/xen-frames.sh" "$dir"
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
	if [ "$dom0" = 1 ]; then
		refuse_corrupt_vpset
		# What a real dom0's frames run with: this build's image, COM1 to a file.
		cfg_hvm=$(cd "$(dirname "$image_hvm")" && pwd)/$(basename "$image_hvm")
		cfg_console=${out:-$repo/build/xen-lane/out}/frames
	fi
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
	# The filter, made (again, where its source changed) for a traced
	# frame; without it a trace goes whole.
	if [[ " ${frame_traced[*]} " == *" 1 "* ]] &&
		! make -s -C "$repo" "${trace_filter#"$repo"/}" >/dev/null 2>&1; then
		say "cannot make $trace_filter: traces go whole, credit2's records and all"
	fi
	out=${out:-$repo/build/xen-lane/out}
	rc=0
	if [ "$dom0" = 1 ]; then
		check_dom0
		mkdir -p "$out"
		rm -f "$out"/*.log "$out"/*.status "$out"/*.xl.cfg "$out"/*.trace "$out"/*.xentrace.gz "$out/jobs" "$out/outer.log"
		run_dom0 "${timeout:-$((120 * ${#frames[@]}))}" || rc=$?
		split_console
		case "$rc" in
		0) check_frames || return 1 ;;
		124) say "the frames ran past their bound"; return 124 ;;
		*) say "the runner failed (exit $rc)"; check_frames || true; return 1 ;;
		esac
		return 0
	fi
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
