#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The Linux calibration (issue 46, docs/linux-calibration.md): ipibench's
rows that claim what a Linux guest pays, set beside what a Linux guest paid
for the same IPIs under the same preset, exit by exit.

Two traced frames of one lane boot a preset (host/lane/calibrate.sh):
calib.PRESET runs the rows (MODELS gives the backend, OPS the rows) and
linux.PRESET boots the lane's own kernel with host/lane/linux/calib.c as
its /init, which marks each batch of system calls as the guest marks a
sampling. Both are read by the same trace reader (trace_read, trace.attach):
exits per iteration against exits per IPI a target took (per_ipi()),
sender and targets apart.

A judged exit (exit_labels.JUDGED: APIC, MSR, hypercall, HLT, NPF) on
which the two differ by more than EXITS_TOLERANCE is a named difference
when a rule of EXPLAINED covers it (the reason Linux pays it and the row
does not, or the reverse), else unexplained: the calibration fails, so
that a change in the guest or in the lane's kernel that breaks the
correspondence is seen. The guest's own interrupt counts (/proc/interrupts
around each batch) are printed beside, evidence for the timer and IPI
rules.

usage: PYTHONPATH=host python3 -m ipibench.kvmhost.calibrate DIR PRESET... [--rows FRAME]
                                                             [--backend B]
       PYTHONPATH=host python3 -m ipibench.kvmhost.calibrate --jobs KERNEL INITRD PRESET...
  --rows FRAME  read the rows from that frame of DIR, not calib.PRESET
  --backend B   hold Linux against backend B's rows, not MODELS' (the
                lane test's planted mismatch: x2apic's own EOI exits)
