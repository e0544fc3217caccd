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
"""Before and after, side by side: one benchmark on two checkouts.

Runs ``python -m tools.benchmarks.<benchmark> --database D <args>`` from
a checkout of ``--before`` (a git revision, checked out in a temporary
worktree) and of ``--after`` (default: this working tree, uncommitted
changes included), on each database, interleaved round by round (before,
after, before, after, ...) so that both see the same machine, and prints
the chosen lines of each report in two columns::

    $ python -m tools.benchmarks.compare --before 27bc433 \\
          --database postgresql --database mysql --rounds 2 \\
          engine -- --policies 100000 --engines 1 --warm

A figure is a regular expression matched against the report's lines
(``--figure``, repeatable); each benchmark has defaults (``FIGURES``).
The full output of every run is kept in the work directory.  Each run
uses its checkout's service code -- the schema its migrations build --
with this environment's Python and libraries, and, by default, the
benchmark (``tools``) of the "after" checkout, so that both sides are
measured the same way (``--tools-from each``: each checkout's own).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

from tools.benchmarks import reporting

HERE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The lines worth putting side by side, per benchmark.
FIGURES = {
    'engine': (r'dispatch rate, first tick -> last cast',
               r'engine CPU, all engines',
               r'machine, engine launch -> done',
               r'duplicates: slots with > 1 execution',
               r'missing: executions never received',
               r'machine load \(uptime\) at launch'),
    'tick': (r'median CPU per execution', r'^run \d+:'),
    'worker': (r'claim rate, first -> last started_at',
               r'machine, first cast -> all started',
               r'claimed more than once'),
    'coverage': (r'GET /v1/coverage', r'CPU of the API process',
                 r'aggregate query alone'),
    'policy_list': (r'limit +\d+:',),
    'metrics': (r'scrapes over HTTP', r'database queries per scrape'),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m tools.benchmarks.compare',
        description=__doc__.split('\n\n')[0],
        epilog='Arguments after "--" go to the benchmark.')
    parser.add_argument('--before', required=True,
                        help='Git revision measured as "before".')
    parser.add_argument('--after',
                        help='Git revision measured as "after" (default: '
                             'this working tree as it is).')
    parser.add_argument('--database', action='append',
                        choices=('postgresql', 'mysql'),
                        help='Repeatable (default: postgresql).')
    parser.add_argument('--rounds', type=int, default=2,
                        help='Runs of each checkout per database, '
                             'interleaved (default 2).')
    parser.add_argument('--figure', action='append',
                        help='Regular expression of a report line to show '
                             '(repeatable; default: the benchmark\'s).')
    parser.add_argument('--tools-from', choices=('after', 'each'),
                        default='after',
                        help='Whose benchmark code measures both sides: '
                             'the "after" checkout\'s (default), or each '
                             'checkout its own.')
    parser.add_argument('--workdir', help='Keep outputs here.')
    parser.add_argument('benchmark', help='Module under tools.benchmarks, '
                                          'e.g. engine, tick, worker.')
    parser.add_argument('arguments', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error('--rounds must be at least 1')
    if not re.fullmatch(r'[a-z_]+', args.benchmark):
        parser.error('benchmark: a module name such as engine or tick')
    if args.arguments[:1] == ['--']:
        args.arguments = args.arguments[1:]
    args.database = args.database or ['postgresql']
    figures = args.figure or FIGURES.get(args.benchmark)
    if not figures:
        parser.error('no default figures for %r: give --figure'
                     % args.benchmark)
    args.figures = [re.compile(figure) for figure in figures]
    return args


def _git(*arguments, cwd=HERE):
    return subprocess.run(('git',) + arguments, cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


class Checkouts:
    """The two trees measured: worktrees of revisions, or this one."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.added = []

    def tree(self, revision):
        if revision is None:
            return HERE, 'working tree (%s%s)' % (
                _git('rev-parse', '--short', 'HEAD'),
                ', modified' if _git('status', '--porcelain',
                                     '--untracked-files=no') else '')
        commit = _git('rev-parse', '--short', revision + '^{commit}')
        path = os.path.join(self.workdir, 'tree-' + commit)
        _git('worktree', 'add', '--detach', path, commit)
        self.added.append(path)
        return path, commit

    def remove(self):
        for path in self.added:
            subprocess.run(('git', 'worktree', 'remove', '--force', path),
                           cwd=HERE, check=False, capture_output=True)


