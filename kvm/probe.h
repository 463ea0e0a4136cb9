/* SPDX-License-Identifier: GPL-2.0-only */
/* What kvm/'s backends share: the probe of one KVM paravirtual feature. */
#ifndef KVM_PROBE_H
#define KVM_PROBE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Why the KVM feature in bit `bit` of the features leaf EAX (name: its
 * KVM_FEATURE_* name) is unusable here, or NULL: KVM's CPUID leaves absent
 * (QEMU TCG named as such) or the bit clear. flag: the QEMU -cpu flag that
 * offers it; what: what needs it. A reason that names the leaf is written
 * into buf, the caller's own: the plan keeps each backend's reason.
 */
const char *kvm_feature_why(char *buf, size_t size, unsigned int bit, const char *name,
			    const char *flag, const char *what);

#endif
