// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPI core's registry: the backends apic/, hyperv/ and kvm/ register
 * (IPI_BACKEND_REGISTER, a linker section read here, sorted by order key),
 * the backends= key over it, the delivery flags of a backend as text, and
 * the note a send path leaves when its hypercall failed.
 */
#include <stdarg.h>
#include "include/console.h"
#include "include/ipi.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/status.h"
#include "lib/error.h"
#include "lib/fmt.h"

extern const struct ipi_backend *const __ipi_backends_start[], *const __ipi_backends_end[];

static const struct ipi_ops *sorted[IPI_BACKEND_MAX];
static unsigned int nsorted;

/* backends=: the registry's names, in its order (options.backends has a bit per entry). */
static const char *backend_names[IPI_BACKEND_MAX + 1];

/* By order key, then name: insertion sort over a handful of entries, once. */
unsigned int ipi_backend_list(const struct ipi_ops *const **list)
{
	static unsigned int order[IPI_BACKEND_MAX];

	if (!nsorted) {
		size_t n = ((uintptr_t)__ipi_backends_end - (uintptr_t)__ipi_backends_start) /
			   sizeof(const struct ipi_backend *);

		for (size_t i = 0; i < n && nsorted < IPI_BACKEND_MAX; i++) {
			const struct ipi_backend *e = __ipi_backends_start[i];
			unsigned int j = nsorted++;

			while (j > 0 && (order[j - 1] > e->order ||
					 (order[j - 1] == e->order &&
					  __builtin_strcmp(sorted[j - 1]->name, e->ops->name) > 0))) {
				sorted[j] = sorted[j - 1];
				order[j] = order[j - 1];
				j--;
			}
			sorted[j] = e->ops;
			order[j] = e->order;
		}
	}
	*list = sorted;
	return nsorted;
}

const struct ipi_ops *ipi_backend_named(const char *name)
{
	const struct ipi_ops *const *list;
	unsigned int n = ipi_backend_list(&list);

	for (unsigned int i = 0; i < n; i++) {
		if (__builtin_strcmp(list[i]->name, name) == 0)
			return list[i];
	}
	return NULL;
}

const struct ipi_ops *ipi_derive(struct ipi_ops *out, const char *base_name,
				 const struct ipi_ops *own)
{
	const struct ipi_ops *base = ipi_backend_named(base_name);

	if (base->choose)
		base = base->choose();
	*out = *base;
	out->name = own->name;
	out->words = own->words;
	out->probe = own->probe;
	out->flags |= own->flags;
	out->choose = NULL;
#define IPI_DERIVE_HOOK(hook)                                                                      \
	do {                                                                                       \
		if (own->hook)                                                                     \
			out->hook = own->hook;                                                     \
	} while (0)
	IPI_DERIVE_HOOK(activate);
	IPI_DERIVE_HOOK(enable);
	IPI_DERIVE_HOOK(disable);
	IPI_DERIVE_HOOK(send);
	IPI_DERIVE_HOOK(send_set);
	IPI_DERIVE_HOOK(set_writes);
	IPI_DERIVE_HOOK(send_self);
	IPI_DERIVE_HOOK(send_self_icr);
	IPI_DERIVE_HOOK(send_self_icr2);
	IPI_DERIVE_HOOK(send_allbutself);
	IPI_DERIVE_HOOK(send_all);
	IPI_DERIVE_HOOK(eoi);
	IPI_DERIVE_HOOK(describe_call);
#undef IPI_DERIVE_HOOK
	return base;
}

bool ipi_backend_chosen(const struct ipi_ops *ops)
{
	const struct ipi_ops *const *list;
	unsigned int n = ipi_backend_list(&list);

	for (unsigned int i = 0; i < n; i++) {
		if (list[i] == ops)
			return options.backends & (1ull << i);
	}
	return false;
}

static const struct opt_spec backends_spec[] = {
	{ "backends", OPT_LIST, 0, 0, backend_names,
	  "IPI backends to check and measure (default: all)" },
};

static void backends_prepare(void)
{
	const struct ipi_ops *const *list;
	unsigned int n = ipi_backend_list(&list);

	for (unsigned int i = 0; i < n; i++)
		backend_names[i] = list[i]->name;
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
