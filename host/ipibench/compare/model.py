# SPDX-License-Identifier: GPL-2.0-only
"""The A/B comparison that compare, gate and report all print from: each side
(a set of saved boots), one row per benchmark x metric x variant x backend x
target state x target count, the test of each row, and whether the two
sides' environments make their figures comparable at all."""
import math
import zlib

from ipibench.exit_codes import EX_NO_OVERLAP, EX_USAGE, ToolError
from ipibench.kvmhost import exit_labels
from ipibench.kvmhost import host_class, host_model
from ipibench.kvmhost import wake as kvm_wake
from ipibench.results.saved import AFTER_X2APIC_MARK, fault_words, xapic_mmio
from ipibench.results.stats import (bootstrap_change_ci, holm, mann_whitney,
                                    mann_whitney_histograms, median, MIN_BOOTS)


ROW_FIELDS = ("bench", "metric", "variant", "backend", "target_state", "ntargets")


def row_key(rec):
    return tuple(rec.get(k) for k in ROW_FIELDS)


def row_order(key):
    """Sort rows by name, target counts numerically."""
    n = key[5] if isinstance(key[5], int) else -1
    return tuple(str(k) for k in key[:5]) + (n,)


def row_name(key):
    bench, metric, variant, backend, state, ntargets = key
    return f"{bench}/{metric}/{variant}/{backend}/{state}/n{ntargets}"


class Side:
    """One side of a comparison: per row, one value (a p50) per boot."""

    def __init__(self, name, boots, unit="cycles", backend=None, label=None):
        """backend: keep only that backend's records (compare --pair), whose
        rows then carry label as their backend, so two backends line up."""
        self.name, self.boots, self.unit = name, boots, unit
        self.values, self.histos, self.statuses = {}, {}, {}
        self.exits = {}  # key -> per boot (sender, targets) judged exits per iteration
        # key -> per boot ({label: per iteration} of the sender, of the
        # targets, the iterations they are over)
        self.exit_labels = {}
        self.emulated = {}  # key -> records measured after x2APIC on AVIC without x2AVIC
        self.unknown = {}   # why whether they were is unknown -> records
        self.untrusted = {}  # key -> the EMULATION_IDS its figures carry (any boot)
        self.wakes = {}  # key -> per record (class, source, counts): wake_evidence()
        self.wake_events = {}  # key -> {WAKE_EVENTS label: count over boots}
        for boot in boots:
            per_boot = {}
            x2apic = X2apicBoot(boot)
            emulated = emulation_ids(boot.warnings() if hasattr(boot, "warnings") else None)
            for rec in boot.results:
                if backend is not None and rec.get("backend") != backend:
                    continue
                key = row_key(rec)
                if backend is not None:
                    key = key[:3] + (label,) + key[4:]
                self.statuses.setdefault(key, set()).add(rec["status"])
                self.mark_after_x2apic(key, x2apic.result(rec))
                # Exits first: a figure withheld for timing (a one-way SKIP)
                # still has its sampling's exits (kvm_trace.sampling_iterations).
                ex = rec.get("exits")
                if isinstance(ex, dict) and isinstance(ex.get("sender"), dict) \
                        and isinstance(ex.get("targets"), dict):
                    self.exits.setdefault(key, []).append(
                        (exits_total(ex["sender"]), exits_total(ex["targets"]),
                         blocked_share(rec, traced_params(boot), traced_kernel(boot))))
                    n = ex.get("iterations")
                    self.exit_labels.setdefault(key, []).append(
                        (judged_labels(ex["sender"]), judged_labels(ex["targets"]),
                         n if isinstance(n, int) and n > 0 else None))
                self.add_wake(key, rec)
                stats = rec.get(unit)
                if rec["status"] != "SUCCESS" or not isinstance(stats, dict):
                    continue
                own = rec.get("untrusted") if isinstance(rec.get("untrusted"), list) else []
                ids = emulated | (set(map(str, own)) & set(EMULATION_IDS))
                if ids:
                    self.untrusted.setdefault(key, set()).update(ids)
                per_boot.setdefault(key, []).append(stats["p50"])
                self.histos.setdefault(key, []).extend(rec.get("histogram", []))
            # The kvm-unit-tests view: one row per vmexit.c name and backend,
            # its value the mean per iteration (as vmexit.c reports), in ns
            # through the boot's own TSC frequency when the unit is ns.
            tsc = getattr(boot, "env", {}).get("tsc")
            khz = tsc.get("khz") if isinstance(tsc, dict) else None
            for rec in getattr(boot, "kut", []):
                if backend is not None and rec.get("backend") != backend:
                    continue
                key = ("kvm-unit-tests", rec.get("name"), "mean", label if backend is not None
                       else rec.get("backend"), "none", 1)
                self.statuses.setdefault(key, set()).add("SUCCESS")
                self.mark_after_x2apic(key, x2apic.kut(rec))
                mean = rec.get("mean_cycles")
                if not isinstance(mean, int):
                    continue
                if unit == "ns":
                    if not isinstance(khz, int) or khz <= 0:
                        continue  # no frequency, no ns: like a result without "ns"
                    mean = mean * 1_000_000 // khz
                per_boot.setdefault(key, []).append(mean)
                if emulated:
                    self.untrusted.setdefault(key, set()).update(emulated)
            # Several records with one key in a boot (every sender/target pair
            # of a matrix run): the boot's value is the median of theirs.
            for key, vals in per_boot.items():
                self.values.setdefault(key, []).append(median(vals))

    def keys(self):
        return set(self.statuses)

    def add_wake(self, key, rec):
        """A halted target's wake evidence and its events (WAKE_EVENTS)."""
        if rec.get("target_state") != "halt":
            return
        wake = wake_evidence(rec)
        if wake:
            self.wakes.setdefault(key, []).append(wake)
        for field, label in WAKE_EVENTS:
            n = rec.get(field)
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                events = self.wake_events.setdefault(key, {})
                events[label] = events.get(label, 0) + n

    def mark_after_x2apic(self, key, state):
        """state: X2apicBoot's verdict on one record (None: not concerned)."""
        if state is True:
            self.emulated[key] = self.emulated.get(key, 0) + 1
        elif state:
            self.unknown[state] = self.unknown.get(state, 0) + 1


