#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Python binding's unit tests (tests/py/binding.py) with Debian's python3.
exec /usr/bin/python3 "$(dirname "$0")/binding.py"
