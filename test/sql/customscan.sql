-- TesseraScan: projection, row-group skipping, vector filters and parallel
-- scans give exactly heap's answers, for every supported qual shape and
-- type, with deleted, updated and uncommitted rows, cursors, rescans and
-- parameters; EXPLAIN shows what was read and skipped.  TesseraAgg is off
-- here, so aggregates run in PostgreSQL's Agg over TesseraScan
-- (customagg.sql tests TesseraAgg).
SET tessera.enable_custom_agg = off;
CREATE TABLE ch (id int, i2 smallint, i8 bigint, f4 real, f8 float8, d date, ts timestamp,
                 tz timestamptz, n numeric, t text, tc text COLLATE "C", b bool, u uuid, arr int[]);
INSERT INTO ch SELECT i,
    CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 300 - 150)::smallint END,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i::bigint * 1000003 % 99991 - 50000 END,
    CASE WHEN i % 13 = 0 THEN NULL WHEN i % 997 = 0 THEN 'NaN' WHEN i % 991 = 0 THEN '-Infinity' ELSE (i % 500) / 4.0 END,
    CASE WHEN i % 17 = 0 THEN NULL WHEN i % 983 = 0 THEN 'NaN' WHEN i % 977 = 0 THEN 'Infinity' ELSE i / 3.0 END,
    date '2020-01-01' + i / 10,
    timestamp '2024-01-01' + i * interval '17 seconds',
    CASE WHEN i % 5 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00+00' + (i % 1000) * interval '1 hour' END,
    CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 10000)::numeric / 7 END,
    CASE WHEN i % 23 = 0 THEN NULL ELSE 'v' || (i % 5000) END,
    CASE WHEN i % 29 = 0 THEN NULL ELSE chr(65 + i % 26) || chr(97 + i % 26) || i END,
    CASE WHEN i % 31 = 0 THEN NULL ELSE i % 3 = 0 END,
    md5(i::text)::uuid,
    ARRAY[i, i % 10]
FROM generate_series(1, 30000) i;
CREATE TABLE ct (LIKE ch) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 5000);
INSERT INTO ct SELECT * FROM ch;
-- some stripes whose rows do not follow id order
INSERT INTO ch SELECT * FROM ch WHERE id % 100 = 1 ORDER BY id DESC;
INSERT INTO ct SELECT * FROM ct WHERE id % 100 = 1 ORDER BY id DESC;
ANALYZE ch;
ANALYZE ct;
SET max_parallel_workers_per_gather = 0;

-- the plan uses TesseraScan, reading only the columns it needs
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, t FROM ct WHERE i8 > 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ct;
SET tessera.enable_custom_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ct;
RESET tessera.enable_custom_scan;

