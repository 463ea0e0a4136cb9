#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Exit accounting from a KVM ftrace capture (run.sh --exits): what the hypervisor
did for each record of a run.

Input: the text of the kernel's trace file with the kvm events enabled,
which kvmhost/trace_read.py reads into marker windows, and the guest's
console log with phase markers (markers=1): every result record of a
sampling carries "mark", its window's. attach() adds "exits" to each
record: per measured iteration, the sender's and the targets' exits by
label, the targets' inside the sender's timed region ("targets_in_region")
and how a halted target came back ("target_wakeups"), the APICv/AVIC
inhibits traced while it ran, whether its APIC was accelerated
(kvmhost/apicv.py) and how its halted target woke (kvmhost/wake.py).
table() and summary() are what a person and results.json read.

The rest of the reading, one job a module, in kvmhost/:
  trace_read.py   the capture's lines into a Trace: exits, windows, markers
  exit_labels.py  what an exit is called, and which a send path causes
  apicv.py        APICv/AVIC: the inhibits, and whether the APIC was accelerated
  wake.py         how a halted target woke

usage: PYTHONPATH=host python3 -m ipibench.kvmhost.trace TRACE CONSOLE_LOG [--json]
Pure: no access to anything but the two files; host-tested on captured
traces (tests/fixtures/traces) and fuzzed.
"""
import collections
import json
import sys

from ipibench.kvmhost.apicv import apic_accel, apic_accel_sides
from ipibench.kvmhost.exit_labels import JUDGED
from ipibench.kvmhost.trace_read import parse
from ipibench.kvmhost.wake import wake_counts, wake_path
from ipibench.record_lines import record_lines

TRACE_FILE = "kvm-trace.txt"  # its name in a results directory
# A Xen trace's, read into the same lines (xenhost/xentrace.py; --accel xen-in-tcg).
XEN_TRACE_FILE = "xen-trace.txt"


def records(log_lines):
    """The result records of a console log that carry a mark."""
    return [r for _, r, _ in record_lines([line.strip() for line in log_lines], "result")
            if r is not None and isinstance(r.get("mark"), int)]


def _sampling(r):
    """What one sampling's records share: its mark and the run they measure
    (benchmark, variant, backend, sender, targets); only the metric differs."""
    return (r.get("mark"), r.get("bench"), r.get("variant"), r.get("backend"),
            r.get("sender"), r.get("targets"))


def sampling_iterations(recs):
    """{_sampling: measured iterations} of each sampling. A figure withheld
    for timing (a one-way SKIP: TSC skew) says iterations 0, yet its
    sampling ran and was traced like its measured siblings, which share its
    mark and its run: it takes theirs, so that whether a row has exit data
    never depends on whether its timing figure could be reported. A record
    whose mark no measured record of its own run shares gets none."""
    out = {}
    for r in recs:
        n = r.get("iterations")
        if isinstance(r.get("mark"), int) and isinstance(n, int) and n > 0:
            out[_sampling(r)] = max(out.get(_sampling(r), 0), n)
    return out


def per_iteration(counter, iterations):
    return {label: round(n / iterations, 4) for label, n in counter.most_common()}


def slow_eoi(cmdline):
    """Whether a guest command line armed debug=slow-eoi (kernel/options.c:
    debug takes a comma-separated list)."""
    for word in str(cmdline or "").split():
        key, _, value = word.partition("=")
        if key == "debug" and ({"slow-eoi", "all"} & set(value.split(","))):
            return True
    return False


def cmdline_of(lines):
    """The guest's command line, from a console's env record ("" if none)."""
    for _, rec, _ in record_lines([line.strip() for line in lines], "env"):
        return str(rec.get("cmdline", "")) if rec is not None else ""
    return ""


# Why a target's exits cannot be placed against the sender's region without
# debug=slow-eoi: the region-end mark (an OUT) is written after the closing
# RDTSCP, so an exit the target makes between the two reads as inside,
# and nothing but slow-eoi's wait fixes which side of both its EOI falls.
IN_REGION_UNKNOWN = ("without debug=slow-eoi no causality orders a target's exits against "
                     "the sender's region end, whose mark trails its closing RDTSCP by one exit")


def exits_unknown(r, why):
    """A record's exits when nothing says what they were: unknown, and why
    (no marker window in the trace; a Xen-lane run, which traces none)."""
    r["exits"] = {"status": why, "apic_accel": "unknown", "apic_accel_why": why}


def attach(trace, recs, cmdline=None, kvm_params=None, kernel=None):
    """Adds "exits" to each record: per measured iteration, sender and targets,
    the inhibits traced, and whether the APIC was accelerated (apic_accel).
    cmdline: the guest's (cmdline_of); targets_in_region is reported only
    under debug=slow-eoi, where causality orders the target's EOI against the
    region (before it for ack-after-eoi, after the region-end mark for the
    count-first order), else it is unknown, with why. kvm_params: the host's
    module parameters as run.sh read them ("kvm_amd.enable_ipiv": "N"...),
    which settle what AVIC's incomplete-IPI exits mean (apic_accel); kernel:
    the release of the kernel whose KVM was traced, where known (wake_path)."""
    causal = slow_eoi(cmdline)
    counts = sampling_iterations(recs)
    for r in recs:
        n = counts.get(_sampling(r))
        w = trace.windows.get(r["mark"])
        if not n or w is None or w.end is None:
            exits_unknown(r, _unknown_why(trace, n))
            continue
        if w.gap:
            exits_unknown(r, f"Xen dropped {w.gap} trace records while its window was open "
                          "(a full buffer): its exits would be short")
            continue
        r["exits"] = window_exits(w, n, causal)
        _judge(r, kvm_params, kernel)
    return recs


def _unknown_why(trace, n):
    """Why a record has no exits: no window, or no count of its iterations."""
    why = "no complete marker window in the trace" if n else \
        "no measured record of this sampling (its mark and run) says how many " \
        "iterations it measured"
    if trace.lost:
        why += f" ({trace.lost} events were lost: the trace's ring buffer overflowed)"
    return why


def window_exits(w, n, causal):
    """A record's exits from its marker window w, per each of n measured
    iterations; causal: debug=slow-eoi (attach())."""
    return {"iterations": n,
            "sender": per_iteration(w.sender, n),
            "targets": per_iteration(w.targets, n),
            "window_s": round(w.end - w.begin, 6),
            **({"targets_in_region": per_iteration(w.in_region, n)}
               if w.region_ends and w.sends_exit and causal else {}),
            **({"targets_in_region_why": "the sends made no exit (accelerated): the "
                "region's start is not in the trace"}
               if w.region_ends and not w.sends_exit else {}),
            **({"targets_in_region_why": IN_REGION_UNKNOWN}
               if w.region_ends and w.sends_exit and not causal else {}),
            **({"target_wakeups": per_iteration(w.wakeups, n),
                "poll_wakes_after_miss": round(w.poll_after_miss / n, 4)}
               if w.wakeups else {}),
            "apicv": ("inhibited: " + " ".join(sorted(w.inhibits))) if w.inhibits
            else "no inhibit traced",
            **({"apicv_changed_inside": True} if w.inhibit_changed else {})}


def _judge(r, kvm_params, kernel):
    """What a record's exits say: whether its APIC was accelerated, on
    each side (apicv.py), and how its halted target woke (wake.py)."""
    r["exits"]["apic_accel"], r["exits"]["apic_accel_why"] = apic_accel(r, kvm_params)
    r["exits"]["apic_accel_sides"] = apic_accel_sides(r, kvm_params)
    wake = wake_path(r, kvm_params, kernel)
    if wake:
        r["exits"]["wake"], r["exits"]["wake_why"] = wake
        shares = wake_counts(r, kvm_params, kernel)
        if shares:
            r["exits"]["wake_counts"] = shares


def attach_console(trace, lines, kvm_params=None):
    """attach() over a console log's lines: its marked records, and the
    guest's command line from its env record (what debug=slow-eoi settles)."""
    return attach(trace, records(lines), cmdline_of(lines), kvm_params)