exit: 0 every operation matches its row or names why not; 1 an unexplained
difference, or a frame without its records or trace; 2 usage.
Pure: reads DIR's frame logs and traces only.
"""
import os
import re
import sys

from ipibench.kvmhost.exit_labels import EXITS_TOLERANCE, JUDGED
from ipibench.kvmhost.trace import attach_console
from ipibench.kvmhost.trace_read import parse
from ipibench.record_lines import record_lines

# preset -> (the backend whose rows claim what Linux pays, one target or a
# set, and why). What the lane found (docs/linux-calibration.md), the same
# under every preset:
# - one target: apic->send_IPI, which KVM's PV IPI leaves native
#   (kvm_setup_pv_ipi() replaces send_IPI_mask and _allbutself only;
#   smp_call_function_many_cond() sends a one-CPU mask as a single IPI):
#   an x2APIC ICR write;
# - every other vCPU: native_send_call_func_ipi() takes the all-but-self
#   shorthand, apic->send_IPI_allbutself, native too: one ICR write;
# - KVM_HC_SEND_IPI (kvm_send_ipi_mask()) only for a set that is neither,
#   as a shootdown's once KVM's PV TLB flush dropped a preempted vCPU;
# - with Hyper-V's and KVM's leaves both visible (QEMU's hv-* flags) Linux
#   detects KVM (kvm_detect() returns the higher base, 0x40000100) and runs
#   as a KVM guest: the hv-* rows model a Windows guest there, not Linux;
# - PV EOI is on in every preset (QEMU's kvm-pv-eoi), and Linux takes it.
LINUX_SENDS = ("one target an ICR write, every other vCPU the all-but-self shorthand, "
               "one ICR write; KVM's PV EOI taken (kvm_guest_apic_eoi_write()): no EOI exit")
AS_KVM = "Linux runs as a KVM guest (kvm_detect() wins over Hyper-V's leaves): "
MODELS = {
    "x2apic": ("x2apic-pv-eoi", LINUX_SENDS),
    "kvm-pv": ("x2apic-pv-eoi", LINUX_SENDS + "; KVM_HC_SEND_IPI only for a set that is neither"),
    "hv": ("x2apic-pv-eoi", AS_KVM + LINUX_SENDS),
    "hv-xmm": ("x2apic-pv-eoi", AS_KVM + LINUX_SENDS),
    # Four vCPUs: the broadcast is a set of three, all but self.
    "hv-xmm-4": ("x2apic-pv-eoi", AS_KVM + LINUX_SENDS),
}
# The broadcast row's variant that is Linux's send to every other vCPU, by
# backend: to one, a single send (a loop of one ICR write); to two or
# more, native_send_call_func_ipi() takes the all-but-self shorthand (one
# ICR write, apic->send_IPI_allbutself, which KVM's PV IPI leaves
# native) while apic_use_ipi_shorthand holds (every possible CPU online);
# KVM's one call for a set under kvm-pv-ipi.
def set_send(backend, ntargets):
    if backend == "kvm-pv-ipi":
        return "set"
    return "loop" if ntargets == 1 else "shorthand"

# (Linux bench, variant) -> (row bench, metric, variant, what Linux does).
OPS = [
    (("linux-membarrier", "single"), ("single", "round-trip", "ack-after-eoi"),
     "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), one other vCPU running the mm: "
     "smp_call_function_many(wait) sends one CALL_FUNCTION_SINGLE IPI "
     "(x2apic_send_IPI()); the target's EOI comes before ipi_mb() "
     "(sysvec_call_function_single()), its csd_unlock() after"),
    (("linux-membarrier", "broadcast"), ("broadcast", "all-ack", "BROADCAST"),
     "the same to every other vCPU, all acknowledged; with one other vCPU, a single "
     "target's send"),
    (("linux-wake", "halted"), ("single-halt", "round-trip", "block"),
     "FUTEX_WAKE of a thread blocked on an idle vCPU (HLT, past halt polling): the wake "
     "list's CALL_FUNCTION_SINGLE IPI (ttwu_queue_wakelist(), vector 0xfb), EOI first, "
     "then sched_ttwu_pending()"),
    (("linux-munmap", "broadcast"), ("flush", "shootdown", "native-invlpg-after-eoi-1p"),
     "munmap of one written page with the mm running on the other vCPUs: "
     "flush_tlb_multi(); exits cannot tell the EOI's order (PV EOI makes none either "
     "way), only its cost"),
]

# The ipibench frame's plan: the rows OPS names, over MODELS' backend.
CALIB_PLAN = ("plan=bench bench=single,single-halt,broadcast,flush iters=50 warmup=2 "
              "budget=1 markers=1 deadline=20000")
LINUX_CMDLINE = "console=ttyS0 quiet calib.iters=100 calib.warmup=10"

# Why Linux's shootdown writes fewer ICRs and makes KVM_HC_SEND_IPI calls
# the row does not: one reason, two rules (one a direction).
SHOOTDOWN_SENDS = ("Linux's shootdown sends to the targets KVM's PV TLB flush left "
                   "(kvm_flush_tlb_multi() drops a preempted vCPU): to one an ICR write, to "
                   "two or more KVM_HC_SEND_IPI (kvm_send_ipi_mask()), where the row writes "
                   "the ICR for each")

# (Linux op or "*", side or "*", label pattern, "more" or "fewer" for
# Linux, the most the rule names a target an IPI (a set: an operation),
# why). The first that covers a difference names it; a difference
# past the rule's bound is UNEXPLAINED, so that a regression the rule's
# cause cannot reach fails (PV EOI broken: one EOI exit a target).
EXPLAINED = [
    ("*", "*", r"msr \(TSC_DEADLINE\)", "more", 3.0,
     "Linux's timer: each local-timer interrupt (the guest's LOC count) arms the next "
     "deadline, and a vCPU entering or leaving idle stops or restarts its tick (NOHZ), "
     "each a trapped write of MSR 0x6e0; ipibench's regions run with no timer armed"),
    ("*", "*", r"msr \(EOI\)", "more", 0.6,
     "the EOI of an interrupt whose PV EOI KVM cleared: any exit between the injection "
     "and the guest's EOI does (apic_sync_pv_eoi_from_guest()), here mostly a host "
     "interrupt's, and Linux's path to its EOI is longer than the row's"),
    ("*", "sender", r"hypercall \(KVM_HC_SCHED_YIELD\)", "more", 1.0,
     "Linux's PV sched yield: kvm_smp_send_call_func_ipi() yields to a target whose vCPU "
     "steal time says is preempted (KVM_HC_SCHED_YIELD), after a set's send; about one an "
     "operation where the vCPUs outnumber the host's CPUs"),
    ("linux-membarrier", "targets", r"hlt", "more", 0.5,
     "the idle vCPUs beside the target (the trace counts every vCPU but the sender's on "
     "the targets' side): each halts again after an interrupt that brought it no work"),
    ("linux-munmap", "sender", r"msr \(ICR\)", "fewer", 1.0,
     SHOOTDOWN_SENDS),
    ("linux-munmap", "sender", r"hypercall \(KVM_HC_SEND_IPI\)", "more", 1.0,
     SHOOTDOWN_SENDS),
    ("*", "*", r"msr \(0x3b read\)", "more", 0.1,
     "IA32_TSC_ADJUST read by tsc_verify_tsc_adjust() on idle entry "
     "(arch_cpu_idle_enter(), at most once a second)"),
    ("*", "targets", r"msr \(ICR\)|hypercall .*", "more", 0.2,
     "IPIs the target's own kernel sent while the batch ran (its scheduler's or "
     "timers' work), counted on the target's side; not the operation's"),
    ("linux-wake", "targets", r"hlt", "more", 1.0,
     "Linux idles again after every interrupt that woke it for nothing to run (a "
     "tick, an IPI of its own): default_idle() halts each time, where ipibench's "
     "target halts once an iteration"),
    ("linux-munmap", "sender", r"npf", "more", 1.0,
     "the fresh page each mmap() hands out: a guest-physical page the host had not "
     "yet backed faults in the host (the sender's own write)"),
]


def jobs(kernel, initrd, presets):
    """The lane jobs of the calibration of each preset (lane.sh --jobs lines)."""
    out = []
    for p in presets:
        out.append(f"calib.{p} | exits | {CALIB_PLAN} backends={MODELS[p][0]}")
        out.append(f"linux.{p} | exits linux image={kernel} initrd={initrd} "
                   f"inner-timeout=60 | {LINUX_CMDLINE}")
    return out


def frame_records(lane_dir, frame):
    """A traced frame's marked records with exits attached, or None."""
    log, trace = (os.path.join(lane_dir, f"{frame}.{x}") for x in ("log", "trace"))
    if not (os.path.isfile(log) and os.path.isfile(trace)):
        return None
    with open(trace, errors="replace") as f:
        t = parse(f)
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    return attach_console(t, lines), lines


