"""PostgreSQL access for the workloads: a connection with a statement
timeout, timing of queries and writes, WAL and size probes, and the
classification of errors into the statuses the reports show."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Optional

import psycopg

from .answers import StreamDigest, normalize_rows, ordered_query

OK = "ok"
TIMEOUT = "timeout"
UNSUPPORTED = "unsupported"
ERROR = "error"


def progress(msg: str) -> None:
    """One progress line on stderr."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def classify_error(e: BaseException) -> tuple:
    """(status, one-line message) for an exception raised by a statement."""
    text = str(e).strip()
    msg = text.splitlines()[0] if text else type(e).__name__
    if isinstance(e, psycopg.errors.QueryCanceled):
        return TIMEOUT, msg
    if isinstance(e, psycopg.errors.FeatureNotSupported):
        return UNSUPPORTED, msg
    return ERROR, msg


def outcome(status: str = OK, runs: Optional[list] = None, error: Optional[str] = None, **extra) -> dict:
    """The JSON record of one measurement on one side."""
    d: dict = {"status": status}
    if runs:
        d["runs"] = [round(r, 6) for r in runs]
        d["best"] = round(min(runs), 6)
        d["median"] = round(statistics.median(runs), 6)
    if error:
        d["error"] = error
    d.update({k: v for k, v in extra.items() if v is not None})
    return d


def failure(e: BaseException, **extra) -> dict:
    status, msg = classify_error(e)
    return outcome(status, error=msg, **extra)


class Pg:
    """One autocommit connection; every statement runs under
    statement_timeout = `timeout_s` unless wrapped in `no_timeout()`."""

    def __init__(self, dsn: str, timeout_s: float):
        self.dsn = dsn
        self.timeout_s = timeout_s
        self.search_path: Optional[str] = None
        self.psql = shutil.which("psql")
        self.conn = psycopg.connect(dsn, autocommit=True)
        self._apply_timeout(timeout_s)

    # -- plumbing
    def _apply_timeout(self, seconds: float) -> None:
        self.conn.execute(f"SET statement_timeout = {int(seconds * 1000)}")

    def no_timeout(self):
        pg = self

        class _NoTimeout:
            def __enter__(self):
                pg._apply_timeout(0)

            def __exit__(self, *exc):
                if not pg.conn.closed and pg.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                    pg._apply_timeout(pg.timeout_s)
                return False

        return _NoTimeout()

    def close(self) -> None:
        if not self.conn.closed:
            self.conn.close()

    def fresh_session(self) -> None:
        """A new server session (same settings): what one side's queries
        leave in a backend must not tax the other's.  A costly heap plan
        loads the JIT library into the backend, and PostgreSQL then loads it
        into every later parallel worker of that session, ~15 ms each."""
        self.close()
        self.conn = psycopg.connect(self.dsn, autocommit=True)
        self._apply_timeout(self.timeout_s)
        if self.search_path:
            self.set_search_path(self.search_path)

    def recover(self) -> None:
        """After an error: leave any failed transaction, or reconnect."""
        try:
            if self.conn.closed or self.conn.broken:
                raise psycopg.OperationalError("connection lost")
            if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self.conn.execute("ROLLBACK")
            self._apply_timeout(self.timeout_s)
        except psycopg.Error:
            self.close()
            # the server may be restarting after a crash: retry for a while
            for attempt in range(30):
                try:
                    self.conn = psycopg.connect(self.dsn, autocommit=True)
                    self._apply_timeout(self.timeout_s)
                    return
                except psycopg.OperationalError:
                    if attempt == 29:
                        raise
                    progress("  reconnecting to the server ...")
                    time.sleep(2)

    # -- statements
    def execute(self, sql: str, params=None) -> int:
        """Run a statement; returns its row count."""
        cur = self.conn.execute(sql, params)
        return cur.rowcount

    def scalar(self, sql: str, params=None) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    def fetch(self, sql: str, params=None) -> list:
        return self.conn.execute(sql, params).fetchall()

    def stream(self, sql: str, digest: Optional[StreamDigest] = None) -> int:
        """COPY (query) TO STDOUT: rows are read and dropped (client memory
        stays small), or fed to `digest`.  Returns the bytes received."""
        n = 0
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY ({sql}) TO STDOUT") as copy:
                for block in copy:
                    n += len(block)
                    if digest is not None:
                        digest.add_block(block)
        return n

    def copy_in(self, table: str, path: str, options: str) -> None:
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} FROM STDIN WITH ({options})") as copy:
                with open(path, "rb") as f:
                    while block := f.read(1 << 20):
                        copy.write(block)

    def set_search_path(self, schema: Optional[str]) -> None:
        if schema:
            self.conn.execute(f"SET search_path = {schema}, public")
        else:
            self.conn.execute("RESET search_path")
        self.search_path = schema

    def stream_seconds(self, sql: str) -> float:
        """Time `COPY (query) TO STDOUT` with its rows discarded by psql, a C
        client, as psql's \\timing reports it (no process start-up): the
        Python loop of stream() spends ~0.3 us per row, which for 10M rows
        is most of the time and the same on every table.  Falls back to
        stream() where there is no psql."""
        if self.psql is None:
            start = time.perf_counter()
            self.stream(sql)
            return time.perf_counter() - start
        timeout_ms = int(self.scalar("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'"))
        env = dict(os.environ)
        opts = [f"-c statement_timeout={timeout_ms}"]
        if self.search_path:
            opts.append(f"-c search_path={self.search_path},public")
        env["PGOPTIONS"] = " ".join(opts)
        res = subprocess.run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.dsn,
                              "-o", os.devnull, "-c", "\\timing on",
                              "-c", f"COPY ({sql}) TO STDOUT"],
                             env=env, capture_output=True, text=True)
        if res.returncode != 0:
            err = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "psql failed"
            if "statement timeout" in err:
                raise psycopg.errors.QueryCanceled(err)
            raise psycopg.OperationalError(err)
        m = re.search(r"Time: ([0-9.]+) ms", res.stdout)
        if not m:
            raise psycopg.OperationalError(f"no timing from psql: {res.stdout[:200]}")
        return float(m.group(1)) / 1000.0

    # -- probes
    def wal_lsn(self) -> str:
        return self.scalar("SELECT pg_current_wal_insert_lsn()::text")

    def wal_since(self, lsn: str) -> int:
        return int(self.scalar("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)", (lsn,)))

    def sizes(self, tables: list) -> dict:
        """pg_relation_size and pg_total_relation_size summed over `tables`."""
        rel = total = 0
        for t in tables:
            r, tt = self.conn.execute("SELECT pg_relation_size(%s::regclass), pg_total_relation_size(%s::regclass)",
                                      (t, t)).fetchone()
            rel += r
            total += tt
        return {"relation_bytes": rel, "total_bytes": total}

    def total_size(self, table: str) -> int:
        return int(self.scalar("SELECT pg_total_relation_size(%s::regclass)", (table,)))

    def table_size(self, table: str) -> int:
        """The table's own pages (main fork), without indexes or TOAST."""
        return int(self.scalar("SELECT pg_relation_size(%s::regclass)", (table,)))

    def checkpoint(self) -> None:
        """Flush dirty buffers so that one side's writes do not slow the next
        side's measurement (needs superuser or pg_checkpoint; skipped if not)."""
        try:
            with self.no_timeout():
                self.conn.execute("CHECKPOINT")
        except psycopg.Error:
            self.recover()

    def checksum(self, table: str) -> tuple:
        """Order-insensitive content checksum of a table, computed server-side."""
        row = self.conn.execute(
            f"SELECT count(*), coalesce(sum(hashtext(x::text)::bigint), 0) FROM {table} x").fetchone()
        return (int(row[0]), int(row[1]))


