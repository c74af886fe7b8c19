/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How hard the datapath's programs are to verify: the instructions the
 * verifier processed loading each (bpf_prog_info.verified_insns), recorded on
 * the two kernels the project runs on, and the budget a test holds a program
 * to, 1.5 times the record. The verifier's own limit (1,000,000) cannot fail
 * a test once the program loaded; a budget fails on a change that makes a
 * program half again as hard to verify, and then the record is measured
 * again on purpose (the tests log the figures).
 *
 * Recorded at commit cf81f51 (Dec 6): the host's 6.18 by tests/bpf/xdp_tail
 * and xdp_sparse, Debian 12's 6.1 in the guest of tests/kmod/vm.sh
 * (VM_TESTS="xdp_tail xdp_sparse"). On 6.1, ia_xdp is at 98 % of the
 * verifier's limit: there the budget is above the limit, which stays the
 * bound that counts.
 */
#ifndef INAGG_TESTS_INSNS_BUDGET_H
#define INAGG_TESTS_INSNS_BUDGET_H

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static const struct insns_record {
	const char *prog;
	unsigned long k6_1, k6_18;
} insns_records[] = {
	{ "ia_xdp",	980081, 592618 },
	{ "ia_tail",	492116, 643376 },
	{ "ia_evict",	339382, 370203 },
	{ "ia_sparse",	 34401,  15949 },
};

/*
 * The budget of program prog on the running kernel: 1.5 times its record on
 * 6.18 from 6.18 on, on 6.1 before (the verifier's figures move between
 * versions); 0 for a program without a record.
 */
static inline unsigned long insns_budget(const char *prog)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	for (size_t i = 0; i < sizeof(insns_records) / sizeof(insns_records[0]); i++) {
		const struct insns_record *r = &insns_records[i];

		if (!strcmp(r->prog, prog))
			return (major * 100 + minor >= 618 ? r->k6_18 : r->k6_1) * 3 / 2;
	}
	return 0;
}

#endif