class X2apicBoot:
    """Which of one boot's records measured an xAPIC-mode backend (its ICR on
    the MMIO page, xapic_mmio) after a vCPU had been in x2APIC mode on AVIC
    without x2AVIC."""

    NO_KEY = "records without after_x2apic (saved before the guest marked it)"
    NO_FLAGS = ("boots whose CPU flags were not saved (results older than host.cpu_flags) "
                "or read")

    def __init__(self, boot):
        self.host = boot.avic_without_x2avic() if hasattr(boot, "avic_without_x2avic") \
            else False
        # A kut cell is the mean of a result record above it: the cells of a
        # backend carry the worst of that backend's results in this boot.
        self.by_backend = {}
        # The backends whose records write the ICR through the page.
        self.mmio = {rec.get("backend") for rec in getattr(boot, "results", [])
                     if xapic_mmio(rec)}
        for rec in getattr(boot, "results", []):
            state = self.result(rec)
            if state is not None:
                worst = self.by_backend.get(rec.get("backend"))
                self.by_backend[rec.get("backend")] = state if worst in (None, False) or \
                    state is True else worst

    def result(self, rec):
        """True (emulated), False (not), a NO_* reason (unknown), or None (a
        record this does not concern: another backend, no figure, no AVIC)."""
        if self.host is False or not xapic_mmio(rec) or rec.get("status") != "SUCCESS":
            return None
        after = rec.get("after_x2apic")
        if not isinstance(after, bool):
            return self.NO_KEY
        if not after:
            return False
        return True if self.host else self.NO_FLAGS

    def kut(self, rec):
        if self.host is False or rec.get("backend") not in self.mmio:
            return None
        return self.by_backend.get(rec.get("backend"), self.NO_KEY)


def exits_total(side):
    """Judged exits per iteration of one side of a record (kvmhost/exit_labels.py)."""
    try:
        return exit_labels.judged_total({str(k): float(v) for k, v in side.items()})
    except (TypeError, ValueError):
        return None


def traced_params(boot):
    """The KVM module parameters of the KVM a boot's --exits traced
    (run.exits.kvm_params), or None."""
    ex = (getattr(boot, "run", None) or {}).get("exits")
    return ex.get("kvm_params") if isinstance(ex, dict) else None


def traced_kernel(boot):
    """The release of the kernel whose KVM a boot's --exits traced: this
    host's under accel kvm (the lane's L1 is not recorded), else None."""
    host = getattr(boot, "host", None) or {}
    return host.get("kernel") if host.get("accel") == "kvm" else None


