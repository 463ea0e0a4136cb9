# SPDX-License-Identifier: GPL-2.0-only
"""Reads a Xen trace (xentrace's binary file) into the text lines
kvmhost/trace_read.py reads, so that a Xen run's exits go through the same
marker windows, labels and tables as a KVM run's.

The file: xentrace writes each physical CPU's buffer in windows, each after
a TRC_TRACE_CPU_CHANGE record (its CPU, the window's bytes). A record is a
32-bit header (event in bits 27:0, the count of 32-bit words after it in
30:28, bit 31 set when a 64-bit TSC comes first), then those words (Xen
4.17's public/trace.h struct t_rec). Records without a TSC take their
CPU's latest.

What is read (xentrace -e 0x000a3000: the HVM entry/exit and handler
subclasses, and the scheduler's runstate changes):
  TRC_SCHED_RUNSTATE_CHANGE  which vCPU runs on the CPU from now: HVM
                             records name no vCPU, their CPU's current does
  TRC_HVM_VMEXIT(64)         an exit: its SVM exit code (named as KVM's
                             kvm_exit names it) and RIP -> kvm_exit
  TRC_HVM_VMENTRY            its end -> kvm_entry
  TRC_HVM_MSR_READ/WRITE     the exit's MSR -> kvm_msr
  TRC_HVM_IOPORT_WRITE/READ  the exit's port and value: the guest's markers
                             (port 0xed) among them -> kvm_pio
  TRC_HVM_IOMEM_WRITE/READ   the exit's MMIO address (the xAPIC page's
                             register): the NPF exit's EXITINFO1/2, as SVM
                             gives KVM them
  TRC_HVM_VMMCALL            the exit's hypercall number -> xen_hypercall
  TRC_LOST_RECORDS           records Xen dropped while the CPU's buffer was
                             full (the newest, not the oldest), written
                             with its own TSC once there was room again:
                             everything the CPU traced from its first_tsc
                             to then is gone -> xen_lost at first_tsc,
                             "until" its own time (every window that
                             overlaps it has no exits), and the vCPU
                             running after it; "# ipibench-trace: lost N"
The scheduler's own records (credit2's) are read past; the lane's dom0
sends the file without them (host/lane/xen/trace_filter.c).
Records of a nested guest (TRC_HVM_NESTEDFLAG) are an L2's, not this
guest's: skipped. A file cut short (--cut) keeps only what every CPU that
ran the guest wrote whole: the lines after the earliest of their last
records (of any kind: dom0's and the idle domain's say the CPU's stream
came that far) go, since xentrace writes the CPUs' windows one after
another and a cut may keep a sender's window and lose its target's.
Xen writes the handler records after the VMEXIT they belong to, so an exit's
line is written when its CPU's next VMENTRY or VMEXIT closes it, with what
they said. dom0 (PV) makes no HVM records; the idle domain's are skipped.

Lines name a vCPU's thread "dDvV-T" (T = 1000 + D * 256 + V: one per vCPU,
as KVM's vCPU threads), its CPU and the time from the TSC: a cycle a
nanosecond unless --khz gives the TSC's frequency (only the order of times
is read, and a cycle a nanosecond keeps every record's own). Under TCG
every CPU's TSC is the one clock QEMU keeps, so the order across CPUs holds.
The guest's markers are 32-bit OUTs to port 0xed: Xen passes port 0xed
through (hvm_enable()), and a 4-byte access exits only because the I/O
bitmap's bits for 0xee-0xf0 are set (include/bench.h).

usage: PYTHONPATH=host python3 -m ipibench.xenhost.xentrace FILE [--khz N] [--domain D] [--cut] [--vmx]
Pure: the file in, text out; host-tested on hand-built records
(tests/host/test_xentrace.py).
"""
import gzip
import struct
import sys

