-- TesseraAgg: count, sum, avg, min and max computed on column vectors give
-- exactly PostgreSQL's answers (types, digits, NULLs, NaN, empty inputs),
-- with deleted and uncommitted rows, quals, parameters and rescans; other
-- aggregate queries keep PostgreSQL's Agg.
CREATE DOMAIN agg_pos AS int CHECK (VALUE >= 0);
CREATE TABLE ah (id int, i2 smallint, i4 int, i8 bigint, f4 real, f8 float8, d date,
                 ts timestamp, tz timestamptz, dm agg_pos, t text, n numeric);
INSERT INTO ah SELECT i,
    CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 30000 - 15000)::smallint END,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i * 7919 % 100003 - 50000 END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE i::bigint * 92233720368547 END,
    CASE WHEN i % 17 = 0 THEN NULL WHEN i % 1999 = 0 THEN 'NaN' ELSE i / 7.0 END,
    CASE WHEN i % 19 = 0 THEN NULL WHEN i % 2999 = 0 THEN '-Infinity' WHEN i % 3001 = 0 THEN 'NaN' ELSE i / 3.0 END,
    CASE WHEN i = 5 THEN 'infinity'::date WHEN i = 6 THEN '-infinity'::date ELSE date '2020-01-01' + i % 900 END,
    timestamp '2024-01-01' + i * interval '7 seconds',
    CASE WHEN i % 5 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00+00' + i * interval '1 minute' END,
    i % 100, 'v' || i, i / 9.0
FROM generate_series(1, 25000) i;
CREATE TABLE at (LIKE ah) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 5000);
INSERT INTO at SELECT * FROM ah;
ANALYZE ah;
ANALYZE at;

-- the plan: one TesseraAgg node, no Agg above it
EXPLAIN (COSTS OFF) SELECT count(*), sum(i4), avg(i8), min(ts), max(f8) FROM at WHERE id > 100;
SELECT * FROM tt.explain_analyze($q$SELECT sum(i4) FROM at WHERE id BETWEEN 2000 AND 2999$q$);

-- counts and min/max of untouched row groups come from chunk metadata
SELECT * FROM tt.explain_analyze($q$SELECT count(*), count(i4), min(i8), max(d) FROM at$q$);

-- every supported aggregate, exactly as PostgreSQL computes it
SELECT a, tt.cmp('SELECT ' || a || ' FROM {t}', 'ah', 'at') FROM (VALUES
    ('count(*)'), ('count(i2)'), ('count(t)'), ('count(n)'),
    ('sum(i2)'), ('sum(i4)'), ('sum(i8)'), ('sum(dm)'),
    ('avg(i2)'), ('avg(i4)'), ('avg(i8)'),
    ('min(i2)'), ('max(i2)'), ('min(i4)'), ('max(i4)'), ('min(i8)'), ('max(i8)'),
    ('min(f4)'), ('max(f4)'), ('min(f8)'), ('max(f8)'), ('min(d)'), ('max(d)'),
    ('min(ts)'), ('max(ts)'), ('min(tz)'), ('max(tz)'), ('min(dm)'), ('max(dm)'),
    ('sum(i4) + 1, count(*) * 2, max(i8) - min(i8)'),
    ('sum(i8)::text, avg(i4)::text, avg(i8)::text')
) v(a);
SELECT sum(i8), avg(i8), avg(i4), avg(i2) FROM at;
SELECT sum(i8), avg(i8), avg(i4), avg(i2) FROM ah;

-- quals, empty inputs, all-NULL inputs
SELECT q, tt.cmp('SELECT count(*), count(i4), sum(i4), avg(i8), min(f8), max(d) FROM {t} WHERE ' || q, 'ah', 'at') FROM (VALUES
    ('id < 0'), ('id > 24000'), ('id BETWEEN 5000 AND 5500'), ('i4 > 0 AND i2 < 0'),
    ('f8 > 1000'), ('d < date ''2020-03-01'''), ('ts >= timestamp ''2024-01-02'''),
    ('i8 = 92233720368547'), ('id = 13'), ('i2 = -1'), ('id > 100 AND id < 90')
) v(q);
EXPLAIN (COSTS OFF) SELECT count(*) FROM at WHERE id < 0;

-- a correlated value under a node that would reuse its result (DISTINCT's
-- HashAggregate): TesseraAgg must be rescanned for each outer row
BEGIN;
SET LOCAL enable_sort = off;
SELECT tt.cmp('SELECT id, (SELECT DISTINCT min(t1.i4) FROM {t} t1 WHERE t1.id = t0.id) FROM {t} t0 WHERE t0.id < 50', 'ah', 'at');
SELECT tt.cmp('SELECT id, (SELECT DISTINCT count(*) FILTER (WHERE t1.i2 > t0.i2) FROM {t} t1 WHERE t1.id < 100) FROM {t} t0 WHERE t0.id < 20', 'ah', 'at');
ROLLBACK;

-- parameters: generic plans and correlated subqueries
PREPARE pa(int) AS SELECT count(*), sum(i4), max(ts) FROM at WHERE id < $1;
PREPARE ph(int) AS SELECT count(*), sum(i4), max(ts) FROM ah WHERE id < $1;
SET plan_cache_mode = force_generic_plan;
EXECUTE pa(100); EXECUTE ph(100);
EXECUTE pa(20000); EXECUTE ph(20000);
EXECUTE pa(NULL); EXECUTE ph(NULL);
RESET plan_cache_mode;
SELECT tt.cmp('SELECT g, (SELECT sum(i4) FROM {t} WHERE id < g) FROM generate_series(0, 25000, 2500) g', 'ah', 'at');

