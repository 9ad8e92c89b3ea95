"""`bench.py compare old.json new.json`: every figure of two runs side by
side, with the relative change and whether that change is for the better."""

from __future__ import annotations

import math
from typing import Optional

from .report import speedup

# figure names (last path component) where smaller is better / larger is better
LOWER_BETTER = ("best", "median", "seconds", "latency_ms", "wal_bytes", "bytes", "relation_bytes",
                "total_bytes", "bytes_after", "bytes_before", "table_bytes_after", "table_bytes_before", "vacuum_seconds", "vacuum_analyze_seconds", "ratio",
                "cold", "score_hot", "score_cold", "geomean_tessera_over_duckdb", "queries_missing")
HIGHER_BETTER = ("tps", "speedup", "compression_ratio", "tps_speedup", "geomean_speedup")
SKIP = {"runs", "rowcount", "rows", "transactions", "failed", "clients", "stripes", "tries",
        "geomean_speedup_queries", "geomean_tessera_over_duckdb_queries"}


def flatten(results: dict) -> dict:
    """Every number of a results file as {path: value}, paths such as
    seed/queries/count_c1/tessera/best; speedups are added per item."""
    flat: dict = {}

    def put(path, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return
        if isinstance(v, float) and not math.isfinite(v):
            return
        flat[path] = v

    def walk(path, v, skip=SKIP):
        if isinstance(v, dict):
            for k, x in v.items():
                if k not in skip:
                    walk(f"{path}/{k}", x, skip)
        else:
            put(path, v)

    for wname, w in results.get("workloads", {}).items():
        walk(f"{wname}/params", w.get("params", {}), skip=())
        put(f"{wname}/elapsed_seconds", w.get("elapsed_seconds"))
        for k in ("load", "sizes"):
            if isinstance(w.get(k), dict):
                walk(f"{wname}/{k}", w[k])
        for g in w.get("groups", []):
            for k in ("rows", "heap_bytes"):
                put(f"{wname}/{g['name']}/{k}", g.get(k))
            if isinstance(g.get("totals"), dict):
                walk(f"{wname}/{g['name']}/totals", g["totals"])
            for it in g["items"]:
                base = f"{wname}/{g['name']}/{it['name']}"
                for side in ("heap", "tessera", "duckdb"):
                    if isinstance(it.get(side), dict):
                        walk(f"{base}/{side}", it[side])
                key = "tps" if g["kind"] == "pgbench" else "best"
                put(f"{base}/speedup", speedup(it, key))
    return flat


def verdict(path: str, old: float, new: float) -> str:
    last = path.rsplit("/", 1)[-1]
    if "/params/" in path or old == new:
        return ""
    if last in HIGHER_BETTER:
        return "better" if new > old else "worse"
    if last in LOWER_BETTER or last.endswith("_bytes") or last.endswith("seconds"):
        return "better" if new < old else "worse"
    return ""


def change(old: Optional[float], new: Optional[float]) -> str:
    if old is None:
        return "new"
    if new is None:
        return "gone"
    if old == 0:
        return "=" if new == 0 else "n/a"
    return f"{(new - old) / abs(old) * 100:+.1f}%"


def fmt(v: Optional[float]) -> str:
    if v is None:
        return ""
    if isinstance(v, int):
        return str(v)
    return f"{v:.6g}"


def compare(old: dict, new: dict) -> str:
    a, b = flatten(old), flatten(new)
    lines = []
    mo, mn = old.get("meta", {}), new.get("meta", {})
    for label, key in (("started", "started"), ("commit", "git_commit"), ("server", "server_version")):
        if mo.get(key) or mn.get(key):
            lines.append(f"{label}: {mo.get(key, '?')}  ->  {mn.get(key, '?')}")
    pa = {k: v for k, v in a.items() if "/params/" in k}
    pb = {k: v for k, v in b.items() if "/params/" in k}
    if pa != pb:
        lines.append("NOTE: the runs' parameters differ (see the params lines); figures may not be comparable")
    width = max([len(k) for k in set(a) | set(b)] + [6])
    lines.append(f"{'figure':<{width}} {'old':>14} {'new':>14} {'change':>9}")
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        v = verdict(k, va, vb) if va is not None and vb is not None else ""
        lines.append(f"{k:<{width}} {fmt(va):>14} {fmt(vb):>14} {change(va, vb):>9}  {v}".rstrip())
    return "\n".join(lines)
