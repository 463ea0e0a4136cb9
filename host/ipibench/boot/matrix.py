# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh matrix`: named configurations x -smp values x N boots, one boot
at a time (parallel boots would disturb each other's timing), each a full
`run` into DIR/<preset>-smp<N>[-<topology>]/boot<i>/, and DIR/summary.txt
listing them
(docs/host-tools.md, "matrix")."""
import os
import subprocess
import sys
import time

from ipibench.boot import qemu as Q
from ipibench.boot import run as B
from ipibench.boot import xen_lane as X
from ipibench.exit_codes import EX_DEPS, EX_INTERRUPTED, ToolError
from ipibench.jobs import elapsed, Interrupted, say
from ipibench.options import (check_memory, parse_matrix, parse_run, smp_folder, USAGE_MATRIX,
                              UsageError)
from ipibench.presets import host_vcpus
from ipibench.results.files import load_results_file
from ipibench.write import write_new


def boot_argv(preset, smp, cfg, boot_dir, verbose, passed):
    """The `run` options of one boot of the matrix."""
    return (["--preset", preset, "--smp", str(smp), "--label", cfg, "--results-dir", boot_dir]
            + (["--verbose"] if verbose else ["--quiet"]) + list(passed))


def check_boots(env, o, each):
    """Before the first boot, what would stop the first boot of a preset, so
    that the matrix stops at once (the message naming it), not after the
    presets before it have booted: under --accel auto a preset that needs
    KVM and cannot have it, --accel kvm without a usable /dev/kvm, or with
    --pin, --perf-kvm or --exits on a software KVM (31); --pin, --perf-kvm or
    --exits that cannot work under the preset's accelerator (29). Notices
    of presets that may fall back are left to their boots."""
    for name in o.names:
        B.check_host(env, each, name, B.load_preset(env, name)["cpu"])


def configurations(o, presets):
    """(preset, -smp value, configuration folder) of every configuration, in
    boot order: x2apic-smp4, x2apic-smp8-s2c2t2 (options.smp_folder)."""
    return [(name, smp, f"{name}-{smp_folder(smp)}")
            for name in o.names
            for smp in o.counts or [str(host_vcpus(presets[name]["smp"], presets[name]["cpu"]))]]


def pair_hint(mdir, cfgs):
    """(configuration, backend, backend): xapic against x2apic in the first
    configuration whose first boot measured both (the xapic preset hides
    x2APIC), else its first two backends, else None."""
    first = None
    for cfg in cfgs:
        try:
            boot = load_results_file(os.path.join(mdir, cfg, "boot1", "results.json"))
        except ToolError:
            continue
        ran = []
        for rec in boot.results:
            b = rec.get("backend")
            if rec.get("status") == "SUCCESS" and b not in (None, "none") and b not in ran:
                ran.append(b)
        if "xapic" in ran and "x2apic" in ran:
            return cfg, "xapic", "x2apic"
        if len(ran) >= 2 and first is None:
            first = (cfg, ran[0], ran[1])
    return first


def check_xen_boots(env, o, todo, each):
    """Under --accel xen-in-tcg, what would stop a boot, before the one outer
    VM runs every frame (it may take long): each configuration's options as
    its boot parses them (options.check_xen: a topology --smp is 2), the
    guest's keys (2), and an --append the lane's jobs list cannot carry
    (2). UsageError or ToolError."""
    for name, smp, cfg in todo:
        parse_run(boot_argv(name, smp, cfg, "/", False, o.passed), env.caller_dir)
        if each.accel == "xen":
            X.check_dom0_preset(name)
    B.check_append(each.append, env.guest_keys)
    if "\n" in each.append or "|" in each.append:
        raise UsageError("--append: under --accel xen-in-tcg a matrix's frames go in one jobs "
                         "list, whose lines take no newline or '|'")


def xen_batch(env, jobs, o, each, todo, mdir):
    """--accel xen-in-tcg: every boot's frame in ONE outer VM (xen-lane.sh
    --jobs into MDIR/xen-lane), where a boot of its own would boot Xen and
    dom0 each time (some 12 s here). Each boot then takes its frame from it
    (xen_lane.lane_argv: xen-lane.sh --from, which checks that the frame is
    the one the boot asks for) and is saved as any boot is. The frames'
    names in boot order: [m1.PRESET, ...]. The lane's progress is said as
    it comes. Its exit status, or EX_INTERRUPTED."""
    from ipibench.boot import lane_stream as S
    from ipibench.options import memory_mib
    out = os.path.join(mdir, "xen-lane")
    os.makedirs(out)
    frames, specs = [], []
    opts = [f"inner-timeout={each.timeout}"] + (["exits"] if each.exits else [])
    if each.asked("memory"):
        opts.append(f"memory={max(1, round(memory_mib(each.memory)))}")
    for name, smp, _ in todo:
        for _ in range(int(o.boots)):
            frames.append(f"m{len(frames) + 1}.{name}")
            specs.append(f"{frames[-1]} | {' '.join(opts + [f'vcpus={smp}'])} | "
                         f"{X.frame_append(each)}")
    with open(os.path.join(out, "jobs.in"), "w") as f:
        f.write("\n".join(specs) + "\n")
    lane = env.environ.get("IPIBENCH_XEN_LANE") or X.XEN_LANE
    # Room for a frame to run again (xen-lane.sh reruns one whose firmware
    # or xl create failed): twice its bound, and a minute for xl's own work.
    bound = X.XEN_SETUP_S + len(frames) * 2 * (int(each.timeout) + 60)
    say(f"matrix: {len(frames)} frames in one outer VM (Xen and dom0 booted once), "
        f"bound {bound} s")
    lane_txt = os.path.join(out, "lane.txt")
    with open(lane_txt, "wb") as f:
        follow = B.Follower(lane_txt, S.LaneProgress())
        try:
            rc = jobs.run([lane, "--jobs", os.path.join(out, "jobs.in"), "--out", out,
                           "--timeout", str(bound), *X.dom0_args(each.accel)],
                          stdout=f, stderr=subprocess.STDOUT)
        except Interrupted:
            rc = EX_INTERRUPTED
        finally:
            follow.finish()
    if rc not in (0, EX_INTERRUPTED):
        text = B.read_text(lane_txt) + B.read_text(os.path.join(out, "outer.log"))
        for why in S.known_causes(text, text, X.skips_in_force(todo[0][0], each.append, each.accel)):
            say(f"run.sh: a known cause: {why}")
    return rc, frames


def lost_frame(batch_rc):
    """A boot whose frame did not finish in the matrix's outer VM: its exit
    code as a boot of its own would have ended (docs/exit-codes.md): 7 when
    the outer VM ran past its bound, else 8 (the lane failed)."""
    return 7 if batch_rc == 124 else 8


def run(argv, env, jobs):
    """`./run.sh matrix ARGS`: 0 when every boot succeeded, else the first
    failing boot's code, or at once a setup code (Q.SETUP_CODES)."""
    try:
        o = parse_matrix(argv)
        # What every boot is passed, checked before anything is made.
        each = None if o.help else parse_run(boot_argv("x", 1, "x", "/", False, o.passed),
                                             env.caller_dir)
    except UsageError as e:
        return B.usage_error(e)
    if o.help:
        sys.stdout.write(USAGE_MATRIX)
        return 0
    xen = each.accel in X.ACCELS
    try:
        # A Xen preset names a domain, not -cpu flags: its vCPU count only.
        presets = {name: {"smp": str(X.xen_preset(name)["vcpus"]), "cpu": ""} if xen
                   else B.load_preset(env, name) for name in o.names}
        todo = configurations(o, presets)
        for _, smp, _ in todo:
            check_memory(each.memory, smp)
    except UsageError as e:
        return B.usage_error(e)
    except ToolError as e:
        if e.message:
            say(f"run.sh: {e.message}")
        return e.code
    try:
        B.prepare(env, jobs)
        if xen:
            check_xen_boots(env, o, todo, each)
        else:
            check_boots(env, o, each)
        mdir = B.new_results_dir(env.results_root, Q.sanitize(o.label))
    except UsageError as e:
        return B.usage_error(e)
    except ToolError as e:
        if e.message:
            say(f"run.sh: {e.message}")
        return e.code
    except Interrupted:
        say(f"run.sh: interrupted by {jobs.interrupted}")
        return EX_INTERRUPTED
    smps = o.smps or "per preset"
    say(f"matrix: {o.presets} at -smp {smps}, {o.boots} boots each, into {mdir}")

    frames, lane_rc, outer = None, 0, ""
    if xen:
        lane_rc, frames = xen_batch(env, jobs, o, each, todo, mdir)
        outer = B.read_text(os.path.join(mdir, "xen-lane", "outer.log"))  # read once
        if jobs.interrupted or lane_rc == EX_INTERRUPTED:
            say(f"run.sh: interrupted by {jobs.interrupted}")
            return EX_INTERRUPTED
        if lane_rc in (2, 77):  # a usage error, or the lane cannot be prepared here
            for line in B.read_text(os.path.join(mdir, "xen-lane", "lane.txt")).splitlines()[-3:]:
                say(line)
            return 2 if lane_rc == 2 else EX_DEPS
        if lane_rc:
            say(f"matrix: the Xen lane's outer VM ended with exit {lane_rc} "
                f"({os.path.join(mdir, 'xen-lane', 'lane.txt')}): the boots whose frames "
                "finished are saved, the others fail")
    first_bad, n, lines, cfgs = 0, 0, [], []
    for name, smp, cfg in todo:
        cfgs.append(cfg)
        for i in range(1, int(o.boots) + 1):
            n += 1
            t0 = time.monotonic_ns()
            rc = EX_INTERRUPTED
            lost = frames is not None and not os.path.exists(
                os.path.join(mdir, "xen-lane", f"{frames[n - 1]}.status"))
            if lost and not jobs.interrupted:
                rc = lost_frame(lane_rc)
                say(f"matrix: {cfg} boot {i}: its frame {frames[n - 1]} did not finish in the "
                    "outer VM")
            elif not jobs.interrupted:
                argv = boot_argv(name, smp, cfg, os.path.join(mdir, cfg, f"boot{i}"),
                                 o.verbose, o.passed)
                boot_env = env if frames is None else B.Env(env.repo, env.caller_dir, dict(
                    env.environ, IPIBENCH_XEN_FROM=os.path.join(mdir, "xen-lane"),
                    IPIBENCH_XEN_FRAME=frames[n - 1]))
                # Pinned under KVM unless --no-pin: boots meant for a gate
                # should not have their vCPUs migrate (pin_perf.pin_plan).
                rc = B.run(argv, boot_env, jobs, prepared=True, pin_default=o.pin_default,
                           matrix={"boot": i, "boots": int(o.boots)})
            if jobs.interrupted:
                rc = EX_INTERRUPTED
            took = f"{elapsed(t0)} s"
            if frames is not None:
                # The boot's own time is its frame's in the outer VM, not the hand-over's.
                ran = X.frame_seconds(outer, frames[n - 1])
                took = f"its frame {ran} s in the outer VM" if ran else took
            say(f"matrix: [{n}] {cfg} boot {i}: exit {rc} ({took})")
            lines.append(f"{cfg} boot{i} exit {rc} {Q.exit_word(rc)}")
            if rc in Q.SETUP_CODES:
                return rc
            if rc and not first_bad:
                first_bad = rc
    text = "\n".join([f"matrix {o.label}: presets {o.presets}, -smp {smps}, {o.boots} boots"]
                     + lines) + "\n"
    try:
        write_new(os.path.join(mdir, "summary.txt"), text)
    except ToolError as e:
        say(f"run.sh: warning: {e.message}")
    say(f"matrix: done: {mdir}")
    pair = pair_hint(mdir, cfgs)
    if pair:
        # Within one configuration every backend ran on the same guest: the
        # backend-against-backend question is answered there.
        say(f"matrix: backend against backend: ./run.sh compare --pair {pair[1]}={pair[2]} {mdir}/{pair[0]}")
    same_smp = [(x[2], y[2]) for i, x in enumerate(todo) for y in todo[i + 1:]
                if smp_folder(x[1]) == smp_folder(y[1])]
    if same_smp:
        say(f"matrix: configuration against configuration (same backends, same -smp): ./run.sh compare {mdir}/{same_smp[0][0]} {mdir}/{same_smp[0][1]}")
    return first_bad
