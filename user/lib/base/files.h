/* SPDX-License-Identifier: GPL-2.0 */
/* Files: folders made with their parents, whole files replaced at once, the boot's id. */
#ifndef INAGG_FILES_H
#define INAGG_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* dir and its missing parents (parents 0755, dir itself mode). 0 or -errno. */
int ia_mkdir_p(const char *dir, mode_t mode);
/*
 * Replaces path with buf[0..len) at once: written to path.tmp (mode, less
 * the umask), with sync on disk before it is renamed over path, so that a
 * crash leaves the old file or the new, never half (without sync: a reader
 * sees one or the other). 0 or -errno (then path.tmp is gone).
 */
int ia_write_atomic(const char *path, const void *buf, size_t len, mode_t mode, bool sync);
/* This boot's id (/proc/sys/kernel/random/boot_id), without the newline. 0 or -errno. */
int ia_read_boot_id(char *buf, size_t len);

#endif