def linux_env(lines):
    """The Linux frame's env record (its kernel, idle driver, boot lines)."""
    for _, rec, _ in record_lines([line.strip() for line in lines], "env"):
        if rec is not None:
            return rec
    return {}


# (row backend, side, label pattern, way for Linux, why): a difference
# that is the row's own choice, which the docs say beside the row
# (docs/paravirt.md).
ROW_CHOICES = [
    ("kvm-pv-ipi", "targets", r"msr \(EOI\)", "fewer",
     "the row's choice: kvm-pv-ipi EOIs through the x2APIC MSR, to time the call alone; "
     "Linux takes PV EOI (x2apic-pv-eoi's EOI)"),
]


def explain(op, side, label, linux_more, backend=None):
    """The first rule that covers a difference, as (its bound, why): of
    ROW_CHOICES for the row's backend (no bound), else of EXPLAINED; or
    None."""
    for rb, rside, pattern, way, why in ROW_CHOICES:
        if rb == backend and rside == side and re.fullmatch(pattern, label) and \
                (way == "more") == linux_more:
            return float("inf"), why
    for rop, rside, pattern, way, bound, why in EXPLAINED:
        if rop in ("*", op) and rside in ("*", side) and re.fullmatch(pattern, label) \
                and (way == "more") == linux_more:
            return bound, why
    return None


