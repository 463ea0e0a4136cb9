// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flush registry (include/flush.h): the one place that lists the
 * remote TLB-flush implementations, as ipi/core.c lists the IPI backends.
 * The flush benchmark emits its records and the suite its checks in this
 * order: the native shootdown, then each Hyper-V flush call, slow before
 * XMM-fast.
 */
#include "include/flush.h"
#include "include/compiler.h"

const struct flush_ops *const flush_impls[] = {
    &flush_native_invlpg,   &flush_native_invlpg_after_eoi,
    &flush_native_cr3,	    &flush_hv_space_slow,    &flush_hv_space_xmm,
    &flush_hv_list_slow,    &flush_hv_list_xmm,	   &flush_hv_space_ex_slow, &flush_hv_space_ex_xmm,
    &flush_hv_list_ex_slow, &flush_hv_list_ex_xmm,
};
const unsigned int flush_impl_count = ARRAY_SIZE(flush_impls);

void flush_probe_early(void)
{
	for (unsigned int i = 0; i < flush_impl_count; i++) {
		const struct flush_ops *o = flush_impls[i];

		if (!o->family->probe || !o->family->probe())
			(void)o->probe();
	}
}