TRC_LOST_RECORDS = 0x0001f001
TRC_TRACE_WRAP_BUFFER = 0x0001f002
TRC_TRACE_CPU_CHANGE = 0x0001f003
# Runstate changes carry the old and new state in bits 11:8 and 7:4.
TRC_SCHED_RUNSTATE_CHANGE = 0x00021001
RUNSTATE_MASK = 0x0ffff00f
RUNSTATE_RUNNING = 0
TRC_HVM_NESTEDFLAG = 0x400
TRC_HVM_VMENTRY = 0x00081001
TRC_HVM_VMEXIT = 0x00081002
TRC_HVM_VMEXIT64 = 0x00081102
TRC_HVM_MSR_READ = 0x0008200c
TRC_HVM_MSR_WRITE = 0x0008200d
TRC_HVM_VMMCALL = 0x00082012
TRC_HVM_IOPORT_READ = 0x00082016
TRC_HVM_IOMEM_READ = 0x00082017
TRC_HVM_IOPORT_WRITE = 0x00082216
TRC_HVM_IOMEM_WRITE = 0x00082217
TRC_64_FLAG = 0x100
DOMID_IDLE = 0x7fff

# SVM exit codes (AMD APM vol. 2 appendix C) by the names KVM's kvm_exit
# prints (arch/x86/include/uapi/asm/svm.h SVM_EXIT_REASONS), so that a Xen
# exit and a KVM one get one label (kvmhost/exit_labels.py).
SVM_EXITS = {
    0x000: "read_cr0", 0x002: "read_cr2", 0x003: "read_cr3", 0x004: "read_cr4",
    0x008: "read_cr8", 0x010: "write_cr0", 0x012: "write_cr2", 0x013: "write_cr3",
    0x014: "write_cr4", 0x018: "write_cr8", 0x020: "read_dr0", 0x027: "read_dr7",
    0x030: "write_dr0", 0x037: "write_dr7",
    0x040: "DE excp", 0x041: "DB excp", 0x043: "BP excp", 0x046: "UD excp", 0x047: "NM excp",
    0x04d: "GP excp", 0x04e: "PF excp", 0x051: "AC excp", 0x052: "MC excp",
    0x060: "interrupt", 0x061: "nmi", 0x062: "smi", 0x063: "init", 0x064: "vintr",
    0x065: "cr0_sel_write", 0x06e: "rdtsc", 0x06f: "rdpmc", 0x070: "pushf", 0x071: "popf",
    0x072: "cpuid", 0x073: "rsm", 0x074: "iret", 0x075: "swint", 0x076: "invd",
    0x077: "pause", 0x078: "hlt", 0x079: "invlpg", 0x07a: "invlpga", 0x07b: "io",
    0x07c: "msr", 0x07d: "task_switch", 0x07e: "ferr_freeze", 0x07f: "shutdown",
    0x080: "vmrun", 0x081: "hypercall", 0x082: "vmload", 0x083: "vmsave", 0x084: "stgi",
    0x085: "clgi", 0x086: "skinit", 0x087: "rdtscp", 0x088: "icebp", 0x089: "wbinvd",
    0x08a: "monitor", 0x08b: "mwait", 0x08d: "xsetbv",
    0x400: "npf", 0x401: "avic_incomplete_ipi",
    0x402: "avic_unaccelerated_access",
}


# VMX basic exit reasons (SDM vol. 3C appendix C) by the names KVM's
# kvm_exit prints on Intel (arch/x86/include/uapi/asm/vmx.h VMX_EXIT_REASONS):
# Xen's VMEXIT record carries them there (vmx_vmexit_handler()).
VMX_EXITS = {
    0: "EXCEPTION_NMI", 1: "EXTERNAL_INTERRUPT", 2: "TRIPLE_FAULT", 7: "INTERRUPT_WINDOW",
    8: "NMI_WINDOW", 9: "TASK_SWITCH", 10: "CPUID", 12: "HLT", 14: "INVLPG", 16: "RDTSC",
    18: "VMCALL", 28: "CR_ACCESS", 29: "DR_ACCESS", 30: "IO_INSTRUCTION", 31: "MSR_READ",
    32: "MSR_WRITE", 40: "PAUSE_INSTRUCTION", 44: "APIC_ACCESS", 45: "EOI_INDUCED",
    48: "EPT_VIOLATION", 49: "EPT_MISCONFIG", 51: "RDTSCP", 52: "PREEMPTION_TIMER",
    54: "WBINVD", 55: "XSETBV", 56: "APIC_WRITE",
}


class TraceError(Exception):
    pass


