# SPDX-License-Identifier: GPL-2.0-only
"""`run.sh --exits` under `--accel kvm`: the host kernel's KVM events for one
QEMU, through tracefs directly (the lane does the same in its
outer VM, host/lane/lane.sh, where it also records the per-exit events
only inside the marker windows: here the whole boot is traced).

QEMU is started paused (the --pin/--perf-kvm start): its vCPU threads exist
but run nothing. Their thread ids go to set_event_pid, so only this VM's
events are kept; the events exit accounting reads are enabled (those this
kernel has; the missing are named); COM1's port exits are filtered out in the
kernel (two a character of console output, all outside any record); then
the guest runs. After QEMU ends, the trace is copied next to the results
as kvm-trace.txt and the events are switched off again.

The tracefs is the host's, through the seam (machine.py): a fixture host's
sys/kernel/tracing is the tests' stand-in."""
import os
import shutil

from ipibench import machine
from ipibench.exit_codes import EX_UNAVAILABLE
from ipibench.jobs import say
from ipibench.kvmhost import trace as kvm_trace

# kvm_apicv_update_request is the inhibit's event before 5.19, kvm_apicv_inhibit_changed after.
EVENTS = ("kvm_exit", "kvm_pio", "kvm_msr", "kvm_hypercall", "kvm_hv_hypercall",
          "kvm_hv_send_ipi", "kvm_hv_send_ipi_ex", "kvm_hv_flush_tlb", "kvm_hv_flush_tlb_ex",
          "kvm_apicv_inhibit_changed", "kvm_apicv_update_request", "kvm_apicv_accept_irq",
          "kvm_avic_incomplete_ipi",
          "kvm_avic_unaccelerated_access", "kvm_avic_ga_log", "kvm_avic_kick_vcpu_slowpath",
          "kvm_vcpu_wakeup", "kvm_entry", "kvm_set_irq")
# SVM_EXIT_IOIO is 0x7b, VMX's I/O-instruction exit 30; both keep the port in
# bits 31:16 of info1 (EXITINFO1, the exit qualification).
EXIT_FILTER = "(exit_reason != 123 && exit_reason != 30) || info1 < 0x3f80000 || info1 >= 0x4000000"
PIO_FILTER = "port < 0x3f8 || port > 0x3ff"
# The PIT's line only (trace_read.Trace.pit_ticks): the guest stops the PIT
# after calibration (kernel/pit.c), and the trace shows whether it stayed so.
SET_IRQ_FILTER = "gsi == 0"
BUFFER_KB = 65536


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def pit_threads(qemu_pid, proc=None):
    """The tids of the in-kernel PIT's worker of this VM: KVM names it
    kvm-pit/<the creating process's pid> (arch/x86/kvm/i8254.c,
    kvm_create_pit()), and it, not a QEMU thread, raises GSI 0."""
    want, out, proc = f"kvm-pit/{qemu_pid}", [], proc or machine.process("")
    for d in os.listdir(proc):
        if d.isdigit():
            try:
                with open(os.path.join(proc, d, "comm")) as f:
                    if f.read().strip() == want:
                        out.append(d)
            except OSError:
                continue
    return out


class HostTrace:
    def __init__(self, root):
        self.root, self.enabled, self.missing, self.pit = root, [], [], []

    def start(self, qemu_pid):
        """Traces QEMU's threads (all exist while it is paused); 0 or an exit code."""
        try:
            tids = sorted(os.listdir(machine.process(qemu_pid, "task")), key=int)
        except OSError:
            say(f"run.sh: --exits: QEMU's threads (pid {qemu_pid}) cannot be listed")
            return EX_UNAVAILABLE
        t = self.root
        try:
            _write(os.path.join(t, "tracing_on"), "0")
            _write(os.path.join(t, "buffer_size_kb"), str(BUFFER_KB))
            _write(os.path.join(t, "trace"), "")
            self.pit = pit_threads(qemu_pid)
            _write(os.path.join(t, "set_event_pid"), " ".join(tids + self.pit))
            for e in EVENTS:
                d = os.path.join(t, "events", "kvm", e)
                if not os.path.isdir(d):
                    self.missing.append(e)
                    continue
                _write(os.path.join(d, "enable"), "1")
                self.enabled.append(e)
            _write(os.path.join(t, "events", "kvm", "kvm_exit", "filter"), EXIT_FILTER)
            if "kvm_pio" in self.enabled:
                _write(os.path.join(t, "events", "kvm", "kvm_pio", "filter"), PIO_FILTER)
            if "kvm_set_irq" in self.enabled:
                _write(os.path.join(t, "events", "kvm", "kvm_set_irq", "filter"), SET_IRQ_FILTER)
            _write(os.path.join(t, "tracing_on"), "1")
        except OSError as e:
            say(f"run.sh: --exits: tracefs at {t}: {e.strerror} ({e.filename})")
            self.stop(None)
            return EX_UNAVAILABLE
        say(f"run.sh: --exits: tracing {len(tids)} QEMU threads: {' '.join(self.enabled)}; not on this kernel: {' '.join(self.missing) or 'none'}; COM1 port exits filtered out; the in-kernel PIT's thread: "
            + (f"kvm-pit/{qemu_pid} (tid {' '.join(self.pit)})" if self.pit else "none found"))
        return 0

    def stop(self, save_dir):
        """Events off, the PID filter cleared; with save_dir, the trace kept there.
        Returns the path of the kept trace, or None."""
        t, kept = self.root, None
        try:
            _write(os.path.join(t, "tracing_on"), "0")
            if save_dir:
                kept = os.path.join(save_dir, kvm_trace.TRACE_FILE)
                shutil.copyfile(os.path.join(t, "trace"), kept)
                if self.pit and "kvm_set_irq" in self.enabled:
                    with open(kept, "a") as f:
                        f.write("# ipibench-trace: pit-traced\n")
        except OSError as e:
            say(f"run.sh: --exits: could not read the trace: {e.strerror}")
        for e in self.enabled:
            try:
                _write(os.path.join(t, "events", "kvm", e, "enable"), "0")
            except OSError:
                pass
        for name, value in (("events/kvm/kvm_exit/filter", "0"),
                            ("events/kvm/kvm_set_irq/filter", "0"), ("set_event_pid", "")):
            try:
                _write(os.path.join(t, name), value)
            except OSError:
                pass
        return kept
