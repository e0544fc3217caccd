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
"""Loading backend plugins by name (stevedore)."""

import threading

from stevedore import driver
from stevedore import extension

from dbaas_scheduler.backends import base
from dbaas_scheduler import exception

_BACKENDS = {}
_LOCK = threading.Lock()


class UnknownBackend(exception.Invalid):
    msg_fmt = ('Unknown backup backend %(name)r: the installed backends are '
               '%(available)s.')


def get_backend(conf, name):
    """The (shared) instance of backend ``name`` for this process.

    Wrapped in a :class:`base.MeasuredBackend`, which times its calls for
    the process's metrics (:mod:`dbaas_scheduler.stats`).
    """
    with _LOCK:
        backend = _BACKENDS.get(name)
        if backend is None:
            try:
                manager = driver.DriverManager(
                    base.NAMESPACE, name, invoke_on_load=True,
                    invoke_args=(conf,))
            except Exception:
                raise UnknownBackend(name=name,
                                     available=', '.join(available()))
            backend = _BACKENDS[name] = base.MeasuredBackend(
                manager.driver)
    return backend


def needs_trust(conf, name):
    """Whether backend ``name`` acts in the user's project (Trove does)."""
    return getattr(get_backend(conf, name), 'needs_trust', False)


def call_timeouts(conf):
    """How long each installed backend's calls may block, by name.

    ``{name: seconds or None}`` (see ``BackupBackend.call_timeout``), read
    from the plugin classes without instantiating any.
    """
    timeouts = {}
    for ext in extension.ExtensionManager(base.NAMESPACE):
        call_timeout = getattr(ext.plugin, 'call_timeout', None)
        timeouts[ext.name] = call_timeout(conf) if call_timeout else None
    return timeouts


def available():
    """Names of the installed backends."""
    return sorted(extension.ExtensionManager(base.NAMESPACE).names())


def reset():
    """Forget the loaded backends (tests, configuration reload)."""
    with _LOCK:
        _BACKENDS.clear()
