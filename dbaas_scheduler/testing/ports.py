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
"""Free ports on 127.0.0.1, for test servers, tools and benchmarks.

A port handed out here is usually bound a moment later, often by another
process (a service under test).  Until then any socket that asks the
kernel for a port (``bind`` to port 0, or an outgoing connection) may be
given it, if it lies in the kernel's ephemeral range
(``net.ipv4.ip_local_port_range``, 32768-60999 by default).  So the ports
here are taken below that range, where the kernel hands out none: 10000 to
24999 for single ports, 26000 to 32699 for the ranges of the clusters.
"""

import random
import socket

SINGLE = (10000, 25000)
# Well-known ports in that range, of the services a test machine runs.
RESERVED = frozenset([15672])
# Not the random module's shared generator: a test or tool that seeds it
# would make several processes pick the same ports in turn.
_RANDOM = random.SystemRandom()


def _free(port):
    with socket.socket() as sock:
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return False
    return True


def free_port():
    """A port nothing listens on now, outside the ephemeral range."""
    for _ in range(1000):
        port = _RANDOM.randrange(*SINGLE)
        if port not in RESERVED and _free(port):
            return port
    raise RuntimeError('no free port from %d to %d' % SINGLE)


def free_base_port(span, start, stop=32700):
    """A multiple of 100 from ``start`` with ports base+1..base+span free.

    A cluster's node *n* takes fixed offsets from its base port, so the
    whole range must be free at once.
    """
    for base in range(start, stop - span, 100):
        if all(_free(base + offset) for offset in range(1, span + 1)):
            return base
    raise RuntimeError('no range of %d free ports from %d to %d'
                       % (span, start, stop))
