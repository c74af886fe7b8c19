/* SPDX-License-Identifier: GPL-2.0 */
/* Skips for what the environment lacks (root, a device), in the C tests. */
#ifndef INAGG_TESTS_SKIP_H
#define INAGG_TESTS_SKIP_H

#include <unistd.h>

/*
 * Skips the test from its fixture's setup. The kselftest harness of 6.1
 * still runs a test's body after a SKIP() in its setup, on a fixture never
 * set up (it crashed, or failed asserts reported as a skip); the test's
 * process ends here instead, with the status that harness reads as a skip
 * (255), the reason already in its shared results.
 */
#define SETUP_SKIP(fmt, ...) SKIP(_exit(255), fmt, ##__VA_ARGS__)

#endif