def blocked_share(rec, kvm_params=None, kernel=None):
    """Of a halted target's traced wakes, the share that came after a block,
    as the record's wake label counts them (exits.wake_counts: an AVIC miss
    is a block whatever kvm_vcpu_wakeup's waited said), or, in records
    saved before that count, as trace.wake_counts() counts them anew from
    the record and the traced KVM's parameters. None where no wake was
    traced."""
    exits = rec.get("exits") or {}
    counts = exits.get("wake_counts")
    if not isinstance(counts, dict):
        try:
            counts = kvm_wake.wake_counts(rec, kvm_params, kernel)
        except (TypeError, ValueError, AttributeError):
            counts = None
    if isinstance(counts, dict):
        poll, block = counts.get("poll", 0), counts.get("block", 0)
    else:
        return None
    try:
        poll, block = float(poll), float(block)
    except (TypeError, ValueError):
        return None
    return round(block / (poll + block), 4) if poll + block > 0 else None


# What else a halted target's records count, shown where not zero:
# (record field, its words).
WAKE_EVENTS = (("rehalt_timeouts", "re-halt timeouts"), ("late_wakes", "late wakes"),
               ("tick_iterations", "ticked iterations"))
WAKE_CLASSES = kvm_wake.WAKE_CLAIMS + ("unknown",)


def wake_evidence(rec):
    """(class, source, counts) of a halted target's wakes in one record, from
    the host's evidence: KVM's trace (exits.wake, with exits.wake_counts per
    iteration), else its statistics (host_stats.wake, with their halts,
    polled, blocked and other); "disputed" where both claim and differ
    (exits.wake_disagrees: neither is taken). None without either."""
    e = rec.get("exits") if isinstance(rec.get("exits"), dict) else {}
    h = rec.get("host_stats") if isinstance(rec.get("host_stats"), dict) else {}
    if e.get("wake_disagrees"):
        return "disputed", f"trace {e.get('wake')}, statistics {h.get('wake')}", None
    # "unknown" claims nothing: the other source's claim stands before it.
    if e.get("wake") in kvm_wake.WAKE_CLAIMS:
        counts = e.get("wake_counts") if isinstance(e.get("wake_counts"), dict) else None
        return e["wake"], "trace", counts
    if h.get("wake") in WAKE_CLASSES:
        counts = {k: h[k] for k in ("halts", "polled", "blocked", "other")
                  if isinstance(h.get(k), int)}
        return h["wake"], "statistics", counts or None
    if e.get("wake") == "unknown":
        return "unknown", "trace", None
    return None


class WakeSummary:
    """One side's wake evidence for a row, over its boots: cls, the class
    every record gave ("varies" where they differ), and its words."""

    def __init__(self, wakes, events):
        self.events = events or {}
        classes = {}
        for w in wakes:
            classes[w[0]] = classes.get(w[0], 0) + 1
        sources = sorted({w[1] for w in wakes if w[0] != "disputed"})
        where = f" ({', '.join(sources)})" if sources else ""
        if not wakes:
            self.cls, text = None, "-"
        elif len(classes) > 1:
            self.cls = "varies"
            text = "varies over records: " + ", ".join(
                f"{c} {n}" for c, n in sorted(classes.items())) + where
        elif wakes[0][0] == "disputed":
            self.cls, text = "disputed", f"disputed ({wakes[0][1]}: neither taken)"
        else:
            self.cls = wakes[0][0]
            text = self.cls + self.counts(wakes) + where
        if self.events:
            text += "; " + ", ".join(f"{label} {n}" for label, n in self.events.items())
        self.text = text

    @staticmethod
    def counts(wakes):
        """A mixed class's counts: per iteration from the trace (median over
        records), or the statistics' halts summed."""
        if wakes[0][0] != "mixed":
            return ""
        trace = [w[2] for w in wakes if w[1] == "trace" and w[2]]
        stats = [w[2] for w in wakes if w[1] == "statistics" and w[2]]
        if trace:
            return (f": poll {median([c.get('poll', 0) for c in trace]):.2f}, block "
                    f"{median([c.get('block', 0) for c in trace]):.2f} an iteration")
        if stats:
            total = {k: sum(c.get(k, 0) for c in stats) for k in ("polled", "blocked", "other")}
            return f": {total['polled']} polled, {total['blocked']} blocked, {total['other']} other"
        return ""


