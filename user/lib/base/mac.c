// SPDX-License-Identifier: GPL-2.0
/* MAC addresses as text (mac.h). */
#include <errno.h>
#include <stdio.h>

#include "mac.h"

int ia_mac_parse(const char *s, unsigned char mac[6])
{
	unsigned int b[6];
	char end;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
			 &end) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

void ia_mac_format(const unsigned char mac[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}
