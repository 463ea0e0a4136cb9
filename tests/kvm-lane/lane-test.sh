#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kvm-lane group of tests/run (and `make check-kvm`): first host-rip.sh
# on saved traces (no VM), then prepares the lane (a SKIP line with the
# reason when that is impossible here), then the passes of the lane below,
# each judged like a boot test (judge.py), and after the suite pass a check of
# how a rerun is split and judged (lane.sh --resplit on its real frame):
#   suite    every lane preset, the correctness suite on every backend;
#   figures  the presets that offer the paravirtual paths, the suite, a
#            short send-cost on every backend and the flush benchmark:
#            every offered backend must produce figures, and hv-xmm the
#            flush hypercalls' in their slow and XMM-fast forms (the resets
#            that once kept flush out were the outer TCG's; README.md);
#   negative debug=corrupt-vpset must turn hv-xmm into a FAILURE naming the
#            Ex call: proof that the lane can fail;
#   reset    debug=triple-fault must end x2apic in a reset that stands: the
#            lane runs a preset again only on the outer TCG's own SVM fault
#            (a guest RIP inside the L1 host's kvm_amd, see lane.sh), never
#            on a guest's triple fault;
#   stall    debug=stall on the hv-ipi-ex-xmm sender: another CPU's stall
#            watchdog must end the run ERROR naming the CPU, the XMM-fast
#            call with its input, and the RIP it took by NMI;
#   microvm  run.sh --machine microvm through the lane: x2apic on QEMU
#            microvm without 8259, PIT or RTC, booted through PVH, the TSC
#            frequency from kvmclock, the suite;
#   exits    x2apic, hv-xmm and kvm-pv traced (lane.sh --exits) with the
#            guest's phase markers on: exits per iteration of each backend's
#            send, halted wake-up and self IPI as exits.expect states them,
#            and every record's APIC not accelerated (judge_exits.py;
#            halt_gap=6000: under nested TCG a target needs more than the
#            default 50 us to be back in HLT, and debug=slow-eoi keeps each
#            handler 2 ms longer (so block_gap too); slow-eoi: single's EOI
#            exit inside the sender's region for ack-after-eoi only); then
#            ab over kvm.halt_poll_ns=0,2000000: single-halt's halted target
#            wakes after a block on one side, mostly without on the other
#            (kvm_vcpu_wakeup); the same outer console cut
#            short inside a trace and inside a frame must still split into
#            the finished frames and the guest console it got to (what
#            lane.sh keeps when its bound runs out); run.sh --exits
#            through the lane prints its table; run.sh ab over kvm_amd.avic
#            reports that the lane's KVM cannot grant AVIC and why; then
#            debug=extra-exit (every send reads the APIC ID first) must fail
#            that judgement; and the example workflow's exits job, matrix
#            --exits (one boot of x2apic) then gate --exits of it against
#            itself, through the lane.
# Nested KVM under TCG costs ~100k cycles an exit, so the loops are short.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

base=build/kvm-lane/out

# A check's verdict: "ok - <ok>" when it found no problems, else "not ok -
# <name>" with each problem as a comment line; the status says which.
tally() {
	local name=$1 ok=$2
	shift 2
	if [ $# -eq 0 ]; then
		echo "ok - $ok"
		return 0
	fi
	echo "not ok - $name"
	printf '%s\n' "$@" | sed 's/^/#   /'
	return 1
}

# host-rip.sh decides which resets the lane runs again, so it is tested here
# first, without the lane: on a real trace of the outer TCG's fault and one
# of a guest's own triple fault (debug=triple-fault), under the host's sh
# and awk and, where installed, busybox's (what the outer VM runs).
host_rip_test() {
	local fx=tests/kvm-lane/fixtures shells=("sh") sh got problems=()
	[ -x /bin/busybox ] && shells+=("busybox")
	for sh in "${shells[@]}"; do
		local run=(sh tests/kvm-lane/host-rip.sh)
		# busybox: its ash and, through PATH, its awk.
		[ "$sh" = busybox ] && run=(env PATH="$bbdir:$PATH" /bin/busybox sh tests/kvm-lane/host-rip.sh)
		got=$("${run[@]}" $fx/modules $fx/trace-host-rip.txt)
		[ "$got" = "0xffffffffc0797b40 kvm_amd=0xffffffffc0780000+200704" ] ||
			problems+=("$sh: outer fault read as '$got'")
		"${run[@]}" $fx/modules $fx/trace-guest-reset.txt >/dev/null &&
			problems+=("$sh: a guest's triple fault taken for the outer emulator's")
		grep -v '^kvm_amd ' $fx/modules >"$bbdir/modules"
		"${run[@]}" "$bbdir/modules" $fx/trace-host-rip.txt >/dev/null &&
			problems+=("$sh: a signature found without kvm_amd loaded")
	done
	tally "kvm-lane: host-rip.sh" \
		"kvm-lane: host-rip.sh tells the outer TCG's fault from a guest reset (${shells[*]})" \
		"${problems[@]}"
}
bbdir=$(mktemp -d)
trap 'rm -rf "$bbdir"' EXIT
ln -s /bin/busybox "$bbdir/awk"
host_rip_test
early=$?

prep=$(tests/kvm-lane/prepare.sh 2>&1)
case $? in
0) ;;
77) echo "ok - kvm-lane # SKIP cannot prepare: $(echo "$prep" | tail -n 3 | tr '\n' ' ')"
    exit $early ;;
