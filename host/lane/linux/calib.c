// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux calibration frame's /init (issue 46, docs/linux-calibration.md).
 *
 * Booted as the whole userland of a Linux guest in the KVM lane, it makes
 * IPIs whose number it knows through the system calls a real workload
 * uses, and marks each measured batch the way the ipibench guest marks a
 * sampling (an OUT to port 0xed: mark << 1 before, mark << 1 | 1 after,
 * include/bench.h), so that the lane's trace reader attributes the exits
 * in between to the batch's record and divides by its operations:
 *
 *   membarrier  MEMBARRIER_CMD_PRIVATE_EXPEDITED with a thread of this
 *               process spinning on every other vCPU (broadcast) or on one
 *               (single): one IPI to each vCPU that runs this mm
 *               (membarrier_private_expedited(), ipi_mb());
 *   wake        FUTEX_WAKE of a thread blocked on vCPU 1, whose vCPU is
 *               then idle: a reschedule (or wake-list) IPI to a halted
 *               vCPU, the path single-halt models; the next wake waits for
 *               the thread to block again and a gap after it;
 *   munmap      mmap, a write, munmap of one page while threads of this
 *               process spin on the other vCPUs: flush_tlb_mm_range() ->
 *               flush_tlb_multi(), IPIs (or, with KVM's PV TLB flush, a
 *               flag for a preempted vCPU instead; Hyper-V's flush call
 *               where Linux took it).
 *
 * What Linux chose (PV IPI, PV EOI, PV TLB flush, its idle driver) is
 * printed from its own boot messages and sysfs; what the host did comes
 * from the host's trace, never from here. Every wait has a deadline; a
 * batch that misses it ends the run FAILURE. The status leaves through
 * isa-debug-exit, as the ipibench guest's does (65 SUCCESS, 71 FAILURE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MARK_PORT      0xed /* include/bench.h: BENCH_MARK_PORT */
#define EXIT_PORT      0xf4 /* isa-debug-exit: QEMU exits (byte << 1) | 1 */
#define STATUS_SUCCESS 0x20 /* 65, as kernel/exit.c's */
#define STATUS_FAILURE 0x23 /* 71 */
#define MAX_CPUS       64
#define DEADLINE_NS    5000000000LL /* any one wait */

enum worker_mode { SPIN, PARK, WAKE, QUIT };

static volatile int mode = PARK;	/* what the workers do now */
static volatile int mode_gen;		/* bumped at each change, futex word */
static volatile int wake_word;		/* FUTEX_WAKE target of the wake batch */
static volatile int woken;		/* the wake worker's acknowledgements */
static volatile int spinning[MAX_CPUS]; /* a worker spins on its vCPU */
static volatile int spin_last;		/* under SPIN, the workers of vCPUs 1..this */
static int ncpus;
static int iters = 200, warmup = 20;
static long gap_us = 2000; /* wake: idle time before the next wake */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void say(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		_exit(1);
}

static void finish(int status)
{
	say("{\"record\":\"end\",\"schema\":1,\"status\":\"%s\"}\n",
	    status == STATUS_SUCCESS ? "SUCCESS" : "FAILURE");
	say("ipibench: status %s\n", status == STATUS_SUCCESS ? "SUCCESS" : "FAILURE");
	/* A write to the tty returns before the UART sent it: drain it, or
	 * QEMU exits with the last lines still in the guest. */
	tcdrain(1);
	outb(status, EXIT_PORT);
	/* Without isa-debug-exit: nothing else to do; the lane's bound ends it. */
	for (;;)
		pause();
}

static void fail(const char *what)
{
	say("calib: FAILURE: %s\n", what);
	finish(STATUS_FAILURE);
}

static long futex(volatile int *word, int op, int val)
{
	return syscall(SYS_futex, (int *)word, op, val, NULL, NULL, 0);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity");
}

