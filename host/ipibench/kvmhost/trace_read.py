# SPDX-License-Identifier: GPL-2.0-only
"""Reads a KVM ftrace capture (run.sh --exits) into a Trace: each exit
attributed to a marker window and a side, each event that says more of an
exit folded into its label, the APICv/AVIC inhibit changes and the wakes.

Input: the text of the kernel's trace file (tracefs `trace`, or `trace-cmd
report`, which prints the same lines) with the kvm events enabled; or a
Xen trace read into the same lines (xenhost/xentrace.py). The
guest writes mark << 1 to port 0xed just before a sampling's first measured
iteration and mark << 1 | 1 just after its last, on the vCPU that measures.
Each kvm_exit between the two markers belongs to the sampling: on the
marking vCPU's thread to the sender, on any other vCPU thread to the
targets. A round trip and a flush also write 0xfffffffe right after each
region closes: a target's exit after the sender's latest send exit and
before that mark was inside the region, one after it between regions.
kvm_vcpu_wakeup on a target thread says how a halted target came back
(kvmhost/wake.py). Exits outside every window (boot, backend switches,
printing) are counted once, as "outside"; the markers' own port writes are
not counted.

A capture may hold exits of the marker windows only (the KVM lane gates
them in the kernel, host/lane/lane.sh): its first lines say so
("# ipibench-trace: windows-only"), and how many events the ring buffer
overwrote ("# ipibench-trace: lost N"); the exits outside every record are
then not known, and said to be.

Pure: no access to anything but the lines it is given; host-tested on
captured traces (tests/fixtures/traces) and fuzzed."""
import bisect
import collections
import re

from ipibench.kvmhost.apicv import inhibit_change
from ipibench.kvmhost.exit_labels import (AVIC_IPI_FAILURE, DOORBELL_MISS, exit_detail,
                                          exit_reason, HV_CALLS, JUDGED, KVM_HCS, MSR_NAMES,
                                          XEN_HCS, XEN_VIRIDIAN_CALL)

MARK_PORT = 0xed
# Written by a round trip (single, single-halt) or a flush right after its region closed,
# on every iteration, warm-up included (include/bench.h,
# BENCH_MARK_REGION_END); only those inside a marker window are read.
REGION_END = 0xfffffffe
# Threads are named like "qemu-system-x86-161" (comm-pid); the flags column
# ("d..1.") is absent when the tracer prints no irq info.
# Numbers are bounded (a pid fits 10 digits, a value 16 hex digits): a
# corrupt capture must not make int() chew on thousands of digits.
LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<tid>\d{1,10})\s+(?:\(\s*[-\d]{1,10}\)\s+)?"
                  r"\[(?P<cpu>\d{1,5})\](?:\s+(?P<flags>[^\s:]+))?\s+"
                  r"(?P<ts>\d{1,12}\.\d{1,9}):\s+(?P<event>[a-z0-9_]+):\s*(?P<body>.*)$")
EXIT = re.compile(r"^(?:vcpu \d{1,6} )?reason (?P<reason>\S+)(?: \S+)?\s+"
                  r"rip (?P<rip>0x[0-9a-f]{1,16})"
                  r"(?: info1 (?P<info1>0x[0-9a-f]{1,16}) info2 (?P<info2>0x[0-9a-f]{1,16}))?"
                  r"(?: info (?P<i1>[0-9a-f]{1,16}) (?P<i2>[0-9a-f]{1,16}))?")
MSR = re.compile(r"^msr_(?P<dir>read|write) (?P<msr>[0-9a-f]{1,8}) = (?P<val>0x[0-9a-f]{1,16})")
PIO = re.compile(r"^pio_(?P<dir>read|write) at (?P<port>0x[0-9a-f]{1,4}) size (?P<size>\d{1,2}) "
                 r"count (?P<count>\d{1,10})(?: val (?P<val>0x[0-9a-f]{1,16}))?")
