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
"""tools.benchmarks.compare: report lines picked and set side by side."""

import re

from tools.benchmarks import compare

from dbaas_scheduler.tests import base

ENGINE_REPORT = '''Burst
  dispatch rate, first tick -> last cast:      9466 /s  (100000 in 10.56 s)
  engine CPU, all engines:                     6.23 s (0.06 ms per execution)
  lateness received - scheduled_at:            8.6 s
    duplicates: slots with > 1 execution:      0
'''


class TestPick(base.TestCase):

    def test_lines_in_the_order_of_the_figures(self):
        figures = [re.compile(r'engine CPU'), re.compile(r'dispatch rate')]
        self.assertEqual(
            [('engine CPU, all engines', '6.23 s (0.06 ms per execution)'),
             ('dispatch rate, first tick -> last cast',
              '9466 /s  (100000 in 10.56 s)')],
            compare.split(compare.pick(ENGINE_REPORT, figures)))

    def test_a_key_with_a_colon(self):
        self.assertEqual(
            [('duplicates: slots with > 1 execution', '0'),
             ('run 1', '3000 executions')],
            compare.split(['duplicates: slots with > 1 execution:      0',
                           'run 1: 3000 executions']))

    def test_default_figures_match_the_engine_report(self):
        args = compare.parse_args(['--before', 'HEAD', 'engine', '--',
                                   '--policies', '10'])
        self.assertEqual(['--policies', '10'], args.arguments)
        self.assertEqual(3, len(compare.pick(ENGINE_REPORT, args.figures)))

    def test_unknown_benchmark_needs_figures(self):
        self.assertRaises(SystemExit, compare.parse_args,
                          ['--before', 'HEAD', 'purge'])
        args = compare.parse_args(['--before', 'HEAD', '--figure', 'rows',
                                   'purge'])
        self.assertEqual(['rows'], [f.pattern for f in args.figures])


class TestSideBySide(base.TestCase):

    def test_rounds_line_up_and_a_failed_run_shows_missing(self):
        results = {
            'before': [[('rate', '1'), ('run 1', 'a'), ('run 1', 'b')],
                       [('rate', '2')]],
            'after': [[('rate', '3'), ('run 1', 'c')], []],
        }
        self.assertEqual(
            [('rate', {'before': ['1', '2'], 'after': ['3', None]}),
             ('run 1', {'before': ['a', None], 'after': ['c', None]}),
             ('run 1 (2)', {'before': ['b', None], 'after': [None, None]})],
            compare.side_by_side(results))
