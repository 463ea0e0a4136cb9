# SPDX-License-Identifier: GPL-2.0-only
"""The summary's table of headline figures: which record is each
backend's cell (headline(); lib/lava.h and lab/lava.py pick the same
ones) and the table drawn from them, within 80 columns."""

HEAD = ("self", "send-cost", "single", "single", "broadcast", "flush")
SUB = ("sti-nop", "send", "spin", "halt", "all-ack", "crossover")
BROADCAST_ORDER = ("shorthand", "set", "loop")


def _pick(results, backend, bench, metric, variant=None):
    """The first record of (backend, bench, metric[, variant]) in console order."""
    for r in results:
        if (r.get("backend"), r.get("bench"), r.get("metric")) == (backend, bench, metric) and \
                (variant is None or r.get("variant") == variant):
            return r
    return None


def _broadcast(results, backend):
    """all-ack to the most targets, by shorthand, else one set write, else the loop."""
    rows = [r for r in results if (r.get("backend"), r.get("bench"), r.get("metric")) ==
            (backend, "broadcast", "all-ack")]
    if not rows:
        return None
    most = max(r.get("ntargets", 0) for r in rows)
    rows = [r for r in rows if r.get("ntargets", 0) == most]
    rank = {v: i for i, v in enumerate(BROADCAST_ORDER)}
    return min(rows, key=lambda r: rank.get(r.get("variant"), len(rank)))


def _flush_cell(results, backend):
    """Pages from which a flush hypercall beats the native shootdown to the
    most targets ("8p"), "never", or "-" when no crossover was computed."""
    rows = [r for r in results if (r.get("backend"), r.get("bench"), r.get("metric")) ==
            (backend, "flush", "crossover-pages")]
    if not rows:
        return "-"
    r = max(rows, key=lambda r: r.get("ntargets", 0))
    return str(r.get("variant")) if r.get("status") == "SUCCESS" else "never"


def _cells(rec, tsc_known):
    """(cycles cell, ns cell) of one record."""
    if rec is None:
        return "-", ""
    st = rec.get("status")
    if st != "SUCCESS":
        return {"SKIP": "skip", "FAILURE": "FAIL"}.get(st, str(st)), ""
    cyc = (rec.get("cycles") or {}).get("p50")
    ns = (rec.get("ns") or {}).get("p50")
    return (str(cyc) if cyc is not None else "-"), (str(ns) if ns is not None and tsc_known
                                                    else "")


def headline(results, backend, tsc_known=True):
    """The summary's two rows of one backend: cycles cells, ns cells."""
    recs = (_pick(results, backend, "self", "send-to-handler", "sti-nop"),
            _pick(results, backend, "send-cost", "send"),
            _pick(results, backend, "single", "round-trip"),
            _pick(results, backend, "single-halt", "round-trip"),
            _broadcast(results, backend))
    cells = [_cells(r, tsc_known) for r in recs]
    return [c for c, _ in cells] + [_flush_cell(results, backend)], [n for _, n in cells] + [""]


def table(results, backends, tsc_known):
    """The table's lines: what its columns hold, its header, and each of
    backends (those with a figure, in console order) as a cycles row and,
    where any is known, an ns row."""
    most = max((r.get("ntargets", 0) for r in results if r.get("bench") == "broadcast"),
               default=0)
    out = ["p50 per backend, cycles and ns; single: round trip to a spinning or halted",
           f"target; broadcast: to all {most} others (shorthand, else set); flush: pages",
           "from which a flush hypercall beats the native INVLPG shootdown (-: none)",
           f"{'':18}" + "".join(f"{h:>10}" for h in HEAD),
           f"{'backend':18}" + "".join(f"{h:>10}" for h in SUB)]
    for b in backends:
        cyc, ns = headline(results, b, tsc_known)
        out.append(f"{b[:14]:<14} cyc" + "".join(f"{c:>10}" for c in cyc))
        if any(ns):
            out.append(f"{'':14} ns " + "".join(f"{c:>10}" for c in ns))
    return out
