// SPDX-License-Identifier: GPL-2.0
/* inaggd's state file: the jobs written before anything changes, read after a crash. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "inaggd.h"

int save_state(void *ctx, const struct ia_jobs *js)
{
	struct daemon *d = ctx;
	json_object *root = ia_jobs_to_json(js);
	const char *s;
	int ret;

	json_object_object_add(root, "tag", json_object_new_string(d->tag));
	json_object_object_add(root, "topology", json_object_new_string(d->topo_path));
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	/* A crash leaves the old or the new file, never half. */
	ret = ia_write_atomic(d->state_path, s, strlen(s), 0600, true);
	json_object_put(root);
	if (ret)
		log_msg(IA_LOG_ERR, "state file %s: %s", d->state_path, strerror(-ret));
	return ret;
}

/* Reads the state file, if any, and hands it to the transaction's recovery. */
int recover_state(struct daemon *d)
{
	char err[IA_ERRLEN];
	json_object *root, *v;
	int repairs, ret;

	root = json_object_from_file(d->state_path);
	if (!root) {
		if (access(d->state_path, F_OK) && errno == ENOENT)
			return 0;
		log_msg(IA_LOG_ERR, "state file %s unreadable: %s", d->state_path,
			json_util_get_last_err());
		return -EBADMSG;
	}
	if (!json_object_object_get_ex(root, "tag", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), d->tag)) {
		log_msg(IA_LOG_ERR, "state file %s belongs to another network", d->state_path);
		json_object_put(root);
		return -EINVAL;
	}
	ret = ia_jobs_recover(&d->jobs, root, &repairs, err, sizeof(err));
	json_object_put(root);
	if (ret)
		log_msg(IA_LOG_ERR, "state file %s: %s", d->state_path, err);
	return ret;
}
