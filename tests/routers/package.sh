#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The routers layer in its package mode (docs/routers.md on three 6.1 VMs that
# install the built packages): tests/kmod/routers.sh with ROUTERS_BOOT=package.
# Not in make check (about 13 minutes under TCG): make check-routers runs this
# layer through scripts/run-tests.sh, and CI runs that as its own stage after
# make check (.ci/run). DKMS_PREBUILT: the inagg.ko inagg-dkms carries prebuilt.
exec env ROUTERS_BOOT=package bash "$(dirname "$0")/../kmod/routers.sh"
