# SPDX-License-Identifier: GPL-2.0-only
"""A run.sh results directory as LAVA test cases (`./run.sh lava report`),
for the test definition lava/ipibench-kvm-host.yaml on a KVM host (a DUT):
the guest's cases and figures (run with lava=1, or rebuilt from its TAP
lines and records), the correctness summary, every record's p50, host facts
under the test set `host`, and results.json for `import` (embedded in the
log, or uploaded and named with lava-test-reference); `report-ab`, an ab
root's compare rows."""
import base64
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
from ipibench.compare.model import row_key, row_name
from ipibench.exit_codes import EX_MISSING, ToolError
from ipibench.lab.protocol import (CASE_LINE, EMBED_BEGIN, EMBED_END, FIGURE_LINE, slug,
                                   STATUS_CASE)
from ipibench.results.files import load_json


def result_of(status):
    """A guest or record status as a LAVA result."""
    return {"SUCCESS": "pass", "SKIP": "skip"}.get(status, "fail")


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

