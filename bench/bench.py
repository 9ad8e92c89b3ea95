#!/usr/bin/env python3
"""tessera benchmark: each workload on a heap table and a tessera table in
the same run, answers compared, report + JSON + charts written.

  bench.py run [--workload seed,realistic,tpch,ssb,clickbench,small,oltp,dml,logical,parquet|all] [--query NAME] [--rows N] [--sf X] ...
  bench.py compare old.json new.json

speedup = heap time / tessera time (> 1: tessera faster); sizes: tessera / heap.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg  # noqa: E402

from tessera_bench import (WORKLOADS, clickbench_queries, dml, machine, oltp, realistic, seed, small,  # noqa: E402
                           ssb_queries, tpch_queries)
from tessera_bench.charts import write_charts  # noqa: E402
from tessera_bench.common import Config, ensure_extension  # noqa: E402
from tessera_bench.compare import compare  # noqa: E402
from tessera_bench.pg import Pg, progress  # noqa: E402
from tessera_bench.report import markdown, problems, text_summary  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_dsn() -> str:
    return os.environ.get("TESSERA_BENCH_DSN") or f"host={REPO}/.pgdata port=5477 dbname=postgres user=postgres"


def selectable_names(workload: str, rows: int) -> list:
    """What --query can name in each workload."""
    if workload == "seed":
        return ([q[0] for q in seed.queries(rows)] + ["sweep", "primary_key"] +
                [w[0] for w in seed.write_ops(rows)])
    if workload == "realistic":
        return [q[0] for q in realistic.queries(rows)] + ["point_lookup"]
    if workload == "tpch":
        return list(tpch_queries.QUERIES)
    if workload == "ssb":
        return list(ssb_queries.QUERIES)
    if workload == "clickbench":
        return list(clickbench_queries.QUERIES)
    if workload == "small":
        return ["scan"] + [f"mix_{name}" for name in small.MIX_QUERIES]
    if workload == "oltp":
        return list(oltp.SCRIPTS)
    return [op[0] for op in dml.operations(rows)]


def write_outputs(results: dict, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    charts = write_charts(results, out)
    results["charts"] = charts
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(results, charts))


def cmd_run(args) -> int:
    names = list(WORKLOADS) if args.workload == "all" else [n.strip() for n in args.workload.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        print(f"unknown workload {', '.join(unknown)}; choose from {', '.join(WORKLOADS)} or all", file=sys.stderr)
        return 2
    if args.query:
        q = args.query.lower()
        having = [n for n in names if any(q == x or (x.startswith("q0") and q == "q" + x[2:])
                                          for x in selectable_names(n, args.rows))]
        if not having:
            choices = "; ".join(f"{n}: {', '.join(selectable_names(n, args.rows))}" for n in names)
            print(f"no query named {args.query} in {', '.join(names)} ({choices})", file=sys.stderr)
            return 2
        names = having
    clients = None
    if args.pgbench_clients:
        clients = [int(c) for c in args.pgbench_clients.split(",")]
    cfg = Config(dsn=args.dsn, rows=args.rows, sf=args.sf, runs=args.runs, timeout=args.timeout,
                 tessera_am=args.tessera_am, use_duckdb=not args.no_duckdb, sweep=not args.no_sweep,
                 sweep_rows=args.sweep_rows or min(args.rows, 1_000_000), pgbench_seconds=args.pgbench_seconds,
                 pgbench_clients=clients, small_txns=args.small_txns, query=args.query, data_dir=args.data_dir,
                 keep=args.keep, duckdb_threads=args.duckdb_threads, drop_caches=not args.no_drop_caches)
    out = args.out or os.path.join(REPO, "bench", "results", time.strftime("%Y%m%d-%H%M%S"))

    try:
        pg = Pg(cfg.dsn, cfg.timeout)
    except psycopg.Error as e:
        print(f"cannot connect to '{cfg.dsn}': {str(e).strip()}\n(start the README's cluster with "
              "scripts/demo.sh, or pass --dsn / set TESSERA_BENCH_DSN)", file=sys.stderr)
        return 2
    try:
        ensure_extension(pg, cfg)
    except psycopg.Error as e:
        print(f"CREATE EXTENSION tessera failed: {str(e).strip()} "
              "(is shared_preload_libraries = 'tessera' set?)", file=sys.stderr)
        return 2

    meta = machine.facts(pg, REPO)
    meta.update(command="bench.py " + " ".join(shlex.quote(a) for a in args.argv), dsn=cfg.dsn, runs=cfg.runs,
                timeout=cfg.timeout, tessera_am=cfg.tessera_am, workloads=names, query=cfg.query)
    results = {"format": 1, "meta": meta, "workloads": {}}
    interrupted = server_gone = False
    for i, name in enumerate(names, 1):
        progress(f"workload {name} ({i}/{len(names)})")
        start = time.perf_counter()
        try:
            results["workloads"][name] = WORKLOADS[name](pg, cfg)
        except KeyboardInterrupt:
            results["workloads"][name] = {"error": "interrupted"}
            interrupted = True
        except Exception as e:  # one workload failing must not lose the others
            traceback.print_exc()
            msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
            results["workloads"][name] = {"error": f"{type(e).__name__}: {msg}"}
            try:
                pg.recover()
            except psycopg.Error as again:
                progress(f"cannot reach the server any more ({again}); stopping")
                server_gone = True
        results["workloads"][name]["elapsed_seconds"] = round(time.perf_counter() - start, 3)
        progress(f"workload {name} done in {results['workloads'][name]['elapsed_seconds']:.1f} s")
        if interrupted or server_gone:
            break
    pg.close()

    write_outputs(results, out)
    print(text_summary(results))
    print(f"\nreport: {os.path.join(out, 'report.md')}")
    mismatches, errors = problems(results)
    if mismatches:
        print(f"RESULTS DIFFER between heap and tessera: {', '.join(mismatches)}")
    if errors:
        print("ERRORS:\n  " + "\n  ".join(errors))
    if interrupted:
        return 130
    return 1 if mismatches or errors else 0


def cmd_compare(args) -> int:
    try:
        with open(args.old) as f:
            old = json.load(f)
        with open(args.new) as f:
            new = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read results: {e}", file=sys.stderr)
        return 2
    print(compare(old, new))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run workloads on heap and tessera",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    r.add_argument("--dsn", default=default_dsn(),
                   help="libpq connection string (env TESSERA_BENCH_DSN, else the README's cluster)")
    r.add_argument("--workload", default="seed",
                   help="comma list of seed,realistic,tpch,ssb,clickbench,small,oltp,dml,logical,parquet, or all")
    r.add_argument("--query",
                   help="run only this query / operation / pgbench script (e.g. count_c1, q06, q2.1, update)")
    r.add_argument("--rows", type=int, default=10_000_000,
                   help="rows of the seed, realistic and ClickBench tables (seed, realistic, clickbench, oltp, dml)")
    r.add_argument("--sf", type=float, default=1.0, help="TPC-H and SSB scale factor")
    r.add_argument("--runs", type=int, default=3,
                   help="timed runs per query after the warm-up run (clickbench: runs in all, the first cold)")
    r.add_argument("--timeout", type=float, default=600, help="statement_timeout per query, seconds")
    r.add_argument("--out", help="output directory (default bench/results/<timestamp>)")
    r.add_argument("--tessera-am", default="tessera",
                   help="access method of the 'tessera' side (heap: test the suite itself)")
    r.add_argument("--no-duckdb", action="store_true", help="no DuckDB column even if duckdb is installed")
    r.add_argument("--duckdb-threads", type=int, help="DuckDB threads (default: DuckDB's own, all cores)")
    r.add_argument("--no-drop-caches", action="store_true",
                   help="clickbench: do not drop the OS page cache before each query's cold run")
    r.add_argument("--sweep-rows", type=int, help="rows per compression-sweep load (default min(rows, 1M))")
    r.add_argument("--no-sweep", action="store_true", help="skip the compression sweep")
    r.add_argument("--pgbench-seconds", type=int, default=20, help="pgbench -T per test")
    r.add_argument("--pgbench-clients", help="only these client counts, e.g. 1 or 1,4 (default 1,2,4 / 1,4)")
    r.add_argument("--small-txns", type=int, default=10_000, help="small-commit transactions of 10 rows")
    r.add_argument("--data-dir", default=os.path.join(REPO, "bench", ".data"), help="cache of generated data (TPC-H, SSB, realistic, clickbench)")
    r.add_argument("--keep", action="store_true", help="keep the benchmark schemas instead of dropping them")
    r.set_defaults(fn=cmd_run)
    c = sub.add_parser("compare", help="compare two results.json files figure by figure")
    c.add_argument("old")
    c.add_argument("new")
    c.set_defaults(fn=cmd_compare)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    args.argv = argv
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
