#!/usr/bin/env python3
"""Compare PostgreSQL's suites run on heap and on tessera, hunk by hunk.

scripts/pg-suites.sh runs each suite twice on one server: with heap as the
default table access method (the expected output) and with tessera.  This
script reads both result directories and sorts every difference into:

  plan     inside EXPLAIN output (a QUERY PLAN result, or a line a test
           prints about its plan); tessera's custom nodes and costs choose
           other plans, which is not a difference in what queries return
  order    the same rows in another order, in a query without ORDER BY
  known    a difference listed in known-differences.txt with its reason
           (documented limits: no TOAST table, publications, cmin, TIDs)
  other    anything else: a failure

Usage: compare.py HEAP_RESULTS TESSERA_RESULTS [--suite regress|isolation] [--known FILE] [-v]
Prints one line per test that differs and, for "other" hunks, the hunk.
Exit status 1 if any hunk is "other".
"""
import argparse
import collections
import difflib
import os
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("heap")
ap.add_argument("tessera")
ap.add_argument("--known", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                "known-differences.txt"))
ap.add_argument("--suite", default="regress")
ap.add_argument("-v", "--verbose", action="store_true")
args = ap.parse_args()


def load_known(path):
    """Lines 'suite/test<TAB>regex<TAB>reason'; '#' starts a comment."""
    known = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 3:
                sys.exit(f"{path}: bad line: {line!r}")
            known.append((parts[0], re.compile(parts[1]), parts[2]))
    return known


# lines a test prints about the plan it got (brin's "did not get seqscan
# plan"), and lines of plans that tests print without EXPLAIN's header
# (from functions, \gexec, notices)
PLAN_TALK = re.compile(
    r"did not get (seqscan|bitmap index scan) plan|QUERY PLAN|"
    r"^\s*(->\s+)?(Custom Scan|Parallel Custom Scan|Seq Scan|Parallel Seq Scan|Index Scan|"
    r"Index Only Scan|Bitmap Heap Scan|Bitmap Index Scan|BitmapAnd|BitmapOr|Hash Join|Hash|"
    r"Nested Loop|Merge Join|Append|Merge Append|Sort|Incremental Sort|Aggregate|HashAggregate|"
    r"GroupAggregate|Partial|Finalize|Gather|Gather Merge|Result|Materialize|Memoize|Limit|"
    r"Subquery Scan|Unique|WindowAgg|Group|SetOp|HashSetOp|Tid Scan|Tid Range Scan|Sample Scan|"
    r"LockRows|ProjectSet)\b.*(\(|on |$)|"
    r"^\s+(Filter|Row Group Filter|Vector Filter|Index Cond|Recheck Cond|Hash Cond|Merge Cond|"
    r"Join Filter|Sort Key|Group Key|Presorted Key|Output|Columns|Aggregates|Workers Planned|"
    r"Workers Launched|Rows Removed by [A-Za-z ]+|Row Groups [A-Za-z]+|Heap Fetches|"
    r"Subplans Removed|Cache Key|Cache Mode|Hits|Batches|Buckets|Phase|One-Time Filter|"
    r"Index Searches|Heap Blocks|Chunks [A-Za-z ]+|Groups [A-Za-z]+|Delta Rows Read|TID Cond):")


# a result whose column is a plan: EXPLAIN's, or a test function's that
# filters EXPLAIN output (explain_filter, explain_memoize, jsonb_pretty of
# EXPLAIN (FORMAT JSON), ...)
PLAN_HEADER = re.compile(r"QUERY PLAN|explain|jsonb_pretty|plan", re.I)
ROWS = re.compile(r"^\(\d+ rows?\)$")
RULE = re.compile(r"^-+(\+-+)*$")


