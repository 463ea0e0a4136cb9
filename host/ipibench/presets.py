# SPDX-License-Identifier: GPL-2.0-only
"""The named configurations of presets.conf (its format is in its header):
reading them, printing them for `./run.sh list`, and the -cpu features only
KVM offers (run.sh's rule for when a configuration needs KVM)."""
import os
import re

from ipibench import machine
from ipibench.exit_codes import EX_PRESET, ToolError


PRESETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "presets.conf")


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
            raise ToolError(EX_PRESET, f"{where}: {len(fields)} fields, expected 5 (name | cpu flags | smp | extra QEMU args | description)")
        name, cpu, smp, extra, desc = fields
        if not re.fullmatch(r"[a-z0-9-]+", name):
            raise ToolError(EX_PRESET, f"{where}: bad configuration name {name!r} (lower-case letters, digits and '-')")
        if name in presets:
            raise ToolError(EX_PRESET, f"{where}: configuration {name!r} defined twice")
        # Four digits at most: no machine QEMU offers has 10000 vCPUs, and int()
        # refuses strings of over 4300 digits with a ValueError
        if smp != HOST and not re.fullmatch(r"[1-9][0-9]{0,3}", smp):
            raise ToolError(EX_PRESET, f"{where}: smp {smp!r} is not a vCPU count or {HOST!r}")
        if re.search(r"\s", cpu):
            raise ToolError(EX_PRESET, f"{where}: cpu flags {cpu!r} contain blanks")
        presets[name] = {"cpu": cpu, "smp": smp if smp == HOST else int(smp),
                         "extra": extra.split(), "description": desc}
    return presets


# A preset's smp that scales to the machine it runs on (host_vcpus).
HOST = "host"


def host_vcpus(smp, cpu=""):
    """A preset's vCPU count: its number, or for HOST one vCPU a host core
    but CPU 0's (machine.host_cores: where default pinning puts them, one
    a core), at least 2; at most 255 where its cpu flags hide x2APIC (the
    xAPIC's IDs end at 254, QEMU refuses more)."""
    if smp != HOST:
        return smp
    n = max(2, len(machine.host_cores(machine.allowed_cpus())))
    return min(n, 255) if "x2apic=off" in cpu.split(",") else n


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


def get_preset(presets, name, path=PRESETS):
    if name not in presets:
        raise ToolError(EX_PRESET, f"unknown configuration {name!r} (in {path}: {', '.join(presets) or 'none'}; './run.sh list' describes them)")
    return presets[name]


def print_presets(path, name=None):
    """`./run.sh list`: every configuration, described; with a name, that
    one's -cpu flags, -smp and QEMU arguments, a line each."""
    presets = load_presets(path)
    if name:
        p = get_preset(presets, name, path)
        print(p["cpu"])
        print(host_vcpus(p["smp"], p["cpu"]))
        for x in p["extra"]:
            print(x)
        return 0
    width = max(len(n) for n in presets) if presets else 4
    for name, p in presets.items():
        smp = p["smp"] if p["smp"] != HOST else \
            f"{host_vcpus(HOST, p['cpu'])} (host: one a core)"
        print(f"{name.ljust(width)}  -smp {smp}  {p['description']}")
        print(f"{''.ljust(width)}  -cpu BASE,{p['cpu']}" if p["cpu"] else
              f"{''.ljust(width)}  -cpu BASE")
        if p["extra"]:
            print(f"{''.ljust(width)}  {' '.join(p['extra'])}")
        if kvm_only_flags(p["cpu"]):
            print(f"{''.ljust(width)}  needs KVM (or --accel kvm-in-tcg): {','.join(kvm_only_flags(p['cpu']))}")
        if host_vcpus(p["smp"], p["cpu"]) < 3:
            print(f"{''.ljust(width)}  {TIMER_ARMED}")
    return 0


# bench/point.c pauses a halted target's watchdog tick only where a third
# vCPU watches the sender meanwhile; with two, single-halt's wakes are
# measured with the target's tick armed (the record's target-timer=armed),
# and a tick can land inside a round trip (tick_iterations counts them).
TIMER_ARMED = "single-halt: target-timer=armed (the target's tick pauses only at --smp 3 or more)"

