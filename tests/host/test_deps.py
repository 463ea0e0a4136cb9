#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/deps.sh against a stand-in dpkg-query and id: the packages dpkg
does not know are named with the command that installs them (exit 1);
nothing missing is exit 0.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import re
import sys
import tempfile
import textwrap

from harness import REPO, check, expect, registry, run_cmd
from fixtures import main, write


CASES, case = registry()


@case("deps.sh: packages dpkg does not know are named with the command to run, exit 1; "
      "nothing missing is exit 0")
def _(s):
    deps = os.path.join(REPO, "tools", "deps.sh")
    with tempfile.TemporaryDirectory() as tmp:
        # dpkg-query -W lists the packages it knows and exits 1 when any
        # other is asked for, as on a fresh machine; id says "not root".
        write(os.path.join(tmp, "id"), "#!/bin/sh\necho 1000\n")
        write(os.path.join(tmp, "dpkg-query"), textwrap.dedent("""\
            #!/bin/sh
            rc=0
            for p; do
                case "$p" in -*) continue ;; esac
                if grep -qx "$p" "$DEPS_KNOWN"; then
                    echo "$p install ok installed"
                else
                    echo "dpkg-query: no packages found matching $p" >&2; rc=1
                fi
            done
            exit $rc
            """))
        for f in ("id", "dpkg-query"):
            os.chmod(os.path.join(tmp, f), 0o755)
        known = os.path.join(tmp, "known")
        env = {"PATH": tmp + ":" + os.environ["PATH"], "DEPS_KNOWN": known}
        pkgs = re.search(r"pkgs=\(([^)]*)\)", open(deps).read()).group(1).split()
        write(known, "make\ngcc\n")
        # Without sudo (a fresh VM image, a container): commands for a root shell.
        expect(run_cmd(["bash", deps, "build"], dict(env, DEPS_SUDO="")), 1,
               "ipibench: install them as root (su -; sudo is not installed)",
               "\n  apt-get update && apt-get install -y ")
        _, _, err = expect(run_cmd(["bash", deps, "build"], dict(env, DEPS_SUDO="yes")), 1,
                           "ipibench: install them with sudo, then run this command again:",
                           "\n  sudo apt-get update && sudo apt-get install -y ")
        named = re.search(r"missing packages: (.*)", err)
        check(named and set(named.group(1).split()) == set(pkgs) - {"make", "gcc"},
              f"the missing packages named: {err.strip()[-300:]}")
        # tests/run installed QEMU >= 8.1 before this group: nothing is missing.
        write(known, "\n".join(pkgs) + "\n")
        expect(run_cmd(["bash", deps, "build"], env), 0)


if __name__ == "__main__":
    sys.exit(main(CASES))