class Item:
    """A line of output, or a whole result table (header to row count)."""

    def __init__(self, lines, table=False):
        self.lines = lines
        self.table = table
        self.plan = table and bool(PLAN_HEADER.search(lines[0])) or \
            (not table and bool(PLAN_TALK.search(lines[0])))
        # a result table compared as a multiset of rows (order aside)
        self.key = ("T", lines[0], tuple(sorted(lines[2:-1])), lines[-1]) if table else ("L", lines[0])

    def __eq__(self, other):
        return self.lines == other.lines

    def __hash__(self):
        return hash(tuple(self.lines))


def items(lines):
    out = []
    i = 0
    while i < len(lines):
        # psql's aligned header: its rule line is exactly as wide
        if i + 1 < len(lines) and RULE.match(lines[i + 1]) and lines[i].strip() and \
                not RULE.match(lines[i]) and len(lines[i]) == len(lines[i + 1]):
            # a result ends with its row count; \d and the like end at a
            # blank line instead, and are compared line by line
            j = i + 2
            while j < len(lines) and not ROWS.match(lines[j]) and lines[j] != "":
                j += 1
            if j < len(lines) and ROWS.match(lines[j]):
                out.append(Item(lines[i:j + 1], table=True))
                i = j + 1
                continue
        out.append(Item([lines[i]]))
        i += 1
    return out


def classify(test, suite, a, b, known):
    """Sort the hunks of the diff between a (heap) and b (tessera)."""
    counts = collections.Counter()
    others = []
    # plans first, on their own: then a plan that differs cannot shift
    # the alignment of what follows it
    all_a, all_b = items(a), items(b)
    pa = [x for x in all_a if x.plan]
    pb = [x for x in all_b if x.plan]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, pa, pb, autojunk=False).get_opcodes():
        if tag != "equal":
            counts["plan"] += 1
    ia = [x for x in all_a if not x.plan]
    ib = [x for x in all_b if not x.plan]
    sm = difflib.SequenceMatcher(None, ia, ib, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        # what one side has and the other lacks, row order aside
        ka = collections.Counter(x.key for x in ia[i1:i2])
        kb = collections.Counter(x.key for x in ib[j1:j2])
        extra_a = [x for x in ia[i1:i2] if (ka - kb)[x.key] > 0]
        extra_b = [x for x in ib[j1:j2] if (kb - ka)[x.key] > 0]
        if not extra_a and not extra_b:
            counts["order"] += 1
            continue
        text = "\n".join(["-" + l for x in extra_a for l in x.lines] +
                          ["+" + l for x in extra_b for l in x.lines])
        # the statement before the hunk (its echo) counts as context
        context = "\n".join(l for x in ia[max(0, i1 - 3):i1] for l in x.lines) + "\n" + text
        reason = None
        for where, rx, why in known:
            if where in (f"{suite}/{test}", f"{suite}/*") and rx.search(context):
                reason = why
                break
        if reason:
            counts["known"] += 1
            if args.verbose:
                print(f"    known ({reason}):\n" + "\n".join("      " + l for l in text.splitlines()[:6]))
            continue
        counts["other"] += 1
        others.append((i1, j1, text))
    return counts, others


suite = args.suite
known = load_known(args.known)
total = collections.Counter()
failed = []
for name in sorted(os.listdir(args.tessera)):
    if not name.endswith(".out"):
        continue
    test = name[:-4]
    hp = os.path.join(args.heap, name)
    if not os.path.exists(hp):
        continue
    a = open(hp, errors="replace").read().splitlines()
    b = open(os.path.join(args.tessera, name), errors="replace").read().splitlines()
    if a == b:
        total["same"] += 1
        continue
    counts, others = classify(test, suite, a, b, known)
    total.update(counts)
    line = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"{test}: {line}")
    for i1, j1, text in others:
        failed.append(test)
        print(f"  other difference (heap item {i1}, tessera item {j1}):")
        for l in text.splitlines()[:40]:
            print("    " + l)
print(f"{suite}: {total['same']} tests the same; hunks: {total['plan']} plan, {total['order']} order, "
      f"{total['known']} known, {total['other']} other")
sys.exit(1 if failed else 0)
