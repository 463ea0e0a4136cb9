# SPDX-License-Identifier: GPL-2.0-only
"""The host-class model (host-model.conf beside this file): per class of
host (host_class.py), the exits per measured iteration that KVM's code
predicts for a record, and the judgement of a run's records against it.
A record the class has no line for is not modelled; one measured while
APICv/AVIC was inhibited for the VM is judged against its vendor's
unaccelerated class, and says so."""
import functools
import hashlib
import os

from ipibench.kvmhost import exit_labels
from ipibench.kvmhost import host_class
from ipibench.kvmhost import wake as kvm_wake

MODEL_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host-model.conf")
KEY = ("backend", "bench", "metric", "variant")
# The class an inhibited VM's records are judged against, by vendor family.
UNACCELERATED = {"svm-no-avic": ("avic", "avic-1235", "avic-ipiv-off", "x2avic",
                                 "x2avic-ipiv-off"),
                 "vmx-no-apicv": ("apicv", "apicv-ipiv")}


class ModelError(Exception):
    pass


def _number(text, where):
    try:
        v = float(text)
    except ValueError:
        raise ModelError(f"{where}: '{text}' is not a number") from None
    if v < 0:
        raise ModelError(f"{where}: '{text}' is negative")
    return v


@functools.lru_cache(maxsize=None)
def model_hash(path=MODEL_FILE):
    """The model file's version, as its verdicts name it: the first 12 hex
    digits of its SHA-256 ("sha256:..."), so that a verdict says which
    predictions judged it. Read once a process: every boot of a comparison
    and every record judged names it."""
    with open(path, "rb") as f:
        return "sha256:" + hashlib.sha256(f.read()).hexdigest()[:12]


def load(path=MODEL_FILE):
    """{"rows": {class: {key: prediction}}, "cites": {class: text}, "same":
    {class: other}}; a prediction is {"sender", "misses", "targets", "eoi",
    "wake", "why"}. ModelError names the line of anything malformed."""
    model = {"rows": {}, "cites": {}, "same": {}}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            where = f"{os.path.basename(path)}:{n}"
            fields = [x.strip() for x in line.split("|")]
            kind = fields[0]
            if kind in ("same", "cite") and len(fields) == 3:
                model["same" if kind == "same" else "cites"][fields[1]] = fields[2]
            elif kind == "row" and len(fields) == 12:
                cls, key = fields[1], tuple(fields[2:6])
                sender, misses, targets = (_number(x, where) for x in fields[6:9])
                if fields[9] not in ("yes", "no") or fields[10] not in ("block", "-"):
                    raise ModelError(f"{where}: eoi is yes or no, wake block or -")
                if not fields[11]:
                    raise ModelError(f"{where}: a row says why (the KVM code behind it)")
                rows = model["rows"].setdefault(cls, {})
                if key in rows:
                    raise ModelError(f"{where}: {cls} {' '.join(key)} given twice")
                rows[key] = {"sender": sender, "misses": misses, "targets": targets,
                             "eoi": fields[9] == "yes", "wake": fields[10], "why": fields[11]}
            else:
                raise ModelError(f"{where}: not a same, cite or row line of their fields")
    for cls, other in model["same"].items():
        if other not in model["rows"]:
            raise ModelError(f"{os.path.basename(path)}: same | {cls} | {other}: {other} "
                             "has no rows")
    return model


def row_key(rec):
    """A record's key in a class's rows (KEY's fields)."""
    return tuple(str(rec.get(k)) for k in KEY)


def run_facts(accel, kernel, qemu_cmdline):
    """(kernel, cpu_pm) of a run as judge() reads them: the traced KVM's
    release (this host's, under accel kvm only: the lane's is its L1's) and
    whether QEMU's line has -overcommit cpu-pm=on."""
    words = qemu_cmdline if isinstance(qemu_cmdline, list) else ()
    return (kernel if accel == "kvm" and isinstance(kernel, str) else None,
            any("cpu-pm=on" in str(w) for w in words))


def rows_of(model, cls):
    """The class's predictions ({} for a class without lines) and the class they are."""
    cls = model["same"].get(cls, cls)
    return model["rows"].get(cls, {}), cls


def _clean(side):
    """{label: exits per iteration} of a saved side, what is not a number left
    out (a results file can say anything)."""
    out = {}
    for k, v in side.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[str(k)] = float(v)
    return out


def _misses(side):
    return sum(v for k, v in side.items() if exit_labels.JUDGED.match(k)) - \
        exit_labels.judged_total(side)


def _eoi(side):
    return sum(v for k, v in side.items() if "(EOI)" in k or "(HV_EOI)" in k)


def _unaccelerated(cls):
    return next((u for u, family in UNACCELERATED.items() if cls in family), None)


