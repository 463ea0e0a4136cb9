# SPDX-License-Identifier: GPL-2.0-only
"""KVM's own per-vCPU statistics at the edges of single-halt's passes
(host_stats=1, kernel/host_read.c; docs/exits.md, "KVM's statistics").

The guest prints `@@@ host-read EDGE SEQ cpu=N go` and waits for a byte on
COM2. Whoever runs QEMU (run.sh: Answerer; the KVM lane: lane.sh's
host_reads) then asks QEMU for every vCPU's statistics (QMP query-stats,
provider kvm), writes them down as a line

    @@@ host-read-stats EDGE SEQ CPU {query-stats' answer}

(and once `@@@ host-read-cpus {query-cpus-fast's answer}`, which maps a
vCPU's cpu-index to the QOM path the statistics are keyed by), and answers
by writing one byte into COM2's pipe chardev. read_lines() takes those lines
back, from a console or from run.sh's host-reads.log; attach() gives each
record that names a host read its target's counts and what they say of
its wakes (wake()).

What KVM counts, per halt (virt/kvm/kvm_main.c, kvm_vcpu_halt() and
kvm_vcpu_block(), as Sean Christopherson's halt-polling rework left them
in Linux 5.17):
- halt_successful_poll: the halt ended without the vCPU being scheduled
  out ("halt-polling is considered successful so long as the vCPU was
  never actually scheduled out"), counted only where polling was attempted;
- halt_wakeup: a kick found the vCPU waiting in kvm_vcpu_block()'s rcuwait
  (kvm_vcpu_wake_up()), which it entered after kvm_arch_vcpu_blocking():
  on AVIC after avic_vcpu_blocking() cleared IsRunning, so an IPI's
  doorbell then missed; the kick itself may be the armed tick's
  (apic_timer_fn()) or AVIC's GA log's rather than an IPI's. A halt can count here and in halt_successful_poll both,
  when the kick came between set_current_state() and the check that then
  saw it (a kick before set_current_state() finds the task running and
  counts nothing);
- halt_wait_hist: one per halt that was scheduled out (waited);
- halt_exits (x86.c, __kvm_emulate_halt()): one per HLT exit, at the exit.
"""
import json
import os
import re

# The guest's edge line (kernel/host_read.c).
EDGE = re.compile(r"^@@@ host-read (begin|end) (\d+) cpu=(\d+) go\b")
STATS = re.compile(r"^@@@ host-read-stats (begin|end) (\d+) (\d+) (.*)$")
CPUS = re.compile(r"^@@@ host-read-cpus (.*)$")

# Where run.sh writes what QEMU answered, beside console.log.
LOG = "host-reads.log"

# The statistics asked for (histograms are lists of bucket counts).
NAMES = ("halt_successful_poll", "halt_attempted_poll", "halt_poll_invalid", "halt_wakeup",
         "halt_poll_success_ns", "halt_poll_fail_ns", "halt_wait_ns", "halt_wait_hist",
         "halt_exits", "exits", "irq_exits")
QUERY = {"target": "vcpu", "providers": [{"provider": "kvm", "names": list(NAMES)}]}


def answer_byte(edge, seq):
    """The byte that answers one edge (kernel/host_read.c host_read_answer):
    a late answer to another edge is never taken for this one's."""
    return bytes([ord("A") + (2 * seq + (edge == "end")) % 26])


def stats_line(edge, seq, cpu, answer):
    return f"@@@ host-read-stats {edge} {seq} {cpu} {json.dumps(answer, separators=(',', ':'))}"


def cpus_line(answer):
    return f"@@@ host-read-cpus {json.dumps(answer, separators=(',', ':'))}"


def make_fifos(directory):
    """COM2's pipe chardev reads hostread.in and writes hostread.out: FIFOs,
    made before QEMU starts (it would make plain files of them)."""
    for end in ("in", "out"):
        os.mkfifo(os.path.join(directory, f"hostread.{end}"))


