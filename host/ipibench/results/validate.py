# SPDX-License-Identifier: GPL-2.0-only
"""The checks of docs/results.md, one per record kind (CHECKERS), and those
across a log's records (the phases' sequence, x2APIC's order); the reader
that applies them is results/records.py. The fields each kind must have,
and the words some take, are fields.py's tables (docs/record-fields.md)."""
from ipibench.results.fields import HOST_READ_STATES, NOROV_TESTS, required, words

SCHEMA = 1
# A tuple, not a set: a record may carry a list or object here, which a set cannot hash
STATUSES = ("SUCCESS", "SKIP", "ERROR", "FAILURE")
STAT_KEYS = ("min", "p50", "mean", "p90", "p99", "max", "stddev")


def need(rec, key, kind, problems):
    if key not in rec:
        problems.append(f"missing '{key}'")
        return False
    if not isinstance(rec[key], kind) or (kind is int and isinstance(rec[key], bool)):
        problems.append(f"'{key}' is {type(rec[key]).__name__}, expected {kind.__name__}")
        return False
    return True


def check_stats(st, name, problems):
    if not isinstance(st, dict):
        problems.append(f"'{name}' is not an object")
        return
    for k in STAT_KEYS:
        if not isinstance(st.get(k), int) or isinstance(st.get(k), bool) or st[k] < 0:
            problems.append(f"'{name}.{k}' missing or not a non-negative integer")
            return
    if not st["min"] <= st["p50"] <= st["p90"] <= st["p99"] <= st["max"]:
        problems.append(f"{name}: percentiles out of order {[st[k] for k in STAT_KEYS[:6]]}")
    if not st["min"] <= st["mean"] <= st["max"]:
        problems.append(f"{name}: mean {st['mean']} outside [min, max]")


def check_histogram(h, samples, problems):
    if not isinstance(h, list):
        problems.append("'histogram' is not an array")
        return
    total, prev_high = 0, -1
    for b in h:
        if (not isinstance(b, list) or len(b) != 3
                or not all(isinstance(x, int) and x >= 0 for x in b)):
            problems.append(f"histogram bucket {b!r} is not [low, high, count]")
            return
        low, high, count = b
        if low <= prev_high or high < low or count == 0:
            problems.append(f"histogram bucket {b} overlaps, is inverted or empty")
        prev_high = high
        total += count
    if total != samples:
        problems.append(f"histogram counts sum to {total}, iterations is {samples}")


def after_x2apic(rec, problems):
    """A boolean where present; absent in logs of guests older than the field
    (unknown, which compare says), so old baselines stay readable."""
    if "after_x2apic" in rec and not isinstance(rec["after_x2apic"], bool):
        problems.append(f"after_x2apic {rec['after_x2apic']!r} is not a boolean")


def need_all(rec, kind, problems, json_type=None):
    """need() of every field a record of kind must have (of json_type only, when given)."""
    for key, py_type in required(kind, json_type):
        need(rec, key, py_type, problems)


def check_result(rec, problems):
    need_all(rec, "result", problems, "string")
    need_all(rec, "result", problems, "integer")
    after_x2apic(rec, problems)
    status = rec.get("status")
    if status not in STATUSES:
        problems.append(f"status {status!r} is not one of {sorted(STATUSES)}")
    if status != "SUCCESS":
        if not isinstance(rec.get("reason"), str) or not rec["reason"]:
            problems.append(f"{status} record without a reason")
        if "cycles" in rec:
            problems.append(f"{status} record carries statistics")
        return
    if need(rec, "samples", int, problems) and rec["samples"] <= 0:
        problems.append("SUCCESS with no samples")
    if rec.get("unit") != "cycles":
        problems.append(f"unit {rec.get('unit')!r}, expected 'cycles'")
    check_stats(rec.get("cycles"), "cycles", problems)
    if "ns" in rec:
        check_stats(rec["ns"], "ns", problems)
    need(rec, "dryrun_cycles", int, problems)
    if "mark" in rec and (not isinstance(rec["mark"], int) or rec["mark"] < 1):
        problems.append(f"mark {rec['mark']!r} is not a positive marker number")
    if "rehalt_timeouts" in rec and (not isinstance(rec["rehalt_timeouts"], int)
                                     or rec["rehalt_timeouts"] < 0):
        problems.append(f"rehalt_timeouts {rec['rehalt_timeouts']!r} is not a count")
    if "host_read" in rec:
        if not isinstance(rec["host_read"], int) or rec["host_read"] < 1:
            problems.append(f"host_read {rec['host_read']!r} is not a positive read number")
        if rec.get("host_read_state") not in words(HOST_READ_STATES):
            problems.append(f"host_read_state {rec.get('host_read_state')!r} is not "
                            f"{', '.join(words(HOST_READ_STATES)[:-1])} or "
                            f"{words(HOST_READ_STATES)[-1]}")
    invalid = rec.get("invalid", 0)
    if not isinstance(invalid, int) or invalid < 0:
        problems.append(f"invalid {invalid!r} is not a count")
        invalid = 0
    if "histogram" in rec and isinstance(rec.get("iterations"), int):
        check_histogram(rec["histogram"], rec["iterations"] - invalid, problems)
    if isinstance(rec.get("samples"), int) and isinstance(rec.get("iterations"), int) \
            and rec["samples"] > rec["iterations"]:
        problems.append("more samples than iterations")


