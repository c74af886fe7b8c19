/* SPDX-License-Identifier: GPL-2.0 */
/* Requests to inaggd from the command line (job and stats objects). */
#ifndef INAGG_RPC_H
#define INAGG_RPC_H

#include <json-c/json.h>

/*
 * Sends req (consumed) to the daemon at sock (NULL: IA_CTL_SOCK); on success
 * *reply holds its answer (put it). Returns 0, or 1 after out_err().
 */
int rpc_call(const char *sock, json_object *req, json_object **reply);
/* The value of key in o as a string, "" when absent. */
const char *rpc_str(json_object *o, const char *key);
/* -j: prints reply (or its member key), consumed, as the document. */
int rpc_print_json(json_object *reply, const char *key);

#endif