# The sends to vCPUs that are not the operation's targets, where the
# guest's counts show them: named only as far as those vCPUs took IPIs.
SEND = re.compile(r"msr \(ICR\)|hypercall \(KVM_HC_SEND_IPI\)")
OTHER_SENDS = ("IPIs to vCPUs that are not the operation's targets: {n:.2f} an IPI by their "
               "own CAL and RES counts (the scheduler's, not the operation's)")


def other_ipis(linux):
    """The IPIs the vCPUs other than the sender (0) and the targets took,
    per operation, by the guest's counts."""
    n = linux.get("iterations") or 1
    last = int(linux.get("ntargets") or 1)
    counts = linux.get("guest_interrupts") or {}
    return sum(sum(counts.get(k, [])[last + 1:]) for k in ("CAL", "RES")) / n


def per_ipi(linux):
    """A one-target Linux batch's exits per IPI its target took: its exits
    per operation times operations / the IPIs the target took ("ipis", the
    guest's CAL and RES counts; CAL already holds the shootdowns, TLB is
    not added). Linux sends
    none to a target running a kernel thread for a moment (membarrier()
    skips it, a shootdown leaves a lazy-TLB CPU for later) or, with KVM's
    PV TLB flush, to a preempted one: per operation, the row's one IPI an
    iteration would be held against fewer. An older record without "ipis"
    is read per operation."""
    n, ipis = linux.get("iterations") or 0, linux.get("ipis")
    # One target only: a set's send is one exit an operation however many
    # of its targets it reached, and the trace counts idle bystanders on
    # the targets' side too; a set is read per operation.
    one = int(linux.get("ntargets") or 1) == 1
    scale = n / ipis if one and n and ipis else 1.0
    return {side: {k: v * scale for k, v in (linux["exits"].get(side) or {}).items()}
            for side in ("sender", "targets")}, scale


def compare(op, linux, row):
    """[(side, label, linux value, row value, verdict, why)] over the judged
    labels of both; verdict "same", "explained" or "unexplained". linux:
    the Linux batch's record (its exits, and the guest's own counts that
    back the rule for extra sends)."""
    out = []
    exits, scale = per_ipi(linux)
    targets = max(1, int(linux.get("ntargets") or 1))
    for side in ("sender", "targets"):
        a = exits[side]
        b = row["exits"].get(side, {})
        for label in sorted(set(a) | set(b), key=lambda k: (-max(a.get(k, 0), b.get(k, 0)), k)):
            if not JUDGED.match(label):
                continue
            x, y = a.get(label, 0.0), b.get(label, 0.0)
            if abs(x - y) <= EXITS_TOLERANCE:
                out.append((side, label, x, y, "same", ""))
                continue
            # The difference a target (a set: an operation), which the
            # rule's bound must cover.
            per = abs(x - y) / targets
            rule = explain(op, side, label, x > y, row.get("backend"))
            why = rule[1] if rule and per <= rule[0] + EXITS_TOLERANCE else None
            if not why and side == "sender" and SEND.fullmatch(label) and x > y:
                other = other_ipis(linux) * scale
                if x - y <= other + EXITS_TOLERANCE:
                    why = OTHER_SENDS.format(n=other)
            if why:
                out.append((side, label, x, y, "explained", why))
                continue
            out.append((side, label, x, y, "unexplained",
                        f"{per:.2f} a target, more than its rule's cause can make: {rule[1]}"
                        if rule else "no rule names this difference"))
    return out


# The IPIs a target may take an operation: its one, and the scheduler's
# own beside it (the wake's took up to 1.11 in the lane). More is an
# operation that sends more than its IPI, which the division by IPIs
# (per_ipi) would otherwise hide.
MAX_IPIS = 1.25


