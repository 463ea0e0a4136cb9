#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ipibench in a LAVA lab, tested with LAVA's own engine (docs/lab.md):

- the guest job (./run.sh lava job, LAVA's qemu device type) run by
  lava-run on the device dictionary of tests/lava/qemu.yaml: one LAVA test
  case per check the guest printed, with its verdict and its whole name as
  the id; the headline figures as measurements equal to what run.sh's
  summary table shows of the same console and to `./run.sh compare`'s
  values for the results `import` rebuilds from the job's log;
- a planted failure (debug=swallow-ipi): LAVA records the failing checks
  and ipibench_status as fails;
- the test definition lava/ipibench-kvm-host.yaml's install and run steps,
  written out as the dispatcher writes them and run by its own
  lava-test-runner with the helpers of lava_dispatcher/lava_test_shell, on
  two TCG boots and a traced one that run.sh refuses under TCG: the result
  files lava-test-case leaves, the second boot's prefixed ids, the refused
  boot's failed case with the steps going on, the signals, and the
  results.json of each boot that the log carries back as one configuration.

One boot a case (the test definition's: two), at -smp 2 under TCG. The dispatcher's own modules are
Python 3 packages of the system (lava-dispatcher, with python3-yaml, its
dependency, used here to read what it writes): when the `python3` running
this lacks them, the test runs itself again with lava-run's interpreter."""
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "host"))
sys.path.insert(0, os.path.join(REPO, "tests", "host"))

GROUP = "lava"
# A small plan with every headline figure on two backends.
PLAN = "backends=xapic,x2apic bench=self,send-cost,single,single-halt,broadcast budget=20"


def skip_all(why):
    for name in ("guest job", "planted failure", "test definition"):
        print(f"ok - {GROUP}: {name} # SKIP {why}")
    return 0


def lava_python():
    """The interpreter lava-run runs under, or None."""
    path = shutil.which("lava-run")
    if not path:
        return None
    with open(path) as f:
        first = f.readline()
    return first[2:].strip().split()[0] if first.startswith("#!") else None


try:
    import yaml
    import lava_dispatcher
except ImportError:
    py = lava_python()
    if not py:
        sys.exit(skip_all("no lava-run (tools/deps.sh test installs lava-dispatcher)"))
    if os.path.realpath(py) == os.path.realpath(sys.executable) or os.environ.get("IPIBENCH_LAVA_REEXEC"):
        sys.exit(skip_all(f"{py} cannot import lava_dispatcher and yaml"))
    os.environ["IPIBENCH_LAVA_REEXEC"] = "1"
    os.execv(py, [py] + sys.argv)

from harness import check, registry, run_cases  # noqa: E402

from ipibench.boot import headline as H  # noqa: E402
from ipibench.compare.model import row_key, row_name  # noqa: E402
from ipibench.lab import cases as LC, jobs as LJ, lava as L  # noqa: E402
from ipibench.lab import log_import as LI, protocol as LP  # noqa: E402
from ipibench.results.files import load_results_file  # noqa: E402

CASES, case = registry()
HELPERS = os.path.join(os.path.dirname(lava_dispatcher.__file__), "lava_test_shell")
IMAGE = os.path.join(REPO, "build", "ipibench.elf32")


class Ctx:
    def __init__(self, tmp):
        self.tmp, self.jobs = tmp, 0


def lava_run(ctx, append, name):
    """lava-run of a guest job with this command line: (exit, entries, log path, job)."""
    ctx.jobs += 1
    job = LJ.job_text("file://" + IMAGE, accel="tcg-single", smp=2, append=append, minutes=4,
                      name=f"ipibench test {name}")
    base = os.path.join(ctx.tmp, name)
    os.makedirs(base)
    with open(os.path.join(base, "job.yaml"), "w") as f:
        f.write(job)
    with open(os.path.join(base, "device.yaml"), "w") as f:
        f.write(LJ.device_text(job))
    log = os.path.join(base, "job.log")
    # The job id names the dispatcher's scratch folder under /var/lib/lava:
    # this process's own, so two runs of the suite never share one.
    with open(log, "w") as out:
        rc = subprocess.call(["lava-run", "--job-id", f"ipibench-{os.getpid()}-{ctx.jobs}",
                              "--output-dir", os.path.join(base, "out"), "--device",
                              os.path.join(base, "device.yaml"), os.path.join(base, "job.yaml")],
                             stdout=out, stderr=subprocess.STDOUT, timeout=300)
    with open(log) as f:
        entries = [yaml.safe_load(line) for line in f if line.startswith("{")]
    return rc, [e for e in entries if isinstance(e, dict)], log, yaml.safe_load(job)


