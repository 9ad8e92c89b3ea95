"""DML: bulk UPDATE and DELETE of 1M rows (10% of --rows when that is
less), VACUUM, TRUNCATE; time, WAL bytes and size after each, committed,
one after another on one table per side; contents compared after each."""

from __future__ import annotations

import psycopg

from .common import (SIDES, Config, access_method, drop_schemas, ensure_extension, group, reset_schemas,
                     wanted)
from .pg import OK, Pg, failure, progress, time_statement
from .seed import COLUMNS, INSERT

SCHEMAS = {"heap": "bench_dml_heap", "tessera": "bench_dml_tessera"}


def affected_rows(rows: int) -> int:
    return max(1, min(1_000_000, rows // 10))


def operations(rows: int) -> list:
    m = affected_rows(rows)
    return [
        ("update", f"UPDATE t SET c3 = c3 + 1, c2 = 'updated' WHERE c1 <= {m}"),
        ("delete", f"DELETE FROM t WHERE c1 > {rows - m}"),
        ("vacuum", "VACUUM t"),
        ("truncate", "TRUNCATE t"),
    ]


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    m = affected_rows(n)
    res = {"title": f"DML on {n:,} rows: UPDATE and DELETE of {m:,} rows, VACUUM, TRUNCATE",
           "params": {"rows": n, "affected_rows": m},
           "notes": ["The operations run in the order shown, each committed, on one table per side "
                     "without indexes (loaded with INSERT ... SELECT and VACUUM ANALYZE, untimed). "
                     "WAL bytes are the pg_current_wal_insert_lsn difference around each statement; "
                     "the tables' contents are compared after each write (count and hash of every row), "
                     "until a write fails on one side (its table is then left as it was)."],
           "groups": [], "load": {}}
    reset_schemas(pg, SCHEMAS)
    try:
        for side in SIDES:
            s = SCHEMAS[side]
            progress(f"  loading {n:,} rows into {side}")
            pg.execute(f"CREATE TABLE {s}.t {COLUMNS} USING {access_method(cfg, side)}")
            with pg.no_timeout():
                res["load"][side] = time_statement(pg, INSERT.format(t=f"{s}.t", lo=1, hi=n))
                pg.execute(f"VACUUM ANALYZE {s}.t")
            res["load"][side]["bytes_after"] = pg.total_size(f"{s}.t")
        items = []
        diverged = False   # a failed write leaves that side's table unchanged
        for name, sql in operations(n):
            if not wanted(cfg, name):
                continue
            item = {"name": name, "sql": sql}
            sums = {}
            for side in SIDES:
                s = SCHEMAS[side]
                progress(f"  {name} on {side}")
                pg.checkpoint()
                pg.set_search_path(s)
                item[side] = time_statement(pg, sql)
                pg.set_search_path(None)
                if item[side]["status"] != OK:
                    diverged = True
                    progress(f"    {side}: {item[side]['status']}: {item[side]['error']}")
                    continue
                try:
                    item[side]["bytes_after"] = pg.total_size(f"{s}.t")
                    sums[side] = pg.checksum(f"{s}.t")
                except psycopg.Error as e:
                    pg.recover()
                    item[side] = failure(e)
            item["match"] = sums["heap"] == sums["tessera"] if len(sums) == 2 and not diverged else None
            items.append(item)
        res["groups"].append(group("operations", "write", items))
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
