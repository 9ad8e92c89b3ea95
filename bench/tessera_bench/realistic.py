"""The realistic workload (issue 17): a table of irregular values -- random
integers and amounts, 50 category words, md5 text, random timestamps --
loaded with COPY from CSV; its load, sizes, point lookups by a btree index
(pgbench), a 1% range, a sum by category, a distinct count and a top-10.

Unlike the seed table (a constant, a modulus and a counter, which compress
683x), nothing here is a run or a steady step, so every chunk is as hard to
encode and to read as ordinary data makes it."""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
import time

import psycopg

from .common import (SIDES, Config, access_method, compare_query, drop_schemas, duckdb_connect,
                     ensure_extension, group, reset_schemas, storage_facts, wanted)
from .oltp import PGBENCH, parse_pgbench, pgbench_error
from .pg import ERROR, OK, UNSUPPORTED, Pg, failure, outcome, progress

SCHEMAS = {"heap": "bench_real_heap", "tessera": "bench_real_tessera"}
COLUMNS = "(id bigint, user_id int, amount numeric(12,2), category text, note text, ts timestamptz)"


def words() -> list:
    """The 50 category words: fixed, random-looking, 4 to 12 letters."""
    rng = random.Random(42)
    return ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 12)))
            for _ in range(50)]


def generator_sql(rows: int) -> str:
    """The rows, deterministic after setseed(0.42) in a serial plan."""
    arr = "ARRAY[" + ",".join(f"'{w}'" for w in words()) + "]"
    return (f"SELECT i, (1 + floor(random() * 1000000))::int, round((random() * 10000)::numeric, 2), "
            f"({arr})[1 + floor(random() * 50)::int], md5(random()::text), "
            f"timestamptz '2024-01-01 00:00:00+00' + random() * interval '366 days' "
            f"FROM generate_series(1, {rows}) i")


def data_file(pg: Pg, cfg: Config, rows: int) -> str:
    """The CSV file of `rows` rows, generated once by the server and cached."""
    path = os.path.join(cfg.data_dir, f"realistic-{rows}.csv")
    if os.path.exists(path):
        return path
    os.makedirs(cfg.data_dir, exist_ok=True)
    progress(f"  generating {rows:,} realistic rows into {path}")
    tmp = path + ".partial"
    pg.execute("SET max_parallel_workers_per_gather = 0")
    pg.execute("SET TimeZone = 'UTC'")
    pg.execute("SELECT setseed(0.42)")
    with pg.no_timeout(), open(tmp, "wb") as f, pg.conn.cursor() as cur:
        with cur.copy(f"COPY ({generator_sql(rows)}) TO STDOUT (FORMAT csv)") as copy:
            for block in copy:
                f.write(block)
    pg.execute("RESET max_parallel_workers_per_gather")
    pg.execute("RESET TimeZone")
    os.rename(tmp, path)
    return path


def queries(rows: int) -> list:
    """(name, sql)."""
    lo = rows // 2
    hi = lo + rows // 100 - 1
    return [
        ("range_1pct", f"SELECT count(*), sum(amount), max(note) FROM t WHERE id BETWEEN {lo} AND {hi}"),
        ("sum_by_category", "SELECT category, sum(amount), count(*) FROM t GROUP BY category ORDER BY category"),
        ("distinct_users", "SELECT count(DISTINCT user_id) FROM t"),
        ("top_users", "SELECT user_id, count(*), sum(amount) FROM t GROUP BY user_id "
                      "ORDER BY count(*) DESC, user_id LIMIT 10"),
        # a join whose inner side the planner probes by the primary key
        ("probe_join", "SELECT count(*), sum(length(t.note)), sum(t.amount) FROM probe JOIN t USING (id)"),
    ]


PROBES = 20_000

# pgbench rounds per side, alternating heap and tessera: a single round of a
# few seconds on a small, shared machine moved heap's rate by 10-20% from one
# round to the next (75k-91k TPS); each side reports its median round
POINT_ROUNDS = 3


POINT_LOOKUP = "\\set id random(1, :rows)\nSELECT * FROM t WHERE id = :id;\n"


def point_lookups(cfg: Config, side: str, rows: int, clients: int) -> dict:
    """pgbench -M prepared: SELECT * by the primary key, ids uniform."""
    with tempfile.NamedTemporaryFile("w", prefix="tessera-bench-", suffix=".sql", delete=False) as f:
        f.write(POINT_LOOKUP)
        path = f.name
    cmd = [PGBENCH, "-n", "-M", "prepared", "-f", path, "-c", str(clients), "-j", str(clients),
           "-T", str(cfg.pgbench_seconds), "-D", f"rows={rows}", cfg.dsn]
    env = dict(os.environ, PGOPTIONS=f"-c search_path={SCHEMAS[side]}")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=cfg.pgbench_seconds + 300)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        text, rc = "pgbench did not finish", -1
    finally:
        os.unlink(path)
    figures = parse_pgbench(text)
    if rc != 0 or "tps" not in figures:
        return outcome(UNSUPPORTED if side == "tessera" else ERROR, error=pgbench_error(text))
    return outcome(OK, **figures)


