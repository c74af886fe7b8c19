/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job's window policy as inaggd records it (docs/cc.md): the "cc" and
 * "class" members of a job record (ia_job_to_json()), read by whoever runs
 * the job's workers (the host library's join, inagg worker run, tests).
 */
#ifndef INAGG_CC_JOB_H
#define INAGG_CC_JOB_H

#include <stdbool.h>

#include <json-c/json.h>

#include "cc.h"

/*
 * *cc from the record's "cc" (none: fixed, a record from before the
 * attribute), *ps_job from its "class" ("ps"). -EINVAL for a "cc" that is
 * not a policy's name; NULL members are skipped.
 */
int ia_job_cc_of(json_object *job, enum ia_cc_policy *cc, bool *ps_job);

#endif
