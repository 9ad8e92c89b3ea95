#!/usr/bin/env python3
"""Tests of the benchmark suite's own logic, plus a tiny end-to-end run when
TESSERA_BENCH_DSN points at a cluster (TESSERA_BENCH_AM picks the access
method of the "tessera" side, default tessera)."""

import json
import os
import sys
import tempfile
import unittest
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tessera_bench import core, report  # noqa: E402

import bench  # noqa: E402


class CompareTests(unittest.TestCase):
    def test_order_insensitive(self):
        a = core.normalize_rows([(2, "b"), (1, "a")], ordered=False)
        b = core.normalize_rows([(1, "a"), (2, "b")], ordered=False)
        self.assertTrue(core.rows_equal(a, b))

    def test_order_sensitive(self):
        a = core.normalize_rows([(2,), (1,)], ordered=True)
        b = core.normalize_rows([(1,), (2,)], ordered=True)
        self.assertFalse(core.rows_equal(a, b))

    def test_ordered_query_detection(self):
        self.assertTrue(core.ordered_query("select a from t order by a"))
        self.assertFalse(core.ordered_query("select count(*) from (select a from t order by a) x"))
        self.assertTrue(core.ordered_query("SELECT a FROM t\nORDER  BY a LIMIT 3"))

    def test_numeric_exact(self):
        a = core.normalize_rows([(Decimal("1.50"),)], True)
        b = core.normalize_rows([(Decimal("1.5"),)], True)
        c = core.normalize_rows([(Decimal("1.51"),)], True)
        self.assertTrue(core.rows_equal(a, b))
        self.assertFalse(core.rows_equal(a, c))

    def test_float_tolerance(self):
        self.assertTrue(core.values_equal(0.1 + 0.2, 0.3))
        self.assertFalse(core.values_equal(1.0, 1.0001))
        self.assertTrue(core.values_equal(float("nan"), float("nan")))

    def test_nulls(self):
        a = core.normalize_rows([(None, 1), (2, None)], False)
        b = core.normalize_rows([(2, None), (None, 1)], False)
        self.assertTrue(core.rows_equal(a, b))
        self.assertFalse(core.rows_equal(a, core.normalize_rows([(None, None), (2, None)], False)))

    def test_digest(self):
        d1, d2 = core.StreamDigest(), core.StreamDigest()
        for line in (b"a", b"b", b"c"):
            d1.add_line(line)
        for line in (b"c", b"a", b"b"):
            d2.add_line(line)
        self.assertEqual(d1.value(), d2.value())
        d2.add_line(b"a")
        self.assertNotEqual(d1.value(), d2.value())
        self.assertTrue(core.answers_match(("digest", d1.value()), ("digest", d1.value())))
        self.assertIsNone(core.answers_match(None, ("digest", d1.value())))


SAMPLE = {
    "meta": {"started": "now", "cpus": 2, "memory_gb": 24, "version": "PostgreSQL 15", "runs": 3,
             "settings": {"work_mem": "4MB"}},
    "workloads": {
        "seed": {
            "load": {"heap": {"seconds": 2.0}, "tessera": {"seconds": 1.0}},
            "sizes": {"heap": {"total_bytes": 1000, "relation_bytes": 1000},
                      "tessera": {"total_bytes": 10, "relation_bytes": 10}},
            "queries": [
                {"name": "q1", "heap": {"status": "ok", "best": 2.0}, "tessera": {"status": "ok", "best": 0.5},
                 "match": True},
                {"name": "q2", "heap": {"status": "ok", "best": 1.0},
                 "tessera": {"status": "unsupported", "error": "feature not supported"}, "match": None},
            ],
            "sweep": [{"codec": "zstd-1", "rows": 10, "seconds": 0.1, "bytes": 100}],
        }
    },
}


class ReportTests(unittest.TestCase):
    def test_markdown(self):
        md = report.markdown(SAMPLE)
        self.assertIn("| q1 | 2.000 | 0.500 | 4.00x |", md)
        self.assertIn("unsupported: feature not supported", md)
        self.assertIn("zstd-1", md)

    def test_text_summary_and_mismatch(self):
        txt = report.text_summary(SAMPLE)
        self.assertIn("4.00x", txt)
        self.assertEqual(report.mismatches(SAMPLE), [])
        bad = json.loads(json.dumps(SAMPLE))
        bad["workloads"]["seed"]["queries"][0]["match"] = False
        self.assertEqual(report.mismatches(bad), ["seed/q1"])

    def test_compare(self):
        new = json.loads(json.dumps(SAMPLE))
        new["workloads"]["seed"]["queries"][0]["tessera"]["best"] = 0.25
        out = report.compare(SAMPLE, new)
        line = [l for l in out.splitlines() if "q1/tessera/best" in l][0]
        self.assertIn("-50.0%", line)

    def test_write_all_and_charts(self):
        with tempfile.TemporaryDirectory() as d:
            res = json.loads(json.dumps(SAMPLE))
            report.write_all(res, d)
            self.assertTrue(os.path.exists(os.path.join(d, "results.json")))
            self.assertTrue(os.path.exists(os.path.join(d, "report.md")))
            self.assertTrue(os.path.exists(os.path.join(d, "seed.png")))
            with open(os.path.join(d, "results.json")) as f:
                self.assertEqual(json.load(f)["workloads"]["seed"]["queries"][0]["name"], "q1")


@unittest.skipUnless(os.environ.get("TESSERA_BENCH_DSN"), "TESSERA_BENCH_DSN not set")
class EndToEndTests(unittest.TestCase):
    def test_tiny_run(self):
        am = os.environ.get("TESSERA_BENCH_AM", "tessera")
        with tempfile.TemporaryDirectory() as d:
            rc = bench.main(["run", "--workload", "seed,tpch,small,oltp,dml", "--rows", "10000",
                             "--sweep-rows", "10000", "--sf", "0.01", "--small-txns", "50",
                             "--pgbench-seconds", "1", "--runs", "1", "--no-duckdb",
                             "--tessera-am", am, "--out", d])
            self.assertEqual(rc, 0, "heap and tessera answers differ")
            with open(os.path.join(d, "results.json")) as f:
                res = json.load(f)
            w = res["workloads"]
            for name in ("seed", "tpch", "small", "oltp", "dml"):
                self.assertNotIn("error", w[name], name)
            self.assertEqual(len(w["tpch"]["queries"]), 22)
            self.assertTrue(all(q["match"] for q in w["tpch"]["queries"]))
            self.assertTrue(all(q["match"] for q in w["seed"]["queries"]))
            self.assertEqual(w["small"]["heap"]["rows"], w["small"]["tessera"]["rows"])
            self.assertGreater(w["seed"]["sizes"]["heap"]["total_bytes"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
