"""PNG charts (matplotlib, Agg): one figure per workload with a bar chart
per group (heap vs tessera, DuckDB when present), and a size chart.  The
value axis is logarithmic when the plotted values, or the heap/tessera
ratios, span more than 10x."""

from __future__ import annotations

import os
from typing import Optional

from .report import MB, ok_value, speedup

COLORS = {"heap": "#4c72b0", "tessera": "#dd8452", "duckdb": "#55a868"}


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def wants_log(values: list, ratios: list) -> bool:
    vals = [v for v in values if v and v > 0]
    rs = [r for r in ratios if r and r > 0]
    span_v = max(vals) / min(vals) if vals else 1
    span_r = max(rs) / min(rs) if rs else 1
    return span_v > 10 or span_r > 10


def _group_series(g: dict) -> Optional[tuple]:
    """(names, {side: values}, ylabel, ratios, ratio label, failures) for one group."""
    kind = g["kind"]
    items = g["items"]
    if not items:
        return None
    if kind == "sweep":
        names = ["heap"] + [it["name"] for it in items]
        vals = [g.get("heap_bytes", 0) / MB] + [(ok_value(it.get("tessera"), "bytes") or 0) / MB for it in items]
        return names, {"size": vals}, "MB (pg_total_relation_size)", [], "", {}
    key = "tps" if kind == "pgbench" else "best"
    sides = ["heap", "tessera"] + (["duckdb"] if any("duckdb" in it for it in items) else [])
    series = {s: [ok_value(it.get(s), key) for it in items] for s in sides}
    ratios = [speedup(it, key) for it in items]
    failures = {}
    for i, it in enumerate(items):
        for s in sides:
            o = it.get(s)
            if o and o.get("status") != "ok":
                failures[(i, s)] = o.get("status")
    ylabel = "transactions per second" if kind == "pgbench" else "seconds (best run)"
    return [it["name"] for it in items], series, ylabel, ratios, "x", failures


def chart_groups(w: dict) -> list:
    """The workload's groups to chart: the write-kind ones (index build,
    writes) merged into one, single-item groups left out when others exist."""
    out, writes = [], None
    for g in w.get("groups", []):
        if g["kind"] != "write":
            out.append(g)
        elif writes is None:
            writes = dict(g, items=list(g["items"]))
            out.append(writes)
        else:
            writes["name"] += f" + {g['name']}"
            writes["items"] += g["items"]
    # a lone bar pair (an index build, one scan) is clear enough in the report's table
    if any(len(g["items"]) > 1 for g in out):
        out = [g for g in out if len(g["items"]) > 1]
    return out


def workload_chart(name: str, w: dict, path: str) -> bool:
    groups = [(g, s) for g in chart_groups(w) for s in [_group_series(g)] if s]
    if not groups:
        return False
    plt = _plt()
    fig, axes = plt.subplots(len(groups), 1, figsize=(max(7, 0.55 * max(len(s[0]) for _, s in groups) + 3),
                                                      3.6 * len(groups)), squeeze=False)
    for ax, (g, (names, series, ylabel, ratios, _, failures)) in zip(axes[:, 0], groups):
        n = len(series)
        width = 0.8 / n
        xs = range(len(names))
        all_vals = []
        for k, (side, vals) in enumerate(series.items()):
            offs = [x + (k - (n - 1) / 2) * width for x in xs]
            color = COLORS.get(side, "#8172b2")
            if side == "size":
                colors = [COLORS["heap"]] + [COLORS["tessera"]] * (len(vals) - 1)
                ax.bar(offs, [v or 0 for v in vals], width, color=colors)
            else:
                ax.bar(offs, [v or 0 for v in vals], width, label=side, color=color)
            all_vals += [v for v in vals if v]
            for i, v in enumerate(vals):
                if (i, side) in failures:
                    ax.text(offs[i], 0, failures[(i, side)], rotation=90, ha="center", va="bottom", fontsize=7)
        log = wants_log(all_vals, ratios)
        if log and all_vals:
            ax.set_yscale("log")
        if ratios and all_vals:
            top = max(all_vals)
            for i, r in enumerate(ratios):
                if r is not None:
                    col = [series["heap"][i] or 0, series["tessera"][i] or 0]
                    y = max(col) * (1.3 if log else 1.0) + (0 if log else 0.02 * top)
                    ax.text(i, y, f"{r:.2g}x", ha="center", va="bottom", fontsize=7)
            ax.set_ylim(top=top * (3 if log else 1.15))
        ax.set_xlim(-0.6, max(len(names), 3) - 0.4)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=30 if len(names) > 5 else 0, ha="right" if len(names) > 5 else "center",
                           fontsize=8)
        ax.set_ylabel(ylabel + (" (log)" if log else ""), fontsize=8)
        title = f"{name}: {g['name']}"
        if g["kind"] == "pgbench":
            title += "  (labels: tessera TPS / heap TPS)"
        elif g["kind"] != "sweep":
            title += "  (labels: speedup = heap / tessera)"
        ax.set_title(title, fontsize=9)
        if g["kind"] != "sweep":
            ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    return _save(plt, fig, path)


def _save(plt, fig, path: str) -> bool:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def size_chart(results: dict, path: str) -> bool:
    rows = [(name, w["sizes"]["heap"]["total_bytes"], w["sizes"]["tessera"]["total_bytes"])
            for name, w in results.get("workloads", {}).items()
            if w.get("sizes", {}).get("heap") and w["sizes"].get("tessera")]
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(rows) + 2), 4))
    xs = range(len(rows))
    heap = [r[1] / MB for r in rows]
    tess = [r[2] / MB for r in rows]
    ax.bar([x - 0.2 for x in xs], heap, 0.4, label="heap", color=COLORS["heap"])
    ax.bar([x + 0.2 for x in xs], tess, 0.4, label="tessera", color=COLORS["tessera"])
    log = wants_log(heap + tess, [t / h for h, t in zip(heap, tess) if h])
    if log:
        ax.set_yscale("log")
    for x, h, t in zip(xs, heap, tess):
        if h:
            ax.text(x + 0.2, t * (1.15 if log else 1.0), f"{t / h:.3g}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r[0] for r in rows])
    ax.set_ylabel("MB, pg_total_relation_size" + (" (log)" if log else ""))
    ax.set_title("table sizes (labels: tessera / heap)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(plt, fig, path)


def write_charts(results: dict, out_dir: str) -> dict:
    """name -> file name of every chart written (empty without matplotlib)."""
    try:
        _plt()
    except ImportError:
        return {}
    made = {}
    for name, w in results.get("workloads", {}).items():
        if "error" not in w and workload_chart(name, w, os.path.join(out_dir, f"{name}.png")):
            made[name] = f"{name}.png"
    if size_chart(results, os.path.join(out_dir, "sizes.png")):
        made["sizes"] = "sizes.png"
    return made
