#!/usr/bin/env python3
"""Tests of the benchmark suite itself (stdlib unittest).

The logic tests need no server.  With TESSERA_BENCH_DSN set, a tiny
end-to-end run of every workload follows (seed and realistic 10k rows, TPC-H SF 0.01,
200 small commits, 2-second pgbench at 1 client, DML), in a database created
for it and dropped after; TESSERA_BENCH_AM picks the access method of the
"tessera" side (default tessera).

    python3 bench/test_bench.py
"""

import contextlib
import datetime
import io
import json
import os
import sys
import tempfile
import unittest
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg  # noqa: E402

import bench  # noqa: E402
from tessera_bench import answers, charts, compare, oltp, pg, report  # noqa: E402


def norm(rows, ordered=False):
    return answers.normalize_rows(rows, ordered)


class AnswerTests(unittest.TestCase):
    def test_order_insensitive(self):
        self.assertTrue(answers.rows_equal(norm([(2, "b"), (1, "a")]), norm([(1, "a"), (2, "b")])))

    def test_order_sensitive(self):
        self.assertFalse(answers.rows_equal(norm([(2,), (1,)], True), norm([(1,), (2,)], True)))
        self.assertTrue(answers.rows_equal(norm([(2,), (1,)], True), norm([(2,), (1,)], True)))

    def test_multiset_counts_duplicates(self):
        self.assertFalse(answers.rows_equal(norm([(1,), (1,), (2,)]), norm([(1,), (2,), (2,)])))

    def test_ordered_query_detection(self):
        oq = answers.ordered_query
        self.assertTrue(oq("select a from t order by a"))
        self.assertTrue(oq("SELECT a FROM t\nORDER  BY a LIMIT 3"))
        self.assertFalse(oq("select count(*) from (select a from t order by a) x"))
        self.assertFalse(oq("select a, row_number() over (order by a) from t"))
        self.assertFalse(oq("select string_agg(a, ',' order by a) from t"))
        self.assertFalse(oq("select 'order by' from t -- order by a"))
        self.assertFalse(oq("select a from t /* order by a */"))
        self.assertFalse(oq("select border by from t"))

    def test_numeric_is_exact_including_scale(self):
        self.assertTrue(answers.rows_equal(norm([(Decimal("1.50"),)]), norm([(Decimal("1.50"),)])))
        self.assertFalse(answers.rows_equal(norm([(Decimal("1.50"),)]), norm([(Decimal("1.5"),)])))
        self.assertFalse(answers.rows_equal(norm([(Decimal("1.50"),)]), norm([(Decimal("1.51"),)])))
        self.assertFalse(answers.rows_equal(norm([(Decimal("1"),)]), norm([(1,)])))

    def test_text_is_exact(self):
        self.assertFalse(answers.rows_equal(norm([("a ",)]), norm([("a",)])))

    def test_float_tolerance(self):
        eq = answers.values_equal
        self.assertTrue(eq(0.1 + 0.2, 0.3))
        self.assertTrue(eq(1e300, 1e300 * (1 + 1e-12)))
        self.assertFalse(eq(1.0, 1.0 + 1e-6))
        self.assertFalse(eq(0.0, 1e-300 * 0 + 1e-12))
        self.assertTrue(eq(float("nan"), float("nan")))
        self.assertTrue(eq(float("inf"), float("inf")))
        self.assertFalse(eq(float("inf"), float("-inf")))
        self.assertFalse(eq(1.0, None))
        self.assertFalse(eq(1.0, "1.0"))

    def test_floats_sort_alike_when_close(self):
        a = norm([(1.0000000000001, "x"), (2.0, "y")])
        b = norm([(2.0, "y"), (1.0, "x")])
        self.assertTrue(answers.rows_equal(a, b))

    def test_nulls(self):
        a = norm([(None, 1), (2, None)])
        self.assertTrue(answers.rows_equal(a, norm([(2, None), (None, 1)])))
        self.assertFalse(answers.rows_equal(a, norm([(None, None), (2, None)])))
        self.assertFalse(answers.values_equal(None, 0))
        self.assertFalse(answers.values_equal("", None))
        self.assertTrue(answers.values_equal(None, None))

    def test_mixed_types_sort(self):
        rows = [(None,), (3,), ("a",), (1.5,), (Decimal("2.0"),), (datetime.date(2024, 1, 1),)]
        self.assertEqual(len(norm(rows)), 6)
        self.assertTrue(answers.rows_equal(norm(rows), norm(list(reversed(rows)))))

    def test_dates_and_timestamps(self):
        ts = datetime.datetime(2024, 1, 1, 0, 0, 1)
        self.assertTrue(answers.rows_equal(norm([(ts,)]), norm([(datetime.datetime(2024, 1, 1, 0, 0, 1),)])))
        self.assertFalse(answers.rows_equal(norm([(ts,)]), norm([(datetime.datetime(2024, 1, 1),)])))

    def test_difference_description(self):
        self.assertEqual(answers.first_difference(norm([(1,)]), norm([(1,), (2,)])), "1 rows vs 2 rows")
        self.assertIn("row 0", answers.first_difference(norm([(1,)]), norm([(2,)])))
        self.assertIsNone(answers.answer_difference(("rows", norm([(1,)])), ("rows", norm([(1,)]))))
        self.assertIsNone(answers.answers_match(None, ("rows", [])))
        self.assertFalse(answers.answers_match(("rows", []), ("digest", (0, 0))))

    def test_stream_digest(self):
        d1, d2, d3 = answers.StreamDigest(), answers.StreamDigest(), answers.StreamDigest()
        d1.add_block(b"a\nb\nc\n")
        d2.add_block(b"c\na")          # lines straddle blocks
        d2.add_block(b"\nb\n")
        d3.add_block(b"a\nb\nb\n")
        self.assertEqual(d1.finish(), d2.finish())
        self.assertNotEqual(d1.finish(), d3.finish())
        self.assertEqual(d1.finish()[0], 3)
        self.assertTrue(answers.answers_match(("digest", d1.finish()), ("digest", d2.finish())))
        self.assertEqual(answers.answer_difference(("digest", d1.finish()), ("digest", d3.finish())),
                         "same row count, different rows")


