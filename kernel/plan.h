/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KERNEL_PLAN_H
#define KERNEL_PLAN_H

/* Run what the command line asked for, reporting into the run status. */
void plan_run(void);

#endif
