"""What every workload shares: the run's configuration, schema handling,
running one query on every side, the optional DuckDB column.

A workload is a function (pg, cfg) -> dict, the dict that results.json
keeps under the workload's name.  Its shape (the reports only read these):

    {"title": str, "notes": [str], "params": {...},
     "load":  {side: outcome},                 # optional
     "sizes": {side: {"relation_bytes", "total_bytes", ...}},   # optional
     "groups": [{"name": str, "kind": "query"|"write"|"pgbench"|"sweep",
                 "items": [{"name": str, "heap": outcome, "tessera": outcome,
                            "duckdb": outcome?, "match": bool|None, ...}]}]}

An outcome is pg.outcome(): {"status": ok|timeout|unsupported|error|skipped,
"runs", "best", "median", "error", and figures such as wal_bytes or tps}.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Optional

import psycopg

from .answers import answer_difference, normalize_rows, ordered_query
from .pg import ERROR, OK, TIMEOUT, Pg, failure, outcome, progress, time_query

SIDES = ("heap", "tessera")


@dataclass
class Config:
    dsn: str
    rows: int = 10_000_000
    sf: float = 1.0
    runs: int = 3
    timeout: float = 600.0
    tessera_am: str = "tessera"
    use_duckdb: bool = True
    sweep: bool = True
    sweep_rows: int = 1_000_000
    pgbench_seconds: int = 20
    pgbench_clients: Optional[list] = None   # None: each script's default set
    small_txns: int = 10_000
    query: Optional[str] = None
    data_dir: str = ""
    keep: bool = False
    duckdb_threads: Optional[int] = None
    drop_caches: bool = True                 # clickbench: drop the OS page cache before cold runs


def access_method(cfg: Config, side: str) -> str:
    return "heap" if side == "heap" else cfg.tessera_am


def wanted(cfg: Config, name: str) -> bool:
    """Is this query / operation selected by --query?  (TPC-H's q01 may be
    given as q1.)"""
    if cfg.query is None:
        return True
    q = cfg.query.lower()
    return q == name or (name.startswith("q0") and q == "q" + name[2:])


def ensure_extension(pg: Pg, cfg: Config) -> None:
    if cfg.tessera_am != "heap":
        pg.execute("CREATE EXTENSION IF NOT EXISTS tessera")
        # a cluster kept from an older checkout: its objects to this version's
        pg.execute("ALTER EXTENSION tessera UPDATE")


def reset_schemas(pg: Pg, schemas: dict) -> None:
    for s in schemas.values():
        pg.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
        pg.execute(f"CREATE SCHEMA {s}")


def drop_schemas(pg: Pg, cfg: Config, schemas: dict) -> None:
    """Drop what the workload created, unless --keep."""
    if cfg.keep:
        return
    for s in schemas.values():
        try:
            pg.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
        except psycopg.Error:
            pg.recover()


def storage_facts(pg: Pg, cfg: Config, side: str, tables: list) -> dict:
    """Extra facts of tessera tables (stripes, compression ratio); best effort."""
    if access_method(cfg, side) != "tessera":
        return {}
    try:
        stripes = sum(int(pg.scalar("SELECT count(*) FROM tessera.stripes WHERE relation = %s::regclass", (t,)))
                      for t in tables)
        facts = {"stripes": stripes}
        if len(tables) == 1:
            facts["compression_ratio"] = pg.scalar("SELECT tessera.compression_ratio(%s::regclass)", (tables[0],))
        return facts
    except psycopg.Error:
        pg.recover()
        return {}


def group(name: str, kind: str, items: list, **extra) -> dict:
    g = {"name": name, "kind": kind, "items": items}
    g.update(extra)
    return g


# ---------------------------------------------------------------- queries

def compare_query(pg: Pg, cfg: Config, name: str, sql: str, schemas: dict, *, stream: bool = False,
                  duck=None, duck_sql: Optional[str] = None) -> dict:
    """Run one query on heap and tessera (and DuckDB), compare the answers."""
    item = {"name": name, "sql": " ".join(sql.split()), "ordered": ordered_query(sql)}
    answers = {}
    for side in SIDES:
        pg.fresh_session()
        pg.set_search_path(schemas[side])
        progress(f"  {name} on {side}")
        item[side], answers[side] = time_query(pg, sql, cfg.runs, stream=stream)
        if item[side]["status"] != OK:
            progress(f"    {side}: {item[side]['status']}: {item[side].get('error', '')}")
    pg.set_search_path(None)
    if answers["heap"] is None or answers["tessera"] is None:
        item["match"] = None
    else:
        diff = answer_difference(answers["heap"], answers["tessera"])
        item["match"] = diff is None
        if diff:
            item["difference"] = diff
            progress(f"    ANSWERS DIFFER: {diff}")
    if duck is not None:
        progress(f"  {name} on duckdb")
        item["duckdb"] = time_duckdb(duck, duck_sql or sql, cfg.runs, cfg.timeout)
    return item


# ---------------------------------------------------------------- DuckDB

def duckdb_connect(cfg: Config):
    """An in-memory DuckDB connection, or None when disabled or not installed."""
    if not cfg.use_duckdb:
        return None
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect(":memory:")
    if cfg.duckdb_threads:
        con.execute(f"SET threads = {int(cfg.duckdb_threads)}")
    return con


def time_duckdb(con, sql: str, runs: int, timeout: float) -> dict:
    """Warm-up plus `runs` timed runs in DuckDB; interrupted after `timeout`
    seconds per run.  DuckDB's answers are not compared (its types differ)."""
    times = []

    def once():
        timer = threading.Timer(timeout, con.interrupt)
        timer.start()
        try:
            start = time.perf_counter()
            rows = con.execute(sql).fetchall()
            return time.perf_counter() - start, rows
        finally:
            timer.cancel()

    try:
        _, rows = once()
        nrows = len(normalize_rows(rows, True))
        for _ in range(runs):
            times.append(once()[0])
    except Exception as e:  # duckdb has its own exception tree
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        status = TIMEOUT if "interrupt" in msg.lower() else ERROR
        return outcome(status, error=msg)
    return outcome(OK, times, rows=nrows)


