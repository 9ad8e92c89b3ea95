"""OLTP: pgbench with custom scripts against the seed table with a primary
key on c1: point SELECT, single-row UPDATE, INSERT, DELETE+INSERT; TPS and
average latency per side and client count."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time

import psycopg

from .common import (SIDES, Config, access_method, drop_schemas, ensure_extension, group, reset_schemas,
                     storage_facts, wanted)
from .pg import ERROR, OK, UNSUPPORTED, Pg, failure, outcome, progress
from .seed import COLUMNS, INSERT

def _find_pgbench() -> str:
    """$PGBENCH, else the pgbench of the PostgreSQL whose bin directory is on
    PATH (scripts/common.sh puts the version under test there), else that
    of TESSERA_PG's version (15 by default)."""
    if os.environ.get("PGBENCH"):
        return os.environ["PGBENCH"]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d.startswith("/usr/lib/postgresql/") and os.access(os.path.join(d, "pgbench"), os.X_OK):
            return os.path.join(d, "pgbench")
    return f"/usr/lib/postgresql/{os.environ.get('TESSERA_PG', '15')}/bin/pgbench"


PGBENCH = _find_pgbench()
SCHEMAS = {"heap": "bench_oltp_heap", "tessera": "bench_oltp_tessera"}

# name -> (script, client counts)
SCRIPTS = {
    "point_select": ("\\set id random(1, :rows)\n"
                     "SELECT * FROM t WHERE c1 = :id;\n", (1, 2, 4)),
    "update": ("\\set id random(1, :rows)\n"
               "UPDATE t SET c3 = c3 + 1 WHERE c1 = :id;\n", (1, 4)),
    "insert": ("INSERT INTO t VALUES (nextval('t_ins'), 'inserted', 1, 1.5, timestamp '2024-01-01');\n", (1, 4)),
    "delete_insert": ("\\set id random(1, :rows)\n"
                      "BEGIN;\n"
                      "DELETE FROM t WHERE c1 = :id;\n"
                      "INSERT INTO t VALUES (nextval('t_ins'), 'replaced', 1, 1.5, timestamp '2024-01-01');\n"
                      "END;\n", (1, 4)),
}


def parse_pgbench(text: str) -> dict:
    """TPS, average latency, processed and failed transactions of pgbench's
    report; {} when it printed none."""
    found = {}
    for key, pattern, conv in (("tps", r"tps = ([0-9.]+) \(without initial connection time\)", float),
                               ("latency_ms", r"latency average = ([0-9.]+) ms", float),
                               ("transactions", r"number of transactions actually processed: (\d+)", int),
                               ("failed", r"number of failed transactions: (\d+)", int)):
        m = re.search(pattern, text)
        if m:
            found[key] = conv(m.group(1))
    return found


def pgbench_error(text: str) -> str:
    for line in text.splitlines():
        if "ERROR:" in line:
            return line.split("ERROR:", 1)[1].strip()
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "pgbench failed"


def run_pgbench(cfg: Config, side: str, script: str, clients: int) -> dict:
    """One pgbench run; a failure on the tessera side counts as unsupported."""
    with tempfile.NamedTemporaryFile("w", prefix="tessera-bench-", suffix=".sql", delete=False) as f:
        f.write(script)
        path = f.name
    cmd = [PGBENCH, "-n", "-M", "prepared", "-f", path, "-c", str(clients), "-j", str(clients),
           "-T", str(cfg.pgbench_seconds), "-D", f"rows={cfg.rows}", cfg.dsn]
    env = dict(os.environ, PGOPTIONS=f"-c search_path={SCHEMAS[side]}")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=cfg.pgbench_seconds + 300)
        text = p.stdout + p.stderr
        rc = p.returncode
    except subprocess.TimeoutExpired:
        text, rc = "pgbench did not finish", -1
    finally:
        os.unlink(path)
    figures = parse_pgbench(text)
    if rc != 0 or "tps" not in figures:
        status = UNSUPPORTED if side == "tessera" else ERROR
        return outcome(status, error=pgbench_error(text))
    return outcome(OK, **figures)


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    n = cfg.rows
    res = {"title": f"OLTP (pgbench), {n:,} rows", "params": {"rows": n, "seconds": cfg.pgbench_seconds},
           "notes": [f"pgbench -M prepared -T {cfg.pgbench_seconds} with -c clients and -j clients per test, "
                     "against the seed table with a primary key on c1; ids drawn uniformly from 1..rows. "
                     "The tests run in the order shown on the same tables (updates, inserts and deletes "
                     "accumulate); a CHECKPOINT precedes each. speedup = tessera TPS / heap TPS.",
                     "A pgbench failure on the tessera side is reported as unsupported with its error."],
           "groups": [], "load": {}}
    reset_schemas(pg, SCHEMAS)
    try:
        key_item = {"name": "primary_key", "sql": "ALTER TABLE t ADD PRIMARY KEY (c1)"}
        for side in SIDES:
            s = SCHEMAS[side]
            progress(f"  loading {n:,} rows into {side} for pgbench")
            pg.execute(f"CREATE TABLE {s}.t {COLUMNS} USING {access_method(cfg, side)}")
            with pg.no_timeout():
                start = time.perf_counter()
                pg.execute(INSERT.format(t=f"{s}.t", lo=1, hi=n))
                res["load"][side] = outcome(OK, [time.perf_counter() - start])
                try:
                    start = time.perf_counter()
                    pg.execute(f"ALTER TABLE {s}.t ADD PRIMARY KEY (c1)")
                    key_item[side] = outcome(OK, [time.perf_counter() - start])
                except psycopg.Error as e:
                    pg.recover()
                    key_item[side] = failure(e)
                    progress(f"    primary key on {side}: {key_item[side]['status']}: {key_item[side]['error']}")
                pg.execute(f"CREATE SEQUENCE {s}.t_ins START {n + 1}")
                pg.execute(f"VACUUM ANALYZE {s}.t")
        res["groups"].append(group("index build", "write", [key_item]))

        items = []
        for name, (script, default_clients) in SCRIPTS.items():
            if not wanted(cfg, name):
                continue
            clients = [c for c in default_clients if cfg.pgbench_clients is None or c in cfg.pgbench_clients]
            for c in clients:
                item = {"name": f"{name}_c{c}", "script": name, "clients": c}
                for side in SIDES:
                    progress(f"  pgbench {name} -c {c} -T {cfg.pgbench_seconds} on {side}")
                    pg.checkpoint()
                    item[side] = run_pgbench(cfg, side, script, c)
                    if item[side]["status"] != OK:
                        progress(f"    {side}: {item[side]['status']}: {item[side]['error']}")
                items.append(item)
        res["groups"].append(group("pgbench", "pgbench", items))
        res["sizes"] = {side: dict(pg.sizes([f"{SCHEMAS[side]}.t"]),
                                   **storage_facts(pg, cfg, side, [f"{SCHEMAS[side]}.t"])) for side in SIDES}
        res["sizes_note"] = "the table after the pgbench runs, primary key included"
    finally:
        drop_schemas(pg, cfg, SCHEMAS)
    return res
