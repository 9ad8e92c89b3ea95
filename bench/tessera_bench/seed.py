"""The seed workload (core issue): one table, loaded with INSERT ... SELECT,
its sizes, eight read queries, a compression sweep, a primary key build and
writes on fresh copies."""

from __future__ import annotations

import time

import psycopg

from .common import (SIDES, Config, access_method, compare_query, drop_schemas, duckdb_connect,
                     ensure_extension, group, reset_schemas, storage_facts, wanted)
from .pg import OK, Pg, failure, outcome, progress, time_statement

COLUMNS = "(c1 int, c2 text, c3 int, c4 numeric, c5 timestamp)"
INSERT = ("INSERT INTO {t} SELECT i, 'single-value', i % 1000, (i % 100000)::numeric / 7, "
          "timestamp '2024-01-01' + i * interval '1 second' FROM generate_series({lo}, {hi}) i")
SCHEMAS = {"heap": "bench_heap", "tessera": "bench_tessera"}


def queries(rows: int) -> list:
    """(name, sql, streamed).  Streamed queries are read through COPY TO
    STDOUT and compared by an order-insensitive digest.  The range is the
    core issue's BETWEEN 1000000 AND 1100000 at 10M rows, scaled."""
    lo = rows // 10
    hi = lo + rows // 100
    return [
        ("select_c2", "SELECT c2 FROM t", True),
        ("count_c1", "SELECT count(c1) FROM t", False),
        ("count_c2", "SELECT count(c2) FROM t", False),
        ("sum_c1", "SELECT sum(c1) FROM t", False),
        ("group_c3", "SELECT c3, count(*), avg(c4) FROM t GROUP BY c3", False),
        ("range_c1", f"SELECT count(*) FROM t WHERE c1 BETWEEN {lo} AND {hi}", False),
        ("self_join", "SELECT count(*) FROM t a JOIN t b ON a.c1 = b.c1 WHERE a.c3 < 10", False),
        ("filter_c3", "SELECT * FROM t WHERE c3 = 7", True),
    ]


SWEEP = [("zstd-1", "zstd", 1), ("zstd-3", "zstd", 3), ("zstd-19", "zstd", 19),
         ("lz4", "lz4", None), ("pglz", "pglz", None), ("none", "none", None)]


