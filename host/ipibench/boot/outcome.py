# SPDX-License-Identifier: GPL-2.0-only
"""What a boot's end means, in words: what the correctness suite proved,
why a SKIP with exit 0 is the normal outcome here, whether a SKIP ran
nothing that was asked for (exit 35, ran_nothing()), the commands to try
next, and run.sh's last line on the boot (closing()). The summary
(summary.py) ends with the first four; run.py decides the exit code with
ran_nothing() and says closing()."""
import re

from ipibench.boot.tap import flush_label, KIND_WORDS, tally
from ipibench.boot.wording import plural
from ipibench.exit_codes import EX_NOTHING_RAN

# The skip reasons that are TCG's (the hypervisor interfaces it has none of).
TCG_REASON = re.compile(r"\bTCG\b")
# What every benchmark plan measures first, asked or not: the harness's own
# cost and the reference exits (backend none). They count as something that
# ran only when the command line names them (bench=dry-run).
HARNESS_BENCHES = ("dry-run", "exit-ref")


def _names(names):
    return ", ".join(names)


def proved(suite, checks, tcg):
    """What the correctness suite showed, in words, no more than it checked:
    the delivery checks (each IPI reached exactly the CPUs it was sent to,
    once) counted apart from the others, per backend, the flush labels apart
    from the backends, and the backends that skipped some; tcg: the figures
    are emulated."""
    rec_passed = sum(c.get("passed", 0) for c in checks if isinstance(c.get("passed"), int))
    rec_failed = sum(c.get("failed", 0) for c in checks if isinstance(c.get("failed"), int))
    if any(tally(k)[1] for k in suite.values()) or rec_failed:
        text = _failed(suite, rec_passed, rec_failed)
    elif suite:
        text = _passed(suite)
    elif rec_passed:
        # No TAP lines to tell the kinds apart (a log without them).
        text = f"passed every correctness check it ran ({plural(rec_passed, 'check')}: " \
            "delivery, TPR/IF=0 masking, wake from HLT, mode switch)"
    elif checks:
        text = "no backend could run its checks here"
    else:
        text = "no delivery check ran (plan=check and plan=default run them)"
    if tcg:
        text += "; figures are emulated (QEMU TCG emulates every instruction): " \
            "behaviour only, not speed"
    return f"proved: {text}"


def _failed(suite, rec_passed, rec_failed):
    """proved()'s words for a suite with a failed check: how many of how
    many, of which kinds, on which backends."""
    bad = [b for b, k in suite.items() if tally(k)[1]]
    failed = sum(tally(k)[1] for k in suite.values())
    total = sum(sum(tally(k)[:2]) for k in suite.values()) or rec_passed + rec_failed
    by_kind = {}
    for k in suite.values():
        for kind, n in k.items():
            by_kind[kind] = by_kind.get(kind, 0) + n[1]
    what = ", ".join(f"{n} {KIND_WORDS[kind]}" for kind, n in by_kind.items() if n)
    return f"{failed or rec_failed} of {total} checks FAILED" + \
        (f" ({what})" if what else "") + (f", on {_names(bad)}" if bad else "") + \
        " (the not ok lines above say how)"


def _passed(suite):
    """proved()'s words for a suite without a failure: the delivery checks,
    the other kinds, the flush labels, then the backends that skipped some."""
    backends = {b: k for b, k in suite.items() if not flush_label(k)}
    flushes = {b: k for b, k in suite.items() if flush_label(k)}
    delivered = {b: k["delivery"][0] for b, k in backends.items()
                 if k.get("delivery", [0])[0]}
    parts = [f"on {plural(len(delivered), 'backend')} every IPI of "
             f"{plural(sum(delivered.values()), 'delivery check')} reached exactly the "
             f"CPUs it was sent to, once each" if delivered else
             "no delivery check could run here"]
    others = {}
    for k in backends.values():
        for kind, n in k.items():
            if kind not in ("delivery", "backend") and n[0]:
                others[kind] = others.get(kind, 0) + n[0]
    if others:
        parts.append("also passed: " + ", ".join(f"{n} {KIND_WORDS[kind]}" for kind, n in
                                                 others.items()) + " checks")
    parts += _flushes(flushes)
    return "; ".join(parts + _skipped_some(backends))


