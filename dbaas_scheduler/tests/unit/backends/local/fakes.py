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
"""What the local backend's unit tests share: times, pids, a policy."""

import datetime
from unittest import mock

UTC = datetime.timezone.utc
CREATED = datetime.datetime(2026, 11, 22, 2, 30, 15, 123456, tzinfo=UTC)
# Above the largest pid Linux can hand out: never a live process.
DEAD_PID = 2 ** 22 + 1
SECRET = 's3cr3t "pass" \\ word'


def policy(instance='orders'):
    return mock.Mock(id='policy-1', instance_id=instance)
