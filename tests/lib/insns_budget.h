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
 * Recorded with messages of up to 768 elements (IA_MAX_ELEMS, the element
 * loops in blocks of 256, dp_sum.h): the host's 6.18 by tests/bpf/xdp_tail
 * and xdp_sparse, Debian 12's 6.1 in the guest of tests/kmod/vm.sh
 * (VM_TESTS="xdp_tail xdp_sparse"). At 256 elements, since the locked slot
 * updates became global functions (a782929, docs/datapath.md): ia_xdp 51,548
 * on 6.1 and 78,661 on 6.18, ia_tail 57,407 and 63,688, ia_evict 44,694 and
 * 73,340. Before, inlined (4337fce): ia_xdp 978,851 on 6.1 (98 % of the
 * verifier's limit) and 590,016 on 6.18, ia_tail 399,955 and 486,297,
 * ia_evict 337,344 and 368,170.
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
	{ "ia_xdp",	 96718, 245967 },
	{ "ia_tail",	 83606, 219244 },
	{ "ia_evict",	 89852, 240646 },
	{ "ia_sparse",	 34456,  16001 },
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
