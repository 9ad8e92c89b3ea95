"""tessera's benchmark suite: heap and tessera side by side in one run.

Workloads (each a function (Pg, Config) -> result dict, see common.py):
seed, realistic, tpch, ssb, clickbench, small, oltp, dml, logical, parquet.
"""

from . import clickbench, dml, logical, oltp, parquet, realistic, seed, small, ssb, tpch

WORKLOADS = {
    "seed": seed.run,
    "realistic": realistic.run,
    "tpch": tpch.run,
    "ssb": ssb.run,
    "clickbench": clickbench.run,
    "small": small.run,
    "oltp": oltp.run,
    "dml": dml.run,
    "logical": logical.run,
    "parquet": parquet.run,
}
