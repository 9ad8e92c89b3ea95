-- TesseraAgg over Parquet and Arrow files: a tessera_parquet table's rows
-- aggregated as column vectors (plan.h, TesseraBatchSource).  Every query
-- is run three ways and must give the same rows: TesseraAgg over the file,
-- PostgreSQL's own aggregation over the same foreign table, and the heap
-- table the file was written from; serially and in parallel, over Parquet
-- (two files of several row groups) and Arrow.
SET client_min_messages = warning;
SELECT current_setting('data_directory') AS datadir \gset
\set fa :datadir '/regress_agg_1.parquet'
\set fb :datadir '/regress_agg_2.parquet'
\set fc :datadir '/regress_agg.arrow'

CREATE TABLE agg_src (id int, k smallint, big bigint, n numeric(12,2), u numeric(20,9), f float8,
                      t text, c char(5), v varchar(10), d date, ts timestamp, tz timestamptz, b bool);
INSERT INTO agg_src
SELECT i, (i % 7)::smallint, (i::bigint * 7919) % 100003 - 50000,
       CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 37) % 20000 - 9000) / 100.0 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE round((i % 1000) / 7.0, 5) END,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 100) / 4.0 END,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 5 = 0 THEN '' ELSE 'word ' || (i % 23) END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE chr(65 + i % 3) || (i % 4) END,
       CASE WHEN i % 31 = 0 THEN NULL ELSE 'v' || (i % 9) END,
       CASE WHEN i % 37 = 0 THEN NULL ELSE date '2020-01-01' + (i % 900) END,
       timestamp '2021-06-01 00:00' + i * interval '17 min',
       timestamptz '2021-06-01 00:00+00' + (i % 5000) * interval '1 hour',
       CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END
FROM generate_series(1, 20000) i;
COPY (SELECT * FROM agg_src WHERE id <= 12000) TO :'fa' (ROW_GROUP_SIZE 2500);
COPY (SELECT * FROM agg_src WHERE id > 12000) TO :'fb' (ROW_GROUP_SIZE 3000, COMPRESSION zstd);
COPY agg_src TO :'fc' (FORMAT arrow);

CREATE FOREIGN DATA WRAPPER tessera_parquet HANDLER tessera.parquet_fdw_handler VALIDATOR tessera.parquet_fdw_validator;
CREATE SERVER agg_files FOREIGN DATA WRAPPER tessera_parquet;
CREATE FOREIGN TABLE agg_pq (id int, k smallint, big bigint, n numeric(12,2), u numeric, f float8,
                             t text, c char(5), v varchar(10), d date, ts timestamp, tz timestamptz, b bool)
    SERVER agg_files OPTIONS (filename 'regress_agg_*.parquet');
CREATE FOREIGN TABLE agg_arrow (id int, k smallint, big bigint, n numeric(12,2), u numeric, f float8,
                                t text, c char(5), v varchar(10), d date, ts timestamp, tz timestamptz, b bool)
    SERVER agg_files OPTIONS (filename 'regress_agg.arrow');

-- ANALYZE samples the files' rows: the planner knows the groups to expect
ANALYZE agg_pq;
SELECT attname, n_distinct, null_frac > 0 AS has_nulls FROM pg_stats
WHERE tablename = 'agg_pq' AND attname IN ('k', 'c', 'b', 'id') ORDER BY 1;
SELECT reltuples FROM pg_class WHERE relname = 'agg_pq';

-- q run over tbl (for %s) by TesseraAgg, by PostgreSQL, and over agg_src:
-- the rows that differ, and whether TesseraAgg ran (it does not take a
-- bool group key nor two count(DISTINCT) columns: PostgreSQL's plan runs)
CREATE FUNCTION agg_check(tbl text, q text, OUT tessera_agg bool, OUT differ_pg bigint,
                          OUT differ_heap bigint) LANGUAGE plpgsql AS $$
DECLARE
    mine text := format(q, tbl);
    plan text;
BEGIN
    tessera_agg := false;
    FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || mine LOOP
        tessera_agg := tessera_agg OR plan LIKE '%TesseraAgg%';
    END LOOP;
    EXECUTE 'CREATE TEMP TABLE agg_mine AS SELECT x::text AS r FROM (' || mine || ') x';
    SET LOCAL tessera.enable_custom_agg = off;
    EXECUTE 'CREATE TEMP TABLE agg_theirs AS SELECT x::text AS r FROM (' || mine || ') x';
    EXECUTE 'CREATE TEMP TABLE agg_heap AS SELECT x::text AS r FROM (' || format(q, 'agg_src') || ') x';
    SET LOCAL tessera.enable_custom_agg = on;
    EXECUTE 'SELECT count(*) FROM ((TABLE agg_mine EXCEPT ALL TABLE agg_theirs) UNION ALL
                                   (TABLE agg_theirs EXCEPT ALL TABLE agg_mine)) x' INTO differ_pg;
    EXECUTE 'SELECT count(*) FROM ((TABLE agg_mine EXCEPT ALL TABLE agg_heap) UNION ALL
                                   (TABLE agg_heap EXCEPT ALL TABLE agg_mine)) x' INTO differ_heap;
    DROP TABLE agg_mine, agg_theirs, agg_heap;
END $$;

