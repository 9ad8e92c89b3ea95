"""Logical decoding: WAL bytes of loads at wal_level = logical (the seed
rows by INSERT ... SELECT, the realistic rows by COPY, --rows of each), and
how fast test_decoding turns the changes of a load, an UPDATE and a DELETE
into its output (changes per second, 1M rows or --rows when that is
less).  Needs a server at wal_level = logical; elsewhere it reports why
and measures nothing."""

from __future__ import annotations

import time

import psycopg

from .common import SIDES, Config, access_method, drop_schemas, ensure_extension, group, reset_schemas
from .pg import OK, Pg, failure, outcome, progress
from . import realistic, seed

SCHEMAS = {"heap": "bench_logical_heap", "tessera": "bench_logical_tessera"}
SLOT = "bench_logical"


def decoded_rows(rows: int) -> int:
    return max(1, min(1_000_000, rows))


def _drop_slot(pg: Pg) -> None:
    pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
               "WHERE slot_name = %s", (SLOT,))


def _load(pg: Pg, table: str, kind: str, lo: int, hi: int, path: str) -> None:
    if kind == "seed":
        pg.execute(seed.INSERT.format(t=table, lo=lo, hi=hi))
    else:
        pg.copy_in(table, path, "FORMAT csv")


def _load_wal(pg: Pg, cfg: Config, kind: str, n: int, path: str) -> dict:
    """The load of n rows on each side: time and WAL bytes."""
    item = {"name": f"load_{kind}", "sql": ("INSERT ... SELECT" if kind == "seed" else "COPY") + f" of {n:,} rows"}
    for side in SIDES:
        table = f"{SCHEMAS[side]}.{kind}"
        cols = seed.COLUMNS if kind == "seed" else realistic.COLUMNS
        pg.execute(f"DROP TABLE IF EXISTS {table}")
        pg.execute(f"CREATE TABLE {table} {cols} USING {access_method(cfg, side)}")
        pg.checkpoint()
        progress(f"  {kind} load of {n:,} rows into {side}")
        try:
            with pg.no_timeout():
                lsn = pg.wal_lsn()
                start = time.perf_counter()
                _load(pg, table, kind, 1, n, path)
                item[side] = outcome(OK, [time.perf_counter() - start], wal_bytes=pg.wal_since(lsn),
                                     bytes_after=pg.total_size(table))
        except psycopg.Error as e:
            pg.recover()
            item[side] = failure(e)
        pg.execute(f"DROP TABLE IF EXISTS {table}")
    return item


def _decode(pg: Pg) -> tuple:
    """Seconds test_decoding takes for what the slot holds, and the rows."""
    start = time.perf_counter()
    # skip-empty-xacts: tessera's background compaction commits transactions
    # whose only changes are to its catalog, which decoding leaves out
    changes = pg.scalar("SELECT count(*) FROM pg_logical_slot_get_changes(%s, NULL, NULL, "
                        "'skip-empty-xacts', '1')", (SLOT,))
    return time.perf_counter() - start, int(changes)


def _decoding(pg: Pg, cfg: Config, kind: str, m: int, path: str) -> list:
    """Decode a load of m rows, then an UPDATE and a DELETE of a tenth."""
    ops = [("decode_load_" + kind, None),
           ("decode_update_" + kind, "UPDATE {t} SET {c} = {c} WHERE {k} % 10 = 0"),
           ("decode_delete_" + kind, "DELETE FROM {t} WHERE {k} % 10 = 1")]
    items = [{"name": name, "sql": sql or f"load of {m:,} rows"} for name, sql in ops]
    col, key = ("c3", "c1") if kind == "seed" else ("user_id", "id")
    for side in SIDES:
        table = f"{SCHEMAS[side]}.d_{kind}"
        cols = seed.COLUMNS if kind == "seed" else realistic.COLUMNS
        pg.execute(f"CREATE TABLE {table} {cols} USING {access_method(cfg, side)}")
        pg.execute(f"ALTER TABLE {table} REPLICA IDENTITY FULL")
        _drop_slot(pg)
        pg.execute("SELECT pg_create_logical_replication_slot(%s, 'test_decoding')", (SLOT,))
        try:
            for item, (name, sql) in zip(items, ops):
                progress(f"  {name} on {side}")
                with pg.no_timeout():
                    if sql is None:
                        _load(pg, table, kind, 1, m, path)
                    else:
                        pg.execute(sql.format(t=table, c=col, k=key))
                    seconds, changes = _decode(pg)
                item[side] = outcome(OK, [seconds], rowcount=changes,
                                     changes_per_second=round(changes / seconds) if seconds > 0 else None)
        except psycopg.Error as e:
            pg.recover()
            for item in items:
                item.setdefault(side, failure(e))
        finally:
            _drop_slot(pg)
            pg.execute(f"DROP TABLE IF EXISTS {table}")
    for item in items:
        h, t = item.get("heap", {}), item.get("tessera", {})
        item["match"] = (h.get("rowcount") == t.get("rowcount")) if OK == h.get("status") == t.get("status") else None
    return items


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    m = decoded_rows(n)
    res = {"title": f"logical decoding: loads of {n:,} rows at wal_level = logical, test_decoding of {m:,}",
           "params": {"rows": n, "decoded_rows": m},
           "notes": ["load_*: the seed rows by INSERT ... SELECT and the realistic rows by COPY from CSV "
                     "into a table without indexes; WAL bytes are the pg_current_wal_insert_lsn difference. "
                     "decode_*: a test_decoding slot, then a load of the rows (REPLICA IDENTITY FULL), an "
                     "UPDATE of a tenth and a DELETE of a tenth, each committed and then decoded by "
                     "`SELECT count(*) FROM pg_logical_slot_get_changes(..., 'skip-empty-xacts', '1')`; the time is the decoding's, "
                     "the row count the changes' (BEGIN and COMMIT included); match = both sides decoded as "
                     "many changes."],
           "groups": []}
    level = pg.scalar("SHOW wal_level")
    if level != "logical":
        res["notes"].append(f"Not measured: the server runs at wal_level = {level}; logical decoding needs "
                            "logical.")
        return res
    reset_schemas(pg, SCHEMAS)
    try:
        path = realistic.data_file(pg, cfg, n)
        res["groups"].append(group("loads at wal_level = logical", "write",
                                   [_load_wal(pg, cfg, kind, n, path) for kind in ("seed", "realistic")]))
        small = realistic.data_file(pg, cfg, m)
        items = []
        for kind in ("seed", "realistic"):
            items += _decoding(pg, cfg, kind, m, small)
        res["groups"].append(group("test_decoding", "write", items))
    finally:
        _drop_slot(pg)
        drop_schemas(pg, cfg, SCHEMAS)
    return res
