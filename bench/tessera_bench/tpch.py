"""The TPC-H workload: tpchgen-cli data, COPY into tpch_heap and
tpch_tessera, the standard primary keys, the 22 queries on both sides with
their answers compared."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import psycopg

from . import tpch_queries
from .common import (SIDES, Config, access_method, compare_query, drop_schemas, duckdb_connect,
                     ensure_extension, group, reset_schemas, storage_facts, wanted)
from .pg import OK, Pg, failure, outcome, progress

SCHEMAS = {"heap": "tpch_heap", "tessera": "tpch_tessera"}


def data_dir(cfg: Config) -> str:
    """CSV files of scale factor cfg.sf, generated once and cached."""
    d = os.path.join(cfg.data_dir, f"tpch-sf{cfg.sf:g}")
    if all(os.path.exists(os.path.join(d, f"{t}.csv")) for t in tpch_queries.TABLES):
        return d
    tool = shutil.which("tpchgen-cli")
    if tool is None:
        raise RuntimeError("tpchgen-cli is not installed (run bench/setup.sh)")
    tmp = d + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    progress(f"  generating TPC-H SF {cfg.sf:g} into {d}")
    subprocess.run([tool, "csv", "-s", f"{cfg.sf:g}", f"--output-dir={tmp}"], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    return d


def load(pg: Pg, cfg: Config, side: str, data: str) -> tuple:
    """Create and COPY every table; returns (load outcome, index outcome)."""
    s = SCHEMAS[side]
    am = access_method(cfg, side)
    per_table = {}
    pg.checkpoint()
    with pg.no_timeout():
        lsn = pg.wal_lsn()
        start = time.perf_counter()
        for table, cols in tpch_queries.TABLES.items():
            pg.execute(f"CREATE TABLE {s}.{table} ({cols}) USING {am}")
            t0 = time.perf_counter()
            pg.copy_in(f"{s}.{table}", os.path.join(data, f"{table}.csv"), "FORMAT csv, HEADER")
            per_table[table] = round(time.perf_counter() - t0, 6)
        seconds = time.perf_counter() - start
        wal = pg.wal_since(lsn)
    loaded = outcome(OK, [seconds], wal_bytes=wal, tables=per_table)

    # the standard primary keys, after the load
    try:
        with pg.no_timeout():
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            for table, key in tpch_queries.PRIMARY_KEYS.items():
                pg.execute(f"ALTER TABLE {s}.{table} ADD PRIMARY KEY ({key})")
            keys = outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn))
    except psycopg.Error as e:
        pg.recover()
        keys = failure(e)
    with pg.no_timeout():
        for table in tpch_queries.TABLES:
            pg.execute(f"VACUUM ANALYZE {s}.{table}")
    return loaded, keys


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    data = data_dir(cfg)
    res = {"title": f"TPC-H, scale factor {cfg.sf:g}", "params": {"sf": cfg.sf},
           "notes": ["Data from tpchgen-cli (CSV), loaded with COPY; the load time covers all eight tables. "
                     "Primary keys are added after the load (index build). "
                     "Queries use the specification's validation parameters; answers are compared "
                     "in order where the query has ORDER BY, else as multisets."],
           "load": {}, "sizes": {}, "groups": []}
    reset_schemas(pg, SCHEMAS)
    try:
        keys = {"name": "primary_keys", "sql": "ALTER TABLE ... ADD PRIMARY KEY (standard keys)"}
        for side in SIDES:
            progress(f"  loading TPC-H SF {cfg.sf:g} into {side}")
            res["load"][side], keys[side] = load(pg, cfg, side, data)
            if keys[side]["status"] != OK:
                progress(f"    primary keys on {side}: {keys[side]['status']}: {keys[side].get('error')}")
            tables = [f"{SCHEMAS[side]}.{t}" for t in tpch_queries.TABLES]
            res["sizes"][side] = dict(pg.sizes(tables), **storage_facts(pg, cfg, side, tables))
        res["groups"].append(group("index build", "write", [keys]))

        duck = duckdb_connect(cfg)
        if duck is not None:
            progress("  loading duckdb")
            start = time.perf_counter()
            for table, cols in tpch_queries.TABLES.items():
                duck.execute(f"CREATE TABLE {table} ({cols})")
                duck.execute(f"COPY {table} FROM '{os.path.join(data, table + '.csv')}' (FORMAT csv, HEADER)")
            res["load"]["duckdb"] = outcome(OK, [time.perf_counter() - start])

        items = []
        for name, sql in tpch_queries.queries(cfg.sf).items():
            if wanted(cfg, name):
                items.append(compare_query(pg, cfg, name, sql, SCHEMAS, duck=duck))
        res["groups"].append(group("queries", "query", items))
        if duck is not None:
            duck.close()
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
