#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
The library's layers (user/lib/lib.mk) and the cycles between files, from
the sources and the built objects; run by layers.sh, one KTAP line per check.

  table      lib.mk's LIB_SEES_* name existing folders, every folder of
             user/lib is listed, and the table has no cycle
  unique     no header name in two folders (an include names one file)
  layers     every #include "x.h" of a folder's file names its own folder
             or one its LIB_SEES_ lists: no edge goes back up
  programs   the programs (the CLI with its eval/, inaggd, the agent) sit on
             top: no file of the library includes a program's header, and no
             program includes another's
  includes   no cycle in the include graph of the library with each program,
             x.c, x.h and x_int.h taken as one node
  calls      no cycle in the call graph between the objects of the library,
             and of each program (from nm); the parts of one file split for
             size, which share an x_int.h, count as one
"""
import collections
import glob
import os
import re
import subprocess
import sys

LIB = 'user/lib'
# Each program's folders, above the library and beside each other.
PROGRAMS = {'inagg': ['user/inagg', 'user/inagg/eval'], 'inaggd': ['user/inaggd'],
            'agent': ['user/agent']}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def table():
    text = open(os.path.join(LIB, 'lib.mk')).read()
    dirs = re.search(r'^LIB_DIRS\s*:=(.*)$', text, re.M).group(1).split()
    sees = {d: m.group(2).split() for m in re.finditer(r'^LIB_SEES_(\w+)\s*:=(.*)$', text, re.M)
            for d in [m.group(1)]}
    return dirs, sees


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check_table():
    dirs, sees = table()
    bad = []
    real = sorted(d for d in os.listdir(LIB) if os.path.isdir(os.path.join(LIB, d)))
    if sorted(dirs) != real:
        bad.append('LIB_DIRS %s, folders %s' % (sorted(dirs), real))
    for d in dirs:
        if d not in sees:
            bad.append('no LIB_SEES_%s' % d)
        for s in sees.get(d, []):
            if s not in dirs:
                bad.append('LIB_SEES_%s names %s, not a folder' % (d, s))
            elif any(t not in sees[d] for t in sees.get(s, [])):
                bad.append('LIB_SEES_%s has %s but not all it sees (%s)' % (d, s, sees[s]))
    for c in cycles({d: set(sees.get(d, [])) for d in dirs}):
        bad.append('folders in a cycle: ' + ' '.join(c))
    return bad


def lib_files():
    return sorted(glob.glob(os.path.join(LIB, '*', '*.[ch]')))


def headers():
    where = collections.defaultdict(list)
    for f in lib_files():
        if f.endswith('.h'):
            where[os.path.basename(f)].append(f)
    return where


def check_unique():
    return ['%s in %s' % (h, ' and '.join(fs)) for h, fs in headers().items() if len(fs) > 1]


def includes(f):
    return INC.findall(open(f, errors='replace').read())


def check_layers():
    dirs, sees = table()
    where = headers()
    bad = []
    for f in lib_files():
        d = f.split('/')[2]
        for h in includes(f):
            if h not in where:
                continue	# include/, generated skeletons, system
            g = where[h][0].split('/')[2]
            if g != d and g not in sees.get(d, []):
                bad.append('%s includes %s: %s is not below %s' % (f, h, g, d))
    return bad


def node(f):
    """x.c, x.h and x_int.h (its parts' shared header) are one node."""
    n = os.path.splitext(f)[0]
    return n[:-4] if n.endswith('_int') and f.endswith('.h') else n


def program_files(prog, ext='[ch]'):
    return sorted(f for d in PROGRAMS[prog] for f in glob.glob(os.path.join(d, '*.' + ext)))


def check_programs():
    own = {os.path.basename(f): p for p in PROGRAMS for f in program_files(p, 'h')}
    lib = headers()
    bad = []
    for f in lib_files():
        bad += ['%s includes %s, a header of %s' % (f, h, own[h])
                for h in includes(f) if h in own and h not in lib]
    for p in PROGRAMS:
        mine = {os.path.basename(f) for f in program_files(p, 'h')}
        for f in program_files(p):
            bad += ['%s includes %s, a header of %s' % (f, h, own[h])
                    for h in includes(f) if h in own and own[h] != p and h not in mine]
    return bad


def check_includes():
    bad = []
    for p in PROGRAMS:
        # A program's own header first: that is the one its files include.
        by_name = {}
        for f in program_files(p) + lib_files():
            by_name.setdefault(os.path.basename(f), f)
        graph = collections.defaultdict(set)
        for f in lib_files() + program_files(p):
            for h in includes(f):
                if h in by_name and node(by_name[h]) != node(f):
                    graph[node(f)].add(node(by_name[h]))
        bad += ['include cycle: ' + ' '.join(c) for c in cycles(graph)
                if p == 'inagg' or not all(n.startswith(LIB) for n in c)]
    return bad


def check_calls(build):
    groups = [sorted(glob.glob(os.path.join(LIB, '*', '*.c')))]
    groups += [program_files(p, 'c') for p in PROGRAMS]
    bad = []
    for srcs in groups:
        unit, defs, undefs = {}, {}, {}
        for src in srcs:
            obj = os.path.join(build, src[:-2] + '.o')
            if not os.path.exists(obj):
                return ['%s not built' % obj]
            ints = [h for h in includes(src) if h.endswith('_int.h')]
            unit[src] = ints[0] if ints else src
            out = subprocess.run(['nm', obj], capture_output=True, text=True).stdout
            defs[src], undefs[src] = set(), set()
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in 'TDBRC':
                    defs[src].add(p[2])
                elif len(p) == 2 and p[0] == 'U':
                    undefs[src].add(p[1])
        owner = {s: unit[src] for src in srcs for s in defs[src]}
        graph = collections.defaultdict(set)
        for src in srcs:
            for s in undefs[src]:
                if s in owner and owner[s] != unit[src]:
                    graph[unit[src]].add(owner[s])
        bad += ['call cycle: ' + ' '.join(c) for c in cycles(graph)]
    return bad


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    checks = [('table', check_table), ('unique', check_unique), ('layers', check_layers),
              ('programs', check_programs), ('includes', check_includes),
              ('calls', lambda: check_calls(build))]
    print('TAP version 13')
    print('1..%d' % len(checks))
    failed = 0
    for i, (name, fn) in enumerate(checks, 1):
        bad = fn()
        print('%sok %d %s' % ('not ' if bad else '', i, name))
        for b in bad:
            print('# ' + b)
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