def wake_changed(a, b):
    """Whether two sides' wake classes both claim something and differ."""
    claims = ("poll", "block", "mixed")
    return bool(a and b and a.cls in claims and b.cls in claims and a.cls != b.cls)


def judged_labels(side):
    """{label: per iteration} of a side's judged exits (exit_labels.JUDGED,
    doorbell misses apart as judged_total() counts them)."""
    out = {}
    for k, v in side.items():
        try:
            out[str(k)] = float(v)
        except (TypeError, ValueError):
            continue
    return {k: v for k, v in out.items() if exit_labels.judged_total({k: v})}


def label_changes(before, after, only=None):
    """What moved between two lists of per-boot label dicts (Side.exit_labels),
    each side apart (only: that side, "sender" or "targets"): ["sender msr
    (ID read) 0.00 -> 1.00", ...], the largest move first; only moves beyond
    exit_labels.EXITS_TOLERANCE."""
    out = []
    for i, side in enumerate(("sender", "targets")):
        if only not in (None, side):
            continue
        labels = {k for boot in before + after for k in boot[i]}
        for k in labels:
            a = median([boot[i].get(k, 0.0) for boot in before]) if before else 0.0
            b = median([boot[i].get(k, 0.0) for boot in after]) if after else 0.0
            if abs(b - a) > exit_labels.EXITS_TOLERANCE:
                out.append((abs(b - a), f"{side} {k} {a:.2f} -> {b:.2f}"))
    return [text for _, text in sorted(out, key=lambda x: (-x[0], x[1]))]


# gate and history judge a rise in an exit reason, per target an iteration
# (the targets' exits are their sum: a broadcast's are scaled by its
# targets): a rise of half an exit or more fails outright (a change of the
# send path: one in every other iteration); a smaller one fails only where
# a count test shows the rate rose by more than EXITS_MARGIN, Holm over the
# row's exit reasons at EXITS_ALPHA. What the host's load adds (3 PV-EOI
# fallbacks in 50 iterations, 0.06) stays under the margin however many
# boots and iterations: more data cannot make a load blip fail.
EXITS_ALPHA = 0.01
EXITS_MARGIN = 0.1


def exit_rises(before, after, ntargets=1):
    """Every exit reason of a row, sender's and targets' apart, between two
    lists of per-boot label dicts (Side.exit_labels): [{"side", "label",
    "before", "after", "p", "step", "moved"}], before and after in exits
    per iteration (the targets': their sum), p the one-sided p that the
    rate rose by more than EXITS_MARGIN a target (a normal test of two
    Poisson rates, counts summed over boots, each count at least 1 in its
    variance), step whether it rose by exit_labels.EXITS_STEP a target or
    more, moved whether it rose beyond exit_labels.EXITS_TOLERANCE a target."""
    out = []
    for i, side in enumerate(("sender", "targets")):
        per = max(1, ntargets) if side == "targets" else 1
        for k in sorted({k for boot in before + after for k in boot[i]}):
            ca = sum(b[i].get(k, 0.0) * (b[2] or 0) for b in before)
            na = sum(b[2] or 0 for b in before)
            cb = sum(b[i].get(k, 0.0) * (b[2] or 0) for b in after)
            nb = sum(b[2] or 0 for b in after)
            if na and nb:
                ra, rb = ca / na, cb / nb
                sd = math.sqrt(max(ca, 1.0) / na ** 2 + max(cb, 1.0) / nb ** 2)
                p = 0.5 * math.erfc((rb - ra - EXITS_MARGIN * per) / sd / math.sqrt(2))
            else:
                # No iteration count (a record older than it): the step alone.
                ra = median([b[i].get(k, 0.0) for b in before]) if before else 0.0
                rb = median([b[i].get(k, 0.0) for b in after]) if after else 0.0
                p = 1.0
            out.append({"side": side, "label": k, "before": ra, "after": rb, "p": min(1.0, p),
                        "step": rb - ra >= exit_labels.EXITS_STEP * per,
                        "moved": rb - ra > exit_labels.EXITS_TOLERANCE * per})
    return out


def failed_rises(tests):
    """The rises of one row's exit_rises() that fail: a step, or a count
    test Holm rejects over the row's exit reasons."""
    rejected = holm([t["p"] for t in tests], EXITS_ALPHA)
    return [t for t, bad in zip(tests, rejected) if t["moved"] and (t["step"] or bad)]