def unmodelled_why(cls, rec, kernel=None, cpu_pm=False):
    """Why a record a class has a line for is not judged, or None.
    - AVIC without x2AVIC: since 2008fab34530 (6.3) the first x2APIC switch
      drops the APIC-access memslot, and every xAPIC access after it traps;
      before 6.0 (0e311d33bfbe) x2APIC in the guest's CPUID inhibits AVIC for
      the whole VM: its xAPIC rows are not modelled.
    - an accelerated class on a kernel before 5.9, which traces no inhibit
      (5.9 to 5.18 trace kvm_apicv_update_request, 5.19 on
      kvm_apicv_inhibit_changed; 5.4 has neither, 5.5 to 5.8 were not read).
    - avic-1235's xAPIC single-halt: the erratum may drop the doorbell
      miss (only the xAPIC send meets AVIC's IsRunning check there; hybrid
      AVIC's x2APIC and the hypercalls go through KVM's software path).
    - -overcommit cpu-pm=on: the target's HLT does not exit, nor does it block.
    - an inhibit set or cleared inside the window: the counts are a mix."""
    e = rec.get("exits") or {}
    xapic = str(rec.get("backend", "")).startswith("xapic")
    if cls in ("avic", "avic-1235", "avic-ipiv-off") and xapic and rec.get("after_x2apic"):
        return "after the first x2APIC switch on AVIC without x2AVIC (2008fab34530)"
    if cls in ("avic", "avic-1235") and xapic and kvm_wake.kernel_before(kernel, (6, 0)):
        return f"AVIC on {kernel}: before 6.0 an x2APIC-capable vCPU inhibits AVIC for the VM"
    if cls not in ("lane", "svm-no-avic", "vmx-no-apicv") and \
            kvm_wake.kernel_before(kernel, (5, 9)):
        return (f"{kernel}: an APICv/AVIC inhibit is not traced before 5.9 "
                "(kvm_apicv_update_request), so an inhibited VM cannot be told apart")
    if cls == "avic-1235" and rec.get("bench") == "single-halt" and xapic:
        return ("erratum #1235: a send to a target that is blocking may miss its exit "
                "(8de4a1c8164e, 9a12fa5213cf)")
    if cpu_pm and rec.get("bench") == "single-halt":
        return "-overcommit cpu-pm=on: the target's HLT does not exit"
    if e.get("apicv_changed_inside"):
        return "an APICv/AVIC inhibit changed inside the window"
    return None


def measured(rec, want):
    """(sender, doorbell misses, targets, targets' EOI) per iteration as
    judge_record() reads a record against a prediction: misses in the
    sender's count only where the prediction has them."""
    e = rec["exits"]
    miss = _misses(e["sender"])
    return (exit_labels.judged_total(e["sender"]) + (miss if want["misses"] else 0), miss,
            exit_labels.judged_total(e["targets"]), _eoi(e["targets"]))


def judge_record(model, cls, rec, kernel=None, cpu_pm=False):
    """None (not modelled), or (the class judged against, [divergences], the
    prediction as judged, [notes]), each divergence and note a text. A
    divergence is one exit in every other iteration or more
    (exit_labels.EXITS_STEP), what KVM's code does and the load cannot."""
    e = rec.get("exits")
    if not isinstance(e, dict) or "status" in e or not isinstance(e.get("sender"), dict) or \
            not isinstance(e.get("targets"), dict):
        return None
    e = dict(e, sender=_clean(e["sender"]), targets=_clean(e["targets"]))
    rec = dict(rec, exits=e)
    if unmodelled_why(cls, rec, kernel, cpu_pm):
        return None
    if str(e.get("apicv", "")).startswith("inhibited") and _unaccelerated(cls):
        cls = _unaccelerated(cls)
    rows, cls = rows_of(model, cls)
    want = rows.get(row_key(rec))
    if want is None:
        return None
    out, notes = [], []
    sender, miss, targets, eoi = measured(rec, want)
    # Where IsRunning is never set (IPI virtualization off) every send
    # misses, polled target or not; so does 5.16 and earlier's, whose
    # kvm_vcpu_block() cleared IsRunning before polling (f6c60d081e2c).
    block = None if cls.endswith("-ipiv-off") or kvm_wake.kernel_before(kernel, (5, 17)) \
        else _block_share(e)
    checked_misses = bool(want["misses"])
    if want["misses"] and block is not None and block < 1:
        # A doorbell miss needs a blocked target: one that caught the IPI
        # while polling (a late HLT, a descheduled thread: the load's) made
        # none, nor a sender exit.
        notes.append(f"{1 - block:.0%} of the wakes polled: {want['misses']:.2f} doorbell "
                     f"misses predicted for each block")
        want = dict(want, sender=want["sender"] - want["misses"] * (1 - block),
                    misses=want["misses"] * block)
    checks = [("sender", sender, want["sender"]),
              ("doorbell misses", miss, want["misses"]) if checked_misses else None,
              ("targets", targets, want["targets"]),
              ("targets' EOI", eoi, float(want["eoi"]))]
    for what, got, expected in filter(None, checks):
        if abs(got - expected) >= exit_labels.EXITS_STEP:
            out.append(f"{what} {got:.2f}, expected {expected:.2f}")
    # The wake follows the load and the host's halt polling as much as
    # KVM's code: reported beside the verdict, never a divergence.
    if want["wake"] != "-" and e.get("wake") in kvm_wake.WAKE_CLAIMS and \
            e["wake"] != want["wake"]:
        notes.append(f"wake {e['wake']}, predicted {want['wake']}"
                     + (" (the record's evidence disputes it)" if e.get("wake_disagrees") else
                        ": the target polled where the class predicts a block (the load, or "
                        "halt polling past the gap), not judged"))
    return cls, out, want, notes


