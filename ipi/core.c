// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPI core's registry: the backend table (apic/, hyperv/ and kvm/ each
 * implement struct ipi_ops; this is the one place that lists them), the
 * delivery flags of a backend as text, and the note a send path leaves when
 * its hypercall failed.
 */
#include <stdarg.h>
#include "include/console.h"
#include "include/ipi.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/status.h"
#include "lib/error.h"
#include "lib/fmt.h"

/* Order = enum ipi_backend_id = the `backends=` choices below. */
const struct ipi_ops *const ipi_backends[IPI_BACKEND_COUNT] = {
    [IPI_BACKEND_XAPIC] = &ipi_xapic,
    [IPI_BACKEND_XAPIC_LOGICAL] = &ipi_xapic_logical,
    [IPI_BACKEND_X2APIC] = &ipi_x2apic,
    [IPI_BACKEND_X2APIC_CLUSTER] = &ipi_x2apic_cluster,
    [IPI_BACKEND_HV_ICR] = &ipi_hv_icr,
    [IPI_BACKEND_HV_IPI] = &ipi_hv_ipi,
    [IPI_BACKEND_HV_IPI_SLOW] = &ipi_hv_ipi_slow,
    [IPI_BACKEND_HV_IPI_EX] = &ipi_hv_ipi_ex,
    [IPI_BACKEND_HV_IPI_EX_XMM] = &ipi_hv_ipi_ex_xmm,
    [IPI_BACKEND_KVM_PV_IPI] = &ipi_kvm_pv_ipi,
};

/* backends=: the table's names, in its order (options.backends has a bit per entry). */
static const char *backend_names[IPI_BACKEND_COUNT + 1];

static const struct opt_spec backends_spec[] = {
	{ "backends", OPT_LIST, 0, 0, backend_names,
	  "IPI backends to check and measure (default: all)" },
};

static void backends_prepare(void)
{
	for (unsigned int i = 0; i < IPI_BACKEND_COUNT; i++)
		backend_names[i] = ipi_backends[i]->name;
}

static void backends_apply(const struct opt_value *v)
{
	if (v[0].set)
		options.backends = v[0].u;
}

static const struct option_group backends_group = { 10, backends_spec, ARRAY_SIZE(backends_spec),
						    backends_prepare, backends_apply };
OPTION_GROUP(backends_group);

const char *ipi_mode_name(enum lapic_mode mode)
{
	switch (mode) {
	case LAPIC_XAPIC:
		return "xapic";
	case LAPIC_X2APIC:
		return "x2apic";
	case LAPIC_DISABLED:
		return "disabled";
	}
	return "?";
}

const struct ipi_ops *ipi_current(void)
{
	return this_cpu()->ops;
}

int ipi_flags_format(const struct ipi_ops *ops, char *buf, size_t size)
{
	return ipi_flags_text(ops->flags, ops->mode == LAPIC_X2APIC, ops->words, buf, size);
}

/*
 * The first failure's text: a CPU claims the slot (EMPTY -> WRITING), formats
 * and publishes it (READY); the BSP reads it only when READY, so the text is
 * never read half-written.
 */
enum { FAIL_EMPTY, FAIL_WRITING, FAIL_READY };
static uint32_t fail_count;
static int fail_slot;
static char fail_text[192];

void ipi_note_failure(const char *fmt, ...)
{
	int empty = FAIL_EMPTY;
	va_list ap;

	__atomic_fetch_add(&fail_count, 1, __ATOMIC_RELAXED);
	status_report(STATUS_FAILURE);
	if (!__atomic_compare_exchange_n(&fail_slot, &empty, FAIL_WRITING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	fmt_vsnprintf(fail_text, sizeof(fail_text), fmt, ap);
	va_end(ap);
	store_release(&fail_slot, FAIL_READY);
	/* Once per batch: a FAILURE must name the call even if nobody collects it. */
	kprintf("ipi: FAILURE on CPU %u: %s\n", this_cpu()->cpu, fail_text);
}

unsigned int ipi_take_failures(char *buf, size_t size)
{
	unsigned int n = __atomic_exchange_n(&fail_count, 0, __ATOMIC_ACQ_REL);

	if (!n)
		return 0;
	if (load_acquire(&fail_slot) == FAIL_READY) {
		fmt_snprintf(buf, size, "%s", fail_text);
		store_release(&fail_slot, FAIL_EMPTY);
	} else {
		fmt_snprintf(buf, size, "(its description is still being written)");
	}
	return n;
}