def median_round(rounds: list) -> dict:
    """The round with the median TPS among those that ran, with every such
    round's TPS in tps_rounds; the last round if none ran."""
    ran = sorted((r for r in rounds if r["status"] == OK), key=lambda r: r["tps"])
    if not ran:
        return rounds[-1]
    return dict(ran[(len(ran) - 1) // 2], tps_rounds=[r["tps"] for r in rounds if r["status"] == OK])


def load(pg: Pg, cfg: Config, side: str, path: str, rows: int) -> tuple:
    """CREATE TABLE + timed COPY; then the primary key (timed) and VACUUM ANALYZE."""
    table = f"{SCHEMAS[side]}.t"
    pg.execute(f"CREATE TABLE {table} {COLUMNS} USING {access_method(cfg, side)}")
    pg.checkpoint()
    with pg.no_timeout():
        lsn = pg.wal_lsn()
        start = time.perf_counter()
        pg.copy_in(table, path, "FORMAT csv")
        seconds = time.perf_counter() - start
        loaded = outcome(OK, [seconds], wal_bytes=pg.wal_since(lsn))
        try:
            start = time.perf_counter()
            pg.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")
            key = outcome(OK, [time.perf_counter() - start])
        except psycopg.Error as e:
            pg.recover()
            key = failure(e)
        start = time.perf_counter()
        pg.execute(f"VACUUM ANALYZE {table}")
        loaded["vacuum_analyze_seconds"] = round(time.perf_counter() - start, 6)
    # the same random ids on both sides, in random order (a heap table)
    probe = f"{SCHEMAS[side]}.probe"
    pg.execute("SELECT setseed(0.17)")
    pg.execute(f"CREATE TABLE {probe} USING heap AS SELECT (1 + floor(random() * {rows}))::bigint AS id "
               f"FROM generate_series(1, {PROBES})")
    pg.execute(f"ANALYZE {probe}")
    return loaded, key


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    res = {"title": f"realistic table, {n:,} rows", "params": {"rows": n},
           "notes": ["`" + COLUMNS + "`: id 1..N, user_id uniform in 1..1e6, amount "
                     "round(random()*10000, 2), category one of 50 fixed random words, note "
                     "md5(random()::text), ts uniform in 2024; setseed(0.42). Loaded with COPY from "
                     "CSV (the load time); primary key on id after the load. probe_join joins "
                     f"{PROBES:,} random ids (a heap table, setseed(0.17)) with t.",
                     f"Point lookups: pgbench -M prepared, `SELECT * FROM t WHERE id = :id`, ids uniform, "
                     f"-T {cfg.pgbench_seconds}, {POINT_ROUNDS} rounds per side alternating heap and "
                     "tessera after a warm-up round on each; each side's figures are its median round "
                     "(all rounds' TPS in tps_rounds); speedup = tessera TPS / heap TPS."],
           "load": {}, "sizes": {}, "groups": []}
    path = data_file(pg, cfg, n)
    reset_schemas(pg, SCHEMAS)
    try:
        key_item = {"name": "primary_key", "sql": "ALTER TABLE t ADD PRIMARY KEY (id)"}
        for side in SIDES:
            progress(f"  loading {n:,} realistic rows into {side}")
            res["load"][side], key_item[side] = load(pg, cfg, side, path, n)
            tables = [f"{SCHEMAS[side]}.t"]
            res["sizes"][side] = dict(pg.sizes(tables), **storage_facts(pg, cfg, side, tables))
        res["groups"].append(group("index build", "write", [key_item]))

        duck = duckdb_connect(cfg)
        if duck is not None:
            progress("  loading duckdb")
            start = time.perf_counter()
            duck.execute("CREATE TABLE t (id bigint, user_id int, amount decimal(12,2), category text, "
                          "note text, ts timestamptz)")
            duck.execute(f"COPY t FROM '{path}' (FORMAT csv, HEADER false)")
            ids = [r[0] for r in pg.fetch(f"SELECT id FROM {SCHEMAS['heap']}.probe")]
            duck.execute("CREATE TABLE probe AS SELECT unnest(?::BIGINT[]) AS id", [ids])
            res["load"]["duckdb"] = outcome(OK, [time.perf_counter() - start])

        items = []
        for name, sql in queries(n):
            if wanted(cfg, name):
                items.append(compare_query(pg, cfg, name, sql, SCHEMAS, duck=duck))
        res["groups"].append(group("queries", "query", items))
        if duck is not None:
            duck.close()

        if wanted(cfg, "point_lookup"):
            item = {"name": "point_lookup_c2", "script": "point_lookup", "clients": 2}
            for side in SIDES:
                progress(f"  pgbench point lookups -c 2 -T {cfg.pgbench_seconds} on {side} (warm-up)")
                point_lookups(cfg, side, n, 2)
            rounds = {side: [] for side in SIDES}
            for r in range(POINT_ROUNDS):
                for side in SIDES:
                    progress(f"  pgbench point lookups -c 2 -T {cfg.pgbench_seconds} on {side} "
                             f"(round {r + 1} of {POINT_ROUNDS})")
                    rounds[side].append(point_lookups(cfg, side, n, 2))
            for side in SIDES:
                item[side] = median_round(rounds[side])
                if item[side]["status"] != OK:
                    progress(f"    {side}: {item[side]['status']}: {item[side]['error']}")
            res["groups"].append(group("pgbench", "pgbench", [item]))
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
