#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/save.py, run.sh's save of a boot, on synthetic consoles
(tests/host/synth.py): results.json with the records and the host facts
(KVM's module parameters, CPU flags and model, pinning, the power state
and the kernel command line) and summary.txt beside it, never overwritten;
broken records kept as problems that fail the gate; a record of another
schema kept, and refused by the readers (exit 24).
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import sys

from harness import call, check, expect, registry
import synth
from fixtures import SLOW, main, tool

from ipibench.boot.save import save_run
from ipibench.exit_codes import EX_CORRECTNESS, EX_SAVE, EX_SCHEMA


CASES, case = registry()


# Module parameters a host can offer under /sys/module/*/parameters/, with
# values as each module prints them: APIC virtualization, halt polling, and
# pause-loop exiting (a spinning vCPU leaves guest mode), Intel's and AMD's;
# and ones no list of these tools names: every one is recorded.
HOST_PARAMS = (("kvm_amd", "avic", "Y"), ("kvm", "halt_poll_ns", "200000"),
               ("kvm_amd", "vnmi", "Y"), ("kvm_amd", "enable_ipiv", "N"),
               ("kvm_intel", "preemption_timer", "Y"), ("kvm_intel", "vmentry_l1d_flush", "cond"),
               ("kvm", "enable_virt_at_load", "Y"), ("kvm", "pi_inject_timer", "0"),
               ("kvm_intel", "ple_gap", "128"), ("kvm_intel", "ple_window", "4096"),
               ("kvm_intel", "ple_window_grow", "2"), ("kvm_intel", "ple_window_shrink", "0"),
               ("kvm_intel", "ple_window_max", "4294967295"),
               ("kvm_amd", "pause_filter_thresh", "128"), ("kvm_amd", "pause_filter_count", "3000"),
               ("kvm_amd", "pause_filter_count_grow", "2"),
               ("kvm_amd", "pause_filter_count_shrink", "0"),
               ("kvm_amd", "pause_filter_count_max", "65535"))


@case("save: results.json holds the records and the host facts, summary.txt beside it")
def _(s):
    d = os.path.join(s.tmp, "save1")
    os.makedirs(d)
    recs = synth.boot_records(__import__("random").Random(1), synth.ROWS, 0.01, 0.05, 50, 4,
                              "CPUID 0x15")
    # The xAPIC broadcasts ran after x2APIC mode, on AVIC without x2AVIC (below).
    for r in recs:
        if r["record"] == "result":
            r["after_x2apic"] = r["bench"] == "broadcast"
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(synth.console(recs))
    # A host of its own (the seam, IPIBENCH_HOST_ROOT): KVM's parameters,
    # PVM's beside them, the CPUs, the kernel's release.
    host_root = os.path.join(s.tmp, "save1-host")
    fake = os.path.join(host_root, "sys")
    for mod, param, val in HOST_PARAMS:
        os.makedirs(os.path.join(fake, "module", mod, "parameters"), exist_ok=True)
        with open(os.path.join(fake, "module", mod, "parameters", param), "w") as f:
            f.write(val + "\n")
    # Another module's parameters (PVM's) are not KVM's: not recorded.
    os.makedirs(os.path.join(fake, "module", "kvm_pvm", "parameters"))
    with open(os.path.join(fake, "module", "kvm_pvm", "parameters", "nx_huge_pages"), "w") as f:
        f.write("N\n")
    # Zen 2: AVIC without x2AVIC; the second CPU's lines are not read.
    os.makedirs(os.path.join(host_root, "proc", "sys", "kernel"))
    with open(os.path.join(host_root, "proc", "sys", "kernel", "osrelease"), "w") as f:
        f.write("6.12.57-save1\n")
    with open(os.path.join(host_root, "proc", "cpuinfo"), "w") as f:
        f.write("processor\t: 0\nmodel name\t: AMD EPYC 7702 64-Core Processor\n"
                "flags\t\t: fpu apic svm x2apic npt pausefilter pfthreshold avic vgif\n\n"
                "processor\t: 1\nmodel name\t: other\nflags\t\t: fpu x2avic vnmi\n")
    with open(os.path.join(d, "pin.json"), "w") as f:
        json.dump([{"vcpu": 0, "thread_id": 1234, "host_cpu": 2}], f)
    facts = dict(label="lbl", accel="kvm", status="SUCCESS", qemu_exit=65,
                 qemu_version="QEMU emulator version 9.2.0",
                 qemu=["qemu-system-x86_64", "-accel", "kvm", "-append", "plan=bench x=1"])
    expect(call(save_run, d, env={"IPIBENCH_HOST_ROOT": host_root}, **facts), 0)
    doc = json.load(open(os.path.join(d, "results.json")))
    h = doc["host"]
    check(doc["format"] == "ipibench-results" and doc["version"] == 1, "format/version")
    want = {f"{mod}.{param}": val for mod, param, val in HOST_PARAMS}
    check(h["kvm_params"] == want, "kvm params: missing "
          f"{sorted(set(want) - set(h['kvm_params']))}, got {h['kvm_params']}")
    check(h["cpu_flags"] == ["avic", "pausefilter", "pfthreshold", "svm", "x2apic"] and
          h["cpu_model"] == "AMD EPYC 7702 64-Core Processor",
          f"CPU flags {h['cpu_flags']}, model {h['cpu_model']}")
    check(h["qemu_cmdline"][-1] == "plan=bench x=1" and h["accel"] == "kvm", "QEMU command line")
    check(h["kernel"] == "6.12.57-save1" and h["qemu_version"].endswith("9.2.0") and
          h["hostname"] is None, f"host {h['kernel']} {h['hostname']}")
    check(doc["run"]["label"] == "lbl" and doc["run"]["pin"]["state"] == "pinned" and
          doc["run"]["pin"]["map"][0]["host_cpu"] == 2, f"run facts {doc['run']}")
    check(len(doc["records"]) == len(recs) and doc["problems"] == [], "records")
    summary = open(os.path.join(d, "summary.txt")).read()
    check("SUCCESS" in summary and SLOW in summary and "vCPU0->CPU2" in summary and
          "kvm_amd.vnmi=Y" in summary and "host CPU flags: avic pausefilter" in summary and
          "warning: 3 xAPIC-mode results were measured after a vCPU had been in x2APIC "
          "mode on AVIC without x2AVIC" in summary, "summary")
    check(sorted(os.listdir(d)) == ["console.log", "pin.json", "results.json", "summary.txt"],
          f"leftover files: {os.listdir(d)}")
    before = open(os.path.join(d, "results.json")).read()
    expect(call(save_run, d, **facts), EX_SAVE, "never overwritten")
    check(open(os.path.join(d, "results.json")).read() == before, "results.json was replaced")
    check(not [f for f in os.listdir(d) if f.startswith(".")], "temporary file left behind")


