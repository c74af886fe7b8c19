// SPDX-License-Identifier: GPL-2.0
/* A job record's window policy and class (cc_job.h). */
#include <errno.h>
#include <string.h>

#include "cc_job.h"

int ia_job_cc_of(json_object *job, enum ia_cc_policy *cc, bool *ps_job)
{
	json_object *v;

	if (cc)
		*cc = IA_CC_FIXED;
	if (ps_job)
		*ps_job = json_object_object_get_ex(job, "class", &v) &&
			  json_object_is_type(v, json_type_string) &&
			  !strcmp(json_object_get_string(v), "ps");
	if (!cc || !json_object_object_get_ex(job, "cc", &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    ia_cc_policy_parse(json_object_get_string(v), cc))
		return -EINVAL;
	return 0;
}