def ntargets_of(key):
    """A row key's target count (ROW_FIELDS' ntargets), 1 where not a number."""
    return key[5] if isinstance(key[5], int) else 1


def rise_text(rise):
    return f"{rise['side']} {rise['label']} {rise['before']:.2f} -> {rise['after']:.2f}"


def exits_median(per_boot):
    """(sender, targets, blocked share or None): the median over boots, or
    None without exit data."""
    pairs = [p for p in per_boot if None not in p[:2]]
    if not pairs:
        return None
    blocked = [p[2] for p in pairs if len(p) > 2 and p[2] is not None]
    return (round(median([p[0] for p in pairs]), 4), round(median([p[1] for p in pairs]), 4),
            round(median(blocked), 4) if blocked else None)


class Row:
    def __init__(self, key):
        self.key, self.name = key, row_name(key)
        self.a = self.b = None
        self.a_vals, self.b_vals = [], []
        self.change = self.p = self.ci = None
        self.method, self.verdict, self.significant = "-", "-", False
        self.note = ""
        self.after_x2apic = []  # the sides ("A", "B") whose figure is xAPIC emulation
        self.a_exits = self.b_exits = None  # (sender, targets) judged exits per iteration
        self.a_wake = self.b_wake = None  # WakeSummary of a halted target's wakes
        self.wake_changed = False
        self.emulated = []  # the EMULATION_IDS either side's figures of this row carry
        self.p_min = self.samples_p = None


def compare_row(key, sa, sb, alpha, comparable):
    """One row's verdict, from the boots only (each boot's p50 is one value).

    Significant means all of: the exact rank test over boots gives p < alpha,
    the medians differ, and the bootstrap interval of the change excludes
    zero. When these boots cannot reach alpha at all (too few of them, or too
    many tied values: p_min > alpha) the verdict says so instead of falling
    back to a test of the pooled samples, which sees the spread within boots
    and not between them; that pooled p is kept for information
    (samples_p), never for a verdict."""
    row = Row(key)
    row.a_vals, row.b_vals = sa.values.get(key, []), sb.values.get(key, [])
    row.a_exits = exits_median(sa.exits.get(key, []))
    row.b_exits = exits_median(sb.exits.get(key, []))
    for side, attr in ((sa, "a_wake"), (sb, "b_wake")):
        if key in side.wakes or key in side.wake_events:
            setattr(row, attr, WakeSummary(side.wakes.get(key, []), side.wake_events.get(key)))
    row.wake_changed = wake_changed(row.a_wake, row.b_wake)
    if key not in sa.statuses or key not in sb.statuses:
        row.verdict = "only in A" if key in sa.statuses else "only in B"
        return row
    if not row.a_vals or not row.b_vals:
        side = sa if not row.a_vals else sb
        row.verdict = "no data"
        row.note = f"{'A' if side is sa else 'B'}: " + ",".join(sorted(side.statuses[key]))
        return row
    row.a, row.b = median(row.a_vals), median(row.b_vals)
    row.change = 100.0 * (row.b / row.a - 1) if row.a else 0.0
    row.p, row.p_min, _ = mann_whitney(row.a_vals, row.b_vals)
    row.method = "boots"
    row.samples_p = mann_whitney_histograms(sa.histos.get(key, []), sb.histos.get(key, []))
    row.ci = bootstrap_change_ci(row.a_vals, row.b_vals, zlib.crc32(row.name.encode()))
    excludes_zero = row.ci is not None and (row.ci[0] > 0 or row.ci[1] < 0)
    if not comparable:
        row.verdict = "not comparable"
    elif row.p_min > alpha:
        tied = len(set(row.a_vals + row.b_vals)) < len(row.a_vals) + len(row.b_vals)
        row.verdict = "too few distinct values" if tied and len(row.a_vals) >= MIN_BOOTS \
            and len(row.b_vals) >= MIN_BOOTS else "too few boots"
        row.note = (f"the smallest p {len(row.a_vals)}/{len(row.b_vals)} boots can give is "
                    f"{row.p_min:.3f} > {alpha}")
    elif row.p < alpha and row.change != 0 and excludes_zero:
        row.significant = True
        row.verdict = "slower" if row.change > 0 else "faster"
    elif row.p < alpha and row.change == 0:
        row.verdict = "same median, distributions differ"
    elif row.p < alpha:
        row.verdict = "inconclusive"
        row.note = "p < alpha, but the interval of the change includes 0"
    else:
        row.verdict = "no significant change" if row.change else "no change"
    return row


