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
"""Names of backup policies, unique per project: the renames of duplicates.

Before revision c5e1a7b9d2f4 two policies of a project could share a
name.  The migration that makes names unique renames all but the oldest of
each set, as :func:`duplicate_renames` says, and
``dbaas-scheduler-status upgrade check`` lists the same renames before it
runs.  Pure functions: the same rows always give the same names.
"""

# The name column's length.
NAME_LENGTH = 255


def with_suffix(name, number):
    """``name-<number>``, the name cut so that the whole fits the column."""
    suffix = '-%d' % number
    return name[:NAME_LENGTH - len(suffix)] + suffix


def duplicate_renames(rows):
    """``{policy id: new name}`` for the policies whose name is taken.

    ``rows`` are ``(id, project_id, name, created_at)`` of every policy.
    In each project the oldest policy of a name (then the smallest id)
    keeps it; the others become ``<name>-2``, ``<name>-3``, ... in that
    order, skipping names any policy of the project has.
    """
    taken = {}
    for _id, project_id, name, _created_at in rows:
        taken.setdefault(project_id, set()).add(name)
    seen, renames = set(), {}
    for policy_id, project_id, name, _created_at in sorted(
            rows, key=lambda row: (row[1], row[2], row[3], row[0])):
        if (project_id, name) not in seen:
            seen.add((project_id, name))
            continue
        number = 2
        while with_suffix(name, number) in taken[project_id]:
            number += 1
        renames[policy_id] = with_suffix(name, number)
        taken[project_id].add(renames[policy_id])
    return renames