-- every qual shape, compared with heap
SELECT q, tt.cmp('SELECT * FROM {t} WHERE ' || q, 'ch', 'ct') FROM (VALUES
    ('id = 1234'), ('id < 50'), ('id <= 50'), ('id > 29990'), ('id >= 29990'), ('50 > id'),
    ('id BETWEEN 1000 AND 1100'), ('id BETWEEN 1100 AND 1000'), ('id <> 5 AND id < 10'),
    ('id = 1234 OR id = 25000'), ('id < 10 OR id > 29995'), ('(id < 100 OR i2 = 3) AND id < 2000'),
    ('id IN (5, 15000, 29999, 31000)'), ('id = ANY (ARRAY[7, NULL])'), ('id < ALL (ARRAY[100, 50])'),
    ('id > ANY (''{}''::int[])'), ('id < ALL (''{}''::int[])'), ('id = NULL'), ('id IN (NULL)'),
    ('i2 = -150'), ('i2 < -149'), ('i2 IS NULL'), ('i2 IS NOT NULL AND i2 > 148'), ('i2 = 100000'),
    ('i2 > 5::bigint'), ('i8 < -49990'), ('i8 = 12345::int'), ('i8 IS NULL AND id < 100'),
    ('f4 > 124'), ('f4 = ''NaN'''), ('f4 < ''-1'''), ('f4 >= ''Infinity'''), ('f4 IS NULL AND id < 500'),
    ('f8 > 9999'), ('f8 = ''NaN'''), ('f8 = ''Infinity'''), ('f8 < 1'), ('f8 > 1e300'), ('f8 > 5::real'),
    ('d = date ''2020-02-01'''), ('d < date ''2020-01-03'''), ('d > ''2020-01-03''::timestamp AND id < 100'),
    ('ts >= timestamp ''2024-01-06'''), ('ts < ''2024-01-01 00:01'''),
    ('tz > timestamptz ''2024-02-11 00:00+00'''), ('tz IS NULL AND id < 1000'),
    ('n > 1428'), ('n = 1'), ('n BETWEEN 10 AND 10.5'),
    ('t = ''v42'''), ('t < ''v1'''), ('t > ''v999'''), ('t < ''v1'' COLLATE "C"'), ('t IS NULL AND id < 200'),
    ('tc < ''Ab'''), ('tc > ''Za'''), ('tc < ''b'' COLLATE "C"'), ('t LIKE ''v12%'''),
    ('b'), ('NOT b'), ('b IS NULL'), ('b = true AND id < 30'),
    ('u = ''c4ca4238-a0b9-2382-0dcc-509a6f75849b'''), ('u < ''00100000-0000-0000-0000-000000000000'''),
    ('arr = ''{5,5}'''), ('id + 0 = 77'), ('id = 77 AND random() >= 0'),
    ('id < (SELECT 20)'), ('id = (SELECT max(id) FROM ch)'), ('id < length(''abcdef'')')
) v(q);

-- projections, whole rows, system columns, expressions
SELECT tt.cmp('SELECT t FROM {t}', 'ch', 'ct');
SELECT tt.cmp('SELECT x FROM {t} x WHERE id < 300', 'ch', 'ct');
SELECT tt.cmp('SELECT x.*::text FROM {t} x WHERE id > 29900', 'ch', 'ct');
SELECT tt.cmp('SELECT id, n * 2, upper(t) FROM {t} WHERE i2 = 7', 'ch', 'ct');
SELECT count(*), count(t), sum(id), min(tc), max(ts) FROM ct;
SELECT count(*), count(t), sum(id), min(tc), max(ts) FROM ch;
SELECT ctid, id FROM ct WHERE id BETWEEN 3000 AND 3002 ORDER BY id;
SELECT tableoid::regclass, id FROM ct WHERE id = 3;

-- row groups are skipped, and the vector filter removes rows
SELECT * FROM tt.explain_analyze($q$SELECT count(*) FROM ct WHERE id BETWEEN 10500 AND 11499$q$);
SELECT * FROM tt.explain_analyze($q$SELECT count(*) FROM ct WHERE t = 'v42' AND id > 0$q$);
SELECT * FROM tt.explain_analyze($q$SELECT count(*) FROM ct WHERE id < 0$q$);
SELECT * FROM tt.explain_analyze($q$SELECT count(*) FROM ct WHERE i8 IS NULL$q$);

-- prepared statements: parameters decide what is skipped, per execution
PREPARE p(int, int) AS SELECT count(*), sum(i8) FROM ct WHERE id BETWEEN $1 AND $2;
PREPARE ph(int, int) AS SELECT count(*), sum(i8) FROM ch WHERE id BETWEEN $1 AND $2;
SET plan_cache_mode = force_generic_plan;
EXECUTE p(100, 2000); EXECUTE ph(100, 2000);
EXECUTE p(20000, 20100); EXECUTE ph(20000, 20100);
EXECUTE p(NULL, 5); EXECUTE ph(NULL, 5);
RESET plan_cache_mode;

