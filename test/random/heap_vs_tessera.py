#!/usr/bin/env python3
"""Random workloads on a heap table and a tessera table side by side.

Each round loads the same random rows (NULLs, NaN and infinities, sorted or
not) into a heap and a tessera table with random row-group and stripe sizes,
applies the same random DELETE/UPDATE/INSERT to both, the same small
transactions (tessera's delta), sometimes compacted or vacuumed (dead rows
folded out of stripes) and changed and vacuumed again, then runs random
queries -- aggregates (TesseraAgg), grouped aggregates, projections with
random quals (TesseraScan skipping and vector filters), joins (nested loops
with parameterized scans, hash and merge joins, index scans), serial and
parallel, with join and scan methods randomly disabled -- on both and
compares the results as digests; then a quarter as many again of SELECT
DISTINCT, boolean group keys, bool_and/bool_or and float variances, from a
random stream of their own.  Float sums are left out:
their last digits depend on the order rows are added in.

Every round then also runs the phases of phases.py on twins of the round's
tables: schema changes (every rewriting and non-rewriting ALTER TABLE, SET
ACCESS METHOD both ways, VACUUM FULL, CLUSTER, TRUNCATE) after changed and
locked rows and inside the transaction that wrote, with savepoints; scroll
cursors fetched backward; and two concurrent sessions per access method
(READ COMMITTED, REPEATABLE READ, SERIALIZABLE) whose results, waits and
serialization failures are compared with the heap twin's.

Usage: heap_vs_tessera.py --dsn DSN [--seed N] [--rounds N] [--queries N]
Exit status 1 on any difference.
"""
import argparse
import random
import sys

import psycopg

import phases

ap = argparse.ArgumentParser()
ap.add_argument("--dsn", required=True)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--queries", type=int, default=40)
ap.add_argument("--no-phases", action="store_true", help="queries only")
args = ap.parse_args()
random.seed(args.seed)
conn = psycopg.connect(args.dsn, autocommit=True)
cur = conn.cursor()
cur.execute("create extension if not exists tessera")
cols = [("a","int"),("b","bigint"),("c","smallint"),("d","numeric"),("e","float8"),("f","date"),("g","timestamp"),("h","text"),("r","real")]
# the chance of a NULL, per table: some tables have none, so that whole
# chunks are NULL-free (filters then compare packed values)
null_p = 0.1
def gen(i):
    def maybe(v): return None if random.random() < null_p else v
    return (maybe(random.randint(-1000, 1000)), maybe(random.randint(-10**15, 10**15)), maybe(random.randint(-300,300)),
            maybe(round(random.uniform(-1000,1000), random.randint(0,4))), maybe(random.choice([random.uniform(-1e6,1e6), float('nan'), float('inf'), -float('inf'), 0.0]) if random.random()<0.05 else random.uniform(-1e3,1e3)),
            maybe(f"2020-01-{random.randint(1,28):02d}"), maybe(f"2024-02-{random.randint(1,28):02d} {random.randint(0,23):02d}:00:00"),
            maybe(text_value()), maybe(random.uniform(-10,10)))
# h, per table: few words (dictionary chunks), or many hex or digit strings
# (packed chunks: at most 16 distinct bytes), words among the digits
h_style = "words"
def text_value():
    if h_style == "words" or (h_style == "digits" and random.random() < 0.02):
        return "s%d" % random.randint(0,50)
    if h_style == "hex":
        return "%x" % random.getrandbits(random.choice([32, 64, 128]))
    return str(random.randint(0, 10 ** random.randint(3, 14)))
