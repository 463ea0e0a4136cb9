#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ipibench in a LAVA lab (docs/lab.md): the three things a lab needs from
the host side, in Python's standard library only.

  job     a LAVA job for the `qemu` device type that boots the guest with
          lava=1 and reads its console with two `monitors` (lib/lava.h: one
          test case per check, one measurement per headline figure); -accel,
          -cpu and -smp go in the job's context (extra_options), so one job
          per preset and accelerator runs on any worker with that device type
  report  a run.sh results directory as lava-test-case calls, for the test
          definition lava/ipibench-kvm-host.yaml on a KVM host (a DUT): the
          guest's cases and figures (run with lava=1), the correctness
          summary, every record's p50, host facts under the test set `host`,
          and results.json for `import` (embedded in the log, or uploaded
          and named with lava-test-reference)
  import  a LAVA job's log back into a results directory that `./run.sh
          compare` and `./run.sh history` read: the guest's console from a
          qemu-device job (started at the log's first entry, on the host
          type the lab names), or the results.json of each boot a DUT job
          embedded

Case ids are what LAVA keeps: lower-case [a-z0-9] runs joined by '_' (its
monitor and lava-test-case store ids as given, but its pages and queries
expect slugs; the monitor makes one of whatever it captures)."""
import argparse
import base64
import datetime
import gzip
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile

from ipibench import REPO
from ipibench.command_line import Parser
from ipibench.compare.model import row_key, row_name
from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_SAVE, EX_USAGE, ToolError
from ipibench.presets import get_preset, HOST, load_presets, PRESETS
from ipibench.results.files import dump_results, load_json, RESULTS_FORMAT, RESULTS_VERSION
from ipibench.results.records import parse_console
from ipibench.write import folder_name, write_new



# The guest's lines (lib/lava.h) and the monitors that read them.
BEGIN = "ipibench-lava: begin"
CASES_END = "ipibench-lava: cases end"
FIGURES_BEGIN = "ipibench-lava: figures begin"
FIGURES_END = "ipibench-lava: figures end"
STATUS_CASE = "ipibench_status"
CASE_PATTERN = r"ipibench-case: (?P<test_case_id>[a-z0-9_]+) (?P<result>pass|fail|skip)"
FIGURE_PATTERN = (r"ipibench-figure: (?P<test_case_id>[a-z0-9_]+) (?P<measurement>[0-9]+) "
                  r"(?P<units>cycles|ns)")
CASE_LINE = re.compile("^" + CASE_PATTERN + "$", re.M)
FIGURE_LINE = re.compile("^" + FIGURE_PATTERN + "$", re.M)
# The monitors' names: LAVA's test suites.
SUITE, FIGURE_SUITE = "ipibench", "ipibench-figures"

# results.json in a DUT job's log, for `import` (report --embed).
EMBED_BEGIN, EMBED_END = "ipibench-results-begin", "ipibench-results-end"

# The guest job adds it: QEMU's exit status is the guest's status, which
# the case ipibench_status also reports.
EXIT_DEVICE = "-device isa-debug-exit,iobase=0xf4,iosize=0x04"


def slug(text):
    """LAVA's test case id of a name: as lib/lava.c makes it (ASCII letters
    lowered, every other run of non-[a-z0-9] one '_', none at either end)."""
    low = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in str(text))
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")


def result_of(status):
    return {"SUCCESS": "pass", "SKIP": "skip"}.get(status, "fail")


# --- job


def job_text(kernel_url, preset=None, accel="kvm", cpu=None, smp=None, machine="q35",
             memory=256, append="", name=None, minutes=30, tags=()):
    """The job's YAML. cpu: the base model (host under KVM, max under TCG);
    a preset adds its flags, -smp and QEMU arguments (host/ipibench/presets.conf).
    tags: device tags, all of which the device that runs the job must have."""
    flags, preset_smp, extra = "", 2, []
    if preset:
        p = get_preset(load_presets(PRESETS), preset)
        flags, preset_smp, extra = p["cpu"], p["smp"], p["extra"]
        if preset_smp == HOST and not smp:
            raise ToolError(EX_USAGE, f"preset {preset} scales to the host it boots on: give "
                            "the device's vCPU count (--smp)")
    base = cpu or ("host" if accel == "kvm" else "max")
    cpu_arg = base + ("," + flags if flags else "")
    accel_arg = "tcg,thread=single" if accel == "tcg-single" else accel
    smp = smp or preset_smp
    options = [f"-accel {accel_arg}", f"-cpu {cpu_arg}", f"-smp {smp}", f"-machine {machine}"]
    options += [" ".join(extra)] if extra else []
    options += [EXIT_DEVICE, "-no-reboot"]
    cmdline = " ".join(["lava=1"] + ([append] if append else []))
    name = name or f"ipibench {preset or 'default'} {accel} smp{smp}"

    def q(s):
        return json.dumps(str(s))  # a JSON string is a YAML double-quoted scalar

    out = [
        "# SPDX-License-Identifier: GPL-2.0-only",
        "# ipibench on LAVA's qemu device type (docs/lab.md), written by",
        "# ./run.sh lava job: its options decide the kernel URL, the",
        "# accelerator, -cpu and -smp (the context's extra_options) and the guest's",
        "# command line.",
        "device_type: qemu",
        f"job_name: {q(name)}",
        "timeouts:",
        f"  job: {{minutes: {minutes + 10}}}",
        f"  action: {{minutes: {minutes}}}",
        "  connections:",
        "    # The longest wait between two lines a monitor reads: a plan's",
        "    # benchmarks run between its checks and its figures.",
        f"    lava-test-monitor: {{minutes: {minutes}}}",
        "priority: medium",
        "visibility: public",
    ] + ([
        "# LAVA schedules the job only on a device that has every one of these",
        "# tags: the lab tags each device with its CPU generation.",
        "tags:",
    ] + [f"- {q(t)}" for t in tags] if tags else []) + [
        "metadata:",
        f"  ipibench.preset: {q(preset or '')}",
        f"  ipibench.accel: {q(accel)}",
        f"  ipibench.smp: {q(smp)}",
        f"  ipibench.cmdline: {q(cmdline)}",
    ] + ([f"  ipibench.tags: {q(','.join(tags))}"] if tags else []) + [
        "context:",
        "  arch: x86_64",
        "  # The qemu device type adds -cpu host -enable-kvm unless told not to:",
        "  # the accelerator and the CPU model come from extra_options instead.",
        "  no_kvm: true",
        f"  memory: {int(memory)}",
        "  extra_options:",
    ] + [f"  - {q(o)}" for o in options] + [
        "actions:",
        "- deploy:",
        "    to: tmpfs",
        "    timeout: {minutes: 5}",
        "    images:",
        "      kernel:",
        f"        url: {q(kernel_url)}",
        f"        image_arg: {q('-kernel {kernel} -append ' + shlex.quote(cmdline))}",
        "- boot:",
        "    method: qemu",
        "    media: tmpfs",
        "    timeout: {minutes: 2}",
        "- test:",
        f"    timeout: {{minutes: {minutes}}}",
        "    monitors:",
        f"    - name: {SUITE}",
        f"      start: {q(BEGIN)}",
        f"      end: {q(CASES_END)}",
        f"      pattern: {q(CASE_PATTERN)}",
        f"    - name: {FIGURE_SUITE}",
        f"      start: {q(FIGURES_BEGIN)}",
        f"      end: {q(FIGURES_END)}",
        f"      pattern: {q(FIGURE_PATTERN)}",
    ]
    return "\n".join(out) + "\n"


def kernel_url(text):
    """A URL as given, or a file's path as a file:// URL (lava-run on this machine)."""
    return text if "://" in text else "file://" + os.path.abspath(text)


def write_out(text, path):
    if path in (None, "-"):
        sys.stdout.write(text)
        return
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot write {path}: {e.strerror}")


def cmd_job(a):
    write_out(job_text(kernel_url(a.kernel_url), a.preset, a.accel, a.cpu, a.smp, a.machine,
                       a.memory, a.append, a.name, a.minutes, a.tags), a.output)
    return 0


# --- dut-test: the test action of a job on a KVM host

TESTDEF = os.path.join(REPO, "lava", "ipibench-kvm-host.yaml")


def dut_test_text(repo, revision="", preset="x2apic", accel="kvm", append="",
                  module_param="", boots=5, upload="", minutes=60, testdef=TESTDEF,
                  exits=False, ab_boots=3):
    """A job's `test` action that runs lava/ipibench-kvm-host.yaml on the DUT,
    inline: the file itself as the repository, with the clone's URL and the
    run's choices as its params (LAVA's schema gives an inline definition
    no job parameters). boots: the preset's boots; exits: one more, traced
    (run.sh --exits); ab_boots: ab's boots a side."""
    with open(testdef, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
    values = {"IPIBENCH_REVISION": revision, "PRESET": preset, "ACCEL": accel,
              "APPEND": append, "BOOTS": boots, "EXITS": 1 if exits else 0,
              "MODULE_PARAM": module_param, "AB_BOOTS": ab_boots, "UPLOAD": upload}
    body, block = [], None
    for line in lines:
        if not line.startswith(" "):
            block = line.rstrip(":")
        m = re.match(r"  ([A-Z_]+): ", line)
        if block == "params" and m and m.group(1) in values:
            line = f"  {m.group(1)}: {json.dumps(str(values[m.group(1)]))}"
        elif block == "install" and re.match(r"  - \S+://", line):
            line = f"  - {json.dumps(repo)}"
        body.append(line)
    out = ["# SPDX-License-Identifier: GPL-2.0-only",
           "# The test action of a LAVA job on a KVM host (docs/lab.md), written by",
           "# ./run.sh lava dut-test: lava/ipibench-kvm-host.yaml inline.",
           "- test:",
           f"    timeout: {{minutes: {int(minutes)}}}",
           "    definitions:",
           "    - from: inline",
           "      name: ipibench-kvm-host",
           "      path: inline/ipibench-kvm-host.yaml",
           "      repository:"] + ["        " + line for line in body]
    return "\n".join(out) + "\n"


def cmd_dut_test(a):
    if a.module_param and "--boots" in getattr(a, "given", ()) and \
            "--ab-boots" not in getattr(a, "given", ()):
        # --boots was ab's boots a side until the preset's boot count took
        # the name: an old command line would now quietly change meaning.
        print(f"lava dut-test: note: --boots {a.boots} counts the preset's boots; ab's boots a side are --ab-boots ({a.ab_boots})", file=sys.stderr)
    write_out(dut_test_text(a.repo, a.revision, a.preset, a.accel, a.append, a.module_param,
                            a.boots, a.upload, a.minutes, exits=a.exits, ab_boots=a.ab_boots),
              a.output)
    return 0


# --- device: what a server would render for a job, for lava-run here

BASE_DEVICE = os.path.join(REPO, "tests", "lava", "qemu.yaml")


def job_context(text):
    """(memory, no_kvm, extra_options) of a job's context, read from the
    shape job_text() writes: `memory: N`, `no_kvm: B`, and extra_options as
    one double-quoted item a line."""
    m = re.search(r"^context:\n((?:[ #].*\n|\n)*)", text, re.M)
    if not m:
        raise ToolError(EX_MALFORMED, "no context: in the job")
    block = m.group(1)
    mem = re.search(r"^  memory: *(\d+)\s*$", block, re.M)
    nokvm = re.search(r"^  no_kvm: *(\S+)\s*$", block, re.M)
    extra = re.search(r"^  extra_options:\n((?:  - .*\n)*)", block, re.M)
    opts = []
    for line in (extra.group(1) if extra else "").splitlines():
        item = line[len("  - "):].strip()
        opts.append(json.loads(item) if item.startswith('"') else item)
    return (int(mem.group(1)) if mem else 512,
            bool(nokvm) and nokvm.group(1).lower() in ("true", "yes", "on", "1"), opts)


def device_text(job, base=BASE_DEVICE):
    """tests/lava/qemu.yaml with what the qemu device-type template takes from
    a job's context: -m from memory, -cpu host -enable-kvm unless no_kvm,
    `extra` from extra_options (lava-server's qemu.jinja2 for x86_64)."""
    memory, no_kvm, extra = job_context(job)
    with open(base, encoding="utf-8") as f:
        text = f.read()
    kvm = "" if no_kvm else "          - -cpu host\n          - -enable-kvm\n"
    text = re.sub(r"^( *)- -nographic$", lambda m: kvm + m.group(0), text, count=1, flags=re.M)
    text = re.sub(r"^( *)- -m \d+$", lambda m: f"{m.group(1)}- -m {memory}", text, count=1,
                  flags=re.M)
    return re.sub(r"^( *)extra: \[\]$", lambda m: m.group(1) + "extra: " + json.dumps(extra),
                  text, count=1, flags=re.M)


def cmd_device(a):
    try:
        with open(a.job, encoding="utf-8") as f:
            job = f.read()
    except OSError as e:
        raise ToolError(EX_MISSING, f"{a.job}: cannot read: {e.strerror}")
    write_out(device_text(job, a.base), a.output)
    return 0


# --- report: a results directory as test cases


FIGURES = (("self_sti_nop", "self", "send-to-handler", "sti-nop"),
           ("send_cost", "send-cost", "send", None),
           ("single_round_trip", "single", "round-trip", None),
           ("single_halt_round_trip", "single-halt", "round-trip", None),
           ("broadcast_all_ack", "broadcast", "all-ack", None))
BROADCAST_ORDER = {"shorthand": 0, "set": 1, "loop": 2}


def headline_records(results):
    """{(backend, figure id): record} of the headline figures, picked as
    run.sh's summary table picks them (lib/lava.h): the first record of a
    figure, whatever its status; broadcast's by target count, then variant."""
    picked = {}
    for r in results:
        b = r.get("backend")
        if not isinstance(b, str) or b == "none":
            continue
        for fid, bench, metric, variant in FIGURES:
            if (r.get("bench"), r.get("metric")) != (bench, metric) or \
                    (variant is not None and r.get("variant") != variant):
                continue
            old = picked.get((b, fid))
            if bench == "broadcast" and old is not None:
                def rank(x):
                    return (x.get("ntargets", 0), -BROADCAST_ORDER.get(x.get("variant"), 3))
                if rank(r) > rank(old):
                    picked[(b, fid)] = r
            else:
                picked.setdefault((b, fid), r)
    return picked


def headline(results):
    """{case id: (value, units, record)} of the headline figures: what the
    guest prints with lava=1, rebuilt for a console that lacks its lines.
    Cycles always; ns where the TSC frequency is known and not guessed."""
    out = {}
    picked = headline_records(results)
    backends = []
    for b, _ in picked:
        if b not in backends:
            backends.append(b)
    for b in backends:
        for fid, *_ in FIGURES:
            r = picked.get((b, fid))
            if not r or r.get("status") != "SUCCESS" or not isinstance(r.get("cycles"), dict):
                continue
            out[f"{slug(b)}_{fid}_p50_cycles"] = (r["cycles"]["p50"], "cycles", r)
            ns = r.get("ns")
            untrusted = r.get("untrusted") if isinstance(r.get("untrusted"), list) else []
            if isinstance(ns, dict) and "tsc-freq-guessed" not in untrusted:
                out[f"{slug(b)}_{fid}_p50_ns"] = (ns["p50"], "ns", r)
    return out


def tap_cases(console):
    """[(id, result)] from TAP lines, for a console without the guest's case
    lines. A failing line holds its first problem after the name, which
    cannot be told apart from it: such ids are longer than lava=1's."""
    out = []
    for m in re.finditer(r"^(not )?ok \d+ - (.*?)(?: # SKIP .*)?$", console, re.M):
        out.append((slug(m.group(2)), "fail" if m.group(1) else
                    "skip" if " # SKIP " in m.group(0) else "pass"))
    return out


def load_dir(path):
    """(results document or None, console text) of a run.sh results directory."""
    doc, console = None, ""
    try:
        with open(os.path.join(path, "console.log"), encoding="utf-8", errors="replace") as f:
            console = f.read().replace("\r", "")
    except OSError:
        pass
    if os.path.isfile(os.path.join(path, "results.json")):
        doc = load_json(os.path.join(path, "results.json"))
    return doc, console


def status_of(doc, console):
    run = (doc or {}).get("run") or {}
    if isinstance(run.get("status"), str) and run["status"]:
        return run["status"]
    m = re.findall(r"^ipibench: status (\S+)", console, re.M)
    return m[-1] if m else "NONE"


def cases_of(doc, console, prefix=""):
    """[(id, result, measurement or None, units or None)] of one run: the
    guest's cases and figures (lava=1) or the same rebuilt from its TAP lines
    and records; the correctness summary; each record's p50."""
    records = (doc or {}).get("records") or []
    results = [r for r in records if isinstance(r, dict) and r.get("record") == "result"]
    checks = [r for r in records if isinstance(r, dict) and r.get("record") == "check"]
    guest = CASE_LINE.findall(console)
    if guest:
        suite = [(i, res, None, None) for i, res in guest if i != STATUS_CASE]
    else:
        suite = [(i, res, None, None) for i, res in tap_cases(console)]
    out = suite + [(STATUS_CASE, result_of(status_of(doc, console)), None, None)]
    # correctness: every check passed, and the suite finished (its check
    # record); skip when no suite ran (plan=bench).
    if not checks and not suite:
        verdict = "skip"
    elif not checks or any(int(c.get("failed") or 0) for c in checks) or \
            any(r == "fail" for _, r, _, _ in suite):
        verdict = "fail"
    else:
        verdict = "pass"
    out.append(("correctness", verdict, None, None))
    figures = [(i, int(v), u) for i, v, u in FIGURE_LINE.findall(console)]
    if not figures:
        figures = [(i, v, u) for i, (v, u, _) in headline(results).items()]
    out += [(i, "pass", v, u) for i, v, u in figures]
    seen = {}
    for r in results:
        rid = "record_" + slug(row_name(row_key(r)))
        seen[rid] = seen.get(rid, 0) + 1
        if seen[rid] > 1:
            rid += f"_{seen[rid]}"
        cyc = r.get("cycles") if isinstance(r.get("cycles"), dict) else None
        if r.get("status") == "SUCCESS" and cyc:
            out.append((rid, "pass", cyc["p50"], "cycles"))
        else:
            out.append((rid, result_of(r.get("status")), None, None))
    return [(prefix + i, res, v, u) for i, res, v, u in out]


def host_refs(doc):
    """[(id, value)] of the host facts: what the test set `host` names.
    References, since lava-test-case carries no metadata from a DUT and a
    test definition's own `metadata:` is fixed when it is written."""
    host = (doc or {}).get("host") or {}
    out = []
    for key in ("cpu_model", "cpus", "kernel", "kernel_version", "qemu_version", "accel"):
        if host.get(key) not in (None, ""):
            out.append((key, host[key]))
    for k, v in sorted((host.get("kvm_params") or {}).items()):
        out.append((k, v))
    return [(slug("host " + k), re.sub(r"\s+", "_", str(v)) or "-") for k, v in out]


class Reporter:
    """lava-test-case and friends, or (dry run) the commands they would be."""

    def __init__(self, helpers, dry):
        self.helpers, self.dry = helpers, dry
        self.calls = 0

    def call(self, tool, *args):
        argv = [os.path.join(self.helpers, tool) if self.helpers else tool] + [str(a) for a in args]
        self.calls += 1
        if self.dry:
            print(shlex.join(argv))
            return 0
        return subprocess.call(argv)

    def case(self, cid, result, value=None, units=None):
        extra = ["--measurement", value, "--units", units] if value is not None else []
        return self.call("lava-test-case", cid, "--result", result, *extra)


def embed(path, name):
    """results.json, gzip and base64, between two marker lines: the job's log
    keeps it, and `import` takes it back out."""
    with open(path, "rb") as f:
        data = base64.b64encode(gzip.compress(f.read(), mtime=0)).decode()
    print(f"{EMBED_BEGIN} {name} {len(data)}")
    for i in range(0, len(data), 76):
        print(data[i:i + 76])
    print(EMBED_END)
    sys.stdout.flush()


def upload(folder, url):
    """PUT the results directory, as a .tar.gz a reader unpacks into a folder
    that compare reads, to url; None, or why not."""
    # Here, not at the top: urllib.request brings http.client and ssl, a
    # fifth of every run.sh start, for the one command that uploads.
    import urllib.request
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=os.path.basename(os.path.abspath(folder)))
    req = urllib.request.Request(url, data=buf.getvalue(), method="PUT",
                                 headers={"Content-Type": "application/gzip"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return None if 200 <= r.status < 300 else f"HTTP {r.status}"
    except (OSError, ValueError) as e:
        return str(e)


def cmd_report(a):
    helpers = a.helpers
    dry = a.dry_run or (not helpers and shutil.which("lava-test-case") is None)
    if dry and not a.dry_run:
        print("run.sh lava: no lava-test-case on PATH (not in a LAVA test shell): printing the calls", file=sys.stderr)
    doc, console = load_dir(a.dir)
    if doc is None and not console:
        raise ToolError(EX_MISSING, f"{a.dir}: neither results.json nor console.log")
    rep = Reporter(helpers, dry)
    for cid, result, value, units in cases_of(doc, console, a.prefix):
        rep.case(cid, result, value, units)
    refs = host_refs(doc)
    if refs:
        rep.call("lava-test-set", "start", "host")
        for cid, value in refs:
            rep.call("lava-test-reference", cid, "--result", "pass", "--reference", value)
        rep.call("lava-test-set", "stop")
    sys.stdout.flush()
    results = os.path.join(a.dir, "results.json")
    if not os.path.isfile(results):
        rep.case(a.prefix + "results", "fail")
        return 0
    if a.upload:
        name = f"{a.name or os.path.basename(os.path.abspath(a.dir))}.results.tar.gz"
        url = a.upload.rstrip("/") + "/" + name
        why = upload(a.dir, url)
        if why:
            print(f"run.sh lava: upload to {url} failed: {why}", file=sys.stderr)
        rep.call("lava-test-reference", a.prefix + "results", "--result",
                 "fail" if why else "pass", "--reference", url)
    if not a.no_embed:
        embed(results, a.name or os.path.basename(os.path.abspath(a.dir)))
    return 0


def cmd_report_ab(a):
    """`./run.sh ab`'s newest root under a.dir: its compare rows, B against A."""
    roots = sorted(d for d in (os.path.join(a.dir, n) for n in os.listdir(a.dir))
                   if os.path.isdir(d) and d.endswith("-" + a.label))
    dry = a.dry_run or (not a.helpers and shutil.which("lava-test-case") is None)
    rep = Reporter(a.helpers, dry)
    sides = sorted(d for d in (os.path.join(roots[-1], n) for n in os.listdir(roots[-1]))
                   if os.path.isdir(d)) if roots else []
    if len(sides) != 2:
        rep.case("ab", "fail")
        print(f"run.sh lava: no ab root with two sides under {a.dir}", file=sys.stderr)
        return 0
    p = subprocess.run([os.path.join(REPO, "run.sh"), "compare",
                        "--format", "json", sides[0], sides[1]], capture_output=True, text=True)
    try:
        cmp = json.loads(p.stdout)
    except ValueError:
        rep.case("ab", "fail")
        return 0
    rep.case("ab", "pass" if not cmp.get("not_comparable") else "fail")
    for row in cmp.get("rows") or []:
        if isinstance(row.get("change_pct"), (int, float)):
            rep.case("ab_" + slug(row["row"]) + "_change", "pass", row["change_pct"], "percent")
    return 0


# --- import: a LAVA log back into a results directory


def _yaml_string(s):
    """A YAML double-quoted scalar's escapes JSON lacks, as JSON ones."""
    named = {"0": "\\u0000", "a": "\\u0007", "e": "\\u001b", "v": "\\u000b", "N": "\\u0085",
             "_": "\\u00a0", "L": "\\u2028", "P": "\\u2029", " ": " ", "/": "/"}

    def one(m):
        c = m.group(1)
        if c in named:
            return named[c]
        if c[0] == "x":
            return "\\u00" + c[1:]
        if c[0] == "U":
            return chr(int(c[1:], 16)).encode("unicode_escape").decode()
        return m.group(0)
    return re.sub(r"\\(x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|[0aevN_LP /]|.)", one, s)


def log_entries(text):
    """The {dt, lvl, msg} entries of a LAVA log: lava-run's standard output
    (one JSON object a line) or a server's output.yaml (`lavacli jobs logs
    --raw`: one flow mapping a line, "- " first)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:]
        if not line.startswith("{"):
            continue
        try:
            e = json.loads(line)
        except ValueError:
            # YAML's own spellings: a tag before a quoted scalar (lava-run
            # writes a float measurement as `! "1381.0"`), its escapes.
            try:
                e = json.loads(_yaml_string(re.sub(r'(?<=[:,\[{] )!!?[A-Za-z]* (?=")', "",
                                                   line)))
            except ValueError:
                continue
        if isinstance(e, dict):
            out.append(e)
    return out


def console_of(entries):
    """The DUT's console as LAVA logged it: a line has each '"' escaped
    (lava_dispatcher/shell.py, ShellLogger) and no carriage returns. What
    comes after the last monitor's end (the guest's status line) is logged
    at level feedback, as the dispatcher drains the connection."""
    return "\n".join(str(e.get("msg", "")).replace('\\"', '"') for e in entries
                     if e.get("lvl") in ("target", "feedback")) + "\n"


def embedded(console):
    """{name: results.json bytes} that report embedded in a console."""
    out, lines = {}, console.splitlines()
    for i, line in enumerate(lines):
        m = re.match(re.escape(EMBED_BEGIN) + r" (\S+) (\d+)$", line.strip())
        if not m:
            continue
        data = []
        for more in lines[i + 1:]:
            if more.strip() == EMBED_END:
                break
            data.append(more.strip())
        blob = "".join(data)
        if len(blob) == int(m.group(2)):
            out[m.group(1)] = gzip.decompress(base64.b64decode(blob))
    return out


def host_of(entries):
    """What the log says of the worker's QEMU: its command line and version."""
    host = {}
    for e in entries:
        msg = e.get("msg")
        if not isinstance(msg, str):
            continue
        if msg.startswith("Boot command: "):
            argv = shlex.split(msg[len("Boot command: "):])
            host["qemu_cmdline"] = argv
            host["qemu_binary"] = argv[0] if argv else ""
            for i, w in enumerate(argv[:-1]):
                if w == "-accel":
                    acc = argv[i + 1].split(",")[0]
                    host["accel"] = "tcg-single" if "thread=single" in argv[i + 1] else acc
                if w == "-enable-kvm":
                    host["accel"] = "kvm"
        m = re.match(r"qemu-system-\S+, installed at version: ([^\s,]+)", msg)
        if m:
            host["qemu_version"] = m.group(1)
        m = re.match(r"lava-dispatcher, installed at version: ([^\s,]+)", msg)
        if m:
            host["lava_dispatcher"] = m.group(1)
    return host


def started_of(entries):
    """run.started of a job's log: the time of its first entry that has one
    (`dt`, which lava-run and a server write in UTC, ISO 8601 without a
    zone), written as run.sh writes a boot's start (boot/run.py, utc_now),
    so that history orders imported jobs as it orders runs; None without."""
    for e in entries:
        try:
            t = datetime.datetime.fromisoformat(str(e.get("dt")))
        except ValueError:
            continue
        if t.tzinfo is not None:
            t = t.astimezone(datetime.timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def label_of(preset, host):
    """The label run.sh gives a boot of the same configuration (boot/qemu.py,
    default_label: preset, accel, machine, -smp), read from the job's QEMU
    command line: the same every night, so a series of imports is one
    configuration; None when the log names no accelerator."""
    argv = host.get("qemu_cmdline") or []
    if not host.get("accel"):
        return None
    value = {w: argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("-machine", "-M", "-smp")}
    machine = (value.get("-machine") or value.get("-M") or "pc").split(",")[0]
    label = f"{preset + '-' if preset else ''}{host['accel']}-{machine}-smp{value.get('-smp', '1')}"
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
    return label[1:] if label.startswith(".") else label


def with_host_type(data, host_type):
    """A DUT's results.json with host.host_type set (import --host-type)."""
    try:
        doc = json.loads(data)
        doc["host"]["host_type"] = host_type
        return dump_results(doc)
    except (ValueError, TypeError, KeyError):
        raise ToolError(EX_MALFORMED, "an embedded results.json is not a results document")


def cmd_import(a):
    # --host-type and --label become a history store's folder names.
    for value, what in ((a.host_type, "--host-type"), (a.label, "--label")):
        if value is not None:
            folder_name(value, what, EX_USAGE)
    try:
        with open(a.log, encoding="utf-8", errors="replace") as f:
            text = f.read()
        entries = [e for e in log_entries(text) if "lvl" in e]
    except OSError as e:
        raise ToolError(EX_MISSING, f"{a.log}: cannot read: {e.strerror}")
    # No log entries: the text is a console itself (a DUT test shell's output).
    console = console_of(entries) if entries else text.replace("\r", "")
    blobs = embedded(console)
    try:
        os.makedirs(a.out, exist_ok=True)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot create {a.out}: {e.strerror}")
    if blobs:
        # Each as the DUT saved it, run.started and all: one folder a boot.
        for name, data in blobs.items():
            where = a.out if len(blobs) == 1 else os.path.join(a.out, folder_name(
                re.sub(r"[^\w.-]", "_", name), f"{a.log}: the embedded results' name",
                EX_MALFORMED))
            os.makedirs(where, exist_ok=True)
            text = data.decode("utf-8")
            write_new(os.path.join(where, "results.json"),
                      with_host_type(text, a.host_type) if a.host_type else text)
            print(f"run.sh lava: {where}/results.json: the DUT's results ({name})")
        return 0
    records, problems = parse_console(console)
    if not records:
        raise ToolError(EX_MISSING, f"{a.log}: no ipibench records and no embedded results in this log (a LAVA job log: lava-run's output, or `lavacli jobs logs --raw`)")
    host = host_of(entries)
    if a.host_type:
        host["host_type"] = a.host_type
    label = a.label or label_of(a.preset, host) or os.path.basename(os.path.abspath(a.out))
    host["warnings"] = [{"id": "tcg", "text": "QEMU TCG: every instruction emulated; only "
                         "behaviour counts"}] if str(host.get("accel", "")).startswith("tcg") \
        else []
    m = re.findall(r"^ipibench: status (\S+)", console, re.M)
    run = {"label": label, "config": label, "preset": a.preset, "status": m[-1] if m else None,
           "console": "console.log", "source": "lava", "lava_job": a.job}
    started = started_of(entries)
    if started:
        run["started"] = started
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, "host": host, "run": run,
           "problems": problems, "records": records}
    write_new(os.path.join(a.out, "console.log"), console)
    write_new(os.path.join(a.out, "results.json"), dump_results(doc))
    print(f"run.sh lava: {a.out}/results.json: {len(records)} records from the guest's console")
    return 0


def count(text):
    """An option's count of boots: a whole number, at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"takes a count of boots (1 or more), not '{text}'")
    return int(text)


def tag_list(text):
    """--tags: LAVA's tags are slugs (letters, digits, '_' and '-'), given
    comma-separated; each once, in the order given."""
    tags = []
    for t in (t.strip() for t in text.split(",")):
        if not re.fullmatch(r"[A-Za-z0-9_-]+", t):
            raise argparse.ArgumentTypeError(f"takes device tags, TAG[,TAG...], each of letters, digits, '_' and '-': not '{t}'")
        if t not in tags:
            tags.append(t)
    return tags


def add_lava(sub):
    """`./run.sh lava`, added to run.sh's subcommands: its parser."""
    p = sub.add_parser("lava", prog="./run.sh lava", description=__doc__.split("\n\n")[0],
                       help="LAVA jobs, their results as lava-test-case calls, a job's log "
                       "into a results directory (docs/lab.md)")
    add_arguments(p)
    return p


def add_arguments(p):
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("job", help="print a LAVA job for the qemu device type")
    j.add_argument("--kernel-url", required=True, help="where the worker fetches "
                   "build/ipibench.elf32: a URL, or a path here (file://, for lava-run)")
    j.add_argument("--preset", help="a configuration of host/ipibench/presets.conf: its -cpu flags, "
                   "-smp and QEMU arguments")
    j.add_argument("--accel", default="kvm", choices=("kvm", "tcg", "tcg-single"))
    j.add_argument("--cpu", help="base -cpu model (default host under KVM, max under TCG)")
    j.add_argument("--smp", type=int, help="vCPUs (default: the preset's, else 2)")
    j.add_argument("--machine", default="q35")
    j.add_argument("--memory", type=int, default=256, help="MiB (default 256)")
    j.add_argument("--append", default="", help="more of the guest's command line "
                   "(lava=1 is always there), e.g. 'plan=check'")
    j.add_argument("--name", help="job_name")
    j.add_argument("--minutes", type=int, default=30, help="the test action's timeout")
    j.add_argument("--tags", metavar="TAG[,TAG...]", type=tag_list, default=[],
                   help="device tags (the job's tags:, also in its metadata): LAVA runs the job "
                   "only on a device that has them all, e.g. the CPU generation's")
    j.add_argument("--output", "-o", help="write here instead of standard output")
    t = sub.add_parser("dut-test", help="the test action of a job on a KVM host (the DUT): "
                       "lava/ipibench-kvm-host.yaml inline")
    t.add_argument("--repo", required=True, help="the ipibench git URL the worker clones")
    t.add_argument("--revision", default="", help="a commit, tag or branch of it "
                   "(default: its default branch)")
    t.add_argument("--preset", default="x2apic")
    t.add_argument("--accel", default="kvm", choices=("kvm", "tcg", "tcg-single"))
    t.add_argument("--append", default="", help="more of the guest's command line")
    t.add_argument("--module-param", default="", help="MODULE.PARAM=A,B: also ./run.sh ab "
                   "over it (root on the DUT)")
    t.add_argument("--boots", metavar="N", type=count, default=5, help="boots of the preset, "
                   "one configuration for compare and history (default 5)")
    t.add_argument("--exits", action="store_true", help="one more boot with run.sh --exits "
                   "(root on the DUT, KVM's tracepoints in tracefs): instrumented timings, a "
                   "series of its own in history")
    t.add_argument("--ab-boots", metavar="N", type=count, default=3,
                   help="ab's boots a side (default 3)")
    t.add_argument("--upload", default="", help="a URL that takes a PUT of the results "
                   "directory (.tar.gz)")
    t.add_argument("--minutes", type=int, default=60)
    t.add_argument("--output", "-o", help="write here instead of standard output")
    d = sub.add_parser("device", help="the qemu device dictionary a LAVA server renders for "
                       "a job's context, for lava-run on this machine")
    d.add_argument("job", help="a job `job` wrote")
    d.add_argument("--base", default=BASE_DEVICE, help="the device dictionary to fill in "
                   "(default tests/lava/qemu.yaml)")
    d.add_argument("--output", "-o", help="write here instead of standard output")
    r = sub.add_parser("report", help="a results directory as lava-test-case calls")
    r.add_argument("dir")
    r.add_argument("--prefix", default="", help="put before every case id")
    r.add_argument("--name", help="the results' name in the log and the upload "
                   "(default: the directory's)")
    r.add_argument("--upload", default="", help="PUT the results directory (.tar.gz) under "
                   "this URL and name it with lava-test-reference")
    r.add_argument("--no-embed", action="store_true", help="do not print results.json "
                   "into the log")
    r.add_argument("--helpers", help="folder of lava-test-case & co (default: PATH)")
    r.add_argument("--dry-run", action="store_true", help="print the calls, make none")
    b = sub.add_parser("report-ab", help="the newest ./run.sh ab root under a folder")
    b.add_argument("dir")
    b.add_argument("--label", default="ab")
    b.add_argument("--helpers")
    b.add_argument("--dry-run", action="store_true")
    i = sub.add_parser("import", help="a LAVA job log into a results directory")
    i.add_argument("log", help="lava-run's output, or `lavacli jobs logs --raw ID`")
    i.add_argument("out", help="the results directory to write (run.sh compare reads it)")
    i.add_argument("--label", help="run.label and run.config (default: run.sh's label of "
                   "the job's preset, accel, machine and -smp, else the folder's name)")
    i.add_argument("--preset", help="the preset the job ran (kept in run.preset)")
    i.add_argument("--job", help="the LAVA job id, kept in run.lava_job")
    i.add_argument("--host-type", metavar="NAME", help="the device's CPU generation (e.g. its "
                   "tag), kept in host.host_type: history groups runs by it where the log "
                   "has no CPU model (the qemu device type)")


COMMANDS = {"job": cmd_job, "dut-test": cmd_dut_test, "device": cmd_device,
            "report": cmd_report, "report-ab": cmd_report_ab, "import": cmd_import}


def main(argv):
    """`./run.sh lava ARGS` -> its exit status."""
    p = Parser(prog="./run.sh lava", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    a = p.parse_args(argv)
    a.given = {w.split("=", 1)[0] for w in argv if w.startswith("--")}
    try:
        return COMMANDS[a.cmd](a)
    except ToolError as e:
        print(f"run.sh lava: {e.message}", file=sys.stderr)
        return e.code

