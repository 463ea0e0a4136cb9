#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""host/ipibench/xenhost/xentrace.py on records built by hand from Xen 4.17's
public/trace.h, not from a capture: the windows, the TSC a record without
one takes, the vCPU a runstate change puts on a CPU, each exit's handler
records folded into its line, and what kvmhost/trace_read.py then makes of
it: a marker window with the sender's ICR write and the target's EOI.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import struct

from harness import REPO, check, registry, run_cmd
from fixtures import main
from ipibench.kvmhost import trace_read
from ipibench.xenhost import xentrace as X

CASES, case = registry()

# public/trace.h's numbers, written out here rather than taken from the
# module under test.
CPU_CHANGE, LOST = 0x0001f003, 0x0001f001
RUNSTATE = 0x00021001          # TRC_SCHED_RUNSTATE_CHANGE; old state << 8, new << 4
VMENTRY, VMEXIT64 = 0x00081001, 0x00081102
NESTED = 0x400                 # TRC_HVM_NESTEDFLAG
MSR_WRITE, VMMCALL = 0x0008200d, 0x00082012
IOPORT_WRITE, IOMEM_WRITE = 0x00082216, 0x00082217


def rec(event, words=(), tsc=None):
    head = event | len(words) << 28 | (1 << 31 if tsc is not None else 0)
    return struct.pack("<I", head) + (struct.pack("<Q", tsc) if tsc is not None else b"") + \
        struct.pack(f"<{len(words)}I", *words)


def window(cpu, *records):
    body = b"".join(records)
    return rec(CPU_CHANGE, (cpu, len(body))) + body


def running(dom, vcpu, tsc):
    # runstate runnable (1) -> running (0): old state in bits 11:8, new in 7:4.
    return rec(RUNSTATE | 1 << 8, (dom << 16 | vcpu,), tsc)


def exit_(code, rip, tsc):
    return rec(VMEXIT64, (code, rip & 0xffffffff, rip >> 32), tsc)


def entry(tsc):
    return rec(VMENTRY, (), tsc)


def marker(value):
    return rec(IOPORT_WRITE, (0xed, value))


# d1v0 on CPU 0 marks window 3, writes the x2APIC ICR, closes the window;
# d1v1 on CPU 1 takes the IPI and writes the EOI in between (by TSC).
SENDER = window(0, running(1, 0, 100),
                exit_(0x7b, 0xffffffff81000010, 110), marker(3 << 1), entry(111),
                exit_(0x7c, 0x1000, 200), rec(MSR_WRITE, (0x830, 0x40, 2)), entry(201),
                exit_(0x7b, 0x1010, 400), marker(3 << 1 | 1), entry(401))
TARGET = window(1, running(1, 1, 150),
                exit_(0x7c, 0x2000, 300), rec(MSR_WRITE, (0x80b, 0, 0)), entry(301),
                # dom0 (PV) and the idle domain make no exits of the guest's
                running(0, 0, 350), exit_(0x78, 0x3000, 360), entry(361))


@case("xentrace: windows per CPU, handler records folded into their exit, lines in TSC order")
def _(_s):
    text = X.lines(SENDER + TARGET, khz=1000)  # 1 MHz: a cycle a microsecond
    check(text[0] == "# ipibench-trace: xen", text[0])
    events = [line.split(": ")[1] for line in text[1:]]
    check(events == ["kvm_exit", "kvm_pio", "kvm_entry", "kvm_exit", "kvm_msr", "kvm_entry",
                     "kvm_exit", "kvm_msr", "kvm_entry", "kvm_exit", "kvm_pio", "kvm_entry"],
          events)
    check(text[4] == "d1v0-1256 [000] 0.000200000: kvm_exit: vcpu 0 reason msr rip 0x1000",
          text[4])
    check(text[5].endswith("kvm_msr: msr_write 830 = 0x200000040"), text[5])
    check(text[2].endswith("kvm_pio: pio_write at 0xed size 4 count 1 val 0x6"), text[2])
    check(text[7].startswith("d1v1-1257 [001] 0.000300000: kvm_exit: vcpu 1 reason msr"),
          text[7])
    check(not any("0x3000" in line for line in text), "dom0's exit kept")


@case("xentrace: trace_read takes the lines: window 3, the sender's ICR, the target's EOI")
def _(_s):
    t = trace_read.parse(X.lines(SENDER + TARGET))
    w = t.windows.get(3)
    check(w is not None, f"windows {sorted(t.windows)}")
    if w:
        check(dict(w.sender) == {"msr (ICR)": 1}, dict(w.sender))
        check(dict(w.targets) == {"msr (EOI)": 1}, dict(w.targets))


