"""The Star Schema Benchmark workload (issue 19): ssb_data's tables at
--sf, COPY into ssb_heap and ssb_tessera, the primary keys, VACUUM ANALYZE,
and the 13 queries (q1.1 .. q4.3) on both sides with their answers
compared; DuckDB loads the same CSV files.  Timed as the TPC-H workload
times its queries: a warm-up run that captures the answer, then --runs
timed runs, best and median reported."""

from __future__ import annotations

import os

from . import ssb_data, ssb_queries
from .common import Config, ensure_extension, load_tables, run_tables_workload
from .pg import Pg, progress

SCHEMAS = {"heap": "ssb_heap", "tessera": "ssb_tessera"}


def load(pg: Pg, cfg: Config, side: str, data: str) -> tuple:
    """Create and COPY every table, the standard primary keys after the load;
    returns (load outcome, index outcome)."""
    return load_tables(pg, cfg, side, SCHEMAS[side], ssb_queries.TABLES, ssb_queries.PRIMARY_KEYS, data)


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    data, gen = ssb_data.ensure(cfg.data_dir, cfg.sf, log=progress)
    counts = ssb_data.row_counts(cfg.sf)
    data_text = (f"generated in {gen['seconds']:.1f} s ({gen['bytes'] / 2**20:,.0f} MB of CSV)" if gen else
                 "cached")
    res = {"title": f"Star Schema Benchmark, scale factor {cfg.sf:g}", "params": {"sf": cfg.sf},
           "notes": [f"SSB's five tables (lineorder {counts['lineorder']:,} rows, customer {counts['customer']:,}, "
                     f"supplier {counts['supplier']:,}, part {counts['part']:,}, date {counts['date']:,}) made by "
                     f"bench/tessera_bench/ssb_data.py (version {ssb_data.VERSION}; the specification's columns and "
                     f"uniform distributions, money in integer cents), `{os.path.basename(data)}` {data_text}. "
                     "Loaded with COPY; the load time covers all five tables. Primary keys are added after the "
                     "load (index build), then VACUUM ANALYZE (vacuum_analyze_seconds). DuckDB: in memory, the "
                     "same CSV files.",
                     "The specification's 13 queries, q1.1..q4.3 (flight 3's ORDER BY ends with its grouping "
                     "columns so that tied revenues sort alike); answers are compared in order where the query "
                     "has ORDER BY, else as multisets. By the specification's filter factors q3.3 selects about one "
                     "lineorder row in 18,000 and q3.4 one in 1.3 million: at small scale factors they may "
                     "return no rows (q3.4 below SF ~1)."],
           "load": {}, "sizes": {}, "groups": []}
    if gen:
        res["data"] = dict(gen, path=data)
    return run_tables_workload(pg, cfg, res, f"SSB SF {cfg.sf:g}", SCHEMAS, ssb_queries.TABLES,
                               ssb_queries.PRIMARY_KEYS, "ALTER TABLE ... ADD PRIMARY KEY (each table's key)",
                               ssb_queries.queries(), data)
