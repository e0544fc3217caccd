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
"""Retention decisions over a simulated year of daily backups."""

import datetime
import zoneinfo

from oslotest import base

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.worker import retention

UTC = datetime.timezone.utc
BERLIN = zoneinfo.ZoneInfo('Europe/Berlin')
# Backups every day at 02:30 Berlin time, 2025-12-01 .. 2026-11-30 (365).
LAST_DAY = datetime.date(2026, 11, 30)
NOW = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _daily_year():
    backups = []
    for offset in range(365):
        day = LAST_DAY - datetime.timedelta(days=offset)
        created = datetime.datetime(day.year, day.month, day.day, 2, 30,
                                    tzinfo=BERLIN).astimezone(UTC)
        backups.append(backends.Backup(
            id=day.isoformat(), instance_id='db', created_at=created,
            status=backends.BackupStatus.COMPLETED))
    return backups


def _kept_days(decision):
    return sorted(decision.keep)


class TestRetentionRules(base.BaseTestCase):

    def plan(self, backups=None, **rules):
        return retention.plan_retention(
            backups if backups is not None else _daily_year(),
            retention.RetentionRules(**rules), BERLIN, NOW)

    def test_no_rule_keeps_everything(self):
        decision = self.plan()
        self.assertEqual([], decision.delete)
        self.assertEqual(365, len(decision.keep))

    def test_keep_last(self):
        decision = self.plan(keep_last=3)
        self.assertEqual(['2026-11-28', '2026-11-29', '2026-11-30'],
                         _kept_days(decision))
        self.assertEqual(362, len(decision.delete))
        # Oldest first.
        self.assertEqual('2025-12-01', decision.delete[0].id)

    def test_keep_daily_weekly_monthly_over_a_year(self):
        decision = self.plan(keep_daily=7, keep_weekly=4, keep_monthly=12)
        daily = ['2026-11-%02d' % d for d in range(24, 31)]
        # The newest backup of each of the last 4 ISO weeks: 2026-11-30 is
        # a Monday (its week so far), then the Sundays before it.
        weekly = ['2026-11-30', '2026-11-29', '2026-11-22', '2026-11-15']
        # The newest backup of each of the last 12 months: the last day of
        # each month, November 2026 being its 30th.
        monthly = ['2026-11-30', '2026-10-31', '2026-09-30', '2026-08-31',
                   '2026-07-31', '2026-06-30', '2026-05-31', '2026-04-30',
                   '2026-03-31', '2026-02-28', '2026-01-31', '2025-12-31']
        self.assertEqual(sorted(set(daily + weekly + monthly)),
                         _kept_days(decision))
        # 7 daily + 2 more weekly + 11 more monthly = 20 kept.
        self.assertEqual(365 - 20, len(decision.delete))
        reasons = decision.keep['2026-11-29']
        self.assertIn('keep_daily', reasons)
        self.assertIn('keep_weekly', reasons)

    def test_days_are_counted_in_the_policy_zone(self):
        # 00:30 Berlin is the previous day in UTC: two backups on the same
        # Berlin day must count as one day.
        day = datetime.datetime(2026, 11, 30, 0, 30, tzinfo=BERLIN)
        backups = [backends.Backup(id=str(n), instance_id='db',
                                   created_at=(day + datetime.timedelta(
                                       hours=n)).astimezone(UTC),
                                   status='COMPLETED') for n in range(2)]
        decision = self.plan(backups, keep_daily=1)
        self.assertEqual(['1'], _kept_days(decision))

    def test_max_age(self):
        decision = self.plan(max_age_days=10)
        # Younger than 10 days at NOW: 2026-11-21 02:30 onwards.
        self.assertEqual(['2026-11-%02d' % d for d in range(21, 31)],
                         _kept_days(decision))

    def test_newest_is_never_deleted(self):
        decision = self.plan(max_age_days=0)
        self.assertEqual(['2026-11-30'], _kept_days(decision))
        self.assertEqual(['newest'], decision.keep['2026-11-30'])

    def test_parents_of_kept_incrementals_are_kept(self):
        backups = _daily_year()[:10]
        # 2026-11-30 builds on 11-29, which builds on 11-28 (full).
        backups[0].parent_id = '2026-11-29'
        backups[1].parent_id = '2026-11-28'
        decision = self.plan(backups, keep_last=1)
        self.assertEqual(['2026-11-28', '2026-11-29', '2026-11-30'],
                         _kept_days(decision))
        self.assertEqual(['parent of 2026-11-29'],
                         decision.keep['2026-11-28'])

    def test_only_completed_backups_are_candidates(self):
        backups = _daily_year()[:5]
        backups[0].status = backends.BackupStatus.BUILDING
        backups[3].status = backends.BackupStatus.FAILED
        decision = self.plan(backups, keep_last=1)
        # The newest *completed* one is kept; the building and the failed
        # ones are neither kept nor deleted.
        self.assertEqual(['2026-11-29'], _kept_days(decision))
        self.assertEqual(['2026-11-26', '2026-11-28'],
                         sorted(b.id for b in decision.delete))

    def test_nothing_to_decide(self):
        decision = self.plan([], keep_last=1)
        self.assertEqual(({}, []), (decision.keep, decision.delete))