-- deleted, updated, uncommitted rows and subtransactions
DELETE FROM ah WHERE id % 10 = 1;
DELETE FROM at WHERE id % 10 = 1;
UPDATE ah SET i4 = i4 + 1000000 WHERE id % 10 = 2;
UPDATE at SET i4 = i4 + 1000000 WHERE id % 10 = 2;
SELECT tt.cmp('SELECT count(*), sum(i4), avg(i4), max(i4) FROM {t}', 'ah', 'at');
BEGIN;
INSERT INTO at (id, i4, i8) VALUES (-1, 5, 5), (-2, NULL, NULL);
SELECT count(*), count(i4), sum(i4), sum(i8) FROM at;
SAVEPOINT s;
DELETE FROM at WHERE id < 100;
SELECT count(*), count(i4), sum(i4), sum(i8) FROM at;
ROLLBACK TO s;
SELECT count(*), count(i4), sum(i4), sum(i8) FROM at;
ROLLBACK;
SELECT count(*), count(i4), sum(i4), sum(i8) FROM at;
SELECT count(*), count(i4), sum(i4), sum(i8) FROM ah;

-- sums that need more than 64 bits
CREATE TABLE big_h (v bigint);
CREATE TABLE big_t (v bigint) USING tessera;
INSERT INTO big_h SELECT 9223372036854775807 - i FROM generate_series(1, 1000) i;
INSERT INTO big_h SELECT -9223372036854775807 + i FROM generate_series(1, 10) i;
INSERT INTO big_t SELECT * FROM big_h;
SELECT tt.cmp('SELECT sum(v), avg(v), min(v), max(v) FROM {t}', 'big_h', 'big_t');
SELECT sum(v), avg(v) FROM big_t;

-- numeric sums and averages: exact, with the display scale PostgreSQL keeps
CREATE TABLE num_h (g int, v numeric);
INSERT INTO num_h SELECT i % 7, CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 1000) / 8.0 END
    FROM generate_series(1, 20000) i;
INSERT INTO num_h VALUES (1, 1.5), (1, 1.50000), (2, -0.001), (3, 123456789012345678901234567890.123),
    (3, 99999999999999999999999999999999999999), (3, 1e-30), (4, 'NaN'), (5, 'Infinity'),
    (6, '-Infinity'), (6, 'Infinity'), (7, '-Infinity'), (8, NULL), (9, 0), (9, 0.00);
CREATE TABLE num_t (LIKE num_h) USING tessera;
INSERT INTO num_t SELECT * FROM num_h;
SELECT tt.cmp('SELECT g, sum(v), avg(v), count(v), count(*) FROM {t} GROUP BY g', 'num_h', 'num_t');
SELECT tt.cmp('SELECT sum(v), avg(v) FROM {t} WHERE g < 3', 'num_h', 'num_t');
SELECT g, sum(v), avg(v) FROM num_t WHERE g BETWEEN 1 AND 9 GROUP BY g ORDER BY g;
SELECT g, sum(v), avg(v) FROM num_h WHERE g BETWEEN 1 AND 9 GROUP BY g ORDER BY g;

-- sums made numerics straight from 64 bits, and through their digits past
-- them: both sides of the int64 boundary at scale 0 and 2, either sign
CREATE TABLE b64_h (g int, v numeric(20,2), w bigint);
INSERT INTO b64_h SELECT i % 4, CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END * 46116860184273879.03,
    CASE WHEN i % 4 < 2 THEN 4611686018427387903 ELSE -4611686018427387904 END
    FROM generate_series(1, 4) i;
INSERT INTO b64_h SELECT 4 + i % 2, 46116860184273879.04 * (1 - 2 * (i % 2)), (1 - 2 * (i % 2)) * 4611686018427387904
    FROM generate_series(1, 4) i;
CREATE TABLE b64_t (LIKE b64_h) USING tessera;
INSERT INTO b64_t SELECT * FROM b64_h;
SELECT tt.cmp('SELECT g, sum(v), avg(v), sum(w), avg(w) FROM {t} GROUP BY g', 'b64_h', 'b64_t');
SELECT g, sum(v), sum(w) FROM b64_t GROUP BY g ORDER BY g;
DROP TABLE b64_h, b64_t;

-- runs of equal keys (a table loaded in their order) are looked up once:
-- runs broken by NULL keys, by rows a qual drops, across batches, of one
-- key and of several, integers and strings
CREATE TABLE run_h (a int, b text, c bigint, v int);
INSERT INTO run_h SELECT CASE WHEN i % 97 < 3 THEN NULL ELSE i / 7 END,
    CASE WHEN i % 89 = 0 THEN NULL ELSE 's' || (i / 13) END, i / 5000, i % 11
    FROM generate_series(1, 30000) i;
CREATE TABLE run_t (LIKE run_h) USING tessera;
INSERT INTO run_t SELECT * FROM run_h;
SELECT q, tt.cmp(q, 'run_h', 'run_t') FROM (VALUES
    ('SELECT a, count(*), sum(v) FROM {t} GROUP BY a'),
    ('SELECT a, count(*), sum(v) FROM {t} WHERE v <> 3 GROUP BY a'),
    ('SELECT b, count(*), min(v) FROM {t} WHERE v > 1 GROUP BY b'),
    ('SELECT a, b, count(*) FROM {t} GROUP BY a, b'),
    ('SELECT c, a, count(*), max(v) FROM {t} WHERE v % 4 <> 0 GROUP BY c, a'),
    ('SELECT c, count(DISTINCT a), count(*) FROM {t} GROUP BY c')) v(q);