def pick(output, figures):
    """The report lines matching each figure, in the figures' order."""
    lines = output.splitlines()
    picked = []
    for figure in figures:
        picked.extend(line.strip() for line in lines if figure.search(line))
    return picked


def split(lines):
    """``[(label, value)]``: each line at its item's colon."""
    pairs = []
    for line in lines:
        # A report item is "key:" padded with spaces; a key may itself
        # hold a colon ("duplicates: slots with > 1 execution:").
        item = re.match(r'(.*?):\s{2,}(.*)$', line)
        if item:
            label, value = item.groups()
        else:
            label, _, value = line.partition(':')
        pairs.append((label.strip(), value.strip()))
    return pairs


def side_by_side(results):
    """``[(label, {side: [value of each round]})]``, labels in order.

    ``results`` is ``{side: [[(label, value)] of each round]}``; a label
    seen more than once in a run (the tick benchmark's ``run N``) keeps
    each occurrence apart.  A value missing from a round (a run that
    failed) is None.
    """
    order = []
    values = {}
    for side, rounds in results.items():
        for number, pairs in enumerate(rounds):
            seen = {}
            for label, value in pairs:
                seen[label] = seen.get(label, 0) + 1
                key = (label, seen[label])
                if key not in values:
                    order.append(key)
                    values[key] = {name: [None] * len(results[name])
                                   for name in results}
                values[key][side][number] = value
    return [(label if count == 1 else '%s (%d)' % (label, count),
             values[(label, count)]) for label, count in order]


def mixed_tree(workdir, side, tree, tools_tree):
    """A directory with ``tree``'s top level but ``tools_tree``'s tools.

    Symbolic links: the service (``dbaas_scheduler``, its migrations,
    ``etc``) of one checkout and the benchmarks of another.
    """
    path = os.path.join(workdir, 'mixed-' + side)
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    for name in os.listdir(tree):
        if name not in ('tools', '.git'):
            os.symlink(os.path.join(tree, name), os.path.join(path, name))
    os.symlink(os.path.join(tools_tree, 'tools'),
               os.path.join(path, 'tools'))
    return path


def run(tree, database, args, log_path):
    command = [sys.executable, '-m', 'tools.benchmarks.' + args.benchmark,
               '--database', database] + list(args.arguments)
    environment = dict(os.environ, PYTHONPATH=tree)
    with open(log_path, 'w') as log:
        finished = subprocess.run(command, cwd=tree, env=environment,
                                  stdout=subprocess.PIPE,
                                  stderr=log, text=True)
        log.write(finished.stdout)
    return finished.returncode, finished.stdout


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix='dbaas-compare-')
    os.makedirs(workdir, exist_ok=True)
    checkouts = Checkouts(workdir)
    report = reporting.Report()
    try:
        trees = {'before': checkouts.tree(args.before),
                 'after': checkouts.tree(args.after)}
        if args.tools_from == 'after':
            tools_tree = trees['after'][0]
            trees = {side: (mixed_tree(workdir, side, tree, tools_tree),
                            name) for side, (tree, name) in trees.items()}
        report.title('%s: before and after' % args.benchmark)
        for side, (_, name) in trees.items():
            report.item(side, name)
        report.item('benchmark code', 'the after checkout\'s'
                    if args.tools_from == 'after' else 'each checkout\'s')
        report.item('benchmark arguments', ' '.join(args.arguments)
                    or '(none)')
        failed = 0
        for database in args.database:
            results = {side: [] for side in trees}
            for number in range(1, args.rounds + 1):
                for side, (tree, _) in trees.items():
                    reporting.progress('%s round %d: %s', database, number,
                                       side)
                    log_path = os.path.join(workdir, '%s-%s-%d.log' % (
                        database, side, number))
                    code, output = run(tree, database, args, log_path)
                    if code:
                        failed += 1
                        reporting.progress('FAILED (exit %d), see %s', code,
                                           log_path)
                    results[side].append(split(pick(output, args.figures)))
            report.section('%s, %d round(s) each, interleaved'
                           % (database, args.rounds))
            for label, sides in side_by_side(results):
                report.add('  %s' % label)
                for side, values in sides.items():
                    report.add('    %-7s %s' % (side + ':', ' | '.join(
                        value if value is not None else '(missing)'
                        for value in values)))
        report.add('')
        report.item('outputs', workdir)
        report.write(workdir)
        return 1 if failed else 0
    finally:
        checkouts.remove()


if __name__ == '__main__':
    sys.exit(main())
