#!/usr/bin/env python3
"""
check-layout.py: the source tree's layering rules, checked.

  - src/<dir>/ are layers; a file may use (call, or read a variable of) a
    file in its own layer or in a layer below it, never above;
  - no two files use each other, directly or through others (the file
    dependency graph has no cycle);
  - no header includes, directly or not, itself (include cycles);
  - no file over 1,500 lines; no function over 150 lines unless the comment
    above it says why (a line containing "long:").

Prints each violation and exits 1 if there is any.  Run from the repository
root (scripts/test.sh does).
"""
import collections
import glob
import os
import re
import sys

# lowest first; src/tessera.c (module initialization) sits above them all
LAYERS = ["catalog", "storage", "encoding", "reader", "writer", "maintenance",
          "tableam", "vector", "executor", "planner", "files", "utility", "debug", "."]
MAX_FILE_LINES = 1500
MAX_FUNCTION_LINES = 150

problems = []


def layer_of(path):
    d = os.path.dirname(os.path.relpath(path, "src")) or "."
    return LAYERS.index(d) if d in LAYERS else None


def strip_comments(text):
    """Comments and string literals out (a name in a string is no use of it)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


sources = sorted(glob.glob("src/**/*.c", recursive=True))
headers = sorted(glob.glob("src/**/*.h", recursive=True) + glob.glob("include/**/*.h", recursive=True))

for f in sources:
    if layer_of(f) is None:
        problems.append(f"{f}: directory is not a layer (scripts/check-layout.py LAYERS)")

# what each file defines: non-static functions and variables
defs = {}
for f in sources:
    text = strip_comments(open(f).read())
    for m in re.finditer(r"^(?!static\b)(?!extern\b)[A-Za-z_][\w \*]*\n(\w+)\(", text, re.M):
        defs[m.group(1)] = f
    for m in re.finditer(r"^(?!static\b)(?!extern\b)(?:PGDLLIMPORT\s+)?(?:const\s+)?[A-Za-z_]\w*\s+\**(\w+)(?:\[[^\]]*\])?\s*(?:=|;)",
                         text, re.M):
        if m.group(1) not in ("PG_MODULE_MAGIC",):
            defs[m.group(1)] = f

uses = collections.defaultdict(lambda: collections.defaultdict(set))
word = re.compile(r"\b[A-Za-z_]\w*\b")
for f in sources:
    text = strip_comments(open(f).read())
    for name in set(word.findall(text)):
        df = defs.get(name)
        if df and df != f:
            uses[f][df].add(name)

for f in sources:
    lf = layer_of(f)
    for df, names in uses[f].items():
        ld = layer_of(df)
        if lf is not None and ld is not None and ld > lf:
            problems.append(f"{f} uses {df} of a higher layer: {', '.join(sorted(names))}")


def cycles(graph):
    """Tarjan's strongly connected components with more than one member."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


for comp in cycles({f: set(uses[f]) for f in sources}):
    problems.append("files depend on each other: " + " -> ".join(comp))

# include cycles among headers
inc = {}
for h in headers:
    text = open(h).read()
    targets = set()
    for m in re.finditer(r'#include\s+"([^"]+)"', text):
        for cand in (os.path.join(os.path.dirname(h), m.group(1)), os.path.join("include", m.group(1))):
            if os.path.exists(cand):
                targets.add(os.path.normpath(cand))
    inc[os.path.normpath(h)] = targets
for comp in cycles(inc):
    problems.append("headers include each other: " + " -> ".join(comp))

# sizes
for f in sources + headers:
    lines = open(f).read().split("\n")
    if len(lines) > MAX_FILE_LINES:
        problems.append(f"{f}: {len(lines)} lines (limit {MAX_FILE_LINES})")
    if not f.endswith(".c"):
        continue
    i = 0
    while i < len(lines):
        m = re.match(r"^(\w+)\(", lines[i])
        if m and i > 0 and not lines[i - 1].startswith("#"):
            start = i
            while i < len(lines) and lines[i] != "{":
                if lines[i].endswith(";"):
                    break
                i += 1
            if i < len(lines) and lines[i] == "{":
                body = i
                while i < len(lines) and lines[i] != "}":
                    i += 1
                length = i - body + 1
                if length > MAX_FUNCTION_LINES:
                    j = start - 1
                    comment = []
                    while j >= 0 and not lines[j].startswith("/*") and j > start - 60:
                        comment.append(lines[j])
                        j -= 1
                    if j >= 0:
                        comment.append(lines[j])
                    if not any("long:" in c for c in comment):
                        problems.append(f"{f}:{start + 1}: {m.group(1)} is {length} lines "
                                        f"(limit {MAX_FUNCTION_LINES}; say why in a 'long:' comment)")
        i += 1

for p in problems:
    print(p)
print(f"check-layout: {len(problems)} problem(s) in {len(sources)} files")
sys.exit(1 if problems else 0)