HYPERCALL = re.compile(r"^nr (?P<nr>0x[0-9a-f]{1,16})")
SET_IRQ = re.compile(r"^gsi (?P<gsi>\d{1,5}) level (?P<level>-?\d{1,3})")
XEN_LOST = re.compile(r"^records (?P<n>\d{1,10})(?: until (?P<until>\d{1,12}\.\d{1,9}))?")
HV_HYPERCALL = re.compile(r"^code (?P<code>0x[0-9a-f]{1,8}) (?P<fast>fast|slow|[01])?")
# kvm_vcpu_wakeup (virt/kvm/kvm_main.c, kvm_vcpu_halt()): how a halted vCPU
# came back: "poll time N ns, polling valid" when halt polling saw the wake,
# "wait time N ns, ..." when the vCPU had blocked.
WAKEUP = re.compile(r"^(?P<how>poll|wait) time (?P<ns>-?\d{1,20}) ns")
# kvm_avic_incomplete_ipi's id field: why AVIC did not complete an IPI
# (exit_labels.AVIC_IPI_FAILURE).
AVIC_IPI = re.compile(r"\bid[= ](?P<id>\d{1,3})\b")
# The header lines a windows-only capture starts with (lane.sh --exits).
# pit-traced: kvm_set_irq was enabled for the VM's PIT thread, so no GSI 0
# event at all means a silent PIT (pit_ticks 0), not an untraced one (None).
HEADER = re.compile(r"^#\s*ipibench-trace:\s*(?P<key>windows-only|lost|cut|pit-traced|xen)\b"
                    r"\s*(?P<n>\d{1,15})?")


class Exit:
    """One kvm_exit: its thread, time, reason and what it touched (detail),
    the window and side it fell in."""
    __slots__ = ("tid", "ts", "reason", "detail", "window", "side", "back")

    def __init__(self, tid, ts, reason, detail):
        self.tid, self.ts, self.reason, self.detail = tid, ts, reason, detail
        self.window, self.side = None, None
        self.back = None  # the kvm_entry that ended it, where traced

    def label(self):
        return f"{self.reason} ({self.detail})" if self.detail else self.reason


class Window:
    """One sampling's marker window: its exits by side, and what happened
    inside it."""

    def __init__(self, mark, tid, begin, inhibits):
        self.mark, self.tid, self.begin, self.end = mark, tid, begin, None
        self.sender = collections.Counter()
        self.targets = collections.Counter()
        self.inhibits = set(inhibits)  # APICv/AVIC inhibits in force at any time inside
        self.inhibit_changed = False   # one was set or cleared inside
        self.region_ends = []          # times the sender marked a region's close
        self.wakeups = collections.Counter()  # halted targets' wakes: "poll" or "wait"
        self.in_region = collections.Counter()  # target exits inside the sender's regions
        self.sends_exit = False        # the sender's sends made exits (a region start to see)
        self.gap = 0                   # records Xen dropped while it was open (xen_lost)
        # AVIC, per iteration (between two region-end marks): the sender's
        # sends that exited "target not running", and the other threads'
        # wakes by kind; at each mark, the poll wakes that a miss of the same
        # iteration explains, in whichever order the two were traced. A
        # miss whose wake slept explains that wake, and no other.
        self.iter_misses = 0
        self.iter_wakes = collections.Counter()
        self.poll_after_miss = 0

    def close_iteration(self):
        unexplained = max(0, self.iter_misses - self.iter_wakes["wait"])
        self.poll_after_miss += min(unexplained, self.iter_wakes["poll"])
        self.iter_misses = 0
        self.iter_wakes.clear()


