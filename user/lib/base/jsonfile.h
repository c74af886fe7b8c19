/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A whole JSON file as a json-c object, with errors as the topology reader
 * gives them: "PATH: No such file or directory", "PATH: not valid JSON (...)".
 */
#ifndef INAGG_JSONFILE_H
#define INAGG_JSONFILE_H

#include <stddef.h>
#include <json-c/json.h>

/*
 * Reads and parses PATH ("-" is stdin): one JSON value and nothing after it
 * but white space. Returns 0 with *out set (the caller puts it), or a
 * negative errno with err naming the file and why, on one line.
 */
int ia_json_file(const char *path, json_object **out, char *err, size_t errlen);

#endif
