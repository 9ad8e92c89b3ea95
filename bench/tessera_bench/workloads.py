"""The workloads: seed, tpch, small, oltp, dml.

Each returns a dict that goes into results.json under its name; the report
and the text summary are built from those dicts only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

from . import tpch
from .core import (STATUS_OK, PgSide, Timing, answers_match, classify_error,
                   progress, time_duckdb_query, time_pg_query)

PGBIN = "/usr/lib/postgresql/15/bin"
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
    small_txns: int = 10_000
    query: Optional[str] = None
    data_dir: str = ""


def _am(cfg: Config, side: str) -> str:
    return "heap" if side == "heap" else cfg.tessera_am


def _want(cfg: Config, name: str) -> bool:
    return cfg.query is None or cfg.query == name


def _duckdb(cfg: Config):
    if not cfg.use_duckdb:
        return None
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return None
    import duckdb
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 2")
    return con


def ensure_extension(pg: PgSide, cfg: Config) -> None:
    if cfg.tessera_am == "tessera":
        pg.execute("CREATE EXTENSION IF NOT EXISTS tessera")


def reset_schema(pg: PgSide, schema: str) -> None:
    pg.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    pg.execute(f"CREATE SCHEMA {schema}")


def rel_sizes(pg: PgSide, qualified: list) -> dict:
    rel = total = 0
    for t in qualified:
        rel += pg.scalar("SELECT pg_relation_size(%s::regclass)", (t,))
        total += pg.scalar("SELECT pg_total_relation_size(%s::regclass)", (t,))
    return {"relation_bytes": rel, "total_bytes": total}


def wal_lsn(pg: PgSide) -> str:
    return pg.scalar("SELECT pg_current_wal_insert_lsn()::text")


def wal_diff(pg: PgSide, a: str, b: str) -> int:
    return int(pg.scalar("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (b, a)))


def compare_query(pg: PgSide, cfg: Config, name: str, sql: str, schemas: dict,
                  stream: bool = False, duck=None, duck_sql: Optional[str] = None) -> dict:
    """Run one query on every side, compare the answers."""
    entry = {"name": name, "sql": " ".join(sql.split())}
    answers = {}
    for side in SIDES:
        pg.execute(f"SET search_path = {schemas[side]}, public")
        progress(f"  {name} on {side}")
        t, ans = time_pg_query(pg, sql, cfg.runs, stream=stream)
        entry[side] = t.to_json()
        answers[side] = ans
    pg.execute("RESET search_path")
    entry["match"] = answers_match(answers["heap"], answers["tessera"])
    if duck is not None:
        progress(f"  {name} on duckdb")
        t, _ = time_duckdb_query(duck, duck_sql or sql, cfg.runs)
        entry["duckdb"] = t.to_json()
    return entry


# ------------------------------------------------------------------ seed

SEED_INSERT = ("INSERT INTO {t} SELECT i, 'single-value', i % 1000, (i % 100000)::numeric / 7, "
               "timestamp '2024-01-01' + i * interval '1 second' FROM generate_series({lo}, {hi}) i")
SEED_COLUMNS = "(c1 int, c2 text, c3 int, c4 numeric, c5 timestamp)"

SEED_QUERIES = [
    ("select_c2", "SELECT c2 FROM t", True),
    ("count_c1", "SELECT count(c1) FROM t", False),
    ("count_c2", "SELECT count(c2) FROM t", False),
    ("sum_c1", "SELECT sum(c1) FROM t", False),
    ("group_c3", "SELECT c3, count(*), avg(c4) FROM t GROUP BY c3", False),
    ("range_c1", "SELECT count(*) FROM t WHERE c1 BETWEEN 1000000 AND 1100000", False),
    ("self_join", "SELECT count(*) FROM t a JOIN t b ON a.c1 = b.c1 WHERE a.c3 < 10", False),
    ("filter_c3", "SELECT * FROM t WHERE c3 = 7", True),
]

SWEEP = [("zstd-1", "zstd", 1), ("zstd-3", "zstd", 3), ("zstd-19", "zstd", 19),
         ("lz4", "lz4", None), ("pglz", "pglz", None), ("none", "none", None)]


def load_seed(pg: PgSide, cfg: Config, schemas: dict, rows: int) -> dict:
    out = {}
    for side in SIDES:
        s = schemas[side]
        pg.execute(f"CREATE TABLE {s}.t {SEED_COLUMNS} USING {_am(cfg, side)}")
        pg.execute("CHECKPOINT")
        progress(f"  loading {rows} rows into {side}")
        lsn = wal_lsn(pg)
        start = time.perf_counter()
        pg.set_timeout(0)
        pg.execute(SEED_INSERT.format(t=f"{s}.t", lo=1, hi=rows))
        elapsed = time.perf_counter() - start
        wal = wal_diff(pg, lsn, wal_lsn(pg))
        pg.set_timeout(cfg.timeout)
        pg.execute(f"VACUUM ANALYZE {s}.t")
        out[side] = {"seconds": elapsed, "wal_bytes": wal}
    return out


def seed(pg: PgSide, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    schemas = {"heap": "bench_heap", "tessera": "bench_tessera"}
    for s in schemas.values():
        reset_schema(pg, s)
    res = {"rows": cfg.rows, "load": load_seed(pg, cfg, schemas, cfg.rows)}
    res["sizes"] = {side: rel_sizes(pg, [f"{schemas[side]}.t"]) for side in SIDES}

    duck = _duckdb(cfg)
    if duck is not None:
        progress("  loading duckdb")
        start = time.perf_counter()
        duck.execute(f"""CREATE TABLE t AS SELECT i::INTEGER AS c1, 'single-value' AS c2,
                         (i % 1000)::INTEGER AS c3, (i % 100000)::DECIMAL(18,3) / 7 AS c4,
                         TIMESTAMP '2024-01-01' + i * INTERVAL 1 SECOND AS c5
                         FROM range(1, {cfg.rows} + 1) r(i)""")
        res["load"]["duckdb"] = {"seconds": time.perf_counter() - start}

    res["queries"] = []
    for name, sql, stream in SEED_QUERIES:
        if not _want(cfg, name):
            continue
        duck_sql = sql if not stream else f"SELECT count(*) FROM ({sql}) x"
        res["queries"].append(compare_query(pg, cfg, name, sql, schemas, stream, duck, duck_sql))

    if cfg.sweep and cfg.tessera_am == "tessera" and cfg.query is None:
        res["sweep"] = []
        for label, codec, level in SWEEP:
            opts = f"tessera_compression = '{codec}'" + (f", tessera_compression_level = {level}" if level else "")
            t = f"bench_tessera.sweep_{label.replace('-', '_')}"
            progress(f"  compression sweep {label} ({cfg.sweep_rows} rows)")
            pg.execute(f"CREATE TABLE {t} {SEED_COLUMNS} USING tessera WITH ({opts})")
            pg.set_timeout(0)
            start = time.perf_counter()
            pg.execute(SEED_INSERT.format(t=t, lo=1, hi=cfg.sweep_rows))
            elapsed = time.perf_counter() - start
            pg.set_timeout(cfg.timeout)
            res["sweep"].append({"codec": label, "rows": cfg.sweep_rows, "seconds": elapsed,
                                 "bytes": pg.scalar("SELECT pg_relation_size(%s::regclass)", (t,))})
            pg.execute(f"DROP TABLE {t}")
    return res


# ------------------------------------------------------------------ TPC-H

def tpch_data(cfg: Config) -> str:
    d = os.path.join(cfg.data_dir, f"tpch-sf{cfg.sf:g}")
    if os.path.exists(os.path.join(d, "lineitem.csv")):
        return d
    tool = shutil.which("tpchgen-cli")
    if tool is None:
        raise RuntimeError("tpchgen-cli is not installed (run bench/setup.sh)")
    os.makedirs(d, exist_ok=True)
    progress(f"  generating TPC-H SF {cfg.sf:g} into {d}")
    subprocess.run([tool, "csv", "-s", f"{cfg.sf:g}", f"--output-dir={d}"], check=True,
                   stdout=subprocess.DEVNULL)
    return d


def tpch_workload(pg: PgSide, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    data = tpch_data(cfg)
    schemas = {"heap": "tpch_heap", "tessera": "tpch_tessera"}
    res = {"sf": cfg.sf, "load": {}, "keys": {}, "sizes": {}}
    pg.set_timeout(0)
    for side in SIDES:
        s = schemas[side]
        reset_schema(pg, s)
        pg.execute("CHECKPOINT")
        progress(f"  loading TPC-H into {side}")
        start = time.perf_counter()
        for table, cols in tpch.TABLES.items():
            pg.execute(f"CREATE TABLE {s}.{table} ({cols}) USING {_am(cfg, side)}")
            with pg.conn.cursor() as cur:
                with cur.copy(f"COPY {s}.{table} FROM STDIN WITH (FORMAT csv, HEADER)") as copy:
                    with open(os.path.join(data, f"{table}.csv"), "rb") as f:
                        while block := f.read(1 << 20):
                            copy.write(block)
        res["load"][side] = {"seconds": time.perf_counter() - start}
        start = time.perf_counter()
        try:
            for table, key in tpch.PRIMARY_KEYS.items():
                pg.execute(f"ALTER TABLE {s}.{table} ADD PRIMARY KEY ({key})")
            res["keys"][side] = {"status": STATUS_OK, "seconds": time.perf_counter() - start}
        except Exception as e:
            status, msg = classify_error(e)
            res["keys"][side] = {"status": status, "error": msg}
        pg.execute(f"VACUUM ANALYZE")
        res["sizes"][side] = rel_sizes(pg, [f"{s}.{t}" for t in tpch.TABLES])
    pg.set_timeout(cfg.timeout)

    duck = _duckdb(cfg)
    if duck is not None:
        progress("  loading duckdb")
        start = time.perf_counter()
        for table in tpch.TABLES:
            duck.execute(f"CREATE TABLE {table} AS SELECT * FROM read_csv_auto('{data}/{table}.csv', header=true)")
        res["load"]["duckdb"] = {"seconds": time.perf_counter() - start}

    res["queries"] = []
    for name, sql in tpch.QUERIES.items():
        if _want(cfg, name):
            res["queries"].append(compare_query(pg, cfg, name, sql, schemas, False, duck))
    return res


# ------------------------------------------------------------------ small commits

def small_commits(pg: PgSide, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    schemas = {"heap": "small_heap", "tessera": "small_tessera"}
    txns = cfg.small_txns
    res = {"transactions": txns, "rows_per_transaction": 10}
    for side in SIDES:
        s = schemas[side]
        reset_schema(pg, s)
        pg.execute(f"CREATE TABLE {s}.t {SEED_COLUMNS} USING {_am(cfg, side)}")
        pg.execute(f"CREATE TABLE {s}.bulk {SEED_COLUMNS} USING {_am(cfg, side)}")
        pg.execute("CHECKPOINT")
        progress(f"  {txns} transactions of 10 rows into {side}")
        lsn = wal_lsn(pg)
        start = time.perf_counter()
        for k in range(txns):
            pg.execute(SEED_INSERT.format(t=f"{s}.t", lo=k * 10 + 1, hi=k * 10 + 10))
        elapsed = time.perf_counter() - start
        wal = wal_diff(pg, lsn, wal_lsn(pg))
        size_before = pg.scalar(f"SELECT pg_total_relation_size('{s}.t')")
        pg.execute(f"VACUUM {s}.t")
        size_after = pg.scalar(f"SELECT pg_total_relation_size('{s}.t')")
        pg.execute(SEED_INSERT.format(t=f"{s}.bulk", lo=1, hi=txns * 10))
        bulk = pg.scalar(f"SELECT pg_total_relation_size('{s}.bulk')")
        count = pg.scalar(f"SELECT count(*) FROM {s}.t")
        res[side] = {"seconds": elapsed, "wal_bytes": wal, "bytes": size_before,
                     "bytes_after_vacuum": size_after, "bulk_bytes": bulk, "rows": count}
    res["match"] = res["heap"]["rows"] == res["tessera"]["rows"]
    return res


# ------------------------------------------------------------------ OLTP (pgbench)

PGBENCH_SCRIPTS = {
    "point_select": "\\set id random(1, :rows)\nSELECT * FROM t WHERE c1 = :id;\n",
    "update": "\\set id random(1, :rows)\nUPDATE t SET c3 = c3 + 1 WHERE c1 = :id;\n",
    "insert": ("INSERT INTO t SELECT nextval('t_ins'), 'inserted', 1, 1.5, "
               "timestamp '2024-01-01';\n"),
    "delete_insert": ("\\set id random(1, :rows)\nBEGIN;\nDELETE FROM t WHERE c1 = :id;\n"
                      "INSERT INTO t SELECT nextval('t_ins'), 'replaced', 1, 1.5, timestamp '2024-01-01';\nEND;\n"),
}
PGBENCH_CLIENTS = {"point_select": (1, 2, 4), "update": (1, 4), "insert": (1, 4), "delete_insert": (1, 4)}


def _pgbench_conn_args(dsn: str) -> list:
    args = []
    for part in dsn.split():
        if "=" not in part:
            continue
        k, v = part.split("=", 1)
        flag = {"host": "-h", "port": "-p", "user": "-U"}.get(k)
        if flag:
            args += [flag, v]
        elif k == "dbname":
            args += [v]
    return args


def run_pgbench(cfg: Config, script: str, schema: str, clients: int, rows: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        path = f.name
    conn = _pgbench_conn_args(cfg.dsn)
    cmd = [os.path.join(PGBIN, "pgbench"), "-n", "-M", "prepared", "-f", path, "-c", str(clients),
           "-j", str(clients), "-T", str(cfg.pgbench_seconds), "-D", f"rows={rows}"] + conn
    env = dict(os.environ, PGOPTIONS=f"-c search_path={schema}")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=cfg.pgbench_seconds + 120)
    finally:
        os.unlink(path)
    out = p.stdout + p.stderr
    tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    lat = re.search(r"latency average = ([0-9.]+) ms", out)
    failed = re.search(r"number of failed transactions: (\d+)", out)
    if p.returncode != 0 or tps is None:
        err = [l for l in out.splitlines() if "ERROR" in l or "error" in l]
        status = "unsupported" if any("not supported" in l for l in err) else "error"
        return {"status": status, "error": (err[0] if err else out.strip()[-200:])}
    return {"status": STATUS_OK, "tps": float(tps.group(1)),
            "latency_ms": float(lat.group(1)) if lat else None,
            "failed": int(failed.group(1)) if failed else 0}


def oltp(pg: PgSide, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    schemas = {"heap": "oltp_heap", "tessera": "oltp_tessera"}
    rows = cfg.rows
    res = {"rows": rows, "seconds": cfg.pgbench_seconds, "setup": {}, "tests": []}
    pg.set_timeout(0)
    for side in SIDES:
        s = schemas[side]
        reset_schema(pg, s)
        pg.execute(f"CREATE TABLE {s}.t {SEED_COLUMNS} USING {_am(cfg, side)}")
        progress(f"  loading {rows} rows into {side} for pgbench")
        pg.execute(SEED_INSERT.format(t=f"{s}.t", lo=1, hi=rows))
        start = time.perf_counter()
        try:
            pg.execute(f"ALTER TABLE {s}.t ADD PRIMARY KEY (c1)")
            res["setup"][side] = {"status": STATUS_OK, "index_seconds": time.perf_counter() - start}
        except Exception as e:
            status, msg = classify_error(e)
            res["setup"][side] = {"status": status, "error": msg}
        pg.execute(f"CREATE SEQUENCE {s}.t_ins START {rows + 1}")
        pg.execute(f"VACUUM ANALYZE {s}.t")
    pg.set_timeout(cfg.timeout)
    for name, script in PGBENCH_SCRIPTS.items():
        if not _want(cfg, name):
            continue
        for clients in PGBENCH_CLIENTS[name]:
            entry = {"name": f"{name}_c{clients}", "script": name, "clients": clients}
            for side in SIDES:
                progress(f"  pgbench {name} -c {clients} on {side}")
                pg.execute("CHECKPOINT")
                entry[side] = run_pgbench(cfg, script, schemas[side], clients, rows)
            res["tests"].append(entry)
    return res


# ------------------------------------------------------------------ DML

def _timed_write(pg: PgSide, cfg: Config, sql: str, runs: int) -> dict:
    """Run a write in transactions that are rolled back: time and WAL bytes."""
    t = Timing()
    wal = []
    for _ in range(runs):
        try:
            pg.execute("BEGIN")
            lsn = wal_lsn(pg)
            start = time.perf_counter()
            pg.execute(sql)
            t.runs.append(time.perf_counter() - start)
            wal.append(wal_diff(pg, lsn, wal_lsn(pg)))
            pg.execute("ROLLBACK")
        except Exception as e:
            t.status, t.error = classify_error(e)
            try:
                pg.execute("ROLLBACK")
            except Exception:
                pass
            break
    if wal:
        t.extra["wal_bytes"] = min(wal)
    return t.to_json()


def dml(pg: PgSide, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    schemas = {"heap": "dml_heap", "tessera": "dml_tessera"}
    n = cfg.rows
    tenth = max(n // 10, 1)
    res = {"rows": n, "setup": {}, "ops": [],
           "method": "Each write runs in a transaction that is rolled back; time and WAL bytes "
                     "(pg_current_wal_insert_lsn difference) are the best of the runs. "
                     "TRUNCATE and delete-half-then-VACUUM run on fresh copies."}
    pg.set_timeout(0)
    for side in SIDES:
        s = schemas[side]
        reset_schema(pg, s)
        pg.execute(f"CREATE TABLE {s}.t {SEED_COLUMNS} USING {_am(cfg, side)}")
        progress(f"  loading {n} rows into {side}")
        pg.execute(SEED_INSERT.format(t=f"{s}.t", lo=1, hi=n))
        start = time.perf_counter()
        try:
            pg.execute(f"ALTER TABLE {s}.t ADD PRIMARY KEY (c1)")
            res["setup"][side] = {"status": STATUS_OK, "index_seconds": time.perf_counter() - start}
        except Exception as e:
            status, msg = classify_error(e)
            res["setup"][side] = {"status": status, "error": msg}
        pg.execute(f"CREATE TABLE {s}.src AS SELECT (i * 7) % {n} + 1 AS c1 FROM generate_series(1, 10000) i "
                   f"UNION ALL SELECT {n} + i FROM generate_series(1, 10000) i")
        pg.execute(f"VACUUM ANALYZE {s}.t")
        pg.execute(f"ANALYZE {s}.src")
    pg.set_timeout(cfg.timeout)

    ops = [
        ("update_10pct", f"UPDATE t SET c3 = c3 + 1 WHERE c1 <= {tenth}"),
        ("delete_10pct", f"DELETE FROM t WHERE c1 > {n - tenth}"),
        ("merge_10k_10k", "MERGE INTO t USING src ON t.c1 = src.c1 "
                          "WHEN MATCHED THEN UPDATE SET c3 = t.c3 + 1 "
                          "WHEN NOT MATCHED THEN INSERT VALUES (src.c1, 'merged', 0, 0, timestamp '2024-01-01')"),
    ]
    for name, sql in ops:
        if not _want(cfg, name):
            continue
        entry = {"name": name, "sql": sql}
        for side in SIDES:
            pg.execute(f"SET search_path = {schemas[side]}")
            progress(f"  {name} on {side}")
            entry[side] = _timed_write(pg, cfg, sql, cfg.runs)
        pg.execute("RESET search_path")
        res["ops"].append(entry)

    # destructive ones on copies
    for name in ("truncate", "delete_half_vacuum"):
        if not _want(cfg, name):
            continue
        entry = {"name": name}
        for side in SIDES:
            s = schemas[side]
            pg.set_timeout(0)
            pg.execute(f"DROP TABLE IF EXISTS {s}.c")
            pg.execute(f"CREATE TABLE {s}.c {SEED_COLUMNS} USING {_am(cfg, side)}")
            pg.execute(SEED_INSERT.format(t=f"{s}.c", lo=1, hi=n))
            progress(f"  {name} on {side}")
            try:
                if name == "truncate":
                    start = time.perf_counter()
                    pg.execute(f"TRUNCATE {s}.c")
                    elapsed = time.perf_counter() - start
                    entry[side] = {"status": STATUS_OK, "runs": [elapsed], "best": elapsed}
                else:
                    before = pg.scalar(f"SELECT pg_total_relation_size('{s}.c')")
                    start = time.perf_counter()
                    pg.execute(f"DELETE FROM {s}.c WHERE c1 % 2 = 0")
                    pg.execute(f"VACUUM {s}.c")
                    elapsed = time.perf_counter() - start
                    after = pg.scalar(f"SELECT pg_total_relation_size('{s}.c')")
                    entry[side] = {"status": STATUS_OK, "runs": [elapsed], "best": elapsed, "bytes_before": before,
                                   "bytes_after": after, "ratio": after / before if before else None}
            except Exception as e:
                status, msg = classify_error(e)
                entry[side] = {"status": status, "error": msg}
            pg.execute(f"DROP TABLE IF EXISTS {s}.c")
            pg.set_timeout(cfg.timeout)
        res["ops"].append(entry)
    return res


WORKLOADS = {"seed": seed, "tpch": tpch_workload, "small": small_commits, "oltp": oltp, "dml": dml}
