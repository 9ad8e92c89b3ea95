"""Small commits: 10,000 transactions of 10 rows each (--small-txns), the
time and size that leaves, the size after VACUUM, a scan of the result, and
the same rows bulk-loaded in one statement for reference."""

from __future__ import annotations

import time

import psycopg

from .common import (SIDES, Config, access_method, compare_query, drop_schemas, ensure_extension, group,
                     reset_schemas, storage_facts, wanted)
from .pg import OK, Pg, failure, outcome, progress, time_statement
from .seed import COLUMNS, INSERT

SCHEMAS = {"heap": "bench_small_heap", "tessera": "bench_small_tessera"}
ROWS_PER_TXN = 10


CATALOG = "tessera_internal.stripe"


def _catalog_size(pg: Pg) -> int:
    """Bytes of tessera's stripe catalog, where small writes keep their rows
    until compaction (0 without the extension)."""
    if pg.scalar("SELECT to_regclass(%s) IS NULL", (CATALOG,)):
        return 0
    return pg.total_size(CATALOG)


MIX_QUERIES = {
    "count": "SELECT count(*) FROM mix",
    "sum_c1": "SELECT sum(c1) FROM mix",
    "group_c3": "SELECT c3, count(*), avg(c4) FROM mix GROUP BY c3",
    "range_c1": "SELECT count(*), sum(c3) FROM mix WHERE c1 BETWEEN {lo} AND {hi}",
}


def _mix(pg: Pg, cfg: Config, res: dict, txns: int) -> None:
    """Analytics on a table that is 99% bulk-loaded stripes and 1% rows of
    small commits not compacted yet (background compaction off in this
    session), then the same queries after tessera.compact()."""
    delta_rows = txns * ROWS_PER_TXN
    base = 99 * delta_rows
    lo, hi = base // 10, base // 10 + base // 100
    for side in SIDES:
        s = SCHEMAS[side]
        am = access_method(cfg, side)
        pg.execute(f"CREATE TABLE {s}.mix {COLUMNS} USING {am}")
        progress(f"  mix: {base:,} rows bulk-loaded and {txns:,} commits of {ROWS_PER_TXN} rows into {side}")
        with pg.no_timeout():
            pg.execute(INSERT.format(t=f"{s}.mix", lo=1, hi=base))
            pg.execute("SET tessera.autocompact_stripes = 0")
            for k in range(txns):
                pg.execute(INSERT.format(t=f"{s}.mix", lo=base + k * ROWS_PER_TXN + 1,
                                         hi=base + (k + 1) * ROWS_PER_TXN))
            pg.execute("RESET tessera.autocompact_stripes")
            pg.execute(f"ANALYZE {s}.mix")
    fresh, compacted = [], []
    for name, sql in MIX_QUERIES.items():
        if wanted(cfg, f"mix_{name}"):
            fresh.append(compare_query(pg, cfg, f"mix_{name}", sql.format(lo=lo, hi=hi), SCHEMAS))
    if access_method(cfg, "tessera") == "tessera":
        with pg.no_timeout():
            pg.execute(f"SELECT tessera.compact('{SCHEMAS['tessera']}.mix')")
    for name, sql in MIX_QUERIES.items():
        if wanted(cfg, f"mix_{name}"):
            compacted.append(compare_query(pg, cfg, f"mix_{name}_compacted", sql.format(lo=lo, hi=hi), SCHEMAS))
    # another 1% in small commits, background compaction on (the default)
    for side in SIDES:
        s = SCHEMAS[side]
        progress(f"  mix: {txns:,} more commits of {ROWS_PER_TXN} rows into {side}, background compaction on")
        with pg.no_timeout():
            for k in range(txns):
                lo2 = base + delta_rows + k * ROWS_PER_TXN + 1
                pg.execute(INSERT.format(t=f"{s}.mix", lo=lo2, hi=lo2 + ROWS_PER_TXN - 1))
    if access_method(cfg, "tessera") == "tessera":
        for _ in range(600):
            if not pg.scalar("SELECT count(*) FROM tessera.compactions"):
                break
            time.sleep(0.1)
    auto = []
    for name, sql in MIX_QUERIES.items():
        if wanted(cfg, f"mix_{name}"):
            auto.append(compare_query(pg, cfg, f"mix_{name}_auto", sql.format(lo=lo, hi=hi), SCHEMAS))
    res["groups"].append(group("fresh delta", "query", fresh))
    res["groups"].append(group("after compaction", "query", compacted))
    res["groups"].append(group("fresh delta, background compaction", "query", auto))
    res["notes"].append(f"fresh delta / after compaction: a table of {base:,} bulk-loaded rows plus "
                        f"{delta_rows:,} rows (1%) from {txns:,} commits of {ROWS_PER_TXN} rows, queried "
                        "before and after tessera.compact(); background compaction is off while loading. "
                        "Heap runs the same queries on the same rows both times. Then another "
                        f"{txns:,} commits with background compaction on (tessera.autocompact_stripes at "
                        "its default), queried once the workers are done (the *_auto rows).")