class ErrorTests(unittest.TestCase):
    def test_classify(self):
        self.assertEqual(pg.classify_error(psycopg.errors.FeatureNotSupported("UPDATE is not supported"))[0],
                         pg.UNSUPPORTED)
        self.assertEqual(pg.classify_error(psycopg.errors.QueryCanceled("canceling statement"))[0], pg.TIMEOUT)
        self.assertEqual(pg.classify_error(psycopg.errors.DataCorrupted("bad chunk\nDETAIL: x")),
                         (pg.ERROR, "bad chunk"))

    def test_outcome(self):
        o = pg.outcome(pg.OK, [3.0, 1.0, 2.0], wal_bytes=5, nothing=None)
        self.assertEqual((o["best"], o["median"], o["wal_bytes"]), (1.0, 2.0, 5))
        self.assertNotIn("nothing", o)

    def test_pgbench_parsing(self):
        text = ("number of transactions actually processed: 12700\nnumber of failed transactions: 0 (0.000%)\n"
                "latency average = 0.078 ms\ninitial connection time = 3.661 ms\n"
                "tps = 12745.040975 (without initial connection time)\n")
        self.assertEqual(oltp.parse_pgbench(text), {"tps": 12745.040975, "latency_ms": 0.078,
                                                    "transactions": 12700, "failed": 0})
        err = ("pgbench: error: client 0 script 0 aborted in command 1 query 0: ERROR:  "
               "UPDATE is not supported on tessera tables\n")
        self.assertEqual(oltp.pgbench_error(err), "UPDATE is not supported on tessera tables")


def ok(best, **kw):
    return pg.outcome(pg.OK, [best, best * 1.5], **kw)