/* One worker a vCPU but 0: does what `mode` says until it changes. */
static void *worker(void *arg)
{
	int cpu = (int)(intptr_t)arg, seen_wake = 0;

	pin(cpu);
	for (;;) {
		int gen = mode_gen, m = mode;

		if (m == QUIT)
			return NULL;
		if (m == SPIN && cpu <= spin_last) {
			/* Running this mm, in user space: membarrier's and the
			 * shootdown's IPIs come here. */
			spinning[cpu] = 1;
			while (mode_gen == gen)
				__asm__ volatile("pause");
			spinning[cpu] = 0;
		} else if (m == WAKE && cpu == 1) {
			/* Blocked, its vCPU idle, until the next FUTEX_WAKE. */
			if (wake_word == seen_wake)
				futex(&wake_word, FUTEX_WAIT_PRIVATE, seen_wake);
			if (wake_word != seen_wake) {
				seen_wake = wake_word;
				__atomic_store_n(&woken, seen_wake, __ATOMIC_RELEASE);
			}
		} else {
			futex(&mode_gen, FUTEX_WAIT_PRIVATE, gen);
		}
	}
}

static void set_mode(int m)
{
	mode = m;
	__atomic_add_fetch(&mode_gen, 1, __ATOMIC_SEQ_CST);
	futex(&mode_gen, FUTEX_WAKE_PRIVATE, MAX_CPUS);
	/* Out of the wake loop's wait too, whatever comes next. */
	futex(&wake_word, FUTEX_WAKE_PRIVATE, 1);
}

/* Waits until the workers of vCPUs first..last spin, or (spin 0) none does; deadline-bounded. */
static void await_spin(int first, int last, int spin)
{
	long long end = now_ns() + DEADLINE_NS;

	for (int c = first; c <= last; c++)
		while (!spinning[c] != !spin)
			if (now_ns() > end)
				fail(spin ? "a worker did not start spinning"
					  : "a worker did not stop spinning");
}

static void membarrier_op(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		fail("membarrier");
}

/* One wake of the worker on vCPU 1, then its block again and a gap. */
static void wake_op(void)
{
	int want = wake_word + 1;
	long long end;

	wake_word = want;
	futex(&wake_word, FUTEX_WAKE_PRIVATE, 1);
	end = now_ns() + DEADLINE_NS;
	while (__atomic_load_n(&woken, __ATOMIC_ACQUIRE) != want)
		if (now_ns() > end)
			fail("the woken thread did not run");
	/* Let it block and its vCPU go idle (HLT) before the next wake: the
	 * vDSO clock reads kvmclock, no exit. */
	end = now_ns() + gap_us * 1000;
	while (now_ns() < end)
		__asm__ volatile("pause");
}

static void munmap_op(void)
{
	volatile char *p =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fail("mmap");
	p[0] = 1;
	if (munmap((void *)p, 4096))
		fail("munmap");
}

/* A small file's text into buf, NUL-terminated: its length, 0 if none. */
static size_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

/*
 * The guest's own count of what it took, per vCPU, from /proc/interrupts
 * (LOC the local timer, RES reschedule, CAL function call, TLB shootdown
 * IPIs, and the rest): read before the begin mark and after the end mark,
 * outside the window, so that a host exit can be set beside its cause.
 */
#define IRQ_ROWS 48
struct irq_counts {
	int rows;
	char name[IRQ_ROWS][12];
	unsigned long long n[IRQ_ROWS][MAX_CPUS];
};

static void irq_read(struct irq_counts *c)
{
	static char text[1 << 15];
	char *save = NULL;

	c->rows = 0;
	if (!read_text("/proc/interrupts", text, sizeof(text)))
		return;
	strtok_r(text, "\n", &save); /* the CPU header */
	for (char *line = strtok_r(NULL, "\n", &save); line && c->rows < IRQ_ROWS;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *p;
		int r = c->rows;

		if (!colon)
			continue;
		*colon = 0;
		p = line + strspn(line, " ");
		snprintf(c->name[r], sizeof(c->name[r]), "%s", p);
		p = colon + 1;
		for (int cpu = 0; cpu < ncpus; cpu++)
			c->n[r][cpu] = strtoull(p, &p, 10);
		c->rows++;
	}
}

/* {"LOC":[cpu0,cpu1,...],...}: the rows that moved between a and b. */
static void irq_delta(const struct irq_counts *a, const struct irq_counts *b, char *out,
		      size_t size)
{
	size_t used = 0;

	out[0] = 0;
	for (int r = 0; r < a->rows && r < b->rows; r++) {
		int moved = 0;

		for (int cpu = 0; cpu < ncpus; cpu++)
			moved |= b->n[r][cpu] != a->n[r][cpu];
		if (!moved || strcmp(a->name[r], b->name[r]) != 0 ||
		    used + 32 + 24 * (size_t)ncpus >= size)
			continue;
		used +=
		    snprintf(out + used, size - used, "%s\"%s\":[", used ? "," : "", a->name[r]);
		for (int cpu = 0; cpu < ncpus; cpu++)
			used += snprintf(out + used, size - used, "%s%llu", cpu ? "," : "",
					 b->n[r][cpu] - a->n[r][cpu]);
		used += snprintf(out + used, size - used, "]");
	}
}

