"""The ClickBench workload (issue 18): ClickBench's `hits` table (105
columns) filled by clickbench_data's generator, loaded with COPY into heap
and tessera (and DuckDB, in memory), its primary key, VACUUM ANALYZE, and
ClickBench's 43 queries run by ClickBench's protocol.

Protocol (ClickBench's lib/benchmark-common.sh): each query is run `--runs`
times (3, as ClickBench's tries) on each system, each run in a new session
(ClickBench starts a psql per run); the first run is "cold", "hot" is the
best of the others.  Before a system's cold run the OS page cache is
dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`) when the suite runs as
root on the server's machine; ClickBench also restarts the server, which
the suite cannot do to a shared server, so PostgreSQL's shared_buffers stay
warm.  ClickBench's relative score per system is the geometric mean over
queries of (t + 0.01) / (best + 0.01), best the fastest system's time for
that query (hot and cold separately); a query that failed counts as twice
the larger of 300 s and the system's slowest query, as ClickBench's page
does (index.html, relativeQueryTime)."""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from typing import Optional

import psycopg

from . import clickbench_data, clickbench_queries
from .answers import answer_difference, first_difference, normalize_rows, ordered_query
from .common import (SIDES, Config, access_method, drop_schemas, duckdb_connect, ensure_extension, group,
                     reset_schemas, storage_facts, wanted)
from .pg import ERROR, OK, TIMEOUT, Pg, failure, outcome, progress

SCHEMAS = {"heap": "bench_cb_heap", "tessera": "bench_cb_tessera"}
ADD = 0.01                   # ClickBench's constant_time_add
MISSING_FACTOR = 2           # missing_result_penalty
MISSING_FLOOR = 300.0        # missing_result_time


# ---------------------------------------------------------------- the cold run

def drop_caches(pg: Pg) -> Optional[str]:
    """Drop the OS page cache; None when done, else why it was not."""
    host = pg.conn.info.host or ""
    if not (host.startswith("/") or host in ("localhost", "127.0.0.1", "::1")):
        return f"the server ({host}) is not on this machine"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the suite does not run as root"
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        return f"cannot write /proc/sys/vm/drop_caches ({e.strerror})"
    return None


# ---------------------------------------------------------------- scores

def geomean(values: list) -> Optional[float]:
    vals = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def relative_scores(times: dict) -> dict:
    """ClickBench's relative time per system: {system: [seconds or None per
    query]} -> {system: geometric mean of (t + 0.01) / (best + 0.01)}.
    best is the fastest system's time for the query; queries no system ran
    are left out; a system's missing time counts as 2 x max(300 s, its
    slowest time)."""
    systems = list(times)
    n = max((len(v) for v in times.values()), default=0)
    out = {}
    for s in systems:
        own = [t for t in times[s] if t is not None]
        fallback = MISSING_FACTOR * max([MISSING_FLOOR] + own)
        logs = []
        for q in range(n):
            ts = [times[o][q] for o in systems if q < len(times[o]) and times[o][q] is not None]
            if not ts:
                continue
            t = times[s][q] if q < len(times[s]) and times[s][q] is not None else fallback
            logs.append(math.log((ADD + t) / (ADD + min(ts))))
        out[s] = math.exp(sum(logs) / len(logs)) if logs else None
    return out


def totals(items: list) -> dict:
    """Sums, geometric means and relative scores of the query items."""
    systems = [s for s in ("heap", "tessera", "duckdb") if any(s in it for it in items)]

    def val(it, s, key):
        o = it.get(s)
        return o.get(key) if o and o.get("status") == OK else None
    out: dict = {}
    scores = {k: relative_scores({s: [val(it, s, k) for it in items] for s in systems}) for k in ("best", "cold")}
    for s in systems:
        hot = [val(it, s, "best") for it in items]
        cold = [val(it, s, "cold") for it in items]
        out[s] = {"hot_sum_seconds": round(sum(t for t in hot if t is not None), 6),
                  "cold_sum_seconds": round(sum(t for t in cold if t is not None), 6),
                  "queries_missing": sum(1 for t in hot if t is None),
                  "score_hot": scores["best"].get(s), "score_cold": scores["cold"].get(s)}
    pairs = [(val(it, "heap", "best"), val(it, "tessera", "best")) for it in items]
    out["geomean_speedup"] = geomean([h / t for h, t in pairs if h is not None and t])
    out["geomean_speedup_queries"] = sum(1 for h, t in pairs if h is not None and t)
    if "duckdb" in systems:
        pairs = [(val(it, "tessera", "best"), val(it, "duckdb", "best")) for it in items]
        out["geomean_tessera_over_duckdb"] = geomean([t / d for t, d in pairs if t is not None and d])
        out["geomean_tessera_over_duckdb_queries"] = sum(1 for t, d in pairs if t is not None and d)
    return out