def _flushes(flushes):
    """proved()'s words for the flush checks: those that showed the flush's
    TLB effect apart from those that could not (suite_labels()' unproven:
    no target still held the old translation before the flush, so a flush
    that did nothing would have passed them too)."""
    proven = {b: k["flush"][0] - k["flush"][4] for b, k in flushes.items()
              if k["flush"][0] - k["flush"][4]}
    unseen = {b: k["flush"][4] for b, k in flushes.items() if k["flush"][4]}
    out = []
    if proven:
        out.append(f"{plural(sum(proven.values()), 'flush check')} passed "
                   f"({_names(proven)}: each flush completed, and no target read "
                   "through a stale translation after it)")
    if unseen:
        out.append(f"{plural(sum(unseen.values()), 'flush check')} unproven "
                   f"({_names(unseen)}: each flush completed, but no target still held "
                   "the old translation before it, so its TLB effect went unseen)")
    return out


def _skipped_some(backends):
    """The backends checked in part, grouped when they passed and skipped
    alike, then how many SKIPped every check."""
    partial, parts = {}, []
    for b, k in backends.items():
        p, _, sk = tally(k)
        if p and sk:
            why = "; ".join(dict.fromkeys(r for n in k.values() for r in n[3]))
            partial.setdefault((p, sk, why), []).append(b)
    for (p, sk, why), bs in partial.items():
        parts.append(f"{_names(bs)}: {p} passed, {sk} skipped" +
                     (" each" if len(bs) > 1 else "") + (f" ({why})" if why else ""))
    none = [b for b, k in backends.items() if not tally(k)[0]]
    if none:
        parts.append(f"{plural(len(none), 'backend')} SKIPped every check (above)")
    return parts


def could_not_run(skipped, skips, held, suite):
    """What could not run, as (what, reason) pairs: "backend" for each
    backend whose every benchmark or every check SKIPped, "check" for each
    other SKIPped check, "figure" for each other SKIPped or withheld figure."""
    out = [("backend", why) for why in skipped.values()]
    for b, k in (suite or {}).items():
        if b in skipped:
            continue
        if not flush_label(k) and not sum(tally(k)[:2]):
            out.append(("backend", next((r for n in k.values() for r in n[3]), "")))
            continue
        out += [("check", r) for n in k.values() for r in n[3]]
    return out + [("figure", r.get("reason", "")) for r in list(skips) + list(held)]


def _counted(items):
    """"7 backends, 2 checks and 1 figure" of (what, reason) pairs."""
    n = {}
    for what, _ in items:
        n[what] = n.get(what, 0) + 1
    words = [plural(c, w) for w, c in n.items()]
    return " and ".join([", ".join(words[:-1])] + words[-1:]) if len(words) > 1 else words[0]


def why_skip(skipped, skips, held, tcg, suite=None):
    """Why a SKIP status with exit 0 is what this run should end in: what
    could not run is counted, by whether TCG is the reason (it has no
    Hyper-V or KVM PV interface) or this configuration (one CPU, TSC skew,
    what a backend does not do); its reasons are the lines above."""
    items = could_not_run(skipped, skips, held, suite)
    by_tcg = [x for x in items if tcg and TCG_REASON.search(x[1] or "")]
    rest = [x for x in items if x not in by_tcg]
    parts = ([f"{_counted(by_tcg)} under TCG"] if by_tcg else []) + \
        ([f"{_counted(rest)} in this configuration"] if rest else [])
    what = "; ".join(parts) or "some checks, in this configuration"
    return f"why SKIP, exit 0: nothing failed; what could not run is the normal outcome " \
        f"here (reasons above): {what}"