def setup():
    global null_p, h_style
    null_p = random.choice([0.0, 0.002, 0.1])
    h_style = random.choice(["words", "words", "hex", "digits"])
    cur.execute("drop table if exists fh, ft")
    cur.execute("create table fh (" + ", ".join(f"{n} {t}" for n,t in cols) + ")")
    global tessera_opts
    rg = random.choice([100, 1000, 10000]); st = rg * random.choice([1,3,10])
    tessera_opts = f"tessera_row_group_row_limit={rg}, tessera_stripe_row_limit={st}"
    cur.execute(f"create table ft (like fh) using tessera with ({tessera_opts})")
    # dimension tables for star, semi and anti joins (heap, shared by both sides):
    # du unique on k (NULL keys too), dm with duplicate keys, dd keyed by date
    cur.execute("drop table if exists du, dm, dd, dl")
    cur.execute("create table du (k int, name text, grp int)")
    cur.execute("create unique index on du (k)")
    cur.execute("insert into du select k, case when random() < 0.1 then null else 'n' || (k % 7) end, k % 3 "
                f"from generate_series({random.randint(-1000, 0)}, {random.randint(0, 1000)}) k "
                f"where random() < {random.choice([0.2, 0.9])}")
    cur.execute("insert into du values (null, 'nullkey', 0)")
    cur.execute("create table dm (k int, tag text)")
    cur.execute("insert into dm select case when random() < 0.05 then null else (random() * 600 - 300)::int end, "
                "'t' || (i % 4) from generate_series(1, 800) i")
    cur.execute("create table dd (dk date primary key, wk int)")
    cur.execute("insert into dd select d, extract(week from d) from generate_series(date '2020-01-01', "
                f"date '2020-01-{random.randint(2, 28):02d}', interval '1 day') d")
    # dl: a NOT NULL unique key for left joins from it (TesseraAgg's left star join)
    cur.execute("create table dl (k int primary key, name text)")
    cur.execute("insert into dl select k, case when random() < 0.1 then null else 'l' || (k % 5) end "
                f"from generate_series({random.randint(-1200, 0)}, {random.randint(0, 1200)}) k "
                f"where random() < {random.choice([0.3, 0.9])}")
    cur.execute("analyze du, dm, dd, dl")
    n = random.choice([0, 1, 500, 5000, 20000])
    rows = [gen(i) for i in range(n)]
    # sorted-ish on a for skipping
    if random.random() < 0.5: rows.sort(key=lambda r: (r[0] is None, r[0] or 0))
    for t in ("fh","ft"):
        with cur.copy(f"copy {t} from stdin") as cp:
            for r in rows: cp.write_row(r)
    # some DML in both
    for _ in range(random.randint(0,3)):
        op = random.choice([f"delete from {{t}} where a % {random.randint(2,9)} = 0",
                            f"update {{t}} set b = b + 1, d = d * 2 where a > {random.randint(-1000,1000)}",
                            f"insert into {{t}} select * from {{t}} where c < {random.randint(-300,0)}"])
        for t in ("fh","ft"): cur.execute(op.format(t=t))
    # small transactions (tessera's delta), some changes of their rows, then
    # sometimes compaction (VACUUM or tessera.compact) or none
    for _ in range(random.choice([0, 0, 5, 40])):
        batch = [gen(i) for i in range(random.randint(1, 15))]
        values = ", ".join("(" + ", ".join(["%s"] * len(cols)) + ")" for _ in batch)
        params = [v for r in batch for v in r]
        for t in ("fh", "ft"):
            cur.execute(f"insert into {t} values {values}", params)
        if random.random() < 0.2:
            k = random.randint(-1000, 1000)
            op = random.choice([f"update {{t}} set h = 'small', d = d + 1 where a between {k} and {k + 20}",
                                f"delete from {{t}} where a between {k} and {k + 10}"])
            for t in ("fh", "ft"): cur.execute(op.format(t=t))
        if random.random() < 0.05:
            cur.execute("begin")
            for t in ("fh", "ft"):
                cur.execute(f"insert into {t} values {values}", params)
            cur.execute("rollback")
    k = random.random()
    if k < 0.3:
        cur.execute("vacuum fh"); cur.execute("vacuum ft")
        # VACUUM folded dead rows out of stripes: change the rest, fold again
        for _ in range(random.choice([0, 1, 2])):
            op = random.choice([f"delete from {{t}} where a % {random.randint(2,9)} = {random.randint(0,1)}",
                                f"update {{t}} set b = b - 1, h = 'again' where c > {random.randint(-300,300)}"])
            for t in ("fh","ft"): cur.execute(op.format(t=t))
            cur.execute("vacuum fh"); cur.execute("vacuum ft")
    elif k < 0.6:
        cur.execute("select tessera.compact('ft')")
    if random.random() < 0.5:
        for t in ("fh", "ft"):
            cur.execute(f"create index on {t} (a)")
    cur.execute("analyze fh"); cur.execute("analyze ft")