# ---------------------------------------------------------------- running a query

def pg_tries(pg: Pg, sql: str, schema: str, tries: int, cold: bool) -> tuple:
    """ClickBench's tries on one side: (outcome, answer).  Each try in a new
    session; the cache is dropped before the first when `cold`.  The
    answer is the first try's."""
    times, answer = [], None
    try:
        for i in range(tries):
            if i == 0 and cold:
                drop_caches(pg)
            pg.fresh_session()
            pg.set_search_path(schema)
            start = time.perf_counter()
            rows = pg.fetch(sql)
            times.append(time.perf_counter() - start)
            if i == 0:
                answer = ("rows", normalize_rows(rows, ordered_query(sql)))
    except psycopg.Error as e:
        pg.recover()
        return failure(e, runs_done=len(times) or None), None
    return try_outcome(times, rows=len(answer[1])), answer


def try_outcome(times: list, **extra) -> dict:
    """runs/best/median over the hot tries (all but the first; the only one
    when there is one), cold = the first."""
    hot = times[1:] or times
    return outcome(OK, hot, cold=round(times[0], 6), tries=[round(t, 6) for t in times], **extra)


def duckdb_tries(con, sql: str, tries: int, timeout: float) -> dict:
    times, nrows = [], 0
    try:
        for i in range(tries):
            timer = threading.Timer(timeout, con.interrupt)
            timer.start()
            try:
                start = time.perf_counter()
                rows = con.execute(sql).fetchall()
                times.append(time.perf_counter() - start)
            finally:
                timer.cancel()
            nrows = len(rows)
    except Exception as e:  # duckdb has its own exception tree
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return outcome(TIMEOUT if "interrupt" in msg.lower() else ERROR, error=msg)
    return try_outcome(times, rows=nrows)


def fetch_in(pg: Pg, schema: str, sql: str, params=None) -> list:
    pg.set_search_path(schema)
    try:
        return pg.fetch(sql, params)
    finally:
        pg.set_search_path(None)


def check_answers(pg: Pg, name: str, sql: str, answers: dict) -> tuple:
    """(match, difference, note) of heap's and tessera's answers.  Equal
    answers match.  Where they differ, they may still both be right when
    rows tie on the ORDER BY key (clickbench_queries' notes); they are then
    checked, side by side, against the reference (the query made to have a
    unique answer, run on both sides, whose answers must be identical):

    - the same number of rows, the same key values row by row;
    - the same rows as the reference, as multisets, except those tied with
      a boundary key (where a LIMIT or OFFSET may cut ties);
    - the rows tied with a boundary key: rows of the query on the other
      side's table with that key (the candidates).

    q17 (LIMIT without ORDER BY): each side's groups are recounted on the
    other side's table."""
    a, b = answers["heap"], answers["tessera"]
    diff = answer_difference(a, b)
    if diff is None:
        return True, None, None
    rows = {"heap": a[1], "tessera": b[1]}
    other = {"heap": "tessera", "tessera": "heap"}

    if name in clickbench_queries.UNORDERED_CHECKS:
        check, cols = clickbench_queries.UNORDERED_CHECKS[name]
        if len(rows["heap"]) != len(rows["tessera"]):
            return False, diff, None
        for side in SIDES:
            params = [[r[c] for r in rows[side]] for c in cols]
            got = normalize_rows(fetch_in(pg, SCHEMAS[other[side]], check, params), False)
            d = first_difference(normalize_rows(rows[side], False), got)
            if d:
                return False, f"{diff}; {side}'s groups recounted on {other[side]}: {d}", None
        return True, None, (f"LIMIT without ORDER BY: the sides returned different groups; each side's "
                            f"{len(rows['heap'])} groups, recounted on the other side's table, agree")

    ncols = len((rows["heap"] or rows["tessera"])[0])
    plan = clickbench_queries.tie_plan(sql, ncols) if ordered_query(sql) else None
    if plan is None:
        return False, diff, None
    ref = {side: normalize_rows(fetch_in(pg, SCHEMAS[side], plan["reference"]), True) for side in SIDES}
    d = first_difference(ref["heap"], ref["tessera"])
    if d:
        return False, f"{diff}; the reference (every column added to the ORDER BY) differs too: {d}", None
    reference, keys, k = ref["heap"], plan["keys"], plan["prefix"]
    limit, offset = clickbench_queries.limit_of(sql)
    edges = clickbench_queries.boundary_keys(reference, keys, limit, offset)
    cand_sql, params = clickbench_queries.candidates_sql(plan, edges) if edges else (None, None)
    tied = 0
    for side in SIDES:
        if len(rows[side]) != len(reference):
            return False, f"{diff}; {side}: {len(rows[side])} rows, the reference {len(reference)}", None
        # where the key is not returned, each row's key is the reference's in that place
        mine = [ref_row[:k] + row for ref_row, row in zip(reference, rows[side])]
        d = clickbench_queries.tie_difference(reference, mine, keys, limit, offset)
        if d:
            return False, f"{diff}; {side} against the reference: {d}", None
        at_edge = [r for r in mine if tuple(r[i] for i in keys) in edges]
        tied = max(tied, len(at_edge))
        if at_edge:
            pool = Counter(normalize_rows(fetch_in(pg, SCHEMAS[other[side]], cand_sql, params), False))
            for r in at_edge:
                if pool[r] <= 0:
                    return False, (f"{diff}; {side}'s row {r!r:.120} ties at the boundary but is not a row of "
                                   f"the query on {other[side]}"), None
                pool[r] -= 1
    where = " (which the query does not return)" if k else ""
    edge_text = (f", except the rows tied at the LIMIT/OFFSET boundary ({tied} of {len(reference)}), which are "
                 "rows of the query on the other side's table" if tied else "")
    return True, None, (f"the sides ordered or picked rows tied on the ORDER BY key{where} differently; each "
                        f"side's answer has the reference's keys row by row and its rows{edge_text} (reference: "
                        "the query with every column added to its ORDER BY, identical on both sides)")


