# SPDX-License-Identifier: GPL-2.0-only
"""Shared code of the host tools (docs/host-tools.md): the results file
(reading, writing by rename, validating the guest's records against
docs/results.md through tools/validate.py), the named configurations of
tools/presets.conf, the statistics (medians, Mann-Whitney U, bootstrap) and
the A/B comparison that compare, gate and report all print from.

JSON is read and written with Python's json module, the parser the Python
project maintains and ships in every Debian; nothing here parses JSON by hand.
"""
import json
import math
import os
import random
import re
import zlib

import kvm_trace
import validate

RESULTS_FORMAT = "ipibench-results"
RESULTS_VERSION = 1
RECORD_SCHEMA = validate.SCHEMA

# Exit codes of the subcommands (docs/exit-codes.md, "Subcommands"), from their one home.
from ipibench_exit_codes import (EX_CORRECTNESS, EX_DEPS, EX_INCOMPARABLE,  # noqa: F401,E402
                                 EX_INTERRUPTED, EX_MALFORMED, EX_MISSING, EX_NEEDS_KVM,
                                 EX_NO_OVERLAP, EX_OK, EX_PRESET, EX_QEMU_OLD, EX_REGRESSION,
                                 EX_SAVE, EX_SCHEMA, EX_UNAVAILABLE, EX_USAGE)

GOOD_STATUSES = ("SUCCESS", "SKIP")