def lava_results(entries, definition):
    return [e["msg"] for e in entries if e.get("lvl") == "results"
            and e["msg"].get("definition") == definition]


def job_verdict(entries):
    done = [r for r in lava_results(entries, "lava") if r.get("case") == "job"]
    return done[-1]["result"] if done else None


def tap_lines(console):
    """[(verdict, text)] of the console's check lines, text without "# SKIP ..."."""
    out = []
    for line in console.splitlines():
        m = re.match(r"(not )?ok \d+ - (.*?)(?: # SKIP (.*))?$", line)
        if m:
            out.append(("fail" if m.group(1) else "skip" if m.group(3) is not None else "pass",
                        m.group(2)))
    return out


def import_log(log, out):
    with contextlib.redirect_stdout(io.StringIO()):
        rc = L.main(["import", log, out])
    check(rc == 0, f"import {log} exited {rc}")
    return load_results_file(os.path.join(out, "results.json"))


def compare_values(path, unit):
    p = subprocess.run(["./run.sh", "compare", "--format", "json", "--unit", unit, path, path],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"compare exited {p.returncode}: {p.stderr[-400:]}")
    doc = json.loads(p.stdout)
    check(not doc["not_comparable"], f"compare refused: {doc['not_comparable']}")
    return {row["row"]: row["a"] for row in doc["rows"]}


@case("guest job: a LAVA case per check with its verdict and whole name; the figures are "
      "run.sh's summary's and compare's")
def _(ctx):
    # --tags: LAVA's job schema takes the job with its tags list.
    from lava_common.schemas import validate
    validate(yaml.safe_load(LJ.job_text("file://" + IMAGE, preset="x2apic",
                                        tags=["epyc-7702", "zen2"])))
    rc, entries, log, job = lava_run(ctx, PLAN, "guest")
    check(rc == 0 and job_verdict(entries) == "pass",
          f"lava-run exited {rc}, job {job_verdict(entries)}: see {log}")
    # -accel, -cpu and -smp came from the job's context into QEMU's command.
    boot = [e["msg"] for e in entries if str(e.get("msg", "")).startswith("Boot command: ")]
    check(boot, "no Boot command in the log")
    for opt in job["context"]["extra_options"]:
        check(f" {opt} " in boot[0] + " ", f"{opt!r} of the context not in {boot[0]}")
    console = LI.console_of(entries)
    taps = tap_lines(console)
    cases = [r for r in lava_results(entries, LP.SUITE) if r["case"] != LP.STATUS_CASE]
    check(len(taps) >= 40, f"only {len(taps)} checks on the console")
    check(len(cases) == len(taps), f"LAVA recorded {len(cases)} cases for {len(taps)} checks")
    for (verdict, text), got in zip(taps, cases):
        want = LP.slug(text)
        check(got["case"] == want and got["result"] == verdict,
              f"check {text!r} ({verdict}): LAVA has {got['case']} {got['result']}")
    status = [r["result"] for r in lava_results(entries, LP.SUITE) if r["case"] == LP.STATUS_CASE]
    check(status == ["pass"] and "ipibench: status SUCCESS" in console, f"status {status}")
    figures = {r["case"]: r for r in lava_results(entries, LP.FIGURE_SUITE)}
    # What run.sh's summary shows of this console, backend by backend.
    boot_ = import_log(log, os.path.join(ctx.tmp, "guest", "imported"))
    tsc_known = bool((boot_.env.get("tsc") or {}).get("khz"))
    want = {}
    for b in ("xapic", "x2apic"):
        cyc, ns = H.headline(boot_.results, b, tsc_known)
        for i, (fid, *_) in enumerate(LC.FIGURES):
            for cell, unit in ((cyc[i], "cycles"), (ns[i], "ns")):
                if cell.isdigit():
                    want[f"{b}_{fid}_p50_{unit}"] = (int(cell), unit)
    check(len(want) == 20, f"the summary shows {len(want)} figures, not 20: {sorted(want)}")
    check(set(figures) == set(want), f"LAVA's figures {sorted(figures)} != the summary's "
          f"{sorted(want)}")
    for cid, (value, unit) in want.items():
        got = figures[cid]
        check(float(got["measurement"]) == value and got["units"] == unit and
              got["result"] == "pass", f"{cid}: LAVA {got}, summary {value} {unit}")
    # ./run.sh compare of the results rebuilt from the job's log agrees.
    path = os.path.join(ctx.tmp, "guest", "imported")
    rows = {u: compare_values(path, u) for u in ("cycles", "ns")}
    picked = LC.headline_records(boot_.results)
    for cid, (value, unit) in want.items():
        b, fid = next((b, f) for (b, f) in picked if cid == f"{b}_{f}_p50_{unit}")
        row = row_name(row_key(picked[(b, fid)]))
        check(rows[unit].get(row) == value, f"{cid}: compare's {row} is "
              f"{rows[unit].get(row)}, LAVA's {value}")
    # A server's log (`lavacli jobs logs --raw`: YAML flow mappings) imports the same.
    raw = os.path.join(ctx.tmp, "guest", "raw.yaml")
    with open(raw, "w") as f:
        for e in entries:
            f.write("- " + yaml.dump(e, default_flow_style=True, default_style='"',
                                     width=10 ** 6)[:-1] + "\n")
    again = import_log(raw, os.path.join(ctx.tmp, "guest", "from-raw"))
    check(again.records == boot_.records, "the raw server log imported other records")