def qual():
    n, t = random.choice(cols)
    ops = ["<","<=","=",">=",">","<>"]
    if t in ("int","bigint","smallint"): v = str(random.randint(-1100,1100))
    elif t == "numeric": v = str(round(random.uniform(-1000,1000),2))
    elif t in ("float8","real"): v = random.choice(["'NaN'", "'Infinity'", str(random.uniform(-1000,1000))])
    elif t == "date": v = random.choice([f"date '2020-01-{random.randint(1,28):02d}'",
                                          f"date '2020-01-{random.randint(1,28):02d}' + interval '{random.randint(0,40)} hours'"])
    elif t == "timestamp": v = f"timestamp '2024-02-{random.randint(1,28):02d}'"
    else: v = "'s%d'" % random.randint(0,50)
    k = random.random()
    if k < 0.1: return f"{n} is null"
    if k < 0.2: return f"{n} is not null"
    if k < 0.3 and t in ("int","bigint","smallint"): return f"{n} in ({random.randint(-1000,1000)}, {random.randint(-1000,1000)}, null)"
    if k < 0.4 and t in ("int","bigint","smallint"): return f"{n} between {random.randint(-1000,0)} and {random.randint(0,1000)}"
    # ranges: two bounds on one column, applied together to packed chunks
    if k < 0.5 and t == "numeric":
        lo = round(random.uniform(-1000, 1000), random.randint(0, 5))
        return f"{n} between {lo} and {round(lo + random.uniform(0, 300), random.randint(0, 3))}"
    if k < 0.5 and t == "date":
        return f"{n} >= date '2020-01-{random.randint(1,28):02d}' and {n} < date '2020-01-{random.randint(1,28):02d}' + interval '{random.randint(0,5)} days'"
    if k < 0.5 and t == "timestamp":
        return f"{n} > timestamp '2024-02-{random.randint(1,28):02d} {random.randint(0,23):02d}:30' and {n} <= timestamp '2024-02-{random.randint(1,28):02d}'"
    return f"{n} {random.choice(ops)} {v}"
def row_qual():
    # quals with no vector form: TesseraAgg evaluates them row by row
    return random.choice([
        "md5(h) < '8'", "abs(a) % 7 = 3", "(c * 2 + 1) % 5 = 0", "length(h) > 2",
        "h ~ '^s[1-3]'", "a not in (select k from dm)", "a not in (select k from dm where k is not null)",
        "(c in (select k from dm where tag = 't1') or a > 500)", "coalesce(b, 0) % 3 <> 1",
        f"a <> 0 and 1000 / a > {random.randint(-5, 5)}"])
def where():
    k = random.random()
    if k < 0.2: return ""
    qs = [qual() if random.random() < 0.8 else row_qual() for _ in range(random.randint(1,3))]
    j = random.choice([" and ", " or "])
    return " where " + j.join(qs)
aggs = ["count(*)", "count(a)", "sum(a)", "sum(b)", "sum(c)", "avg(a)", "avg(b)", "avg(c)", "sum(d)", "avg(d)", "min(a)", "max(b)", "min(c)", "max(e)", "min(e)", "min(f)", "max(g)", "min(r)", "max(r)", "count(h)", "min(h)",
        "sum(d * (1 - d))", "avg(d * 0.05 + d)", "sum(d - 1.125)", "sum(d * d * d)",
        "count(*) filter (where a > 0)", "sum(d) filter (where c < 0 and f > date '2020-01-05')",
        "max(g) filter (where d >= 10.5)", "avg(b) filter (where e < 100)",
        "max(h)", "min(d)", "max(d) filter (where a < 0)"]