def reported_differences(sa, sb):
    """Facts that differ between A and B but do not make them incomparable."""
    def seen(side):
        out = {}
        for boot in side.boots:
            for k, v in boot.reported_facts().items():
                if v is not None:
                    out.setdefault(k, set()).add(str(v))
        return out
    fa, fb = seen(sa), seen(sb)
    return [f"{k}: {sa.name} {', '.join(sorted(fa.get(k, {'-'})))}; "
            f"{sb.name} {', '.join(sorted(fb.get(k, {'-'})))}"
            for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]


def timing_comparability(sa, sb):
    """Reasons why A's and B's timings (not their exit counts) cannot be
    compared: a SavedBoot.timing_facts() that differs, or a side that mixes them."""
    reasons = []
    for side in (sa, sb):
        for k, vals in _fact_values(side, "timing_facts").items():
            if len(vals) > 1:
                reasons.append(f"{side.name} mixes {k}s: {', '.join(sorted(vals))}")
    fa, fb = _fact_values(sa, "timing_facts"), _fact_values(sb, "timing_facts")
    for k in fa:
        if k in fb and len(fa[k]) == 1 and len(fb[k]) == 1 and fa[k] != fb[k]:
            reasons.append(f"{k} differs: {sa.name} {next(iter(fa[k]))}, "
                           f"{sb.name} {next(iter(fb[k]))} (each adds work to every timed "
                           "region; exit counts still compare)")
    return reasons


def _fact_values(side, method):
    """{fact: the set of values its boots had} of one side (None: not known)."""
    seen = {}
    for boot in side.boots:
        facts = getattr(boot, method)() if hasattr(boot, method) else {}
        for k, v in facts.items():
            if v is not None:
                seen.setdefault(k, set()).add(str(v))
    return seen


def comparability(sa, sb):
    """Reasons why A and B cannot be compared ([] when they can). A side that
    mixes configurations (a matrix root given as one side) is refused: its
    boots would pool presets or -smp values into one median."""
    reasons = []
    facts = {}
    for side in (sa, sb):
        configs = sorted({b.config() for b in side.boots})
        if len(configs) > 1:
            reasons.append(f"{side.name} pools {len(configs)} configurations "
                           f"({', '.join(configs[:4])}{', ...' if len(configs) > 4 else ''}): "
                           "give one configuration folder a side")
    for side in (sa, sb):
        seen = {}
        for boot in side.boots:
            for k, v in boot.facts().items():
                if v is not None:
                    seen.setdefault(k, set()).add(v)
        for k, vals in seen.items():
            if len(vals) > 1:
                listed = ", ".join(map(str, sorted(vals, key=str)))
                reasons.append(f"{side.name} mixes {k}s: {listed}")
        facts[side.name] = seen
    fa, fb = facts[sa.name], facts[sb.name]
    for k in fa:
        if k in fb and len(fa[k]) == 1 and len(fb[k]) == 1 and fa[k] != fb[k]:
            reasons.append(f"{k} differs: {sa.name} {next(iter(fa[k]))}, "
                           f"{sb.name} {next(iter(fb[k]))}")
    return reasons


def ignored_words(sa, sb):
    """Lines naming the fault-injection words that comparability left out,
    with the side(s) that had them: "debug=extra-exit in B (fault injection)"."""
    where = {}
    for tag, side in (("A", sa), ("B", sb)):
        for boot in side.boots:
            for w in fault_words((getattr(boot, "env", None) or {}).get("cmdline")):
                where.setdefault(w, [])
                if tag not in where[w]:
                    where[w].append(tag)
    return [f"{w} in {' and '.join(names)} (fault injection)" for w, names in sorted(where.items())]


def skipped_as_no_data(rows, sa, sb):
    """A benchmark that SKIPs on a backend prints one record with metric '-',
    so against a side where it ran, its rows read 'only in B' and the SKIP
    row 'only in A'. Say instead, on each real row, that A has no data
    because it skipped, and drop the '-' row that the other side covers."""
    def skipped(side):
        out = {}
        for key, statuses in side.statuses.items():
            if key[1] == "-":
                out.setdefault((key[0], key[3]), set()).update(statuses)
        return out
    skip_a, skip_b = skipped(sa), skipped(sb)
    real = {(r.key[0], r.key[3]) for r in rows if r.key[1] != "-"}
    out = []
    for r in rows:
        bb = (r.key[0], r.key[3])
        if r.key[1] == "-" and bb in real:
            continue
        for verdict, side, skips in (("only in B", "A", skip_a), ("only in A", "B", skip_b)):
            if r.verdict == verdict and bb in skips:
                r.verdict, r.note = "no data", f"{side}: " + ",".join(sorted(skips[bb]))
        out.append(r)
    return out