@case("xentrace: an NPF's MMIO record gives the xAPIC register; a VMMCALL its hypercall")
def _(_s):
    data = window(0, running(2, 0, 10),
                  exit_(0x400, 0x10, 20), rec(IOMEM_WRITE, (0xfee00300, 0x4041)),
                  entry(21),
                  exit_(0x81, 0x20, 30), rec(VMMCALL, (32,)), entry(31),
                  exit_(0x81, 0x30, 40), rec(VMMCALL, (0x80000000,)), entry(41))
    text = X.lines(data)
    check("reason npf rip 0x10 info1 0x2 info2 0xfee00300" in text[1], text[1])
    got = dict(trace_read.parse(text).outside)
    check(got == {"npf (ICR)": 1, "hypercall (event_channel_op)": 1, "hypercall (viridian)": 1},
          got)


@case("xentrace: lost records are said; a record outside a window or cut short is refused")
def _(_s):
    text = X.lines(window(0, rec(LOST, (17, 0, 0, 0), 5)))
    check("# ipibench-trace: lost 17" in text, text)
    for bad, why in ((rec(VMENTRY, (), 1), "outside a CPU's window"),
                     (window(0, entry(1))[:-3], "cut short"),
                     (rec(CPU_CHANGE, (0, 4)) + entry(1), "runs past its window")):
        try:
            X.lines(bad)
            check(False, f"accepted: {why}")
        except X.TraceError as e:
            check(why in str(e), f"{e} (want '{why}')")


@case("xentrace: after a gap Xen left (a full buffer) the vCPU it names runs; the window open "
      "then says so, and its record gets no exits")
def _(_s):
    # d1v0 on CPU 0 opens window 5; records are lost from TSC 150 until 300,
    # after which d1v1 runs on CPU 0 ({lost; u16 domain, vcpu; u64 first_tsc}).
    data = window(0, running(1, 0, 100),
                  exit_(0x7b, 0x10, 110), marker(5 << 1), entry(111),
                  rec(LOST, (9, 1 | 1 << 16, 150, 0), 300),
                  exit_(0x7c, 0x20, 310), rec(MSR_WRITE, (0x80b, 0, 0)), entry(311),
                  exit_(0x7b, 0x30, 400), marker(5 << 1 | 1), entry(401))
    text = X.lines(data)
    check("# ipibench-trace: lost 9" in text, text[:3])
    check(any(" d1v1-1257 " in " " + line and "msr" in line for line in text),
          "the exit after the gap is not d1v1's")
    check(any("xen_lost: records 9 until 0.000000300" in line for line in text), text)
    t = trace_read.parse(text)
    check(t.windows.get(5) is not None and t.windows[5].gap == 9,
          f"window 5's gap: {getattr(t.windows.get(5), 'gap', None)}")


@case("xentrace: a gap runs from its first_tsc to the lost record's own time: a window wholly "
      "inside another CPU's gap says so, one after it does not")
def _(_s):
    # CPU 1 (d1v1) lost records from TSC 150 until 300 (its lost record's
    # own time); d1v0 on CPU 0 opens and closes window 5 in between, and
    # window 6 after.
    sender = window(0, running(1, 0, 100),
                    exit_(0x7b, 0x10, 200), marker(5 << 1), entry(201),
                    exit_(0x7b, 0x20, 250), marker(5 << 1 | 1), entry(251),
                    exit_(0x7b, 0x30, 400), marker(6 << 1), entry(401),
                    exit_(0x7b, 0x40, 450), marker(6 << 1 | 1), entry(451))
    target = window(1, running(1, 1, 100), rec(LOST, (4, 1 | 1 << 16, 150, 0), 300),
                    exit_(0x78, 0x50, 310), entry(311))
    t = trace_read.parse(X.lines(sender + target))
    gaps = {m: getattr(t.windows.get(m), "gap", None) for m in (5, 6)}
    check(gaps == {5: 4, 6: 0}, f"gaps {gaps}")
    # A line without "until" (an older reader's) is a gap of one instant.
    t = trace_read.parse(["# ipibench-trace: xen",
                          "d1v0-1256 [000] 0.000000100: kvm_pio: pio_write at 0xed size 4 "
                          "count 1 val 0xa",
                          "d1v1-1257 [001] 0.000000150: xen_lost: records 2",
                          "d1v0-1256 [000] 0.000000200: kvm_pio: pio_write at 0xed size 4 "
                          "count 1 val 0xb"])
    check(getattr(t.windows.get(5), "gap", None) == 2 and not t.unparsed,
          f"gap {getattr(t.windows.get(5), 'gap', None)}, unparsed {t.unparsed}")


@case("xentrace: a nested guest's exit and its records are skipped; a cut file keeps what every "
      "guest CPU sent whole")
