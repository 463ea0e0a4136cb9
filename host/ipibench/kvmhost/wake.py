# SPDX-License-Identifier: GPL-2.0-only
"""How a halted target woke, from a KVM trace: kvm_vcpu_wakeup on a target
thread says whether it came back without blocking (poll: halt polling, or
the check before the block, having seen the IPI) or after blocking (wait),
and on AVIC a send that missed its doorbell says the target had begun to
block. Per record (wake_path, wake_counts), and checked against KVM's own
statistics (cross_check_wake)."""
import re

from ipibench.kvmhost.apicv import ipiv_off
from ipibench.kvmhost.exit_labels import EXITS_TOLERANCE, kind_sum

def wake_path(rec, kvm_params=None, kernel=None):
    """(what, why) of a halted target's wakes, from the host's evidence in a
    record's exits: "poll" (KVM's halt polling, or its check before
    blocking, saw the IPI), "block" (the vCPU had blocked), "mixed" (both,
    counted per iteration), or "unknown" (no wake traced: the target did not
    exit on HLT, as with -overcommit cpu-pm=on, or kvm_vcpu_wakeup is not on
    this kernel). kvm_vcpu_wakeup's waited says which, except on AVIC: a
    send that exited "target not running" found IsRunning clear, which
    kvm_vcpu_block() does (avic_vcpu_blocking()) before its first
    kvm_vcpu_check_block(), so that wake took the block path (the doorbell
    missed, KVM kicked the vCPU) even when the check then caught it and it
    is traced waited=0. Each such send is paired with a poll wake of the
    target in the same iteration, between two region-end marks, in either
    order: AVIC sets the target's IRR before the sender's exit, so the
    target's kvm_vcpu_check_block() can end its halt (waited=0) before the
    sender's handler traces kvm_avic_incomplete_ipi (poll_wakes_after_miss,
    from trace_read.parse()); a
    record without that count (written before it was kept) falls back to
    the window's totals, misses capping the polls. Only where IPI
    virtualization is on: with kvm_amd.enable_ipiv=N (ipiv_off) every send
    misses, blocked target or polling, so the label is kvm_vcpu_wakeup's
    waited, as KVM's own poll accounting counts it (a kick in the window
    before kvm_vcpu_block()'s first check is then a poll: cross_check_wake).
    Before Linux 5.17 (f6c60d081e2c) kvm_vcpu_block() ran
    kvm_arch_vcpu_blocking() before its halt-polling loop, so IsRunning
    was clear while KVM polled and a
    miss proves no block there either; a distribution kernel that
    backported the rework says the same release: with misses on a kernel
    that says it is older (kernel, where known) the label is unknown.
    None for a record whose target did not halt."""
    split = _wake_split(rec, kvm_params, kernel)
    if split is None:
        return None
    poll, block, miss, no_ipiv = split
    if poll + block <= EXITS_TOLERANCE:
        return "unknown", ("no wake from HLT traced (kvm_vcpu_wakeup): the target made no "
                           "HLT exit, or the event is not on this kernel")
    if _release_unreadable(miss, kvm_params, kernel):
        return "unknown", (f"{miss:.2f} doorbell misses per iteration on a kernel that says "
                           f"{kernel}: before 5.17 KVM polled with IsRunning clear, so a miss "
                           "proves no block, unless the distribution backported the 5.17 "
                           "rework; neither reading is taken (waited: "
                           f"{poll:.2f} poll, {block:.2f} block per iteration)")
    why = f"per iteration {poll:.2f} without a block, {block:.2f} after one"
    if no_ipiv and miss > EXITS_TOLERANCE:
        why += (f" (from kvm_vcpu_wakeup's waited: with kvm_amd.enable_ipiv=N every send "
                f"finds the target not running, {miss:.2f} per iteration here, so a miss "
                "says nothing of the wake)")
    elif miss > EXITS_TOLERANCE:
        why += (f" ({miss:.2f} sends found the target not running on AVIC: a block path "
                "whatever the wakeup's waited says)")
    if block <= EXITS_TOLERANCE:
        return "poll", why
    if poll <= EXITS_TOLERANCE:
        return "block", why
    return "mixed", why