@case("save: the host's power state (cpuidle driver, governor and states, cpufreq, boost and "
      "turbo, SMT, isolated and nohz_full CPUs) and kernel command line, each file that is "
      "not there null (not read), never a crash; summary.txt's host power line")
def _(s):
    d = os.path.join(s.tmp, "power")
    cpu = os.path.join(d, "sys", "devices", "system", "cpu")
    files = {"cpuidle/current_driver": "intel_idle",
             "cpuidle/current_governor_ro": "menu",  # before Linux 5.8: no current_governor
             "cpu0/cpuidle/state0/name": "POLL", "cpu0/cpuidle/state0/disable": "0",
             "cpu0/cpuidle/state1/name": "C1", "cpu0/cpuidle/state1/disable": "0",
             "cpu0/cpuidle/state2/name": "C1E", "cpu0/cpuidle/state2/disable": "1",
             "cpu0/cpuidle/state10/name": "C10",  # no disable file: not read
             "cpu0/cpufreq/scaling_driver": "intel_pstate",
             "cpu0/cpufreq/scaling_governor": "performance",
             "intel_pstate/no_turbo": "0", "amd_pstate/status": "passive",
             "cpufreq/boost": "1", "smt/control": "on", "smt/active": "1",
             "isolated": "2-3", "nohz_full": ""}
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(cpu, rel)), exist_ok=True)
        with open(os.path.join(cpu, rel), "w") as f:
            f.write(text + "\n")
    cmdline = os.path.join(d, "proc", "cmdline")
    os.makedirs(os.path.dirname(cmdline))
    with open(cmdline, "w") as f:
        f.write("BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 intel_idle.max_cstate=2\n")
    saved = []
    for name, host_root in (("full", d), ("bare", os.path.join(d, "nothing"))):
        run = os.path.join(d, name)
        os.makedirs(run)
        with open(os.path.join(run, "console.log"), "w") as f:
            f.write(synth.console([synth.env()]))
        expect(call(save_run, run, label=name, accel="tcg", status="SUCCESS",
                    env={"IPIBENCH_HOST_ROOT": host_root}), 0)
        saved.append((json.load(open(os.path.join(run, "results.json")))["host"],
                      open(os.path.join(run, "summary.txt")).read()))
    (host, summary), (bare, bare_summary) = saved
    want = {"cpuidle_driver": "intel_idle", "cpuidle_governor": "menu",
            "cpuidle_states": [{"name": "POLL", "enabled": True}, {"name": "C1", "enabled": True},
                               {"name": "C1E", "enabled": False},
                               {"name": "C10", "enabled": None}],
            "cpufreq_driver": "intel_pstate", "cpufreq_governor": "performance", "boost": "1",
            "intel_no_turbo": "0", "amd_pstate": "passive", "smt_control": "on",
            "smt_active": "1", "isolated": "2-3", "nohz_full": ""}
    check(host.get("power") == want, f"power {host.get('power')}")
    check(host.get("kernel_cmdline") == "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 "
          "intel_idle.max_cstate=2", f"{host['kernel_cmdline']}")
    check("host power: cpuidle intel_idle/menu, states POLL C1 C1E(disabled) C10(not read); "
          "cpufreq intel_pstate/performance; turbo: boost 1, intel_pstate no_turbo 0, "
          "amd_pstate passive; SMT on (active 1); isolated CPUs 2-3; nohz_full none\n"
          "host kernel command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 "
          "intel_idle.max_cstate=2\n" in summary, summary)
    # Nothing there: every fact null, and the summary says so.
    check(bare["power"] == {k: None for k in want} and bare["kernel_cmdline"] is None,
          f"{bare['power']} {bare['kernel_cmdline']}")
    check("host power: cpuidle not read, states not read; cpufreq not read; turbo: not read; "
          "SMT not read (active not read); isolated CPUs not read; nohz_full not read\n"
          "host kernel command line: not read\n" in bare_summary, bare_summary)


