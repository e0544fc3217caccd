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
"""The start-up broker check on a RabbitMQ with TLS and a private CA.

kolla-ansible's internal TLS signs RabbitMQ's certificate with a CA of
its own, named to the services by ``[oslo_messaging_rabbit]
ssl_ca_file``.  A one-node RabbitMQ on loopback here listens for AMQP over
TLS with a certificate from a CA this test makes: the check every
service runs at start (``cmd/common.check_transport``) must log in with
oslo.messaging's TLS options -- and fail, in one line, without the CA.
"""

import datetime
import ipaddress
import os

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography import x509
from cryptography.x509.oid import NameOID
import fixtures
from oslo_config import cfg
import oslo_messaging as messaging
from testtools import content
from tools.clusters import rabbitmq

from dbaas_scheduler.cmd import common
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests import clusters


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(path, key):
    with open(path, 'wb') as stream:
        stream.write(key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption()))
    os.chmod(path, 0o600)


def _write_certificate(path, certificate):
    with open(path, 'wb') as stream:
        stream.write(certificate.public_bytes(serialization.Encoding.PEM))


def make_private_ca(directory):
    """A CA and a server certificate it signed for 127.0.0.1/localhost.

    Returns the paths of the CA certificate, server certificate and key.
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder()
          .subject_name(_name('dbaas-scheduler test CA'))
          .issuer_name(_name('dbaas-scheduler test CA'))
          .public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0),
                         critical=True)
          .add_extension(x509.KeyUsage(
              digital_signature=True, key_cert_sign=True, crl_sign=True,
              content_commitment=False, key_encipherment=False,
              data_encipherment=False, key_agreement=False,
              encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    server = (x509.CertificateBuilder()
              .subject_name(_name('localhost'))
              .issuer_name(ca.subject)
              .public_key(key.public_key())
              .serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5))
              .not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.SubjectAlternativeName([
                  x509.DNSName('localhost'),
                  x509.IPAddress(ipaddress.ip_address('127.0.0.1'))]),
                  critical=False)
              .sign(ca_key, hashes.SHA256()))
    paths = [os.path.join(directory, name)
             for name in ('ca.pem', 'server.pem', 'server.key')]
    _write_certificate(paths[0], ca)
    _write_certificate(paths[1], server)
    _write_key(paths[2], key)
    return paths


class TestBrokerTLS(base.TestCase):

    def setUp(self):
        super().setUp()
        clusters.require_rabbitmq()
        directory = self.useFixture(fixtures.TempDir()).path
        self.ca, certificate, key = make_private_ca(directory)
        base_port = ports.free_base_port(29, 28000, 30000)
        # Node 1's plain AMQP port is base + 1; TLS on base + 5.
        self.tls_port = base_port + 5
        self.cluster = rabbitmq.Cluster(
            os.path.join(directory, 'rabbitmq'), base_port=base_port,
            size=1, prefix='dbaas-rabbit-tls%d-' % os.getpid(),
            extra_config=(
                'listeners.ssl.default = 127.0.0.1:%d\n'
                'ssl_options.cacertfile = %s\n'
                'ssl_options.certfile = %s\n'
                'ssl_options.keyfile = %s\n'
                'ssl_options.verify = verify_none\n'
                'ssl_options.fail_if_no_peer_cert = false\n'
                % (self.tls_port, self.ca, certificate, key)))
        self.addCleanup(self.cluster.destroy)
        self.addOnException(lambda exc_info: self.addDetail(
            'rabbitmq.log', content.text_content(
                _tail(self.cluster.node(1).log))))
        self.cluster.start()

    def broker_conf(self, host, **rabbit):
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        conf([], project='dbaas-scheduler-test', default_config_files=[])
        # Registers oslo.messaging's options.
        messaging.get_rpc_transport(
            conf, url='rabbit://guest:guest@%s:%d/'
            % (host, self.tls_port)).cleanup()
        conf.set_override('transport_url', 'rabbit://guest:guest@%s:%d/'
                          % (host, self.tls_port))
        for name, value in rabbit.items():
            conf.set_override(name, value, group='oslo_messaging_rabbit')
        return conf

    def test_the_private_ca_verifies_the_broker(self):
        for host in ('127.0.0.1', 'localhost'):
            conf = self.broker_conf(host, ssl=True, ssl_ca_file=self.ca)
            common.check_transport(conf, attempts=1)

    def test_without_the_ca_the_check_fails_in_one_line(self):
        # The system's CAs do not know this broker's certificate.
        conf = self.broker_conf(
            '127.0.0.1', ssl=True,
            ssl_ca_file='/etc/ssl/certs/ca-certificates.crt')
        exc = self.assertRaises(common.StartupRefused, common.check_transport,
                                conf, attempts=1)
        self.assertIn('CERTIFICATE_VERIFY_FAILED', str(exc))
        self.assertIn('unreachable after 1 attempts', str(exc))


def _tail(path, size=20000):
    try:
        with open(path, errors='replace') as stream:
            return stream.read()[-size:]
    except OSError as exc:
        return str(exc)
