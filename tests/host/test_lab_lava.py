#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""host/ipibench/lab/ without LAVA (tests/lava/test_lava.py runs the
real dispatcher): case ids as LAVA keeps them, the jobs and the device
dictionary it writes, the lava-test-case calls of `report` (dry run), the
headline figures picked as run.sh's summary picks them, and `import` of a
job's log in both of LAVA's spellings, the DUT's embedded results.json
included."""
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from harness import call, check, IPIBENCH, registry, REPO, run_cases, run_cmd, selected
import synth

from ipibench.boot import headline as H
from ipibench.compare.model import row_key
from ipibench.boot.qemu import default_label
from ipibench.boot.run import utc_now
from ipibench.exit_codes import EX_PRESET, EX_SAVE, ToolError
from ipibench.kvmhost.trace import TRACE_FILE as KVM_TRACE_FILE
from ipibench.lab import cases as LC, jobs as LJ, lava as L, protocol as LP
from ipibench.results.files import load_results_file, load_set, split_by_config
from ipibench.boot.save import save_run
from ipibench.results.saved import figure_cmdline


HERE = os.path.dirname(os.path.abspath(__file__))

CASES, case = registry()
EXAMPLE_URL = "https://example.org/ipibench/ipibench.elf32"


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()):
        rc = fn(*args)
    return rc, out.getvalue()


def context_options(job):
    return [json.loads(m) for m in re.findall(r'^  - (".*")$', job, re.M)]


def records(tsc_guessed=False):
    """A boot's records: two backends, every headline figure, traps for the picks."""
    rng = synth.random.Random(3)
    rows = dict(synth.ROWS)
    rows[("single-halt", "round-trip", "none", "x2apic", "halt", 1)] = 9000
    rows[("self", "send-to-handler", "sti-hlt", "x2apic", "self", 1)] = 1500  # not the headline
    for n in (1, 2, 3):
        rows[("broadcast", "all-ack", "loop", "x2apic", "spin", n)] = 9000 + n
    rows[("broadcast", "all-ack", "shorthand", "x2apic", "spin", 2)] = 7000
    recs = synth.boot_records(rng, rows, 0.01, 0.05, 50, 4, "CPUID 0x15")
    # A SKIP first: the summary shows it (no figure), not the later SUCCESS.
    skip = synth.result(("single-halt", "round-trip", "none", "xapic", "halt", 1), status="SKIP")
    later = synth.result(("single-halt", "round-trip", "block", "xapic", "halt", 1), [500] * 5)
    recs[2:2] = [skip, later]
    if tsc_guessed:
        for r in recs:
            if r.get("record") == "result" and r.get("backend") == "xapic":
                r["untrusted"] = ["tsc-freq-guessed"]
    return recs