@case("save: broken records are kept as problems and fail the gate; another schema -> 24")
def _(s):
    d = os.path.join(s.tmp, "save2", "boot1")
    os.makedirs(d)
    recs = synth.boot_records(__import__("random").Random(1), synth.ROWS, 0.01, 0.05, 50, 4,
                              "CPUID 0x15")
    text = synth.console(recs).replace('"record":"check"', '"record":"check" BROKEN', 1)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(text)
    expect(call(save_run, d, status="SUCCESS", qemu=["q"]), 0, "not JSON")
    doc = json.load(open(os.path.join(d, "results.json")))
    check(len(doc["problems"]) == 1 and "not JSON" in doc["problems"][0], f"{doc['problems']}")
    expect(tool("gate", "--baseline", s.base, os.path.dirname(d)), EX_CORRECTNESS,
           "invalid record")
    # A record that is JSON but breaks docs/results.md: dropped, named, gated.
    d2 = os.path.join(s.tmp, "save3", "boot1")
    os.makedirs(d2)
    broken = [dict(r) for r in recs]
    broken[3] = dict(broken[3], cycles=dict(broken[3]["cycles"], p50=10 ** 9))
    with open(os.path.join(d2, "console.log"), "w") as f:
        f.write(synth.console(broken))
    expect(call(save_run, d2, status="SUCCESS", qemu=["q"]), 0, "percentiles out of order")
    doc = json.load(open(os.path.join(d2, "results.json")))
    check(len(doc["records"]) == len(recs) - 1 and len(doc["problems"]) == 1, "dropped record")
    expect(tool("gate", "--baseline", s.base, os.path.dirname(d2)), EX_CORRECTNESS,
           "percentiles out of order")
    # A record of a schema these tools do not know is kept, and readers refuse it.
    d3 = os.path.join(s.tmp, "save4", "boot1")
    os.makedirs(d3)
    newer = [dict(r) for r in recs]
    newer[2] = dict(newer[2], schema=2, cycles="changed shape")
    with open(os.path.join(d3, "console.log"), "w") as f:
        f.write(synth.console(newer))
    expect(call(save_run, d3, status="SUCCESS", qemu=["q"]), 0, "schema 2")
    expect(tool("compare", s.base, d3), EX_SCHEMA, "schema 2")


@case("save: a xen-in-tcg boot's warning says whether Xen's exits were traced (read once the "
      "trace's exits are on the records)")
def _(s):
    import test_xentrace as hand_built
    from ipibench.kvmhost.trace import XEN_TRACE_FILE
    from ipibench.xenhost import xentrace
    for traced in (True, False):
        d = os.path.join(s.tmp, f"xen-warning-{traced}")
        os.makedirs(d)
        rec = synth.result(("send-cost", "send", "none", "x2apic", "spin", 1), [100] * 5)
        rec["mark"] = 3  # the hand-built trace's window
        env = synth.env(cpus=2)
        env["cmdline"] = "plan=bench markers=1"
        with open(os.path.join(d, "console.log"), "w") as f:
            f.write(synth.console([env, rec]))
        if traced:
            with open(os.path.join(d, XEN_TRACE_FILE), "w") as f:
                f.write("\n".join(xentrace.lines(hand_built.SENDER + hand_built.TARGET)) + "\n")
        expect(call(save_run, d, label="xen", accel="xen-in-tcg", status="SUCCESS"), 0)
        doc = json.load(open(os.path.join(d, "results.json")))
        said = [w["text"] for w in doc["host"]["warnings"] if w["id"] == "xen-in-tcg"]
        want = "exit counts only" if traced else "Xen's exits were not traced"
        check(len(said) == 1 and want in said[0] and
              ("sender" in doc["records"][1]["exits"]) == traced,
              f"traced={traced}: {said}, exits {doc['records'][1].get('exits')}")


if __name__ == "__main__":
    sys.exit(main(CASES))