class Answerer:
    """run.sh's side: each edge line the guest prints is answered. Under
    QMP's query-stats every vCPU's statistics are read and written to log,
    then one byte goes into COM2's FIFO (fifo, QEMU's hostread.in), which
    the guest waits on. connect: a function returning a client with
    execute(command, **arguments) (pin_perf.Qmp), called at the first
    edge. A QMP that fails is written down and the guest still answered, so
    that it waits out no bound for nothing."""

    def __init__(self, connect, fifo, log):
        self.connect, self.fifo, self.log = connect, fifo, log
        self.qmp, self.broken = None, None

    def _write(self, text):
        with open(self.log, "a") as f:
            f.write(text + "\n")

    def line(self, text):
        m = EDGE.match(text.strip())
        if not m:
            return
        edge, seq, cpu = m.group(1), int(m.group(2)), int(m.group(3))
        answer = {"error": {"desc": f"QMP failed earlier: {self.broken}"}}
        if not self.broken:
            try:
                if self.qmp is None:
                    self.qmp = self.connect()
                    self._write(cpus_line({"return": self.qmp.execute("query-cpus-fast")}))
                answer = {"return": self.qmp.execute("query-stats", **QUERY)}
            except Exception as e:  # said in the log; the guest is answered all the same
                self.broken = str(getattr(e, "message", e))
                answer = {"error": {"desc": self.broken}}
        self._write(stats_line(edge, seq, cpu, answer))
        try:
            # QEMU holds the FIFO open for reading: this open never waits.
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.write(fd, answer_byte(edge, seq))
            finally:
                os.close(fd)
        except OSError as e:
            self._write(f"# host-read: could not answer the guest: {e.strerror}")


def read_lines(lines):
    """{"cpus": {cpu-index: qom-path}, "reads": {(seq, edge): (cpu, answer)}}
    from host-read lines; what is not such a line is passed over."""
    out = {"cpus": {}, "reads": {}}
    for line in lines:
        line = line.strip()
        m = STATS.match(line)
        if m:
            try:
                answer = json.loads(m.group(4))
            except ValueError:
                answer = {"error": {"desc": "the host's line is not JSON"}}
            out["reads"][(int(m.group(2)), m.group(1))] = (int(m.group(3)), answer)
            continue
        m = CPUS.match(line)
        if m:
            try:
                cpus = json.loads(m.group(1)).get("return") or []
            except (ValueError, AttributeError):
                cpus = []
            for c in cpus if isinstance(cpus, list) else []:
                if isinstance(c, dict) and isinstance(c.get("cpu-index"), int):
                    out["cpus"][c["cpu-index"]] = c.get("qom-path")
    return out


def _vcpu_stats(answer, qom):
    """{name: value} of one vCPU in a query-stats answer, or None."""
    for res in (answer or {}).get("return") or []:
        if isinstance(res, dict) and res.get("provider") == "kvm" and res.get("qom-path") == qom:
            return {s.get("name"): s.get("value") for s in res.get("stats") or []
                    if isinstance(s, dict)}
    return None


def _count(v):
    """A counter's value; a histogram's is the sum of its buckets, whatever
    their order (QEMU's query-stats lists them last bucket first:
    add_kvmstat_entry() prepends each, accel/kvm/kvm-all.c)."""
    if isinstance(v, list):
        return sum(x for x in v if isinstance(x, int))
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def deltas(begin, end):
    """{name: end - begin} of the counters both reads have."""
    out = {}
    for name in NAMES:
        a, b = _count(begin.get(name)), _count(end.get(name))
        if a is not None and b is not None:
            out[name] = b - a
    return out