DROP TABLE run_h, run_t;
-- a string key of more values than the direct-mapped array first holds
-- (65,536 ids; it grows), plain chunks (no dictionary) repeating values
CREATE TABLE many_h (s text, v int);
INSERT INTO many_h SELECT CASE WHEN i % 1000 = 0 THEN NULL ELSE md5((i % 90000)::text) END, i % 7
    FROM generate_series(1, 120000) i;
CREATE TABLE many_t (LIKE many_h) USING tessera;
INSERT INTO many_t SELECT * FROM many_h;
SELECT q, tt.cmp(q, 'many_h', 'many_t') FROM (VALUES
    ('SELECT s, count(*), sum(v) FROM {t} GROUP BY s'),
    ('SELECT s, count(*) FROM {t} WHERE v > 2 GROUP BY s HAVING count(*) > 1')) v(q);
DROP TABLE many_h, many_t;

-- decimal-encoded chunks are summed as scaled integers: the display scale is
-- that of the rows summed, not of the chunk; sums past 128 bits stay exact
CREATE TABLE dec_h (k int, v numeric);
INSERT INTO dec_h SELECT i, CASE WHEN i <= 1500 THEN 2 ELSE 1.25 END FROM generate_series(1, 3000) i;
INSERT INTO dec_h SELECT 5000 + i, 9999999999999999999999999999999999999 FROM generate_series(1, 3000) i;
INSERT INTO dec_h SELECT 9000 + i, -0.000000000000000000000000000000000001 * i FROM generate_series(1, 100) i;
CREATE TABLE dec_t (LIKE dec_h) USING tessera;
INSERT INTO dec_t SELECT * FROM dec_h;
SELECT q, tt.cmp('SELECT sum(v), avg(v), count(v) FROM {t} WHERE ' || q, 'dec_h', 'dec_t') FROM (VALUES
    ('k <= 1500'), ('k < 3000'), ('k < 1'), ('k > 5000'), ('k > 9000'), ('k > 0')) v(q);
EXPLAIN (COSTS OFF) SELECT sum(v), avg(v) FROM dec_t WHERE k <= 1500;
SELECT sum(v), avg(v) FROM dec_t WHERE k <= 1500;
SELECT sum(v), avg(v) FROM dec_t WHERE k > 5000;
SELECT tt.cmp('SELECT k % 3, sum(v), avg(v) FROM {t} GROUP BY 1', 'dec_h', 'dec_t');

-- GROUP BY one integer, date or timestamp column
EXPLAIN (COSTS OFF) SELECT i2 % 3, count(*) FROM at GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT dm, count(*), avg(i4) FROM at WHERE id > 10 GROUP BY dm ORDER BY dm;
SELECT * FROM tt.explain_analyze($q$SELECT d, count(*) FROM at GROUP BY d$q$);
SELECT k, tt.cmp('SELECT ' || k || ', count(*), count(i4), sum(i4), avg(i8), min(f8), max(ts), sum(n) FROM {t} GROUP BY ' || k, 'ah', 'at')
FROM (VALUES ('i2'), ('i4'), ('i8'), ('d'), ('ts'), ('tz'), ('dm'), ('id')) v(k);
SELECT tt.cmp('SELECT i2, count(*) FROM {t} WHERE id < 1000 GROUP BY i2', 'ah', 'at');
SELECT tt.cmp('SELECT dm, sum(i4) * 2 + count(*), dm + 1 FROM {t} GROUP BY dm', 'ah', 'at');
SELECT tt.cmp('SELECT i2, count(*) FROM {t} WHERE id < 0 GROUP BY i2', 'ah', 'at');
SELECT tt.cmp_ordered('SELECT dm, count(*) FROM {t} GROUP BY dm ORDER BY dm', 'ah', 'at');

-- several keys, string keys (text, varchar, char(n) whose trailing blanks
-- do not count, NULLs, a dictionary of few values and many distinct ones)
CREATE TABLE kh (id int, a char(3), b varchar(10), c text, i int, p numeric(12,2),
                 q numeric(12,2), r numeric);
INSERT INTO kh SELECT i,
    CASE WHEN i % 13 = 0 THEN NULL ELSE chr(65 + i % 3) || CASE WHEN i % 2 = 0 THEN ' ' ELSE '' END END,
    CASE WHEN i % 17 = 0 THEN NULL ELSE 'b' || (i % 4) END,
    'c' || (i % 997),
    CASE WHEN i % 7 = 0 THEN NULL ELSE i % 5 - 2 END,
    CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 10000) / 4.0 END,
    (i % 10) / 100.0,
    CASE WHEN i % 5000 = 0 THEN 'NaN' WHEN i % 3 = 0 THEN (i % 100) / 8.0 ELSE i % 100 END