SAMPLE = {
    "format": 1,
    "meta": {"started": "2024-01-01 00:00:00", "nproc": 2, "cpu_count": 2, "memory_bytes": 24 * 2**30,
             "server_version": "PostgreSQL 15", "runs": 2, "timeout": 600, "git_commit": "abc1234",
             "settings": {"work_mem": "4MB"}},
    "workloads": {
        "seed": {
            "title": "seed table, 10 rows", "params": {"rows": 10}, "notes": ["a note"],
            "load": {"heap": ok(2.0, wal_bytes=2 * 2**20), "tessera": ok(1.0, wal_bytes=2**20)},
            "sizes": {"heap": {"relation_bytes": 1000 * 2**20, "total_bytes": 1000 * 2**20},
                      "tessera": {"relation_bytes": 10 * 2**20, "total_bytes": 10 * 2**20, "stripes": 1}},
            "groups": [
                {"name": "queries", "kind": "query", "items": [
                    {"name": "q1", "sql": "SELECT 1", "heap": ok(2.0), "tessera": ok(0.5), "match": True,
                     "duckdb": ok(0.1)},
                    {"name": "q2", "heap": ok(1.0), "match": None,
                     "tessera": pg.outcome(pg.UNSUPPORTED, error="tessera does not support x | y")},
                    {"name": "q3", "heap": pg.outcome(pg.TIMEOUT, error="canceling statement due to timeout"),
                     "tessera": ok(3.0), "match": None},
                ]},
                {"name": "sweep", "kind": "sweep", "rows": 10, "heap_bytes": 2**20, "items": [
                    {"name": "zstd-1", "options": "tessera_compression = 'zstd'",
                     "tessera": ok(0.1, bytes=2**19, ratio=0.5)}]},
                {"name": "writes", "kind": "write", "items": [
                    {"name": "update_10pct", "sql": "UPDATE w SET c3 = c3 + 1", "match": True,
                     "heap": ok(1.0, wal_bytes=4 * 2**20, rowcount=1, bytes_before=2**20, bytes_after=2**21),
                     "tessera": ok(4.0, wal_bytes=2**20, rowcount=1)}]},
            ],
        },
        "oltp": {
            "title": "OLTP", "params": {"rows": 10},
            "groups": [{"name": "pgbench", "kind": "pgbench", "items": [
                {"name": "point_select_c1", "clients": 1, "heap": pg.outcome(pg.OK, tps=1000.0, latency_ms=1.0),
                 "tessera": pg.outcome(pg.OK, tps=500.0, latency_ms=2.0)},
                {"name": "update_c1", "clients": 1, "heap": pg.outcome(pg.OK, tps=1000.0, latency_ms=1.0),
                 "tessera": pg.outcome(pg.UNSUPPORTED, error="UPDATE is not supported")}]}],
        },
    },
}


def sample():
    return json.loads(json.dumps(SAMPLE))


class ReportTests(unittest.TestCase):
    def test_markdown(self):
        md = report.markdown(sample(), {"seed": "seed.png"})
        self.assertIn("| q1 | 2.00 | 2.50 | 0.500 | 0.625 | 4.00x | 0.100 | yes |", md)
        self.assertIn("unsupported: tessera does not support x \\| y", md)
        self.assertIn("| q3 | timeout | - | 3.00 | 3.75 | - | - | - |", md)
        self.assertIn("| pg_total_relation_size | 1000 | 10.0 | 0.0100 |", md)
        self.assertIn("| zstd-1 |", md)
        self.assertIn("| point_select_c1 | 1 | 1,000 | 1.000 | 500 | 2.000 | 0.50x |", md)
        self.assertIn("unsupported: UPDATE is not supported", md)
        self.assertIn("| update_10pct | 1.00 | 4.00 | 0.25x | 4.00 | 1.00 | 0.2500 | 2.00 | - | 1 | yes |", md)
        self.assertIn("![seed](seed.png)", md)
        self.assertIn("speedup = heap time / tessera time", md)
        self.assertIn("| work_mem | 4MB |", md)

    def test_text_summary(self):
        txt = report.text_summary(sample())
        self.assertIn("load: heap 2.00 s | tessera 1.00 s | speedup 2.00x", txt)
        lines = txt.splitlines()
        q1 = [line for line in lines if line.strip().startswith("q1 ")][0]
        self.assertEqual([c.strip() for c in q1.split("|")], ["q1", "2.00", "0.500", "4.00x", "0.100", "yes"])
        self.assertTrue(any(line.split("|")[0].strip() == "pg_total_relation_size" and "0.0100" in line
                            for line in lines))

    def test_problems(self):
        self.assertEqual(report.problems(sample()), ([], []))
        bad = sample()
        bad["workloads"]["seed"]["groups"][0]["items"][0]["match"] = False
        bad["workloads"]["oltp"]["groups"][0]["items"][0]["tessera"] = pg.outcome(pg.ERROR, error="boom")
        bad["workloads"]["dml"] = {"error": "RuntimeError: x"}
        mism, errs = report.problems(bad)
        self.assertEqual(mism, ["seed/q1"])
        self.assertEqual(len(errs), 2)

    def test_formats(self):
        self.assertEqual(report.fmt_x(4), "4.00x")
        self.assertEqual(report.fmt_x(None), "-")
        self.assertEqual(report.speedup({"heap": ok(1.0), "tessera": pg.outcome(pg.TIMEOUT)}), None)
        self.assertEqual(report.md_table(["a", "b"], [["x|y", "1.5"]]),
                         ["| a | b |", "|---|---:|", "| x\\|y | 1.5 |"])


