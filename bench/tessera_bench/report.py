"""The Markdown report, the text summary printed at the end of a run, and
the checks that decide the exit status.

Ratios are always stated the same way:
  speedup    = heap time / tessera time   (> 1: tessera is faster; for
               pgbench tessera TPS / heap TPS, the same sense)
  size ratio = tessera bytes / heap bytes (< 1: tessera is smaller)
"""

from __future__ import annotations

import re
from typing import Optional

SPEEDUP_DEF = "speedup = heap time / tessera time (> 1 means tessera is faster)"
SIZE_DEF = "size ratio = tessera / heap (< 1 means tessera is smaller)"
MB = 1024 * 1024
STATUSES = ("timeout", "unsupported", "error", "skipped")


# ---------------------------------------------------------------- cells

def fmt_s(v: Optional[float]) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}" if v >= 0.001 else f"{v:.2g}"


def fmt_x(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}x" if v < 100 else f"{v:.0f}x"


def fmt_mb(b: Optional[float]) -> str:
    if b is None:
        return "-"
    mb = b / MB
    if mb >= 100:
        return f"{mb:.0f}"
    if mb >= 10:
        return f"{mb:.1f}"
    return f"{mb:.2f}" if mb >= 1 else f"{mb:.3g}"


def fmt_ratio(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.4f}" if v < 1 else f"{v:.2f}"


def fmt_num(v: Optional[float], digits: int = 0) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def status_text(o: Optional[dict], width: int = 0) -> Optional[str]:
    """None for a successful outcome, else 'unsupported: message' etc."""
    if o is None:
        return "-"
    if o.get("status") == "ok":
        return None
    text = o.get("status", "?")
    if o.get("error") and o.get("status") != "timeout":
        text += f": {o['error']}"
    if width and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def median_cell(o: Optional[dict], key: str = "median", fmt=fmt_s) -> str:
    """A secondary figure: its value, or '-' (the failure is shown once, in
    the main cell)."""
    return fmt(ok_value(o, key))


def cell(o: Optional[dict], key: str = "best", fmt=fmt_s, width: int = 0) -> str:
    bad = status_text(o, width)
    return bad if bad is not None else fmt(o.get(key))


def ok_value(o: Optional[dict], key: str) -> Optional[float]:
    if not o or o.get("status") != "ok":
        return None
    return o.get(key)


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b else None


def speedup(item: dict, key: str = "best") -> Optional[float]:
    """heap / tessera for times; tessera / heap for TPS."""
    if key == "tps":
        return ratio(ok_value(item.get("tessera"), "tps"), ok_value(item.get("heap"), "tps"))
    return ratio(ok_value(item.get("heap"), key), ok_value(item.get("tessera"), key))


def match_text(item: dict) -> str:
    return {True: "yes", False: "NO", None: "-"}[item.get("match")]


# ---------------------------------------------------------------- tables