def records(data, cut=False):
    """(cpu, tsc, event, words) of each record, in file order; tsc the
    record's own or its CPU's latest (None before any). TraceError for a
    file cut inside a record, unless cut (the transfer stopped early: what
    came whole is read), and for a record outside a window."""
    cpu, left, tsc = None, 0, {}
    pos, n = 0, len(data)
    while pos < n:
        if n - pos < 4:
            if cut:
                return
            raise TraceError(f"a header cut short at byte {pos}")
        head = struct.unpack_from("<I", data, pos)[0]
        event, extra, cycles = head & 0x0fffffff, (head >> 28) & 7, head >> 31
        size = 4 + (8 if cycles else 0) + 4 * extra
        if n - pos < size:
            if cut:
                return
            raise TraceError(f"record {event:#x} at byte {pos} cut short")
        own = struct.unpack_from("<Q", data, pos + 4)[0] if cycles else None
        words = struct.unpack_from(f"<{extra}I", data, pos + size - 4 * extra)
        if left == 0:
            # Every window starts with the CPU it came from and its size.
            if event != TRC_TRACE_CPU_CHANGE or extra < 2:
                raise TraceError(f"record {event:#x} at byte {pos} outside a CPU's window")
            cpu, left = words[0], words[1]
            pos += size
            continue
        if size > left:
            raise TraceError(f"record {event:#x} at byte {pos} runs past its window")
        left -= size
        pos += size
        if event == TRC_TRACE_WRAP_BUFFER:
            continue  # padding to the buffer's end: its TSC words are not a time
        if own is not None:
            tsc[cpu] = own
        yield cpu, tsc.get(cpu), event, words


class _Open:
    """An exit of one vCPU not yet written: what its handler records said."""
    __slots__ = ("vcpu", "tsc", "reason", "rip", "info1", "info2", "after")

    def __init__(self, vcpu, tsc, reason, rip):
        self.vcpu, self.tsc, self.reason, self.rip = vcpu, tsc, reason, rip
        self.info1 = self.info2 = None
        self.after = []  # (event, body) lines that follow its kvm_exit


def lines(data, khz=None, domain=None, cut=False, vmx=False):
    """The text lines of a trace, in TSC order: the header lines, then
    each event as kvm_exit, kvm_entry, kvm_msr, kvm_pio, xen_hypercall.
    domain: only that domain's vCPUs (default: every domain but dom0);
    cut: the file ends early (records() reads what came whole, and the
    header says "cut"); vmx: the exit reasons are VMX's (Intel), not SVM's."""
    names = VMX_EXITS if vmx else SVM_EXITS
    scale = 1.0 / (khz * 1000.0) if khz else 1e-9
    running = {}   # cpu -> (domain, vcpu)
    opened = {}    # cpu -> _Open
    out = []       # (tsc, seq, text)
    lost = 0
    last = {}      # cpu -> the TSC of its latest record, of any kind (--cut)
    guest_cpus = set()  # the CPUs that ran a guest vCPU (--cut)

    def thread(dv):
        d, v = dv
        return f"d{d}v{v}-{1000 + d * 256 + v}"

    def emit(cpu, tsc, dv, event, body):
        out.append((tsc or 0, len(out), f"{thread(dv)} [{cpu:03d}] {(tsc or 0) * scale:.9f}: "
                                        f"{event}: {body}"))

    def close(cpu):
        o = opened.pop(cpu, None)
        if o is None:
            return
        info = "" if o.info1 is None else f" info1 {o.info1:#x} info2 {o.info2:#x}"
        emit(cpu, o.tsc, o.vcpu, "kvm_exit",
             f"vcpu {o.vcpu[1]} reason {o.reason} rip {o.rip:#x}{info}")
        for event, body in o.after:
            emit(cpu, o.tsc, o.vcpu, event, body)

    for cpu, tsc, event, w in records(data, cut):
        if tsc is not None:
            last[cpu] = tsc
        if event == TRC_LOST_RECORDS and len(w) >= 2:
            # {u32 lost; u16 domain, vcpu; u64 first_tsc} (common/trace.c
            # insert_lost_records()), written with its own TSC when the
            # buffer had room again: the gap runs from first_tsc to it.
            lost += w[0]
            close(cpu)
            gap = w[2] | w[3] << 32 if len(w) >= 4 else tsc
            dv = (w[1] & 0xffff, w[1] >> 16)
            emit(cpu, gap, running.get(cpu, dv), "xen_lost",
                 f"records {w[0]} until {max(gap or 0, tsc or 0) * scale:.9f}")
            running[cpu] = dv
            continue
        if event & RUNSTATE_MASK == TRC_SCHED_RUNSTATE_CHANGE and w:
            if (event >> 4) & 0xf == RUNSTATE_RUNNING:
                close(cpu)
                running[cpu] = (w[0] >> 16, w[0] & 0xffff)
            continue
        dv = running.get(cpu)
        if dv is None or dv[0] in (0, DOMID_IDLE) or (domain is not None and dv[0] != domain):
            continue
        guest_cpus.add(cpu)
        if event & 0x000ff000 == 0x00081000 and event & TRC_HVM_NESTEDFLAG:
            close(cpu)  # an L2 guest's exit or entry: its handler records are not ours
            continue
        if event in (TRC_HVM_VMEXIT, TRC_HVM_VMEXIT64) and len(w) >= 2:
            close(cpu)
            rip = w[1] | (w[2] << 32 if event == TRC_HVM_VMEXIT64 and len(w) > 2 else 0)
            # VMX: bits 15:0 the basic reason (bit 31 a failed entry).
            code = w[0] & 0xffff if vmx else w[0]
            opened[cpu] = _Open(dv, tsc, names.get(code, f"{code:#x}"), rip)
        elif event == TRC_HVM_VMENTRY:
            close(cpu)
            emit(cpu, tsc, dv, "kvm_entry", f"vcpu {dv[1]}")
        elif cpu in opened:
            _handler(opened[cpu], event, w, vmx)
    for cpu in list(opened):
        close(cpu)
    if cut and guest_cpus:
        # A CPU that never ran the guest limits nothing: an idle one
        # writes no records, and would cut the trace at its last.
        limit = min(last[c] for c in guest_cpus)
        out = [x for x in out if x[0] <= limit]
    out.sort(key=lambda x: (x[0], x[1]))
    head = ["# ipibench-trace: xen"] + ([f"# ipibench-trace: lost {lost}"] if lost else []) + \
        (["# ipibench-trace: cut short (the outer VM stopped sending it)"] if cut else [])
    return head + [text for _, _, text in out]


