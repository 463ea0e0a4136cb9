# SPDX-License-Identifier: GPL-2.0-only
"""The words the progress lines (console.py, progress.py) and the summary
(summary.py, outcome.py) share: the screen's width, elapsed seconds, a
reason said in full once and then by its head, a count with its noun, and
the one-way figures the guest withholds for the TSCs (counted apart from
the SKIPs)."""

WIDTH = 80
# A one-way figure the guest withholds because the TSCs cannot time it
# (bench/point.c, bench/broadcast.c): counted apart from the SKIPs.
WITHHELD = "one-way not reported: "


def secs(s):
    """Elapsed seconds as a person reads them: 0.03 s, 3.1 s, 290 s."""
    if s < 1:
        return f"{s:.2f} s"
    return f"{s:.1f} s" if s < 100 else f"{s:.0f} s"


def reason_head(reason):
    """A reason's short form, what it says before its first ": " (the
    details after it: why, and what to do), or the whole of it."""
    first = (reason or "").split(": ", 1)[0]
    return first if len(first) < len(reason or "") else reason or ""


def told(reason, said, mark=True):
    """The reason in full the first time, by its head ("no Hyper-V interface
    (see above)") once this very reason was said: a reason of the same head
    or shape but another detail is new, and said in full; mark: it is said
    now."""
    if reason in said and reason_head(reason) != reason:
        return f"{reason_head(reason)} (see above)"
    if mark:
        said.add(reason)
    return reason


def plural(n, word):
    """"1 check", "2 checks"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def withheld(rec):
    """Whether a record is a one-way figure withheld for the TSCs (a SKIP
    whose reason begins with WITHHELD)."""
    return rec.get("status") == "SKIP" and str(rec.get("reason", "")).startswith(WITHHELD)


def withheld_cause(reason):
    """What stopped a one-way figure, in two words."""
    if "skew bound" in reason:
        return "TSC skew"
    return "TSCs disagree" if "disagree" in reason else "TSC"
