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
"""The examples of doc/source/user/schedules.rst, checked against the code.

Tables of run times follow a ``.. examples: zone=Z after=T`` comment,
tables of hashed schedules a ``.. hash-examples:`` one; both end at
``.. end-examples``.  The error messages quoted on the page are the real
ones.
"""

import ast
import datetime
import hashlib
import os
import re

from oslotest import base

from dbaas_scheduler import cron
from dbaas_scheduler import exception
from dbaas_scheduler import schedule

UTC = datetime.timezone.utc
PAGE = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'doc',
                    'source', 'user', 'schedules.rst')

_CONTEXT = re.compile(r'^\.\. (examples|hash-examples):(.*)$')
_TIME = r'\d{4}-\d\d-\d\d \d\d:\d\d'
_RUNS_ROW = re.compile(r'^``([^`]+)``\s{2,}(%s(?:, %s)*)$' % (_TIME, _TIME))
_HASH_ROW = re.compile(r'^``([^`]+)``\s+``([^`]+)``\s+``([^`]+)``$')
_MESSAGE = re.compile(
    r"^    (Invalid (cron expression|interval) ('(?:[^'\\]|\\.)*'): .*)$")


def _lines():
    with open(PAGE, encoding='utf-8') as page:
        return page.read().splitlines()


def _examples():
    """(kind, settings, row match) for every example row of the page."""
    kind, settings = None, {}
    for line in _lines():
        context = _CONTEXT.match(line)
        if context:
            kind = context.group(1)
            settings = dict(item.split('=', 1) for item in re.split(
                r' (?=\w+=)', context.group(2).strip()) if item)
            continue
        if line.startswith('.. end-examples'):
            kind = None
            continue
        if kind == 'examples' and _RUNS_ROW.match(line):
            yield kind, settings, _RUNS_ROW.match(line)
        elif kind == 'hash-examples' and _HASH_ROW.match(line):
            yield kind, settings, _HASH_ROW.match(line)


class TestSchedulesPage(base.BaseTestCase):

    def test_run_time_examples(self):
        checked = 0
        for kind, settings, row in _examples():
            if kind != 'examples':
                continue
            expected = row.group(2).split(', ')
            sched = schedule.parse_schedule('cron', row.group(1),
                                            settings['zone'])
            after = datetime.datetime.fromisoformat(
                settings['after']).replace(tzinfo=UTC)
            self.assertEqual(
                expected,
                [t.strftime('%Y-%m-%d %H:%M') for t in schedule.next_times(
                    sched, after, len(expected))], row.group(0))
            checked += 1
        self.assertGreaterEqual(checked, 20)

    def test_hash_examples(self):
        checked = 0
        for kind, _settings, row in _examples():
            if kind != 'hash-examples':
                continue
            policy, expression, resolved = row.groups()
            self.assertEqual(resolved, cron.resolve(expression, policy))
            checked += 1
        self.assertGreaterEqual(checked, 5)

    def test_shell_recipe(self):
        text = '\n'.join(_lines())
        recipe = re.findall(
            r"\$ printf '%s' (\S+) \| sha256sum \| cut -c1-16\n\s+(\w+)",
            text)
        self.assertEqual(2, len(recipe))
        for source, digits in recipe:
            self.assertEqual(
                digits, hashlib.sha256(source.encode()).hexdigest()[:16])
        computed = re.search(r"\$ python3 -c 'print\((0x\w+) % 60, (0x\w+) "
                             r"% 24\)'\n\s+(\d+) (\d+)", text)
        minute, hour = int(computed.group(1), 16), int(computed.group(2), 16)
        self.assertEqual((minute % 60, hour % 24),
                         (int(computed.group(3)), int(computed.group(4))))
        self.assertEqual([digits for _, digits in recipe],
                         [computed.group(1)[2:], computed.group(2)[2:]])

    def test_quoted_messages_are_the_real_ones(self):
        checked = 0
        for line in _lines():
            quoted = _MESSAGE.match(line)
            if not quoted:
                continue
            message, kind, literal = quoted.groups()
            expression = ast.literal_eval(literal)
            if kind == 'interval':
                error = self.assertRaises(
                    exception.InvalidInterval, schedule.parse_interval,
                    expression)
            else:
                error = self.assertRaises(
                    exception.InvalidCronExpression, schedule.parse_schedule,
                    'cron', expression, 'UTC', hash_key='policy')
            self.assertEqual(message, str(error))
            checked += 1
        self.assertGreaterEqual(checked, 10)
