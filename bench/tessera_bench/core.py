"""Timing, result capture and comparison shared by every workload.

A side is one storage being measured: "heap", "tessera" (PostgreSQL) or
"duckdb".  Each query runs once to warm up and capture its answer, then
`runs` more times for timing; best and median are kept.  Answers of heap and
tessera must be identical (floats within 1e-9 relative).
"""

from __future__ import annotations

import hashlib
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Optional

import psycopg

STATUS_OK = "ok"
STATUS_TIMEOUT = "timeout"
STATUS_UNSUPPORTED = "unsupported"
STATUS_ERROR = "error"


def progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@dataclass
class Timing:
    """Timings of one query on one side."""

    status: str = STATUS_OK
    runs: list = field(default_factory=list)
    error: Optional[str] = None
    extra: dict = field(default_factory=dict)  # e.g. wal_bytes, tps

    @property
    def best(self) -> Optional[float]:
        return min(self.runs) if self.runs else None

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.runs) if self.runs else None

    def to_json(self) -> dict:
        d = {"status": self.status, "runs": self.runs, "best": self.best, "median": self.median}
        if self.error:
            d["error"] = self.error
        d.update(self.extra)
        return d


# ---------------------------------------------------------------- answers

def _norm_value(v: Any) -> Any:
    """A value in a form that compares exactly across drivers."""
    if isinstance(v, float):
        return v
    if isinstance(v, Decimal):
        return v.normalize() if v.is_finite() else str(v)
    if isinstance(v, (list, tuple)):
        return tuple(_norm_value(x) for x in v)
    if v is None:
        return None
    return str(v) if not isinstance(v, (int, bool, str)) else v


def normalize_rows(rows: list, ordered: bool) -> list:
    out = [tuple(_norm_value(v) for v in r) for r in rows]
    if not ordered:
        out.sort(key=lambda r: repr(r))
    return out


def values_equal(a: Any, b: Any, rel_tol: float = 1e-9) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            fa, fb = float(a), float(b)
        except (TypeError, ValueError):
            return False
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return math.isclose(fa, fb, rel_tol=rel_tol, abs_tol=1e-12)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(values_equal(x, y, rel_tol) for x, y in zip(a, b))
    return a == b


def rows_equal(a: list, b: list) -> bool:
    """Compare two normalized row lists (already sorted if order does not matter)."""
    if len(a) != len(b):
        return False
    return all(len(x) == len(y) and all(values_equal(p, q) for p, q in zip(x, y)) for x, y in zip(a, b))


def ordered_query(sql: str) -> bool:
    """Does the query fix its row order (an ORDER BY at the outer level)?"""
    s = " ".join(sql.lower().split())
    depth = 0
    last_order = -1
    i = 0
    while i < len(s):
        c = s[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and s.startswith("order by", i):
            last_order = i
        i += 1
    return last_order >= 0


class StreamDigest:
    """Order-insensitive digest of a stream of rows (multiset hash + count)."""

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0

    def add_line(self, line: bytes) -> None:
        h = int.from_bytes(hashlib.blake2b(line, digest_size=8).digest(), "little")
        self.sum = (self.sum + h) & 0xFFFFFFFFFFFFFFFF
        self.count += 1

    def value(self) -> tuple:
        return (self.count, self.sum)


# ---------------------------------------------------------------- running

class PgSide:
    """One PostgreSQL connection, timing queries on it."""

    def __init__(self, dsn: str, timeout_s: float):
        self.dsn = dsn
        self.timeout_s = timeout_s
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.set_timeout(timeout_s)

    def set_timeout(self, seconds: float) -> None:
        self.conn.execute(f"SET statement_timeout = {int(seconds * 1000)}")

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str, params=None) -> None:
        self.conn.execute(sql, params)

    def scalar(self, sql: str, params=None) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    def fetch(self, sql: str) -> list:
        return self.conn.execute(sql).fetchall()

    def stream(self, sql: str, digest: Optional[StreamDigest]) -> None:
        """COPY (query) TO STDOUT, consumed and discarded (optionally digested)."""
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY ({sql}) TO STDOUT") as copy:
                if digest is None:
                    for _ in copy:
                        pass
                else:
                    pending = b""
                    for block in copy:
                        data = pending + bytes(block)
                        lines = data.split(b"\n")
                        pending = lines.pop()
                        for line in lines:
                            digest.add_line(line)
                    if pending:
                        digest.add_line(pending)


def classify_error(e: Exception) -> tuple:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if isinstance(e, psycopg.errors.QueryCanceled):
        return STATUS_TIMEOUT, msg
    if isinstance(e, psycopg.errors.FeatureNotSupported):
        return STATUS_UNSUPPORTED, msg
    return STATUS_ERROR, msg


def time_pg_query(side: PgSide, sql: str, runs: int, stream: bool = False) -> tuple:
    """Warm up (capturing the answer), then time `runs` executions.

    Returns (Timing, answer) where answer is normalized rows, a stream
    digest, or None on failure.
    """
    t = Timing()
    answer = None
    try:
        if stream:
            d = StreamDigest()
            side.stream(sql, d)
            answer = ("digest", d.value())
        else:
            answer = ("rows", normalize_rows(side.fetch(sql), ordered_query(sql)))
        for _ in range(runs):
            start = time.perf_counter()
            if stream:
                side.stream(sql, None)
            else:
                side.fetch(sql)
            t.runs.append(time.perf_counter() - start)
    except Exception as e:  # reported, never fatal
        t.status, t.error = classify_error(e)
        try:
            side.conn.rollback()
        except Exception:
            pass
    return t, answer


def answers_match(a, b) -> Optional[bool]:
    if a is None or b is None:
        return None
    if a[0] != b[0]:
        return False
    if a[0] == "digest":
        return a[1] == b[1]
    return rows_equal(a[1], b[1])


def time_duckdb_query(con, sql: str, runs: int) -> tuple:
    t = Timing()
    answer = None
    try:
        rows = con.execute(sql).fetchall()
        answer = ("rows", normalize_rows(rows, ordered_query(sql)))
        for _ in range(runs):
            start = time.perf_counter()
            con.execute(sql).fetchall()
            t.runs.append(time.perf_counter() - start)
    except Exception as e:
        t.status = STATUS_ERROR
        t.error = str(e).splitlines()[0]
    return t, answer


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
