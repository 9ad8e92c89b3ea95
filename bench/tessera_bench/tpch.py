"""The TPC-H workload: tpchgen-cli data, COPY into tpch_heap and
tpch_tessera, the standard primary keys, the 22 queries on both sides with
their answers compared."""

from __future__ import annotations

import os
import shutil
import subprocess

from . import tpch_queries
from .common import Config, ensure_extension, load_tables, run_tables_workload
from .pg import Pg, progress

SCHEMAS = {"heap": "tpch_heap", "tessera": "tpch_tessera"}


def data_dir(cfg: Config) -> str:
    """CSV files of scale factor cfg.sf, generated once and cached."""
    d = os.path.join(cfg.data_dir, f"tpch-sf{cfg.sf:g}")
    if all(os.path.exists(os.path.join(d, f"{t}.csv")) for t in tpch_queries.TABLES):
        return d
    tool = shutil.which("tpchgen-cli")
    if tool is None:
        raise RuntimeError("tpchgen-cli is not installed (run bench/setup.sh)")
    tmp = d + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    progress(f"  generating TPC-H SF {cfg.sf:g} into {d}")
    subprocess.run([tool, "csv", "-s", f"{cfg.sf:g}", f"--output-dir={tmp}"], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    return d


def load(pg: Pg, cfg: Config, side: str, data: str) -> tuple:
    """Create and COPY every table, the standard primary keys after the load;
    returns (load outcome, index outcome)."""
    return load_tables(pg, cfg, side, SCHEMAS[side], tpch_queries.TABLES, tpch_queries.PRIMARY_KEYS, data)


def run(pg: Pg, cfg: Config) -> dict:
    ensure_extension(pg, cfg)
    data = data_dir(cfg)
    res = {"title": f"TPC-H, scale factor {cfg.sf:g}", "params": {"sf": cfg.sf},
           "notes": ["Data from tpchgen-cli (CSV), loaded with COPY; the load time covers all eight tables. "
                     "Primary keys are added after the load (index build). "
                     "Queries use the specification's validation parameters; answers are compared "
                     "in order where the query has ORDER BY, else as multisets."],
           "load": {}, "sizes": {}, "groups": []}
    return run_tables_workload(pg, cfg, res, f"TPC-H SF {cfg.sf:g}", SCHEMAS, tpch_queries.TABLES,
                               tpch_queries.PRIMARY_KEYS, "ALTER TABLE ... ADD PRIMARY KEY (standard keys)",
                               tpch_queries.queries(cfg.sf), data)