# The per-figure warnings (the guest's env "trust" per_figure ids, a result's
# "untrusted", the host's "warnings") that say a figure was timed under
# emulation: a faster or slower verdict over such figures names them,
# "faster (tcg)", so that a table pasted elsewhere keeps the caveat.
EMULATION_IDS = ("tcg", "kvm-in-tcg", "xen-in-tcg", "rdtsc-exits")


def emulation_ids(warned):
    """The EMULATION_IDS among a boot's warnings (SavedBoot.warnings(): the
    host's are keyed "host:ID")."""
    return {w.split(":", 1)[-1] for w in warned or {}} & set(EMULATION_IDS)


def apicv_of(side):
    """A side's APICv/AVIC state (SavedBoot.apicv_state), its boots' states joined
    with '|' where they differ; None when no boot's is known."""
    states = sorted({st for st in (b.apicv_state() if hasattr(b, "apicv_state") else None
                                   for b in side.boots) if st})
    return "|".join(states) or None


def erratum_1235(side):
    """Whether a side's boots ran under KVM with AVIC on a family with
    erratum #1235 before IPI virtualization was turned off for it (host
    class avic-1235), from each boot's saved facts."""
    for boot in side.boots:
        host = getattr(boot, "host", None)
        if not isinstance(host, dict) or host.get("accel") != "kvm":
            continue
        params = host.get("kvm_params") if isinstance(host.get("kvm_params"), dict) else {}
        cls, _ = host_class.classify("kvm", host.get("cpu_flags"), params, None,
                                     host.get("kernel"),
                                     (host.get("cpu_vendor"), host.get("cpu_family")))
        if cls == "avic-1235":
            return True
    return False


def model_of(side, model=None):
    """A side's boots judged against the host-class model as it is now
    (host_model.judge_saved): {"classes", "boots", "matched", "unmodelled",
    "diverging": [{"row", "class", "what", "boots"}]}, a diverging row once
    with the number of boots it diverged in; None when no boot has exits."""
    out = None
    for boot in side.boots:
        if not isinstance(getattr(boot, "run", None), dict) or \
                not isinstance(boot.run.get("exits"), dict):
            continue
        model = model or host_model.load()
        judged = host_model.judge_saved(boot, model)
        if out is None:
            out = {"classes": [], "boots": 0, "matched": 0, "unmodelled": 0, "diverging": [],
                   "model": host_model.model_hash()}
        cls, _, _, res = judged
        out["boots"] += 1
        out["classes"] += [cls] if cls not in out["classes"] else []
        out["matched"] += res["matched"]
        out["unmodelled"] += res["unmodelled"]
        for d in res["diverging"]:
            same = next((x for x in out["diverging"]
                         if (x["row"], x["class"], x["what"]) == (d["row"], d["class"], d["what"])),
                        None)
            if same:
                same["boots"] += 1
            else:
                out["diverging"].append(dict(d, boots=1))
    return out


# compare's row filters (--bench single,self): the ROW_FIELDS index each reads.
ROW_FILTERS = {"bench": 0, "metric": 1, "variant": 2, "backend": 3, "targets": 5}