class Trace:
    """Everything read from one capture."""

    def __init__(self):
        self.windows = {}                    # mark -> Window
        self.outside = collections.Counter()
        self.markers = 0                     # the markers' own port exits
        self.apicv = []                      # (ts, "set"|"cleared", reason)
        self.avic = collections.Counter()    # AVIC events by name, whole capture
        self.events = collections.Counter()  # every event name seen
        self.unparsed = 0
        self.inhibits = set()                # APICv/AVIC inhibits in force now (while parsing)
        self.windows_only = False            # exits traced inside marker windows only
        self.lost = 0                        # events the ring buffer overwrote
        self.cut = False                     # the capture ends early (not all of it came)
        self.xen = False                     # Xen's trace (xenhost/xentrace.py), not KVM's
        # kvm_set_irq of GSI 0 (the PIT's line; lane.sh traces no other GSI)
        # raised after the first marker: the guest stops the PIT before its
        # plan (kernel/pit.c), so a tick here is the host's timer running
        # on through the regions. KVM raises the line only when the last
        # tick was acked or lost ticks are discarded (pit_do_work(): with
        # QEMU's default reinject policy and the line masked, one raise,
        # then none while the timer runs on); the presets discard. None:
        # not traced (no "pit-traced" header, no kvm_set_irq event).
        self.pit_ticks = None



class _Reading:
    """parse()'s state between lines: the capture so far, each thread's
    latest exit, the marker window open now, and every exit in order."""

    def __init__(self):
        self.trace = Trace()
        self.last = {}        # tid -> the latest Exit on that thread, awaiting detail
        self.window = None
        self.exits = []
        self.gaps = []        # (from, until, records) Xen dropped (xen_lost)


def parse(lines):
    """Reads the capture; returns a Trace with every exit attributed."""
    rd = _Reading()
    for raw in lines:
        m = LINE.match(raw)
        if not m:
            _header(rd.trace, raw)
            continue
        tid, ts, event, body = int(m["tid"]), float(m["ts"]), m["event"], m["body"]
        rd.trace.events[event] += 1
        on = ON_EVENT.get(event)
        if on is None and event.startswith("kvm_avic_"):
            on = _on_avic
        if on is not None:
            on(rd, event, tid, ts, body)
    _count(rd.trace, rd.exits)
    _regions(rd.exits)
    _gaps(rd.trace, rd.gaps)
    return rd.trace


def _header(t, raw):
    """A line that is no event: a header of the capture's (HEADER), a
    comment, or a line not read (unparsed)."""
    h = HEADER.match(raw.strip())
    if h and h["key"] == "windows-only":
        t.windows_only = True
    elif h and h["key"] == "cut":
        t.cut = True
    elif h and h["key"] == "xen":
        t.xen = True
    elif h and h["key"] == "pit-traced":
        t.pit_ticks = t.pit_ticks or 0
    elif h and h["n"]:
        t.lost += int(h["n"])
    elif raw.strip() and not raw.lstrip().startswith("#"):
        t.unparsed += 1


# What each event says: one handler an event (ON_EVENT), on(reading, event,
# tid, ts, body).
def _on_exit(rd, event, tid, ts, body):
    """kvm_exit: a new exit on its thread, in the window open now, if any."""
    e = EXIT.match(body)
    if not e:
        rd.trace.unparsed += 1
        return
    info1 = int(e["info1"] or e["i1"] or "0", 16) if (e["info1"] or e["i1"]) else None
    info2 = int(e["info2"] or e["i2"] or "0", 16) if (e["info2"] or e["i2"]) else None
    x = Exit(tid, ts, exit_reason(e["reason"]), exit_detail(e["reason"], info1, info2))
    if rd.window is not None:
        x.window = rd.window
        x.side = "sender" if tid == rd.window.tid else "targets"
    rd.last[tid] = x
    rd.exits.append(x)


def _on_entry(rd, event, tid, ts, body):
    """kvm_entry: the end of its thread's latest exit."""
    x = rd.last.get(tid)
    if x is not None and x.back is None:
        x.back = ts


def _on_pio(rd, event, tid, ts, body):
    """kvm_pio: a marker (which opens or closes a window, or marks a region's
    end), else the port of its thread's I/O exit."""
    p = PIO.match(body)
    x = rd.last.get(tid)
    if not p:
        rd.trace.unparsed += 1
        return
    port = int(p["port"], 16)
    if port == MARK_PORT and p["dir"] == "write" and p["val"] is not None:
        # Its own exit, when traced (a windows-only capture starts
        # tracing exits at the begin marker's port write, after its exit).
        if x is not None and x.reason in ("io", "IO_INSTRUCTION") and x.detail is None:
            x.detail = "marker"
        rd.trace.markers += 1
        rd.window = _marker(rd.trace, rd.window, int(p["val"], 16), tid, ts)
    elif x is not None and x.reason in ("io", "IO_INSTRUCTION") and x.detail is None:
        x.detail = f"{port:#x}"