def _side_text(d):
    """The send path's own exits first, then the host's (interrupt, vintr),
    each by count: host noise never reorders what the path did."""
    if not d:
        return "none"
    order = sorted(d.items(), key=lambda kv: (not JUDGED.match(kv[0]), -kv[1]))
    return " ".join(f"{v:.2f} {k}" for k, v in order)


def table(recs, summ):
    """Lines a person reads: one per record, then what fell outside.
    summ: summary() of the trace (what results.json keeps as run.exits)."""
    return [_record_line(r) for r in recs] + _capture_lines(summ)


def _record_line(r):
    """A record's exits on each side, and what they say."""
    e = r.get("exits", {})
    name = f"{r['backend']} {r['bench']} {r['metric']}"
    if r.get("variant") not in (None, "none"):
        name += f" {r['variant']}"
    if "status" in e:
        return f"{name}: {e['status']}"
    inside = _inside_text(e)
    accel = _accel_text(e)
    return (f"{name}: sender {_side_text(e['sender'])} | targets "
            f"{_side_text(e['targets'])}{inside}{accel}")


def _inside_text(e):
    """The targets' exits inside the sender's region, and the wake."""
    inside = "" if "targets_in_region" not in e else \
        f" (inside the sender's region: {_side_text(e['targets_in_region'])})"
    if "targets_in_region_why" in e:
        inside = f" (inside the sender's region: unknown, {e['targets_in_region_why']})"
    if "wake" in e:
        inside += f"; woken: {e['wake']} ({e.get('wake_why', '')})"
    if "wake_disagrees" in e:
        inside += f"; the wake evidence disagrees: {e['wake_disagrees']}"
    return inside