def results_dir(tmp, name, console_lines, recs, status="SUCCESS", label=None, trace=None,
                started="2026-01-01T00:00:00Z"):
    """A run.sh results directory, saved by run.sh's own save (boot/save.py);
    trace: a KVM trace to save beside it, as run.sh --exits does."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write("\n".join(console_lines) + "\n" + synth.console(recs, status))
    if trace:
        shutil.copyfile(trace, os.path.join(d, KVM_TRACE_FILE))
    rc, _, err = call(save_run, d, label=label or name, accel="kvm", status=status, qemu_exit=65,
                      qemu_version="QEMU emulator version 9.2.0",
                      started=started, seconds=1, qemu=["qemu-system-x86_64"])
    check(rc == 0, f"save exited {rc}: {err}")
    return d


def report_calls(d, *extra):
    rc, out, err = run_cmd(IPIBENCH + ["lava", "report", d,
                            "--dry-run", *extra])
    check(rc == 0, f"report exited {rc}: {err[-300:]}")
    return [shlex.split(line) for line in out.splitlines()
            if line.startswith(("lava-test-", "ipibench-results"))], out


def cases_of_calls(calls):
    """{id: (result, measurement, units)} of the lava-test-case calls."""
    out = {}
    for c in calls:
        if c[0] != "lava-test-case":
            continue
        args = dict(zip(c[2::2], c[3::2]))
        out[c[1]] = (args["--result"], args.get("--measurement"), args.get("--units"))
    return out


@case("slugs: the guest's ids (lib/lava.c's examples), which LAVA's monitor keeps as they are")
def _(_):
    for text, want in (("xapic: CPU 0 -> CPU 1, vector 0x43", "xapic_cpu_0_cpu_1_vector_0x43"),
                       ("  --hv_ipi-ex  {0-3}.. ", "hv_ipi_ex_0_3"), (" :-) ", ""),
                       ("x2apic (again): TPR 0x60 holds vector 0x65 on CPU 0 (self-IPI on CPU 0) "
                        "until TPR drops", "x2apic_again_tpr_0x60_holds_vector_0x65_on_cpu_0_self"
                        "_ipi_on_cpu_0_until_tpr_drops")):
        got = LP.slug(text)
        check(got == want, f"slug({text!r}) = {got!r}, lib/lava.c gives {want!r}")
        # lava_dispatcher/actions/test/monitor.py: strip, lower, \W+ -> _.
        check(re.sub(r"\W+", "_", got.strip().lower()) == got, f"LAVA changes {got!r}")
        if got:
            check(re.fullmatch(r"ipibench-case: (?P<test_case_id>[a-z0-9_]+) (?P<result>pass)",
                               f"ipibench-case: {got} pass"), "the monitor's pattern")


@case("job: the preset's -cpu flags, -smp and arguments are the context's extra_options")
def _(_):
    job = LJ.job_text(EXAMPLE_URL, preset="x2apic")
    opts = context_options(job)
    for want in ("-accel kvm", "-cpu host,x2apic=on,kvm-pv-ipi=off", "-smp 2", "-machine q35",
                 "-global kvm-pit.lost_tick_policy=discard", LJ.EXIT_DEVICE, "-no-reboot"):
        check(want in opts, f"{want!r} not in {opts}")
    check("  no_kvm: true\n" in job and "  arch: x86_64\n" in job, "context")
    check('        image_arg: "-kernel {kernel} -append lava=1"\n' in job, "image_arg")
    tcg = context_options(LJ.job_text(EXAMPLE_URL, accel="tcg-single", smp=4, append="plan=check"))
    check(tcg[:3] == ["-accel tcg,thread=single", "-cpu max", "-smp 4"], f"{tcg}")
    job = LJ.job_text(EXAMPLE_URL, append="plan=check backends=x2apic")
    check("-append 'lava=1 plan=check backends=x2apic'" in job, "quoted command line")
    for pat in (LP.CASE_PATTERN, LP.FIGURE_PATTERN):
        check(f"      pattern: {json.dumps(pat)}\n" in job, f"pattern {pat}")
    try:
        LJ.job_text(EXAMPLE_URL, preset="nope")
        check(False, "an unknown preset was taken")
    except ToolError as e:
        check(e.code == EX_PRESET, f"exit {e.code}")
    with open(os.path.join(REPO, "lava", "ipibench-qemu-x2apic.yaml")) as f:
        check(f.read() == LJ.job_text(EXAMPLE_URL, preset="x2apic"),
              "lava/ipibench-qemu-x2apic.yaml is not what `job --kernel-url "
              f"{EXAMPLE_URL} --preset x2apic` writes")


@case("job --tags: the job's top-level tags, each once, and its metadata; a non-slug refused")
def _(tmp):
    out = os.path.join(tmp, "job.yaml")
    rc, _ = quiet(L.main, ["job", "--kernel-url", EXAMPLE_URL, "--preset", "x2apic", "--tags",
                           "epyc-7702,zen_2,epyc-7702", "--output", out])
    check(rc == 0, f"job exited {rc}")
    with open(out) as f:
        job = f.read()
    top = re.search(r"^tags:\n((?:- .*\n)+)", job, re.M)
    check(top and [json.loads(t) for t in re.findall(r"^- (.*)$", top.group(1), re.M)] ==
          ["epyc-7702", "zen_2"], f"tags: {top and top.group(0)}")
    meta = re.search(r"^metadata:\n((?:  .*\n)+)", job, re.M)
    check(meta and '  ipibench.tags: "epyc-7702,zen_2"\n' in meta.group(1), "metadata")
    check("\ntags:" not in LJ.job_text(EXAMPLE_URL) and "ipibench.tags" not in
          LJ.job_text(EXAMPLE_URL), "tags without --tags")
    for bad in ("epyc 7702", "a,,b", ""):
        try:
            rc, _ = quiet(L.main, ["job", "--kernel-url", EXAMPLE_URL, "--tags", bad])
        except SystemExit as e:
            rc = e.code
        check(rc == 2, f"--tags {bad!r} exited {rc}")


@case("device: the job's memory, no_kvm and extra_options fill tests/lava/qemu.yaml")
def _(_):
    job = LJ.job_text(EXAMPLE_URL, accel="tcg", memory=384)
    dev = LJ.device_text(job)
    check("          - -m 384\n" in dev and "          - -enable-kvm" not in dev, "memory, no KVM")
    extra = re.search(r"^          extra: (\[.*\])$", dev, re.M)
    check(extra and json.loads(extra.group(1)) == context_options(job), "extra")
    kvm = LJ.device_text(job.replace("  no_kvm: true", "  no_kvm: false"))
    check("          - -cpu host\n          - -enable-kvm\n          - -nographic" in kvm,
          "the template's KVM options")


@case("dut-test: the test definition inline, its params and the clone's URL filled in")
def _(_):
    text = LJ.dut_test_text("https://git.example.org/ipibench.git", revision="topic",
                            preset="hv", append="plan=check", module_param="kvm_amd.avic=0,1")
    for want in ('          IPIBENCH_REVISION: "topic"', '          PRESET: "hv"',
                 '          APPEND: "plan=check"', '          MODULE_PARAM: "kvm_amd.avic=0,1"',
                 '          - "https://git.example.org/ipibench.git"',
                 "    - from: inline", "      path: inline/ipibench-kvm-host.yaml"):
        check(want + "\n" in text, f"no {want!r}")
    with open(LJ.TESTDEF) as f:
        for line in f.read().splitlines():
            if line.strip() and not line.lstrip().startswith("#") and not \
                    re.match(r"  ([A-Z_]+): |  - \S+://", line):
                check("        " + line + "\n" in text, f"lost {line!r}")


def inline_definition(text):
    """(params, run steps) of the definition dut-test wrote inline, read from
    the shape it writes: `NAME: value` params, one step a line, a quoted
    step as a YAML single-quoted scalar."""
    params = dict((m.group(1), json.loads(m.group(2)) if m.group(2).startswith('"') else
                   m.group(2)) for m in re.finditer(r"^          ([A-Z_]+): (.*)$", text, re.M))
    block = text[text.index("\n        run:\n"):]
    steps = []
    for m in re.finditer(r"^          - (.*)$", block, re.M):
        step = m.group(1)
        steps.append(step[1:-1].replace("''", "'") if step.startswith("'") else step)
    return params, steps


# Stand-ins for the DUT's run.sh and lava-test-case: each call a line of
# its words in $CALLS. A boot saves its results directory and exits as the
# guest's verdict (boot2: a failing guest); --exits is refused before
# anything is saved, as on a host without tracefs; report needs the folder.
STUB_RUN = r"""#!/bin/sh
printf '%s|' run.sh "$@" >> "$CALLS"; echo >> "$CALLS"
if [ "$1" = lava ]; then [ -d "$3" ] || exit 66; exit 0; fi
prev=
for a; do
    [ "$a" = --exits ] && exit 29
    [ "$prev" = --results-dir ] && dir=$a
    prev=$a