def ran_nothing(records, suite=None):
    """The skip reasons of a boot that measured and checked nothing that was
    asked for, in console order, each once; None when it did either: a
    `result` or `norov` record SUCCEEDED (dry-run and exit-ref only when the
    env record's command line names them in bench=), or a check passed (a TAP
    `ok` line without `# SKIP`, or the `check` record's `passed`). run.sh exits
    35 on such a SKIP (docs/exit-codes.md)."""
    env = next((r for r in records if r.get("record") == "env"), {})
    m = re.search(r"(?:^|\s)bench=(\S+)", str(env.get("cmdline") or ""))
    asked = set(m.group(1).split(",")) if m else set()
    for r in records:
        if r.get("record") in ("result", "norov") and r.get("status") == "SUCCESS" and \
                (r.get("bench") not in HARNESS_BENCHES or r.get("bench") in asked):
            return None
        if r.get("record") == "check" and isinstance(r.get("passed"), int) and r["passed"] > 0:
            return None
    if any(tally(k)[0] for k in (suite or {}).values()):
        return None
    why = [r for k in (suite or {}).values() for n in k.values() for r in n[3]]
    why += [r.get("reason", "") for r in records
            if r.get("record") in ("result", "norov") and r.get("status") == "SKIP"]
    return list(dict.fromkeys(w for w in why if w))


def nothing_line(reasons, tcg):
    """The summary's closing line for a SKIP that ran nothing asked for (exit 35)."""
    under = " (under TCG)" if tcg and reasons and all(TCG_REASON.search(r) for r in reasons) \
        else ""
    return f"why exit 35: nothing that was asked for ran{under}: every check and benchmark " \
        "SKIPped (reasons above), and a run that measures nothing never passes"


def next_steps(skipped, tcg, saved=False, suite=None):
    """The commands to try after this run; saved: its results directory is on
    run.sh's last line; suite: suite_labels(), whose skips count too."""
    why = list(skipped.values()) + [r for k in (suite or {}).values() for n in k.values()
                                    for r in n[3]]
    presets = [p for p, test in (("hv", "Hyper-V"), ("kvm-pv", "KVM PV"))
               if any(test in w for w in why)]
    out = []
    if tcg:
        pick = f"--preset {presets[0]}" if presets else "--preset x2apic"
        also = f" (or {', '.join(presets[1:])}; ./run.sh list)" if presets[1:] else \
            " (./run.sh list)"
        out.append(f"on a KVM host, ./run.sh --accel kvm {pick}{also}")
        if presets:
            out.append(f"here, KVM nested in TCG: ./run.sh --accel kvm-in-tcg {pick}")
    where = "this run's results directory (last line)" if saved else \
        "a run's results directory (--no-save kept none of this one)"
    out.append(f"then, DIR {where}: ./run.sh report DIR (plots), ./run.sh compare DIR OTHER")
    return "next: " + "; ".join(out)


def closing(what, code, rc, nothing=None, qemu=True):
    """run.sh's last words on a boot: a run that ended as it should (exit 0)
    in words, with the guest's status and the exit code after them; a SKIP
    that ran nothing asked for (exit 35) with its skip reasons (nothing:
    ran_nothing()'s, the first two in full); any other end as the status
    decoding says it (qemu.decode_status), with QEMU's exit status, or
    (qemu False: the Xen lane, where no QEMU exit carries the guest's status,
    its last line does) run.sh's exit code."""
    if code == 0 and what == "SKIP":
        return "done, nothing failed (guest status SKIP, exit 0)"
    if code == 0 and what == "SUCCESS":
        return "done, everything passed (guest status SUCCESS, exit 0)"
    if code == EX_NOTHING_RAN:
        why = list(nothing or [])
        text = "; ".join(why[:2]) or "no record says why"
        if len(why) > 2:
            text += f"; and {len(why) - 2} more (console.log)"
        return f"nothing that was asked for ran: {text} (guest status SKIP, exit {code})"
    return f"{what} (QEMU exit {rc})" if qemu else f"{what} (exit {code})"
