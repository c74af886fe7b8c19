/* SPDX-License-Identifier: GPL-2.0 */
/* The monotonic clock, in the units the code wants it. */
#ifndef INAGG_CLOCK_H
#define INAGG_CLOCK_H

long long ia_now_ms(void);
double ia_now_seconds(void);

#endif
