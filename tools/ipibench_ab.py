# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh ab --module-param MODULE.PARAM=A,B`: the same configuration
booted --boots times a side, the KVM module parameter set to A, then to B,
and the compare table B against A (docs/host-tools.md, "ab"; issue 11).

Under --accel kvm-in-tcg each boot loads the lane's KVM with the value (run
--module-param), after the checks this host can make without the lane's
sysfs (a KVM module, a plain parameter name, bool or integer values).
Otherwise this host's module is set through ipibench_modparam, after its
refusals (exit 33, nothing changed), and put back in a finally: after the
last boot, a failed one, or Ctrl-C."""
import os
import sys

import ipibench
import ipibench_boot as B
import ipibench_modparam as M
import ipibench_qemu as Q
import ipibench_results as R
from ipibench_jobs import Interrupted, say
from ipibench_options import USAGE_AB, UsageError, parse_run


class AbOptions:
    def __init__(self):
        self.spec, self.boots, self.label, self.help = "", "3", "ab", False
        self.passed = []


def parse_ab(argv):
    o, i = AbOptions(), 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            o.help = True
            return o
        if a in ("--module-param", "--boots", "--label"):
            if i + 1 >= len(argv) or not argv[i + 1]:
                raise UsageError(f"ab: {a} needs a value")
            setattr(o, {"--module-param": "spec", "--boots": "boots", "--label": "label"}[a],
                    argv[i + 1])
            i += 2
            continue
        o.passed.append(a)
        i += 1
    if not o.spec:
        raise UsageError("ab: --module-param MODULE.PARAM=A,B is required", USAGE_AB)
    if not o.boots.isdigit() or int(o.boots) < 1:
        raise UsageError(f"ab: --boots takes a count, not '{o.boots}'")
    return o


# Side B ran (or would run) with the value side A ran with: the module granted
# neither side what set them apart (asked 1, got N: the CPU has no AVIC), so
# there is no question left to compare. Docs: docs/exit-codes.md.
EX_SAME_SIDES = 34


def side_boots(env, jobs, o, side_dir, extra, stop=None):
    """--boots runs into side_dir/boot<i>; 0, or the first failing run's code.
    stop(): asked after the first boot; True ends the side there."""
    first = 0
    for i in range(1, int(o.boots) + 1):
        rc = B.run(o.passed + extra + ["--quiet", "--results-dir",
                                        os.path.join(side_dir, f"boot{i}")],
                   env, jobs, prepared=True)
        if rc == Q.EX_INTERRUPTED:
            raise Interrupted()
        first = first or rc
        if i == 1 and stop and stop():
            break
    return first


def lane_granted(side_dir):
    """What the lane's module reported for the first boot of a side."""
    try:
        doc = R._load_json(os.path.join(side_dir, "boot1", "results.json"))
        return doc["run"].get("module_param") or {}
    except (R.ToolError, KeyError, TypeError):
        return {}


def run(argv, env, jobs):
    try:
        o = parse_ab(argv)
        if o.help:
            sys.stdout.write(USAGE_AB)
            return 0
        try:
            module, param, values = M.parse(o.spec)
        except ValueError as e:
            raise UsageError(f"ab: {e}")
        ro = parse_run(o.passed, env.caller_dir)
    except UsageError as e:
        return B.usage_error(e)
    lane = ro.accel == "kvm-in-tcg"
    host = None if lane else M.Param(M.Host(env.environ), module, param)
    try:
        if host:
            host.check(values)
        else:
            M.check_name(module, param)
            M.check_words(f"{module}.{param}", values)
        B.prepare(env, jobs)
        root = B.new_results_dir(env.results_root, Q.sanitize(o.label))
    except M.Refused as e:
        say(f"run.sh: ab: {e.message}")
        return e.code
    except R.ToolError as e:
        say(f"run.sh: {e.message}")
        return e.code
    sides, first, got = [], 0, []
    same = None  # (the value both sides ran with, whether side B booted)
    try:
        for v in values:
            side = os.path.join(root, Q.sanitize(f"{module}.{param}={v}"))
            extra = ["--module-param", f"{module}.{param}={v}"] if lane else []
            if host:
                got.append(host.set(v))
                say(f"run.sh: ab: {host.name}: asked {v}, got {got[-1]}"
                    + ("" if M.granted(v, got[-1]) else
                       f": {host.why_not() or 'not granted'}"))
            elif got and M.granted(v, got[0]):
                got.append(got[0])  # the lane would grant it as it granted side A
            if len(got) == 2 and M.granted(got[0], got[1]):
                same = (got[1], False)
                break
            sides.append(side)
            say(f"run.sh: ab: side {module}.{param}={v}: {o.boots} boot(s) into {side}")

            def granted_as_a(side=side, v=v):
                # The lane says what it granted at a side's first boot (run
                # prints it, once a boot); side B granted what side A got
                # ends the question there.
                if lane:
                    got.append(lane_granted(side).get("got", v))
                return len(got) == 2 and M.granted(got[0], got[1])
            first = first or side_boots(env, jobs, o, side, extra, granted_as_a)
            if len(got) == 2 and M.granted(got[0], got[1]):
                same = (got[1], True)
    except Interrupted:
        say(f"run.sh: ab: interrupted by {jobs.interrupted}")
        first = Q.EX_INTERRUPTED
    except M.Refused as e:
        say(f"run.sh: ab: {e.message}")
        first = e.code
    finally:
        if host and host.original is not None:
            try:
                host.restore()
                say(f"run.sh: ab: {host.name} put back to {host.original}")
            except M.Refused as e:
                say(f"run.sh: ab: could not put {host.name} back to {host.original}: {e.message}")
    if first == Q.EX_INTERRUPTED:
        return first
    if same:
        print(f"ab: both sides {'ran' if same[1] else 'would run'} with {module}.{param}="
              f"{same[0]}: nothing to compare (A asked {values[0]}, B asked {values[1]}"
              f"{'' if same[1] else '; side B not booted'})")
        return first or EX_SAME_SIDES
    if len(sides) < 2:
        return first
    print(f"ab: {module}.{param}: B={values[1]} against A={values[0]}")
    rc = ipibench.main(["compare", sides[0], sides[1]])
    return first or (0 if rc in (0, R.EX_INCOMPARABLE) else rc)
