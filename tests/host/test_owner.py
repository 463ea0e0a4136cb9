#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What run.sh makes as root under sudo goes back to the sudo user
(host/ipibench/owner.py): nothing root-owned is left in a checkout or a
results folder the user owns, and nothing outside them or older than the
run changes hands.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys
import time

from harness import check, registry, run_cmd
from fixtures import RUN, main

from ipibench import owner

CASES, case = registry()
USER = 65534  # nobody: any uid but root's
SUDO = {"SUDO_UID": str(USER), "SUDO_GID": str(USER)}


def owners(root):
    """path (relative) -> uid of everything under root, root included."""
    out = {".": os.lstat(root).st_uid}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, root)] = os.lstat(path).st_uid
    return out


def tree(base, user_owned):
    """base/checkout with an old root-owned file, owned by USER or root."""
    root = os.path.join(base, "checkout")
    os.makedirs(root)
    with open(os.path.join(root, "old"), "w") as f:
        f.write("made before the run\n")
    if user_owned:
        os.chown(root, USER, USER)
    return root


def made_by_run(root):
    os.makedirs(os.path.join(root, "build", "lane"))
    for name in ("build/lane/base.cpio", "results.json"):
        with open(os.path.join(root, name), "w") as f:
            f.write("x\n")
    os.symlink("results.json", os.path.join(root, "latest"))


@case("owner: under sudo, what root made in the user's checkout becomes the user's; older "
      "files, a root-owned checkout and a run without sudo are left as they are")
def _(s):
    if os.geteuid() != 0:
        check(owner.hand_back([s.tmp], SUDO) == 0, "a non-root process handed something back")
        return
    root = tree(os.path.join(s.tmp, "a"), user_owned=True)
    time.sleep(0.1)
    since = time.time() - 0.05  # ctimes come from a clock a tick behind (owner.STARTED)
    made_by_run(root)
    moved = owner.hand_back([root], SUDO, since)
    got = owners(root)
    check(moved == 5 and got.pop("old") == 0 and set(got.values()) == {USER},
          f"moved {moved}: {owners(root)}")
    theirs = tree(os.path.join(s.tmp, "b"), user_owned=False)
    since = time.time() - 0.05
    made_by_run(theirs)
    check(owner.hand_back([theirs], SUDO, since) == 0 and set(owners(theirs).values()) == {0},
          f"a root-owned checkout changed hands: {owners(theirs)}")
    check(owner.hand_back([theirs], {}, 0) == 0 and
          owner.hand_back([theirs], {"SUDO_UID": "0", "SUDO_GID": "0"}, 0) == 0,
          "handed back without a sudo user")


@case("owner: sudo ./run.sh saves a boot's results into the user's folder as the user's")
def _(s):
    if os.geteuid() != 0:
        return
    base = os.path.join(s.tmp, "home")
    os.makedirs(base)
    os.chown(base, USER, USER)
    results = os.path.join(base, "results")
    rc, _, err = run_cmd([RUN, "--accel", "tcg", "--smp", "1", "--append", "plan=boot"],
                         {**SUDO, "IPIBENCH_RESULTS": results}, 120)
    got = owners(results)
    check(rc == 0 and len(got) > 3 and set(got.values()) == {USER},
          f"exit {rc}: {got}; {err[-300:]}")


if __name__ == "__main__":
    sys.exit(main(CASES))