class Comparison:
    def __init__(self, a_name, a_boots, b_name, b_boots, alpha=0.05, unit="cycles", pair=None):
        """pair: (backend of A, backend of B), compare --pair: those two backends'
        rows side by side, within one result set or across two."""
        label = f"{pair[0]}={pair[1]}" if pair else None
        self.sa = Side(a_name, a_boots, unit, pair[0] if pair else None, label)
        self.sb = Side(b_name, b_boots, unit, pair[1] if pair else None, label)
        self.pair = pair
        self.alpha, self.unit = alpha, unit
        self.reasons = comparability(self.sa, self.sb)
        # Only the timing rows: exits per iteration still compare.
        self.timing_reasons = timing_comparability(self.sa, self.sb)
        self.ignored = ignored_words(self.sa, self.sb)
        self.reported = reported_differences(self.sa, self.sb)
        keys = sorted(self.sa.keys() | self.sb.keys(), key=row_order)
        self.rows = [compare_row(k, self.sa, self.sb, alpha,
                                 not self.reasons and not self.timing_reasons) for k in keys]
        self.rows = skipped_as_no_data(self.rows, self.sa, self.sb)
        self.compared = [r for r in self.rows if r.a is not None]
        for r in self.rows:
            r.after_x2apic = [t for t, side in (("A", self.sa), ("B", self.sb))
                              if r.key in side.emulated]
        self.after_x2apic = [r for r in self.rows if r.after_x2apic]
        self.apicv = {"a": apicv_of(self.sa), "b": apicv_of(self.sb)}
        self.erratum = [t for t, side in (("A", self.sa), ("B", self.sb)) if erratum_1235(side)]
        self.model = {"a": model_of(self.sa), "b": model_of(self.sb)}
        for r in self.rows:
            ids = self.sa.untrusted.get(r.key, set()) | self.sb.untrusted.get(r.key, set())
            r.emulated = [i for i in EMULATION_IDS if i in ids]

    def after_x2apic_lines(self):
        """What compare says once about xAPIC rows on AVIC without x2AVIC: the
        marked rows, and the records for which it cannot tell."""
        out = []
        if self.after_x2apic:
            sides = sorted({t for r in self.after_x2apic for t in r.after_x2apic})
            out.append(f"{', '.join(sides)}: after-x2apic: {len(self.after_x2apic)} rows of "
                       "xAPIC-mode backends (their ICR writes on the MMIO page) were measured "
                       "after a vCPU had been in x2APIC mode, on a host with AVIC enabled "
                       "(kvm_amd.avic) and no x2AVIC (CPU flag x2avic absent): since Linux "
                       "6.3 KVM then deletes the APIC-access page for good, so every xAPIC "
                       "access is trapped and emulated although AVIC reads active. Rows "
                       f"marked '({AFTER_X2APIC_MARK})' measure that emulation, not AVIC; "
                       "boot the xAPIC backends without x2APIC before them (the xapic "
                       "preset, or backends= of xAPIC-mode ones only)")
        for why in (X2apicBoot.NO_KEY, X2apicBoot.NO_FLAGS):
            counts = [(t, side.unknown[why]) for t, side in (("A", self.sa), ("B", self.sb))
                      if side.unknown.get(why)]
            if counts:
                out.append(f"{', '.join(t for t, _ in counts)}: after-x2apic unknown: AVIC was "
                           f"enabled on a CPU that may lack x2AVIC, and "
                           f"{' + '.join(str(n) for _, n in counts)} xAPIC-mode figures come "
                           f"from {why}: whether a vCPU had been in x2APIC mode first (which "
                           "would make them xAPIC emulation) cannot be told")
        return out

    def keep_rows(self, filters):
        """compare's row filters: filters maps a ROW_FILTERS name to the exact
        values to keep (any of them; every filter given must match). A value
        no row has is a usage error naming the values there are, as is a set
        of filters that together leave no row."""
        given = {k: v for k, v in filters.items() if v}
        if not given:
            return
        for name, values in given.items():
            i = ROW_FILTERS[name]
            there = sorted({str(r.key[i]) for r in self.rows}, key=lambda v: (len(v), v)
                           if name == "targets" else (0, v))
            unknown = [v for v in values if v not in there]
            if unknown:
                raise ToolError(EX_USAGE, f"--{name} {','.join(unknown)}: no row has {'it' if len(unknown) == 1 else 'them'}; the rows' {name} values: {', '.join(there)}")
        self.rows = [r for r in self.rows
                     if all(str(r.key[ROW_FILTERS[n]]) in v for n, v in given.items())]
        if not self.rows:
            raise ToolError(EX_USAGE, "no row matches " + " and ".join(
                f"--{n} {','.join(v)}" for n, v in given.items()))
        self.compared = [r for r in self.rows if r.a is not None]
        self.after_x2apic = [r for r in self.rows if r.after_x2apic]

    def overlap_error(self):
        both = self.sa.keys() & self.sb.keys()
        if both:
            return None
        def names(side):
            benches = sorted({k[0] for k in side.keys()})
            return ", ".join(benches) if benches else "no result records"
        return ToolError(EX_NO_OVERLAP, f"nothing to compare: {self.sa.name} and {self.sb.name} share no benchmark row ({self.sa.name}: {names(self.sa)}; {self.sb.name}: {names(self.sb)})")
