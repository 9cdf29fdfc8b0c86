# The TAP loop of the Python binding tests: runs each test function with
# the fixture, prints "ok"/"not ok" lines (with the traceback as comments)
# and returns the exit status; main() is the whole of each test script's
# main around it.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys
import traceback


def run(tests, fixture, prefix):
    print(f"1..{len(tests)}")
    failed = 0
    for i, test in enumerate(tests, 1):
        name = test.__name__[len("test_"):].replace("_", "-")
        try:
            test(fixture)
        except Exception:
            failed += 1
            print(f"not ok {i} {prefix}/{name}")
            for line in traceback.format_exc().splitlines():
                print("# " + line)
        else:
            print(f"ok {i} {prefix}/{name}")
        sys.stdout.flush()
    return 1 if failed else 0


def main(tests, make_fixture, prefix, seed, note=""):
    """Prints the seed, runs @tests with a fixture from make_fixture() and
    shuts its system down; returns the exit status."""
    print(f"# random seed {seed} (set ACCEL_TEST_SEED to repeat){note}")
    fixture = make_fixture()
    status = run(tests, fixture, prefix)
    fixture.system.shutdown()
    return status