def check_env(rec, problems):
    need_all(rec, "env", problems)
    cpus = rec.get("cpus", {})
    if isinstance(cpus, dict):
        ids = cpus.get("apic_ids")
        if not isinstance(ids, list) or len(ids) != cpus.get("count"):
            problems.append("cpus.apic_ids does not list cpus.count APIC IDs")
        elif not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            problems.append("cpus.apic_ids holds something other than integers")
        elif len(set(ids)) != len(ids):
            problems.append("duplicate APIC IDs")
    tsc = rec.get("tsc", {})
    if isinstance(tsc, dict):
        for key in ("khz", "skew_bound_cycles", "pit_khz"):
            if not isinstance(tsc.get(key), int):
                problems.append(f"tsc.{key} missing or not an integer")
        if not isinstance(tsc.get("source"), str):
            problems.append("tsc.source missing")


def check_norov(rec, problems):
    if rec.get("test") not in words(NOROV_TESTS):
        problems.append(f"norov test {rec.get('test')!r} is not one of Norov's five")
    for key in ("iterations", "delivery_ns", "total_ns"):
        need(rec, key, int, problems)
    if "delivery_note" in rec and not isinstance(rec["delivery_note"], str):
        problems.append("delivery_note is not a string")
    if rec.get("delivery_note") and rec.get("delivery_ns") != 0:
        problems.append("a delivery_note beside a delivery figure")
    need(rec, "backend", str, problems)
    after_x2apic(rec, problems)
    if rec.get("status") not in STATUSES:
        problems.append(f"status {rec.get('status')!r}")


def check_kut(rec, problems):
    need_all(rec, "kut", problems)


def check_check(rec, problems):
    need_all(rec, "check", problems)


def check_phase(rec, problems):
    """One unit of the benchmark walk opening: index of of, backend, bench."""
    if need(rec, "index", int, problems) and need(rec, "of", int, problems) \
            and not 1 <= rec["index"] <= rec["of"]:
        problems.append(f"phase index {rec['index']} outside 1..{rec['of']}")
    need(rec, "backend", str, problems)
    need(rec, "bench", str, problems)


def check_phases(phases, ended):
    """Across a log: the phases count 1, 2, ... against one total, all of which
    opened when the plan ended (an end record)."""
    if not phases:
        return []
    total = phases[0]["of"]
    if [p["index"] for p in phases] != list(range(1, len(phases) + 1)) or \
            any(p["of"] != total for p in phases):
        return [f"phases are not numbered 1..{total} in order against one total"]
    if ended and len(phases) != total:
        return [f"{len(phases)} phases opened of the {total} announced"]
    return []


def check_x2apic_order(records):
    """Across a log: after_x2apic never goes back to false (no CPU leaves the
    fact of having been in x2APIC mode behind), so a record that says false
    came before every record that says true."""
    seen = None
    for n, rec in records:
        if rec.get("after_x2apic") is True and seen is None:
            seen = n
        elif rec.get("after_x2apic") is False and seen is not None:
            return [f"line {n}: after_x2apic false after line {seen} said true"]
    return []


def check_end(rec, problems):
    need_all(rec, "end", problems)


CHECKERS = {"env": check_env, "result": check_result, "norov": check_norov,
            "check": check_check, "end": check_end, "kut": check_kut, "phase": check_phase}
