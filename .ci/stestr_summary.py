# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Print "N passed, N failed, N skipped" for every run stestr stored.

Usage: stestr_summary.py PROJECT_DIR [STEP_EXIT_STATUS ...]

PROJECT_DIR is the directory holding the ``.stestr`` repository, where
every step of CI (the README's test command, tox -e trove, tox -e lowest)
stores its runs; STEP_EXIT_STATUS is the exit status of each step.

Run it with the python of a tox environment: it reads the repository
through stestr's own API.  Every stored run is counted: a test whose last
status is not a success, an expected failure or a skip counts as failed (a
worker that died mid-test leaves it "inprogress").  When the test command
failed but no test did (a style check, an install step), that counts as one
failure per failed step, so that the line never reads as a success for a
failed run.
Before that line it lists every test that did not pass, with the last
lines of its traceback, so that a CI log cut to its tail still names them.
Exits 1 if anything failed.
"""

import os
import sys

from stestr.repository import util
import testtools


TRACEBACK_LINES = 12


def _tests(run):
    tests = {}

    def record(test):
        tests[test['id']] = test

    result = testtools.StreamToDict(record)
    result.startTestRun()
    run.get_test().run(result)
    result.stopTestRun()
    return tests.values()


def _traceback_tail(test):
    details = test.get('details') or {}
    for name in ('traceback', 'reason'):
        if name in details:
            try:
                text = details[name].as_text()
            except Exception:  # an undecodable detail must not hide the id
                continue
            return text.rstrip().splitlines()[-TRACEBACK_LINES:]
    return []


def summarize(project_dir, out=sys.stdout):
    passed = failed = skipped = 0
    if not os.path.isdir(os.path.join(project_dir, '.stestr')):
        return passed, failed, skipped
    repo = util.get_repo_open(repo_url=project_dir)
    for run_id in range(int(repo.latest_id()) + 1):
        for test in _tests(repo.get_test_run(run_id)):
            status = test['status']
            if status in ('success', 'xfail'):
                passed += 1
            elif status == 'skip':
                skipped += 1
            elif status != 'exists':
                failed += 1
                out.write('FAILED (%s, run %d): %s\n'
                          % (status, run_id, test['id']))
                for line in _traceback_tail(test):
                    out.write('    %s\n' % line)
    return passed, failed, skipped


def main(argv):
    project_dir = argv[1] if len(argv) > 1 else '.'
    failed_steps = sum(1 for status in argv[2:] if int(status) != 0)
    passed, failed, skipped = summarize(project_dir)
    if failed == 0:
        failed = failed_steps
    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
