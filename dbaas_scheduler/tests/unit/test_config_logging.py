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
"""config.quiet_pool_resets: a pool's failed reset is one warning line."""

import logging
import sys

from dbaas_scheduler import config
from dbaas_scheduler.tests import base


class _Kept(logging.Handler):

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


class TestPoolResetFilter(base.TestCase):

    def setUp(self):
        super().setUp()
        self.top = logging.getLogger('dbaas-test-%s' % self.id())
        self.top.propagate = False
        self.kept = _Kept()
        self.top.addHandler(self.kept)
        self.addCleanup(self.top.removeHandler, self.kept)
        config.quiet_pool_resets(self.top)
        # Twice: one filter per handler.
        config.quiet_pool_resets(self.top)

    def _log(self, name, message, error):
        logger = logging.getLogger('%s.%s' % (self.top.name, name))
        # The record's name must start with sqlalchemy.pool, as the
        # pool's own: log through a child and rename it.
        try:
            raise error
        except type(error):
            record = logger.makeRecord(
                name, logging.ERROR, __file__, 1, message, (), None)
            record.exc_info = sys.exc_info()
            logger.handle(record)
        return self.kept.records[-1]

    def test_reset_failure_becomes_a_warning_line(self):
        record = self._log(
            'sqlalchemy.pool.impl.QueuePool',
            'Exception during reset or similar',
            ConnectionError("(2013, 'Lost connection to MySQL server "
                            "during query')\nsecond line"))
        self.assertEqual(1, len(self.kept.filters))
        self.assertEqual(logging.WARNING, record.levelno)
        self.assertEqual('WARNING', record.levelname)
        self.assertIsNone(record.exc_info)
        self.assertEqual(
            "A database connection could not be reset and was discarded: "
            "ConnectionError: (2013, 'Lost connection to MySQL server "
            "during query')", record.getMessage())
        self.assertNotIn('Traceback', self.kept.format(record))

    def test_other_errors_keep_their_traceback(self):
        record = self._log('sqlalchemy.pool.impl.QueuePool',
                           'Error closing cursor', ValueError('x'))
        self.assertEqual(logging.ERROR, record.levelno)
        self.assertIsNotNone(record.exc_info)
        record = self._log('dbaas_scheduler.worker',
                           'Exception during reset or similar',
                           ValueError('y'))
        self.assertEqual(logging.ERROR, record.levelno)
        self.assertIsNotNone(record.exc_info)