def _accel_text(e):
    """Whether the APIC was accelerated, on each side and in all."""
    accel = ""
    sides = e.get("apic_accel_sides")
    if isinstance(sides, dict):
        accel = (f" | accelerated on the sender: {sides['sender'][0]}, on the targets: "
                 f"{sides['targets'][0]}")
    if "apic_accel" in e:
        accel += f" | APIC accelerated: {e['apic_accel']} ({e.get('apic_accel_why', '')})"
    return accel


def _capture_lines(summ):
    """What the capture as a whole says: the exits outside every record,
    a cut or lost events, the VM's APICv/AVIC inhibits."""
    out = []
    if summ.get("outside") is None:
        out.append("outside every record: not traced (exits were traced inside the records' "
                   f"marker windows only); markers {summ['markers']}")
    else:
        outside = collections.Counter(summ["outside"])
        top = ", ".join(f"{n} {k}" for k, n in outside.most_common(6))
        out.append(f"outside every record: {sum(outside.values())} exits ({top}); "
                   f"markers {summ['markers']}")
    if summ.get("cut"):
        out.append("cut short: the trace ends before the boot did; the records after its "
                   "end have no exits")
    if summ.get("lost") and summ.get("trace") == XEN_TRACE_FILE:
        out.append(f"lost: {summ['lost']} records Xen dropped while a buffer was full; a "
                   "record whose window a gap fell in has no exits")
    elif summ.get("lost"):
        out.append(f"lost: {summ['lost']} events, the oldest, overwritten in the trace's ring "
                   "buffer: the first records' exits may be short")
    if summ["apicv_inhibits"]:
        out.append("APICv/AVIC inhibits for this VM: " + ", ".join(
            f"{i['change']} at {i['at_s']:.3f} s, now {i['now']}"
            for i in summ["apicv_inhibits"]))
    return out


def summary(trace):
    """What results.json keeps of the capture as a whole."""
    return {"trace": XEN_TRACE_FILE if trace.xen else TRACE_FILE,
            "traced": "marker windows" if trace.windows_only else "whole boot",
            "outside": None if trace.windows_only else dict(trace.outside.most_common()),
            "markers": trace.markers, "unparsed": trace.unparsed, "lost": trace.lost,
            "cut": trace.cut,
            "apicv_inhibits": [{"at_s": ts, "change": what, "now": reasons}
                               for ts, what, reasons in trace.apicv],
            "avic_events": dict(trace.avic), "events": dict(trace.events),
            "pit_ticks": trace.pit_ticks}


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        trace = parse(f)
    with open(argv[2], errors="replace") as f:
        lines = f.read().splitlines()
    recs = attach_console(trace, lines)
    if "--json" in argv[3:]:
        json.dump({"records": [{k: r[k] for k in ("bench", "metric", "variant", "backend",
                                                 "sender", "targets", "iterations", "mark",
                                                 "exits") if k in r} for r in recs],
                   "outside": dict(trace.outside), "markers": trace.markers,
                   "apicv": trace.apicv, "events": dict(trace.events)}, sys.stdout, indent=1)
        print()
    else:
        print("\n".join(table(recs, summary(trace))))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
