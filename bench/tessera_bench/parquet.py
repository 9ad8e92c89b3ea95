"""Parquet in and out: TPC-H lineitem (tpchgen-cli, --sf) exported with
COPY ... TO 'f.parquet' and imported with COPY ... FROM 'f.parquet', heap
and tessera side by side and DuckDB doing the same with its own COPY; COPY
from CSV beside them as the reference load.  TPC-H Q1 and Q6 read straight
from the Parquet file, by tessera's foreign data wrapper and by DuckDB.  Needs the server on this
machine (the files are the server's)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time

import psycopg

from . import tpch, tpch_queries
from .common import (SIDES, Config, access_method, drop_schemas, duckdb_connect, ensure_extension, group,
                     reset_schemas)
from .pg import OK, Pg, failure, outcome, progress

SCHEMAS = {"heap": "bench_parquet_heap", "tessera": "bench_parquet_tessera"}

DUCK_TYPES = re.sub(r"\bchar\(", "varchar(", tpch_queries.TABLES["lineitem"].replace("numeric", "decimal"))

Q1 = """SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
       sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
       avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
FROM read_parquet('{f}') WHERE l_shipdate <= date '1998-12-01' - interval '90' day
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"""
Q6 = """SELECT sum(l_extendedprice * l_discount) FROM read_parquet('{f}')
WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"""


def _timed(fn, runs: int, setup=None) -> list:
    times = []
    for _ in range(runs):
        if setup:
            setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _pg_side(pg: Pg, cfg: Config, side: str, csv: str, out: str, items: dict) -> None:
    table = f"{SCHEMAS[side]}.lineitem"
    am = access_method(cfg, side)
    path = os.path.join(out, f"{side}.parquet")
    try:
        with pg.no_timeout():
            pg.execute(f"CREATE TABLE {table} ({tpch_queries.TABLES['lineitem']}) USING {am}")

            def empty():
                pg.execute(f"TRUNCATE {table}")
                pg.checkpoint()
            progress(f"  COPY FROM CSV into {side}")
            items["copy_csv"][side] = outcome(OK, _timed(
                lambda: pg.execute(f"COPY {table} FROM '{csv}' (FORMAT csv, HEADER)"), cfg.runs, empty))
            rows = pg.scalar(f"SELECT count(*) FROM {table}")

            progress(f"  COPY TO Parquet from {side}")
            items["export"][side] = outcome(OK, _timed(
                lambda: pg.execute(f"COPY {table} TO '{path}' (FORMAT parquet)"), cfg.runs),
                rowcount=rows, file_bytes=os.path.getsize(path))

            if side == "tessera":
                _fdw_queries(pg, path, items)
            progress(f"  COPY FROM Parquet into {side}")
            items["import"][side] = outcome(OK, _timed(
                lambda: pg.execute(f"COPY {table} FROM '{os.path.join(out, 'tessera.parquet')}'"),
                cfg.runs, empty),
                                            rowcount=pg.scalar(f"SELECT count(*) FROM {table}"))
    except psycopg.Error as e:
        pg.recover()
        for it in items.values():
            it.setdefault(side, failure(e))


def _fdw_queries(pg: Pg, path: str, items: dict) -> None:
    """Q1 and Q6 on the file tessera wrote, through the foreign data wrapper."""
    if not pg.scalar("SELECT count(*) FROM pg_foreign_data_wrapper WHERE fdwname = 'tessera_parquet'"):
        pg.execute("CREATE FOREIGN DATA WRAPPER tessera_parquet HANDLER tessera.parquet_fdw_handler "
                   "VALIDATOR tessera.parquet_fdw_validator")
    pg.execute("CREATE SERVER IF NOT EXISTS bench_parquet_files FOREIGN DATA WRAPPER tessera_parquet")
    pg.execute(f"CREATE FOREIGN TABLE {SCHEMAS['tessera']}.lineitem_file ({tpch_queries.TABLES['lineitem']}) "
               f"SERVER bench_parquet_files OPTIONS (filename '{path}')")
    for name, sql in (("q01_on_file", Q1), ("q06_on_file", Q6)):
        q = sql.replace("read_parquet('{f}')", f"{SCHEMAS['tessera']}.lineitem_file")
        progress(f"  {name} through tessera_parquet")
        answer = pg.fetch(q)
        items[name]["tessera"] = outcome(OK, _timed(lambda: pg.fetch(q), 3))
        # the file's answer is the table's it was written from
        items[name]["match"] = answer == pg.fetch(sql.replace("read_parquet('{f}')",
                                                              f"{SCHEMAS['tessera']}.lineitem"))


def _duck_side(cfg: Config, csv: str, out: str, items: dict) -> None:
    if duckdb_connect(cfg) is None:
        return
    import duckdb
    # a database file, checkpointed after each load: durable, as the tables
    con = duckdb.connect(os.path.join(out, "bench.duckdb"))
    if cfg.duckdb_threads:
        con.execute(f"SET threads = {int(cfg.duckdb_threads)}")
    path = os.path.join(out, "duckdb.parquet")
    try:

        def empty():
            con.execute(f"DROP TABLE IF EXISTS lineitem; CREATE TABLE lineitem ({DUCK_TYPES}); CHECKPOINT")
        progress("  DuckDB: CSV, export, import, Q1/Q6 on the file")
        items["copy_csv"]["duckdb"] = outcome(OK, _timed(
            lambda: con.execute(f"COPY lineitem FROM '{csv}' (HEADER); CHECKPOINT"), cfg.runs, empty))
        items["export"]["duckdb"] = outcome(OK, _timed(  # the table the last CSV load left
            lambda: con.execute(f"COPY lineitem TO '{path}' (FORMAT parquet)"), cfg.runs),
            file_bytes=os.path.getsize(path))

        items["import"]["duckdb"] = outcome(OK, _timed(
            lambda: con.execute(f"COPY lineitem FROM '{os.path.join(out, 'tessera.parquet')}' (FORMAT parquet); "
                                "CHECKPOINT"),
            cfg.runs, empty))
        for name, sql in (("q01_on_file", Q1), ("q06_on_file", Q6)):
            q = sql.format(f=os.path.join(out, "tessera.parquet"))
            con.execute(q).fetchall()
            items[name]["duckdb"] = outcome(OK, _timed(lambda: con.execute(q).fetchall(), cfg.runs))
    except Exception as e:  # duckdb has its own exception tree
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        for it in items.values():
            it.setdefault("duckdb", outcome("error", error=msg))
    finally:
        con.close()


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    csv = os.path.join(tpch.data_dir(cfg), "lineitem.csv")
    res = {"title": f"Parquet: TPC-H SF {cfg.sf:g} lineitem to and from Parquet files",
           "params": {"sf": cfg.sf},
           "notes": ["copy_csv: COPY lineitem FROM the CSV file (the reference load); export: COPY lineitem TO "
                     "'f.parquet' (snappy, the default of tessera and DuckDB); import: COPY lineitem FROM the "
                     "file tessera wrote, into an empty table without indexes (checkpoint before each). "
                     "DuckDB: the same COPY statements into and out of a table of a database file, "
                     "with CHECKPOINT after each load (durable, as the PostgreSQL tables). "
                     "q01_on_file / q06_on_file: TPC-H Q1 and Q6 reading the Parquet file in place: "
                     "tessera through its foreign data wrapper tessera_parquet (TesseraAgg over the "
                     "file's column vectors, in parallel), DuckDB with read_parquet(). "
                     "Best of --runs; match = both sides moved as many rows (q01/q06: the file's "
                     "answer equals the tessera table's it was written from)."],
           "groups": []}
    items = {k: {"name": k} for k in ("copy_csv", "export", "import", "q01_on_file", "q06_on_file")}
    items["copy_csv"]["sql"] = "COPY lineitem FROM 'lineitem.csv' (FORMAT csv, HEADER)"
    items["export"]["sql"] = "COPY lineitem TO 'f.parquet' (FORMAT parquet)"
    items["import"]["sql"] = "COPY lineitem FROM 'f.parquet'"
    out = tempfile.mkdtemp(prefix="tessera-bench-parquet-")
    os.chmod(out, 0o777)
    reset_schemas(pg, SCHEMAS)
    try:
        # tessera's side first: the import reads the file it exported
        for side in reversed(SIDES):
            _pg_side(pg, cfg, side, csv, out, items)
        _duck_side(cfg, csv, out, items)
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
        pg.execute("DROP SERVER IF EXISTS bench_parquet_files CASCADE")
        shutil.rmtree(out, ignore_errors=True)
    for it in items.values():
        h, t = it.get("heap", {}), it.get("tessera", {})
        if h.get("rowcount") is not None and OK == h.get("status") == t.get("status"):
            it["match"] = h.get("rowcount") == t.get("rowcount")
    res["groups"].append(group("lineitem to and from Parquet", "query", list(items.values())))
    return res
