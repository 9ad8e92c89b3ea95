"""Query answers: normalization and comparison between heap and tessera.

Rules (the same for the seed and TPC-H queries):

- values compare exactly: text as text, numeric as its decimal text (so a
  lost display scale, 1.50 vs 1.5, is a difference), dates and timestamps as
  their text;
- floats are equal within 1e-9 relative (NaN equals NaN);
- NULL equals NULL only;
- rows compare in order when the query has an ORDER BY at its outer level,
  else as multisets (order-insensitive);
- large outputs that are only streamed are compared through a
  `StreamDigest`, an order-insensitive hash of their COPY lines.
"""

from __future__ import annotations

import datetime
import math
import re
from decimal import Decimal
from typing import Any, Iterable, Optional

FLOAT_REL_TOL = 1e-9


def normalize_value(v: Any) -> Any:
    """A driver value in a form that compares exactly (floats stay floats)."""
    if v is None or isinstance(v, (bool, int, str, float)):
        return v
    if isinstance(v, Decimal):
        return ("numeric", str(v))
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time, datetime.timedelta)):
        return v.isoformat() if hasattr(v, "isoformat") else str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (list, tuple)):
        return tuple(normalize_value(x) for x in v)
    return str(v)


def _sort_key(v: Any) -> tuple:
    """Total order over normalized values; floats rounded so that values
    equal within the tolerance sort alike."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, int):
        return (2, v)
    if isinstance(v, float):
        if math.isnan(v):
            return (3, 1, "nan")
        return (3, 0, f"{v:.8e}")
    if isinstance(v, tuple):
        return (4, tuple(_sort_key(x) for x in v))
    return (5, str(v))


def normalize_rows(rows: Iterable, ordered: bool) -> list:
    """Rows as tuples of normalized values, sorted unless `ordered`."""
    out = [tuple(normalize_value(v) for v in r) for r in rows]
    if not ordered:
        out.sort(key=lambda r: tuple(_sort_key(v) for v in r))
    return out


def values_equal(a: Any, b: Any, rel_tol: float = FLOAT_REL_TOL) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0) or a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(values_equal(x, y, rel_tol) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def first_difference(a: list, b: list) -> Optional[str]:
    """None when the normalized row lists are equal, else a short description."""
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)} rows"
    for i, (x, y) in enumerate(zip(a, b)):
        if len(x) != len(y) or not all(values_equal(p, q) for p, q in zip(x, y)):
            return f"row {i}: {x!r:.120} vs {y!r:.120}"
    return None


def rows_equal(a: list, b: list) -> bool:
    return first_difference(a, b) is None


_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r"'(?:[^']|'')*'")


def ordered_query(sql: str) -> bool:
    """Does the query fix its row order, i.e. has an ORDER BY outside any
    parentheses?  (ORDER BY inside a subquery, a window or an aggregate does
    not order the result.)"""
    s = _STRING.sub("''", _COMMENT.sub(" ", sql)).lower()
    s = " ".join(s.split())
    depth = 0
    for i, c in enumerate(s):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and s.startswith("order by", i) and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == "_")):
            return True
    return False


class StreamDigest:
    """Order-insensitive digest of a stream of lines: count plus the sum of
    64-bit hashes, modulo 2^64.  Python's own hash is used, so a digest is
    only comparable with digests made by the same process (heap and tessera
    sides of one run), which is all it is for."""

    MASK = (1 << 64) - 1

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self._pending = b""

    def add_line(self, line: bytes) -> None:
        self.total = (self.total + hash(line)) & self.MASK
        self.count += 1

    def add_block(self, block: bytes) -> None:
        """Feed raw COPY output; lines may straddle blocks."""
        lines = (self._pending + bytes(block)).split(b"\n")
        self._pending = lines.pop()
        total = self.total
        for line in lines:
            total += hash(line)
        self.total = total & self.MASK
        self.count += len(lines)

    def finish(self) -> tuple:
        if self._pending:
            self.add_line(self._pending)
            self._pending = b""
        return (self.count, self.total)


def answers_match(a: Optional[tuple], b: Optional[tuple]) -> Optional[bool]:
    """Compare two captured answers, ("rows", normalized rows) or
    ("digest", (count, sum)).  None when either side has no answer."""
    return None if a is None or b is None else answer_difference(a, b) is None


def answer_difference(a: tuple, b: tuple) -> Optional[str]:
    if a[0] != b[0]:
        return f"{a[0]} vs {b[0]}"
    if a[0] == "digest":
        if a[1] == b[1]:
            return None
        return f"{a[1][0]} rows vs {b[1][0]} rows" if a[1][0] != b[1][0] else "same row count, different rows"
    return first_difference(a[1], b[1])
