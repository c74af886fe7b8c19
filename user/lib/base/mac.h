/* SPDX-License-Identifier: GPL-2.0 */
/* MAC addresses as text, "aa:bb:cc:dd:ee:ff": the agent's and the controller's alike. */
#ifndef INAGG_MAC_H
#define INAGG_MAC_H

/* 0, or -EINVAL when s is not six hex bytes separated by colons. */
int ia_mac_parse(const char *s, unsigned char mac[6]);
void ia_mac_format(const unsigned char mac[6], char buf[18]);

#endif
