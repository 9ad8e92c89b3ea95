"""Reports: Markdown, JSON, PNG charts, a text summary, and comparison of
two JSON files.  Speedup = heap time / tessera time (> 1: tessera faster);
size ratio = tessera / heap."""

from __future__ import annotations

import json
import math
import os
from typing import Optional


def speedup(heap: Optional[float], tess: Optional[float]) -> Optional[float]:
    if heap is None or tess is None or tess <= 0:
        return None
    return heap / tess


def fmt_s(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 100 else f"{v:.0f}"


def fmt_x(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}x"


def fmt_mb(b: Optional[float]) -> str:
    return "-" if b is None else f"{b / 1048576:.3g}"


def side_cell(d: Optional[dict], key: str = "best") -> str:
    if d is None:
        return "-"
    if d.get("status") != "ok":
        return f"{d.get('status')}: {d.get('error', '')}"[:60]
    return fmt_s(d.get(key))


def query_rows(w: dict) -> list:
    """(name, heap s, tessera s, speedup, duckdb s, match) for query-style workloads."""
    rows = []
    for q in w.get("queries", []):
        h, t = q.get("heap", {}), q.get("tessera", {})
        rows.append((q["name"], side_cell(h), side_cell(t), fmt_x(speedup(h.get("best"), t.get("best"))),
                     side_cell(q.get("duckdb")) if "duckdb" in q else None,
                     {True: "yes", False: "NO", None: "-"}[q.get("match")]))
    return rows


def mismatches(results: dict) -> list:
    bad = []
    for wname, w in results.get("workloads", {}).items():
        for q in w.get("queries", []):
            if q.get("match") is False:
                bad.append(f"{wname}/{q['name']}")
        if w.get("match") is False:
            bad.append(wname)
    return bad


def text_summary(results: dict) -> str:
    out = []
    for wname, w in results.get("workloads", {}).items():
        out.append(f"\n== {wname} ==")
        if "error" in w:
            out.append(f"  failed: {w['error']}")
            continue
        if "load" in w:
            h, t = w["load"].get("heap", {}), w["load"].get("tessera", {})
            out.append(f"  load: heap {fmt_s(h.get('seconds'))} s | tessera {fmt_s(t.get('seconds'))} s"
                       f" | tessera/heap {fmt_x((t.get('seconds') or 0) / h['seconds'] if h.get('seconds') else None)}")
        if "sizes" in w:
            hs, ts = w["sizes"]["heap"]["total_bytes"], w["sizes"]["tessera"]["total_bytes"]
            out.append(f"  size: heap {fmt_mb(hs)} MB | tessera {fmt_mb(ts)} MB | tessera/heap {ts / hs:.4f}"
                       f" (1/{hs / ts:.0f})" if ts else "")
        if w.get("queries"):
            has_duck = any("duckdb" in q for q in w["queries"])
            hdr = f"  {'query':<16} {'heap s':>9} {'tessera s':>10} {'speedup':>9}"
            hdr += f" {'duckdb s':>9}" if has_duck else ""
            out.append(hdr + "  match")
            for name, h, t, x, d, m in query_rows(w):
                line = f"  {name:<16} {h:>9} {t:>10} {x:>9}"
                line += f" {d or '-':>9}" if has_duck else ""
                out.append(line + f"  {m}")
        for s in w.get("sweep", []):
            out.append(f"  codec {s['codec']:<8} {fmt_mb(s['bytes'])} MB for {s['rows']} rows ({fmt_s(s['seconds'])} s)")
        if wname == "small":
            for side in ("heap", "tessera"):
                d = w[side]
                out.append(f"  {side}: {fmt_s(d['seconds'])} s, {fmt_mb(d['bytes'])} MB, "
                           f"after VACUUM {fmt_mb(d['bytes_after_vacuum'])} MB, bulk-loaded {fmt_mb(d['bulk_bytes'])} MB")
        for tst in w.get("tests", []):
            h, t = tst["heap"], tst["tessera"]
            ht = h.get("tps") if h.get("status") == "ok" else None
            tt_ = t.get("tps") if t.get("status") == "ok" else None
            tcell = f"{tt_:.0f}" if tt_ is not None else f"{t.get('status')}: {t.get('error', '')}"[:50]
            out.append(f"  {tst['name']:<18} heap {ht or 0:>9.0f} tps | tessera {tcell:>9} tps"
                       f" | tessera/heap {fmt_x(tt_ / ht if ht and tt_ else None)}")
        for op in w.get("ops", []):
            h, t = op["heap"], op["tessera"]
            line = f"  {op['name']:<18} heap {side_cell(h)} s | tessera {side_cell(t)} s"
            if h.get("best") and t.get("best"):
                line += f" | tessera/heap {t['best'] / h['best']:.2f}x"
            if "wal_bytes" in h and "wal_bytes" in t:
                line += f" | WAL {fmt_mb(h['wal_bytes'])} / {fmt_mb(t['wal_bytes'])} MB"
            if "ratio" in h and "ratio" in t:
                line += f" | size after/before heap {h['ratio']:.2f} tessera {t['ratio']:.2f}"
            out.append(line)
    return "\n".join(out)


def markdown(results: dict) -> str:
    m = results.get("meta", {})
    out = ["# tessera benchmark", "",
           f"Run {m.get('started')} on {m.get('cpus')} CPUs, {m.get('memory_gb')} GB RAM; {m.get('version')}", "",
           "Speedup = heap time / tessera time (> 1 means tessera is faster). "
           "Size ratio = tessera / heap. Times are seconds, best of "
           f"{m.get('runs')} runs after a warm-up (median in results.json).", "",
           "Settings: " + ", ".join(f"{k}={v}" for k, v in m.get("settings", {}).items()), ""]
    for wname, w in results.get("workloads", {}).items():
        out.append(f"## {wname}")
        out.append("")
        if "error" in w:
            out += [f"Failed: `{w['error']}`", ""]
            continue
        if "method" in w:
            out += [w["method"], ""]
        if "load" in w:
            out += ["| load | seconds |", "|---|---|"]
            for side, d in w["load"].items():
                out.append(f"| {side} | {fmt_s(d.get('seconds'))} |")
            out.append("")
        if "sizes" in w:
            hs, ts = w["sizes"]["heap"]["total_bytes"], w["sizes"]["tessera"]["total_bytes"]
            out += ["| size | MB |", "|---|---|", f"| heap | {fmt_mb(hs)} |", f"| tessera | {fmt_mb(ts)} |",
                    f"| tessera/heap | {ts / hs:.4f} |", ""]
        if w.get("queries"):
            has_duck = any("duckdb" in q for q in w["queries"])
            out.append("| query | heap s | tessera s | speedup |" + (" duckdb s |" if has_duck else "") + " same answer |")
            out.append("|---|---|---|---|" + ("---|" if has_duck else "") + "---|")
            for name, h, t, x, d, mt in query_rows(w):
                out.append(f"| {name} | {h} | {t} | {x} |" + (f" {d or '-'} |" if has_duck else "") + f" {mt} |")
            out.append("")
        if w.get("sweep"):
            out += ["| codec | rows | MB | load s |", "|---|---|---|---|"]
            for s in w["sweep"]:
                out.append(f"| {s['codec']} | {s['rows']} | {fmt_mb(s['bytes'])} | {fmt_s(s['seconds'])} |")
            out.append("")
        if wname == "small":
            out += ["| side | seconds | WAL MB | MB | MB after VACUUM | MB bulk-loaded |", "|---|---|---|---|---|---|"]
            for side in ("heap", "tessera"):
                d = w[side]
                out.append(f"| {side} | {fmt_s(d['seconds'])} | {fmt_mb(d['wal_bytes'])} | {fmt_mb(d['bytes'])} | "
                           f"{fmt_mb(d['bytes_after_vacuum'])} | {fmt_mb(d['bulk_bytes'])} |")
            out.append("")
        if w.get("tests"):
            out += ["| test | heap tps | heap ms | tessera tps | tessera ms | tessera/heap |", "|---|---|---|---|---|---|"]
            for t in w["tests"]:
                h, x = t["heap"], t["tessera"]
                ratio = x["tps"] / h["tps"] if h.get("tps") and x.get("tps") else None
                out.append(f"| {t['name']} | {h.get('tps', h.get('status'))} | {h.get('latency_ms', '-')} | "
                           f"{x.get('tps', x.get('status') + ': ' + x.get('error', ''))} | {x.get('latency_ms', '-')} | {fmt_x(ratio)} |")
            out.append("")
        if w.get("ops"):
            out += ["| operation | heap s | tessera s | tessera/heap | heap WAL MB | tessera WAL MB | notes |",
                    "|---|---|---|---|---|---|---|"]
            for op in w["ops"]:
                h, t = op["heap"], op["tessera"]
                ratio = t["best"] / h["best"] if h.get("best") and t.get("best") else None
                notes = ""
                if "ratio" in h:
                    notes = f"size after/before: heap {h['ratio']:.2f}, tessera {t.get('ratio', 0) or 0:.2f}"
                out.append(f"| {op['name']} | {side_cell(h)} | {side_cell(t)} | {fmt_x(ratio)} | "
                           f"{fmt_mb(h.get('wal_bytes'))} | {fmt_mb(t.get('wal_bytes'))} | {notes} |")
            out.append("")
        if os.path.exists(os.path.join(results.get("out_dir", ""), f"{wname}.png")):
            out += [f"![{wname}]({wname}.png)", ""]
    return "\n".join(out)


def charts(results: dict, out_dir: str) -> list:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    for wname, w in results.get("workloads", {}).items():
        qs = [q for q in w.get("queries", []) if q["heap"].get("best") and q["tessera"].get("best")]
        if not qs:
            continue
        names = [q["name"] for q in qs]
        heap = [q["heap"]["best"] for q in qs]
        tess = [q["tessera"]["best"] for q in qs]
        ratios = [h / t for h, t in zip(heap, tess)]
        fig, ax = plt.subplots(figsize=(max(6, len(names) * 0.6), 4))
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], heap, 0.4, label="heap")
        ax.bar([i + 0.2 for i in x], tess, 0.4, label="tessera")
        span = max(max(heap + tess) / max(min(heap + tess), 1e-6), max(ratios) / max(min(ratios), 1e-6))
        if span > 10:
            ax.set_yscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=45, ha="right")
        ax.set_ylabel("seconds (best)")
        ax.set_title(f"{wname}: heap vs tessera")
        ax.legend()
        fig.tight_layout()
        path = os.path.join(out_dir, f"{wname}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        made.append(path)
    sizes = [(wn, w["sizes"]["heap"]["total_bytes"], w["sizes"]["tessera"]["total_bytes"])
             for wn, w in results.get("workloads", {}).items() if "sizes" in w]
    if sizes:
        fig, ax = plt.subplots(figsize=(5, 4))
        x = range(len(sizes))
        ax.bar([i - 0.2 for i in x], [s[1] / 1048576 for s in sizes], 0.4, label="heap")
        ax.bar([i + 0.2 for i in x], [s[2] / 1048576 for s in sizes], 0.4, label="tessera")
        ax.set_yscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels([s[0] for s in sizes])
        ax.set_ylabel("MB (log)")
        ax.set_title("table size")
        ax.legend()
        fig.tight_layout()
        path = os.path.join(out_dir, "sizes.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        made.append(path)
    return made


def flatten(results: dict) -> dict:
    """Every figure of a results file as a flat {path: number} map."""
    flat = {}

    def walk(prefix, v):
        if isinstance(v, dict):
            key = v.get("name")
            for k, x in v.items():
                if k in ("sql", "error", "runs", "name", "status", "method", "script"):
                    continue
                walk(f"{prefix}/{k}" if prefix else k, x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                label = x.get("name") or x.get("codec") if isinstance(x, dict) else None
                walk(f"{prefix}/{label or i}", x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v)):
            flat[prefix] = v

    walk("", results.get("workloads", {}))
    return flat


def compare(old: dict, new: dict) -> str:
    a, b = flatten(old), flatten(new)
    lines = [f"{'figure':<60} {'old':>14} {'new':>14} {'change':>9}"]
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if va is None or vb is None:
            change = "new" if va is None else "gone"
        elif va == 0:
            change = "-"
        else:
            change = f"{(vb - va) / abs(va) * 100:+.1f}%"
        lines.append(f"{k:<60} {'' if va is None else f'{va:.6g}':>14} {'' if vb is None else f'{vb:.6g}':>14} {change:>9}")
    return "\n".join(lines)


def write_all(results: dict, out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    results["out_dir"] = out_dir
    charts(results, out_dir)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(markdown(results))