def join_query():
    # a self-join and a join with a small probe list: nested loops with
    # parameterized scans, hash and merge joins, index scans
    j = random.choice(["x.a = y.c", "x.a = y.a + 1", "y.a between x.c and x.c + 5", "x.f = y.f and x.a < y.a"])
    k = random.randint(-1000, 1000)
    w = random.choice([f" where x.a between {k} and {k + 3}",
                       f" where x.a between {k} and {k + 3} and y.h is not null"])
    c = random.choice(["count(*)", "count(y.b), sum(x.a)", "min(y.g), max(x.d)"])
    return f"select {c} from {{t}} x join {{t}} y on {j}{w}"
def star_query():
    # aggregates over joins with unique-keyed dimensions, EXISTS and NOT EXISTS:
    # TesseraAgg's star, semi and anti joins on tessera, PostgreSQL's joins on heap
    joins, groups = [], ["x.c", "x.h", "x.f"]
    if random.random() < 0.8:
        joins.append(f"join du on {random.choice(['x.a', 'x.c', 'x.b'])} = du.k")
        groups += ["du.name", "du.grp", "du.name, x.c"]
    if random.random() < 0.4:
        joins.append("join dd on x.f = dd.dk")
        groups += ["dd.wk", "dd.dk"]
    conds = [q for q in [random.choice(["", "", "du.grp = 1", "du.name <> 'n3'"]) if "du" in " ".join(joins) else "",
                         random.choice(["", "dd.wk > 1"]) if "dd" in " ".join(joins) else ""] if q]
    if random.random() < 0.3:
        # an inner join on dm's repeated keys: a counted dimension (each row aggregated per match)
        joins.append(f"join dm on {random.choice(['x.a', 'x.c'])} = dm.k")
        conds += random.choice([[], [], ["dm.tag = 't1'"], ["dm.k > 0"]])
        if random.random() < 0.2:
            groups.append("dm.tag")
    if random.random() < 0.5:
        conds.append(f"{random.choice(['', 'not '])}exists (select 1 from dm where dm.k = x.{random.choice(['a', 'c'])}"
                     f"{random.choice(['', ' and dm.tag = ' + repr('t%d' % random.randint(0, 3))])})")
    if random.random() < 0.25:
        # a semi or anti join with a `<>` beside its key (TPC-H q21's shape)
        key, ne = random.choice([("c", "a"), ("f", "c"), ("c", "b"), ("a", "c")])
        conds.append(f"{random.choice(['', 'not '])}exists (select 1 from {{t}} z where z.{key} = x.{key}"
                     f" and {random.choice([f'z.{ne} <> x.{ne}', f'x.{ne} <> z.{ne}'])}"
                     f"{random.choice(['', ' and z.d > 0'])})")
    if random.random() < 0.3:
        conds.append(qual())
    g = random.choice(groups)
    a = ", ".join(random.sample(aggs[:21] + ["sum(du.grp)" if "du" in " ".join(joins) else "count(*)"],
                                random.randint(1, 3)))
    w = (" where " + " and ".join(conds)) if conds else ""
    if random.random() < 0.3:
        return f"select {a} from {{t}} x {' '.join(joins)}{w}"
    return f"select {g}, {a} from {{t}} x {' '.join(joins)}{w} group by {g}"
def star_rows_query():
    # the rows of joins with unique-keyed dimensions: TesseraJoin on tessera
    # (the table scanned as vectors, a row formed for each row that joins)
    joins, cols = [f"join du on {random.choice(['x.a', 'x.c', 'x.b'])} = du.k"], ["x.a", "x.c", "x.h", "x.f", "x.d", "du.name", "du.grp"]
    if random.random() < 0.4:
        joins.append("join dd on x.f = dd.dk")
        cols += ["dd.wk", "dd.dk"]
    random.shuffle(joins)
    conds = [q for q in [random.choice(["", "", "du.grp = 1", "du.name <> 'n3'", "x.c % 3 < du.grp"]),
                         random.choice(["", "dd.wk > 1"]) if len(joins) > 1 else ""] if q]
    if random.random() < 0.4:
        conds.append(qual())
    c = ", ".join(random.sample(cols, random.randint(1, 4)))
    w = (" where " + " and ".join(conds)) if conds else ""
    return f"select {c} from {{t}} x {' '.join(joins)}{w}"
