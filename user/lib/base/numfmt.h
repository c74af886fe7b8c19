/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers as text for programs: the shortest decimal that reads back as the
 * same double (Python's repr: 22.22222222222222, 6.6, 5.0, 1e+16), so that
 * two outputs compare equal exactly when their values do.
 */
#ifndef INAGG_NUMFMT_H
#define INAGG_NUMFMT_H

#include <stddef.h>

#include "ratio.h"

/* Enough for any double in this form, sign, exponent and NUL included. */
#define IA_NUMFMT_LEN 32

/*
 * Writes v in the shortest round-trip form; "inf", "-inf" or "nan" when not
 * finite (not JSON: check isfinite() first where it must be). Returns buf.
 */
char *ia_fmt_double(double v, char buf[IA_NUMFMT_LEN]);
/* The double nearest to r (correctly rounded), in that form. */
char *ia_fmt_ratio(struct ia_ratio r, char buf[IA_NUMFMT_LEN]);

#endif