def wake(d, exact=True):
    """(what, why, counts) of a halted target's wakes between two reads,
    from deltas(). counts: {"halts", "polled", "blocked", "other"}.

    halts: the HLT exits less the one still going at the end read (the
    guest reads only once its target is back in HLT: bench/point.c; exact
    False when that wait ran out, and halts is then not known). blocked:
    halts a kick found waiting in kvm_vcpu_block()'s rcuwait (halt_wakeup:
    asleep, or between set_current_state() and the check that then saw the
    kick) or that were scheduled out (halt_wait_hist), at most one each.
    polled: the halts that ended without the vCPU sleeping:
    halt_successful_poll (never scheduled out; counted only where a poll
    window was open) less every kick that found a halt without it
    sleeping, since the counters cannot tell whether such a halt had a
    window open (then it is among the successful polls) or not. That is
    all it says: a halt that kvm_vcpu_block()'s first check ended is a
    successful poll, though kvm_arch_vcpu_blocking() had run before that
    check, so on AVIC IsRunning was already clear and the sender's
    doorbell may have missed (the trace's avic_incomplete_ipi tells).
    other: the halts left, counted neither way or not certainly either:
    an IPI pending at the HLT exit (which never enters kvm_vcpu_halt()),
    one caught at the first check with no window open, and those kicked
    halts.

    "block", "poll", "mixed" (both), or "unknown": KVM counted neither, or
    most halts were other."""
    if "halt_wakeup" not in d or "halt_successful_poll" not in d:
        return "unknown", "KVM's statistics lack halt_wakeup or halt_successful_poll", {}
    kicked, success = d["halt_wakeup"], d["halt_successful_poll"]
    waited = d.get("halt_wait_hist")
    halts = d["halt_exits"] - 1 if exact and isinstance(d.get("halt_exits"), int) else None
    blocked = max(kicked, waited or 0)
    if halts is not None:
        blocked = min(blocked, max(halts, 0))
    unslept = max(0, kicked - waited) if waited is not None else 0
    polled = max(0, success - unslept)
    other = max(0, halts - polled - blocked) if halts is not None else None
    counts = {"halts": halts, "polled": polled, "blocked": blocked, "other": other}
    why = (f"of {halts if halts is not None else 'an unknown number of'} halts, {polled} "
           f"ended without the vCPU sleeping, {blocked} after it blocked, "
           f"{other if other is not None else 'an unknown number'} neither or not certainly "
           f"(halt_successful_poll +{success}, halt_attempted_poll "
           f"+{d.get('halt_attempted_poll', '?')}, halt_wakeup +{kicked}, halt_wait_hist "
           f"{'+' + str(waited) if waited is not None else 'not reported'}, halt_exits "
           f"+{d.get('halt_exits', '?')})")
    if halts is not None and halts <= 0:
        return "unknown", why + ": the target made no HLT exit in the pass " \
            "(-overcommit cpu-pm=on?)", counts
    if other is not None and other > polled + blocked:
        return "unknown", why + (": most halts ended before KVM polled or blocked (an IPI "
                                 "pending at the HLT exit, or caught with no poll window "
                                 "open)"), counts
    if polled and blocked:
        return "mixed", why, counts
    if polled:
        return "poll", why, counts
    if blocked:
        return "block", why, counts
    return "unknown", why + ": KVM counted none of them as polled or blocked", counts


def _target(rec):
    try:
        return int(str(rec.get("targets")))
    except ValueError:
        return None


def attach(recs, reads):
    """Adds "host_stats" to each record that names a host read: the target
    vCPU's counter deltas between the two reads, per measured iteration
    where it helps, and wake(); or a status saying why there are none."""
    for r in recs:
        seq = r.get("host_read")
        if not isinstance(seq, int) or not seq:
            continue
        state = r.get("host_read_state")
        cpu = _target(r)
        if state not in ("answered", "not-rehalted"):
            r["host_stats"] = {"status": f"the guest's edges were {state}", "wake": "unknown"}
            continue
        b, e = reads["reads"].get((seq, "begin")), reads["reads"].get((seq, "end"))
        # The guest's CPU number is QEMU's cpu-index: QEMU lists its CPUs
        # in the MADT in cpu-index order.
        qom = reads["cpus"].get(cpu)
        if b is None or e is None or qom is None:
            r["host_stats"] = {"status": "no host read of this pass was written down",
                               "wake": "unknown"}
            continue
        errors = [a["error"].get("desc") for _, a in (b, e) if isinstance(a.get("error"), dict)]
        sb, se = _vcpu_stats(b[1], qom), _vcpu_stats(e[1], qom)
        if errors or sb is None or se is None:
            why = "QMP: " + "; ".join(map(str, errors)) if errors else \
                "QEMU returned no KVM statistics for the target (not KVM, or a kernel " \
                "without binary statistics, before 5.14)"
            r["host_stats"] = {"status": why, "wake": "unknown"}
            continue
        d = deltas(sb, se)
        what, why, counts = wake(d, exact=state == "answered")
        r["host_stats"] = {"status": "read", "vcpu": cpu, "qom_path": qom, "deltas": d,
                           **counts, "wake": what, "wake_why": why}
        n = r.get("iterations")
        if isinstance(n, int) and n > 0 and "exits" in d:
            r["host_stats"]["exits_per_iteration"] = round(d["exits"] / n, 4)
    return recs