-- rescans with lateral and nested-loop parameters
SELECT tt.cmp('SELECT g, (SELECT count(*) FROM {t} WHERE id BETWEEN g AND g + 50) FROM generate_series(1, 30000, 2999) g', 'ch', 'ct');
SELECT tt.cmp('SELECT g, x.id FROM generate_series(1, 30000, 4999) g, LATERAL (SELECT id FROM {t} WHERE id > g ORDER BY id LIMIT 2) x', 'ch', 'ct');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT tt.cmp('SELECT a.id, b.id FROM {t} a JOIN {t} b ON b.id = a.id + 1 WHERE a.id < 40 AND b.id < 60', 'ch', 'ct');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- join clauses skip row groups for each outer row (parameterized scans)
CREATE TABLE probe (k int);
INSERT INTO probe VALUES (5), (12345), (29999), (NULL), (40000);
ANALYZE probe;
EXPLAIN (COSTS OFF) SELECT p.k, c.t FROM probe p JOIN ct c ON c.id = p.k;
SELECT tt.cmp('SELECT p.k, c.t FROM probe p JOIN {t} c ON c.id = p.k', 'ch', 'ct');
EXPLAIN (COSTS OFF) SELECT count(*) FROM probe p JOIN ct c ON c.id BETWEEN p.k AND p.k + 20;
SELECT tt.cmp('SELECT p.k, count(*), sum(c.i8) FROM probe p JOIN {t} c ON c.id BETWEEN p.k AND p.k + 20 GROUP BY p.k', 'ch', 'ct');
SELECT tt.cmp('SELECT p.k, c.id FROM probe p LEFT JOIN {t} c ON c.id > p.k AND c.id < p.k + 3', 'ch', 'ct');
DROP TABLE probe;

-- deleted, updated and uncommitted rows; subtransactions
DELETE FROM ch WHERE id % 10 = 3;
DELETE FROM ct WHERE id % 10 = 3;
UPDATE ch SET id = -id, t = 'moved' WHERE id BETWEEN 5000 AND 5100;
UPDATE ct SET id = -id, t = 'moved' WHERE id BETWEEN 5000 AND 5100;
SELECT tt.cmp('SELECT * FROM {t} WHERE id BETWEEN 4990 AND 5200 OR id < -5050', 'ch', 'ct');
BEGIN;
INSERT INTO ct SELECT * FROM ch WHERE id BETWEEN 1 AND 10;
INSERT INTO ct (id, t) VALUES (99999, 'mine');
SELECT count(*), sum(id) FROM ct WHERE id BETWEEN 1 AND 10 OR id > 90000;
SAVEPOINT s;
INSERT INTO ct (id, t) VALUES (99998, 'sub');
DELETE FROM ct WHERE id = 2;
SELECT count(*), sum(id) FROM ct WHERE id BETWEEN 1 AND 10 OR id > 90000;
ROLLBACK TO s;
SELECT count(*), sum(id) FROM ct WHERE id BETWEEN 1 AND 10 OR id > 90000;
ROLLBACK;
SELECT tt.same_table('ch', 'ct');

-- cursors: backward, scroll and WITH HOLD
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, t FROM ct WHERE id BETWEEN 990 AND 1010 OR id > 29998;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH ABSOLUTE 5 FROM c;
FETCH BACKWARD ALL FROM c;
COMMIT;
DECLARE h CURSOR WITH HOLD FOR SELECT id FROM ct WHERE id BETWEEN 2000 AND 2004;
FETCH ALL FROM h;
CLOSE h;

-- LIMIT stops early
SELECT * FROM tt.explain_analyze($q$SELECT id FROM ct WHERE i2 > 0 LIMIT 3$q$);

-- an index still wins for a few rows
CREATE INDEX ct_id ON ct (id);
EXPLAIN (COSTS OFF) SELECT * FROM ct WHERE id = 1234;
SET enable_seqscan = off;   -- disables TesseraScan like a sequential scan
EXPLAIN (COSTS OFF) SELECT * FROM ct WHERE id < 20000;
RESET enable_seqscan;
DROP INDEX ct_id;

