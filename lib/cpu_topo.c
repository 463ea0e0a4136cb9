// SPDX-License-Identifier: GPL-2.0-only
/* APIC ID fields from CPUID's topology leaves (lib/cpu_topo.h). */
#include "lib/cpu_topo.h"
#include "lib/error.h"
#include "lib/fmt.h"

#include <stdbool.h>

/* The fewest bits that number 0 .. count - 1 (0 for a count of 0 or 1). */
static unsigned int bits_for(uint32_t count)
{
	unsigned int b = 0;

	while (b < 32 && (1ull << b) < count)
		b++;
	return b;
}

int topo_from_levels(const struct topo_subleaf *lv, size_t n, struct topo_shifts *out)
{
	unsigned int last = 0, seen = 0;
	bool smt = false;
	size_t i;

	*out = (struct topo_shifts){ 0, 0 };
	for (i = 0; i < n; i++) {
		unsigned int type = (lv[i].ecx >> 8) & 0xff, shift = lv[i].eax & 0x1f;

		if ((lv[i].ebx & 0xffff) == 0 || type == 0)
			break;
		if (shift < last || (type < 32 && (seen & (1u << type))))
			return -E_INVAL;
		if (type < 32)
			seen |= 1u << type;
		if (type == TOPO_TYPE_SMT) {
			out->thread_bits = shift;
			smt = true;
		}
		last = shift;
	}
	if (i == 0)
		return -E_NOENT;
	/* The SMT level comes first when there is one; no SMT level: one thread a core. */
	if (!smt)
		out->thread_bits = 0;
	out->package_shift = last;
	return 0;
}

int topo_from_amd(uint32_t ext8_ecx, uint32_t ext1e_ebx, struct topo_shifts *out)
{
	unsigned int size = (ext8_ecx >> 12) & 0xf;
	unsigned int threads = ((ext1e_ebx >> 8) & 0xff) + 1;

	if (!size)
		size = bits_for((ext8_ecx & 0xff) + 1);
	out->thread_bits = bits_for(threads);
	if (out->thread_bits > size)
		return -E_INVAL;
	out->package_shift = size;
	return 0;
}

int topo_from_legacy(uint32_t l1_ebx, uint32_t l1_edx, uint32_t l4_eax, struct topo_shifts *out)
{
	uint32_t logical = (l1_edx & (1u << 28)) ? (l1_ebx >> 16) & 0xff : 1;
	uint32_t cores = l4_eax ? ((l4_eax >> 26) & 0x3f) + 1 : 1;
	unsigned int pkg = bits_for(logical), core = bits_for(cores);

	*out = (struct topo_shifts){ 0, pkg };
	if (core > pkg)
		return -E_INVAL;
	out->thread_bits = pkg - core;
	return 0;
}

static uint32_t field(uint32_t v, unsigned int lo, unsigned int hi)
{
	if (lo >= 32)
		return 0;
	v >>= lo;
	return hi - lo >= 32 ? v : v & (uint32_t)((1ull << (hi - lo)) - 1);
}

struct topo_place topo_place_of(const struct topo_shifts *s, uint32_t apic_id)
{
	return (struct topo_place){
		.package = field(apic_id, s->package_shift, 64),
		.core = field(apic_id, s->thread_bits, s->package_shift),
		.thread = field(apic_id, 0, s->thread_bits),
	};
}

/* The smallest of ids[] above *prev (any at all when first), into *prev; false when none is. */
static bool next_above(const uint32_t *ids, size_t n, bool first, uint32_t *prev)
{
	bool found = false;
	uint32_t best = 0;

	for (size_t i = 0; i < n; i++) {
		if ((first || ids[i] > *prev) && (!found || ids[i] < best)) {
			best = ids[i];
			found = true;
		}
	}
	*prev = best;
	return found;
}

/*
 * Packages, the most cores in one, the most threads in one core, and the
 * distinct IDs: in ascending order an APIC ID's fields ascend as (package,
 * core, thread), so each count is a change from the ID before. Quadratic,
 * without storage: 1024 CPUs cost a million compares, once at boot.
 */
static void count_places(const struct topo_shifts *s, const uint32_t *ids, size_t n,
			 size_t *packages, size_t *cores, size_t *threads, size_t *distinct)
{
	struct topo_place last = { 0, 0, 0 };
	size_t c = 0, t = 0;
	uint32_t id = 0;

	*packages = *cores = *threads = *distinct = 0;
	for (bool first = true; next_above(ids, n, first, &id); first = false) {
		struct topo_place p = topo_place_of(s, id);

		if (first || p.package != last.package) {
			++*packages;
			c = t = 1;
		} else if (p.core != last.core) {
			c++;
			t = 1;
		} else {
			t++;
		}
		*cores = c > *cores ? c : *cores;
		*threads = t > *threads ? t : *threads;
		++*distinct;
		last = p;
	}
}

static const char *plural(size_t v)
{
	return v == 1 ? "" : "s";
}

int topo_describe(char *buf, size_t size, const struct topo_shifts *s, const uint32_t *ids,
		  size_t n, size_t list_max)
{
	size_t packages, cores, threads, distinct, len;
	int w;

	count_places(s, ids, n, &packages, &cores, &threads, &distinct);
	if (packages * cores * threads == distinct)
		w = fmt_snprintf(buf, size, "%zu package%s x %zu core%s x %zu thread%s", packages,
				 plural(packages), cores, plural(cores), threads, plural(threads));
	else
		w = fmt_snprintf(
		    buf, size,
		    "%zu CPUs in %zu package%s, up to %zu core%s x %zu thread%s (uneven)", distinct,
		    packages, plural(packages), cores, plural(cores), threads, plural(threads));
	if (w < 0)
		return w;
	len = (size_t)w;
#define MORE(...)                                                                                  \
	do {                                                                                       \
		w = fmt_snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,       \
				 __VA_ARGS__);                                                     \
		if (w < 0)                                                                         \
			return w;                                                                  \
		len += (size_t)w;                                                                  \
	} while (0)
	if (n <= list_max) {
		MORE("; APIC ID = package.core.thread:");
		for (size_t i = 0; i < n; i++) {
			struct topo_place p = topo_place_of(s, ids[i]);

			MORE(" %u=%u.%u.%u", ids[i], p.package, p.core, p.thread);
		}
	} else if (s->thread_bits) {
		MORE("; APIC ID = package << %u | core << %u | thread", s->package_shift,
		     s->thread_bits);
	} else {
		MORE("; APIC ID = package << %u | core", s->package_shift);
	}
#undef MORE
	return len > 0x7fffffff ? -E_2BIG : (int)len;
}