def left_query():
    # dl LEFT JOIN the table on dl's key, grouped by dl's columns: TesseraAgg's
    # left star join on tessera (each dl row without a match a group of its own)
    col = random.choice(["a", "c", "b"])
    # (the table's columns need no prefix: dl has k and name only)
    on = random.choice(["", "", f" and {qual()}", " and md5(x.h) < '9'"])
    g = random.choice(["dl.k", "dl.k, dl.name", "dl.name, dl.k"])
    a = ", ".join(random.sample(["count(*)", "count(x.a)", "sum(x.b)", "min(x.h)", "max(x.g)", "avg(x.d)",
                                 "count(distinct x.c)", "sum(x.d * 2)", "count(x.h)"], random.randint(1, 3)))
    w = random.choice(["", "", " where dl.name is not null", " where dl.k > 0"])
    h = random.choice(["", "", " having count(x.a) = 0", " having count(*) > 1"])
    return f"select {g}, {a} from dl left join {{t}} x on x.{col} = dl.k{on}{w} group by {g}{h}"
def correlated_query():
    # a subquery per outer row, correlated on the table's columns: TesseraAgg's
    # memo on tessera (keys of the parameter's own type), a run per row on heap
    outer = random.choice(["dm", "du", "dd"])
    if outer == "dd":
        cond = "x.f = dd.dk" + random.choice(["", "", " and x.c = dd.wk", " and x.a = dd.wk"])
        lim = ""
    else:
        cond = f"x.{random.choice(['a', 'a', 'c', 'b'])} = {outer}.k"
        if outer == "dm" and random.random() < 0.3:
            cond += f" and x.h = {outer}.tag"
        lo = random.randint(-300, 250)
        lim = f" where {outer}.k between {lo} and {lo + random.randint(0, 80)} or {outer}.k is null"
    if random.random() < 0.4:
        cond += f" and {qual()}"
    a = random.choice(aggs[:21] + ["count(*) + 1", "sum(d) * 2"])
    sub = f"(select {a} from {{t}} x where {cond})"
    if random.random() < 0.3:
        return f"select count(*) from {outer}{lim or ' where true'} and {sub} is {random.choice(['', 'not '])}null"
    return f"select {outer}.*, {sub} from {outer}{lim}"
def query():
    w = where()
    k = random.random()
    if k < 0.05:
        return left_query()
    if k < 0.08:
        return star_rows_query()
    if k < 0.13:
        return star_query()
    if k < 0.16:
        return correlated_query()
    if k < 0.2:
        return join_query()
    if k < 0.4:
        a = ", ".join(random.sample(aggs, random.randint(1,4)))
        return f"select {a} from {{t}}{w}"
    if k < 0.7:
        g = random.choice(["a","c","f","g","b","h","h, c","c, f","h, a, g"])
        a = ", ".join(random.sample(aggs, random.randint(1,3)))
        return f"select {g}, {a} from {{t}}{w} group by {g}"
    c = ", ".join(random.sample([n for n,_ in cols], random.randint(1,4)))
    return f"select {c} from {{t}}{w}"