-- parallel plans with 0, 1, 2 and 4 workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i8) FROM ct WHERE f8 > 10;
SELECT w, tt.cmp('SELECT i2, count(*), sum(i8), min(t), max(tz) FROM {t} WHERE f8 > 10 OR id < 500 GROUP BY i2', 'ch', 'ct')
FROM (VALUES (0), (1), (2), (4)) v(w), LATERAL (SELECT set_config('max_parallel_workers_per_gather', w::text, false)) s;
SET max_parallel_workers_per_gather = 4;
SELECT tt.cmp('SELECT a.id, b.t FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.i2 = 1', 'ch', 'ct');
-- (the counters of a parallel scan depend on which process read which row
-- groups: their values are masked)
SELECT regexp_replace("QUERY PLAN", '(Skipped|Filter): \d+$', '\1: N') AS "QUERY PLAN"
FROM tt.explain_analyze($q$SELECT count(*) FROM ct WHERE id BETWEEN 10500 AND 11499$q$);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- UPDATE, DELETE and SELECT FOR UPDATE through TesseraScan
EXPLAIN (COSTS OFF) UPDATE ct SET n = n + 1 WHERE id BETWEEN 100 AND 120;
SELECT tt.cmp('SELECT * FROM {t} WHERE id BETWEEN 100 AND 120 FOR UPDATE', 'ch', 'ct');
UPDATE ch SET n = n + 1 WHERE id BETWEEN 100 AND 120;
UPDATE ct SET n = n + 1 WHERE id BETWEEN 100 AND 120;
DELETE FROM ch WHERE f8 > 9990;
DELETE FROM ct WHERE f8 > 9990;
SELECT tt.same_table('ch', 'ct');