def _on_set_irq(rd, event, tid, ts, body):
    """kvm_set_irq: the PIT's ticks after the first marker (Trace.pit_ticks)."""
    t = rd.trace
    p = SET_IRQ.match(body)
    if not p:
        t.unparsed += 1
        return
    t.pit_ticks = t.pit_ticks or 0
    # pit_do_work() raises the line, then lowers it: count the raise.
    if p["gsi"] == "0" and p["level"] != "0" and t.markers:
        t.pit_ticks += 1


def _on_msr(rd, event, tid, ts, body):
    """kvm_msr: the MSR of its thread's MSR exit ("EOI", "ICR read")."""
    p = MSR.match(body)
    x = rd.last.get(tid)
    if p and x is not None and x.detail is None and x.reason.lower().startswith("msr"):
        msr = int(p["msr"], 16)
        name = MSR_NAMES.get(msr, f"{msr:#x}")
        x.detail = name if p["dir"] == "write" else f"{name} read"


def _on_hypercall(rd, event, tid, ts, body):
    """kvm_hypercall: KVM's hypercall its thread's exit made."""
    p = HYPERCALL.match(body)
    x = rd.last.get(tid)
    if p and x is not None and x.detail is None:
        nr = int(p["nr"], 16)
        x.detail = KVM_HCS.get(nr, f"KVM hypercall {nr}")


def _on_xen_hypercall(rd, event, tid, ts, body):
    """xen_hypercall (a Xen trace, xenhost/xentrace.py): Xen's hypercall, or
    viridian's, its thread's exit made."""
    p = HYPERCALL.match(body)
    x = rd.last.get(tid)
    if p and x is not None and x.detail is None:
        nr = int(p["nr"], 16)
        x.detail = "viridian" if nr & XEN_VIRIDIAN_CALL else XEN_HCS.get(nr, f"Xen hypercall {nr}")


def _on_xen_lost(rd, event, tid, ts, body):
    """xen_lost (a Xen trace): Xen dropped one CPU's records from here
    until the time "until" says (its buffer was full: the newest are lost,
    not the oldest; without "until", this instant). Every window that
    overlaps the gap may be missing exits of that CPU (_gaps)."""
    p = XEN_LOST.match(body)
    if not p:
        rd.trace.unparsed += 1
    else:
        rd.gaps.append((ts, max(ts, float(p["until"] or ts)), int(p["n"])))


def _gaps(t, gaps):
    """Each window says the records Xen dropped while it was open: a gap
    that began before it opened counts too (another CPU's, lost from then
    until after it closed)."""
    for w in t.windows.values():
        end = w.end if w.end is not None else float("inf")
        w.gap += sum(n for begin, until, n in gaps if begin <= end and until >= w.begin)


def _on_hv_hypercall(rd, event, tid, ts, body):
    """kvm_hv_hypercall: the Hyper-V call its thread's exit made, fast or slow."""
    p = HV_HYPERCALL.match(body)
    x = rd.last.get(tid)
    if p and x is not None and x.detail is None:
        code = int(p["code"], 16)
        fast = "fast" if p["fast"] in ("fast", "1") else "slow"
        x.detail = f"{HV_CALLS.get(code, f'Hyper-V call {code:#x}')} {fast}"


def _on_inhibit(rd, event, tid, ts, body):
    """kvm_apicv_inhibit_changed, kvm_apicv_update_request: the VM's
    APICv/AVIC inhibits now, and the open window's."""
    t = rd.trace
    change = inhibit_change(event, body, t.inhibits)
    if change is None:
        t.unparsed += 1
        return
    t.inhibits, what, said = change
    t.apicv.append((ts, what, said))
    if rd.window is not None:
        rd.window.inhibits |= t.inhibits
        rd.window.inhibit_changed = True