FROM generate_series(1, 30000) i;
CREATE TABLE kt (LIKE kh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO kt SELECT * FROM kh;
ANALYZE kh;
ANALYZE kt;
EXPLAIN (COSTS OFF) SELECT a, b, count(*), sum(p * (1 - q)) FROM kt WHERE q < 0.05 GROUP BY a, b;
SELECT g, tt.cmp('SELECT ' || g || ', count(*), sum(p), avg(q), min(id), max(i) FROM {t} GROUP BY ' || g, 'kh', 'kt')
FROM (VALUES ('a'), ('b'), ('c'), ('a, b'), ('b, a'), ('a, i'), ('i, c, b'), ('c, id'), ('a, b, c, i')) v(g);
SELECT tt.cmp('SELECT a, count(*) FROM {t} WHERE id % 2 = 1 OR a IS NULL GROUP BY a', 'kh', 'kt');
SELECT tt.cmp_ordered('SELECT a, b, count(*) FROM {t} GROUP BY a, b ORDER BY a, b', 'kh', 'kt');
-- numeric(p, s) keys are grouped by their bytes (one display scale, canonical
-- digits): NULLs, zero, negatives, decimal-encoded and other chunks; an
-- unconstrained numeric (1.0 and 1.00 equal, bytes not) stays PostgreSQL's
CREATE TABLE nkh (LIKE kh);
INSERT INTO nkh SELECT id, a, b, c, i, p, CASE WHEN id % 9 = 0 THEN -q ELSE q END, r FROM kh;
CREATE TABLE nkt (LIKE nkh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO nkt SELECT * FROM nkh;
UPDATE nkt SET p = p + 1 WHERE id % 101 = 0;
UPDATE nkh SET p = p + 1 WHERE id % 101 = 0;
SELECT g, tt.cmp('SELECT ' || g || ', count(*), sum(i), min(c) FROM {t} GROUP BY ' || g, 'nkh', 'nkt')
FROM (VALUES ('p'), ('q'), ('q, a'), ('p, q, b')) v(g);
SELECT count(*) FILTER (WHERE p LIKE '%TesseraAgg%') AS tessera_agg_nodes, g
FROM (VALUES ('q'), ('r')) v(g), LATERAL tt.explain('SELECT ' || g || ', count(*) FROM nkt GROUP BY 1') p
GROUP BY g ORDER BY g;
DROP TABLE nkh, nkt;

-- sum/avg of numeric arithmetic: exact values and display scales, NULLs,
-- constants of other scales, chunks with NaN (computed as numerics), values
-- past 128 bits (computed as numerics)
SELECT e, tt.cmp('SELECT sum(' || e || '), avg(' || e || '), count(*) FROM {t}', 'kh', 'kt')
FROM (VALUES ('p * q'), ('p * (1 - q)'), ('p * (1 - q) * (1 + q)'), ('p + q'), ('p - q - 1.005'),
             ('q * 0.5'), ('p * p * p * p'), ('r * q'), ('r + p'), ('p * 1e30 * 1e30'),
             ('p * 100000000000000000000 * 100000000000000000000'), ('(p - p) * q')) v(e);
SELECT g, tt.cmp('SELECT ' || g || ', sum(p * (1 - q)), avg(p * q + 1), sum(r * 2) FROM {t} WHERE q < 0.05 GROUP BY ' || g, 'kh', 'kt')
FROM (VALUES ('a'), ('a, b'), ('i')) v(g);
-- integer columns in numeric arithmetic (cast to numeric: scale 0): NULLs,
-- negatives, smallint and bigint, products past 128 bits (computed as
-- numerics), NaN beside them, every row and a few rows of each batch
CREATE TABLE vi_h (id int, s smallint, b bigint, p numeric(10,2));
INSERT INTO vi_h SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 300 - 150)::smallint END,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 1000 = 1 THEN 9223372036854775807
         WHEN i % 1000 = 2 THEN -9223372036854775808 ELSE i * 1000003::bigint END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 777) / 4.0 END
FROM generate_series(1, 20000) i;
CREATE TABLE vi_t (LIKE vi_h) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO vi_t SELECT * FROM vi_h;
SELECT e, tt.cmp('SELECT sum(' || e || '), avg(' || e || '), count(*) FROM {t}', 'kh', 'kt')
FROM (VALUES ('p * i'), ('i * (1 - q)'), ('p * id + i'), ('id * id * p'), ('r * i'), ('q - i')) v(e);
SELECT e, w, tt.cmp('SELECT id % 4, sum(' || e || '), avg(' || e || ') FROM {t} WHERE ' || w || ' GROUP BY 1', 'vi_h', 'vi_t')
FROM (VALUES ('p * s'), ('p * b'), ('b * 1.5 - s'), ('b * 1.0 * b'), ('s * s * 0.01')) v(e),
     (VALUES ('true'), ('id % 97 = 0'), ('id % 20 = 3')) f(w);
-- (5% of the rows: a batch read whole, its expression computed for those rows only)
SELECT e, tt.cmp('SELECT sum(' || e || '), avg(' || e || '), count(*), sum(' || e || ') FILTER (WHERE s > 0) FROM {t} WHERE id % 20 = 3', 'vi_h', 'vi_t')
FROM (VALUES ('p * s'), ('p * b'), ('b * 1.0 * b')) v(e);
SELECT count(*) FILTER (WHERE p LIKE '%TesseraAgg%') AS tessera_agg_nodes
FROM tt.explain('SELECT sum(p * s), avg(b * 1.5) FROM vi_t') p;
DROP TABLE vi_h, vi_t;
SELECT sum(p * (1 - q)), avg(p * q) FROM kt WHERE id < 0;
UPDATE kh SET p = p + 1 WHERE id % 10 = 3;
UPDATE kt SET p = p + 1 WHERE id % 10 = 3;
DELETE FROM kh WHERE id % 10 = 4;
DELETE FROM kt WHERE id % 10 = 4;
SELECT tt.cmp('SELECT a, b, sum(p * (1 - q)), count(*) FROM {t} GROUP BY a, b', 'kh', 'kt');

-- FILTER (WHERE ...) with quals the vector filter evaluates
EXPLAIN (COSTS OFF) SELECT count(*) FILTER (WHERE q > 0.05), sum(p) FILTER (WHERE i < 0 AND id > 100) FROM kt;
SELECT f, tt.cmp('SELECT count(*) FILTER (WHERE ' || f || '), count(p) FILTER (WHERE ' || f || '), '
                 'sum(p * (1 - q)) FILTER (WHERE ' || f || '), avg(i) FILTER (WHERE ' || f || '), '
                 'min(id) FILTER (WHERE ' || f || '), max(p) FILTER (WHERE ' || f || '), count(*), sum(p) FROM {t} WHERE id > 50', 'kh', 'kt')