def shapes_query(r):
    # SELECT DISTINCT (planned as the GROUP BY it is), boolean group keys,
    # bool_and / bool_or / every and variances of floats (rounded: their last
    # digits depend on the row order, which updates change), drawn from a
    # random stream of their own so that every seed's other queries stay the
    # same
    w = r.choice(["", f" where a > {r.randint(-1000, 1000)}", " where h <> 's3'",
                  " where c between -100 and 100", " where d is not null or b < 0"])
    k = r.random()
    if k < 0.4:
        c = ", ".join(r.sample(["a", "c", "f", "h", "a % 10", "upper(h)", "c > 0", "h is null", "g"],
                               r.randint(1, 3)))
        form = r.random()
        if form < 0.5:
            return f"select distinct {c} from {{t}}{w}"
        if form < 0.8:
            return f"select count(*) from (select distinct {c} from {{t}}{w}) s"
        return f"with d as (select distinct {c} from {{t}}{w}) select count(*) from d"
    sa = ["bool_and(a > 0)", "bool_or(h = 's7')", "every(c < 200)", "bool_or(e > 0)",
          "bool_and(b is not null)", "round(variance(r)::numeric, 3)", "round(stddev_pop(r)::numeric, 3)",
          "round(var_samp(e)::numeric, 2)", "count(*)", "sum(a)"]
    a = ", ".join(r.sample(sa, r.randint(1, 3)))
    if k < 0.55:
        return f"select {a} from {{t}}{w}"
    g = ", ".join(r.sample(["a > 0", "h is null", "c % 3 = 0", "f > date '2020-01-15'", "b < 0", "h", "c"],
                           r.randint(1, 2)))
    return f"select {g}, {a} from {{t}}{w} group by {g}"
bad = 0
nodes_seen = {"TesseraScan": 0, "TesseraAgg": 0, "TesseraJoin": 0, "TesseraTopN": 0}
packed_rounds = 0
for it in range(args.rounds):
    setup()
    cur.execute("select count(*) from tessera.chunk_info('ft') where encoding = 'packed'")
    packed_rounds += cur.fetchone()[0] > 0
    srng = random.Random(args.seed * 7919 + it)
    nq = args.queries + args.queries // 4
    for q in range(nq):
        shaped = q >= args.queries
        rng = srng if shaped else random
        qq = shapes_query(srng) if shaped else query()
        w = rng.choice([0, 2, 2])
        cur.execute(f"set max_parallel_workers_per_gather = {w}")
        # with workers, make parallel plans cheap enough to be chosen on small tables
        for g in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"):
            cur.execute(f"set {g} = {0 if w and rng.random() < 0.7 else 'default'}")
        for g in ("enable_hashjoin", "enable_mergejoin", "enable_seqscan", "enable_indexscan"):
            cur.execute(f"set {g} = {rng.choice(['on', 'on', 'off'])}")
        res = []
        for t in ("fh","ft"):
            try:
                cur.execute(f"select coalesce(md5(string_agg(x::text, '|' order by x::text)), 'none'), count(*) from ({qq.format(t=t)}) x")
                res.append(cur.fetchone())
            except Exception as e:
                res.append(("ERR", type(e).__name__ + str(e)[:100]))
        if res[0] != res[1]:
            bad += 1
            print("MISMATCH", qq, res)
        # which of tessera's nodes the queries ran (that the paths are exercised)
        try:
            cur.execute("explain " + qq.format(t="ft"))
            plan = " ".join(r[0] for r in cur.fetchall())
            for node in nodes_seen:
                nodes_seen[node] += plan.count(f"({node})") > 0
        except Exception:
            pass
    for g in ("max_parallel_workers_per_gather", "parallel_setup_cost", "parallel_tuple_cost",
              "min_parallel_table_scan_size", "enable_hashjoin", "enable_mergejoin", "enable_seqscan",
              "enable_indexscan"):
        cur.execute(f"reset {g}")
    if not args.no_phases:
        bad += phases.ddl_phase(cur, random, cols, tessera_opts)
        bad += phases.cursor_phase(cur, random)
        bad += phases.concurrency_phase(args.dsn, cur, random)
cur.execute("drop table if exists fh, ft, du, dm, dd")
print(f"seed {args.seed}: {args.rounds} rounds x {args.queries} + {args.queries // 4} queries, {bad} differences"
      f" (queries planned with " + ", ".join(f"{k} {v}" for k, v in nodes_seen.items()) +
      f"; packed text chunks in {packed_rounds} of {args.rounds} rounds)")
sys.exit(1 if bad else 0)
