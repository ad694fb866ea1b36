# SPDX-License-Identifier: MIT
"""How the tools tests report: a line per check, then a summary, and an exit
status that fails the test when any check failed."""
import sys

passed = failed = 0


def expect(what, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}: {detail}")


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
