#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The test files' own command line (harness.selected): one case by part
of its name (--case TEXT), every name (--list), a name that matches none
refused with exit 2; which cases tests/host/on_hosts.py runs again.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys
import tempfile

from harness import check, registry, run_cmd
from fixtures import main
from ipibench.kvmhost import facts


CASES, case = registry()


@case("a test file runs one case by name (--case TEXT), lists them (--list), refuses an unknown one")
def _(s):
    import harness
    cases = [("alpha one", None), ("beta two", None), ("gamma", None)]
    check([n for n, _ in harness.selected(cases, [])] == ["alpha one", "beta two", "gamma"],
          "every case without --case")
    check([n for n, _ in harness.selected(cases, ["--case", "two", "--case", "gam"])] ==
          ["beta two", "gamma"], "--case picks by part of the name")
    # As a person runs it: not on tests/run's fixture hosts, nothing logged.
    alone = {"IPIBENCH_HOSTS_DIR": "", "IPIBENCH_HOST_LOG_DIR": "", "IPIBENCH_TEST_HOST": ""}
    rc, out, err = run_cmd([sys.executable, "tests/host/test_hoststats.py", "--case", "zzz"],
                           alone)
    check(rc == 2 and "no case named like 'zzz'" in err and "ok -" not in out, f"{rc} {err}")
    rc, out, _ = run_cmd([sys.executable, "tests/host/test_hoststats.py", "--case",
                          "same statistics"], alone)
    check(rc == 0 and out.strip() == "ok - hoststats: the lane asks for the same statistics",
          out)


@case("on_hosts: a case that read its host runs again on the others; one that read only "
      "the saved snapshot of host facts, or nothing, does not")
def _(s):
    import on_hosts
    from ipibench import machine
    with tempfile.TemporaryDirectory() as tmp:
        hosts_dir, log_dir = os.path.join(tmp, "hosts"), os.path.join(tmp, "log")
        os.makedirs(log_dir)
        root = os.path.join(hosts_dir, "pvm")
        reads = {"reads": [("cpuinfo", False), ("kvm_pvm", False)],
                 "snap": [("cpuinfo", True)],
                 "mixed": [("cpuinfo", True), ("kvm", False)],
                 "none": [],
                 # a run.sh (another process) read the snapshot: a boot,
                 # run on its own host only
                 "booted": [("cpuinfo", False), ("cpuinfo", True, "2")]}
        with open(os.path.join(log_dir, "index.tsv"), "w") as index:
            for name, rs in reads.items():
                index.write(f"{name}\t{name}\tpvm\t1\tt.py\n")
                with open(os.path.join(log_dir, name), "w") as f:
                    for where, snap, *pid in rs:
                        f.write(f"{root}\t{where}\t{(pid or ['1'])[0]}" +
                                ("\tsnapshot" if snap else "") + "\n")
        got = sorted((n, own) for _, n, _, own in on_hosts.reading_cases(log_dir, hosts_dir))
        check(got == [("booted", False), ("mixed", True), ("reads", True)],
              f"cases that read their host, and whether only in their own process: {got}")
        # The seam marks host_facts()'s reads so, and no other.
        log = os.path.join(tmp, "seam")
        os.environ["IPIBENCH_HOST_LOG"] = log
        try:
            facts.host_facts("QEMU 9.2.0", {machine.ROOT_VAR: root})
            facts.kvm_software({machine.ROOT_VAR: root})
        finally:
            os.environ.pop("IPIBENCH_HOST_LOG")
        marks = [line.split("\t")[3:] for line in open(log).read().splitlines()]
        check(len(marks) > 5 and all(m == ["snapshot"] for m in marks[:-1]) and marks[-1] == [],
              f"marks {marks}")


if __name__ == "__main__":
    sys.exit(main(CASES))
