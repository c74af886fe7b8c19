# SPDX-License-Identifier: GPL-2.0
"""KTAP for Python tests: each test a function; a failed assert fails it."""
import sys
import traceback


def run(tests):
    print("TAP version 13")
    print(f"1..{len(tests)}")
    failed = 0
    for i, t in enumerate(tests, 1):
        try:
            t()
            print(f"ok {i} {t.__name__}")
        except Exception:
            failed += 1
            for line in traceback.format_exc().splitlines():
                print(f"# {line}")
            print(f"not ok {i} {t.__name__}")
        sys.stdout.flush()
    print(f"# Totals: pass:{len(tests) - failed} fail:{failed}")
    return 1 if failed else 0