def _on_wakeup(rd, event, tid, ts, body):
    """kvm_vcpu_wakeup on a target's thread: how a halted target came back."""
    p = WAKEUP.match(body)
    if not p:
        rd.trace.unparsed += 1
    elif rd.window is not None and tid != rd.window.tid:
        rd.window.wakeups[p["how"]] += 1
        rd.window.iter_wakes[p["how"]] += 1


def _on_avic_incomplete_ipi(rd, event, tid, ts, body):
    """kvm_avic_incomplete_ipi: why its thread's incomplete-IPI exit was one,
    and a doorbell miss of the sender's in the window's iteration."""
    rd.trace.avic[event] += 1
    p = AVIC_IPI.search(body)
    x = rd.last.get(tid)
    if p and x is not None and x.reason in DOORBELL_MISS and x.detail is None:
        x.detail = AVIC_IPI_FAILURE.get(int(p["id"]), f"failure {p['id']}")
        if p["id"] == "1" and rd.window is not None and tid == rd.window.tid:
            rd.window.iter_misses += 1


def _on_avic(rd, event, tid, ts, body):
    """Any other kvm_avic_* event: counted."""
    rd.trace.avic[event] += 1


ON_EVENT = {"kvm_exit": _on_exit, "kvm_entry": _on_entry, "kvm_pio": _on_pio,
            "kvm_set_irq": _on_set_irq, "kvm_msr": _on_msr, "kvm_hypercall": _on_hypercall,
            "kvm_hv_hypercall": _on_hv_hypercall, "xen_hypercall": _on_xen_hypercall,
            "xen_lost": _on_xen_lost,
            "kvm_apicv_inhibit_changed": _on_inhibit,
            "kvm_apicv_update_request": _on_inhibit, "kvm_vcpu_wakeup": _on_wakeup,
            "kvm_avic_incomplete_ipi": _on_avic_incomplete_ipi}


def _count(t, exits):
    """Each exit on its window's side, or outside every window; the
    markers' own are not counted."""
    for x in exits:
        if x.detail == "marker":
            continue
        if x.window is None:
            t.outside[x.label()] += 1
        else:
            (x.window.sender if x.side == "sender" else x.window.targets)[x.label()] += 1


def _regions(exits):
    """Where windows have region marks: which target exits fell inside the
    sender's timed region (after its latest send exit, before the next
    region mark) rather than between regions. An exit counts as inside when
    it was over (its kvm_entry, where traced; else its start) before the
    mark: one that began inside and ended after cost the region nothing."""
    sends = collections.defaultdict(list)
    for x in exits:
        if x.window is not None and x.window.region_ends and x.side == "sender" \
                and x.detail != "marker" and JUDGED.match(x.label()):
            sends[x.window.mark].append(x.ts)
    for mark, ts in sends.items():
        ts.sort()
    for x in exits:
        if x.window is not None and x.window.region_ends:
            x.window.sends_exit = bool(sends.get(x.window.mark))
    for x in exits:
        w = x.window
        if w is None or not w.region_ends or x.side != "targets":
            continue
        send = bisect.bisect_left(sends[w.mark], x.ts)
        end = bisect.bisect_left(w.region_ends, x.back if x.back is not None else x.ts)
        last_send = sends[w.mark][send - 1] if send else None
        last_end = w.region_ends[end - 1] if end else None
        if last_send is not None and (last_end is None or last_send > last_end):
            w.in_region[x.label()] += 1


def _marker(t, open_window, val, tid, ts):
    """A marker's port write: a region's end (REGION_END) or a window's
    begin or end; returns the window open after it."""
    if val == REGION_END:
        if open_window is not None and open_window.tid == tid:
            open_window.region_ends.append(ts)
            # The iteration is over: its wake, if any, came before the mark.
            open_window.close_iteration()
        return open_window
    mark, end = val >> 1, val & 1
    if not end:
        w = Window(mark, tid, ts, t.inhibits)
        t.windows[mark] = w
        return w
    if open_window is not None and open_window.mark == mark:
        open_window.end = ts
        open_window.close_iteration()
    return None
