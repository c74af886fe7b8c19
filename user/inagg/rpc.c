// SPDX-License-Identifier: GPL-2.0
/* Requests to inaggd from the command line; see rpc.h. */
#include <stdio.h>

#include "cli.h"
#include "ctl.h"
#include "rpc.h"

int rpc_call(const char *sock, json_object *req, json_object **reply)
{
	char err[IA_ERRLEN];
	json_object *ok, *msg = NULL;

	*reply = NULL;
	if (ia_ctl_call(sock ? sock : IA_CTL_SOCK, req, reply, err, sizeof(err))) {
		json_object_put(req);
		return out_err("%s", err);
	}
	json_object_put(req);
	if (!json_object_object_get_ex(*reply, "ok", &ok) || !json_object_get_boolean(ok)) {
		json_object_object_get_ex(*reply, "error", &msg);
		out_err("inaggd: %s", msg ? json_object_get_string(msg) : "failed");
		json_object_put(*reply);
		*reply = NULL;
		return 1;
	}
	return 0;
}

const char *rpc_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

int rpc_print_json(json_object *reply, const char *key)
{
	json_object *v = reply;

	if (key)
		json_object_object_get_ex(reply, key, &v);
	printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(reply);
	return 0;
}