def write_ops(rows: int) -> list:
    """(name, sql) of the writes; `w` is a fresh copy of t with a primary key."""
    tenth = max(rows // 10, 1)
    return [
        ("update_10pct", f"UPDATE w SET c3 = c3 + 1 WHERE c1 <= {tenth}"),
        ("delete_10pct", f"DELETE FROM w WHERE c1 > {rows - tenth}"),
        ("merge", "MERGE INTO w USING src ON w.c1 = src.c1 "
                  "WHEN MATCHED THEN UPDATE SET c3 = w.c3 + 1 "
                  "WHEN NOT MATCHED THEN INSERT VALUES (src.c1, 'merged', 0, 0, timestamp '2024-01-01')"),
        ("delete_half_vacuum", "DELETE FROM w WHERE c1 % 2 = 0"),
    ]


def merge_rows(rows: int) -> int:
    return min(10_000, max(rows // 10, 1))


def load(pg: Pg, cfg: Config, table: str, am: str, rows: int, options: str = "") -> dict:
    """CREATE TABLE + the timed INSERT ... SELECT (no statement timeout) +
    VACUUM ANALYZE."""
    pg.execute(f"CREATE TABLE {table} {COLUMNS} USING {am}{' WITH (' + options + ')' if options else ''}")
    pg.checkpoint()
    with pg.no_timeout():
        lsn = pg.wal_lsn()
        start = time.perf_counter()
        pg.execute(INSERT.format(t=table, lo=1, hi=rows))
        seconds = time.perf_counter() - start
        wal = pg.wal_since(lsn)
        start = time.perf_counter()
        pg.execute(f"VACUUM ANALYZE {table}")
        vacuum = time.perf_counter() - start
    return outcome(OK, [seconds], wal_bytes=wal, vacuum_analyze_seconds=round(vacuum, 6))


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    res = {"title": f"seed table, {n:,} rows", "params": {"rows": n},
           "notes": ["Load: INSERT ... SELECT from generate_series, timed per side (WAL bytes as "
                     "pg_current_wal_insert_lsn difference), then VACUUM ANALYZE.",
                     "Queries: a warm-up run that captures the answer, then timed runs; "
                     "SELECT c2 and SELECT * stream through COPY TO STDOUT and compare an "
                     "order-insensitive digest of their rows."],
           "groups": []}
    reset_schemas(pg, SCHEMAS)
    try:
        res["load"] = {}
        for side in SIDES:
            progress(f"  loading {n:,} rows into {side}")
            res["load"][side] = load(pg, cfg, f"{SCHEMAS[side]}.t", access_method(cfg, side), n)
        res["sizes"] = {}
        for side in SIDES:
            t = f"{SCHEMAS[side]}.t"
            res["sizes"][side] = dict(pg.sizes([t]), **storage_facts(pg, cfg, side, [t]))

        duck = duckdb_connect(cfg)
        if duck is not None:
            progress("  loading duckdb")
            start = time.perf_counter()
            duck.execute(f"""CREATE TABLE t AS
                SELECT i::INTEGER AS c1, 'single-value' AS c2, (i % 1000)::INTEGER AS c3,
                       (i % 100000)::DOUBLE / 7 AS c4, TIMESTAMP '2024-01-01' + i * INTERVAL 1 SECOND AS c5
                FROM range(1, {n} + 1) r(i)""")
            res["load"]["duckdb"] = outcome(OK, [time.perf_counter() - start])

        items = []
        for name, sql, stream in queries(n):
            if wanted(cfg, name):
                duck_sql = f"COPY ({sql}) TO '/dev/null' (FORMAT csv)" if stream else sql
                items.append(compare_query(pg, cfg, name, sql, SCHEMAS, stream=stream, duck=duck,
                                           duck_sql=duck_sql))
        if items:
            res["groups"].append(group("queries", "query", items))
        if duck is not None:
            duck.close()

        if cfg.sweep and (cfg.query is None or cfg.query == "sweep"):
            res["groups"].append(sweep(pg, cfg))

        write_names = ["primary_key"] + [name for name, _ in write_ops(n)]
        if cfg.query is None or cfg.query in write_names:
            res["groups"] += writes(pg, cfg)
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res


def sweep(pg: Pg, cfg: Config) -> dict:
    """Load the tessera table once per codec setting; size per codec, and
    the ratio to a heap table of the same rows."""
    rows = cfg.sweep_rows
    g = group("sweep", "sweep", [], rows=rows)
    if cfg.tessera_am != "tessera":
        g["note"] = f"skipped: the compression options are tessera's (--tessera-am {cfg.tessera_am})"
        return g
    if rows == cfg.rows:
        heap_bytes = pg.total_size(f"{SCHEMAS['heap']}.t")
    else:
        progress(f"  compression sweep: heap reference ({rows:,} rows)")
        load(pg, cfg, f"{SCHEMAS['heap']}.sweep_ref", "heap", rows)
        heap_bytes = pg.total_size(f"{SCHEMAS['heap']}.sweep_ref")
        pg.execute(f"DROP TABLE {SCHEMAS['heap']}.sweep_ref")
    g["heap_bytes"] = heap_bytes
    for label, codec, level in SWEEP:
        opts = f"tessera_compression = '{codec}'" + (f", tessera_compression_level = {level}" if level else "")
        table = f"{SCHEMAS['tessera']}.sweep_{label.replace('-', '_')}"
        progress(f"  compression sweep {label} ({rows:,} rows)")
        item = {"name": label, "options": opts}
        try:
            o = load(pg, cfg, table, "tessera", rows, opts)
            size = pg.total_size(table)
            o.update(bytes=size, ratio=size / heap_bytes if heap_bytes else None,
                     **storage_facts(pg, cfg, "tessera", [table]))
            item["tessera"] = o
            pg.execute(f"DROP TABLE {table}")
        except psycopg.Error as e:
            pg.recover()
            item["tessera"] = failure(e)
        g["items"].append(item)
    return g


def _add_primary_key(pg: Pg, table: str) -> dict:
    try:
        with pg.no_timeout():
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            pg.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (c1)")
            return outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn))
    except psycopg.Error as e:
        pg.recover()
        return failure(e)


def writes(pg: Pg, cfg: Config) -> list:
    """Index build on t, then each write on a fresh copy `w` of t (with the
    primary key), committed; contents of heap and tessera compared after."""
    n = cfg.rows
    index_item = {"name": "primary_key", "sql": "ALTER TABLE t ADD PRIMARY KEY (c1)"}
    for side in SIDES:
        progress(f"  index build on {side}")
        index_item[side] = _add_primary_key(pg, f"{SCHEMAS[side]}.t")
    groups = [group("index build", "write", [index_item])]

    m = merge_rows(n)
    for side in SIDES:
        s = SCHEMAS[side]
        # m existing keys spread over the table, then m new ones
        pg.execute(f"CREATE TABLE {s}.src AS SELECT i * {n // m} AS c1 FROM generate_series(1, {m}) i "
                   f"UNION ALL SELECT {n} + i FROM generate_series(1, {m}) i")
        pg.execute(f"ANALYZE {s}.src")
    items = []
    for name, sql in write_ops(n):
        if not wanted(cfg, name):
            continue
        item = {"name": name, "sql": sql}
        sums = {}
        for side in SIDES:
            s = SCHEMAS[side]
            w = f"{s}.w"
            progress(f"  {name} on {side} (fresh copy)")
            try:
                with pg.no_timeout():
                    pg.execute(f"CREATE TABLE {w} (LIKE {s}.t) USING {access_method(cfg, side)}")
                    pg.execute(f"INSERT INTO {w} SELECT * FROM {s}.t")
                key = _add_primary_key(pg, w)
                with pg.no_timeout():
                    pg.execute(f"VACUUM ANALYZE {w}")
                pg.checkpoint()
                before = pg.total_size(w)
                table_before = pg.table_size(w)
                pg.set_search_path(s)
                o = time_statement(pg, sql)
                pg.set_search_path(None)
                if key["status"] != OK:
                    o["note"] = f"without primary key ({key['status']}: {key.get('error')})"
                if o["status"] == OK and name == "delete_half_vacuum":
                    start = time.perf_counter()
                    with pg.no_timeout():
                        pg.execute(f"VACUUM {w}")
                    o["vacuum_seconds"] = round(time.perf_counter() - start, 6)
                if o["status"] == OK:
                    o["bytes_before"] = before
                    o["bytes_after"] = pg.total_size(w)
                    o["table_bytes_before"] = table_before
                    o["table_bytes_after"] = pg.table_size(w)
                    sums[side] = pg.checksum(w)
                item[side] = o
                pg.execute(f"DROP TABLE {w}")
            except psycopg.Error as e:
                pg.recover()
                item[side] = failure(e)
                pg.execute(f"DROP TABLE IF EXISTS {w}")
        item["match"] = (sums["heap"] == sums["tessera"]) if len(sums) == 2 else None
        items.append(item)
    if items:
        groups.append(group("writes", "write", items,
                            note="Each write runs once per side on a fresh copy of t with the primary key "
                                 "(copy, key and VACUUM ANALYZE untimed), committed; the tables' contents "
                                 "are compared afterwards (count and hash of every row). "
                                 f"MERGE: {m:,} matched (UPDATE) + {m:,} not matched (INSERT) source rows."))
    return groups