def load_tables(pg: Pg, cfg: Config, side: str, schema: str, tables: dict, keys: dict,
                data: str) -> tuple:
    """Create and COPY every table of a benchmark schema from data/<table>.csv
    (with a header), then add the primary keys and VACUUM ANALYZE; returns
    (load outcome, index outcome)."""
    am = access_method(cfg, side)
    per_table = {}
    pg.checkpoint()
    with pg.no_timeout():
        lsn = pg.wal_lsn()
        start = time.perf_counter()
        for table, cols in tables.items():
            pg.execute(f"CREATE TABLE {schema}.{table} ({cols}) USING {am}")
            t0 = time.perf_counter()
            pg.copy_in(f"{schema}.{table}", os.path.join(data, f"{table}.csv"), "FORMAT csv, HEADER")
            per_table[table] = round(time.perf_counter() - t0, 6)
        seconds = time.perf_counter() - start
        wal = pg.wal_since(lsn)
    loaded = outcome(OK, [seconds], wal_bytes=wal, tables=per_table)

    # the primary keys, after the load
    try:
        with pg.no_timeout():
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            for table, key in keys.items():
                pg.execute(f"ALTER TABLE {schema}.{table} ADD PRIMARY KEY ({key})")
            key_outcome = outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn))
    except psycopg.Error as e:
        pg.recover()
        key_outcome = failure(e)
    with pg.no_timeout():
        start = time.perf_counter()
        for table in tables:
            pg.execute(f"VACUUM ANALYZE {schema}.{table}")
        loaded["vacuum_analyze_seconds"] = round(time.perf_counter() - start, 6)
    return loaded, key_outcome


def run_tables_workload(pg: Pg, cfg: Config, res: dict, label: str, schemas: dict, tables: dict,
                        keys: dict, keys_sql: str, queries: dict, data: str) -> dict:
    """A workload of several tables loaded from CSV (TPC-H, SSB): load and
    index each side, sizes, DuckDB on the same files, then every wanted
    query compared with heap; the schemas are dropped at the end."""
    reset_schemas(pg, schemas)
    try:
        key_op = {"name": "primary_keys", "sql": keys_sql}
        for side in SIDES:
            progress(f"  loading {label} into {side}")
            res["load"][side], key_op[side] = load_tables(pg, cfg, side, schemas[side], tables, keys,
                                                          data)
            if key_op[side]["status"] != OK:
                progress(f"    primary keys on {side}: {key_op[side]['status']}: {key_op[side].get('error')}")
            names = [f"{schemas[side]}.{t}" for t in tables]
            res["sizes"][side] = dict(pg.sizes(names), **storage_facts(pg, cfg, side, names))
        res["groups"].append(group("index build", "write", [key_op]))

        duck = duckdb_connect(cfg)
        if duck is not None:
            progress("  loading duckdb")
            start = time.perf_counter()
            for table, cols in tables.items():
                duck.execute(f"CREATE TABLE {table} ({cols})")
                duck.execute(f"COPY {table} FROM '{os.path.join(data, table + '.csv')}' (FORMAT csv, HEADER)")
            res["load"]["duckdb"] = outcome(OK, [time.perf_counter() - start])

        items = []
        for name, sql in queries.items():
            if wanted(cfg, name):
                items.append(compare_query(pg, cfg, name, sql, schemas, duck=duck))
        res["groups"].append(group("queries", "query", items))
        if duck is not None:
            duck.close()
    finally:
        drop_schemas(pg, cfg, schemas)
    return res