def _live_catalog(pg: Pg, am: str, table: str) -> int:
    """Bytes of the table's live rows in the stripe catalog (tessera only)."""
    if am != "tessera":
        return 0
    return int(pg.scalar("SELECT tessera.catalog_bytes(%s::regclass)", (table,)))


def _commits(pg: Pg, table: str, txns: int, catalog_base: int) -> dict:
    try:
        with pg.no_timeout():
            lsn = pg.wal_lsn()
            start = time.perf_counter()
            for k in range(txns):
                pg.execute(INSERT.format(t=table, lo=k * ROWS_PER_TXN + 1, hi=(k + 1) * ROWS_PER_TXN))
            seconds = time.perf_counter() - start
            return outcome(OK, [seconds], wal_bytes=pg.wal_since(lsn),
                           bytes_after=pg.total_size(table) + _catalog_size(pg) - catalog_base)
    except psycopg.Error as e:
        pg.recover()
        return failure(e)


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    txns = cfg.small_txns
    rows = txns * ROWS_PER_TXN
    res = {"title": f"small commits: {txns:,} transactions of {ROWS_PER_TXN} rows",
           "params": {"transactions": txns, "rows_per_transaction": ROWS_PER_TXN},
           "notes": [f"Each transaction is one INSERT ... SELECT of {ROWS_PER_TXN} seed rows, committed "
                     "(autocommit), one after another on one connection. Then VACUUM, a scan, and for "
                     f"reference the same {rows:,} rows loaded by one INSERT into another table.",
                     "Sizes after the commits count the table and what the stripe catalog "
                     f"({CATALOG}, packed by VACUUM FULL before) grew by: tessera keeps small writes "
                     "there (its delta) until VACUUM compacts them into stripes. Sizes after VACUUM "
                     "count the table and its live catalog rows (tessera.catalog_bytes); the catalog "
                     "space the delta took is free for reuse once the catalog is vacuumed."],
           "groups": []}
    reset_schemas(pg, SCHEMAS)
    try:
        ops = {"commits": {"name": "commits", "sql": f"{txns} x INSERT of {ROWS_PER_TXN} rows"},
               "vacuum": {"name": "vacuum", "sql": "VACUUM t"},
               "bulk_load": {"name": "bulk_load", "sql": f"INSERT of {rows} rows in one statement"}}
        sums = {}
        for side in SIDES:
            s = SCHEMAS[side]
            am = access_method(cfg, side)
            pg.execute(f"CREATE TABLE {s}.t {COLUMNS} USING {am}")
            pg.execute(f"CREATE TABLE {s}.bulk {COLUMNS} USING {am}")
            # the catalog packed, so that its growth is what these commits take
            if _catalog_size(pg):
                pg.execute(f"VACUUM FULL {CATALOG}")
            catalog_base = _catalog_size(pg)
            pg.checkpoint()
            progress(f"  {txns:,} transactions of {ROWS_PER_TXN} rows into {side}")
            ops["commits"][side] = _commits(pg, f"{s}.t", txns, catalog_base)
            ops["vacuum"][side] = time_statement(pg, f"VACUUM {s}.t")
            if ops["vacuum"][side]["status"] == OK:
                ops["vacuum"][side]["bytes_after"] = pg.total_size(f"{s}.t") + _live_catalog(pg, am, f"{s}.t")
            sums[side] = pg.checksum(f"{s}.t")
            progress(f"  bulk load of {rows:,} rows into {side}")
            with pg.no_timeout():
                ops["bulk_load"][side] = time_statement(pg, INSERT.format(t=f"{s}.bulk", lo=1, hi=rows))
            if ops["bulk_load"][side]["status"] == OK:
                ops["bulk_load"][side]["bytes_after"] = pg.total_size(f"{s}.bulk")
        ops["commits"]["match"] = sums["heap"] == sums["tessera"]
        res["groups"].append(group("writes", "write", list(ops.values())))
        res["sizes"] = {side: dict(pg.sizes([f"{SCHEMAS[side]}.t"]),
                                   **storage_facts(pg, cfg, side, [f"{SCHEMAS[side]}.t"])) for side in SIDES}
        res["sizes_note"] = "the table after the small commits and VACUUM"
        if wanted(cfg, "scan"):
            with pg.no_timeout():
                for side in SIDES:
                    pg.execute(f"ANALYZE {SCHEMAS[side]}.t")
            q = compare_query(pg, cfg, "scan", "SELECT count(*), sum(c1), avg(c4), max(c5) FROM t", SCHEMAS)
            res["groups"].append(group("queries", "query", [q]))
        if any(wanted(cfg, f"mix_{name}") for name in MIX_QUERIES):
            _mix(pg, cfg, res, txns)
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
