/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-point floats: x is sent as round(x * 2^frac) (half away from zero),
 * saturated to int32 (NaN as 0); a received s means s / 2^frac. The sum of
 * N workers is exact to 2^-frac per worker as long as it does not wrap:
 * choose frac so that N * max|x| * 2^frac < 2^31 (ia_fx_frac_for()).
 */
#ifndef INAGG_HOST_FX_H
#define INAGG_HOST_FX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IA_FX_FRAC_DEFAULT	16

int32_t ia_fx_encode(double x, unsigned int frac, bool *saturated);
double ia_fx_decode(int32_t s, unsigned int frac);
/* Encodes n values; returns how many saturated. */
size_t ia_fx_encode_vec(const double *x, int32_t *s, size_t n, unsigned int frac);
void ia_fx_decode_vec(const int32_t *s, double *x, size_t n, unsigned int frac);
/* Largest frac <= 30 for which nworkers values of magnitude max_abs sum without wrap; -ERANGE if none. */
int ia_fx_frac_for(double max_abs, uint32_t nworkers);

#endif
