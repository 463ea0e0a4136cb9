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
    """`./run.sh ab`: its steps, in order; its exit code."""
    try:
        asked = parse(argv, env)
    except UsageError as e:
        return B.usage_error(e)
    if asked is None:
        return 0  # --help
    ab = Ab(*asked, env, jobs)
    try:
        ab.check()
    except M.Refused as e:
        say(f"run.sh: ab: {e.message}")
        return e.code
    except ToolError as e:
        say(f"run.sh: {e.message}")
        return e.code
    ab.plan()
    ab.boot_all()
    return ab.conclude()


def parse(argv, env):
    """(ab's options, the module, its parameter, the two values, the options
    of run passed on), or None when --help printed the usage."""
    o = parse_ab(argv)
    if o.help:
        sys.stdout.write(USAGE_AB)
        return None
    try:
        module, param, values = M.parse(o.spec)
    except ValueError as e:
        raise UsageError(f"ab: {e}")
    return o, module, param, values, parse_run(o.passed, env.caller_dir)


class Ab:
    """One `./run.sh ab`: what was asked, and where its boots stand."""

    def __init__(self, o, module, param, values, ro, env, jobs):
        self.o, self.module, self.param, self.values, self.ro = o, module, param, values, ro
        self.env, self.jobs = env, jobs
        self.lane = ro.accel == "kvm-in-tcg"
        self.host = None if self.lane else M.Param(M.Host(env.environ), module, param)
        self.first, self.got, self.lines, self.booted = 0, {}, [], {"A": 0, "B": 0}
        self.same = None  # (the value both sides ran with, whether side B booted)
        self.now = self.held = None  # the side whose value this host's module holds, as read back
        self.root = None  # the ab folder (check())

    def check(self):
        """What would stop every boot of both sides, before the module is
        touched; then the ab folder."""
        module, param, values = self.module, self.param, self.values
        if self.host:
            self.host.check(values)
        else:
            M.check_name(module, param)
            M.check_words(f"{module}.{param}", values)
        B.prepare(self.env, self.jobs)
        # What would stop every boot of both sides (KVM asked for and not
        # usable here, 31; --pin, --perf-kvm or --exits unavailable, 29)
        # stops ab before the module is touched, as matrix does.
        preset = self.ro.preset or ("x2apic" if self.lane else "")
        B.check_host(self.env, self.ro, preset,
                     B.load_preset(self.env, preset)["cpu"] if preset else "")
        self.root = B.new_results_dir(self.env.results_root, Q.sanitize(self.o.label))

    def plan(self):
        """Each side's folder and the order of the boots, said before the first."""
        self.name = name = f"{self.module}.{self.param}"
        values = self.values
        self.asked = dict(zip("AB", values))
        self.dirs = {s: os.path.join(self.root, Q.sanitize(f"{name}={v}"))
                     for s, v in self.asked.items()}
        self.seq = order(int(self.o.boots))
        # Said before the first boot, and kept: the ab folder's summary.txt and
        # every boot's run record ("ab").
        self.head = [f"ab {self.o.label}: {name}, A={values[0]}, B={values[1]}, "
                     f"{self.o.boots} boot(s) a side",
                     f"order {' '.join(self.seq)}"]
        print(f"ab: order {' '.join(self.seq)} (A: {name}={values[0]}, B: {name}={values[1]})",
              flush=True)

    def boot_all(self):
        """The boots in order, until both sides would run with one value;
        this host's module put back after the last boot, a failed one, or
        Ctrl-C."""
        try:
            for pos, side in enumerate(self.seq, 1):
                if self.switch(side) or self.boot(pos, side):
                    break
        except Interrupted:
            say(f"run.sh: ab: interrupted by {self.jobs.interrupted}")
            self.first = EX_INTERRUPTED
        except M.Refused as e:
            say(f"run.sh: ab: {e.message}")
            self.first = e.code
        finally:
            self.restore()

    def switch(self, side):
        """This host's module set to the side's value when it holds the
        other's (the lane's grant for side B foreseen); True when both sides
        would run with one value."""
        v, got = self.asked[side], self.got
        if self.host and side != self.now:
            # Each switch sets the value and reads it back (a reload for a
            # parameter read at load time).
            self.held, self.now = self.host.set(v), side
            held = self.held
            say(f"run.sh: ab: {self.host.name}: asked {v}, got {held}"
                + ("" if M.granted(v, held) else f": {self.host.why_not() or 'not granted'}")
                + ("" if side not in got or M.granted(got[side], held) else
                   f"; side {side}'s first switch got {got[side]}: its boots differ"))
            got.setdefault(side, held)
        elif self.lane and side == "B" and "B" not in got and "A" in got and \
                M.granted(v, got["A"]):
            got["B"] = got["A"]  # the lane would grant it as it granted side A
        if same_sides(got):
            self.same = (got["B"], self.booted["B"] > 0)
            return True
        return False

    def boot(self, pos, side):
        """One boot of a side, into its own folder; True when both sides ran
        with one value."""
        v, name = self.asked[side], self.name
        self.booted[side] += 1
        boot_dir = os.path.join(self.dirs[side], f"boot{self.booted[side]}")
        say(f"run.sh: ab: [{pos}/{len(self.seq)}] side {side} ({name}={v}) "
            f"boot {self.booted[side]}: {boot_dir}")
        place = {"param": name, "side": side, "asked": v,
                 "got": self.held if self.host else None, "position": pos,
                 "of": len(self.seq), "side_boot": self.booted[side],
                 "order": " ".join(self.seq)}
        extra = ["--module-param", f"{name}={v}"] if self.lane else []
        rc = B.run(self.o.passed + extra + ["--quiet", "--results-dir", boot_dir], self.env,
                   self.jobs, prepared=True, pin_default=self.o.pin_default, ab=place)
        self.lines.append(f"[{pos}] {side} {os.path.relpath(boot_dir, self.root)} exit {rc} "
                          f"{Q.exit_word(rc)}")
        if rc == EX_INTERRUPTED:
            raise Interrupted()
        self.first = self.first or rc
        if self.lane and side not in self.got:
            # The lane says what it granted at every boot (run prints it);
            # side B granted what side A got ends the question there.
            self.got[side] = lane_granted(boot_dir).get("got", v)
        if same_sides(self.got):
            self.same = (self.got["B"], True)
            return True
        return False

    def restore(self):
        """This host's module put back to the value it had before ab."""
        host = self.host
        if host and host.original is not None:
            try:
                host.restore()
                say(f"run.sh: ab: {host.name} put back to {host.original}")
            except M.Refused as e:
                say(f"run.sh: ab: could not put {host.name} back to {host.original}: {e.message}")

    def conclude(self):
        """summary.txt written; the exit code: an interrupt's, 34 when both
        sides ran alike, else the first failed boot's or the compare's."""
        same, values = self.same, self.values
        if same:
            self.lines.append(f"stopped: both sides {'ran' if same[1] else 'would run'} with "
                              f"{self.name}={same[0]}")
        write_summary(self.root, self.head, self.lines)
        if self.first == EX_INTERRUPTED:
            return self.first
        if same:
            print(f"ab: both sides {'ran' if same[1] else 'would run'} with "
                  f"{self.module}.{self.param}={same[0]}: nothing to compare "
                  f"(A asked {values[0]}, B asked {values[1]}"
                  f"{'' if same[1] else '; side B not booted'})")
            return self.first or EX_SAME_SIDES
        if not (self.booted["A"] and self.booted["B"]):
            return self.first
        print(f"ab: {self.module}.{self.param}: B={values[1]} against A={values[0]} "
              f"(order {' '.join(self.seq)})")
        rc = self.compare()
        return self.first or rc

    def compare(self):
        """The compare table, B against A: 0 when it ran (or found the sides
        incomparable), else its exit code."""
        try:
            rc = compare_sets(self.dirs["A"], self.dirs["B"])
        except ToolError as e:
            say(f"compare: {e.message}")
            rc = e.code
        except BrokenPipeError:  # the table's reader went away: the boots are saved
            rc = 0
        except KeyboardInterrupt:
            rc = EX_INTERRUPTED
        return 0 if rc in (0, EX_INCOMPARABLE) else rc