def _handler(o, event, w, vmx=False):
    """What a handler record says of its exit o."""
    if event in (TRC_HVM_MSR_READ, TRC_HVM_MSR_WRITE) and len(w) >= 3:
        how = "write" if event == TRC_HVM_MSR_WRITE else "read"
        o.after.append(("kvm_msr", f"msr_{how} {w[0]:x} = {w[1] | w[2] << 32:#x}"))
    elif event in (TRC_HVM_IOPORT_READ, TRC_HVM_IOPORT_WRITE) and w:
        how = "write" if event == TRC_HVM_IOPORT_WRITE else "read"
        val = f" val {w[1]:#x}" if len(w) > 1 else ""
        o.after.append(("kvm_pio", f"pio_{how} at {w[0] & 0xffff:#x} size 4 count 1{val}"))
    elif event & ~TRC_64_FLAG in (TRC_HVM_IOMEM_READ, TRC_HVM_IOMEM_WRITE) and w:
        # SVM's NPF: EXITINFO1 the #PF error code (bit 1: a write), EXITINFO2
        # the GPA. VMX's APIC-access exit: the qualification, the page
        # offset in bits 11:0 and the access type in 15:12 (1: a write).
        wide = event & TRC_64_FLAG and len(w) > 1
        write = event & ~TRC_64_FLAG == TRC_HVM_IOMEM_WRITE
        o.info2 = w[0] | (w[1] << 32 if wide else 0)
        o.info1 = (o.info2 & 0xfff | write << 12) if vmx else (2 if write else 0)
    elif event == TRC_HVM_VMMCALL and w:
        o.after.append(("xen_hypercall", f"nr {w[0]:#x}"))


def read(path):
    """The trace file's bytes, gunzipped when it is gzip."""
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.split("usage: ")[1].splitlines()[0], file=sys.stderr)
        return 2
    opts, path = {"--khz": None, "--domain": None}, argv[0]
    rest = [a for a in argv[1:] if a not in ("--cut", "--vmx")]
    while rest:
        if rest[0] not in opts or len(rest) < 2 or not rest[1].isdigit():
            print(f"xentrace: bad option {' '.join(rest[:2])}", file=sys.stderr)
            return 2
        opts[rest[0]] = int(rest[1])
        rest = rest[2:]
    try:
        text = lines(read(path), opts["--khz"], opts["--domain"], "--cut" in argv,
                     "--vmx" in argv)
    except (OSError, TraceError, EOFError) as e:
        print(f"xentrace: {path}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
