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
# Admin > Backup Scheduler > Overview: services, the fleet's health and
# every project's policies.
from dbaasschedulerclient.v1 import client as scheduler_client

PANEL = 'backup_scheduler'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'backup_scheduler'
ADD_PANEL = ('dbaas_scheduler_dashboard.content.backup_scheduler.panel.'
             'BackupScheduler')
# A policy or execution gone: Horizon's "not found" handling (a 404 to an
# ajax row update, which then drops the row).
ADD_EXCEPTIONS = {'not_found': (scheduler_client.NotFound,)}
