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
"""Trove's JSON, both ways: backup views as our Backups, and request bodies.

Pure functions of Trove's v1.0 API (api-ref "Backups"); nothing here makes
a request.
"""

import datetime
import urllib.parse

from oslo_utils import timeutils

from dbaas_scheduler.backends import base

# Trove's API schema limit for a backup's name and description.
MAX_TEXT = 255

GIB = 1024 ** 3

# RESTORED: a backup copied in from another region, complete and usable.
_STATUS_ALIASES = {'RESTORED': base.BackupStatus.COMPLETED}


def parse_status(value):
    """A Trove backup status as a :class:`base.BackupStatus` value.

    An unknown one is kept: not terminal, it is watched until the timeout.
    """
    status = str(value or '').strip().upper()
    return _STATUS_ALIASES.get(status, status)


def parse_time(value):
    """A Trove timestamp (UTC, mostly without offset) as an aware datetime.

    None if absent or unreadable.
    """
    try:
        parsed = timeutils.parse_isotime(str(value)) if value else None
    except ValueError:
        return None
    return parsed and parsed.astimezone(datetime.timezone.utc)


def size_in_bytes(size_gb):
    """Trove's ``size`` (GB, a float) in bytes; None when unknown."""
    try:
        return int(round(float(size_gb) * GIB))
    except (TypeError, ValueError, OverflowError):
        return None


def failure_reason(body, status):
    """Why a backup did not succeed, as far as Trove tells; else None."""
    fault = body.get('fault') or {}
    reason = fault.get('message') if isinstance(fault, dict) else fault
    if not reason and status == base.BackupStatus.FAILED:
        # Trove's backup view has no reason; its guest agent logs it.
        reason = ('Trove gives no reason; the log of the Trove guest agent '
                  'of instance %s tells why' % body.get('instance_id'))
    return str(reason) if reason else None


def backup_from_trove(body):
    """A :class:`base.Backup` from one Trove ``backup`` object."""
    status = parse_status(body.get('status'))
    return base.Backup(
        id=body['id'], instance_id=body.get('instance_id'), status=status,
        created_at=parse_time(body.get('created')),
        updated_at=parse_time(body.get('updated')),
        name=body.get('name'), description=body.get('description'),
        parent_id=body.get('parent_id'),
        size_bytes=size_in_bytes(body.get('size')),
        location=body.get('locationRef'),
        fault=failure_reason(body, status))


def shorten(text, keep_end):
    """``text`` cut to Trove's limit, keeping its last ``keep_end`` chars."""
    if len(text) <= MAX_TEXT:
        return text
    keep_end = min(keep_end, MAX_TEXT - 3)
    tail = text[len(text) - keep_end:]
    return text[:MAX_TEXT - keep_end - 3] + '...' + tail


def create_request(policy, name, description):
    """The body of ``POST /backups`` (Trove api-ref, "Create backup")."""
    params = policy.backup_params or {}
    # The worker's names end in the scheduled time ("-20270131T023000Z")
    # and its descriptions in the execution tag: both survive the limit.
    backup = {'name': shorten(name, 17), 'instance': policy.instance_id}
    if description:
        tag_at = description.rfind(base.execution_tag(''))
        backup['description'] = shorten(
            description, len(description) - tag_at if tag_at >= 0 else 0)
    if params.get('incremental') is not None:
        # Trove's schema takes 0 or 1 here, not a JSON boolean.
        backup['incremental'] = int(bool(params['incremental']))
    for key in ('parent_id', 'swift_container'):
        if params.get(key):
            backup[key] = params[key]
    return {'backup': backup}


def restore_request(name, flavor, size, backup_id, datastore=None):
    """The body of ``POST /instances`` restoring ``backup_id``.

    Trove api-ref "Create database instance" with ``restorePoint``: a
    user's restore and a verification's scratch instance alike.
    ``datastore`` (Trove's ``{'type', 'version'}``) is sent when it names
    a type.
    """
    instance = {'name': name, 'flavorRef': str(flavor),
                'volume': {'size': int(size)},
                'restorePoint': {'backupRef': backup_id}}
    if datastore and datastore.get('type'):
        instance['datastore'] = {'type': datastore.get('type'),
                                 'version': datastore.get('version')}
    return {'instance': instance}


def next_marker(links):
    """The ``marker`` of a Trove list's ``next`` link, or None.

    The link is not followed: Trove forces its scheme to https
    (trove/common/pagination.py), wrong for a Trove served over http.
    """
    for link in links or ():
        if isinstance(link, dict) and link.get('rel') == 'next':
            query = urllib.parse.urlsplit(link.get('href') or '').query
            marker = urllib.parse.parse_qs(query).get('marker')
            if marker:
                return marker[-1]
    return None