def ipi_count(linux):
    """An unexplained line when the targets took more IPIs an operation
    than MAX_IPIS allows, else nothing."""
    n, ipis = linux.get("iterations"), linux.get("ipis")
    per = ipis / n / max(1, int(linux.get("ntargets") or 1)) if n and ipis is not None else 0
    if per <= MAX_IPIS:
        return []
    return [("targets", "IPIs (the guest's count)", per, 1.0, "unexplained",
             f"more IPIs an operation than its own and the scheduler's ({MAX_IPIS} allowed)")]


def find(recs, bench, metric, variant, backend=None, ntargets=None):
    """The first record of that run (and target count: broadcast and flush
    have a record for each) that has exits, or None."""
    for r in recs:
        if (r.get("bench"), r.get("metric"), r.get("variant")) == (bench, metric, variant) \
                and (backend is None or r.get("backend") == backend) \
                and (ntargets is None or r.get("ntargets", 1) == ntargets) \
                and isinstance(r.get("exits"), dict) and "sender" in r["exits"]:
            return r
    return None


def idle_words(driver):
    """How the Linux guest idled, from its cpuidle driver (calib.c reads
    /sys/devices/system/cpu/cpuidle/current_driver)."""
    if driver in (None, "", "none"):
        return "HLT, no cpuidle driver: default_idle()"
    if driver == "haltpoll":
        return "cpuidle-haltpoll: polls in the guest, then HLT"
    return f"cpuidle driver {driver}"


def shootdown_words(rec):
    """Which way the munmap batch's targets were flushed: by IPI (the
    guest's TLB count on each target) or without one (the rest)."""
    n = rec.get("iterations") or 1
    tlb = (rec.get("guest_interrupts") or {}).get("TLB") or []
    targets = max(1, int(rec.get("ntargets") or 1))
    by_ipi = sum(tlb[1:]) / n / targets if tlb else 0.0
    return (f"flushed by IPI: {by_ipi:.2f} a target an operation (the guest's TLB count); "
            f"{max(0.0, 1 - by_ipi):.2f} without one (a target in lazy TLB mode, a kernel "
            "thread running there, flushes at its next switch; a preempted vCPU by KVM's "
            "PV TLB flush flag, kvm_flush_tlb_multi())")


def guest_counts(rec):
    """The guest's interrupt counts per operation, per vCPU, that moved."""
    n = rec.get("iterations") or 1
    parts = []
    counts = rec.get("guest_interrupts") or {}
    for cpu in range(max((len(v) for v in counts.values()), default=0)):
        moved = [f"{k} {v[cpu] / n:.2f}" for k, v in sorted(counts.items())
                 if cpu < len(v) and v[cpu] and v[cpu] / n >= 0.01]
        if moved:
            parts.append(f"vCPU {cpu}: " + ", ".join(moved))
    return "; ".join(parts) or "none moved"


