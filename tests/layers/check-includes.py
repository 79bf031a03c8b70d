#!/usr/bin/env python3
"""The layer rule of docs/ARCHITECTURE.md, for includes: run by the build (meson.build,
'layers'), which fails when a file includes a header of a layer it may not use, includes
another folder's header other than that folder's face, names a header without its folder,
or when headers include each other in a circle. A header of the tree in <...>, a name with
"..", a file of no layer (tests/) and an include through a macro are refused as well, so
that none of them hides an include from the rules, and so is a folder of sources that no
layer names (it would pass as part of its parent's layer).

Arguments: --source-root DIR --stamp FILE, then one --layer per layer:
    NAME|PATH[+PATH...]|USES[+USES...]|FACE[+FACE...]
PATH: folders or files (relative to the source root) that make up the layer; a file
belongs to the layer with the longest PATH that holds it. USES: the layers it may include
(its own always). FACE: the headers other layers may include (empty: any of its headers).
--root TREE=DIR[+DIR...]: the include roots of the files under TREE (besides the source root).
"""
import argparse
import os
import re
import sys

# Every #include line: its quoted or bracketed name, or what stands there instead (a macro).
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include\b[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>|([^\n]*))', re.M)


class Layer:
    def __init__(self, spec):
        name, paths, uses, face = (spec.split('|') + ['', '', ''])[:4]
        self.name = name
        self.paths = [p for p in paths.split('+') if p]
        self.uses = set(u for u in uses.split('+') if u) | {name}
        self.face = set(f for f in face.split('+') if f)


def owning(layers, path):
    """The layer that holds path and the PATH of it that does (the longest), or None, None."""
    best, best_path = None, None
    for layer in layers:
        for p in layer.paths:
            if (path == p or path.startswith(p.rstrip('/') + '/')) and \
                    (best_path is None or len(p) > len(best_path)):
                best, best_path = layer, p
    return best, best_path


def owner(layers, path):
    return owning(layers, path)[0]


def roots_for(roots, path):
    best, best_len = [], -1
    for tree, dirs in roots.items():
        if (path.startswith(tree.rstrip('/') + '/')) and len(tree) > best_len:
            best, best_len = dirs, len(tree)
    return best + ['']


def check_file(src, layers, roots, rel, errors, graph):
    me = owner(layers, rel)
    with open(os.path.join(src, rel), encoding='utf-8', errors='replace') as f:
        text = f.read()
    for m in INCLUDE.finditer(text):
        quoted, bracketed, other = m.groups()
        line = text.count('\n', 0, m.start()) + 1
        if quoted is None and bracketed is None:
            # A computed include names its header through a macro the check cannot expand.
            errors.append('%s:%d: #include %s: name the header in quotes (the check cannot '
                          'follow a macro)' % (rel, line, other.strip()))
            continue
        inc = quoted if quoted is not None else bracketed
        where = '%s:%d: "%s"' % (rel, line, inc)
        target = None
        for root in roots_for(roots, rel):
            cand = os.path.normpath(os.path.join(root, inc))
            if not cand.startswith('..') and os.path.isfile(os.path.join(src, cand)):
                target = cand
                break
        if target is None:
            here = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            if quoted is not None and os.path.isfile(os.path.join(src, here)):
                errors.append('%s: name the folder (the include roots do not find it)' % where)
            # else: a system header, or a generated one (build directory): not a layer's
            continue
        if bracketed is not None:
            # <...> is for the system's headers; the compiler may pick another file first.
            errors.append('%s:%d: <%s>: include this tree\'s headers in quotes'
                          % (rel, line, inc))
        if '..' in inc.split('/'):
            errors.append('%s: name the header from its folder, without ".."' % where)
        graph.setdefault(rel, []).append((target, line))
        them = owner(layers, target)
        if them is None:
            # tests/, tools and other trees are no layer: the product never includes them.
            errors.append('%s: %s belongs to no layer of the product' % (where, target))
            continue
        if them is me:
            continue
        if them.name not in me.uses:
            errors.append('%s: layer %s may not use %s (it may use: %s)' %
                          (where, me.name, them.name,
                           ', '.join(sorted(me.uses - {me.name})) or 'nothing'))
        elif them.face and target not in them.face:
            errors.append('%s: include %s\'s face (%s), not its inside' %
                          (where, them.name, ', '.join(sorted(them.face))))


def circles(graph):
    """Each include circle once, as the path of headers that closes it."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for target, _ in graph.get(node, []):
            if state.get(target) == 1:
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def module_graph(src, graph):
    """The includes between modules (x.c with x.h); a header with no .c of its own (types,
    a private x-int.h) belongs to no module: what it includes counts for its includers."""
    def module(path):
        stem = os.path.splitext(path)[0]
        return stem if os.path.isfile(os.path.join(src, stem + '.c')) else None

    def reached(path, seen):
        for target, _ in graph.get(path, []):
            if target in seen:
                continue
            seen.add(target)
            if module(target) is None:
                reached(target, seen)
            else:
                yield module(target)

    mods = {}
    for path in graph:
        m = module(path)
        if m is None:
            continue
        for target in list(reached(path, {path})):
            if target != m:
                mods.setdefault(m, []).append((target, 0))
    return mods


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source-root', required=True)
    ap.add_argument('--stamp', required=True)
    ap.add_argument('--layer', action='append', default=[])
    ap.add_argument('--root', action='append', default=[])
    args = ap.parse_args()
    layers = [Layer(s) for s in args.layer]
    names = {l.name for l in layers}
    errors = []
    for l in layers:
        for u in l.uses - names:
            errors.append('layer %s uses an unknown layer %s' % (l.name, u))
    roots = {}
    for r in args.root:
        tree, dirs = r.split('=', 1)
        roots[tree] = [d for d in dirs.split('+') if d]
    src = args.source_root
    files = []
    for l in layers:
        for p in l.paths:
            full = os.path.join(src, p)
            if os.path.isfile(full):
                files.append(p)
                continue
            for d, _, names_ in os.walk(full):
                for n in names_:
                    if n.endswith(('.c', '.h', '.S')):
                        files.append(os.path.relpath(os.path.join(d, n), src))
    graph = {}
    unlisted = set()
    for rel in sorted(set(files)):
        check_file(src, layers, roots, rel, errors, graph)
        # A folder of sources that the table does not name would be its parent layer's
        # and pass unchecked as part of it: each folder is a layer of its own.
        folder = os.path.dirname(rel)
        path = owning(layers, rel)[1]
        if path is not None and path != rel and folder != path.rstrip('/'):
            unlisted.add(folder)
    for folder in sorted(unlisted):
        errors.append('%s/: a folder of sources that no layer of the table names' % folder)
    for cycle in circles(graph):
        errors.append('include circle: %s' % ' -> '.join(cycle))
    for cycle in circles(module_graph(src, graph)):
        errors.append('module circle (x.c and x.h are one module): %s' % ' -> '.join(cycle))
    if errors:
        sys.stderr.write('layers: %d include(s) against docs/ARCHITECTURE.md:\n' % len(errors))
        for e in errors:
            sys.stderr.write('  %s\n' % e)
        return 1
    with open(args.stamp, 'w') as f:
        f.write('%d files checked\n' % len(set(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
