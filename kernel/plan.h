/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KERNEL_PLAN_H
#define KERNEL_PLAN_H

/*
 * After bring-up, before the plan: a CPU-number key (sender=, target=,
 * debug_cpu=) beyond the listed CPUs' count or the online ones ends the
 * run BAD-CMDLINE, naming the key and the CPUs there are.
 */
void plan_check_cpu_keys(unsigned int listed);

/* Run what the command line asked for, reporting into the run status. */
void plan_run(void);

#endif