/* How many of row name's interrupts vCPU cpu took between a and b. */
static unsigned long long irq_moved(const struct irq_counts *a, const struct irq_counts *b,
				    const char *name, int cpu)
{
	for (int r = 0; r < a->rows && r < b->rows; r++)
		if (!strcmp(a->name[r], name) && !strcmp(b->name[r], name))
			return b->n[r][cpu] - a->n[r][cpu];
	return 0;
}

/* A file's first line, quotes and backslashes cut (it goes into JSON). */
static void read_line(const char *path, char *out, size_t size)
{
	read_text(path, out, size);
	out[strcspn(out, "\n\"\\")] = 0;
}

/*
 * What else ran while a batch did: each task's CPU time (utime + stime, in
 * clock ticks) from /proc/PID/task/TID/stat, and the CPU it last ran on.
 * Printed for a batch whose targets missed IPIs: the task that took
 * their vCPU from this process's thread.
 */
#define MAX_TASKS 512
struct task_times {
	int n;
	int tid[MAX_TASKS];
	unsigned long long ticks[MAX_TASKS];
};

static void tasks_read(struct task_times *t)
{
	char path[64], buf[512];

	t->n = 0;
	for (int pid = 1; pid < 4096 && t->n < MAX_TASKS; pid++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (!read_text(path, buf, sizeof(buf)))
			continue;
		char *p = strrchr(buf, ')');
		unsigned long long ut = 0, st = 0;
		/* After the comm: state, then fields 4..; utime is 14, stime 15. */
		if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				 &ut, &st) != 2)
			continue;
		t->tid[t->n] = pid;
		t->ticks[t->n++] = ut + st;
	}
}

/* Each thread of this process: the CPU it last ran on (stat field 39)
 * and its schedstat (run ns, runqueue wait ns, timeslices). */
static void threads_say(void)
{
	char path[96], buf[512], sched[96];

	for (int tid = 1; tid < 4096; tid++) {
		int cpu = -1;

		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		if (!read_text(path, buf, sizeof(buf)))
			continue;
		char *p = strrchr(buf, ')');
		/* After the comm, field 3 (state) is the first; processor is 39. */
		for (int field = 3; p && field <= 39; field++)
			p = strchr(p + 1, ' ');
		if (p)
			cpu = atoi(p + 1);
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
		read_line(path, sched, sizeof(sched));
		say("calib: thread %d last on CPU %d, schedstat %s\n", tid, cpu, sched);
	}
}

static void tasks_say(const struct task_times *a, const struct task_times *b)
{
	char path[64], comm[32];

	for (int j = 0; j < b->n; j++)
		for (int i = 0; i < a->n; i++) {
			if (a->tid[i] != b->tid[j] || b->ticks[j] == a->ticks[i])
				continue;
			snprintf(path, sizeof(path), "/proc/%d/comm", b->tid[j]);
			read_line(path, comm, sizeof(comm));
			say("calib: meanwhile PID %d (%s) ran %llu ticks\n", b->tid[j], comm,
			    b->ticks[j] - a->ticks[i]);
		}
}

#define ATTEMPTS 3
static int next_mark = 1, invalid;

/*
 * Runs op warmup times, then iters times between the marks; one record.
 * The record says how many IPIs its targets took by the guest's own count
 * ("ipis": CAL, function calls and the wake list's, and RES, reschedules):
 * not always one an operation. membarrier() skips a vCPU whose current
 * task is not this process's, and a shootdown a vCPU in lazy TLB mode (a
 * kernel thread running there), and KVM's PV TLB flush spares a preempted
 * vCPU its IPI. In the lane the single-target membarrier batch took half
 * to all of its IPIs; why so few is open (no other task took the target
 * vCPU for a tick by the guest's counts; its thread was switched out some
 * two dozen times a batch). That is Linux's own behaviour: the calibration divides by
 * the IPIs, not the operations (kvmhost/calibrate.py). A batch whose
 * targets took fewer than a quarter of an operation's runs again, under a new
 * mark (its window stays outside every record), at most ATTEMPTS times,
 * and is INVALID after: it would measure too little (munmap's aside).
 */
