/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef INCLUDE_PIC_H
#define INCLUDE_PIC_H

void pic_disable(void);

#endif