def calibrate(lane_dir, preset, rows_frame=None, backend=None):
    """The table's lines for one preset, and how many differences no rule
    names; rows_frame and backend as --rows and --backend."""
    rows_backend, why_backend = (backend, "--backend") if backend else MODELS[preset]
    rows_frame = rows_frame or f"calib.{preset}"
    got = frame_records(lane_dir, f"linux.{preset}")
    rows = frame_records(lane_dir, rows_frame)
    if got is None or rows is None:
        return [f"calibration {preset}: no traced linux.{preset} and {rows_frame} frames "
                f"in {lane_dir}"], 1
    (linux_recs, lines), (row_recs, _) = got, rows
    env = linux_env(lines).get("linux", {})
    out = [f"calibration {preset}: Linux {env.get('release', '?')} (idle: "
           f"{idle_words(env.get('idle_driver'))}) against "
           f"{rows_backend}'s rows ({why_backend}); "
           "exits per IPI | per iteration"]
    for line in env.get("boot_lines", []):
        if "kvm-guest" in line or "Hyper-V" in line or "APIC" in line:
            out.append(f"  linux: {line}")
    bad, notes = 0, []
    for (lbench, lvariant), (bench, metric, variant), what in OPS:
        linux = find(linux_recs, lbench, "op", lvariant)
        ntargets = int((linux or {}).get("ntargets") or 1)
        variant = set_send(rows_backend, ntargets) if variant == "BROADCAST" else variant
        row = find(row_recs, bench, metric, variant, rows_backend, ntargets)
        name = f"{lbench.removeprefix('linux-')} {lvariant}"
        rname = f"{rows_backend} {bench} {metric} {variant}"
        if linux is None or row is None:
            out.append(f"  {name} | {rname}: no exits for "
                       f"{'the Linux batch' if linux is None else 'the row'}")
            bad += 1
            continue
        if linux.get("status") != "SUCCESS":
            out.append(f"  {name} | {rname}: the Linux batch did not make its IPIs in "
                       f"{linux.get('attempts')} attempts (the guest's counts per operation: "
                       f"{guest_counts(linux)})")
            bad += 1
            continue
        cmp = compare(lbench, linux, row) + ipi_count(linux)
        n_bad = sum(1 for c in cmp if c[4] == "unexplained")
        n_expl = sum(1 for c in cmp if c[4] == "explained")
        bad += n_bad
        verdict = ("matches" if not n_bad and not n_expl else
                   f"{n_expl} named difference{'s' * (n_expl != 1)}" if not n_bad else
                   f"{n_bad} UNEXPLAINED")
        out.append(f"  {name} | {rname}: {verdict}")
        out.append(f"    Linux: {what}")
        if linux.get("ipis") is not None and linux.get("iterations"):
            out.append(f"    IPIs the targets took: {linux['ipis'] / linux['iterations']:.2f} an "
                       f"operation ({ntargets} target{'s' * (ntargets != 1)}; the guest's "
                       "CAL and RES counts)")
        for side, label, x, y, v, why in cmp:
            mark = {"same": "same", "explained": "Linux " + ("more" if x > y else "fewer"),
                    "unexplained": "UNEXPLAINED: " + why}[v]
            if v == "explained":
                if why not in notes:
                    notes.append(why)
                mark += f" [{notes.index(why) + 1}]"
            out.append(f"    {side:7} {label:22} {x:5.2f} | {y:5.2f}  {mark}")
        out.append(f"    guest interrupts per operation: {guest_counts(linux)}")
        if lbench == "linux-munmap":
            out.append(f"    {shootdown_words(linux)}")
    out += [f"  [{i + 1}] {why}" for i, why in enumerate(notes)]
    out.append(f"calibration {preset}: {len(OPS)} operations, "
               f"{bad} unexplained difference{'s' * (bad != 1)}")
    return out, bad


def main(argv):
    if len(argv) >= 4 and argv[1] == "--jobs":
        unknown = [p for p in argv[4:] if p not in MODELS]
        if unknown or len(argv) < 5:
            print(f"calibrate: presets: {', '.join(MODELS)}", file=sys.stderr)
            return 2
        print("\n".join(jobs(argv[2], argv[3], argv[4:])))
        return 0
    args, opts = [], {}
    rest = iter(argv[1:])
    for a in rest:
        if a in ("--rows", "--backend"):
            opts[a] = next(rest, "")
        else:
            args.append(a)
    if len(args) < 2 or any(p not in MODELS for p in args[1:]) or "" in opts.values():
        print("usage: calibrate DIR PRESET... [--rows FRAME] [--backend B]", file=sys.stderr)
        print(f"calibrate: presets: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    bad = 0
    for preset in args[1:]:
        lines, n = calibrate(args[0], preset, opts.get("--rows"), opts.get("--backend"))
        print("\n".join(lines))
        bad += n
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