def time_query(pg: Pg, sql: str, runs: int, stream: bool = False) -> tuple:
    """Warm-up run (which captures the answer), then `runs` timed runs.

    Returns (outcome dict, answer); the answer is ("rows", normalized rows)
    or, for streamed queries, ("digest", (count, hash sum)); None on failure.
    """
    answer = None
    times = []
    try:
        if stream:
            d = StreamDigest()
            pg.stream(sql, d)
            answer = ("digest", d.finish())
        else:
            answer = ("rows", normalize_rows(pg.fetch(sql), ordered_query(sql)))
        for _ in range(runs):
            if stream:
                times.append(pg.stream_seconds(sql))
                continue
            start = time.perf_counter()
            pg.fetch(sql)
            times.append(time.perf_counter() - start)
    except psycopg.Error as e:
        pg.recover()
        return failure(e, runs_done=len(times) or None), None
    rows = answer[1][0] if answer[0] == "digest" else len(answer[1])
    return outcome(OK, times, rows=rows), answer


def time_statement(pg: Pg, sql: str) -> dict:
    """Run one write statement, committed (autocommit), timed, with the WAL
    bytes it wrote (pg_current_wal_insert_lsn difference) and its row count.
    Committed rather than rolled back: tessera buffers new rows until commit,
    so a rolled-back transaction would skip part of its work."""
    try:
        lsn = pg.wal_lsn()
        start = time.perf_counter()
        rowcount = pg.execute(sql)
        elapsed = time.perf_counter() - start
        return outcome(OK, [elapsed], wal_bytes=pg.wal_since(lsn), rowcount=rowcount)
    except psycopg.Error as e:
        pg.recover()
        return failure(e)
