# SPDX-License-Identifier: GPL-2.0-only
"""The progress lines' text: one line for a finished unit of the plan
("[12/40] x2apic broadcast ... 3.1 s", with its SKIPs, failures and
withheld one-way figures), one for a finished label of the correctness
suite ("check x2apic: 23 passed ... 0.05 s"), one for whole SKIPs of one
reason in a row. console.py decides when each is written."""
from ipibench.boot.wording import reason_head, secs, told, withheld, withheld_cause, WITHHELD


def unit_name(phase):
    """"x2apic broadcast", "dry-run", "hv-icr" (every benchmark of a refused backend)."""
    b, bench = phase.get("backend", "?"), phase.get("bench", "?")
    if b == "none":
        return str(bench)
    return str(b) if bench == "all" else f"{b} {bench}"


def unit_tag(first, last, total):
    """"[ 3/36]", "[31-35/36]": the index padded to the total's width, so the lines align."""
    w = len(str(total))
    return f"[{first:>{w}}/{total}]" if first == last else f"[{first:>{w}}-{last}/{total}]"


def unit_lines(phase, seconds, records, seen, shown="", cut=None):
    """A finished unit: (skip reason when every record SKIPped for one, else
    None; its lines). seen: the SKIP reasons already said in full, and the
    causes of withheld one-way figures ("withheld: TSC skew"), updated;
    shown: what the console showed during the unit (a failure already there
    is not repeated); cut: why the console ended inside it. seconds None: not
    timed (a log read afterwards)."""
    head = f"{unit_tag(phase.get('index'), phase.get('index'), phase.get('of'))} " \
        f"{unit_name(phase)} ..."
    skips = [r for r in records if r.get("status") == "SKIP"]
    reasons = {r.get("reason", "") for r in skips}
    if skips and len(skips) == len(records) and len(reasons) == 1 and not cut:
        return skips[0].get("reason", ""), [f"{head} SKIP: {skips[0].get('reason', '')}"]
    line = head + ("" if seconds is None else " " + secs(seconds))
    held = [r for r in skips if withheld(r)]
    skips = [r for r in skips if not withheld(r)]
    # Each SKIP's reason: in full on a line of its own the first time, by its
    # head on the progress line once said.
    fresh, known = [], []
    for why in dict.fromkeys(r.get("reason", "") for r in skips):
        (known if why in seen else fresh).append(why)
    notes = _unit_notes(records, skips, held, known, cut)
    if notes:
        line += (", " if seconds is not None else " ") + ", ".join(notes)
    if held:
        causes = dict.fromkeys(withheld_cause(r.get("reason", "")) for r in held)
        line += ";" if notes else ("," if seconds is not None else "")
        line += f" {len(held)} one-way figure{'' if len(held) == 1 else 's'} withheld " \
            f"({', '.join(causes)})"
    return None, [line] + _unit_details(records, seen, shown, fresh)


def _unit_notes(records, skips, held, known, cut):
    """What a unit's progress line says after its time: its failures and
    errors counted, its SKIPs (by the heads of the reasons already said),
    where it was cut, or that it had no records."""
    counts = {}
    for r in records:
        counts[r.get("status")] = counts.get(r.get("status"), 0) + 1
    notes = [f"{counts[s]} {s}" for s in ("FAILURE", "ERROR") if counts.get(s)]
    if skips:
        brief = ", ".join(dict.fromkeys(map(reason_head, known)))
        notes.append(f"{len(skips)} of {len(records) - len(held)} SKIP" +
                     (f": {brief}" if known else "") +
                     (" (see above)" if any(reason_head(w) != w for w in known) else ""))
    if cut:
        notes.append(f"stopped: {cut}")
    elif not records:
        notes.append("no records")
    return notes


def _unit_details(records, seen, shown, fresh):
    """The lines under a unit's progress line: each failure the console did
    not show, the first withheld figure of each cause, each fresh SKIP
    reason in full (seen updated)."""
    out = []
    for r in records:
        st, why = r.get("status"), r.get("reason", "")
        if st in ("FAILURE", "ERROR") and why and why not in shown:
            what = " ".join(str(r.get(k)) for k in ("bench", "metric", "variant")
                            if r.get(k) not in (None, "none", "-"))
            out.append(f"    {st}: {what}: {why}")
        elif withheld(r):
            cause = "withheld: " + withheld_cause(why)
            if cause not in seen:
                seen.add(cause)
                out.append(f"    withheld: {why[len(WITHHELD):]}")
        elif st == "SKIP" and why in fresh and why not in seen:
            out.append(f"    SKIP: {told(why, seen)}")
    return out


def check_lines(label, seconds, passed, failed, skipped, reasons, said=None):
    """A finished label of the correctness suite: (skip reason when its only
    TAP line was a SKIP, else None; its lines). said: the reasons already
    said in full (updated), None: each in full."""
    if not passed and not failed and skipped == 1 and reasons:
        return reasons[0], [f"check {label} ... SKIP: {reasons[0]}"]
    parts = [f"{passed} passed"] + ([f"{failed} FAILED"] if failed else [])
    if skipped:
        why = [r if said is None else told(r, said) for r in dict.fromkeys(reasons)]
        parts.append(f"{skipped} skipped ({'; '.join(why)})")
    t = "" if seconds is None else " " + secs(seconds)
    return None, [f"check {label}: {', '.join(parts)} ...{t}"]


def merged_skip(kind, items, reason):
    """Consecutive whole SKIPs of one reason, as one line."""
    if kind == "check":
        return f"check {', '.join(items)} ... SKIP: {reason}"
    first, last, total = items[0][0], items[-1][0], items[0][1]
    names = ", ".join(name for _, _, name in items)
    return f"{unit_tag(first, last, total)} {names} ... SKIP: {reason}"
