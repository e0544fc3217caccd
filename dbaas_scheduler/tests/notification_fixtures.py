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
"""Notifications for tests: a recorder, and the documented samples.

:class:`Recorder` puts oslo.messaging's own ``test`` driver behind
:mod:`dbaas_scheduler.notifications`, so that tests see the messages the
Notifier really builds; :func:`assert_matches_sample` checks one against
doc/notification_samples/<event_type>.json, the sample the admin guide
shows.
"""

import json
import pathlib

import fixtures
import oslo_messaging as messaging
from oslo_messaging.notify import _impl_test

import dbaas_scheduler
from dbaas_scheduler import notifications

SAMPLES = (pathlib.Path(dbaas_scheduler.__file__).parent.parent / 'doc'
           / 'notification_samples')
WRAPPER = notifications.NAMESPACE + '_object.'


def sample(event_type):
    with open(SAMPLES / ('%s.json' % event_type)) as f:
        return json.load(f)


class Recorder(fixtures.Fixture):
    """Every notification sent while the fixture is in use."""

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        _impl_test.reset()
        self.addCleanup(_impl_test.reset)
        self.addCleanup(notifications.reset)
        transport = messaging.get_notification_transport(self.conf,
                                                         url='fake:/')
        self.addCleanup(transport.cleanup)
        notifications.reset()
        notifications._NOTIFIER = messaging.Notifier(
            transport, publisher_id='dbaas-scheduler.%s' % self.conf.host,
            driver='test')

    def messages(self, event_type=None):
        """The messages sent (event type, payload, priority, publisher)."""
        return [message for _, message, _, _ in _impl_test.NOTIFICATIONS
                if event_type in (None, message['event_type'])]

    def contexts(self):
        """The contexts sent, as the driver got them."""
        return [ctxt for ctxt, _, _, _ in _impl_test.NOTIFICATIONS]

    def clear(self):
        _impl_test.reset()

    def event_types(self):
        return [message['event_type'] for message in self.messages()]


def _kind(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return bool
    if isinstance(value, (int, float)):
        return int
    return type(value)


def assert_matches_sample(test, message):
    """``message`` has the sample's event type, priority and structure.

    Same keys at every level of the payload, the same schema name and
    version, and, for each field, a value of the sample's type (or null,
    which every field but a few may be: the sample shows one case).
    """
    expected = sample(message['event_type'])
    test.assertEqual(expected['event_type'], message['event_type'])
    test.assertEqual(expected['priority'], message['priority'])
    test.assertTrue(message['publisher_id'].startswith('dbaas-scheduler.'),
                    message['publisher_id'])
    payload, wanted = message['payload'], expected['payload']
    test.assertEqual(sorted(wanted), sorted(payload), message['event_type'])
    if WRAPPER + 'data' not in wanted:
        data, wanted_data = payload, wanted  # unversioned
    else:
        for key in ('name', 'namespace', 'version'):
            test.assertEqual(wanted[WRAPPER + key], payload[WRAPPER + key],
                             key)
        data, wanted_data = payload[WRAPPER + 'data'], wanted[WRAPPER + 'data']
    test.assertEqual(sorted(wanted_data), sorted(data),
                     'the fields of %s' % message['event_type'])
    for field, value in data.items():
        if value is not None and wanted_data[field] is not None:
            test.assertEqual(_kind(wanted_data[field]), _kind(value),
                             '%s of %s' % (field, message['event_type']))
    # What the broker carries is JSON.
    test.assertEqual(payload, json.loads(json.dumps(payload)))
