# SPDX-License-Identifier: GPL-2.0-only
"""The KVM host: its facts (facts.py), module parameters (modparam.py), the
trace (tracefs.py writes it, trace_read.py reads it, trace.py gives each
record its exits; exit_labels.py names and judges them, apicv.py says
whether the APIC was accelerated, wake.py how a halted target woke),
per-vCPU statistics (hoststats.py), and --pin and --perf-kvm (pin_perf.py)."""