@case("planted failure: debug=swallow-ipi makes LAVA record the failing checks and the status")
def _(ctx):
    # deadline=200: the lost IPI is a FAILURE after 200 ms, not TCG's 10 s.
    rc, entries, log, _ = lava_run(ctx, "plan=check backends=xapic debug=swallow-ipi "
                                   "deadline=200", "fail")
    check(rc == 0 and job_verdict(entries) == "pass",
          f"lava-run exited {rc}, job {job_verdict(entries)} (the job completes: its cases "
          f"fail): see {log}")
    console = LI.console_of(entries)
    failing = [text for verdict, text in tap_lines(console) if verdict == "fail"]
    cases = lava_results(entries, LP.SUITE)
    fails = [r["case"] for r in cases if r["result"] == "fail" and r["case"] != LP.STATUS_CASE]
    check(failing and len(fails) == len(failing), f"{len(failing)} not-ok lines, LAVA failed "
          f"{fails}")
    for text, cid in zip(failing, fails):
        # A not-ok line holds the name, then the first problem.
        check(LP.slug(text).startswith(cid + "_"), f"{cid} is not the name of {text!r}")
    status = [r["result"] for r in cases if r["case"] == LP.STATUS_CASE]
    check(status == ["fail"] and "ipibench: status FAILURE" in console, f"status {status}")


def helpers_bin(where):
    """The helpers as the dispatcher puts them on a DUT (overlay.py): each
    script with the shell's #! line first, in the overlay's bin/."""
    os.makedirs(where)
    for name in sorted(os.listdir(HELPERS)):
        src = os.path.join(HELPERS, name)
        if not os.path.isfile(src):
            continue
        with open(src) as f, open(os.path.join(where, name), "w") as out:
            out.write("#!/bin/sh\n\n" + f.read())
        os.chmod(os.path.join(where, name), 0o755)


def test_scripts(testdef, params, runner, name):
    """install.sh and run.sh as lava_dispatcher/actions/deploy/testdef.py
    writes them: parameters by its own handle_parameters(), then the steps."""
    import logging
    from lava_dispatcher.actions.deploy.testdef import TestRunnerAction

    class Stub:
        parameters = {"parameters": params}
        logger = logging.getLogger("lava")
    head = "".join(TestRunnerAction.handle_parameters(Stub(), testdef))
    install = head + f"cd {runner}\npwd\n" + "".join(s + "\n" for s in testdef["install"]["steps"])
    run = head + ("set -e\nset -x\n"
                  f"export TESTRUN_ID={name}\n"
                  f"cd {runner}\n"
                  "UUID=`cat uuid`\n"
                  "set +x\n"
                  'echo "<LAVA_SIGNAL_STARTRUN $TESTRUN_ID $UUID>"\n'
                  "set -x\n"
                  + "".join(s + "\n" for s in testdef["run"]["steps"] if s is not None)
                  + "set +x\n"
                  'echo "<LAVA_SIGNAL_ENDRUN $TESTRUN_ID $UUID>"\n')
    return install, run


