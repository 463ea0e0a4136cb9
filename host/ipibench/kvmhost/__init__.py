# SPDX-License-Identifier: GPL-2.0-only
"""The KVM host: its facts (facts.py), module parameters (modparam.py), the
trace (tracefs.py writes it, trace.py reads it), per-vCPU statistics
(hoststats.py), and --pin and --perf-kvm (pin_perf.py)."""
