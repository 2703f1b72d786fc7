#!/usr/bin/env python3
"""Checks that no crate of the workspace has an import cycle between sibling modules.

For each crate (compiler/src, runtime/src) it builds the module graph from the paths the code
names (`use crate::...`, `use super::...`, `crate::a::b` and `super::x` in expressions, and
names imported as modules, e.g. `use super::values;` then `values::Value`). A module is a file
or a folder's `mod.rs`; a path `a::b::c` is a reference to the longest prefix that is a module.
A reference from module A to module B is an edge between the two siblings under their lowest
common ancestor that contain A and B; references between a module and its ancestors are not
edges (a child naming its parent's items, a parent declaring its children). Test modules are
left out: files named `tests.rs` or `*_tests.rs`, files under a `tests/` folder, and inline
`#[cfg(test)] mod ... { ... }` blocks.

Prints every cycle (strongly connected component of more than one sibling) with the files
whose references make it, and exits 1 if there is any.

Usage: scripts/check_import_cycles.py [CRATE_SRC_DIR ...]   (default: compiler/src runtime/src)
       scripts/check_import_cycles.py --self-test   (the check finds cycles it must find)
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CRATES = ["compiler/src", "runtime/src"]


def is_test_file(rel):
    parts = rel.split(os.sep)
    name = parts[-1]
    return name == "tests.rs" or name.endswith("_tests.rs") or "tests" in parts[:-1]


def module_of(rel):
    """The module path (tuple) of a source file relative to the crate's src dir."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("lib", "main") and len(parts) == 1:
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def strip_comments_and_strings(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            out.append('""')
            i = n if end < 0 else end + 1 + len(m.group(1))
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_blocks(text):
    """Removes `#[cfg(test)] mod name { ... }` blocks (the text has no comments or strings)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        text = text[:m.start()] + text[j:]


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (aliases dropped)."""
    # Drop aliases first, while ` as ` is still a word: a segment may contain "as" ("passes").
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    items.append(cur)
    out = []
    for it in items:
        if it:
            out.extend(expand_use(prefix + it))
    return out


def resolve(path, current, is_folder, modules):
    """The module a path names, or None (an external crate, a local item)."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    # The module that `super` and `self` start from: a folder module's own path.
    here = list(current)
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    best = tuple(base)
    cand = list(base)
    for s in segs:
        cand.append(s)
        if tuple(cand) in modules:
            best = tuple(cand)
        else:
            break
    return best


def references(text, current, modules):
    """The modules named by the paths in `text` of module `current`."""
    refs = set()
    local_aliases = {}
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        for p in expand_use(m.group(1)):
            if p.startswith(("crate::", "super::", "self::")) or p in ("super", "crate"):
                target = resolve(p, current, None, modules)
                if target is not None:
                    refs.add(target)
                    segs = p.split("::")
                    last = segs[-1]
                    if last not in ("self", "*") and target[-1:] == (last,):
                        local_aliases[last] = target
                    if last == "self" and len(segs) > 1:
                        local_aliases[segs[-2]] = target
    body = re.sub(r"\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", body):
        target = resolve(m.group(1), current, None, modules)
        if target is not None:
            refs.add(target)
    for name, target in local_aliases.items():
        for m in re.finditer(r"(?<![:\w])" + re.escape(name) + r"((?:::\w+)+)", body):
            segs = list(target)
            best = target
            for s in m.group(1).split("::")[1:]:
                segs.append(s)
                if tuple(segs) in modules:
                    best = tuple(segs)
                else:
                    break
            refs.add(best)
    return refs


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def check_crate(src):
    src_dir = os.path.join(ROOT, src)
    files = {}
    for dirpath, _, names in os.walk(src_dir):
        for name in names:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), src_dir)
            if is_test_file(rel):
                continue
            files[module_of(rel)] = rel
    modules = set(files)
    # sibling edges: parent -> {(a, b): set of files}
    graph = defaultdict(lambda: defaultdict(set))
    for mod, rel in files.items():
        with open(os.path.join(src_dir, rel), encoding="utf-8") as f:
            text = strip_test_blocks(strip_comments_and_strings(f.read()))
        for target in references(text, mod, modules):
            k = 0
            while k < len(mod) and k < len(target) and mod[k] == target[k]:
                k += 1
            if k == len(mod) or k == len(target):
                continue  # an ancestor or a descendant
            a, b = mod[:k + 1], target[:k + 1]
            graph[mod[:k]][(a, b)].add(rel)
    cycles = []
    for parent, pairs in sorted(graph.items()):
        edges = defaultdict(set)
        for a, b in pairs:
            edges[a].add(b)
        nodes = set(edges) | {b for bs in edges.values() for b in bs}
        for comp in sccs(nodes, edges):
            if len(comp) > 1:
                inside = set(comp)
                why = sorted({f for (a, b), fs in pairs.items() if a in inside and b in inside for f in fs})
                cycles.append((comp, why))
    return cycles


def self_test():
    """Small crates with and without cycles: the check must tell them apart."""
    import tempfile

    cases = {
        # a <-> b through `use super::...` and a grouped `use crate::{...}`.
        "use_cycle": ({"lib.rs": "mod a; mod b;", "a.rs": "use super::b::X;",
                       "b.rs": "use crate::{a::Y, c};"}, [["a", "b"]]),
        # Through a module imported by name, inside a folder, with a test module left out.
        "alias_cycle": ({"lib.rs": "mod p;", "p/mod.rs": "mod x; mod y;",
                         "p/x.rs": "use super::y;\nfn f() { y::g(); }",
                         "p/y.rs": "fn g() { crate::p::x::h(); }\n#[cfg(test)]\nmod tests { }"},
                        [["p::x", "p::y"]]),
        # Segments containing "as" and a renamed import: the paths still resolve.
        "as_in_names": ({"lib.rs": "mod passes; mod analysis;",
                         "passes.rs": "use crate::analysis::{Mask, Basis as B};",
                         "analysis.rs": "use crate::passes::Pass as P;"},
                        [["analysis", "passes"]]),
        # A child naming its parent and a reference only from a test module: no cycle.
        "no_cycle": ({"lib.rs": "mod a; mod b; struct R;", "a.rs": "use super::R; use super::b::Z;",
                      "b.rs": "#[cfg(test)]\nmod tests { use crate::a::Q; }\n// crate::a::W",
                      "b/tests.rs": "use crate::a::T;"}, []),
    }
    ok = True
    for name, (files, want) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            got = [["::".join(m) for m in comp] for comp, _ in check_crate(d)]
            if got != want:
                print(f"self-test {name}: found {got}, expected {want}")
                ok = False
    print("self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    crates = argv[1:] or DEFAULT_CRATES
    found = False
    for src in crates:
        cycles = check_crate(src)
        if not cycles:
            print(f"{src}: no import cycles")
            continue
        found = True
        for comp, why in cycles:
            names = " <-> ".join("::".join(m) for m in comp)
            print(f"{src}: import cycle between {names}")
            for f in why:
                print(f"    {os.path.join(src, f)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