class CompareTests(unittest.TestCase):
    def test_flatten(self):
        flat = compare.flatten(sample())
        self.assertEqual(flat["seed/queries/q1/tessera/best"], 0.5)
        self.assertEqual(flat["seed/queries/q1/speedup"], 4.0)
        self.assertEqual(flat["oltp/pgbench/point_select_c1/speedup"], 0.5)
        self.assertEqual(flat["seed/sizes/tessera/total_bytes"], 10 * 2**20)
        self.assertNotIn("seed/queries/q2/speedup", flat)

    def test_compare(self):
        new = sample()
        new["workloads"]["seed"]["groups"][0]["items"][0]["tessera"]["best"] = 0.25
        new["workloads"]["oltp"]["groups"][0]["items"][0]["tessera"]["tps"] = 750.0
        out = compare.compare(sample(), new)
        line = [x for x in out.splitlines() if x.startswith("seed/queries/q1/tessera/best ")][0]
        self.assertIn("-50.0%", line)
        self.assertTrue(line.endswith("better"))
        line = [x for x in out.splitlines() if x.startswith("seed/queries/q1/speedup ")][0]
        self.assertIn("+100.0%", line)
        self.assertTrue(line.endswith("better"))
        line = [x for x in out.splitlines() if x.startswith("oltp/pgbench/point_select_c1/tessera/tps ")][0]
        self.assertTrue(line.endswith("better"))
        self.assertNotIn("NOTE", out)
        new["workloads"]["seed"]["params"]["rows"] = 20
        self.assertIn("NOTE: the runs' parameters differ", compare.compare(sample(), new))

    def test_compare_cli(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            for p in (a, b):
                with open(p, "w") as f:
                    json.dump(SAMPLE, f)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                self.assertEqual(bench.main(["compare", a, b]), 0)
            self.assertIn("seed/queries/q1/heap/best", buf.getvalue())
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(bench.main(["compare", a, os.path.join(d, "missing.json")]), 2)


class OutputTests(unittest.TestCase):
    def test_write_outputs(self):
        with tempfile.TemporaryDirectory() as d:
            res = sample()
            bench.write_outputs(res, d)
            for f in ("results.json", "report.md", "seed.png", "oltp.png", "sizes.png"):
                self.assertTrue(os.path.getsize(os.path.join(d, f)) > 0, f)
            with open(os.path.join(d, "results.json")) as f:
                self.assertEqual(json.load(f)["workloads"]["seed"]["groups"][0]["items"][0]["name"], "q1")
            with open(os.path.join(d, "report.md")) as f:
                self.assertIn("![sizes](sizes.png)", f.read())

    def test_log_scale_rule(self):
        self.assertFalse(charts.wants_log([1, 5], [1, 2]))
        self.assertTrue(charts.wants_log([0.01, 5], [1, 2]))
        self.assertTrue(charts.wants_log([1, 2], [0.5, 20]))

    def test_cli_rejects_bad_arguments(self):
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(bench.main(["run", "--workload", "nosuch", "--dsn", "port=1"]), 2)
            self.assertEqual(bench.main(["run", "--workload", "seed", "--query", "q06", "--dsn", "port=1"]), 2)


DSN = os.environ.get("TESSERA_BENCH_DSN")

# Makes the *_tessera schemas behave like a tessera without UPDATE, DELETE and
# indexes: their errors are feature_not_supported, as tessera's were.
REFUSING_DDL = """
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is not supported', TG_OP USING ERRCODE = 'feature_not_supported';
END $$;
CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE schema_name LIKE '%tessera' LOOP
        IF r.command_tag = 'CREATE INDEX' OR (r.command_tag = 'ALTER TABLE' AND r.object_type = 'table') THEN
            RAISE EXCEPTION 'PRIMARY KEY is not supported' USING ERRCODE = 'feature_not_supported';
        ELSIF r.command_tag = 'CREATE TABLE' THEN
            EXECUTE format('CREATE TRIGGER refuse BEFORE UPDATE OR DELETE ON %s '
                           'FOR EACH ROW EXECUTE FUNCTION refuse()', r.object_identity);
        END IF;
    END LOOP;
END $$;
CREATE EVENT TRIGGER refuse_ddl ON ddl_command_end EXECUTE FUNCTION refuse_ddl();
"""
AM = os.environ.get("TESSERA_BENCH_AM", "tessera")


@unittest.skipUnless(DSN, "TESSERA_BENCH_DSN not set")
class EndToEndTests(unittest.TestCase):
    """A tiny run of every workload against a real server."""

    @classmethod
    def setUpClass(cls):
        cls.dbname = f"tessera_bench_test_{os.getpid()}"
        cls.dsn = psycopg.conninfo.make_conninfo(DSN, dbname=cls.dbname)
        with psycopg.connect(DSN, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {cls.dbname}")
            c.execute(f"CREATE DATABASE {cls.dbname}")

    @classmethod
    def tearDownClass(cls):
        with psycopg.connect(DSN, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {cls.dbname} WITH (FORCE)")

    def run_bench(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = bench.main(["run", "--dsn", self.dsn, "--tessera-am", AM, *args])
        return rc, out.getvalue()

    def test_tiny_run_of_every_workload(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out = self.run_bench("--workload", "all", "--rows", "10000", "--sweep-rows", "10000",
                                     "--sf", "0.01", "--small-txns", "200", "--pgbench-seconds", "2",
                                     "--pgbench-clients", "1", "--runs", "1", "--no-duckdb", "--out", d)
            self.assertEqual(rc, 0, out)
            with open(os.path.join(d, "results.json")) as f:
                res = json.load(f)
            w = res["workloads"]
            for name in ("seed", "realistic", "tpch", "small", "oltp", "dml"):
                self.assertNotIn("error", w[name], name)
                self.assertTrue(os.path.exists(os.path.join(d, f"{name}.png")), name)
            for f in ("report.md", "sizes.png"):
                self.assertTrue(os.path.exists(os.path.join(d, f)))

            def items(workload, group):
                return [g for g in w[workload]["groups"] if g["name"] == group][0]["items"]
            tpch_q = items("tpch", "queries")
            self.assertEqual(len(tpch_q), 22)
            self.assertTrue(all(q["match"] for q in tpch_q), [q["name"] for q in tpch_q if not q["match"]])
            seed_q = items("seed", "queries")
            self.assertEqual(len(seed_q), 8)
            self.assertTrue(all(q["match"] for q in seed_q))
            real_q = items("realistic", "queries")
            self.assertEqual(len(real_q), 5)
            self.assertTrue(all(q["match"] for q in real_q), [q["name"] for q in real_q if not q["match"]])
            lookups = items("realistic", "pgbench")
            self.assertEqual([it["name"] for it in lookups], ["point_lookup_c2"])
            self.assertEqual(lookups[0]["heap"]["status"], "ok", lookups[0]["heap"])
            for it in items("seed", "writes") + items("dml", "operations"):
                statuses = {it["heap"]["status"], it["tessera"]["status"]}
                self.assertIn(it["match"], (True, None) if statuses != {"ok"} else (True,), it["name"])
            self.assertTrue(items("small", "writes")[0]["match"])
            self.assertEqual(len(items("oltp", "pgbench")), 4)
            for it in items("oltp", "pgbench"):
                self.assertEqual(it["heap"]["status"], "ok", it["heap"])
                self.assertIn(it["tessera"]["status"], ("ok", "unsupported"))
            self.assertEqual(len(items("seed", "sweep")), 6 if AM == "tessera" else 0)
            self.assertGreater(w["seed"]["sizes"]["heap"]["total_bytes"], 0)
            self.assertIn("select_c2", out)
            # every schema the run created is gone
            with psycopg.connect(self.dsn) as c:
                left = c.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench\\_%' "
                                 "OR nspname LIKE 'tpch\\_%'").fetchall()
            self.assertEqual(left, [])
            self.assertIn("seed/queries/count_c1/tessera/best", compare.compare(res, res))

    def test_timeout_and_unsupported_are_reported(self):
        conn = pg.Pg(self.dsn, 0.2)
        try:
            o, ans = pg.time_query(conn, "SELECT pg_sleep(2)", 1)
            self.assertEqual((o["status"], ans), (pg.TIMEOUT, None))
            o, ans = pg.time_query(conn, "SELECT count(*) FROM pg_class FOR UPDATE", 1)
            self.assertEqual(o["status"], pg.UNSUPPORTED)
            o, ans = pg.time_query(conn, "SELECT 1 AS x ORDER BY 1", 2)
            self.assertEqual((o["status"], len(o["runs"]), ans), (pg.OK, 2, ("rows", [(1,)])))
        finally:
            conn.close()

    def test_streamed_runs_are_timed_by_psql(self):
        """Streamed queries' timed runs: psql discards the rows and reports
        the time; the search path and the statement timeout apply there too."""
        conn = pg.Pg(self.dsn, 0.3)
        try:
            conn.execute("CREATE SCHEMA IF NOT EXISTS stream_test")
            conn.execute("CREATE TABLE IF NOT EXISTS stream_test.only_here (x int)")
            conn.set_search_path("stream_test")
            o, ans = pg.time_query(conn, "SELECT x FROM only_here", 2, stream=True)
            self.assertEqual((o["status"], len(o["runs"]), ans[0]), (pg.OK, 2, "digest"))
            self.assertTrue(all(0 <= r < 5 for r in o["runs"]))
            o, ans = pg.time_query(conn, "SELECT pg_sleep(0.05)::text FROM generate_series(1, 20)",
                                   1, stream=True)
            self.assertEqual(o["status"], pg.TIMEOUT)
        finally:
            conn.set_search_path(None)
            conn.execute("DROP SCHEMA stream_test CASCADE")
            conn.close()

    def test_unsupported_features_are_reported(self):
        """tessera before UPDATE/DELETE/index support, simulated on heap: in a
        database whose event trigger refuses indexes and adds a trigger that
        refuses UPDATE and DELETE (feature_not_supported) to every table in a
        *_tessera schema."""
        dbname = self.dbname + "_unsup"
        dsn = psycopg.conninfo.make_conninfo(DSN, dbname=dbname)
        with psycopg.connect(DSN, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {dbname}")
            c.execute(f"CREATE DATABASE {dbname}")
        try:
            with psycopg.connect(dsn, autocommit=True) as c:
                try:
                    c.execute(REFUSING_DDL)
                except psycopg.errors.InsufficientPrivilege:
                    self.skipTest("event triggers need a superuser")
            with tempfile.TemporaryDirectory() as d:
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    rc = bench.main(["run", "--dsn", dsn, "--tessera-am", "heap", "--workload", "seed,dml",
                                     "--rows", "10000", "--no-sweep", "--runs", "1", "--no-duckdb", "--out", d])
                self.assertEqual(rc, 0, out.getvalue())
                with open(os.path.join(d, "results.json")) as f:
                    w = json.load(f)["workloads"]
            groups = {g["name"]: g["items"] for g in w["seed"]["groups"]}
            self.assertTrue(all(q["match"] for q in groups["queries"]))
            key = groups["index build"][0]
            self.assertEqual((key["heap"]["status"], key["tessera"]["status"]), ("ok", "unsupported"))
            self.assertIn("PRIMARY KEY is not supported", key["tessera"]["error"])
            for it in groups["writes"]:
                self.assertEqual((it["heap"]["status"], it["tessera"]["status"], it["match"]),
                                 ("ok", "unsupported", None), it["name"])
            ops = {it["name"]: it for it in w["dml"]["groups"][0]["items"]}
            self.assertEqual(ops["update"]["tessera"]["status"], "unsupported")
            self.assertEqual(ops["truncate"]["tessera"]["status"], "ok")
            self.assertIn("unsupported: UPDATE is not supported", out.getvalue())
        finally:
            with psycopg.connect(DSN, autocommit=True) as c:
                c.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")

    def test_one_query(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out = self.run_bench("--workload", "seed", "--rows", "10000", "--query", "count_c1",
                                     "--runs", "1", "--no-duckdb", "--out", d)
            self.assertEqual(rc, 0, out)
            with open(os.path.join(d, "results.json")) as f:
                groups = json.load(f)["workloads"]["seed"]["groups"]
            self.assertEqual([g["name"] for g in groups], ["queries"])
            self.assertEqual([i["name"] for i in groups[0]["items"]], ["count_c1"])


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{result.testsRun - failed - len(result.skipped)} passed, {failed} failed, {len(result.skipped)} skipped")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