def run_query(pg: Pg, cfg: Config, name: str, sql: str, loaded: dict, duck, cold: bool) -> dict:
    item = {"name": name, "sql": sql, "ordered": ordered_query(sql)}
    answers = {}
    for side in SIDES:
        if not loaded[side]:
            item[side] = outcome("skipped", error="the load failed")
            answers[side] = None
            continue
        progress(f"  {name} on {side}")
        item[side], answers[side] = pg_tries(pg, sql, SCHEMAS[side], max(cfg.runs, 1), cold)
        if item[side]["status"] != OK:
            progress(f"    {side}: {item[side]['status']}: {item[side].get('error', '')}")
    pg.set_search_path(None)
    if answers["heap"] is None or answers["tessera"] is None:
        item["match"] = None
    else:
        try:
            item["match"], diff, note = check_answers(pg, name, sql, answers)
        except psycopg.Error as e:
            pg.recover()
            pg.set_search_path(None)
            item["match"], diff, note = False, f"{answer_difference(answers['heap'], answers['tessera'])} "\
                f"(the tie check failed: {str(e).strip().splitlines()[0]})", None
        if diff:
            item["difference"] = diff
            progress(f"    ANSWERS DIFFER: {diff}")
        if note:
            item["note"] = note
    if duck is not None:
        progress(f"  {name} on duckdb")
        item["duckdb"] = duckdb_tries(duck, clickbench_queries.duckdb_sql(name), max(cfg.runs, 1), cfg.timeout)
    return item


# ---------------------------------------------------------------- load