static void batch(const char *bench, const char *variant, int first, int last, void (*op)(void),
		  int check_ipis)
{
	static struct irq_counts before, after;
	static struct task_times t_before, t_after;
	static char irqs[4096];
	char targets[16];
	uint64_t t0, t1;
	int attempt, mark, ok = 0;
	unsigned long long ipis = 0;

	snprintf(targets, sizeof(targets), first < last ? "%d-%d" : "%d", first, last);
	for (attempt = 1; attempt <= ATTEMPTS && !ok; attempt++) {
		mark = next_mark++;
		/* Its /proc reads free dentries through RCU: before the warm-up,
		 * so that the callbacks run there and not on the target's vCPU
		 * inside the window. */
		tasks_read(&t_before);
		for (int i = 0; i < warmup; i++)
			op();
		irq_read(&before);
		/* The UART sends after write() returned, and a COM1 exit ends
		 * the lane's window (lane.sh): the last record out first. */
		tcdrain(1);
		int log_before = klogctl(9 /* SYSLOG_ACTION_SIZE_UNREAD */, NULL, 0);
		outl((uint32_t)mark << 1, MARK_PORT);
		t0 = rdtsc();
		for (int i = 0; i < iters; i++)
			op();
		t1 = rdtsc();
		outl((uint32_t)mark << 1 | 1, MARK_PORT);
		int log_after = klogctl(9 /* SYSLOG_ACTION_SIZE_UNREAD */, NULL, 0);
		irq_read(&after);
		ipis = 0;
		for (int c = first; c <= last; c++)
			ipis += irq_moved(&before, &after, "CAL", c) +
				irq_moved(&before, &after, "RES", c);
		ok = !check_ipis || 4 * ipis >= (unsigned long long)iters * (last - first + 1);
		/* A kernel message inside the window may have reached the
		 * console, whose exit ends the window early: run it again. */
		if (log_after != log_before) {
			say("calib: %s %s, attempt %d: the kernel logged inside the window\n",
			    bench, variant, attempt);
			ok = 0;
		}
		if (!ok) {
			tasks_read(&t_after);
			say("calib: %s %s, attempt %d: its targets took %llu IPIs in %d operations\n",
			    bench, variant, attempt, ipis, iters);
			tasks_say(&t_before, &t_after);
			threads_say();
		}
	}
	invalid |= !ok;
	irq_delta(&before, &after, irqs, sizeof(irqs));
	say("{\"record\":\"result\",\"schema\":1,\"bench\":\"%s\",\"metric\":\"op\","
	    "\"variant\":\"%s\",\"backend\":\"linux\",\"sender\":0,\"targets\":\"%s\","
	    "\"ntargets\":%d,\"status\":\"%s\",\"iterations\":%d,\"mark\":%d,"
	    "\"attempts\":%d,\"ipis\":%llu,\"cycles_per_op\":%llu,\"guest_interrupts\":{%s}}\n",
	    bench, variant, targets, last - first + 1, ok ? "SUCCESS" : "INVALID", iters, mark,
	    attempt - 1, ipis, (unsigned long long)((t1 - t0) / (uint64_t)iters), irqs);
}

static void dmesg_say(void)
{
	static char log[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);

	for (int i = 0, start = 0; i < n; i++)
		if (log[i] == '\n') {
			say("dmesg: %.*s\n", i - start, log + start);
			start = i + 1;
		}
}

/* The kernel's own lines about the paths it chose, as JSON strings. */
static void boot_lines(char *out, size_t size)
{
	static char log[1 << 17];
	static const char *const keys[] = {
	    "kvm-guest:",
	    "Hyper-V",
	    "x2apic",
	    "APIC:",
	    "cpuidle",
	    "haltpoll",
	    "Switched to clocksource",
	};
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	size_t used = 0;

	out[0] = 0;
	if (n <= 0)
		return;
	log[n] = 0;
	for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
		int hit = 0;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			hit |= strstr(line, keys[k]) != NULL;
		if (!hit)
			continue;
		/* "<6>[    0.000000] text": the text, its quotes and backslashes dropped. */
		char *text = strstr(line, "] ");
		text = text ? text + 2 : line;
		if (used + strlen(text) + 4 >= size)
			break;
		out[used] = used ? ',' : '[';
		used++;
		out[used++] = '"';
		for (; *text; text++)
			if (*text != '"' && *text != '\\' && (unsigned char)*text >= ' ')
				out[used++] = *text;
		out[used++] = '"';
		out[used] = 0;
	}
	if (used)
		strcat(out, "]");
}

