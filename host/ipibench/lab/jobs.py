# SPDX-License-Identifier: GPL-2.0-only
"""The YAML a lab runs (docs/lab.md): a LAVA job for the `qemu` device type
that boots the guest with lava=1 and reads its console with two `monitors`
(lib/lava.h: one test case per check, one measurement per headline figure;
-accel, -cpu and -smp go in the job's context, extra_options, so one job
per preset and accelerator runs on any worker with that device type); the
`test` action of a job on a KVM host (a DUT), lava/ipibench-kvm-host.yaml
inline; and the device dictionary a server would render for a job, for
lava-run on this machine."""
import json
import os
import re
import shlex
import sys

from ipibench import REPO
from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_SAVE, EX_USAGE, ToolError
from ipibench.lab.protocol import (BEGIN, CASE_PATTERN, CASES_END, FIGURE_PATTERN,
                                   FIGURE_SUITE, FIGURES_BEGIN, FIGURES_END, SUITE)
from ipibench.presets import get_preset, HOST, load_presets, PRESETS

# The guest job adds it: QEMU's exit status is the guest's status, which
# the case ipibench_status also reports.
EXIT_DEVICE = "-device isa-debug-exit,iobase=0xf4,iosize=0x04"


# --- job


def job_text(kernel_url, preset=None, accel="kvm", cpu=None, smp=None, machine="q35",
             memory=256, append="", name=None, minutes=30, tags=()):
    """The job's YAML. cpu: the base model (host under KVM, max under TCG);
    a preset adds its flags, -smp and QEMU arguments (host/ipibench/presets.conf).
    tags: device tags, all of which the device that runs the job must have."""
    options, smp = job_options(preset, accel, cpu, smp, machine)
    cmdline = " ".join(["lava=1"] + ([append] if append else []))
    name = name or f"ipibench {preset or 'default'} {accel} smp{smp}"
    out = (_head_lines(name, minutes, tags) + _metadata_lines(preset, accel, smp, cmdline, tags)
           + _context_lines(memory, options) + _deploy_boot_lines(kernel_url, cmdline)
           + _test_lines(minutes))
    return "\n".join(out) + "\n"


def job_options(preset, accel, cpu, smp, machine):
    """(QEMU's options for the context's extra_options, the vCPU count) of a
    job: the preset's -cpu flags, -smp and QEMU arguments over the base
    model (host under KVM, max under TCG)."""
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
    return options, smp


def _q(s):
    return json.dumps(str(s))  # a JSON string is a YAML double-quoted scalar


def _head_lines(name, minutes, tags):
    """The job's name, timeouts and scheduling, and its device tags."""
    out = [
        "# SPDX-License-Identifier: GPL-2.0-only",
        "# ipibench on LAVA's qemu device type (docs/lab.md), written by",
        "# ./run.sh lava job: its options decide the kernel URL, the",
        "# accelerator, -cpu and -smp (the context's extra_options) and the guest's",
        "# command line.",
        "device_type: qemu",
        f"job_name: {_q(name)}",
        "timeouts:",
        f"  job: {{minutes: {minutes + 10}}}",
        f"  action: {{minutes: {minutes}}}",
        "  connections:",
        "    # The longest wait between two lines a monitor reads: a plan's",
        "    # benchmarks run between its checks and its figures.",
        f"    lava-test-monitor: {{minutes: {minutes}}}",
        "priority: medium",
        "visibility: public",
    ]
    if not tags:
        return out
    return out + [
        "# LAVA schedules the job only on a device that has every one of these",
        "# tags: the lab tags each device with its CPU generation.",
        "tags:",
    ] + [f"- {_q(t)}" for t in tags]


def _metadata_lines(preset, accel, smp, cmdline, tags):
    return [
        "metadata:",
        f"  ipibench.preset: {_q(preset or '')}",
        f"  ipibench.accel: {_q(accel)}",
        f"  ipibench.smp: {_q(smp)}",
        f"  ipibench.cmdline: {_q(cmdline)}",
    ] + ([f"  ipibench.tags: {_q(','.join(tags))}"] if tags else [])


def _context_lines(memory, options):
    return [
        "context:",
        "  arch: x86_64",
        "  # The qemu device type adds -cpu host -enable-kvm unless told not to:",
        "  # the accelerator and the CPU model come from extra_options instead.",
        "  no_kvm: true",
        f"  memory: {int(memory)}",
        "  extra_options:",
    ] + [f"  - {_q(o)}" for o in options]


def _deploy_boot_lines(kernel_url, cmdline):
    return [
        "actions:",
        "- deploy:",
        "    to: tmpfs",
        "    timeout: {minutes: 5}",
        "    images:",
        "      kernel:",
        f"        url: {_q(kernel_url)}",
        f"        image_arg: {_q('-kernel {kernel} -append ' + shlex.quote(cmdline))}",
        "- boot:",
        "    method: qemu",
        "    media: tmpfs",
        "    timeout: {minutes: 2}",
    ]


def _test_lines(minutes):
    """The test action: the two monitors that read the guest's lava=1 lines."""
    return [
        "- test:",
        f"    timeout: {{minutes: {minutes}}}",
        "    monitors:",
        f"    - name: {SUITE}",
        f"      start: {_q(BEGIN)}",
        f"      end: {_q(CASES_END)}",
        f"      pattern: {_q(CASE_PATTERN)}",
        f"    - name: {FIGURE_SUITE}",
        f"      start: {_q(FIGURES_BEGIN)}",
        f"      end: {_q(FIGURES_END)}",
        f"      pattern: {_q(FIGURE_PATTERN)}",
    ]


def kernel_url(text):
    """A URL as given, or a file's path as a file:// URL (lava-run on this machine)."""
    return text if "://" in text else "file://" + os.path.abspath(text)


def write_out(text, path):
    """text to path, or to standard output for none or '-'."""
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