-- EXPLAIN (ANALYZE, VERBOSE) reports bytes read and decompressed, serial and
-- parallel (workers add theirs); an uncompressed table decompresses nothing
CREATE FUNCTION tt.explain_bytes(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    r bigint := -1;
    d bigint := -1;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Bytes Read: ' THEN
            r := greatest(r, 0) + substring(line from 'Bytes Read: (\d+)')::bigint;
        ELSIF line ~ 'Bytes Decompressed: ' THEN
            d := greatest(d, 0) + substring(line from 'Bytes Decompressed: (\d+)')::bigint;
        END IF;
    END LOOP;
    RETURN CASE WHEN r < 0 THEN 'no bytes reported'
                ELSE format('read %s, decompressed %s',
                            CASE WHEN r > 0 THEN 'some' ELSE 'none' END,
                            CASE WHEN d > 0 THEN 'some' ELSE 'none' END) END;
END $$;
SELECT tt.explain_bytes('SELECT id, t FROM ct WHERE id < 5000');
CREATE TABLE ctn (LIKE ch) USING tessera WITH (tessera_compression = none);
INSERT INTO ctn SELECT * FROM ch;
SELECT tt.explain_bytes('SELECT id, t FROM ctn WHERE id < 5000');
SELECT tt.explain_bytes('SELECT count(*), sum(i8) FROM ctn WHERE id < 5000');
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tt.explain_bytes('SELECT i2, count(*) FROM ct GROUP BY i2');
SELECT tt.explain_bytes('SELECT sum(i8) FROM ct');
-- the workers' bytes count: in parallel at least the serial scan's
CREATE FUNCTION tt.bytes_read(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    line text;
    r bigint := 0;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Bytes Read: ' THEN
            r := r + substring(line from 'Bytes Read: (\d+)')::bigint;
        END IF;
    END LOOP;
    RETURN r;
END $$;
CREATE TEMP TABLE par AS SELECT tt.bytes_read('SELECT i2, count(*) FROM ct GROUP BY i2') AS p;
SET max_parallel_workers_per_gather = 0;
SELECT p >= tt.bytes_read('SELECT i2, count(*) FROM ct GROUP BY i2') AS workers_counted FROM par;
DROP TABLE par;
DROP FUNCTION tt.bytes_read(text);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE ctn;
DROP FUNCTION tt.explain_bytes(text);

-- a hash join probing with every row of ct but matching few: the columns
-- it projects are read value by value, not decoded whole (answers equal)
CREATE TABLE probe AS SELECT i * 37 AS k FROM generate_series(1, 300) i;
ANALYZE probe;
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT tt.cmp('SELECT c.id, c.i8, c.f8, c.n, c.t, c.tc, c.u, c.arr FROM {t} c JOIN probe p ON c.id = p.k', 'ch', 'ct');
SELECT tt.cmp('SELECT c.id, c.n, c.t FROM {t} c JOIN probe p ON c.id % 1000 = p.k', 'ch', 'ct');
RESET enable_nestloop;
RESET enable_mergejoin;
DROP TABLE probe;
-- single values of run-length encoded columns (runs found by binary search)
CREATE TABLE rlh (id int, r bigint, s text);
INSERT INTO rlh SELECT i, (i / 50) * 7919 % 1000, 'r' || ((i / 40) * 31 % 97) FROM generate_series(1, 30000) i;
CREATE TABLE rlt (LIKE rlh) USING tessera;
INSERT INTO rlt SELECT * FROM rlh;
CREATE INDEX ON rlh (id);
CREATE INDEX ON rlt (id);
SELECT count(*) > 0 AS has_rle FROM tessera.chunks
WHERE relation = 'rlt'::regclass AND attname = 'r' AND encoding LIKE '%integer%';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT tt.cmp('SELECT id, r, s FROM {t} WHERE id IN (1, 2, 6, 7, 8, 13, 14, 29993, 29999, 30000, 15001, 7777)', 'rlh', 'rlt');
SELECT tt.cmp('SELECT id, r, s FROM {t} WHERE id % 97 = 5', 'rlh', 'rlt');
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE rlh, rlt;

-- a column added later reads its default in older stripes
ALTER TABLE ch ADD COLUMN k int DEFAULT 7;
ALTER TABLE ct ADD COLUMN k int DEFAULT 7;
INSERT INTO ch (id, k) VALUES (40000, 8);
INSERT INTO ct (id, k) VALUES (40000, 8);
SELECT q, tt.cmp('SELECT id, k FROM {t} WHERE ' || q, 'ch', 'ct') FROM (VALUES
    ('k = 7 AND id < 20'), ('k = 8'), ('k > 7'), ('k IS NULL')) v(q);

DROP TABLE ch, ct;

-- numeric and date-vs-timestamp vector filters: numerics compared as scaled
-- integers (constants with more or fewer decimals than the chunk, chunks
-- with NaN or infinities that are not stored as decimals), dates compared
-- with timestamps across the ends of the timestamp range
CREATE TABLE vh (id int, n2 numeric(10,2), n numeric, d date);
INSERT INTO vh SELECT i, (i % 400) / 4.0 - 50,
    CASE WHEN i % 9 = 0 THEN NULL ELSE round((i % 1000) / 8.0, (i % 3)) END,
    CASE WHEN i = 5 THEN 'infinity' WHEN i = 6 THEN '-infinity'
         WHEN i = 7 THEN '5874897-12-31' WHEN i = 8 THEN '294276-12-31'
         ELSE date '1998-01-01' + i % 700 END
FROM generate_series(1, 20000) i;
-- NaN and infinities in the last row groups only
UPDATE vh SET n = 'NaN' WHERE id = 19990;
UPDATE vh SET n = 'Infinity' WHERE id = 19991;
UPDATE vh SET n = '-Infinity' WHERE id = 19992;
CREATE TABLE vt (LIKE vh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO vt SELECT * FROM vh ORDER BY id;
ANALYZE vh;
ANALYZE vt;
EXPLAIN (COSTS OFF) SELECT id FROM vt WHERE n2 < 24 AND d <= date '1998-12-01' - interval '90 days';
SELECT q, tt.cmp('SELECT id FROM {t} WHERE ' || q, 'vh', 'vt') FROM (VALUES
    ('n2 < 24'), ('n2 <= 24'), ('n2 = 24'), ('n2 >= 24'), ('n2 > 24'),
    ('n2 < 24.125'), ('n2 <= 24.125'), ('n2 = 24.125'), ('n2 >= 24.125'), ('n2 > 24.125'),
    ('n2 < -24.125'), ('n2 <= -24.125'), ('n2 >= -24.125'), ('n2 > -24.125'), ('n2 = 24.2500'),
    ('n2 BETWEEN 0.06 - 0.01 AND 0.06 + 0.01'), ('n2 > 1e30'), ('n2 < -1e30'),
    ('n2 < ''NaN'''), ('n2 = ''NaN'''), ('n2 < ''Infinity'''), ('n2 > ''-Infinity'''),
    ('n2 = 0.1234567890123456789012345678901234567'), ('n2 > 12345678901234567890123456789012345678'),
    ('n < 50'), ('n = 62.5'), ('n >= 124.875'), ('n > 124.9'), ('n = ''NaN'''), ('n >= ''NaN'''),
    ('n > ''Infinity'''), ('n < ''-Infinity'''), ('n < 1.33 AND id > 19000'), ('n IS NULL AND n2 > 0'),
    ('d <= date ''1998-12-01'' - interval ''90 days'''), ('d < ''1998-06-01 00:00:01''::timestamp'),
    ('d <= ''1998-06-01''::timestamp'), ('d = ''1998-06-01''::timestamp'), ('d = ''1998-06-01 12:00''::timestamp'),
    ('d > ''1998-06-01 12:00''::timestamp'), ('d >= ''1998-06-01 12:00''::timestamp'),
    ('d > ''infinity''::timestamp'), ('d >= ''infinity''::timestamp'), ('d = ''infinity''::timestamp'),
    ('d < ''-infinity''::timestamp'), ('d <= ''-infinity''::timestamp'), ('d > ''294276-12-30''::timestamp'),
    ('d < ''294276-12-31 23:59''::timestamp AND id < 20')) v(q);
-- two columns of one type compared with each other (TPC-H's
-- l_commitdate < l_receiptdate), with NULLs and infinities
CREATE TABLE cch (a int, b int, x bigint, y bigint, d1 date, d2 date);
INSERT INTO cch SELECT i % 100, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 77 END,
    i * 3, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 2 + 1000 END,
    date '2000-01-01' + i % 300, CASE WHEN i = 7 THEN 'infinity' WHEN i = 8 THEN '-infinity'
                                      ELSE date '2000-01-01' + (i * 7) % 300 END
FROM generate_series(1, 20000) i;
CREATE TABLE cct (LIKE cch) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO cct SELECT * FROM cch;
ANALYZE cch;
ANALYZE cct;
EXPLAIN (COSTS OFF) SELECT a FROM cct WHERE d1 < d2 AND a <= b;
SELECT q, tt.cmp('SELECT * FROM {t} WHERE ' || q, 'cch', 'cct') FROM (VALUES
    ('a < b'), ('a <= b'), ('a = b'), ('a >= b'), ('a > b'), ('b > a AND x < y'), ('x >= y'),
    ('d1 < d2'), ('d1 >= d2'), ('d2 = d1'), ('d1 < d2 AND a = 5')) v(q);
SELECT tt.cmp('SELECT a, count(*), sum(x) FILTER (WHERE d1 < d2) FROM {t} WHERE a <= b GROUP BY a', 'cch', 'cct');
DROP TABLE cch, cct;

-- as a prepared statement with the value as a parameter
PREPARE vq(numeric, timestamp) AS SELECT count(*), sum(id) FROM vt WHERE n2 > $1 AND d < $2;
EXECUTE vq(10.005, '1999-01-01');
SELECT count(*), sum(id) FROM vh WHERE n2 > 10.005 AND d < '1999-01-01'::timestamp;
DEALLOCATE vq;
DROP TABLE vh, vt;
