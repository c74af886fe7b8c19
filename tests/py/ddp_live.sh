#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A short live DDP run through inagg against Gloo (tests/py/ddp_live.py).
exec /usr/bin/python3 -u "$(dirname "$0")/ddp_live.py"
