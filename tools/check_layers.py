#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that src/ keeps its layers (src/README.md):

1. src/ holds one folder per layer, and every library source is in one.
2. Calls go only downward: from the built objects' symbols (nm), file A
   depends on file B when A uses a symbol that B defines. B must be in a
   lower layer, or in the same layer and earlier in CMakeLists.txt's
   BRISK_SOURCES (the layer order, bottom first). So no two files call each
   other, directly or around a circle.
3. Includes go only downward: no file includes a header of a higher layer.
4. Each layer header is a true table of contents: every function it declares
   under "---- FILE.c" is defined in FILE.c, and every function a file
   exports to its layer is declared under that file's heading (or in the
   public include/brisk.h, or, for the platform, in platform.h).

usage: tools/check_layers.py BUILD_DIR      (a configured and built tree)
Exit status 0 when everything holds; otherwise each violation is printed.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["platform", "core", "diag", "api"]  # bottom first
HEADERS = {"core": "src/core/core.h", "diag": "src/diag/diag.h", "api": "src/api/api.h"}


def layer_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "src" and parts[1] in LAYERS else None


def source_order():
    """Library sources in BRISK_SOURCES order (the overrides come last)."""
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    block = re.search(r"set\(BRISK_SOURCES(.*?)\)", text, re.S).group(1)
    order = re.findall(r"src/\S+\.c", block)
    order += re.findall(r"list\(APPEND BRISK_SOURCES ([^)]*)\)", text)[0].split()
    return order


def objects(build_dir, sources):
    found = {}
    for source in sources:
        obj = os.path.join(build_dir, "CMakeFiles", "brisk_objects.dir", source + ".o")
        if os.path.exists(obj):
            found[source] = obj
    return found


def compiler_made(name):
    """Symbols the compiler makes in every object that needs them (i386's
    position-independent code: the GOT, the thunks that read the program
    counter): no file's own."""
    return name == "_GLOBAL_OFFSET_TABLE_" or name.startswith("__x86.get_pc_thunk.")


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if compiler_made(fields[-1]):
            continue
        if len(fields) == 2 and fields[0] == "U":
            used.add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBRVW" + "dbrtw".upper():
            defined.add(fields[2])
    return defined, used


def check_calls(order, objs, problems):
    rank = {src: (LAYERS.index(layer_of(src)), i) for i, src in enumerate(order)}
    defined_by, uses = {}, {}
    for src, obj in objs.items():
        defined, used = symbols(obj)
        uses[src] = used
        for name in defined:
            defined_by[name] = src
    edges = set()
    for src, used in uses.items():
        for name in used:
            target = defined_by.get(name)
            if target is None or target == src:
                continue
            edges.add((src, target))
            if rank[target] >= rank[src]:
                why = ("a higher layer" if rank[target][0] > rank[src][0]
                       else "a file later in its layer's order")
                problems.append(f"call upward: {src} uses {name} from {target} ({why})")
    return edges, defined_by


def check_includes(problems):
    include = re.compile(r'#include "([^"]+)"')
    for layer in LAYERS:
        folder = os.path.join(ROOT, "src", layer)
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            for target in include.findall(open(path).read()):
                resolved = os.path.normpath(os.path.join("src", layer, target))
                target_layer = layer_of(resolved)
                if target_layer is None:
                    if target != "brisk.h":
                        problems.append(f"include: src/{layer}/{name} includes {target}, "
                                        f"which is no layer's")
                elif LAYERS.index(target_layer) > LAYERS.index(layer):
                    problems.append(f"include upward: src/{layer}/{name} includes {resolved}")


# "INTERNAL type name(" (functions only: variables are declared extern)
DECLARATION = re.compile(r"^INTERNAL\s+(?!extern\b)[\w\s\*]*?\b(\w+)\s*\(")


def toc_sections(header):
    """{file: [function names declared under '---- file.c']} of a layer header."""
    sections, current = {}, None
    for line in open(os.path.join(ROOT, header)):
        heading = re.match(r"/\* ---- (\w+\.c)\b", line)
        if heading:
            current = heading.group(1)
            sections.setdefault(current, [])
            continue
        elif line.startswith("/* ---- "):
            current = None
        declared = DECLARATION.match(line)
        if declared:
            if current is None:
                sections.setdefault("(no file heading)", []).append(declared.group(1))
            else:
                sections[current].append(declared.group(1))
    return sections


def hidden_functions(obj):
    """Functions an object defines for the rest of the library only
    (hidden visibility); the default-visibility ones are the public ABI."""
    out = subprocess.run(["readelf", "-sW", obj], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) == 8 and fields[3] == "FUNC" and fields[4] == "GLOBAL" \
                and fields[5] == "HIDDEN" and fields[6] != "UND" and not compiler_made(fields[7]):
            names.add(fields[7])
    return names


def check_toc(order, objs, problems):
    for layer, header in HEADERS.items():
        sections = toc_sections(header)
        for name in sections.pop("(no file heading)", []):
            problems.append(f"table of contents: {header} declares {name} under no file heading")
        layer_sources = {os.path.basename(s): s for s in order if layer_of(s) == layer}
        for filename, names in sections.items():
            source = layer_sources.get(filename)
            if source is None:
                problems.append(f"table of contents: {header} has a heading for {filename}, "
                                f"which is not a source of src/{layer}/")
                continue
            if source not in objs:
                continue
            defined, _ = symbols(objs[source])
            for name in names:
                if name not in defined:
                    problems.append(f"table of contents: {header} lists {name} under {filename}, "
                                    f"but {source} does not define it")
            for name in sorted(hidden_functions(objs[source]) - set(names)):
                problems.append(f"table of contents: {source} defines {name}, "
                                f"which {header} does not list under {filename}")
        for filename, source in layer_sources.items():
            if filename not in sections and source in objs:
                for name in sorted(hidden_functions(objs[source])):
                    problems.append(f"table of contents: {source} defines {name}, but {header} "
                                    f"has no heading for {filename}")


def cycles(edges):
    """Strongly connected components with more than one file (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return result


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    build_dir = argv[0]
    problems = []
    src = os.path.join(ROOT, "src")
    for entry in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, entry)) and entry not in LAYERS:
            problems.append(f"src/{entry}/ is not a layer ({', '.join(LAYERS)})")
        elif entry.endswith((".c", ".h")):
            problems.append(f"src/{entry} is in no layer's folder")
    order = source_order()
    for source in order:
        if layer_of(source) is None:
            problems.append(f"{source} is in no layer's folder")
    objs = objects(build_dir, order)
    if not objs:
        print(f"check_layers: no objects under {build_dir}: build it first", file=sys.stderr)
        return 2
    edges, _ = check_calls(order, objs, problems)
    for component in cycles(edges):
        problems.append("cycle of calls: " + " <-> ".join(component))
    check_includes(problems)
    check_toc(order, objs, problems)
    for problem in problems:
        print(f"check_layers: {problem}")
    layers = {layer: sum(1 for s in objs if layer_of(s) == layer) for layer in LAYERS}
    print(f"check_layers: {len(objs)} objects ({', '.join(f'{n} {l}' for l, n in layers.items())}), "
          f"{len(edges)} calls between files: "
          + ("all downward, no cycles" if not problems else f"{len(problems)} problems"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