FROM (VALUES ('q > 0.05'), ('i < 0 AND id > 100'), ('p IS NULL'), ('id < 0'), ('q = NULL'), ('i <= 1 AND q >= 0.02 AND p < 100')) v(f);
SELECT g, tt.cmp('SELECT ' || g || ', count(*) FILTER (WHERE q > 0.05), sum(p) FILTER (WHERE i < 0), avg(p * q) FILTER (WHERE id % 1 = 0 AND q < 0.03) FROM {t} GROUP BY ' || g, 'kh', 'kt')
FROM (VALUES ('a'), ('a, b'), ('i')) v(g);
SELECT tt.cmp('SELECT a, count(*) FILTER (WHERE q > 0.05), sum(p) FILTER (WHERE i < 0) FROM {t} GROUP BY a', 'kh', 'kt');

-- in parallel: a partial TesseraAgg in every process of a parallel scan,
-- gathered and merged by a final one; the same answers with 0 to 4 workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT a, b, count(*), sum(p * (1 - q)), avg(r) FROM kt WHERE q < 0.05 GROUP BY a, b;
SELECT * FROM tt.explain_analyze($q$SELECT count(*), sum(p) FROM kt WHERE q < 0.05$q$);
CREATE FUNCTION tt.par_cmp(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    w int;
BEGIN
    FOREACH w IN ARRAY ARRAY[0, 1, 2, 4] LOOP
        PERFORM set_config('max_parallel_workers_per_gather', w::text, true);
        RETURN NEXT w || ': ' || tt.cmp(q, 'kh', 'kt');
    END LOOP;
END $$;
SELECT g, tt.par_cmp('SELECT ' || g || ', count(*), count(r), sum(p * (1 - q)), avg(p), sum(i), avg(i), '
                     'min(id), max(id), sum(r * 2), sum(p * 1e30 * 1e30), sum(p) FILTER (WHERE q < 0.04) FROM {t} GROUP BY ' || g)
FROM (VALUES ('a'), ('a, b'), ('i'), ('c'), ('a, i, b')) x(g);
SELECT q, tt.par_cmp('SELECT count(*), sum(p * 1e30 * 1e30), avg(r), sum(p), min(p), max(id), sum(i) FROM {t} WHERE ' || q)
FROM (VALUES ('id < 0'), ('id > 0'), ('q = 0.05'), ('i IS NULL')) x(q);
ALTER TABLE kh ADD COLUMN f float8, ADD COLUMN d date;
ALTER TABLE kt ADD COLUMN f float8, ADD COLUMN d date;
UPDATE kh SET f = CASE WHEN id % 1000 = 7 THEN 'NaN' ELSE id / 3.0 END, d = date '2000-01-01' + id WHERE id % 3 = 0;
UPDATE kt SET f = CASE WHEN id % 1000 = 7 THEN 'NaN' ELSE id / 3.0 END, d = date '2000-01-01' + id WHERE id % 3 = 0;
SELECT tt.par_cmp('SELECT b, min(f), max(f), min(d), max(d), count(f) FROM {t} GROUP BY b');
-- sums of a column plus a constant (x's one state, shipped by the workers)
-- and extract() keys (int64 keys, numerics out)
EXPLAIN (COSTS OFF) SELECT b, extract(year FROM d), sum(i + 1), avg(id - 7) FROM kt GROUP BY 1, 2;
SELECT tt.par_cmp('SELECT b, extract(year FROM d), extract(month FROM d), sum(i + 1), avg(id - 7), sum(3 + id), sum(i) FROM {t} GROUP BY 1, 2, 3');
\set SHOW_CONTEXT never
SELECT b, sum(id + 2147470000) FROM kt GROUP BY b;
\set SHOW_CONTEXT errors
-- values from init plans, in quals and in FILTER, keep TesseraAgg serial
SELECT tt.par_cmp('SELECT a, count(*) FILTER (WHERE id > (SELECT max(id) / 2 FROM kh)) FROM {t} GROUP BY a');
SELECT tt.par_cmp('SELECT a, sum(p) FROM {t} WHERE id > (SELECT max(id) / 3 FROM kh) GROUP BY a');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP FUNCTION tt.par_cmp(text);
DROP TABLE kh, kt;

-- min/max of other ordered types (text in its collation, char(n), numeric
-- with its display scale, interval, uuid-like text), grouped, filtered and
-- in parallel
CREATE TABLE mh (id int, g int, t text, tc text COLLATE "C", b bpchar, n numeric, iv interval);
INSERT INTO mh SELECT i, i % 7,
    CASE WHEN i % 11 = 0 THEN NULL ELSE md5(i::text) END,
    chr(65 + i % 50) || i,
    CASE WHEN i % 2 = 0 THEN 'a' ELSE 'a ' END,
    CASE WHEN i % 3 = 0 THEN 1.0 WHEN i % 3 = 1 THEN 1.00 ELSE (i % 97) / 8.0 END,
    i * interval '1 minute'
FROM generate_series(1, 20000) i;
CREATE TABLE mt (LIKE mh INCLUDING ALL) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO mt SELECT * FROM mh ORDER BY id;
ANALYZE mh;
ANALYZE mt;
EXPLAIN (COSTS OFF) SELECT g, min(t), max(tc), min(n), max(iv) FROM mt GROUP BY g;
SELECT q, tt.cmp(q, 'mh', 'mt') FROM (VALUES
    ('SELECT min(t), max(t), min(tc), max(tc), min(b), max(b), min(iv), max(iv) FROM {t}'),
    ('SELECT g, min(t), max(tc), min(iv) FROM {t} GROUP BY g'),
    ('SELECT min(t COLLATE "C"), max(t COLLATE "C") FROM {t}'),
    ('SELECT min(t), max(tc) FROM {t} WHERE id > 19990'),
    ('SELECT min(t), max(t) FROM {t} WHERE id < 0'),
    ('SELECT g, max(t) FILTER (WHERE id > 100), min(iv) FILTER (WHERE g < 3) FROM {t} GROUP BY g')) v(q);
-- equal values that print differently: the last one seen wins, as in
-- numeric_smaller, but the first for bpchar, as in bpchar_smaller
SELECT min(n), max(n), octet_length(min(b)), octet_length(max(b)) FROM mt WHERE id < 100 AND n = 1;
SELECT min(n), max(n), octet_length(min(b)), octet_length(max(b)) FROM mh WHERE id < 100 AND n = 1;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT tt.cmp('SELECT g, min(t), max(tc), min(iv), max(iv) FROM {t} GROUP BY g', 'mh', 'mt');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE mh, mt;

-- more groups than work_mem holds (the estimate was wrong): TesseraAgg
-- spills them to hash partitions and merges each back; partitions that
-- still do not fit (sized for the wrong estimate) are split again by
-- another hash (and past three splits sorted by key and merged one group
-- at a time); same answers
CREATE TABLE sh (g int, s text, b char(4), v int, n numeric) WITH (autovacuum_enabled = off);
CREATE TABLE st (LIKE sh) USING tessera WITH (autovacuum_enabled = off);
INSERT INTO sh SELECT i % 3, 'x', 'y', i, i FROM generate_series(1, 1000) i;
INSERT INTO st SELECT * FROM sh;
ANALYZE sh;
ANALYZE st;
INSERT INTO sh SELECT i, CASE WHEN i % 101 = 0 THEN NULL ELSE 's' || (i % 20011) END,
    CASE WHEN i % 2 = 0 THEN 'b' ELSE 'b ' END || (i % 3), i % 7, i / 3.0
FROM generate_series(1, 60000) i;
INSERT INTO st SELECT * FROM sh WHERE v > 1000 OR s <> 'x' OR s IS NULL;
SET work_mem = '64kB';
CREATE FUNCTION tt.spills(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
    line text;
    agg bool := false;
    spilled bool := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        agg := agg OR line LIKE '%TesseraAgg%';
        spilled := spilled OR line LIKE '%Groups Spilled%';
    END LOOP;
    RETURN agg AND spilled;
END $$;
CREATE FUNCTION tt.spill_shape(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    parts bool := false;
    split bool := false;
    sorted bool := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        parts := parts OR line ~ 'Spill Partitions: \d+$';
        split := split OR line ~ 'Spill Partitions Split: [1-9]';
        sorted := sorted OR line ~ 'Spill Partitions Sorted: [1-9]';
    END LOOP;
    RETURN CASE WHEN NOT parts THEN 'not spilled' WHEN sorted THEN 'partitions, some sorted'
        WHEN split THEN 'partitions, some split' ELSE 'partitions' END;
END $$;
SELECT tt.spills('SELECT g, count(*), sum(v) FROM st GROUP BY g');
SELECT tt.spills('SELECT s, b, count(*) FROM st GROUP BY s, b');
SELECT tt.spill_shape('SELECT g, count(*), sum(v) FROM st GROUP BY g');
-- (string keys: a split hashes the rows it reads back as the table's groups)
SELECT tt.spill_shape('SELECT s, b, count(*) FROM st GROUP BY s, b');
SELECT q, tt.cmp(q, 'sh', 'st') FROM (VALUES
    ('SELECT g, count(*), sum(v), avg(n), min(v), max(g), sum(n * 2) FROM {t} GROUP BY g'),
    ('SELECT s, count(*), sum(n) FROM {t} GROUP BY s'),
    ('SELECT s, b, v, count(*), avg(n) FROM {t} GROUP BY s, b, v'),
    ('SELECT b, count(*) FROM {t} GROUP BY b'),
    ('SELECT s, b, count(*), max(v) FROM {t} GROUP BY s, b'),
    ('SELECT g, count(*) FROM {t} WHERE v < 3 GROUP BY g')) v(q);
SELECT tt.cmp_ordered('SELECT s, count(*) FROM {t} GROUP BY s ORDER BY s', 'sh', 'st');
-- count(DISTINCT): its groups of key and value, split where they outgrow
-- what the estimate of the keys' groups sized
SELECT tt.spill_shape('SELECT b, count(DISTINCT g), count(*) FROM st GROUP BY b');
SELECT q, tt.cmp(q, 'sh', 'st') FROM (VALUES
    ('SELECT g % 3, count(DISTINCT s), count(DISTINCT s) FILTER (WHERE v > 2) FROM {t} GROUP BY 1'),
    ('SELECT b, count(DISTINCT g), count(*) FROM {t} GROUP BY b'),
    ('SELECT v, count(DISTINCT s), count(*) FROM {t} GROUP BY v'),
    ('SELECT count(DISTINCT n) FROM {t}')) v(q);
-- planned past work_mem (the estimate is right): still TesseraAgg, spilling
ANALYZE st;
ANALYZE sh;
SELECT tt.spills('SELECT g, count(*), sum(v), avg(n) FROM st GROUP BY g');
SELECT tt.spills('SELECT g, s, count(*) FROM st GROUP BY g, s');
SELECT tt.spill_shape('SELECT g, count(*), sum(v), avg(n) FROM st GROUP BY g');
SELECT q, tt.cmp(q, 'sh', 'st') FROM (VALUES
    ('SELECT g, count(*), sum(v), avg(n), max(s) FROM {t} GROUP BY g'),
    ('SELECT g, s, count(*) FROM {t} GROUP BY g, s HAVING count(*) = 1'),
    ('SELECT v, count(DISTINCT g), count(*) FROM {t} GROUP BY v')) v(q);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT tt.cmp('SELECT g, count(*), sum(v), avg(n) FROM {t} GROUP BY g', 'sh', 'st');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- a spilled group is a record of varints (integer keys zigzagged, counts,
-- sums) and varlenas with a one-byte header where short, else aligned:
-- bigint keys at both ends of the range and negative, strings and states
-- (min/max of long strings) past the short form, counts past one byte
CREATE TABLE vh (g bigint, s text, v int) WITH (autovacuum_enabled = off);
CREATE TABLE vt (LIKE vh) USING tessera WITH (autovacuum_enabled = off);
INSERT INTO vh SELECT CASE i % 5 WHEN 0 THEN -9223372036854775807 - 1 + i % 97
        WHEN 1 THEN 9223372036854775807 - i % 89 WHEN 2 THEN -(i % 3001)
        WHEN 3 THEN (i % 4001)::bigint * 1000003 END,
    CASE WHEN i % 3 = 0 THEN repeat(md5((i % 700)::text), 1 + i % 9)
        WHEN i % 3 = 1 THEN md5((i % 5000)::text) END,
    i - 20000
FROM generate_series(1, 40000) i;
INSERT INTO vt SELECT * FROM vh;
ANALYZE vh, vt;
SET max_parallel_workers_per_gather = 0;
SELECT tt.spills('SELECT g, s, count(*) FROM vt GROUP BY g, s'),
    tt.spills('SELECT g, count(*), max(s), min(s) FROM vt GROUP BY g');
SELECT q, tt.cmp(q, 'vh', 'vt') FROM (VALUES
    ('SELECT g, s, count(*), sum(v) FROM {t} GROUP BY g, s'),
    ('SELECT g, count(*), sum(v), min(v), avg(v), max(s), min(s) FROM {t} GROUP BY g'),
    ('SELECT s, count(*), sum(g), min(g), max(g), avg(v) FROM {t} GROUP BY s'),
    ('SELECT v % 7, g, count(*) FROM {t} GROUP BY 1, 2 HAVING count(*) > 200')) v(q);
RESET max_parallel_workers_per_gather;
DROP TABLE vh, vt;
RESET work_mem;
-- keys that hardly repeat: once the table that filled hash_mem had folded
-- fewer than 5 rows in 4 into its groups, it is written out every 65,536
-- groups (a table that size stays in cache); keys seen again in a later
-- round merge when their partition is read back.  (Filling 16 MB of
-- work_mem each time instead would take about 4 rounds here.)  Serial: a
-- parallel plan's processes would each fold a third of the rows.
CREATE TABLE wh (k int, v int) WITH (autovacuum_enabled = off);
INSERT INTO wh SELECT i % 900000, i FROM generate_series(1, 1000000) i;
CREATE TABLE wt (LIKE wh) USING tessera WITH (autovacuum_enabled = off);
INSERT INTO wt SELECT * FROM wh;
ANALYZE wh, wt;
SET work_mem = '16MB';
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION tt.spill_rounds(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    line text;
    rounds int := 0;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Spill Rounds: \d+' THEN
            rounds := substring(line FROM 'Spill Rounds: (\d+)')::int;
        END IF;
    END LOOP;
    RETURN rounds;
END $$;
SELECT tt.spill_rounds('SELECT k, count(*), sum(v) FROM wt GROUP BY k') >= 6 AS spilled_every_window;
RESET max_parallel_workers_per_gather;
SELECT q, tt.cmp(q, 'wh', 'wt') FROM (VALUES
    ('SELECT count(*), sum(c), sum(s), sum(k::bigint * c), max(m) FROM (SELECT k, count(*) c, sum(v) s, max(v) m FROM {t} GROUP BY k) x'),
    ('SELECT k, count(*), min(v) FROM {t} GROUP BY k HAVING count(*) > 1')) v(q);
RESET work_mem;
DROP FUNCTION tt.spill_rounds(text);
DROP FUNCTION tt.spills(text);
DROP FUNCTION tt.spill_shape(text);
DROP TABLE sh, st, wh, wt;

-- HAVING: evaluated on each group's row, its own aggregates computed too;
-- serial and parallel
EXPLAIN (COSTS OFF) SELECT dm, count(*) FROM at GROUP BY dm HAVING count(*) > 1;
SELECT q, tt.cmp(q, 'ah', 'at') FROM (VALUES
    ('SELECT dm, count(*) FROM {t} GROUP BY dm HAVING count(*) >= 250 AND min(i4) < -49000'),
    ('SELECT t, sum(i8) FROM {t} WHERE id < 500 GROUP BY t HAVING max(n) > 10 OR t LIKE ''v1%'''),
    ('SELECT count(*) FROM {t} HAVING count(*) > 5'),
    ('SELECT count(*) FROM {t} HAVING sum(i2) IS NOT NULL'),
    ('SELECT d, count(DISTINCT i2) FROM {t} GROUP BY d HAVING count(DISTINCT i2) > 22'),
    ('SELECT dm, avg(i4) FROM {t} GROUP BY dm HAVING avg(i4) > 0 AND dm % 3 = 0'),
    ('SELECT dm FROM {t} GROUP BY dm HAVING random() >= 0')
) v(q);
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT dm, count(*) FROM at GROUP BY dm HAVING sum(i8) > 0') l
    WHERE l LIKE '%TesseraAgg%';
SELECT tt.cmp('SELECT dm, count(*) FROM {t} GROUP BY dm HAVING sum(i8) > 0 AND count(*) > 1', 'ah', 'at');
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- a correlated HAVING: the node is rescanned for each outer row
SELECT tt.cmp('SELECT id, (SELECT count(*) FROM {t} t1 WHERE t1.id < 30 HAVING count(*) > t0.id) FROM {t} t0 WHERE t0.id < 40', 'ah', 'at');

-- not ours: PostgreSQL's Agg runs, answers still identical
-- (16 and later sort below the Aggregate: count the TesseraAgg nodes instead)
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT count(DISTINCT i2 + 1) FROM at') l
    WHERE l LIKE '%TesseraAgg%';
EXPLAIN (COSTS OFF) SELECT i2 + (random() * 0)::int, count(*) FROM at GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT n, count(*) FROM at GROUP BY n;
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT dm, count(*) FROM at GROUP BY dm HAVING EXISTS (SELECT FROM ah WHERE ah.id = at.dm)') l
    WHERE l LIKE '%TesseraAgg%';
EXPLAIN (COSTS OFF) SELECT sum(i4) FILTER (WHERE t ~ 'v1') FROM at;
EXPLAIN (COSTS OFF) SELECT sum(n), min(t || random()::text) FROM at;
EXPLAIN (COSTS OFF) SELECT sum(i4) FROM at WHERE t ~ 'v1' AND i4 > random();
EXPLAIN (COSTS OFF) SELECT sum(i4 + 1), string_agg(t, ',') FROM at;
SELECT a, tt.cmp('SELECT ' || a || ' FROM {t}', 'ah', 'at') FROM (VALUES
    ('count(DISTINCT i2)'), ('sum(i4) FILTER (WHERE t LIKE ''v1%'')'), ('sum(n), min(t || ''x'')'), ('sum(i4 + 1)')
) v(a);
SET tessera.enable_custom_agg = off;
EXPLAIN (COSTS OFF) SELECT sum(i4) FROM at;
RESET tessera.enable_custom_agg;

DROP TABLE ah, at, big_h, big_t, num_h, num_t, dec_h, dec_t;
DROP DOMAIN agg_pos;

-- count(*) alone: row groups every row of which the snapshot sees are
-- counted from their row counts (a delta stripe's from its catalog row)
SET tessera.autocompact_stripes = 0;
CREATE TABLE cnt_t (a int, b text) USING tessera;
CREATE TABLE cnt_h (a int, b text);
INSERT INTO cnt_t SELECT g, 'x' FROM generate_series(1, 30000) g;
INSERT INTO cnt_h SELECT g, 'x' FROM generate_series(1, 30000) g;
SELECT format('INSERT INTO %s VALUES (%s, ''d'')', t, 100000 + k)
FROM generate_series(1, 20) k, (VALUES ('cnt_t'), ('cnt_h')) v(t) \gexec
CREATE FUNCTION cnt_answered() RETURNS int LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM cnt_t LOOP
        IF line ~ 'Chunks Answered from Metadata' THEN
            RETURN substring(line from '(\d+)')::int;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SELECT tt.cmp('SELECT count(*) FROM {t}', 'cnt_h', 'cnt_t'), cnt_answered() > 20 AS from_counts;
-- deleted rows, rows of our own transaction, a rolled-back write: read
DELETE FROM cnt_t WHERE a IN (5, 100005); DELETE FROM cnt_h WHERE a IN (5, 100005);
BEGIN;
INSERT INTO cnt_t VALUES (1, 'own'); INSERT INTO cnt_h VALUES (1, 'own');
SELECT tt.cmp('SELECT count(*) FROM {t}', 'cnt_h', 'cnt_t');
ROLLBACK;
SELECT tt.cmp('SELECT count(*) FROM {t}', 'cnt_h', 'cnt_t'), cnt_answered() > 10 AS from_counts;
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT tt.cmp('SELECT count(*) FROM {t}', 'cnt_h', 'cnt_t');
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET tessera.autocompact_stripes;
DROP FUNCTION cnt_answered();
DROP TABLE cnt_t, cnt_h;

-- pg_stat_user_tables.seq_tup_read counts the rows TesseraAgg went over,
-- also row groups answered from their metadata (as heap's scan counts them)
CREATE TABLE stat_t (a int) USING tessera;
INSERT INTO stat_t SELECT generate_series(1, 5000);
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE stat_before AS
    SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'stat_t';
SELECT count(*) FROM stat_t;
SELECT sum(a) FROM stat_t;
SELECT pg_stat_force_next_flush();
SELECT s.seq_scan - b.seq_scan AS scans, s.seq_tup_read - b.seq_tup_read AS rows_read
FROM pg_stat_user_tables s, stat_before b WHERE s.relname = 'stat_t';
-- ... and those a scan's vector filter dropped, skipped eight at a time:
-- all 5,000, as heap's scan hands them to its quals
DELETE FROM stat_before;
INSERT INTO stat_before
    SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'stat_t';
SELECT a FROM stat_t WHERE a = 4321;
SELECT a FROM stat_t WHERE a > 4990 AND a <> 4995;
SELECT pg_stat_force_next_flush();
SELECT s.seq_scan - b.seq_scan AS scans, s.seq_tup_read - b.seq_tup_read AS rows_read
FROM pg_stat_user_tables s, stat_before b WHERE s.relname = 'stat_t';
DROP TABLE stat_t, stat_before;