/* calib.iters=N calib.warmup=N calib.gap_us=N on the kernel's command line. */
static void options(const char *cmdline)
{
	const char *p;

	if ((p = strstr(cmdline, "calib.iters=")))
		iters = atoi(p + 12);
	if ((p = strstr(cmdline, "calib.warmup=")))
		warmup = atoi(p + 13);
	if ((p = strstr(cmdline, "calib.gap_us=")))
		gap_us = atol(p + 13);
	if (iters < 1 || iters > 100000 || warmup < 0 || gap_us < 0 || gap_us > 1000000)
		fail("calib.iters, calib.warmup or calib.gap_us out of range");
}

int main(void)
{
	static char lines[4096];
	char cmdline[1024], idle[64];
	struct utsname u;
	pthread_t t[MAX_CPUS];
	int fd;

	mkdir("/dev", 0755);
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/* outl: the 32-bit mark covers ports 0xed-0xf0. */
	if (ioperm(MARK_PORT, 4, 1) || ioperm(EXIT_PORT, 1, 1)) {
		say("calib: ioperm: %s\n", strerror(errno));
		return 1;
	}
	read_line("/proc/cmdline", cmdline, sizeof(cmdline));
	options(cmdline);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 2 || ncpus > MAX_CPUS)
		fail("wants 2 to 64 vCPUs");
	read_line("/sys/devices/system/cpu/cpuidle/current_driver", idle, sizeof(idle));
	uname(&u);
	/* calib.dmesg=1: the kernel's whole log first (where its boot spent
	 * its time, with printk's stamps), outside every window. */
	if (strstr(cmdline, "calib.dmesg=1"))
		dmesg_say();
	boot_lines(lines, sizeof(lines));
	say("{\"record\":\"env\",\"schema\":1,\"version\":\"linux-calib\",\"loader\":\"linux\","
	    "\"cmdline\":\"%s\",\"cpus\":{\"count\":%d},\"linux\":{\"release\":\"%s\","
	    "\"idle_driver\":\"%s\",\"iters\":%d,\"warmup\":%d,\"gap_us\":%ld,\"boot_lines\":%s}}\n",
	    cmdline, ncpus, u.release, idle[0] ? idle : "none", iters, warmup, gap_us,
	    lines[0] ? lines : "[]");

	pin(0);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		fail("membarrier registration");
	for (int c = 1; c < ncpus; c++)
		if (pthread_create(&t[c], NULL, worker, (void *)(intptr_t)c))
			fail("pthread_create");

	spin_last = ncpus - 1;
	set_mode(SPIN);
	await_spin(1, ncpus - 1, 1);
	batch("linux-membarrier", "broadcast", 1, ncpus - 1, membarrier_op, 1);
	/* One spinner, on vCPU 1; the others parked, their vCPUs idle. */
	set_mode(PARK);
	await_spin(1, ncpus - 1, 0);
	spin_last = 1;
	set_mode(SPIN);
	await_spin(1, 1, 1);
	batch("linux-membarrier", "single", 1, 1, membarrier_op, 1);
	set_mode(WAKE);
	batch("linux-wake", "halted", 1, 1, wake_op, 1);
	/* munmap last: the pages it frees keep kernel threads busy on the
	 * other vCPUs for a while (a membarrier batch after it lost half its
	 * IPIs: membarrier() skips a vCPU running a kernel thread). */
	set_mode(PARK);
	await_spin(1, ncpus - 1, 0);
	spin_last = ncpus - 1;
	set_mode(SPIN);
	await_spin(1, ncpus - 1, 1);
	batch("linux-munmap", "broadcast", 1, ncpus - 1, munmap_op, 0);
	set_mode(QUIT);
	futex(&wake_word, FUTEX_WAKE_PRIVATE, 1);
	finish(invalid ? STATUS_FAILURE : STATUS_SUCCESS);
}
