# SPDX-License-Identifier: GPL-2.0-only
"""The one-screen summary run.sh prints under a boot's progress lines
(docs/host-tools.md, "What run.sh prints"), each line within 80 columns:
the status and the environment, the warnings, headline p50s per backend in
cycles and ns (headline.py), skipped backends, withheld figures,
correctness counts and failures, then what the run proved, why a SKIP
(exit 0) is the normal outcome where it is, or why a SKIP that ran nothing
asked for exits 35 (ran_nothing), and the commands to try next
(outcome.py). The trust warnings (TCG, no invariant TSC) are said here
only, beside the figures they concern.

Pure; tests/host/test_console.py holds its cases."""
import textwrap

from ipibench.boot import headline as H
from ipibench.boot.outcome import next_steps, nothing_line, proved, ran_nothing, why_skip
from ipibench.boot.wording import plural, told, withheld, withheld_cause, WIDTH, WITHHELD


def _wrap(text, indent="  "):
    return textwrap.wrap(text, WIDTH - 1, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=True) or [""]


def _listed(where, key="warnings"):
    """where[key], or where["trust"][key], as a list ([] when neither is one)."""
    if not isinstance(where, dict):
        return []
    for w in (where.get(key), (where.get("trust") or {}).get(key)
              if isinstance(where.get("trust"), dict) else None):
        if isinstance(w, list):
            return w
    return []


def warning_items(env, host=None):
    """The (id, text) of each warning of the env record and of the host facts,
    once each (by id: the guest's text of a condition both saw). Either may
    have none (the field is new): a list under "warnings" (or "trust":
    {"warnings"}), each entry {"id", "text"} or a plain string (id None)."""
    out, ids, texts = [], set(), set()
    for w in _listed(env) + _listed(host):
        wid = w.get("id") if isinstance(w, dict) else None
        text = (w.get("text") or wid) if isinstance(w, dict) else w
        if not isinstance(text, str) or not text or text in texts or (wid and wid in ids):
            continue
        out.append((wid, text))
        ids.add(wid)
        texts.add(text)
    return out


def says_tcg(records, host=None):
    """Whether the summary of these records says that the figures are TCG's:
    the env record or the host facts warn of it (id tcg)."""
    env = next((r for r in records if r.get("record") == "env"), {})
    return any(wid == "tcg" for wid, _ in warning_items(env, host))


def warnings_of(env, host=None):
    """The texts of warning_items()."""
    return [text for _, text in warning_items(env, host)]


def _backends(results):
    """Backends in console order: those with a figure, and those that only SKIPped (with
    their reasons, in order)."""
    order, skipped = [], {}
    for r in results:
        b = r.get("backend")
        if not isinstance(b, str) or b == "none" or b in order:
            continue
        mine = [x for x in results if x.get("backend") == b]
        if all(x.get("status") == "SKIP" for x in mine):
            if b not in skipped:
                skipped[b] = mine[0].get("reason", "")
            continue
        order.append(b)
    return order, skipped


def _failures(results, norov, tap_failures):
    out = []
    for r in results:
        if r.get("status") in ("FAILURE", "ERROR"):
            out.append(f"{r['status']}: {r.get('bench')} {r.get('metric')} on "
                       f"{r.get('backend')}: {r.get('reason', '')}")
    for r in norov:
        if r.get("status") not in ("SUCCESS", "SKIP", None):
            out.append(f"{r['status']}: ipi_benchmark {r.get('test')} on {r.get('backend')}")
    return out + [f"not ok: {t}" for t in tap_failures]


def _field(env, key):
    """env[key] when it is a dict, else {}."""
    return env.get(key) if isinstance(env.get(key), dict) else {}