class ToolError(Exception):
    """One clear message and the documented exit code that goes with it."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# --- writing: a results file only ever appears complete, and never replaces one


def write_new(path, text):
    """Write text to path through a temporary name in the same directory.

    The final name is created by link(), which fails if it exists, so a run
    can never overwrite an earlier file; a crash leaves only the hidden
    temporary, never a half file under the final name."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder or ".", f".{name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise ToolError(EX_SAVE, f"{path} already exists: results are never overwritten")
        except OSError:
            # A file system without hard links: rename, after making sure
            # nothing is there (the run's directory is its own, see run.sh).
            if os.path.lexists(path):
                raise ToolError(EX_SAVE, f"{path} already exists: results are never overwritten")
            os.rename(tmp, path)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot write {path}: {e.strerror}")
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def replace_file(path, data):
    """Derived files (report pages and plots) may be regenerated: write then rename."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder or ".", f".{name}.tmp-{os.getpid()}")
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(tmp, mode) as f:
        f.write(data)
    os.replace(tmp, path)


def dump_results(doc):
    """results.json text: readable, one record a line so that diffs stay short."""
    head = {k: v for k, v in doc.items() if k != "records"}
    text = json.dumps(head, indent=1, sort_keys=False)
    recs = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in doc["records"])
    return text[:-2] + ',\n "records": [\n' + recs + "\n ]\n}\n"


# --- reading the guest's console


def parse_console(text):
    """Record lines of a console log -> (records, problems).

    A record line starts with '{"record":' (docs/results.md); anything else is
    the human part of the console. Problems name the line."""
    records, problems = [], []
    for n, line in enumerate(text.replace("\r", "").splitlines(), 1):
        if not line.startswith('{"record":'):
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"console line {n}: not JSON: {e.msg} at column {e.colno}")
            continue
        except (ValueError, RecursionError) as e:
            problems.append(f"console line {n}: not JSON this reader accepts: {json_limit(e)}")
            continue
        if not isinstance(rec, dict):
            problems.append(f"console line {n}: not a JSON object")
            continue
        bad = record_problems(rec)
        problems += [f"console line {n}: {p}" for p in bad]
        # Kept: valid records, and records of another schema (readers then
        # refuse the file by name, exit 24). Dropped: broken schema-1 records,
        # which stay in the problems (and the console log).
        if not bad or rec.get("schema") != RECORD_SCHEMA:
            records.append(rec)
    return records, problems


def json_limit(e):
    """Why json.loads refused text that is JSON by its grammar: an integer of more
    digits than int() converts (sys.get_int_max_str_digits) raises a plain
    ValueError, nesting deeper than the recursion limit a RecursionError."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e).split(":")[0].lower()


def record_problems(rec):
    """What is wrong with one record under schema 1 ([] when nothing)."""
    if rec.get("schema") != RECORD_SCHEMA:
        return [f"schema {rec.get('schema')!r}, these tools know {RECORD_SCHEMA}"]
    # A list or object as the kind is unhashable: no checker, not a TypeError
    kind = rec.get("record")
    checker = validate.CHECKERS.get(kind) if isinstance(kind, str) else None
    if checker is None:
        return [f"unknown record kind {rec.get('record')!r}"]
    problems = []
    checker(rec, problems)
    return problems


# --- reading results files and directories


class Boot:
    """One boot: its records and the host facts saved beside them."""

    def __init__(self, path, host, run, records, problems):
        self.path, self.host, self.run = path, host, run
        self.records, self.problems = records, problems
        kinds = {}
        for r in records:
            kinds.setdefault(r.get("record"), []).append(r)
        self.env = (kinds.get("env") or [{}])[0]
        self.results = kinds.get("result", [])
        self.checks = kinds.get("check", [])
        self.norov = kinds.get("norov", [])
        self.kut = kinds.get("kut", [])  # the kvm-unit-tests view, cell by cell
        self.end = (kinds.get("end") or [None])[-1]

    def config(self):
        """The configuration this boot ran: its label, or the file's folder."""
        return self.run.get("config") or self.run.get("label") or \
            os.path.basename(os.path.dirname(os.path.abspath(self.path)))

    def facts(self):
        """What must match for two boots' figures to be comparable."""
        cpus = self.env.get("cpus") if isinstance(self.env.get("cpus"), dict) else {}
        tsc = self.env.get("tsc") if isinstance(self.env.get("tsc"), dict) else {}
        qemu = self.host.get("qemu_cmdline") if isinstance(self.host.get("qemu_cmdline"),
                                                          list) else []
        warned = self.warnings()
        return {"CPU count": cpus.get("count"), "TSC source": tsc.get("source"),
                "accelerator": self.host.get("accel"), "-cpu": _after(qemu, "-cpu"),
                "machine": _after(qemu, "-M"), "preset": self.run.get("preset") or None,
                "guest command line": figure_cmdline(self.env.get("cmdline")),
                "warning set": None if warned is None else
                " ".join(sorted(warned)) or "none"}

    def timing_facts(self):
        """What must also match for two boots' timings (not their exit counts)
        to be comparable: the work added around or inside every timed region
        (INSTRUMENTS)."""
        return {"timed-region instrumentation": instrumentation(self.env.get("cmdline"),
                                                                self.run)}

    def warnings(self):
        """{id: text} of what makes every figure of this boot untrustworthy:
        the guest's own checks (env "trust", those marked per_figure) and the
        host's (results.json host "warnings"); None for results saved before
        either existed."""
        trust = self.env.get("trust") if isinstance(self.env.get("trust"), dict) else None
        host = self.host.get("warnings") if isinstance(self.host.get("warnings"), list) else None
        if trust is None and host is None:
            return None
        out = {}
        for w in (trust or {}).get("warnings") or []:
            if isinstance(w, dict) and w.get("per_figure") and isinstance(w.get("id"), str):
                out[w["id"]] = str(w.get("text", ""))
        for w in host or []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                out[f"host:{w['id']}"] = str(w.get("text", ""))
        return out

    def reported_facts(self):
        """What may legitimately differ (an A/B over a module parameter does) but
        a reader must see: the host kernel, its CPU flags and KVM parameters,
        its power state and command line, and whether the vCPUs were pinned."""
        kvm = self.host.get("kvm_params") if isinstance(self.host.get("kvm_params"),
                                                        dict) else {}
        flags = self.host.get("cpu_flags")
        out = {"host kernel": self.host.get("kernel"),
               "host CPU flags": " ".join(map(str, flags)) if isinstance(flags, list) else None}
        out.update({k: v for k, v in kvm.items()})
        out.update({f"host {k}": v for k, v in power_facts(self.host)})
        cmdline = self.host.get("kernel_cmdline")
        out["host kernel command line"] = cmdline if isinstance(cmdline, str) else None
        pin = pin_of(self.run)
        out["vCPU pinning"] = pin_words(pin) if pin else None
        return out

    def apicv_state(self):
        """This boot's KVM's APICv/AVIC: 'apicv', 'avic' (the module enables
        it), 'off' (it does not), with ' inhibited' when --exits traced an
        inhibit for this VM; None when not known (TCG, or the parameter not
        read). The KVM --exits ran on (the lane's under kvm-in-tcg) first,
        else this host's under accel kvm."""
        exits = self.run.get("exits") if isinstance(self.run.get("exits"), dict) else {}
        params = exits.get("kvm_params") if isinstance(exits.get("kvm_params"), dict) else {}
        if not params and self.host.get("accel") == "kvm" and \
                isinstance(self.host.get("kvm_params"), dict):
            params = self.host["kvm_params"]
        for key, what, _ in kvm_trace.APICV_PARAMS:
            if key in params:
                state = what.lower() if str(params[key]) in AVIC_ON else "off"
                inhibited = str(exits.get("apicv") or "").split("; ", 1)[-1]
                return state + (" inhibited" if inhibited.startswith("inhibited") else "")
        return None

    def avic_without_x2avic(self):
        """True when this boot ran on this host's KVM with AVIC enabled
        (kvm_amd.avic Y or 1) on a CPU without x2AVIC; None when AVIC was on
        but the CPU flags were not saved (results older than them); else False."""
        kvm = self.host.get("kvm_params") if isinstance(self.host.get("kvm_params"),
                                                        dict) else {}
        if self.host.get("accel") != "kvm" or str(kvm.get("kvm_amd.avic")) not in AVIC_ON:
            return False
        if kernel_before(self.host.get("kernel"), (6, 3)):
            return False  # before 2008fab34530: hybrid AVIC kept the memslot (6.0-6.2)
        flags = self.host.get("cpu_flags")
        return None if not isinstance(flags, list) else "x2avic" not in flags


def pin_of(run):
    """A run record's "pin" as {"state", "map", "why"}: results saved before
    issue 29 hold the --pin map (a list: pinned) or null (not pinned); None
    when the run record has no "pin" at all."""
    pin = run.get("pin", False) if isinstance(run, dict) else False
    if pin is False:
        return None
    if pin is None:
        return {"state": "not pinned", "map": [], "why": ""}
    if isinstance(pin, list):
        return {"state": "pinned" if pin else "not pinned", "map": pin, "why": ""}
    if isinstance(pin, dict) and isinstance(pin.get("state"), str):
        return {"state": pin["state"],
                "map": pin["map"] if isinstance(pin.get("map"), list) else [],
                "why": pin["why"] if isinstance(pin.get("why"), str) else ""}
    return {"state": "unknown", "map": [], "why": ""}


def pin_words(pin):
    """'pinned: vCPU0->CPU2 vCPU1->CPU3', 'not pinned' or 'pinning unknown'.
    The map has no thread ids (they change every boot)."""
    if pin["state"] == "unknown":
        return "pinning unknown"
    pairs = " ".join(f"vCPU{p.get('vcpu')}->CPU{p.get('host_cpu')}" for p in pin["map"]
                     if isinstance(p, dict))
    return pin["state"] + (f": {pairs}" if pairs else "")


# The host's power state (host.power, ipibench.power_facts) as compare and
# summary.txt name it: (label, key in host.power).
POWER_FACTS = (("cpuidle driver", "cpuidle_driver"), ("cpuidle governor", "cpuidle_governor"),
               ("idle states", "cpuidle_states"), ("cpufreq driver", "cpufreq_driver"),
               ("cpufreq governor", "cpufreq_governor"), ("boost", "boost"),
               ("intel_pstate no_turbo", "intel_no_turbo"), ("amd_pstate", "amd_pstate"),
               ("SMT control", "smt_control"), ("SMT active", "smt_active"),
               ("isolated CPUs", "isolated"), ("nohz_full", "nohz_full"))


def power_facts(host):
    """[(label, text or None)] of POWER_FACTS: None where the file was not read
    (or results older than them); the idle states as 'POLL C1 C6(disabled)'."""
    power = host.get("power") if isinstance(host.get("power"), dict) else {}
    out = []
    for label, key in POWER_FACTS:
        v = power.get(key)
        if key == "cpuidle_states" and isinstance(v, list):
            v = " ".join(f"{st.get('name')}" + {True: "", False: "(disabled)"}.get(
                st.get("enabled"), "(not read)") for st in v if isinstance(st, dict)) or "none"
        elif key in ("isolated", "nohz_full") and v in ("", "(null)"):
            v = "none"
        out.append((label, None if v is None or isinstance(v, (list, dict)) else str(v)))
    return out


def kernel_before(release, version):
    """Whether a kernel release string ("6.1.0-18-amd64") is older than
    version (a (major, minor) tuple); False when it cannot be read."""
    m = re.match(r"(\d+)\.(\d+)", release) if isinstance(release, str) else None
    return bool(m) and (int(m.group(1)), int(m.group(2))) < version


# kvm_amd.avic's "on" spellings (a bool prints Y; kernels before 5.x had an int).
AVIC_ON = ("Y", "y", "1")
# The records that drive the local APIC through its MMIO page: an xAPIC-mode
# ICR write, which the record's flags say ("icr-wait=", lib/ipi_flags.c),
# whatever the backend is called (xapic, xapic-nmi, xapic-logical and any
# later one). hv-icr runs in xAPIC mode too but sends and EOIs through the
# Hyper-V MSRs ("icr=hv-msr"), never the page, so it is not among them. On
# AMD AVIC without x2AVIC (Zen 1 to 3), KVM since Linux 6.3 (commit
# 2008fab34530, avic_refresh_virtual_apic_mode()) deletes the APIC-access
# memslot the first time any vCPU enters x2APIC mode and never re-creates
# it: every xAPIC access after that is trapped and emulated although AVIC
# reads as active. The guest marks each result record measured after a CPU
# of its boot had been in x2APIC mode ("after_x2apic": true,
# docs/results.md), and compare marks those rows. Records without flags
# (none the guest writes today) fall back to the names below.
XAPIC_MODE_BACKENDS = ("xapic", "xapic-nmi", "xapic-logical")


def xapic_mmio(rec):
    """Whether a record's backend writes the ICR through the xAPIC MMIO page:
    lib/ipi_flags.c writes icr-wait= for every backend in xAPIC mode that is
    not a hypercall one (an x2APIC one writes fence=, a hypercall one
    send=hypercall), and hv-icr, the one xAPIC-mode backend whose ICR is an
    MSR, says so with its own word."""
    flags = rec.get("flags")
    if not isinstance(flags, str) or not flags:
        return rec.get("backend") in XAPIC_MODE_BACKENDS
    words = flags.split()
    return any(w.startswith("icr-wait=") for w in words) and "icr=hv-msr" not in words
AFTER_X2APIC_MARK = "after x2APIC: emulated on AVIC without x2AVIC"


# What adds work to every timed region, so that timings with and without it
# are not comparable (exit counts stay comparable: each adds no exit of the
# kinds kvm_trace judges):
# - markers=1: the guest's OUT to port 0xed, a KVM_EXIT_IO round trip to
#   QEMU (no device on KVM's PIO bus claims the port): for the round trips
#   (single, single-halt) after every iteration, just past the region's
#   closing TSC read (vcpu_put/vcpu_load on the sender, cold caches and
#   predictors for the next region, a longer halt for the target); for the
#   other benchmarks two per sampling, around its measured iterations, so
#   keying their timings on it too is stricter than they need, and safe;
# - kvm-trace: run.sh --exits enables KVM's tracepoints, which write an event
#   on every exit and entry inside the region;
# - perf-kvm: run.sh --perf-kvm's `perf kvm stat record` does the same
#   through perf's buffers.
INSTRUMENTS = ("markers=1", "kvm-trace", "perf-kvm")


def instrumentation(cmdline, run):
    """The INSTRUMENTS a boot ran with, or "none"; None when its guest
    command line is unknown (results older than it)."""
    if not isinstance(cmdline, str):
        return None
    said = [w.split("=", 1)[1] for w in cmdline.split() if w.startswith("markers=")]
    on = ["markers=1"] if said and said[-1] in ("1", "on", "yes", "true") else []
    run = run if isinstance(run, dict) else {}
    if run.get("exits"):
        on.append("kvm-trace")
    if run.get("perf_kvm"):
        on.append("perf-kvm")
    return " ".join(on) or "none"


# Guest command-line keys that choose what runs or bound a wait, but change no
# figure that runs: left out of the comparison (markers= counts for timings
# only, through instrumentation()). Everything else (iters,
# warmup, budget, halt_gap, sender, target, norov_iters, ...) counts, and so
# does deadline: it also sets the stall watchdog's tick (every 2.5 s at the
# default 1 s, 10.5 s at 10 s), and each tick is an EOI exit inside whatever
# region it lands in (and a HLT exit more on a halted target).
# halt_poll_ns and halt_poll_grow are the host's KVM parameters as run.sh
# read them and told the guest: two sides that differ there differ in the
# host facts, where compare shows it (ab over kvm.halt_poll_ns is exactly
# that question), not in what the user asked the guest to do. lava=1 only
# adds console lines (docs/lab.md): a lab's job and a run.sh run compare.
# host_stats=1 waits for the host between calibration and the first measured
# iteration and after the last one, outside every region, with the target
# spinning through the first wait so that KVM's polling window stays as the
# warm-up left it (bench/point.c, point_host_edge); under -icount it moved
# no median (issue 30's note).
NEUTRAL_KEYS = ("plan", "backends", "bench", "help", "markers", "ap_timeout",
                "debug_cpu", "matrix", "halt_poll_ns", "halt_poll_grow", "lava", "host_stats")


# Fault injection (docs/command-line.md, "Fault injection"): debug= plants a fault, debug_cpu=
# names its CPU. A planted fault is the candidate of a gate that must fail
# (debug=extra-exit: one exit more per send), so it cannot make the two sides
# incomparable; gate and compare say that they ignored it (ignored_words).
FAULT_KEYS = ("debug", "debug_cpu")


def figure_cmdline(cmdline):
    """The guest's key=value words that change figures, sorted; None if unknown."""
    if not isinstance(cmdline, str):
        return None
    words = [w for w in cmdline.split() if "=" in w and
             w.split("=", 1)[0] not in NEUTRAL_KEYS + FAULT_KEYS]
    return " ".join(sorted(words)) or "(defaults)"


def fault_words(cmdline):
    """The fault-injection words (debug=..., debug_cpu=...) of a guest command line."""
    if not isinstance(cmdline, str):
        return []
    return [w for w in cmdline.split() if "=" in w and w.split("=", 1)[0] in FAULT_KEYS]


def _after(argv, flag):
    """The value after flag in a command line, or None."""
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None


def _load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ToolError(EX_MISSING, f"{path}: no such results file")
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(EX_MISSING, f"{path}: cannot read: {getattr(e, 'strerror', e)}")
    if not text.strip():
        raise ToolError(EX_MALFORMED, f"{path}: empty results file (truncated?)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(EX_MALFORMED, f"{path}: malformed or truncated results file: "
                        f"{e.msg} at line {e.lineno} column {e.colno}")
    except (ValueError, RecursionError) as e:
        raise ToolError(EX_MALFORMED, f"{path}: malformed results file: {json_limit(e)}")


def _check_records(path, records):
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise ToolError(EX_MALFORMED, f"{path}: record {i + 1} is not a JSON object")
        if rec.get("schema") != RECORD_SCHEMA:
            raise ToolError(EX_SCHEMA, f"{path}: record {i + 1} ({rec.get('record')!r}) has "
                            f"schema {rec.get('schema')!r}; these tools read schema "
                            f"{RECORD_SCHEMA} only (docs/results.md)")
        bad = record_problems(rec)
        if bad:
            raise ToolError(EX_MALFORMED, f"{path}: record {i + 1} ({rec.get('record')}): "
                            + "; ".join(bad))


# The host and run facts the tools read, with the types docs/host-tools.md
# gives them; absent or null is fine, another type is a malformed file.
FACT_TYPES = (("host", "accel", str), ("host", "cpu_model", str), ("host", "kernel", str),
              ("host", "qemu_version", str), ("host", "kvm_params", dict),
              ("host", "cpu_flags", list),
              ("run", "config", str), ("run", "label", str), ("run", "status", str),
              ("run", "preset", str))


def _check_facts(path, doc):
    for part, key, kind in FACT_TYPES:
        v = doc[part].get(key)
        if v is not None and not isinstance(v, kind):
            raise ToolError(EX_MALFORMED, f"{path}: '{part}.{key}' is {type(v).__name__}, "
                            f"expected {kind.__name__}")


def load_results_file(path):
    doc = _load_json(path)
    if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
        raise ToolError(EX_MALFORMED, f"{path}: not an ipibench results file "
                        f"(no \"format\": \"{RESULTS_FORMAT}\")")
    if doc.get("version") != RESULTS_VERSION:
        raise ToolError(EX_SCHEMA, f"{path}: results format version {doc.get('version')!r}; "
                        f"these tools read version {RESULTS_VERSION}")
    for key, kind in (("host", dict), ("run", dict), ("records", list), ("problems", list)):
        if not isinstance(doc.get(key), kind):
            raise ToolError(EX_MALFORMED, f"{path}: '{key}' missing or not a {kind.__name__}")
    _check_facts(path, doc)
    _check_records(path, doc["records"])
    return Boot(path, doc["host"], doc["run"], doc["records"], doc["problems"])


def load_console_log(path):
    """A bare console log (no host facts): what the guest printed, judged alone."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise ToolError(EX_MISSING, f"{path}: cannot read: {e.strerror}")
    records, problems = parse_console(text)
    _check_records(path, records)
    status = None
    m = re.findall(r"^ipibench: status (\S+)", text.replace("\r", ""), re.M)
    if m:
        status = m[-1]
    return Boot(path, {}, {"status": status, "label": os.path.basename(path)}, records,
                problems)


def find_results(path):
    """Results files a path names: itself, or every results.json below it."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise ToolError(EX_MISSING, f"{path}: no such file or directory")
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if "results.json" in files:
            found.append(os.path.join(root, "results.json"))
    if found:
        return found
    log = os.path.join(path, "console.log")
    if os.path.isfile(log):
        raise ToolError(EX_MISSING, f"{path}: the run saved no results.json (interrupted or "
                        "failed before its end; console.log says why)")
    raise ToolError(EX_MISSING, f"{path}: no results.json in it or below it")


def load_set(path):
    """Every boot a path names, as a list of Boot."""
    boots = []
    for f in find_results(path):
        if f.endswith(".log"):
            boots.append(load_console_log(f))
        else:
            boots.append(load_results_file(f))
    return boots


def split_by_config(boots):
    """{configuration: [boots]} in first-seen order (a matrix holds several)."""
    out = {}
    for b in boots:
        out.setdefault(b.config(), []).append(b)
    return out


# --- the named configurations (tools/presets.conf)


def load_presets(path):
    """presets.conf -> {name: {cpu, smp, extra, description}} (its format is in its header)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ToolError(EX_PRESET, f"{path}: cannot read the configurations: {e.strerror}")
    except UnicodeDecodeError as e:
        raise ToolError(EX_PRESET, f"{path}: not UTF-8 text (byte {e.start})")
    presets = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [x.strip() for x in line.split("|")]
        where = f"{path}:{n}"
        if len(fields) != 5:
            raise ToolError(EX_PRESET, f"{where}: {len(fields)} fields, expected 5 "
                            "(name | cpu flags | smp | extra QEMU args | description)")
        name, cpu, smp, extra, desc = fields
        if not re.fullmatch(r"[a-z0-9-]+", name):
            raise ToolError(EX_PRESET, f"{where}: bad configuration name {name!r} "
                            "(lower-case letters, digits and '-')")
        if name in presets:
            raise ToolError(EX_PRESET, f"{where}: configuration {name!r} defined twice")
        # Four digits at most: no machine QEMU offers has 10000 vCPUs, and int()
        # refuses strings of over 4300 digits with a ValueError
        if not re.fullmatch(r"[1-9][0-9]{0,3}", smp):
            raise ToolError(EX_PRESET, f"{where}: smp {smp!r} is not a vCPU count")
        if re.search(r"\s", cpu):
            raise ToolError(EX_PRESET, f"{where}: cpu flags {cpu!r} contain blanks")
        presets[name] = {"cpu": cpu, "smp": int(smp), "extra": extra.split(),
                         "description": desc}
    return presets


# QEMU's ways of turning a boolean -cpu property off.
_FLAG_OFF = ("off", "false", "no", "n")


def kvm_only_flags(cpu):
    """The features of a -cpu value (a model and flags, comma-separated) that only
    KVM implements: Hyper-V enlightenments (hv-*) and KVM's paravirtual features
    (kvm-pv-*), each unless turned off ('-hv-ipi', 'kvm-pv-ipi=off'). Under TCG
    the guest sees neither, so every backend they add SKIPs: a run of them there
    would pass having tested none of it (run.sh stops instead, exit 31)."""
    out = []
    for flag in cpu.split(","):
        name, _, value = flag.partition("=")
        if name.startswith("-") or value.lower() in _FLAG_OFF:
            continue
        name = name.lstrip("+")
        if name.startswith(("hv-", "kvm-pv-")):
            out.append(flag.lstrip("+"))
    return out


def get_preset(presets, name, path="tools/presets.conf"):
    if name not in presets:
        raise ToolError(EX_PRESET, f"unknown configuration {name!r} (in {path}: "
                        f"{', '.join(presets) or 'none'}; './run.sh list' describes them)")
    return presets[name]


# --- statistics


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        raise ValueError("median of nothing")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _midranks(values):
    """Midranks of values (ties share the mean of their ranks), 1-based."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


EXACT_LIMIT = 40  # boots in both sides together up to which p is exact


def min_boots(alpha):
    """The fewest boots a side (equal sides, no ties) with which the two-sided
    exact test can give p < alpha at all: 2 / C(2n, n) < alpha."""
    n = 1
    while 2 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


MIN_BOOTS = min_boots(0.05)  # 4: 2/70 = 0.029 (3 a side: 2/20 = 0.1)


def _rank_sum_distribution(doubled_ranks, n):
    """Counts of every sum of n of the doubled ranks (all C(N, n) choices)."""
    dist = [dict() for _ in range(n + 1)]
    dist[0][0] = 1
    for r in doubled_ranks:
        for k in range(min(n, len(doubled_ranks)) - 1, -1, -1):
            for s, c in dist[k].items():
                dist[k + 1][s + r] = dist[k + 1].get(s + r, 0) + c
    return dist[n]


def mann_whitney(a, b):
    """Two-sided Mann-Whitney U test of a against b.

    Returns (p, p_min, how): p the two-sided p-value, p_min the smallest p
    these sample sizes could give at all (a check that the test has any power),
    how 'exact' (permutation distribution of the midrank sum, ties included)
    or 'normal' (tie-corrected normal approximation with continuity
    correction, for large samples)."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return 1.0, 1.0, "none"
    ranks = _midranks(list(a) + list(b))
    if n + m <= EXACT_LIMIT:
        doubled = [int(round(2 * r)) for r in ranks]
        dist = _rank_sum_distribution(doubled, n)
        total = sum(dist.values())
        mean2 = n * (n + m + 1)  # twice the expected rank sum of a
        obs = abs(sum(doubled[:n]) - mean2)
        p = sum(c for s, c in dist.items() if abs(s - mean2) >= obs) / total
        far = max(abs(s - mean2) for s in dist)
        p_min = sum(c for s, c in dist.items() if abs(s - mean2) >= far) / total
        return min(1.0, p), min(1.0, p_min), "exact"
    u = sum(ranks[:n]) - n * (n + 1) / 2
    ties = {}
    for v in list(a) + list(b):
        ties[v] = ties.get(v, 0) + 1
    return _normal_p(u, n, m, sum(t ** 3 - t for t in ties.values())), 0.0, "normal"


def _normal_p(u, n, m, tie_term):
    big_n = n + m
    var = n * m / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - n * m / 2) - 0.5) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


def mann_whitney_histograms(ha, hb):
    """Mann-Whitney U over two histograms ([low, high, count] buckets).

    A bucket is a group of tied samples; with thousands of samples the
    tie-corrected normal approximation is accurate. It sees the spread within
    boots only, never the spread between boots."""
    ca, cb = {}, {}
    for low, _, c in ha:
        ca[low] = ca.get(low, 0) + c
    for low, _, c in hb:
        cb[low] = cb.get(low, 0) + c
    n, m = sum(ca.values()), sum(cb.values())
    if n == 0 or m == 0:
        return 1.0
    u, below_b, tie_term = 0.0, 0, 0
    for v in sorted(set(ca) | set(cb)):
        x, y = ca.get(v, 0), cb.get(v, 0)
        u += x * (below_b + y / 2)
        below_b += y
        t = x + y
        tie_term += t ** 3 - t
    return _normal_p(u, n, m, tie_term)


def bootstrap_change_ci(a, b, seed, rounds=1000, level=0.95):
    """Percentile bootstrap CI of 100 * (median(b) / median(a) - 1), over boots.

    None below 3 boots a side: resampling two values says nothing."""
    if len(a) < 3 or len(b) < 3:
        return None
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        ma = median([rng.choice(a) for _ in a])
        mb = median([rng.choice(b) for _ in b])
        if ma > 0:
            out.append(100.0 * (mb / ma - 1))
    if not out:
        return None
    out.sort()
    lo = out[int((1 - level) / 2 * (len(out) - 1))]
    hi = out[int((1 + level) / 2 * (len(out) - 1))]
    return lo, hi


# --- comparison


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
        self.emulated = {}  # key -> records measured after x2APIC on AVIC without x2AVIC
        self.unknown = {}   # why whether they were is unknown -> records
        self.untrusted = {}  # key -> the EMULATION_IDS its figures carry (any boot)
        for boot in boots:
            per_boot = {}
            x2apic = X2apicBoot(boot)
            warned = boot.warnings() if hasattr(boot, "warnings") else None
            emulated = {w.split(":", 1)[-1] for w in warned or {}} & set(EMULATION_IDS)
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
                         wakes_blocked(ex.get("target_wakeups"))))
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
    """Judged exits per iteration of one side of a record (tools/kvm_trace.py)."""
    try:
        return kvm_trace.judged_total({str(k): float(v) for k, v in side.items()})
    except (TypeError, ValueError):
        return None


def wakes_blocked(wakeups):
    """Of a halted target's wakes (kvm_vcpu_wakeup, per iteration), the
    share that came after a block; None where none were traced."""
    if not isinstance(wakeups, dict):
        return None
    try:
        poll, wait = float(wakeups.get("poll", 0)), float(wakeups.get("wait", 0))
    except (TypeError, ValueError):
        return None
    return round(wait / (poll + wait), 4) if poll + wait > 0 else None


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
    compared: a Boot.timing_facts() that differs, or a side that mixes them."""
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
EMULATION_IDS = ("tcg", "kvm-in-tcg", "rdtsc-exits")


def apicv_of(side):
    """A side's APICv/AVIC state (Boot.apicv_state), its boots' states joined
    with '|' where they differ; None when no boot's is known."""
    states = sorted({st for st in (b.apicv_state() if hasattr(b, "apicv_state") else None
                                   for b in side.boots) if st})
    return "|".join(states) or None


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
                raise ToolError(EX_USAGE, f"--{name} {','.join(unknown)}: no row has "
                                f"{'it' if len(unknown) == 1 else 'them'}; "
                                f"the rows' {name} values: {', '.join(there)}")
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
        return ToolError(EX_NO_OVERLAP, f"nothing to compare: {self.sa.name} and {self.sb.name} "
                         f"share no benchmark row ({self.sa.name}: {names(self.sa)}; "
                         f"{self.sb.name}: {names(self.sb)})")


# --- correctness: what always fails a gate


def correctness_failures(boot):
    """Why this boot is not a correct run ([] when it is)."""
    out = [f"invalid record: {p}" for p in boot.problems]
    status = boot.run.get("status")
    if status and status not in GOOD_STATUSES:
        out.append(f"guest status {status}")
    if boot.env and boot.end is None:
        out.append("no end record: the guest did not finish")
    if boot.end is not None and boot.end.get("status") not in GOOD_STATUSES:
        if boot.end.get("status") != status:
            out.append(f"end record status {boot.end.get('status')}")
    for rec in boot.results + boot.norov:
        if rec.get("status") == "FAILURE":
            what = f"FAILURE: {rec.get('bench') or rec.get('test')} on {rec.get('backend')}"
            out.append(what + (f": {rec['reason']}" if rec.get("reason") else ""))
    for rec in boot.checks:
        if rec.get("failed", 0) > 0:
            out.append(f"correctness suite: {rec['failed']} failed on {rec.get('backend')}")
    if out:
        out += [f"guest: {line}" for line in guest_not_ok(boot)]
    return out


def guest_not_ok(boot, limit=20):
    """The guest's own 'not ok' TAP lines, from the console.log beside the boot's
    results.json: what each failed check says, for the gate's TAP and JUnit."""
    log = os.path.join(os.path.dirname(os.path.abspath(boot.path)), "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [l.rstrip() for l in f if l.startswith("not ok ")]
    except OSError:
        return []
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


# --- formatting


def fmt_num(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) and v != int(v) else str(int(v))


def fmt_change(row):
    return "-" if row.change is None else f"{row.change:+.1f}%"


def fmt_p(row):
    if row.p is None:
        return "-"
    return "<0.001" if row.p < 0.001 else f"{row.p:.3f}"


def fmt_ci(row):
    return "-" if row.ci is None else f"[{row.ci[0]:+.1f}%, {row.ci[1]:+.1f}%]"


TABLE_HEAD = ("benchmark", "metric", "variant", "backend", "state", "n", "A p50", "B p50",
              "change", "p", "95% CI", "boots", "test", "verdict")
EXITS_HEAD = ("A exits", "B exits")
APICV_HEAD = ("APICv/AVIC",)


def fmt_exits(e):
    """Judged exits per iteration, sender/targets, and for halted targets the
    share of their wakes that came after a block: 's1.00 t1.00 b0.91'."""
    if e is None:
        return "-"
    blocked = f" b{e[2]:.2f}" if len(e) > 2 and e[2] is not None else ""
    return f"s{e[0]:.2f} t{e[1]:.2f}{blocked}"


def fmt_boots(row):
    """The boots cell, A/B: how many boots gave the row a figure; '-' for a
    side that has no such row at all (only in the other), so that '2/-'
    and '2/0' (B ran it without a figure: SKIP, ERROR, FAILURE) differ."""
    a = "-" if row.verdict == "only in B" else str(len(row.a_vals))
    b = "-" if row.verdict == "only in A" else str(len(row.b_vals))
    return f"{a}/{b}"


BOOTS_LEGEND = ("boots: A/B, how many boots gave the row a figure; 0: the side has the row "
                "but no figure (SKIP, ERROR or FAILURE: see the verdict), -: the side has "
                "no such row")
APICV_LEGEND = ("APICv/AVIC: A/B, what each side's KVM module enabled (kvm_intel.enable_apicv, "
                "kvm_amd.avic): apicv, avic or off, 'inhibited' when run.sh --exits traced an "
                "inhibit for the VM, - not known (TCG, or not read)")


def legend(cmp):
    return [BOOTS_LEGEND] + ([APICV_LEGEND] if has_apicv(cmp) else [])


def has_exits(cmp):
    return any(r.a_exits or r.b_exits for r in cmp.rows)


def table_rows(cmp):
    out = []
    for r in cmp.rows:
        bench, metric, variant, backend, state, ntargets = r.key
        verdict = r.verdict
        if r.significant and r.emulated:
            verdict += f" ({', '.join(r.emulated)})"
        verdict += f" ({r.note})" if r.note else ""
        if r.after_x2apic:
            verdict += f" ({AFTER_X2APIC_MARK}: {', '.join(r.after_x2apic)})"
        row = (bench, metric, variant, backend, state, str(ntargets), fmt_num(r.a),
               fmt_num(r.b), fmt_change(r), fmt_p(r), fmt_ci(r),
               fmt_boots(r), r.method, verdict)
        if has_apicv(cmp):
            row = row[:13] + (f"{cmp.apicv['a'] or '-'}/{cmp.apicv['b'] or '-'}",) + row[13:]
        if has_exits(cmp):
            row = row[:13] + (fmt_exits(r.a_exits), fmt_exits(r.b_exits)) + row[13:]
        out.append(row)
    return out


def has_apicv(cmp):
    """The APICv/AVIC column is shown when either side's state is known."""
    return bool(cmp.apicv["a"] or cmp.apicv["b"])


def table_head(cmp):
    head = TABLE_HEAD[:13] + (APICV_HEAD if has_apicv(cmp) else ()) + TABLE_HEAD[13:]
    if has_exits(cmp):
        return head[:13] + EXITS_HEAD + head[13:]
    return head


def warning_lines(cmp):
    """Each side's untrusted-figure warnings, one line per condition: 'A, B:
    id: text'. The guest and the host may both warn of one condition (each
    sees TCG: the guest by its CPUID vendor, the host by its -accel), and
    boots word one differently (rdtsc-exits quotes each boot's own cost):
    the id is the condition, said once with the first text seen."""
    seen = {}
    for tag, side in (("A", cmp.sa), ("B", cmp.sb)):
        for boot in side.boots:
            for wid, text in (boot.warnings() or {}).items():
                sides = seen.setdefault(wid.split(":", 1)[-1], (text, []))[1]
                if tag not in sides:
                    sides.append(tag)
    return [f"{', '.join(sides)}: {wid}: {text}"
            for wid, (text, sides) in seen.items()] + cmp.after_x2apic_lines()


def format_text(cmp):
    head = table_head(cmp)
    rows = [head] + table_rows(cmp)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = [f"A: {cmp.sa.name} ({len(cmp.sa.boots)} boots)",
             f"B: {cmp.sb.name} ({len(cmp.sb.boots)} boots)",
             f"medians of per-boot p50 ({cmp.unit}); change = B against A; "
             f"Mann-Whitney U, alpha {cmp.alpha}"]
    lines += [f"warning: {w}" for w in warning_lines(cmp)]
    if cmp.reasons:
        lines.append("NOT COMPARABLE: " + "; ".join(cmp.reasons))
    if cmp.timing_reasons:
        lines.append("TIMINGS NOT COMPARABLE: " + "; ".join(cmp.timing_reasons))
    lines += [f"ignored for comparability: {w}" for w in cmp.ignored]
    for d in cmp.reported:
        lines.append("differs (not refused): " + d)
    if has_exits(cmp):
        lines.append("exits: per measured iteration, the send path's own (APIC, MSR, hypercall, "
                     "HLT; run.sh --exits), median over boots, s = sender, t = targets, "
                     "b = share of a halted target's wakes that came after a block")
    lines.append("")
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    lines += [""] + legend(cmp)
    return "\n".join(lines) + "\n"


def format_markdown(cmp):
    lines = [f"**A**: `{cmp.sa.name}` ({len(cmp.sa.boots)} boots), "
             f"**B**: `{cmp.sb.name}` ({len(cmp.sb.boots)} boots); medians of per-boot p50 "
             f"({cmp.unit}), Mann-Whitney U at alpha {cmp.alpha}.", ""]
    lines += [f"- warning: {w}" for w in warning_lines(cmp)]
    if cmp.reasons:
        lines += ["**NOT COMPARABLE**: " + "; ".join(cmp.reasons), ""]
    if cmp.timing_reasons:
        lines += ["**TIMINGS NOT COMPARABLE**: " + "; ".join(cmp.timing_reasons), ""]
    lines += [f"- ignored for comparability: `{w}`" for w in cmp.ignored]
    head = table_head(cmp)
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in table_rows(cmp):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    lines += [""] + legend(cmp)
    return "\n".join(lines) + "\n"


def format_json(cmp):
    rows = [{"row": r.name, **dict(zip(ROW_FIELDS, r.key)), "a": r.a, "b": r.b,
             "a_boots": r.a_vals, "b_boots": r.b_vals, "change_pct": r.change, "p": r.p,
             "ci_pct": list(r.ci) if r.ci else None, "test": r.method,
             "p_min": r.p_min, "samples_p": r.samples_p,
             "verdict": r.verdict, "note": r.note, "after_x2apic": r.after_x2apic,
             "emulated": r.emulated,
             "a_exits": list(r.a_exits) if r.a_exits else None,
             "b_exits": list(r.b_exits) if r.b_exits else None} for r in cmp.rows]
    return json.dumps({"a": cmp.sa.name, "b": cmp.sb.name, "unit": cmp.unit,
                       "alpha": cmp.alpha, "not_comparable": cmp.reasons,
                       "timings_not_comparable": cmp.timing_reasons,
                       "differs": cmp.reported, "ignored": cmp.ignored,
                       "after_x2apic": cmp.after_x2apic_lines(),
                       "apicv": cmp.apicv,
                       "rows": rows},
                      indent=1) + "\n"
