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
"""The coverage rules: each state, and their order of precedence."""

import datetime

from dbaas_scheduler import coverage
from dbaas_scheduler.tests import base

NOW = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.timezone.utc)
HOUR = datetime.timedelta(hours=1)
RULES = coverage.Thresholds(max_age=36 * 3600, min_daily=1.0, min_keep=7)


def _instance(**values):
    fields = dict(backend='trove', project_id='p', instance_id='i',
                  policies=1, enabled_policies=1,
                  last_success_at=NOW - HOUR, first_created_at=NOW - 90 * HOUR,
                  daily_runs=1.0, keeps=7)
    fields.update(values)
    return coverage.Instance(**fields)


class TestClassify(base.TestCase):

    def verdict(self, thresholds=RULES, **values):
        return coverage.classify(_instance(**values), thresholds, NOW)

    def test_protected(self):
        self.assertEqual(('protected', ['protected']), self.verdict())

    def test_no_policy_is_unprotected(self):
        verdict = coverage.classify(coverage.Instance('trove', 'p', 'i'),
                                    RULES, NOW)
        self.assertEqual(('unprotected', ['unprotected']), verdict)

    def test_all_paused_wins_over_stale(self):
        verdict = self.verdict(enabled_policies=0,
                               last_success_at=NOW - 100 * HOUR)
        self.assertEqual('paused', verdict.state)

    def test_stale_after_max_age(self):
        self.assertEqual('protected', self.verdict(
            last_success_at=NOW - 35 * HOUR).state)
        self.assertEqual('stale', self.verdict(
            last_success_at=NOW - 37 * HOUR).state)

    def test_a_users_rpo_replaces_max_age(self):
        self.assertEqual('stale', self.verdict(rpo=1800).state)
        self.assertEqual('protected', self.verdict(
            rpo=100 * 3600, last_success_at=NOW - 50 * HOUR).state)

    def test_before_the_first_success_the_oldest_policy_counts(self):
        self.assertEqual('protected', self.verdict(
            last_success_at=None, first_created_at=NOW - HOUR).state)
        self.assertEqual('stale', self.verdict(
            last_success_at=None, first_created_at=NOW - 40 * HOUR).state)

    def test_below_minimum_frequency_with_a_dst_tolerance(self):
        self.assertEqual('below_minimum', self.verdict(
            daily_runs=1 / 7.0).state)
        # A daily schedule over a fall-back night: 23.96 slots in 24 days.
        self.assertEqual('protected', self.verdict(daily_runs=0.998).state)
        # Unknown (computed at the policy's next change): not judged.
        self.assertEqual('protected', self.verdict(daily_runs=None).state)
        self.assertEqual('protected', self.verdict(
            coverage.Thresholds(36 * 3600, 0, 7), daily_runs=0.1).state)

    def test_below_minimum_retention(self):
        self.assertEqual('below_minimum', self.verdict(keeps=3).state)
        self.assertEqual('below_minimum', self.verdict(keeps=None).state)
        # No retention rule: every backup is kept.
        self.assertEqual('protected', self.verdict(
            keeps=None, keeps_all=True).state)
        self.assertEqual('protected', self.verdict(
            coverage.Thresholds(36 * 3600, 1.0, 0), keeps=1).state)

    def test_every_reason_in_order_of_precedence(self):
        verdict = self.verdict(last_success_at=NOW - 50 * HOUR, keeps=1,
                               verification_failed=True)
        self.assertEqual(
            ('stale', ['stale', 'verification_failed', 'below_minimum']),
            verdict)

    def test_count_names_every_state(self):
        self.assertEqual(
            {'unprotected': 2, 'paused': 0, 'stale': 1,
             'verification_failed': 0, 'below_minimum': 0, 'protected': 0},
            coverage.count(['unprotected', 'stale', 'unprotected']))


def _row(instance):
    """``instance`` as db.coverage.policy_rows reads it."""
    return instance[:5] + tuple(
        None if value is None else coverage.time_text(value)
        for value in instance[5:7]) + instance[7:11] + (
            int(instance.verification_failed),)


class TestRowClassifier(base.TestCase):
    """The report's classifier of rows agrees with :func:`classify`."""

    def test_agrees_on_every_combination(self):
        second, micro = datetime.timedelta(seconds=1), datetime.timedelta(
            microseconds=1)
        limit = NOW - 36 * HOUR
        times = [None, NOW, limit, limit - micro, limit + micro,
                 limit - second, NOW - 1800 * second,
                 NOW - 1800 * second - micro]
        thresholds = [RULES, RULES._replace(min_daily=0),
                      RULES._replace(min_keep=0),
                      RULES._replace(max_age=60, min_daily=2.5)]
        checked = set()
        for rules in thresholds:
            classify_row = coverage.row_classifier(rules, NOW)
            for values in (
                    dict(policies=policies, enabled_policies=enabled,
                         last_success_at=last, first_created_at=first,
                         rpo=rpo, daily_runs=daily, keeps=keeps,
                         keeps_all=keeps_all, verification_failed=failed)
                    for policies, enabled in ((0, 0), (2, 0), (1, 1))
                    for last in times for first in times[:3]
                    for rpo in (None, 1800)
                    for daily in (None, 0.99, 0.98, 1 / 7.0, 3.0)
                    for keeps in (None, 0, 6.0, 7.0)
                    for keeps_all in (0, 1)
                    for failed in (False, True)):
                instance = _instance(**values)
                expected = coverage.classify(instance, rules, NOW)
                got = classify_row(_row(instance))
                self.assertEqual(expected, got, (instance, rules))
                checked.add(got.state)
        self.assertEqual(set(coverage.PRECEDENCE), checked)

    def test_now_in_another_zone(self):
        tokyo = datetime.timezone(datetime.timedelta(hours=9))
        instance = _instance(last_success_at=NOW - 36 * HOUR - HOUR / 3600)
        classify_row = coverage.row_classifier(RULES, NOW.astimezone(tokyo))
        self.assertEqual('stale', classify_row(_row(instance)).state)


class TestTimeText(base.TestCase):

    def test_fixed_width_utc(self):
        paris = datetime.timezone(datetime.timedelta(hours=1))
        self.assertEqual('2026-11-27T11:00:00.000000', coverage.time_text(
            datetime.datetime(2026, 11, 27, 12, 0, tzinfo=paris)))
        self.assertEqual('0999-01-02T03:04:05.000007', coverage.time_text(
            datetime.datetime(999, 1, 2, 3, 4, 5, 7,
                              tzinfo=datetime.timezone.utc)))

    def test_sorts_as_the_times(self):
        times = [NOW + datetime.timedelta(microseconds=n)
                 for n in (0, 1, 999999, 1000000, -1, 36 * 10 ** 8)]
        self.assertEqual(sorted(times),
                         sorted(times, key=coverage.time_text))