@case("test definition: its steps under lava-test-runner with LAVA's helpers: two TCG "
      "boots, a refused traced one")
def _(ctx):
    from lava_common.schemas import validate_action
    from lava_common.schemas.test.testdef import validate as validate_testdef
    with open(os.path.join(REPO, "lava", "ipibench-kvm-host.yaml")) as f:
        validate_testdef(yaml.safe_load(f))
    # The job's test action as dut-test writes it, checked against LAVA's job schema.
    # Two boots, and the traced one, which run.sh refuses under TCG (exit
    # 29, nothing saved): the steps go on, and LAVA records its results as a fail.
    action = yaml.safe_load(LJ.dut_test_text(
        "https://example.org/ipibench.git", preset="x2apic", accel="tcg-single",
        append="backends=x2apic bench=self,send-cost,single,broadcast budget=20", boots=2,
        exits=True))[0]["test"]
    validate_action("test.definition", 0, action, strict=True)
    definition = action["definitions"][0]
    testdef = definition["repository"]
    name = "0_" + definition["name"]
    clone = re.sub(r"\.git$", "", testdef["install"]["git-repos"][0]).rsplit("/", 1)[-1]
    lava = os.path.join(ctx.tmp, "lava-1")
    helpers_bin(os.path.join(lava, "bin"))
    runner = os.path.join(lava, "0", "tests", name)
    # The runner's folder as the dispatcher fills it: the inline definition
    # at its path, uuid, and git-repos' clone (here this tree's entries,
    # linked; results/ is the clone's own).
    os.makedirs(os.path.join(runner, clone))
    for entry in os.listdir(REPO):
        if entry not in (".git", "results"):
            os.symlink(os.path.join(REPO, entry), os.path.join(runner, clone, entry))
    os.makedirs(os.path.join(runner, os.path.dirname(definition["path"])))
    with open(os.path.join(runner, definition["path"]), "w") as f:
        yaml.safe_dump(testdef, f)
    with open(os.path.join(runner, "uuid"), "w") as f:
        f.write("1_1.1\n")
    install, run = test_scripts(testdef, {}, runner, name)
    for fname, text in (("install.sh", install), ("run.sh", run)):
        with open(os.path.join(runner, fname), "w") as f:
            f.write(text)
    with open(os.path.join(lava, "0", "lava-test-runner.conf"), "w") as f:
        f.write(runner + "\n")
    p = subprocess.run(["/bin/sh", os.path.join(lava, "bin", "lava-test-runner"),
                        os.path.join(lava, "0")], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    with open(os.path.join(ctx.tmp, "dut.log"), "w") as f:
        f.write(out)
    where = f"see {ctx.tmp}/dut.log"
    check(f"<LAVA_SIGNAL_STARTRUN {name} " in out and f"<LAVA_SIGNAL_ENDRUN {name} " in out,
          f"the run did not start and end: {where}")
    odirs = [d for d in os.listdir(os.path.join(lava, "0", "results")) if d.startswith(name)]
    check(len(odirs) == 1, f"result folders {odirs}")
    odir = os.path.join(lava, "0", "results", odirs[0])

    def read(*parts):
        with open(os.path.join(odir, *parts)) as f:
            return f.read().strip()
    check(read("install_return_code") == "0" and read("return_code") == "0",
          f"install {read('install_return_code')}, run {read('return_code')}: {where}")
    got = {d: {k: read("results", d, k) for k in ("result", "measurement", "units")
               if os.path.exists(os.path.join(odir, "results", d, k))}
           for d in os.listdir(os.path.join(odir, "results"))}
    signals = re.findall(r"^<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=(\S+) RESULT=([a-z]+)", out, re.M)
    check(len(signals) == len(got) and all(got[c]["result"] == r for c, r in signals),
          f"{len(signals)} TESTCASE signals for {len(got)} result folders")
    saved = os.path.join(runner, clone, testdef["params"]["RESULTS"], "boot1")
    boot = load_results_file(os.path.join(saved, "results.json"))
    with open(os.path.join(saved, "console.log")) as f:
        console = f.read()
    check(got.get(LP.STATUS_CASE, {}).get("result") == "pass" and
          got.get("correctness", {}).get("result") == "pass",
          f"ipibench_status {got.get(LP.STATUS_CASE)}, correctness {got.get('correctness')}")
    taps = tap_lines(console)
    check(len(taps) >= 20, f"{len(taps)} checks")
    for verdict, text in taps:
        check(got.get(LP.slug(text), {}).get("result") == verdict, f"check {text!r}: "
              f"{got.get(LP.slug(text))}")
    cyc, ns = H.headline(boot.results, "x2apic", bool((boot.env.get("tsc") or {}).get("khz")))
    shown = 0
    for i, (fid, *_) in enumerate(LC.FIGURES):
        for cell, unit in ((cyc[i], "cycles"), (ns[i], "ns")):
            if cell.isdigit():
                shown += 1
                cid = f"x2apic_{fid}_p50_{unit}"
                check(got.get(cid) == {"result": "pass", "measurement": cell, "units": unit},
                      f"{cid}: {got.get(cid)}, the summary shows {cell} {unit}")
    check(shown == 8, f"{shown} figures in the summary")
    recs = [d for d in got if d.startswith("record_")]
    check(len(recs) == len(boot.results), f"{len(recs)} record cases, {len(boot.results)} records")
    model = str(boot.host.get("cpu_model") or "-")
    ref = re.sub(r"\s+", "_", model)
    check("<LAVA_SIGNAL_TESTSET START host>" in out and
          f"<LAVA_SIGNAL_TESTREFERENCE host_cpu_model pass {ref}>" in out,
          f"no host facts for {model!r}")
    # The second boot: the same cases, each id after boot2_.
    again = {d[len("boot2_"):]: v["result"] for d, v in got.items() if d.startswith("boot2_")}
    check(set(again) == {d for d in got if not d.startswith(("boot2_", "exits_"))} and
          again.get(LP.STATUS_CASE) == "pass", f"boot 2: {len(again)} cases, "
          f"ipibench_status {again.get(LP.STATUS_CASE)}")
    check(got.get("exits_results", {}).get("result") == "fail" and
          "ipibench: run.sh exited 29 (exits)" in out, f"the refused traced boot: "
          f"{got.get('exits_results')}")
    # The log carries each boot's results.json back, as it was saved: one configuration.
    imp = os.path.join(ctx.tmp, "dut-imported")
    with contextlib.redirect_stdout(io.StringIO()):
        check(L.main(["import", os.path.join(ctx.tmp, "dut.log"), imp]) == 0, "import")
    check(sorted(os.listdir(imp)) == ["x2apic-boot1", "x2apic-boot2"], f"{os.listdir(imp)}")
    for n in (1, 2):
        with open(os.path.join(imp, f"x2apic-boot{n}", "results.json")) as a, \
                open(os.path.join(os.path.dirname(saved), f"boot{n}", "results.json")) as b:
            check(a.read() == b.read(), f"the imported results.json of boot {n} differs from "
                  "the saved one")
    configs = {load_results_file(os.path.join(imp, d, "results.json")).config()
               for d in os.listdir(imp)}
    check(len(configs) == 1, f"the boots' configurations: {configs}")


def main():
    if os.geteuid() != 0:
        return skip_all("lava-run needs root (its scratch space is /var/lib/lava)")
    if not os.path.exists(IMAGE):
        return skip_all(f"no {IMAGE} (make)")
    tmp = tempfile.mkdtemp(prefix="ipibench-lava-")
    try:
        bad = run_cases(CASES, GROUP, Ctx(tmp), also=(OSError, KeyError, ValueError,
                                                      subprocess.TimeoutExpired))
    finally:
        if not os.environ.get("IPIBENCH_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