def _release_unreadable(miss, kvm_params, kernel):
    """Misses on a kernel that says it is older than 5.17, with IPI
    virtualization on: the release alone cannot tell what they mean.
    Upstream before 5.17 polled with IsRunning clear (a miss proves no
    block); a distribution kernel that backported f6c60d081e2c (RHEL 9's
    5.14) does not."""
    return miss > EXITS_TOLERANCE and kernel_before(kernel, (5, 17)) and not ipiv_off(kvm_params)


def kernel_before(release, version):
    """Whether a kernel release ("5.15.0-91-generic") is older than version
    ((5, 17)); False where it cannot be read."""
    m = re.match(r"^(\d+)\.(\d+)", str(release or ""))
    return bool(m) and (int(m.group(1)), int(m.group(2))) < version


def _wake_split(rec, kvm_params, kernel=None):
    """(poll, block, AVIC misses, IPI virtualization off) per iteration of a
    halted target's traced wakes, as wake_path() reads them; None for a
    record whose target did not halt."""
    e = rec.get("exits") or {}
    if rec.get("target_state") != "halt" or "sender" not in e:
        return None
    wakes = e.get("target_wakeups") or {}
    poll, wait = float(wakes.get("poll", 0)), float(wakes.get("wait", 0))
    miss = kind_sum(e["sender"], "doorbell")[0]
    total = poll + wait
    no_ipiv = ipiv_off(kvm_params) or kernel_before(kernel, (5, 17))
    if no_ipiv:
        block = min(total, wait)
    elif "poll_wakes_after_miss" in e:
        block = min(total, wait + float(e["poll_wakes_after_miss"]))
    else:
        block = min(total, max(wait, miss))
    return total - block, block, miss, no_ipiv


def wake_counts(rec, kvm_params=None, kernel=None):
    """{"poll", "block"}: a halted target's wakes per iteration as
    wake_path() classes them (an AVIC miss a block, whatever kvm_vcpu_wakeup's
    waited said), for compare's blocked share; None where it gives none."""
    split = _wake_split(rec, kvm_params, kernel)
    if split is None or split[0] + split[1] <= EXITS_TOLERANCE or \
            _release_unreadable(split[2], kvm_params, kernel):
        return None
    return {"poll": round(split[0], 4), "block": round(split[1], 4)}


# The wake classes that claim something: "unknown" on either side is none.
WAKE_CLAIMS = ("poll", "block", "mixed")


def cross_check_wake(rec):
    """Where KVM's trace (exits.wake) and its statistics (host_stats.wake,
    hoststats.py) both say how a halted target woke and say different
    things, the record says so in exits.wake_disagrees, and neither label
    is changed. They can differ without either being wrong: a kick after
    kvm_vcpu_block() has run kvm_arch_vcpu_blocking() and
    prepare_to_rcuwait() but before its first kvm_vcpu_check_block() is
    waited=0 for kvm_vcpu_wakeup (KVM's own poll accounting,
    update_halt_poll_stats(..., !waited)) and a halt_wakeup in the
    statistics. True when they disagree."""
    e, h = rec.get("exits"), rec.get("host_stats")
    if not isinstance(e, dict) or not isinstance(h, dict):
        return False
    trace, stats = e.get("wake"), h.get("wake")
    if trace not in WAKE_CLAIMS or stats not in WAKE_CLAIMS or trace == stats:
        e.pop("wake_disagrees", None)
        return False
    e["wake_disagrees"] = (f"the trace says {trace}, KVM's statistics say {stats}: neither "
                           "is taken (a kick between kvm_arch_vcpu_blocking() and the first "
                           "kvm_vcpu_check_block() is waited=0 in the trace and a "
                           "halt_wakeup in the statistics; else one reading is wrong)")
    return True