def text_table(header: list, rows: list, indent: str = "  ") -> list:
    """Aligned ' | '-separated lines (first column left, others right)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(r):
        cells = [str(c).ljust(widths[0]) if i == 0 else str(c).rjust(widths[i]) for i, c in enumerate(r)]
        return indent + " | ".join(cells).rstrip()
    return [line(header)] + [line(r) for r in rows]


_NUMERIC = re.compile(r"^(-|[-+]?[0-9][0-9.,e+-]*(x|%)?)$")


def md_table(header: list, rows: list) -> list:
    """A Markdown table; columns whose cells are all numbers align right."""
    def esc(c):
        return str(c).replace("|", "\\|").replace("\n", " ")

    def numeric(i):
        def number_like(c):
            c = str(c).strip()
            return c == "" or _NUMERIC.match(c) or c.split(":")[0] in STATUSES
        return i > 0 and rows and all(number_like(r[i]) for r in rows)
    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "|".join("---:" if numeric(i) else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


# ---------------------------------------------------------------- per kind

def has_duckdb(g: dict) -> bool:
    return any("duckdb" in it for it in g["items"])


def query_rows(g: dict, width: int = 0, medians: bool = False) -> tuple:
    duck = has_duckdb(g)
    header = ["query", "heap s", "tessera s", "speedup"]
    if medians:
        header = ["query", "heap best s", "heap median s", "tessera best s", "tessera median s", "speedup"]
    header += ["duckdb s"] if duck else []
    header += ["match"]
    rows = []
    for it in g["items"]:
        h, t = it.get("heap"), it.get("tessera")
        r = [it["name"]]
        if medians:
            r += [cell(h, width=width), median_cell(h), cell(t, width=width), median_cell(t)]
        else:
            r += [cell(h, width=width), cell(t, width=width)]
        r.append(fmt_x(speedup(it)))
        if duck:
            r.append(cell(it.get("duckdb"), width=width))
        r.append(match_text(it))
        rows.append(r)
    return header, rows


def clickbench_rows(g: dict, width: int = 0) -> tuple:
    """ClickBench's protocol: hot (best of the runs after the first) and
    cold (the first run) per system."""
    duck = has_duckdb(g)
    header = ["query", "heap hot s", "heap cold s", "tessera hot s", "tessera cold s", "speedup (hot)"]
    header += ["duckdb hot s", "duckdb cold s", "tessera/duckdb (hot)"] if duck else []
    header += ["match"]
    rows = []
    for it in g["items"]:
        h, t, d = it.get("heap"), it.get("tessera"), it.get("duckdb")
        r = [it["name"], cell(h, width=width), median_cell(h, "cold"), cell(t, width=width), median_cell(t, "cold"),
             fmt_x(speedup(it))]
        if duck:
            r += [cell(d, width=width), median_cell(d, "cold"),
                  fmt_x(ratio(ok_value(t, "best"), ok_value(d, "best")))]
        r.append(match_text(it))
        rows.append(r)
    return header, rows


def clickbench_totals(g: dict) -> list:
    """Markdown lines: sums, relative scores and geometric means."""
    tot = g.get("totals") or {}
    systems = [s for s in ("heap", "tessera", "duckdb") if s in tot]
    if not systems:
        return []

    def score(v):
        return "-" if v is None else f"{v:.2f}"
    rows = [["sum of hot times, s"] + [fmt_s(tot[s]["hot_sum_seconds"]) for s in systems],
            ["sum of cold times, s"] + [fmt_s(tot[s]["cold_sum_seconds"]) for s in systems],
            ["queries without a time"] + [str(tot[s]["queries_missing"]) for s in systems],
            ["relative score, hot"] + [score(tot[s].get("score_hot")) for s in systems],
            ["relative score, cold"] + [score(tot[s].get("score_cold")) for s in systems]]
    out = md_table(["total"] + systems, rows) + [""]
    out.append(f"Geometric mean of heap/tessera (hot): {fmt_x(tot.get('geomean_speedup'))} over "
               f"{tot.get('geomean_speedup_queries', 0)} queries (above 1: tessera faster).")
    if "geomean_tessera_over_duckdb" in tot:
        out[-1] += (f" Geometric mean of tessera/DuckDB (hot): {fmt_x(tot.get('geomean_tessera_over_duckdb'))} over "
                    f"{tot.get('geomean_tessera_over_duckdb_queries', 0)} queries (above 1: DuckDB faster).")
    out.append("Relative score: ClickBench's, the geometric mean over queries of (t + 0.01 s) / (best + 0.01 s), "
               "best the fastest of these systems on the query; 1.00 is the fastest everywhere.")
    return out + [""]


def clickbench_text_totals(g: dict) -> list:
    tot = g.get("totals") or {}
    systems = [s for s in ("heap", "tessera", "duckdb") if s in tot]
    out = []
    for s in systems:
        x = tot[s]
        sh, sc = x.get("score_hot"), x.get("score_cold")
        out.append(f"  {s}: hot sum {fmt_s(x['hot_sum_seconds'])} s, cold sum {fmt_s(x['cold_sum_seconds'])} s, "
                   f"relative score hot {'-' if sh is None else f'{sh:.2f}'}, "
                   f"cold {'-' if sc is None else f'{sc:.2f}'}"
                   + (f", {x['queries_missing']} queries without a time" if x["queries_missing"] else ""))
    line = f"  geomean heap/tessera {fmt_x(tot.get('geomean_speedup'))}"
    if "geomean_tessera_over_duckdb" in tot:
        line += f", tessera/duckdb {fmt_x(tot.get('geomean_tessera_over_duckdb'))}"
    return out + [line] if systems else []


def write_rows(g: dict, width: int = 0, full: bool = False) -> tuple:
    header = ["operation", "heap s", "tessera s", "speedup", "heap WAL MB", "tessera WAL MB"]
    if full:
        header += ["WAL tessera/heap", "heap MB after", "tessera MB after", "rows"]
    header += ["match"]
    if full:
        header += ["notes"]
    rows = []
    for it in g["items"]:
        h, t = it.get("heap"), it.get("tessera")
        r = [it["name"], cell(h, width=width), cell(t, width=width), fmt_x(speedup(it)),
             fmt_mb(ok_value(h, "wal_bytes")), fmt_mb(ok_value(t, "wal_bytes"))]
        if full:
            counts = {ok_value(h, "rowcount"), ok_value(t, "rowcount")} - {None, -1}
            r += [fmt_ratio(ratio(ok_value(t, "wal_bytes"), ok_value(h, "wal_bytes"))),
                  fmt_mb(ok_value(h, "bytes_after")), fmt_mb(ok_value(t, "bytes_after")),
                  "/".join(f"{c:,}" for c in sorted(counts)) or "-"]
        r.append(match_text(it))
        if full:
            r.append(write_notes(it))
        rows.append(r)
    return header, rows


def write_notes(it: dict) -> str:
    """Secondary figures of a write: sizes before, VACUUM time, caveats."""
    h, t = it.get("heap") or {}, it.get("tessera") or {}
    notes = []
    if "bytes_before" in h or "bytes_before" in t:
        notes.append(f"MB before: heap {fmt_mb(h.get('bytes_before'))}, tessera {fmt_mb(t.get('bytes_before'))}")
    if "table_bytes_before" in h or "table_bytes_before" in t:
        def shrink(o):
            b, a = o.get("table_bytes_before"), o.get("table_bytes_after")
            return f"{fmt_mb(b)} -> {fmt_mb(a)} ({fmt_ratio(ratio(a, b))})" if b and a is not None else "-"
        notes.append(f"table alone: heap {shrink(h)}, tessera {shrink(t)}")
    if "vacuum_seconds" in h or "vacuum_seconds" in t:
        notes.append(f"then VACUUM: heap {fmt_s(h.get('vacuum_seconds'))} s, "
                     f"tessera {fmt_s(t.get('vacuum_seconds'))} s (MB after are after it)")
    for side, o in (("heap", h), ("tessera", t)):
        if o.get("note"):
            notes.append(f"{side} {o['note']}")
    return "; ".join(notes)


def pgbench_rows(g: dict, width: int = 0, full: bool = False) -> tuple:
    header = ["test", "heap TPS", "tessera TPS", "speedup"]
    if full:
        header = ["test", "clients", "heap TPS", "heap ms", "tessera TPS", "tessera ms", "speedup"]
    rows = []
    for it in g["items"]:
        h, t = it.get("heap"), it.get("tessera")
        if full:
            def ms(v):
                return fmt_num(v, 3)
            rows.append([it["name"], it.get("clients", "-"), cell(h, "tps", fmt_num, width),
                         median_cell(h, "latency_ms", ms), cell(t, "tps", fmt_num, width),
                         median_cell(t, "latency_ms", ms), fmt_x(speedup(it, "tps"))])
        else:
            rows.append([it["name"], cell(h, "tps", fmt_num, width), cell(t, "tps", fmt_num, width),
                         fmt_x(speedup(it, "tps"))])
    return header, rows


def sweep_rows(g: dict, width: int = 0, full: bool = False) -> tuple:
    header = ["codec", "tessera MB", "tessera/heap"]
    if full:
        header = ["codec", "options", "tessera MB", "tessera/heap", "load s", "compression ratio"]
    rows = []
    for it in g["items"]:
        t = it.get("tessera")
        r = [it["name"]]
        if full:
            r.append(it.get("options", ""))
        r += [cell(t, "bytes", fmt_mb, width), fmt_ratio(ok_value(t, "ratio"))]
        if full:
            cr = ok_value(t, "compression_ratio")
            r += [fmt_s(ok_value(t, "best")), "-" if cr is None else f"{cr:.1f}"]
        rows.append(r)
    return header, rows


def size_rows(w: dict) -> tuple:
    h, t = w["sizes"].get("heap", {}), w["sizes"].get("tessera", {})
    header = ["size", "heap MB", "tessera MB", "tessera/heap"]
    rows = []
    for key, label in (("relation_bytes", "pg_relation_size"), ("total_bytes", "pg_total_relation_size")):
        rows.append([label, fmt_mb(h.get(key)), fmt_mb(t.get(key)), fmt_ratio(ratio(t.get(key), h.get(key)))])
    return header, rows


def load_speedup(w: dict) -> Optional[float]:
    return ratio(ok_value(w["load"].get("heap"), "best"), ok_value(w["load"].get("tessera"), "best"))


# ---------------------------------------------------------------- text summary

def text_summary(results: dict) -> str:
    out = []
    for name, w in results.get("workloads", {}).items():
        out.append(f"\n== {name}: {w.get('title', '')} ==")
        if "error" in w:
            out.append(f"  FAILED: {w['error']}")
            continue
        if w.get("load") and "heap" in w["load"] and "tessera" in w["load"]:
            h, t = w["load"]["heap"], w["load"]["tessera"]
            duck = f" | duckdb {cell(w['load']['duckdb'])} s" if "duckdb" in w["load"] else ""
            out.append(f"  load: heap {cell(h, width=60)} s | tessera {cell(t, width=60)} s"
                       f" | speedup {fmt_x(load_speedup(w))}{duck}")
        if w.get("sizes"):
            header, rows = size_rows(w)
            out += text_table(header, rows)
        for g in w.get("groups", []):
            if not g["items"]:
                if g.get("note"):
                    out.append(f"  {g['name']}: {g['note']}")
                continue
            out.append(f"  -- {g['name']}")
            kind = g["kind"]
            if kind == "query":
                header, rows = query_rows(g, width=40)
            elif kind == "write":
                header, rows = write_rows(g, width=40)
            elif kind == "pgbench":
                header, rows = pgbench_rows(g, width=40)
            else:
                header, rows = sweep_rows(g, width=40)
            out += text_table(header, rows)
            if g.get("protocol") == "clickbench":
                out += clickbench_text_totals(g)
    return "\n".join(out).lstrip("\n")


# ---------------------------------------------------------------- markdown

def _meta_rows(m: dict) -> list:
    mem = m.get("memory_bytes")
    return [
        ["started", m.get("started", "-")],
        ["command", m.get("command", "-")],
        ["CPU", f"{m.get('nproc')} cores usable ({m.get('cpu_count')} online), {m.get('cpu_model', '-')}"],
        ["memory", f"{mem / 2**30:.1f} GiB" if mem else "-"],
        ["OS", m.get("os", "-")],
        ["PostgreSQL", m.get("server_version", "-")],
        ["tessera", f"extension {m.get('tessera_version') or '-'}, commit {m.get('git_commit', '-')}, "
                    f"access method of the tessera side: {m.get('tessera_am', 'tessera')}"],
        ["DuckDB", m.get("duckdb_version") or "not used"],
        ["runs", f"warm-up + {m.get('runs')} timed runs per query; statement_timeout {m.get('timeout')} s"],
    ]


def markdown(results: dict, charts: Optional[dict] = None) -> str:
    charts = charts or {}
    m = results.get("meta", {})
    out = ["# tessera benchmark", "",
           f"Heap and tessera measured in the same run on the same server. {SPEEDUP_DEF}; {SIZE_DEF}.",
           "Times are seconds. Query times: best (and median) of the timed runs after a warm-up run "
           "that also captures the answer; `match` says whether heap and tessera returned the same "
           "answer (exact for text and numeric, floats within 1e-9 relative; in order only when the "
           "query has ORDER BY). `timeout` means the statement exceeded statement_timeout; "
           "`unsupported: ...` is tessera's feature_not_supported error. results.json holds every figure.",
           "", "## Machine", ""]
    out += md_table(["fact", "value"], _meta_rows(m))
    out += ["", "Server settings:", ""]
    out += md_table(["setting", "value"], [[k, v] for k, v in m.get("settings", {}).items()])
    out.append("")
    for name, w in results.get("workloads", {}).items():
        out += [f"## {name}: {w.get('title', '')}", ""]
        if "error" in w:
            out += [f"**Failed:** `{w['error']}`", ""]
            continue
        for note in w.get("notes", []):
            out += [note, ""]
        if w.get("load"):
            rows = []
            for side, o in w["load"].items():
                rows.append([side, cell(o), fmt_mb(ok_value(o, "wal_bytes")),
                             fmt_s(ok_value(o, "vacuum_analyze_seconds"))])
            rows.append(["speedup (heap/tessera)", fmt_x(load_speedup(w)), "", ""])
            out += md_table(["load", "seconds", "WAL MB", "VACUUM ANALYZE s"], rows) + [""]
        if w.get("sizes"):
            header, rows = size_rows(w)
            t = w["sizes"].get("tessera", {})
            if "stripes" in t:
                rows.append(["tessera stripes", "", str(t["stripes"]), ""])
            if t.get("compression_ratio"):
                rows.append(["tessera.compression_ratio()", "", f"{t['compression_ratio']:.1f}", ""])
            if w.get("sizes_note"):
                out += [f"Sizes: {w['sizes_note']}.", ""]
            out += md_table(header, rows) + [""]
        for g in w.get("groups", []):
            out += [f"### {g['name']}", ""]
            if g.get("note"):
                out += [g["note"], ""]
            if not g["items"]:
                continue
            kind = g["kind"]
            if kind == "query" and g.get("protocol") == "clickbench":
                header, rows = clickbench_rows(g)
            elif kind == "query":
                header, rows = query_rows(g, medians=True)
            elif kind == "write":
                header, rows = write_rows(g, full=True)
            elif kind == "pgbench":
                header, rows = pgbench_rows(g, full=True)
            else:
                out += [f"{g.get('rows', 0):,} rows per load; heap reference {fmt_mb(g.get('heap_bytes'))} MB "
                        "(pg_total_relation_size).", ""]
                header, rows = sweep_rows(g, full=True)
            out += md_table(header, rows) + [""]
            if g.get("protocol") == "clickbench":
                out += clickbench_totals(g)
            diffs = [f"- `{it['name']}`: {it['difference']}" for it in g["items"] if it.get("difference")]
            if diffs:
                out += ["Answers that differ:", ""] + diffs + [""]
            notes = [f"- `{it['name']}`: {it['note']}" for it in g["items"] if it.get("note") and kind == "query"]
            if notes:
                out += ["Answers that differ legitimately (checked):", ""] + notes + [""]
            sqls = [it for it in g["items"] if it.get("sql") and kind in ("write",)]
            if sqls:
                out += ["<details><summary>statements</summary>", ""]
                out += [f"- `{it['name']}`: `{it['sql']}`" for it in sqls] + ["", "</details>", ""]
        if name in charts:
            out += [f"![{name}]({charts[name]})", ""]
    if "sizes" in charts:
        out += ["## Sizes", "", f"![sizes]({charts['sizes']})", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- exit status

def problems(results: dict) -> tuple:
    """(mismatches, errors): answers that differ between heap and tessera,
    and measurements or workloads that failed with an error (not a timeout,
    not unsupported)."""
    mismatches, errors = [], []
    for name, w in results.get("workloads", {}).items():
        if "error" in w:
            errors.append(f"{name}: {w['error']}")
            continue
        for side, o in (w.get("load") or {}).items():
            if o.get("status") == "error":
                errors.append(f"{name}/load/{side}: {o.get('error')}")
        for g in w.get("groups", []):
            for it in g["items"]:
                if it.get("match") is False:
                    mismatches.append(f"{name}/{it['name']}")
                for side in ("heap", "tessera"):
                    o = it.get(side) or {}
                    if o.get("status") == "error":
                        errors.append(f"{name}/{it['name']}/{side}: {o.get('error')}")
    return mismatches, errors
