#!/usr/bin/env python3
"""tessera benchmark: run workloads on heap and tessera side by side.

  bench.py run [--workload seed,tpch,small,oltp,dml|all] [--rows N] [--sf X] ...
  bench.py compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tessera_bench import report  # noqa: E402
from tessera_bench.core import PgSide, progress  # noqa: E402
from tessera_bench.workloads import WORKLOADS, Config  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_dsn() -> str:
    return os.environ.get("TESSERA_BENCH_DSN",
                          f"host={REPO}/.pgdata port=5477 dbname=postgres user=postgres")


def machine_facts(pg: PgSide, cfg: Config) -> dict:
    mem_kb = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kb = int(line.split()[1])
    except OSError:
        pass
    settings = {}
    for name in ("shared_buffers", "work_mem", "maintenance_work_mem", "max_parallel_workers_per_gather",
                 "max_wal_size", "jit", "effective_cache_size"):
        settings[name] = pg.scalar(f"SHOW {name}")
    return {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count(),
            "memory_gb": round(mem_kb / 1048576, 1), "machine": platform.platform(),
            "version": pg.scalar("SELECT version()"), "settings": settings, "runs": cfg.runs,
            "rows": cfg.rows, "sf": cfg.sf, "tessera_am": cfg.tessera_am}


def cmd_run(args) -> int:
    names = list(WORKLOADS) if args.workload == "all" else args.workload.split(",")
    for n in names:
        if n not in WORKLOADS:
            print(f"unknown workload {n}; choose from {', '.join(WORKLOADS)} or all", file=sys.stderr)
            return 2
    cfg = Config(dsn=args.dsn, rows=args.rows, sf=args.sf, runs=args.runs, timeout=args.timeout,
                 tessera_am=args.tessera_am, use_duckdb=not args.no_duckdb, sweep=not args.no_sweep,
                 sweep_rows=args.sweep_rows or min(args.rows, 1_000_000),
                 pgbench_seconds=args.pgbench_seconds, small_txns=args.small_txns, query=args.query,
                 data_dir=args.data_dir)
    out = args.out or os.path.join(REPO, "bench", "results", time.strftime("%Y%m%d-%H%M%S"))
    pg = PgSide(cfg.dsn, cfg.timeout)
    results = {"meta": machine_facts(pg, cfg), "workloads": {}}
    for n in names:
        progress(f"workload {n}")
        start = time.perf_counter()
        try:
            results["workloads"][n] = WORKLOADS[n](pg, cfg)
        except Exception as e:  # one workload failing must not lose the others
            traceback.print_exc()
            results["workloads"][n] = {"error": str(e).splitlines()[0] if str(e) else type(e).__name__}
            pg.close()
            pg = PgSide(cfg.dsn, cfg.timeout)
        results["workloads"][n]["elapsed_s"] = time.perf_counter() - start
    pg.close()
    report.write_all(results, out)
    print(report.text_summary(results))
    print(f"\nreport: {out}/report.md")
    bad = report.mismatches(results)
    if bad:
        print(f"RESULTS DIFFER between heap and tessera: {', '.join(bad)}")
        return 1
    return 0


def cmd_compare(args) -> int:
    with open(args.old) as f:
        old = json.load(f)
    with open(args.new) as f:
        new = json.load(f)
    print(report.compare(old, new))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run workloads")
    r.add_argument("--dsn", default=default_dsn())
    r.add_argument("--workload", default="seed", help="comma list of seed,tpch,small,oltp,dml or all")
    r.add_argument("--query", help="only this query / test / operation name")
    r.add_argument("--rows", type=int, default=10_000_000, help="seed table rows (default 10M)")
    r.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    r.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up (default 3)")
    r.add_argument("--timeout", type=float, default=600, help="statement timeout in seconds")
    r.add_argument("--out", help="output directory (default bench/results/<timestamp>)")
    r.add_argument("--tessera-am", default="tessera", help="access method of the tessera side (heap to test the suite)")
    r.add_argument("--no-duckdb", action="store_true", help="skip the DuckDB column")
    r.add_argument("--no-sweep", action="store_true", help="skip the compression sweep")
    r.add_argument("--sweep-rows", type=int, help="rows per compression sweep load (default min(rows, 1M))")
    r.add_argument("--pgbench-seconds", type=int, default=20)
    r.add_argument("--small-txns", type=int, default=10_000, help="transactions of 10 rows (default 10000)")
    r.add_argument("--data-dir", default=os.path.join(REPO, "bench", ".data"), help="generated data cache")
    r.set_defaults(fn=cmd_run)
    c = sub.add_parser("compare", help="compare two results.json files")
    c.add_argument("old")
    c.add_argument("new")
    c.set_defaults(fn=cmd_compare)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
