# SPDX-License-Identifier: GPL-2.0-only
"""What a Xen host says of a run: its trace (xentrace), read into the
lines the KVM trace reader takes (kvmhost/trace_read.py)."""