def summary(records, host=None, tap_failures=(), most_failures=5, said=None, suite=None,
            saved=False):
    """The summary's lines (each within 80 columns): status and environment,
    warnings, the headline table, correctness, failures and skipped backends,
    then what the run proved, why a SKIP is the normal outcome (when it is)
    and what to run next. records: the boot's records in console order; host:
    results.json's host facts, if saved; tap_failures: the text of its `not
    ok` lines; said: the SKIP reasons the console already said in full
    (Console.seen), which are then named by their heads; suite: the
    correctness suite by label (suite_labels()); saved: the run's results
    directory is on run.sh's last line."""
    said = said if said is not None else set()
    kinds = {}
    for r in records:
        kinds.setdefault(r.get("record"), []).append(r)
    env = (kinds.get("env") or [{}])[0]
    end = (kinds.get("end") or [None])[-1]
    results, checks = kinds.get("result", []), kinds.get("check", [])
    status = end.get("status") if end else "no end record: the plan did not finish"
    # TCG's warning is the last lines' to say ("figures are emulated ..."): once.
    tcg = says_tcg(records, host)
    shown, skipped = _backends(results)
    held = [r for r in results if withheld(r)]
    skips = [r for r in results if r.get("status") == "SKIP" and not withheld(r) and
             r.get("backend") not in skipped]
    out = _status_lines(env, host, status)
    out += [x for wid, w in warning_items(env, host) if wid != "tcg"
            for x in _wrap(f"warning: {w}")]
    if shown:
        out += H.table(results, shown, bool(_field(env, "tsc").get("khz")))
    elif not results:
        out.append("no benchmark figure")
    out += _skipped_lines(skipped, said)
    out += _withheld_lines(held, said)
    out += _wrap(f"correctness: {_suite_text(checks)}; benchmark records: {_figures(results)}")
    out += _failure_lines(_failures(results, kinds.get("norov", []), tap_failures),
                          most_failures)
    suite = suite if suite is not None else {}
    out += _wrap(proved(suite, checks, tcg))
    out += _skip_lines(records, status, suite, skipped, skips, held, tcg)
    if end is not None and status in ("SUCCESS", "SKIP"):
        out += _wrap(next_steps(skipped, tcg, saved, suite))
    return [line.rstrip() for line in out]


def _status_lines(env, host, status):
    """The first line: the guest's status, then its CPUs, the accelerator
    (else the hypervisor the guest saw), the TSC and the harness's cost."""
    tsc, cpus, hv = _field(env, "tsc"), _field(env, "cpus"), _field(env, "hypervisor")
    accel = (host or {}).get("accel") if isinstance(host, dict) else None
    facts = [f"{cpus['count']} CPU{'' if cpus['count'] == 1 else 's'}" if "count" in cpus else None,
             f"accel {accel}" if isinstance(accel, str) and accel else
             f"hypervisor {hv['vendor']}" if hv.get("vendor") else None,
             f"TSC {tsc['khz']} kHz ({tsc.get('source', '?')})" if tsc.get("khz") else None,
             f"harness {env['harness_cycles']} cycles" if "harness_cycles" in env else None]
    said_status = f"finished, status {status} (see the end)" if status in ("SUCCESS", "SKIP") \
        else status
    return _wrap(f"summary: {said_status}; " + ", ".join(f for f in facts if f))


def _skipped_lines(skipped, said):
    """The backends that only SKIPped, one line per reason (by the whole
    reason: another detail is another line); said updated."""
    by_reason = {}
    for b, why in skipped.items():
        by_reason.setdefault(why, []).append(b)
    out = []
    for why, bs in by_reason.items():
        out += _wrap(f"skipped: {', '.join(bs)}: {told(why, said)}")
    return out


def _withheld_lines(held, said):
    """The withheld one-way figures counted, with their causes, and the
    first one's reason unless the progress lines said each cause."""
    if not held:
        return []
    causes = list(dict.fromkeys(withheld_cause(r.get("reason", "")) for r in held))
    told_before = all(f"withheld: {c}" in said for c in causes)
    return _wrap(f"withheld: {plural(len(held), 'one-way figure')} ({', '.join(causes)}" +
                 (", see above)" if told_before else
                  f": {held[0].get('reason', '')[len(WITHHELD):]})"))


def _suite_text(checks):
    """The check records' counts, per backend."""
    return "; ".join(f"check {c.get('backend')}: {c.get('passed')} passed, "
                     f"{c.get('failed')} failed, {c.get('skipped')} skipped"
                     for c in checks) or "no check suite"


def _figures(results):
    """The result records counted by status, the withheld figures left out."""
    counts = {}
    for r in results:
        if not withheld(r):
            counts[r.get("status")] = counts.get(r.get("status"), 0) + 1
    return ", ".join(f"{counts[s]} {s}" for s in ("SUCCESS", "SKIP", "FAILURE", "ERROR")
                     if counts.get(s)) or "none"


def _failure_lines(bad, most):
    """The first most failures, and how many more console.log has."""
    out = []
    for f in bad[:most]:
        out += _wrap(f)
    if len(bad) > most:
        out.append(f"... {len(bad) - most} more in console.log")
    return out


def _skip_lines(records, status, suite, skipped, skips, held, tcg):
    """For a SKIP: why it ran nothing asked for (exit 35), else why SKIP
    is the normal outcome here (exit 0)."""
    if status != "SKIP":
        return []
    nothing = ran_nothing(records, suite)
    if nothing is not None:
        return _wrap(nothing_line(nothing, tcg))
    return _wrap(why_skip(skipped, skips, held, tcg, suite))
