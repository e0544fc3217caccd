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
"""Free ports on 127.0.0.1, for test servers, tools and benchmarks."""

import socket


def free_port():
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def free_base_port(span, start, stop=60000):
    """A multiple of 100 from ``start`` with ports base+1..base+span free.

    A cluster's node *n* takes fixed offsets from its base port, so the
    whole range must be free at once.
    """
    for base in range(start, stop, 100):
        try:
            for offset in range(1, span + 1):
                with socket.socket() as sock:
                    sock.bind(('127.0.0.1', base + offset))
        except OSError:
            continue
        return base
    raise RuntimeError('no range of %d free ports from %d to %d'
                       % (span, start, stop))
