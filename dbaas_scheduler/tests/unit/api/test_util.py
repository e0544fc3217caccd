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
"""Helpers of the API handlers: times written alike, input checked."""

import datetime
import functools
import io
import json

from oslotest import base
import webob

from dbaas_scheduler.api import util
from dbaas_scheduler import exception


class TestIsotimeText(base.BaseTestCase):

    def test_offsets_become_z(self):
        for stored, shown in (
                ('2027-01-01T01:30:00+00:00', '2027-01-01T01:30:00Z'),
                ('2027-01-01T02:30:00.500000+01:00',
                 '2027-01-01T01:30:00.500000Z'),
                ('2027-01-01T01:30:00', '2027-01-01T01:30:00Z'),
                ('2027-01-01T01:30:00Z', '2027-01-01T01:30:00Z')):
            self.assertEqual(shown, util.isotime_text(stored), stored)

    def test_same_as_isotime(self):
        value = datetime.datetime(2027, 1, 1, 1, 30, 0, 123,
                                  tzinfo=datetime.timezone.utc)
        self.assertEqual(util.isotime(value),
                         util.isotime_text(value.isoformat()))

    def test_what_is_no_time_is_left_alone(self):
        for value in (None, '', 'yesterday', 17):
            self.assertEqual(value, util.isotime_text(value))


class TestExtractJSON(base.BaseTestCase):

    SCHEMA = {'type': 'object'}

    def _request(self, body, content_type='application/json', **kwargs):
        request = webob.Request.blank('/', method='POST', **kwargs)
        request.content_type = content_type
        request.body = body
        return request

    def test_a_body_too_large(self):
        body = b'{"a": "%s"}' % (b'x' * util.MAX_BODY_BYTES)
        error = self.assertRaises(exception.RequestTooLarge,
                                  util.extract_json, self._request(body),
                                  self.SCHEMA)
        self.assertIn('at most 1048576 are taken', str(error))

    def test_a_chunked_body_too_large(self):
        request = webob.Request.blank('/', method='POST')
        request.content_type = 'application/json'
        request.environ['wsgi.input'] = io.BytesIO(
            b'"' + b'x' * (util.MAX_BODY_BYTES + 10) + b'"')
        request.environ['HTTP_TRANSFER_ENCODING'] = 'chunked'
        # As cheroot says of a chunked body.
        request.environ['wsgi.input_terminated'] = True
        request.environ.pop('CONTENT_LENGTH', None)
        self.assertRaises(exception.RequestTooLarge, util.extract_json,
                          request, self.SCHEMA)

    def test_nesting(self):
        body = json.dumps(functools.reduce(
            lambda inner, _: {"a": inner}, range(util.MAX_JSON_DEPTH),
            1)).encode()
        self.assertEqual(1, len(util.extract_json(self._request(body),
                                                  self.SCHEMA)))
        for body in (b'{"a": %s}' % body, b'[' * 5000 + b']' * 5000):
            error = self.assertRaises(exception.Invalid, util.extract_json,
                                      self._request(body), self.SCHEMA)
            self.assertIn('nested deeper than 32 levels', str(error))

    def test_json_constants(self):
        for constant in (b'NaN', b'Infinity', b'-Infinity'):
            error = self.assertRaises(
                exception.Invalid, util.extract_json,
                self._request(b'{"a": %s}' % constant), self.SCHEMA)
            self.assertIn('is not a JSON number', str(error))

    def test_unstorable_text(self):
        for body, message in (
                (b'{"a\\u0000": 1}', 'a key holds a NUL'),
                (b'{"a": ["\\ud800"]}', 'in a.0: a string holds an '
                                        'unpaired UTF-16 surrogate (U+D800)'),
                (b'"\\udfff"', 'a string holds an unpaired')):
            error = self.assertRaises(exception.Invalid, util.extract_json,
                                      self._request(body), self.SCHEMA)
            self.assertIn(message, str(error))
        self.assertEqual({'a': '\U0001F600'}, util.extract_json(
            self._request(b'{"a": "\\ud83d\\ude00"}'), self.SCHEMA))

    def test_schema_errors_quote_an_excerpt(self):
        schema = {'type': 'object', 'properties': {
            'a': {'type': 'string', 'maxLength': 3},
            'b': {'enum': ['x']}}}
        error = self.assertRaises(
            exception.Invalid, util.extract_json,
            self._request(json.dumps({'a': 'y' * 600000}).encode()), schema)
        self.assertEqual("Invalid input: in a: '%s... (600000 characters) "
                         "is longer than 3 characters." % ('y' * 63),
                         str(error))
        error = self.assertRaises(
            exception.Invalid, util.extract_json,
            self._request(json.dumps({'b': 'z' * 600000}).encode()), schema)
        self.assertLess(len(str(error)), 200)

    def test_not_json(self):
        error = self.assertRaises(exception.Invalid, util.extract_json,
                                  self._request(b'a=1', 'text/plain'),
                                  self.SCHEMA)
        self.assertIn('must be JSON', str(error))
        self.assertRaises(exception.Invalid, util.extract_json,
                          self._request(b'{"a": "\xff"}'), self.SCHEMA)


class TestQueryParams(base.BaseTestCase):

    ALLOWED = {'a': {'type': 'string', 'minLength': 1, 'maxLength': 3}}

    def _parse(self, query):
        return util.query_params(webob.Request.blank('/?' + query),
                                 self.ALLOWED)

    def test_not_utf8(self):
        for query in ('a=%ff', '%ff=1', 'a=%ed%a0%80'):
            error = self.assertRaises(exception.Invalid, self._parse, query)
            self.assertIn('the query string is not UTF-8', str(error))

    def test_nul(self):
        error = self.assertRaises(exception.Invalid, self._parse, 'a=%00')
        self.assertIn('query parameter a holds a NUL', str(error))

    def test_errors_quote_an_excerpt(self):
        for query in ('a=' + 'x' * 100000, 'x' * 100000 + '=1'):
            error = self.assertRaises(exception.Invalid, self._parse, query)
            self.assertIn('(100000 characters)', str(error))
            self.assertLess(len(str(error)), 300)

    def test_given_twice(self):
        self.assertRaises(exception.Invalid, self._parse, 'a=1&a=2')
        self.assertEqual({'a': 'é'}, self._parse('a=%C3%A9'))
