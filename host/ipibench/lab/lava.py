#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ipibench in a LAVA lab (docs/lab.md): the three things a lab needs from
the host side, in Python's standard library only.

  job     a LAVA job for the `qemu` device type, a DUT job's test action and
          the device dictionary for lava-run (lab/jobs.py)
  report  a run.sh results directory as lava-test-case calls, on a KVM host
          (a DUT), results.json embedded or uploaded (lab/cases.py)
  import  a LAVA job's log back into a results directory that `./run.sh
          compare` and `./run.sh history` read (lab/log_import.py)

This module is `./run.sh lava`'s command line: its parser, one function a
subcommand, and the dispatch. What the guest and the three share, the
guest's lava=1 lines and LAVA's case ids, is lab/protocol.py."""
import argparse
import re
import sys

from ipibench.command_line import Parser
from ipibench.exit_codes import ToolError
from ipibench.lab.cases import cmd_report, cmd_report_ab
from ipibench.lab.jobs import BASE_DEVICE, cmd_device, cmd_dut_test, cmd_job
from ipibench.lab.log_import import cmd_import


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
    """lava's subcommands under p, in the order --help lists them."""
    sub = p.add_subparsers(dest="cmd", required=True)
    add_job(sub)
    add_dut_test(sub)
    add_device(sub)
    add_report(sub)
    add_report_ab(sub)
    add_import(sub)


def add_job(sub):
    """`./run.sh lava job`: its parser."""
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


def add_dut_test(sub):
    """`./run.sh lava dut-test`: its parser."""
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


def add_device(sub):
    """`./run.sh lava device`: its parser."""
    d = sub.add_parser("device", help="the qemu device dictionary a LAVA server renders for "
                       "a job's context, for lava-run on this machine")
    d.add_argument("job", help="a job `job` wrote")
    d.add_argument("--base", default=BASE_DEVICE, help="the device dictionary to fill in "
                   "(default tests/lava/qemu.yaml)")
    d.add_argument("--output", "-o", help="write here instead of standard output")


def add_report(sub):
    """`./run.sh lava report`: its parser."""
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


def add_report_ab(sub):
    """`./run.sh lava report-ab`: its parser."""
    b = sub.add_parser("report-ab", help="the newest ./run.sh ab root under a folder")
    b.add_argument("dir")
    b.add_argument("--label", default="ab")
    b.add_argument("--helpers")
    b.add_argument("--dry-run", action="store_true")


def add_import(sub):
    """`./run.sh lava import`: its parser."""
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

