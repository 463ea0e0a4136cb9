# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh ab --module-param MODULE.PARAM=A,B`: the same configuration
booted --boots times a side, the KVM module parameter set to A or B before
each boot, the sides interleaved A B B A (order()), and the compare table B
against A (docs/host-tools.md, "ab"; issues 11 and 29).

Under --accel kvm-in-tcg each boot loads the lane's KVM with the value (run
--module-param), after the checks this host can make without the lane's
sysfs (a KVM module, a plain parameter name, bool or integer values).
Otherwise this host's module is set through kvmhost/modparam.py, after its
refusals (exit 33, nothing changed), and put back in a finally: after the
last boot, a failed one, or Ctrl-C."""
import os
import sys

from ipibench.boot import qemu as Q
from ipibench.boot import run as B
from ipibench.compare.compare import compare_sets
from ipibench.exit_codes import EX_INCOMPARABLE, EX_INTERRUPTED, EX_SAME_SIDES, ToolError
from ipibench.jobs import Interrupted, say
from ipibench.kvmhost import modparam as M
from ipibench.options import parse_ab, parse_run, USAGE_AB, UsageError
from ipibench.results.files import load_json
from ipibench.write import write_new


def order(boots):
    """Which side each boot is, in the order they run: A B B A repeated, cut
    at 2 x boots (each side gets boots of them). A drift over the run (the
    host warming, turbo budgets, background load) then falls on both sides
    alike instead of on the parameter, as all of A then all of B would
    leave it; ABBA's mirror also cancels a straight-line drift within each
    block."""
    return ["ABBA"[i % 4] for i in range(2 * boots)]


def lane_granted(boot_dir):
    """What the lane's module reported for a boot (its run record)."""
    try:
        doc = load_json(os.path.join(boot_dir, "results.json"))
        return doc["run"].get("module_param") or {}
    except (ToolError, KeyError, TypeError, AttributeError):
        return {}


def same_sides(got):
    return "A" in got and "B" in got and M.granted(got["A"], got["B"])


def write_summary(root, head, lines):
    """The ab folder's summary.txt: what was asked, the order, one line a boot."""
    try:
        write_new(os.path.join(root, "summary.txt"), "\n".join(head + lines) + "\n")
    except ToolError as e:
        say(f"run.sh: warning: {e.message}")


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
        # What would stop every boot of both sides (KVM asked for and not
        # usable here, 31; --pin, --perf-kvm or --exits unavailable, 29)
        # stops ab before the module is touched, as matrix does.
        preset = ro.preset or ("x2apic" if lane else "")
        B.check_host(env, ro, preset, B.load_preset(env, preset)["cpu"] if preset else "")
        root = B.new_results_dir(env.results_root, Q.sanitize(o.label))
    except M.Refused as e:
        say(f"run.sh: ab: {e.message}")
        return e.code
    except ToolError as e:
        say(f"run.sh: {e.message}")
        return e.code
    name = f"{module}.{param}"
    asked = dict(zip("AB", values))
    dirs = {s: os.path.join(root, Q.sanitize(f"{name}={v}")) for s, v in asked.items()}
    seq = order(int(o.boots))
    # Said before the first boot, and kept: the ab folder's summary.txt and
    # every boot's run record ("ab").
    head = [f"ab {o.label}: {name}, A={values[0]}, B={values[1]}, {o.boots} boot(s) a side",
            f"order {' '.join(seq)}"]
    print(f"ab: order {' '.join(seq)} (A: {name}={values[0]}, B: {name}={values[1]})",
          flush=True)
    first, got, lines, booted = 0, {}, [], {"A": 0, "B": 0}
    same = None  # (the value both sides ran with, whether side B booted)
    now = held = None  # the side whose value this host's module holds, as read back
    try:
        for pos, side in enumerate(seq, 1):
            v = asked[side]
            if host and side != now:
                # Each switch sets the value and reads it back (a reload for a
                # parameter read at load time).
                held, now = host.set(v), side
                say(f"run.sh: ab: {host.name}: asked {v}, got {held}"
                    + ("" if M.granted(v, held) else f": {host.why_not() or 'not granted'}")
                    + ("" if side not in got or M.granted(got[side], held) else
                       f"; side {side}'s first switch got {got[side]}: its boots differ"))
                got.setdefault(side, held)
            elif lane and side == "B" and "B" not in got and "A" in got and \
                    M.granted(v, got["A"]):
                got["B"] = got["A"]  # the lane would grant it as it granted side A
            if same_sides(got):
                same = (got["B"], booted["B"] > 0)
                break
            booted[side] += 1
            boot_dir = os.path.join(dirs[side], f"boot{booted[side]}")
            say(f"run.sh: ab: [{pos}/{len(seq)}] side {side} ({name}={v}) boot {booted[side]}: {boot_dir}")
            place = {"param": name, "side": side, "asked": v,
                     "got": held if host else None, "position": pos,
                     "of": len(seq), "side_boot": booted[side], "order": " ".join(seq)}
            extra = ["--module-param", f"{name}={v}"] if lane else []
            rc = B.run(o.passed + extra + ["--quiet", "--results-dir", boot_dir], env, jobs,
                       prepared=True, pin_default=o.pin_default, ab=place)
            lines.append(f"[{pos}] {side} {os.path.relpath(boot_dir, root)} exit {rc} "
                         f"{Q.exit_word(rc)}")
            if rc == EX_INTERRUPTED:
                raise Interrupted()
            first = first or rc
            if lane and side not in got:
                # The lane says what it granted at every boot (run prints it);
                # side B granted what side A got ends the question there.
                got[side] = lane_granted(boot_dir).get("got", v)
            if same_sides(got):
                same = (got["B"], True)
                break
    except Interrupted:
        say(f"run.sh: ab: interrupted by {jobs.interrupted}")
        first = EX_INTERRUPTED
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
    if same:
        lines.append(f"stopped: both sides {'ran' if same[1] else 'would run'} with "
                     f"{name}={same[0]}")
    write_summary(root, head, lines)
    if first == EX_INTERRUPTED:
        return first
    if same:
        print(f"ab: both sides {'ran' if same[1] else 'would run'} with {module}.{param}={same[0]}: nothing to compare (A asked {values[0]}, B asked {values[1]}{'' if same[1] else '; side B not booted'})")
        return first or EX_SAME_SIDES
    if not (booted["A"] and booted["B"]):
        return first
    print(f"ab: {module}.{param}: B={values[1]} against A={values[0]} (order {' '.join(seq)})")
    try:
        rc = compare_sets(dirs["A"], dirs["B"])
    except ToolError as e:
        say(f"compare: {e.message}")
        rc = e.code
    except BrokenPipeError:  # the table's reader went away: the boots are saved
        rc = 0
    except KeyboardInterrupt:
        rc = EX_INTERRUPTED
    return first or (0 if rc in (0, EX_INCOMPARABLE) else rc)