def load(pg: Pg, cfg: Config, side: str, path: str) -> tuple:
    """CREATE TABLE, COPY (timed, with WAL), the primary key (timed), then
    VACUUM ANALYZE (timed separately).  Returns (load, key) outcomes."""
    table = f"{SCHEMAS[side]}.hits"
    pg.execute(clickbench_queries.create_table(table, access_method(cfg, side)))
    pg.checkpoint()
    with pg.no_timeout():
        try:
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            pg.copy_in(table, path, "FORMAT csv")
            loaded = outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn))
        except psycopg.Error as e:
            pg.recover()
            return failure(e), outcome("skipped", error="the load failed")
        try:
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            pg.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({clickbench_queries.PRIMARY_KEY})")
            key = outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn))
        except psycopg.Error as e:
            pg.recover()
            key = failure(e)
        start = time.perf_counter()
        pg.execute(f"VACUUM ANALYZE {table}")
        loaded["vacuum_analyze_seconds"] = round(time.perf_counter() - start, 6)
    return loaded, key


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    tries = max(cfg.runs, 1)
    path, gen = clickbench_data.ensure(cfg.data_dir, n, log=progress)
    why_not = drop_caches(pg) if cfg.drop_caches else "--no-drop-caches"
    cold = why_not is None
    cold_text = ("the first run, after `sync; echo 3 > /proc/sys/vm/drop_caches` (the OS page cache; the "
                 "server is not restarted, so PostgreSQL's shared_buffers stay warm as they are)" if cold else
                 f"the first run; the OS page cache is not dropped ({why_not})")
    data_text = (f"generated in {gen['seconds']:.1f} s ({gen['bytes'] / 2**20:,.0f} MB of CSV)" if gen else
                 f"cached ({os.path.getsize(path) / 2**20:,.0f} MB of CSV)")
    res = {"title": f"ClickBench hits, {n:,} rows", "params": {"rows": n, "tries": tries, "caches_dropped": cold},
           "notes": [f"ClickBench's `hits` table (105 columns, its PostgreSQL types) with {n:,} generated rows of "
                     "web-analytics hits (bench/tessera_bench/clickbench_data.py, version "
                     f"{clickbench_data.VERSION}: skewed counters, users, URLs, titles, phrases; rows in primary-key "
                     f"order), `{os.path.basename(path)}` {data_text}. Loaded with COPY (the load time, "
                     "with WAL), then the primary key (CounterID, EventDate, UserID, EventTime, WatchID) "
                     "(index build), then VACUUM ANALYZE (its own column). DuckDB: in memory, the same CSV.",
                     f"ClickBench's 43 queries, q00..q42 in the order of its queries.sql. Each runs {tries} times "
                     f"per system, each run in a new session; cold = {cold_text}; hot = the best of the other "
                     "runs (the `best` figure; `median` is theirs too). DuckDB's cold run is its first (in memory).",
                     "Answers: heap's and tessera's first runs, compared exactly; where they differ only in rows "
                     "tied on the ORDER BY key (or q17's LIMIT without ORDER BY picks other groups), both are "
                     "checked against the query made to have a unique answer and the rows it ranks (see the notes "
                     "under the table), else the difference is reported. DuckDB's answers are not compared (its "
                     "types differ).",
                     "Relative score (ClickBench's): per system, the geometric mean over queries of "
                     "(t + 0.01) / (best + 0.01), best the fastest system's time for that query; hot and cold "
                     "separately; a failed query counts as 2 x max(300 s, the system's slowest)."],
           "load": {}, "sizes": {}, "groups": []}
    if gen:
        res["data"] = dict(gen, path=path)
    reset_schemas(pg, SCHEMAS)
    try:
        key_item = {"name": "primary_key", "sql": f"ALTER TABLE hits ADD PRIMARY KEY ({clickbench_queries.PRIMARY_KEY})"}
        loaded = {}
        for side in SIDES:
            progress(f"  loading {n:,} hits into {side}")
            res["load"][side], key_item[side] = load(pg, cfg, side, path)
            loaded[side] = res["load"][side]["status"] == OK
            if not loaded[side]:
                progress(f"    {side}: COPY failed: {res['load'][side].get('error')}")
                continue
            if key_item[side]["status"] != OK:
                progress(f"    primary key on {side}: {key_item[side]['status']}: {key_item[side].get('error')}")
            tables = [f"{SCHEMAS[side]}.hits"]
            res["sizes"][side] = dict(pg.sizes(tables), **storage_facts(pg, cfg, side, tables))
        res["groups"].append(group("index build", "write", [key_item]))

        duck = duckdb_connect(cfg)
        if duck is not None:
            progress("  loading duckdb")
            start = time.perf_counter()
            duck.execute(clickbench_queries.create_table())
            # a quoted empty field is an empty string, as in PostgreSQL's CSV
            duck.execute(f"COPY hits FROM '{path}' (FORMAT csv, HEADER false, ALLOW_QUOTED_NULLS false)")
            res["load"]["duckdb"] = outcome(OK, [time.perf_counter() - start])

        items = []
        for name, sql in clickbench_queries.QUERIES.items():
            if wanted(cfg, name):
                items.append(run_query(pg, cfg, name, sql, loaded, duck, cold))
        res["groups"].append(group("queries", "query", items, protocol="clickbench", totals=totals(items)))
        if duck is not None:
            duck.close()
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
