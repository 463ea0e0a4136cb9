#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What run.sh adds to the guest's command line from the host:
KVM's halt-polling window, so that single-halt's records can say whether a
gap aims at a poll wake or a blocked one."""
import os
import sys
import tempfile

from harness import check, registry, run_cases

from ipibench.boot import run as B


HERE = os.path.dirname(os.path.abspath(__file__))

CASES, case = registry()


@case("halt_poll_ns and its grow factor are read from the host's kvm module, None when absent or odd")
def host_value(_):
    with tempfile.TemporaryDirectory() as root:
        check(B.host_halt_poll(root) == (None, None), "no kvm module: None")
        params = os.path.join(root, "sys/module/kvm/parameters")
        os.makedirs(params)
        with open(os.path.join(params, "halt_poll_ns"), "w") as f:
            f.write("200000\n")
        check(B.host_halt_poll(root) == (200000, None), "200000 read, no grow file")
        with open(os.path.join(params, "halt_poll_ns_grow"), "w") as f:
            f.write("0\n")
        check(B.host_halt_poll(root) == (200000, 0), "grow 0 read")
        with open(os.path.join(params, "halt_poll_ns"), "w") as f:
            f.write("-1\n")
        check(B.host_halt_poll(root) == (None, 0), "not a count: None")


@case("halt_poll_ns= and halt_poll_grow= join the guest's command line unless there or unknown")
def appended(_):
    check(B.with_halt_poll("plan=check", 0, 2) == "plan=check halt_poll_ns=0 halt_poll_grow=2",
          "0 is a value")
    check(B.with_halt_poll("", 200000, None) == "halt_poll_ns=200000", "alone")
    check(B.with_halt_poll("plan=check", None, None) == "plan=check", "unknown: left out")
    check(B.with_halt_poll("halt_poll_ns=5 x=1", 200000, 2) == "halt_poll_ns=5 x=1 halt_poll_grow=2",
          "the user's own wins")
    check(B.with_halt_poll("my_halt_poll_ns=5", 7, None) == "my_halt_poll_ns=5 halt_poll_ns=7",
          "only the whole key counts")


@case("the lane's guest is told the lane's KVM defaults, or what --module-param set")
def lane(_):
    check(B.lane_halt_poll(None) == (200000, 2), "defaults")
    check(B.lane_halt_poll("kvm.halt_poll_ns=0") == (0, 2), "halt_poll_ns set")
    check(B.lane_halt_poll("kvm.halt_poll_ns_grow=0") == (200000, 0), "grow set")
    check(B.lane_halt_poll("kvm_amd.avic=1") == (200000, 2), "another parameter")


if __name__ == "__main__":
    sys.exit(1 if run_cases(CASES, "tools") else 0)
