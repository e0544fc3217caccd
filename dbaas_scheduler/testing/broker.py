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
"""The broker as kombu sees it, for tests, tools and benchmarks."""


def kombu_url(transport_url):
    """kombu's URL of an oslo.messaging ``rabbit://`` transport URL.

    A URL of several nodes (``rabbit://u:p@h1:1,u:p@h2:2/vhost``) becomes
    kombu's failover list (``amqp://u:p@h1:1/vhost;amqp://u:p@h2:2/vhost``).
    """
    rest = transport_url.split('://', 1)[1]
    hosts, _, path = rest.partition('/')
    return ';'.join('amqp://%s/%s' % (host, path)
                    for host in hosts.split(','))
