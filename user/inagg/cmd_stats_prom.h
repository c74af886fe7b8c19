/* SPDX-License-Identifier: GPL-2.0 */
/* inagg stats show --prometheus (cmd_stats_prom.c). */
#ifndef INAGG_CMD_STATS_PROM_H
#define INAGG_CMD_STATS_PROM_H

/*
 * Prints inaggd's statistics (at sock) in Prometheus' text format: the
 * uplinks, switches and every active job, or only job id's when id is not 0;
 * on stdout, or into the file path (NULL or "-": stdout), replaced at once.
 * Returns the exit status (1 after out_err()).
 */
int stats_prometheus(const char *sock, long id, const char *path);

#endif