*) echo "not ok - kvm-lane: prepare failed"
   echo "$prep" | tail -n 10 | sed 's/^/#   /'
   exit 1 ;;
esac
make -s all >/dev/null || { echo "not ok - kvm-lane: build"; exit 1; }
read -r -a all <<<"$(sed -n 's/^readonly LANE_PRESETS=(\(.*\))$/\1/p' tests/kvm-lane/lane.sh)"

# run_lane NAME PRESETS APPEND [lane.sh options...]: one outer boot into
# $base/NAME; on failure a TAP line and 1.
run_lane() {
	local name=$1 presets=$2 append=$3 out=$base/$1 start
	shift 3
	rm -rf "$out"
	mkdir -p "$out"
	start=$(date +%s)
	if ! tests/kvm-lane/lane.sh --image build/ipibench.elf32 --presets "$presets" "$@" \
		--append "$append" --inner-timeout 240 --out "$out" >"$out/lane.txt" 2>&1; then
		echo "not ok - kvm-lane: $name: the outer VM did not run every preset"
		tail -n 15 "$out/lane.txt" | sed 's/^/#   /'
		return 1
	fi
	echo "# kvm-lane: $name: $presets in $(($(date +%s) - start)) s"
}

# pass NAME PRESETS APPEND [judge options...]
pass() {
	local name=$1 presets=$2 append=$3
	shift 3
	run_lane "$name" "$presets" "$append" || return 1
	python3 tests/kvm-lane/judge.py --label "$name" "$@" "$base/$name" ${presets//,/ }
}

# The host side of a rerun, on the suite pass's real kvm-pv frame: an
# outer.log where that frame follows a reset with the outer fault's
# signature must split to the second frame and be judged on it, with a
# note; the same reset without the rerun line must fail, showing where
# the guest stopped.
rerun_split_test() {
	local d=$base/rerun frame problems=()
	rm -rf "$d" && mkdir -p "$d/with" "$d/without"
	frame=$(sed -n '/^@@@ lane-begin kvm-pv$/,/@@@ lane-end kvm-pv /p' "$base/suite/outer.log")
	[ -n "$frame" ] || { echo "not ok - kvm-lane: rerun split: no kvm-pv frame in the suite pass"; return 1; }
	local reset='@@@ lane-begin kvm-pv
smp: 2 of 2 CPUs online
check: delivery correctness on 2 CPUs
@@@ lane-end kvm-pv status=0 time=0.90s
outer-trace: qemu-system-x86-236 [000] d..1. 34.613240: kvm_exit: vcpu 0 reason shutdown rip 0xffffffffc0797b40 info1 0x0'
	printf '%s
%s
%s
' "$reset" \
		"@@@ lane-rerun kvm-pv host-rip=0xffffffffc0797b40 kvm_amd=0xffffffffc0780000+200704" \
		"$frame" >"$d/with/outer.log"
	printf '%s
' "$reset" >"$d/without/outer.log"
	tests/kvm-lane/lane.sh --resplit "$d/with" && tests/kvm-lane/lane.sh --resplit "$d/without" ||
		problems+=("lane.sh --resplit failed")
	local with without
	with=$(python3 tests/kvm-lane/judge.py "$d/with" kvm-pv)
	without=$(python3 tests/kvm-lane/judge.py "$d/without" kvm-pv)
	[[ "$with" == "ok - "*"note: ran twice"* ]] || problems+=("after a rerun: $with")
	[[ "$without" == "not ok - "*"inner QEMU exit 0"*"console: check: delivery correctness"* ]] ||
		problems+=("a reset that stands: $without")
	tally "kvm-lane: rerun split" \
		"kvm-lane: a rerun is judged on its second frame with a note; a reset alone fails" \
		"${problems[@]}"
}

# What a timeout leaves, on the exits pass's real outer console: cut inside
# kvm-pv's trace, the frames before it stand and the trace decodes as far as
# it came, marked as cut; cut inside kvm-pv's frame, its guest console is
# kept as far as it got, with no status.
cut_split_test() {
	local src=$base/exits/outer.log d=$base/cut problems=() n
	rm -rf "$d" && mkdir -p "$d/trace" "$d/frame"
	n=$(grep -n '^@@@ lane-trace-begin kvm-pv' "$src" | cut -d: -f1)
	[ -n "$n" ] || { echo "not ok - kvm-lane: cut split: no kvm-pv trace in the exits pass"; return 1; }
	head -n $((n + 3)) "$src" >"$d/trace/outer.log"
	n=$(grep -n '^@@@ lane-begin kvm-pv' "$src" | cut -d: -f1)
	head -n $((n + 12)) "$src" >"$d/frame/outer.log"
	tests/kvm-lane/lane.sh --resplit "$d/trace" && tests/kvm-lane/lane.sh --resplit "$d/frame" ||
		problems+=("lane.sh --resplit failed")
	cmp -s "$d/trace/hv-xmm.trace" "$base/exits/hv-xmm.trace" ||
		problems+=("the trace of a finished frame differs")
	[ -s "$d/trace/kvm-pv.status" ] && [ "$(tail -n 1 "$d/trace/kvm-pv.trace")" = 		"# ipibench-trace: cut short (the outer VM stopped sending it)" ] ||
		problems+=("cut inside the trace: no status, or the trace not marked cut")
	[ ! -e "$d/frame/kvm-pv.status" ] && [ -s "$d/frame/kvm-pv.log" ] &&
		[ "$(head -n 3 "$d/frame/kvm-pv.log")" = "$(head -n 3 "$base/exits/kvm-pv.log")" ] ||
		problems+=("cut inside the frame: a status, or not the guest's console")
	tally "kvm-lane: cut split" \
		"kvm-lane: a console cut short keeps the finished frames, the trace sent so far, the guest console so far" \
		"${problems[@]}"
}

# exits_pass NAME PRESETS APPEND [judge_exits options...]
exits_pass() {
	local name=$1 presets=$2 append=$3
	shift 3
	run_lane "$name" "$presets" "$append" --exits || return 1
	python3 tests/kvm-lane/judge_exits.py tests/kvm-lane/exits.expect "$base/$name" \
		${presets//,/ } "$@"
}

# expect_run NAME WANT_RC RC OUTPUT PATTERN...: a TAP line; ok when RC is
# WANT_RC and OUTPUT has a line matching each (grep) PATTERN.
expect_run() {
	local name=$1 want=$2 rc=$3 out=$4 p missing=
	shift 4
	for p in "$@"; do
		grep -q "$p" <<<"$out" || missing="$missing /$p/"
	done
	if [ "$rc" = "$want" ] && [ -z "$missing" ]; then
		echo "ok - kvm-lane: $name"
		return 0
	fi
	echo "not ok - kvm-lane: $name (exit $rc, expected $want${missing:+; lacks$missing})"
	tail -n 12 <<<"$out" | sed 's/^/#   /'
	return 1
}

rc=$early
pass suite "$(IFS=,; echo "${all[*]}")" "plan=check" || rc=1
rerun_split_test || rc=1
# An outer VM past its bound is exit 124, which run.sh reports as TIMEOUT.
out=$(tests/kvm-lane/lane.sh --image build/ipibench.elf32 --presets x2apic --timeout 3 \
	--append plan=boot --out "$base/bound" 2>&1)
expect_run "lane.sh: an outer VM past --timeout exits 124 and says so" 124 $? "$out" \
	"^kvm-lane: error: outer VM timed out after 3s" || rc=1
pass figures hv-xmm,hv-vapic,kvm-pv \
	"plan=default bench=send-cost,flush iters=3 warmup=1 budget=1" || rc=1
# Each lost IPI waits out deadline= (ms): 200 ms rather than 1 s, 22 of them.
pass negative hv-xmm "plan=check backends=hv-ipi-ex-xmm debug=corrupt-vpset deadline=200" \
	--expect-failure "HvCallSendSyntheticClusterIpiEx \(XMM-fast\) returned INVALID_HYPERCALL_INPUT" ||
	rc=1
pass reset x2apic "plan=boot debug=triple-fault" --expect-reset || rc=1
# QEMU microvm as microVM monitors present a guest (no 8259, PIT or RTC),
# booted through PVH, under real KVM: run.sh tells the lane the machine and
# the image; the TSC frequency comes from kvmclock; the suite passes.
out=$(./run.sh --accel kvm-in-tcg --preset x2apic --machine microvm --no-save --verbose \
	--timeout 120 --append "plan=check" 2>&1)
expect_run "run.sh --accel kvm-in-tcg --machine microvm: PVH, no 8259, TSC from kvmclock, the suite passes" \
	0 $? "$out" "^loader: pvh$" "^pic: no 8259" "^tsc: [0-9]* kHz from kvmclock" \
	"^smp: 2 of 2 CPUs online" "^check: [0-9]* passed, 0 failed" || rc=1
# The stall watchdog under real KVM: the sender stalls with IF=0 while its
# last hypercall's input is in its buffers; another CPU's tick must name the
# CPU, the XMM-fast call and its input, and take RIP by NMI.
pass stall hv-xmm "plan=bench bench=send-cost backends=hv-ipi-ex-xmm debug=stall deadline=200 iters=20 warmup=1 budget=1" \
	--expect-error "^watchdog: CPU 1 \(APIC ID 1\) made no progress .*latest hypercall HvCallSendSyntheticClusterIpiEx \(code 0x0015, XMM-fast.*RIP [0-9a-f]{16} CS 0008 \(NMI taken\)" ||
	rc=1
# debug=slow-eoi (2 ms before every EOI) moves no exit and lets the trace
# see on which side of the sender's region the EOI falls: inside for
# single's ack-after-eoi, outside for its default order (exits.expect).
exits_pass exits x2apic,hv-xmm,kvm-pv \
	"plan=bench bench=send-cost,single,single-halt,self backends=xapic,xapic-nmi,x2apic,x2apic-nmi,hv-ipi,hv-ipi-slow,hv-ipi-ex-xmm,kvm-pv-ipi iters=50 warmup=2 budget=1 halt_gap=6000 block_gap=6000 markers=1 debug=slow-eoi" ||
	rc=1
cut_split_test || rc=1
# The users' command: run.sh --exits through the lane prints the table;
# --require-apicv: the lane's KVM has no AVIC, so it must end in exit 32.
out=$(./run.sh --accel kvm-in-tcg --preset hv-xmm --exits --require-apicv --no-save --quiet \
	--timeout 240 --append "plan=bench bench=send-cost backends=hv-ipi iters=30 warmup=2 budget=1" 2>&1)
expect_run "run.sh --exits --accel kvm-in-tcg --preset hv-xmm prints the exits table; --require-apicv without AVIC exits 32" \
	32 $? "$out" \
	"^  hv-ipi send-cost send: sender 1.00 hypercall (HvCallSendSyntheticClusterIpi fast)" \
	"^  hv-ipi send-cost send: .* | APIC accelerated: no (1.00 trapped APIC accesses per iteration: 1.00 on the targets (msr (EOI)))$" \
	"^  AVIC: disabled in kvm_amd .*inhibited for this VM from .*DISABLED" || rc=1
# The example workflow's exits job (.github/workflows/example.yml) in the
# lane: matrix --exits of one preset at its own -smp, one boot, a plan
# subset; the boot's folder keeps the trace and the exits as run --exits
# does; then gate --exits of the matrix against itself must compare exit rows
# and pass. One outer VM boot (the gate boots nothing).
matrix_exits_test() {
	local out rc mdir problems=()
	rm -rf "$base/matrix"
	out=$(IPIBENCH_RESULTS=$base/matrix ./run.sh matrix --presets x2apic --boots 1 --accel kvm-in-tcg \
		--exits --timeout 240 --label exits \
		--append "plan=bench bench=single backends=x2apic iters=20 warmup=2 budget=1" 2>&1)
	rc=$?
	expect_run "run.sh matrix --exits --accel kvm-in-tcg: every boot traced, its exits table printed" \
		0 $rc "$out" \
		"^matrix: \[1\] x2apic-smp2 boot 1: exit 0 " \
		"^  x2apic single round-trip: sender 1\.00 msr (ICR)" || return 1
	mdir=$(ls -d "$base"/matrix/*-exits)
	[ -s "$mdir/x2apic-smp2/boot1/kvm-trace.txt" ] || problems+=("no kvm-trace.txt in $mdir/x2apic-smp2/boot1")
	grep -q '"record":"result".*"exits":{' "$mdir/x2apic-smp2/boot1/results.json" ||
		problems+=("no exits in the boot's results.json")
	tally "kvm-lane: matrix --exits folders" \
		"kvm-lane: matrix --exits: each boot's folder keeps the trace and the records' exits" \
		"${problems[@]}" || return 1
	out=$(./run.sh gate --exits --baseline "$mdir" "$mdir" 2>&1)
	expect_run "run.sh gate --exits of that matrix against itself: exit rows compared, none with more" \
		0 $? "$out" "^gate: pass: .*, [1-9][0-9]* exit rows compared (0 with more exits)"
}
matrix_exits_test || rc=1
# ab over kvm_amd.avic in the lane: TCG's SVM has no AVIC, so avic=1 must be
# refused by the module and the run must say so, with the reason; side B then
# ran as side A did, and ab says there is nothing to compare (exit 34).
rm -rf "$base/ab"
out=$(IPIBENCH_RESULTS=$base/ab ./run.sh ab --module-param kvm_amd.avic=0,1 --boots 1 --accel kvm-in-tcg \
	--preset x2apic --timeout 240 --append "plan=bench bench=send-cost backends=x2apic iters=10 warmup=1 budget=1" 2>&1)
expect_run "run.sh ab --module-param kvm_amd.avic=0,1 reports that AVIC was not granted, and why" \
	34 $? "$out" \
	"the lane's kvm_amd.avic: asked 1, got N: the CPU has no AVIC" \
	"^ab: both sides ran with kvm_amd.avic=N: nothing to compare" || rc=1
# ab over kvm.halt_poll_ns in the lane: with polling off every halted wake
# of single-halt comes after a block (b1.00); with a 2 ms window its poll
# passes mostly do not (b under 0.7), and its block pass still does. Each
# side reads the lane's parameter back. The row judged is the second poll
# pass (ack-after-eoi): the first one's warm-up is where KVM's adaptive
# window grows from 0 (10, 20, 40 ... us), and in one run of three its
# measured iterations still blocked a quarter of the time (b0.75).
rm -rf "$base/ab-poll"
out=$(IPIBENCH_RESULTS=$base/ab-poll ./run.sh ab --module-param kvm.halt_poll_ns=0,2000000 --boots 1 \
	--accel kvm-in-tcg --preset x2apic --exits --timeout 240 \
	--append "plan=bench bench=single-halt backends=x2apic iters=20 warmup=30 budget=1" 2>&1)
expect_run "run.sh ab --module-param kvm.halt_poll_ns=0,2000000: the halted target's wakes change from blocked to polled" \
	0 $? "$out" \
	"the lane's kvm.halt_poll_ns: asked 0, got 0" \
	"the lane's kvm.halt_poll_ns: asked 2000000, got 2000000" \
	"^single-halt  *round-trip  *ack-after-eoi  *x2apic .* b\(1\.00\|0\.9[0-9]\)  *s[0-9.]* t[0-9.]* b0\.[0-6]" \
	"^single-halt  *round-trip  *block  *x2apic .* b\(1\.00\|0\.9[0-9]\)  *s[0-9.]* t[0-9.]* b\(1\.00\|0\.9[0-9]\)" || rc=1
# ab over kvm_amd.vnmi in the lane (issue 21): TCG's SVM has no virtual NMI,
# so vnmi=1 must be refused by the module, with the reason; side B then ran
# as side A did: nothing to compare (exit 34).
rm -rf "$base/ab-vnmi"
out=$(IPIBENCH_RESULTS=$base/ab-vnmi ./run.sh ab --module-param kvm_amd.vnmi=0,1 --boots 1 --accel kvm-in-tcg \
	--preset x2apic --timeout 240 --append "plan=bench bench=send-cost backends=x2apic-nmi iters=10 warmup=1 budget=1" 2>&1)
expect_run "run.sh ab --module-param kvm_amd.vnmi=0,1 reports that vNMI was not granted, and why" \
	34 $? "$out" \
	"the lane's kvm_amd.vnmi: asked 1, got N: the CPU has no virtual NMI" \
	"^ab: both sides ran with kvm_amd.vnmi=N: nothing to compare" || rc=1
exits_pass exits-negative x2apic \
	"plan=bench bench=send-cost backends=x2apic iters=50 warmup=2 budget=1 markers=1 debug=extra-exit" \
	--expect-failure "x2apic send-cost send none sender: 2\.00 register/hypercall/HLT exits per iteration, expected 1\.00" ||
	rc=1
exit $rc