done
mkdir -p "$dir"
case "$dir" in */boot2) exit 1;; esac
"""
STUB_CASE = """#!/bin/sh
printf '%s|' lava-test-case "$@" >> "$CALLS"; echo >> "$CALLS"
"""


@case("dut-test --boots 3 --exits: three boots alike, one traced; each reported, a failing one too")
def _(tmp):
    out = os.path.join(tmp, "dut-test.yaml")
    rc, _ = quiet(L.main, ["dut-test", "--repo", "https://git.example.org/ipibench.git",
                           "--boots", "3", "--exits", "--ab-boots", "4", "--output", out])
    check(rc == 0, f"dut-test exited {rc}")
    # --boots was ab's: with --module-param and no --ab-boots, a note says so.
    with contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()) as err:
        L.main(["dut-test", "--repo", "https://x.org/i.git", "--module-param",
                "kvm_amd.avic=0,1", "--boots", "4", "--output", os.path.join(tmp, "ab.yaml")])
    check("--boots 4 counts the preset's boots; ab's boots a side are --ab-boots (3)"
          in err.getvalue(), f"no note: {err.getvalue()!r}")
    with open(out) as f:
        params, steps = inline_definition(f.read())
    check((params["BOOTS"], params["EXITS"], params["AB_BOOTS"]) == ("3", "1", "4"),
          f"params {params}")
    default, _ = inline_definition(LJ.dut_test_text("https://x.org/i.git"))
    check((default["BOOTS"], default["EXITS"], default["AB_BOOTS"]) == ("5", "0", "3"),
          f"defaults {default}")
    # The run steps as the test shell runs them: params first, under set -e.
    os.makedirs(os.path.join(tmp, "ipibench"))
    os.makedirs(os.path.join(tmp, "bin"))
    for path, text in ((os.path.join(tmp, "ipibench", "run.sh"), STUB_RUN),
                       (os.path.join(tmp, "bin", "lava-test-case"), STUB_CASE)):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    script = "set -e\n" + "".join(f"{k}={shlex.quote(v)}\n" for k, v in params.items()) + \
        "".join(s + "\n" for s in steps) + "echo steps-done\n"
    calls = os.path.join(tmp, "calls")
    p = subprocess.run(["/bin/sh", "-c", script], cwd=tmp, capture_output=True, text=True,
                       env=dict(os.environ, CALLS=calls, PATH=os.path.join(tmp, "bin") + ":" +
                                os.environ["PATH"]), timeout=30)
    check(p.returncode == 0 and "steps-done" in p.stdout,
          f"the steps ended early (exit {p.returncode}): {p.stderr[-300:]}")
    with open(calls) as f:
        got = [line.split("|")[:-1] for line in f.read().splitlines()]
    boots = [c for c in got if c[:2] != ["run.sh", "lava"] and c[0] == "run.sh"]
    where = [c[c.index("--results-dir") + 1] for c in boots]
    check(where == ["results/lava/boot1", "results/lava/boot2", "results/lava/boot3",
                    "results/lava/exits"], f"boots {where}")
    # One configuration: the same options, so run.sh gives each the same label.
    alike = [[w for w in c if not w.startswith("results/lava/")] for c in boots]
    check(alike[0] == alike[1] == alike[2] and "--label" not in alike[0] and
          alike[3] == alike[0] + ["--exits"], f"the boots' options differ: {alike}")
    reports = [(c[3], c[c.index("--prefix") + 1], c[c.index("--name") + 1]) for c in got
               if c[:3] == ["run.sh", "lava", "report"]]
    check(reports == [("results/lava/boot1", "", "x2apic-boot1"),
                      ("results/lava/boot2", "boot2_", "x2apic-boot2"),
                      ("results/lava/boot3", "boot3_", "x2apic-boot3"),
                      ("results/lava/exits", "exits_", "x2apic-exits")], f"reports {reports}")
    check([c for c in got if c[0] == "lava-test-case"] ==
          [["lava-test-case", "exits_results", "--result", "fail"]],
          f"the refused boot's case: {got}")
    check(not any("ab" in c for c in got), "ab ran without MODULE_PARAM")
    for bad in (["--boots", "0"], ["--ab-boots", "x"]):
        try:
            rc, _ = quiet(L.main, ["dut-test", "--repo", "u", *bad])
        except SystemExit as e:
            rc = e.code
        check(rc == 2, f"dut-test {' '.join(bad)} exited {rc}")


def lava_lines(recs):
    """What the guest prints with lava=1 for these records (the TAP and case lines
    of a small suite, the figures as lib/lava.c picks them)."""
    lines = [LP.BEGIN, "ok 1 - x2apic: self on CPU 0, vector 0x41",
             "ipibench-case: x2apic_self_on_cpu_0_vector_0x41 pass",
             "ok 2 - x2apic: CPU 0 -> CPU 1, vector 0x42 # SKIP one CPU",
             "ipibench-case: x2apic_cpu_0_cpu_1_vector_0x42 skip",
             "ipibench-case: ipibench_status pass", LP.CASES_END, LP.FIGURES_BEGIN]
    res = [r for r in recs if r.get("record") == "result"]
    lines += [f"ipibench-figure: {i} {v} {u}" for i, (v, u, _) in LC.headline(res).items()]
    return lines + [LP.FIGURES_END]


@case("report: the guest's cases, ipibench_status, correctness, figures, every record, host facts")
def _(tmp):
    recs = records()
    d = results_dir(tmp, "guest", lava_lines(recs), recs)
    calls, out = report_calls(d, "--no-embed")
    cases = cases_of_calls(calls)
    names = [c[1] for c in calls if c[0] == "lava-test-case"]
    check(names[:4] == ["x2apic_self_on_cpu_0_vector_0x41", "x2apic_cpu_0_cpu_1_vector_0x42",
                        "ipibench_status", "correctness"], f"first cases {names[:4]}")
    check(cases["x2apic_cpu_0_cpu_1_vector_0x42"][0] == "skip" and
          cases["ipibench_status"] == ("pass", None, None) and
          cases["correctness"] == ("pass", None, None), "verdicts")
    results = [r for r in recs if r.get("record") == "result"]
    for cid, (v, u, _) in LC.headline(results).items():
        check(cases.get(cid) == ("pass", str(v), u), f"{cid}: {cases.get(cid)}, want {v} {u}")
    recs_ = [n for n in names if n.startswith("record_")]
    check(len(recs_) == len(results) == len(set(recs_)), f"{len(recs_)} record cases")
    one = cases["record_single_round_trip_none_x2apic_spin_n1"]
    rec = next(r for r in results if row_key(r) == ("single", "round-trip", "none", "x2apic",
                                                       "spin", 1))
    check(one == ("pass", str(rec["cycles"]["p50"]), "cycles"), f"record {one}")
    check(cases["record_single_halt_round_trip_none_xapic_halt_n1"] == ("skip", None, None),
          "a SKIP record")
    host = [c for c in calls if c[0] == "lava-test-reference"]
    check(["lava-test-set", "start", "host"] in calls and ["lava-test-set", "stop"] in calls and
          any(c[1] == "host_kvm_halt_poll_ns" or c[1] == "host_cpus" for c in host),
          f"host facts {host[:3]}")
    check(LP.EMBED_BEGIN not in out, "--no-embed embedded")


@case("report without the guest's lines: TAP verdicts, and the figures run.sh's summary shows")
def _(tmp):
    recs = records(tsc_guessed=True)
    taps = ["ok 1 - x2apic: self on CPU 0, vector 0x41",
            "not ok 2 - x2apic: CPU 0 -> CPU 1, vector 0x42: CPU 1 counted 0, expected 1"]
    d = results_dir(tmp, "plain", taps, recs, status="FAILURE")
    cases = cases_of_calls(report_calls(d, "--no-embed")[0])
    check(cases["x2apic_self_on_cpu_0_vector_0x41"][0] == "pass", "pass")
    check(cases["x2apic_cpu_0_cpu_1_vector_0x42_cpu_1_counted_0_expected_1"][0] == "fail",
          f"the not-ok line: {sorted(cases)[:6]}")
    check(cases["ipibench_status"][0] == "fail" and cases["correctness"][0] == "fail", "fails")
    results = [r for r in recs if r.get("record") == "result"]
    for b in ("x2apic", "xapic"):
        cyc, ns = H.headline(results, b, True)
        for i, (fid, *_) in enumerate(LC.FIGURES):
            for cell, unit in ((cyc[i], "cycles"), (ns[i], "ns")):
                cid = f"{b}_{fid}_p50_{unit}"
                if unit == "ns" and b == "xapic":
                    cell = ""  # the TSC frequency was guessed: no ns
                want = ("pass", cell, unit) if cell.isdigit() else None
                check(cases.get(cid) == want, f"{cid}: {cases.get(cid)}, the summary {cell!r}")


def target_lines(console):
    """A console as lava-run logs it: each line a target entry, '"' escaped."""
    return [json.dumps({"dt": "2026-01-01T00:00:00", "lvl": "target",
                        "msg": line.replace('"', '\\"')}) for line in console.splitlines()]


@case("import: lava-run's log and a server's raw log give the records back, quotes and all")
def _(tmp):
    recs = records()
    console = "\n".join(lava_lines(recs)) + "\n" + synth.console(recs)
    boot = "/usr/bin/qemu-system-x86_64 -nographic -m 256 -accel tcg,thread=single -cpu max " \
           "-smp 2 -kernel /tmp/k/ipibench.elf32 -append 'lava=1 plan=check'"
    info = [{"dt": "x", "lvl": "info", "msg": "lava-dispatcher, installed at version: 2023.01"},
            {"dt": "x", "lvl": "info", "msg": "qemu-system-x86, installed at version: "
             "1:10.0.2+ds-2, host architecture: amd64"},
            {"dt": "x", "lvl": "info", "msg": "Boot command: " + boot}]
    lines = [json.dumps(e) for e in info] + target_lines(console)
    # lava-run writes a float measurement with a YAML tag.
    lines.append('{"dt": "x", "lvl": "results", "msg": {"case": "a", "measurement": ! "1.0"}}')
    plain = os.path.join(tmp, "job.log")
    with open(plain, "w") as f:
        f.write("\n".join(lines) + "\n")
    # lavacli jobs logs --raw: "- " and YAML's own escapes (\x07, \e) in a line.
    raw = os.path.join(tmp, "raw.yaml")
    with open(raw, "w") as f:
        for line in lines:
            f.write("- " + line + "\n")
        f.write('- {"dt": "x", "lvl": "target", "msg": "bell \\x07 and \\e[0m"}\n')
    got = {}
    for name, path in (("plain", plain), ("raw", raw)):
        rc, _ = quiet(L.main, ["import", path, os.path.join(tmp, name), "--job", "42"])
        check(rc == 0, f"import {name} exited {rc}")
        got[name] = load_results_file(os.path.join(tmp, name, "results.json"))
    a, b = got["plain"], got["raw"]
    check(a.records == b.records and a.records == [r for r in recs], "records differ")
    check(a.host.get("accel") == "tcg-single" and a.host.get("qemu_version") ==
          "1:10.0.2+ds-2" and "-smp" in a.host.get("qemu_cmdline", []), f"host {a.host}")
    check(a.run.get("status") == "SUCCESS" and a.run.get("lava_job") == "42", f"run {a.run}")
    with open(os.path.join(tmp, "raw", "console.log")) as f:
        check("bell \x07 and \x1b[0m" in f.read(), "YAML escapes")
    rc, out, err = run_cmd(["./run.sh", "compare", os.path.join(tmp, "plain"),
                            os.path.join(tmp, "raw")])
    check(rc == 0, f"compare of two imports exited {rc}: {err[-300:]}")
    rc, _ = quiet(L.main, ["import", plain, os.path.join(tmp, "plain")])
    check(rc == EX_SAVE, f"an import over a saved one exited {rc}")


@case("import of a DUT's log: the results.json report embedded, byte for byte")
def _(tmp):
    recs = records()
    d = results_dir(tmp, "dut", lava_lines(recs), recs)
    _, out = report_calls(d)
    check(out.count(LP.EMBED_BEGIN) == 1, "no embedded results")
    with open(os.path.join(d, "results.json")) as f:
        saved = f.read()
    for name, text in (("console", out), ("lava-run", "\n".join(target_lines(out)))):
        log = os.path.join(tmp, f"{name}.log")
        with open(log, "w") as f:
            f.write(text + "\n")
        rc, _ = quiet(L.main, ["import", log, os.path.join(tmp, f"imp-{name}")])
        check(rc == 0, f"import exited {rc}")
        with open(os.path.join(tmp, f"imp-{name}", "results.json")) as f:
            check(f.read() == saved, f"{name}: the imported results.json differs")


def entry(dt, lvl, msg):
    return json.dumps({"dt": dt, "lvl": lvl, "msg": msg})


@case("import: run.started at the log's first time, as run.sh writes it; --host-type; "
      "run.sh's label")
def _(tmp):
    recs = records()
    console = "\n".join(lava_lines(recs)) + "\n" + synth.console(recs)
    boot = "/usr/bin/qemu-system-x86_64 -nographic -m 256 -accel kvm -cpu host,x2apic=on " \
           "-smp 4 -machine q35 -kernel /tmp/k/ipibench.elf32 -append lava=1"
    body = [entry("2026-03-04T05:06:09.5", "info", "Boot command: " + boot)] + \
        target_lines(console)
    got = {}
    # lava-run's dt (UTC without a zone, a first entry without a time) and one with a zone.
    for name, first in (("plain", [entry("x", "info", "no time"),
                                   entry("2026-03-04T05:06:07.891011", "info", "start")]),
                        ("zoned", [entry("2026-03-04T07:06:07+02:00", "info", "start")])):
        log = os.path.join(tmp, f"{name}.log")
        with open(log, "w") as f:
            f.write("\n".join(first + body) + "\n")
        rc, _ = quiet(L.main, ["import", log, os.path.join(tmp, name), "--preset", "x2apic",
                               "--host-type", "epyc-7702"])
        check(rc == 0, f"import {name} exited {rc}")
        got[name] = load_results_file(os.path.join(tmp, name, "results.json"))
    for name, b in got.items():
        check(b.run.get("started") == "2026-03-04T05:06:07Z", f"{name}: started "
              f"{b.run.get('started')}")
        check(b.host.get("host_type") == "epyc-7702", f"{name}: host {b.host}")
        check(b.config() == default_label("x2apic", "kvm", "q35", "4"), f"{name}: {b.config()}")
    check(re.sub(r"\d", "0", utc_now()) == re.sub(r"\d", "0", got["plain"].run["started"]),
          "not run.sh's format")
    # A console without LAVA's entries has no time: no start; --label wins.
    plain = os.path.join(tmp, "console.log")
    with open(plain, "w") as f:
        f.write(console)
    rc, _ = quiet(L.main, ["import", plain, os.path.join(tmp, "bare"), "--label", "mine"])
    b = load_results_file(os.path.join(tmp, "bare", "results.json"))
    check(rc == 0 and "started" not in b.run and b.config() == "mine" and
          "host_type" not in b.host, f"bare: {b.run}")
    # A DUT's results keep their own start; --host-type is added, nothing else changes.
    d = results_dir(tmp, "dut", lava_lines(recs), recs, started="2026-02-02T02:02:02Z")
    _, out = report_calls(d)
    log = os.path.join(tmp, "dut.log")
    with open(log, "w") as f:
        f.write("\n".join([entry("2026-03-04T05:06:07", "info", "start")] + target_lines(out))
                + "\n")
    rc, _ = quiet(L.main, ["import", log, os.path.join(tmp, "imp-dut"), "--host-type", "gen"])
    check(rc == 0, f"import of the DUT's log exited {rc}")
    saved, imported = (load_results_file(os.path.join(p, "results.json"))
                       for p in (d, os.path.join(tmp, "imp-dut")))
    check(imported.run == saved.run and imported.run["started"] == "2026-02-02T02:02:02Z",
          f"run {imported.run.get('started')}")
    check(imported.host == dict(saved.host, host_type="gen") and
          imported.records == saved.records, "the DUT's results changed")


@case("import of a DUT's log of 3 boots and a traced one: one configuration, the traced boot apart")
def _(tmp):
    recs = records()
    label = default_label("x2apic", "kvm", "q35", "2")  # what run.sh gives each boot
    trace = os.path.join(REPO, "tests", "fixtures", "traces", "svm-apic.trace")
    log = []
    for name in ("boot1", "boot2", "boot3", "exits"):
        d = results_dir(tmp, name, lava_lines(recs), recs, label=label,
                        trace=trace if name == "exits" else None,
                        started=f"2026-01-01T00:0{len(log)}:00Z")
        rc, out = quiet(L.main, ["report", d, "--dry-run", "--name", f"x2apic-{name}",
                                 "--prefix", "" if name == "boot1" else name + "_"])
        check(rc == 0 and out.count(LP.EMBED_BEGIN) == 1, f"report {name} exited {rc}")
        log.append(out)
    path = os.path.join(tmp, "job.log")
    with open(path, "w") as f:
        f.write("\n".join(target_lines("".join(log))) + "\n")
    out = os.path.join(tmp, "imported")
    rc, _ = quiet(L.main, ["import", path, out])
    check(rc == 0, f"import exited {rc}")
    check(sorted(os.listdir(out)) == ["x2apic-boot1", "x2apic-boot2", "x2apic-boot3",
                                      "x2apic-exits"], f"folders {os.listdir(out)}")
    boots = load_set(out)
    check(list(split_by_config(boots)) == [label], f"configurations {split_by_config(boots)}")
    # What history's store reads to keep the traced boot apart: run.exits.
    traced = [os.path.basename(os.path.dirname(b.path)) for b in boots if b.run.get("exits")]
    check(traced == ["x2apic-exits"], f"traced boots {traced}")
    root = os.path.join(tmp, "store")
    rc, text, err = run_cmd(IPIBENCH + ["history", "--store", root, out])
    check(rc == 0, f"history --store exited {rc}: {(text + err)[-400:]}")
    series = {os.path.relpath(os.path.join(dp, d), root).split(os.sep)[1]: len(os.listdir(
        os.path.join(dp, d))) for dp, ds, _ in os.walk(root) for d in ds
        if dp.count(os.sep) - root.count(os.sep) == 2}
    check(series == {label: 3, label + "-exits": 1}, f"stored series {series}")


@case("report --upload: the results directory PUT as a .tar.gz, named by lava-test-reference")
def _(tmp):
    import http.server
    import tarfile
    import threading
    got = {}

    class Put(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):
            got[self.path] = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", 0), Put)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    recs = records()
    d = results_dir(tmp, "up", lava_lines(recs), recs)
    # Stand-ins for LAVA's helpers: each call a line in calls.txt.
    helpers = os.path.join(tmp, "bin")
    os.makedirs(helpers)
    for tool in ("lava-test-case", "lava-test-reference", "lava-test-set"):
        with open(os.path.join(helpers, tool), "w") as f:
            f.write(f'#!/bin/sh\necho "{tool} $*" >> {tmp}/calls.txt\n')
        os.chmod(os.path.join(helpers, tool), 0o755)
    url = f"http://127.0.0.1:{server.server_port}/store"
    try:
        rc, out, err = run_cmd(IPIBENCH + ["lava", "report", d, "--helpers",
                                helpers, "--upload", url, "--name", "x2apic", "--no-embed"])
    finally:
        server.shutdown()
    check(rc == 0, f"report exited {rc}: {err[-300:]}")
    blob = got.get("/store/x2apic.results.tar.gz")
    check(blob, f"nothing PUT: {sorted(got)}")
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        names = tar.getnames()
        saved = tar.extractfile("up/results.json").read()
    check({"up/console.log", "up/results.json"} <= set(names), f"tarball {names}")
    with open(os.path.join(d, "results.json"), "rb") as f:
        check(saved == f.read(), "the uploaded results.json differs")
    with open(os.path.join(tmp, "calls.txt")) as f:
        calls = f.read().splitlines()
    check(f"lava-test-reference results --result pass --reference {url}/x2apic.results.tar.gz"
          in calls, f"no reference: {calls[-3:]}")
    check(sum(c.startswith("lava-test-case ") for c in calls) == len(cases_of_calls(
        report_calls(d, "--no-embed")[0])), "the helpers got other calls than the dry run")


@case("lava=1 changes no figure: compare holds a job's boot and a run.sh boot comparable")
def _(_):
    check(figure_cmdline("build/ipibench.elf32 lava=1 budget=2 plan=check") == "budget=2",
          figure_cmdline("x lava=1 budget=2"))


def main():
    tmp = tempfile.mkdtemp(prefix="ipibench-lava-tools-")
    try:
        bad = 0
        for name, fn in selected(CASES):
            sub = os.path.join(tmp, str(abs(hash(name))))
            os.makedirs(sub)
            bad += run_cases([(name, fn)], "tools: lava", sub, also=(OSError, KeyError,
                                                                      ValueError), select=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