CREATE TABLE agg_queries (q text);
INSERT INTO agg_queries VALUES
    ('SELECT count(*), count(n), sum(n), avg(n), min(n), max(n) FROM %s'),
    ('SELECT count(u), sum(u), avg(u), min(u), max(u) FROM %s'),
    ('SELECT sum(id), avg(k), sum(big), min(big), max(big), min(d), max(d), min(ts), max(tz) FROM %s'),
    ('SELECT k, count(*), sum(n), avg(n), sum(big) FROM %s GROUP BY k'),
    ('SELECT t, count(*), count(t), sum(n), min(c), max(v) FROM %s GROUP BY t'),
    ('SELECT c, v, count(*), sum(id) FROM %s GROUP BY c, v'),
    ('SELECT d, count(*) FROM %s WHERE d >= date ''2021-01-01'' GROUP BY d'),
    ('SELECT k, count(*), sum(n * 2 - 1), sum(n * (1 - n)), avg(n * u) FROM %s GROUP BY k'),
    ('SELECT b, count(*), sum(n) FROM %s GROUP BY b'),
    ('SELECT count(*), sum(n), sum(u) FROM %s WHERE n BETWEEN -10 AND 50.5 AND u > 3'),
    ('SELECT count(*) FROM %s WHERE t = ''word 3'' OR t LIKE ''%%1%%'''),
    ('SELECT count(*), sum(id) FROM %s WHERE c = ''A1'' AND v <> ''v2'''),
    ('SELECT count(*) FROM %s WHERE ts < ''2021-09-01'' AND d > ''2020-03-01'''),
    ('SELECT count(*), count(DISTINCT t) FROM %s'),
    ('SELECT count(*), count(DISTINCT t), count(DISTINCT k) FROM %s'),
    ('SELECT k, count(DISTINCT c) FROM %s GROUP BY k'),
    ('SELECT count(*) FILTER (WHERE n > 0), sum(n) FILTER (WHERE k = 3) FROM %s'),
    ('SELECT extract(month FROM d) AS m, count(*), sum(n) FROM %s GROUP BY 1'),
    ('SELECT date_trunc(''day'', tz) AS day, count(*) FROM %s GROUP BY 1'),
    ('SELECT length(t) AS l, upper(c) AS uc, count(*) FROM %s GROUP BY 1, 2'),
    ('SELECT k, sum(n) FROM %s GROUP BY k HAVING sum(n) > 1000'),
    ('SELECT t FROM %s GROUP BY t'),
    ('SELECT k, sum(f), avg(f), min(f), max(f) FROM %s GROUP BY k'),
    ('SELECT count(*) FROM %s WHERE id IN (1, 7, 19999, 25000)');

-- star joins with the file as the fact table: a dimension by its unique
-- key (k = 6 has none), semi and anti joins on a date
CREATE TABLE agg_dim (k smallint PRIMARY KEY, label text, weight int) USING tessera;
INSERT INTO agg_dim SELECT g, 'label ' || (g % 3), g * 10 FROM generate_series(0, 5) g;
CREATE TABLE agg_days (d date) USING heap;
INSERT INTO agg_days SELECT date '2020-01-01' + g * 3 FROM generate_series(0, 400) g;
ANALYZE agg_dim, agg_days;
INSERT INTO agg_queries VALUES
    ('SELECT d.label, count(*), sum(f.n), sum(d.weight), max(f.t) FROM %s f JOIN agg_dim d ON f.k = d.k GROUP BY d.label'),
    ('SELECT f.c, count(*), sum(f.n) FROM %s f WHERE EXISTS (SELECT 1 FROM agg_days x WHERE x.d = f.d) GROUP BY f.c'),
    ('SELECT count(*), count(f.d) FROM %s f WHERE NOT EXISTS (SELECT 1 FROM agg_days x WHERE x.d = f.d)');

SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT d.label, count(*) FROM agg_pq f JOIN agg_dim d ON f.k = d.k GROUP BY d.label;
SELECT q, (agg_check('agg_pq', q)).* FROM agg_queries;
SELECT q, (agg_check('agg_arrow', q)).* FROM agg_queries WHERE q NOT LIKE '%%f)%%';

-- in parallel: row groups (record batches) handed out to the processes
-- (float sums add in another order there: left out)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT k, count(*), sum(n) FROM agg_pq GROUP BY k;
SELECT q, (agg_check('agg_pq', q)).* FROM agg_queries WHERE q NOT LIKE '%%sum(f)%%';
SELECT q, (agg_check('agg_arrow', q)).* FROM agg_queries WHERE q NOT LIKE '%%sum(f)%%';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- EXPLAIN ANALYZE: row groups the statistics rule out (ids ascend)
SELECT * FROM tt.explain_analyze('SELECT count(*), sum(n) FROM agg_pq WHERE id > 17500');
SELECT count(*), sum(n) FROM agg_pq WHERE id > 17500;

-- a numeric column narrower than the file's values: numeric's own error,
-- as without TesseraAgg
CREATE FOREIGN TABLE agg_narrow (n numeric(3,2)) SERVER agg_files OPTIONS (filename 'regress_agg_1.parquet');
SELECT sum(n) FROM agg_narrow;
SET tessera.enable_custom_agg = off;
SELECT sum(n) FROM agg_narrow;
RESET tessera.enable_custom_agg;
-- a column the file lacks: the file's error, before any row
CREATE FOREIGN TABLE agg_bad (id int, nope int) SERVER agg_files OPTIONS (filename 'regress_agg_1.parquet');
SELECT count(nope) FROM agg_bad;
SELECT sum(id) FROM agg_bad;

-- the aggregates of a query with a subquery over a file
SELECT k, (SELECT count(*) FROM agg_pq p WHERE p.k = s.k AND p.n > 0) FROM agg_src s GROUP BY k ORDER BY k;

DROP FOREIGN DATA WRAPPER tessera_parquet CASCADE;
DROP TABLE agg_src, agg_queries, agg_dim, agg_days;
DROP FUNCTION agg_check(text, text);