def _(_s):
    data = window(0, running(1, 0, 10),
                  rec(VMEXIT64 | NESTED, (0x7c, 0x10, 0), 20), rec(MSR_WRITE, (0x830, 1, 0)),
                  rec(VMENTRY | NESTED, (), 21),
                  exit_(0x78, 0x20, 30), entry(31))
    got = [line.split(": ", 2)[1:] for line in X.lines(data)[1:]]
    check(got == [["kvm_exit", "vcpu 0 reason hlt rip 0x20"], ["kvm_entry", "vcpu 0"]], got)
    # CPU 0 sent up to TSC 200, CPU 1 only to 120: a cut keeps lines to 120.
    cut = window(0, running(1, 0, 100), exit_(0x78, 0x1, 110), entry(111),
                 exit_(0x78, 0x2, 200), entry(201)) + \
        window(1, running(1, 1, 105), exit_(0x78, 0x3, 120), entry(121))
    times = [int(round(float(line.split()[2][:-1]) * 1e9)) for line in X.lines(cut, cut=True)
             if not line.startswith("#")]
    check(times and max(times) <= 121 and 110 in times, times)
    check(X.lines(cut, cut=True)[1].startswith("# ipibench-trace: cut"), "no cut header")
    # CPU 1's stream came on to TSC 300 (dom0's runstate change there): its
    # last guest record (121) limits nothing, CPU 0's 201 does; a CPU that
    # never ran the guest (CPU 2, idle after 50) limits nothing either.
    cut = window(0, running(1, 0, 100), exit_(0x78, 0x1, 110), entry(111),
                 exit_(0x78, 0x2, 200), entry(201)) + \
        window(1, running(1, 1, 105), exit_(0x78, 0x3, 120), entry(121), running(0, 0, 300)) + \
        window(2, running(0, 1, 50))
    times = [int(round(float(line.split()[2][:-1]) * 1e9)) for line in X.lines(cut, cut=True)
             if not line.startswith("#")]
    check(max(times, default=0) == 201 and 120 in times, times)


@case("xentrace: on Intel (--vmx) the exit reasons are VMX's, by kvm_exit's names")
def _(_s):
    data = window(0, running(1, 0, 10),
                  rec(VMEXIT64, (32, 0x10, 0), 20), rec(MSR_WRITE, (0x830, 1, 0)), entry(21),
                  rec(VMEXIT64, (18, 0x20, 0), 30), rec(VMMCALL, (32,)), entry(31),
                  rec(VMEXIT64, (12, 0x30, 0), 40), entry(41))
    got = dict(trace_read.parse(X.lines(data, vmx=True)).outside)
    check(got == {"MSR_WRITE (ICR)": 1, "VMCALL (event_channel_op)": 1, "HLT": 1}, got)


CREDIT2 = 0x00022201  # a scheduler-specific record (TRC_SCHED_CLASS), as credit2's


@case("xentrace-filter: credit2's records dropped, each window's size made what is left, "
      "the reader's lines the same; a file that is not windows of whole records exit 1, "
      "usage exit 2")
def _(s):
    filt = os.path.join(REPO, "build", "lane", "xentrace-filter")
    res = run_cmd(["make", "-s", "build/lane/xentrace-filter"])
    check(res[0] == 0, f"make: {res[2]}")
    # Credit2's records with and without a TSC, among the sender's and
    # the target's, and a window of nothing but them.
    noisy = (window(0, rec(CREDIT2, (1, 2, 3), 105), running(1, 0, 100),
                    exit_(0x7b, 0xffffffff81000010, 110), marker(3 << 1), entry(111),
                    rec(CREDIT2, (7,)),
                    exit_(0x7c, 0x1000, 200), rec(MSR_WRITE, (0x830, 0x40, 2)), entry(201),
                    exit_(0x7b, 0x1010, 400), marker(3 << 1 | 1), entry(401)) +
             window(1, rec(CREDIT2, (), 120)) + TARGET)
    src, dst = os.path.join(s.tmp, "xt.in"), os.path.join(s.tmp, "xt.out")
    with open(src, "wb") as f:
        f.write(noisy)
    res = run_cmd([filt, src, dst])
    check(res[0] == 0, f"exit {res[0]}: {res[2]}")
    kept = open(dst, "rb").read()
    check(kept == SENDER + window(1) + TARGET, f"{len(kept)} bytes kept, "
          f"want {len(SENDER + window(1) + TARGET)}")
    check(X.lines(kept) == X.lines(noisy), "the reader's lines differ")
    with open(src, "wb") as f:
        f.write(noisy[:-3])  # the last record cut short
    res = run_cmd([filt, src, dst])
    check(res[0] == 1 and "not xentrace's windows" in res[2], f"cut: {res}")
    res = run_cmd([filt, src])
    check(res[0] == 2 and "usage" in res[2], f"usage: {res}")


if __name__ == "__main__":
    main(CASES)