def _block_share(e):
    """The share of a halted target's wakes that blocked: trace.wake_counts()
    where attach() saved it (a wake its doorbell miss explains counts as a
    block, as the miss caught at the last check does), else the trace's
    kvm_vcpu_wakeup; None where neither was traced."""
    w = e.get("wake_counts")
    if isinstance(w, dict):
        poll, block = float(w.get("poll", 0) or 0), float(w.get("block", 0) or 0)
    elif isinstance(e.get("target_wakeups"), dict):
        w = e["target_wakeups"]
        poll, block = float(w.get("poll", 0) or 0), float(w.get("wait", 0) or 0)
    else:
        return None
    return block / (poll + block) if poll + block > 0 else None


def judge(records, cls, model=None, kernel=None, cpu_pm=False):
    """run.exits.model: {"class", "matched", "diverging": [{"row", "class",
    "what"}], "unmodelled", "load_misses"} over the records with exits;
    load_misses counts the rows whose sender had doorbell misses the class
    does not predict (a descheduled target: reported, never judged). kernel:
    the traced KVM's release, where known; cpu_pm: -overcommit cpu-pm=on."""
    model = model or load()
    out = {"class": cls, "matched": 0, "diverging": [], "unmodelled": 0, "load_misses": 0,
           "notes": [], "model": model_hash()}
    for r in records:
        if not isinstance(r, dict) or not isinstance(r.get("exits"), dict) or \
                not isinstance(r["exits"].get("sender"), dict):
            continue
        got = judge_record(model, cls, r, kernel, cpu_pm)
        if got is None:
            out["unmodelled"] += 1
            continue
        judged_as, problems, want, notes = got
        if problems:
            out["diverging"].append({"row": " ".join(row_key(r)), "class": judged_as,
                                     "what": "; ".join(problems)})
        else:
            out["matched"] += 1
        out["notes"] += [{"row": " ".join(row_key(r)), "what": n} for n in notes]
        if not want["misses"] and _misses(_clean(r["exits"]["sender"])) > \
                exit_labels.EXITS_TOLERANCE:
            out["load_misses"] += 1
    return out


def judge_saved(boot, model=None):
    """A saved boot (results.json read: .run, .host, .records) judged anew
    against the model as it is now: (class, why, kernel, judge()'s result),
    or None for a boot saved without --exits. A class the boot named that
    this model does not know is judged as unknown (no rows)."""
    ex = boot.run.get("exits") if isinstance(boot.run, dict) else None
    if not isinstance(ex, dict):
        return None
    hc = ex.get("host_class") if isinstance(ex.get("host_class"), dict) else {}
    cls = hc.get("name") if hc.get("name") in host_class.CLASSES else "unknown"
    kernel, cpu_pm = run_facts(boot.host.get("accel"), boot.host.get("kernel"),
                               boot.host.get("qemu_cmdline"))
    return cls, hc.get("why", "not recorded"), kernel, judge(boot.records, cls, model,
                                                              kernel=kernel, cpu_pm=cpu_pm)


def lines(result):
    """The exits table's model lines for judge()'s result."""
    if result is None:
        return []
    head = (f"model ({result['class']}, host/ipibench/kvmhost/host-model.conf"
            f"{' ' + result['model'] if result.get('model') else ''}): "
            f"{result['matched']} records as predicted, {len(result['diverging'])} diverge, "
            f"{result['unmodelled']} not modelled")
    if result.get("load_misses"):
        head += (f"; {result['load_misses']} with doorbell misses the class does not predict "
                 "(a target not running: descheduled?), not judged")
    out = [head + ("" if result["diverging"] else
                   (": matches the model" if result["matched"] else ""))]
    out += [f"  diverges: {d['row']} ({d['class']}): {d['what']}" for d in result["diverging"]]
    out += [f"  note: {n['row']}: {n['what']}" for n in result.get("notes", [])]
    return out
