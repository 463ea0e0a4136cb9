// SPDX-License-Identifier: GPL-2.0-only
/*
 * The probe kvm/'s backends share (kvm/probe.h): KVM's CPUID leaves
 * ("KVMKVMKVM" at 0x40000000 + k * 0x100, include/cpu.h's kvm_base) and
 * one bit of its features leaf (Linux Documentation/virt/kvm/x86/cpuid.rst).
 */
#include "include/cpu.h"
#include "kvm/probe.h"
#include "lib/fmt.h"
#include "lib/kvm_pvipi.h"

const char *kvm_feature_why(char *buf, size_t size, unsigned int bit, const char *name,
			    const char *flag, const char *what)
{
	if (!cpu.kvm_base) {
		if (!__builtin_memcmp(cpu.hv_vendor, "TCGTCGTCGTCG", 12))
			fmt_snprintf(
			    buf, size,
			    "no KVM PV interface: QEMU TCG (CPUID 0x40000000 \"TCGTCGTCGTCG\") has none; boot with -accel kvm and %s=on in -cpu",
			    flag);
		else
			fmt_snprintf(
			    buf, size,
			    "no KVM CPUID leaves (\"KVMKVMKVM\" at 0x40000000 + k * 0x100): %s needs -accel kvm",
			    what);
		return buf;
	}
	if (!(cpu.kvm_features & (1u << bit))) {
		fmt_snprintf(buf, size, "CPUID 0x%x EAX[%u] (%s) is 0: add %s=on to -cpu",
			     cpu.kvm_base + KVM_CPUID_FEATURES_OFFSET, bit, name, flag);
		return buf;
	}
	return NULL;
}
