-- Sliced TesseraAgg: under Gather, every process reads the whole table and
-- groups the rows whose keys hash into the slice it took.  Each group must
-- be finished by exactly one process: answers compared with heap's for
-- every kind of key (integers, text plain and dictionary-encoded, char(n),
-- NULLs, computed and carried keys), count(DISTINCT), HAVING, top-N,
-- spills, and with fewer processes than slices.
CREATE TABLE sl_h (
    i int, g int, s text, c char(6), w text, m text, u bigint, ts timestamp,
    v int, nv numeric(10,2), un bigint);
INSERT INTO sl_h
SELECT i,
       (i * 7919) % 70000,
       CASE WHEN i % 13 = 0 THEN NULL WHEN i % 5 = 0 THEN '' ELSE 'p' || ((i * 31) % 50000) END,
       'c' || (i % 900),
       (ARRAY['red', 'green', 'blue', '', 'amber'])[1 + i % 5],
       -- the first half's row groups hold 10 values (a dictionary), the
       -- second's 20,000 (plain): the same values, encoded both ways
       CASE WHEN i <= 60000 THEN 'v' || (i % 10) ELSE 'v' || (i % 20000) END,
       (i::bigint * 2654435761) % 100003,
       '2024-01-01'::timestamp + ((i * 37) % 100000) * interval '1 minute',
       i % 1000,
       ((i * 17) % 100000) / 100.0,
       CASE WHEN i % 7 = 0 THEN NULL ELSE (i::bigint * 2654435761) % 100003 END
FROM generate_series(1, 120000) i;
CREATE TABLE sl_t (LIKE sl_h) USING tessera
    WITH (tessera_row_group_row_limit = 5000, tessera_stripe_row_limit = 20000);
INSERT INTO sl_t SELECT * FROM sl_h;
-- (the plans hang on the groups expected: not on ANALYZE's sample)
ALTER TABLE sl_t ALTER COLUMN g SET (n_distinct = 70000), ALTER COLUMN u SET (n_distinct = 100000),
    ALTER COLUMN un SET (n_distinct = 86000), ALTER COLUMN s SET (n_distinct = 40000),
    ALTER COLUMN m SET (n_distinct = 20000);
ANALYZE sl_h;
ANALYZE sl_t;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- (groups in memory, unless a test spills them)
SET work_mem = '64MB';

-- is the aggregation sliced?  (how many slices depends on the CPUs)
CREATE FUNCTION tt.sliced(q text) RETURNS bool
LANGUAGE sql AS $$
    SELECT bool_or(l ~ '^\s*Slices: \d+$') FROM tt.plan(replace(q, '{t}', 'sl_t')) l
$$;

SELECT tt.sliced('SELECT g, count(*) FROM {t} GROUP BY g') AS sliced;
SELECT regexp_replace(l, '\d+$', 'N') AS plan
FROM tt.plan('SELECT g, count(*) FROM sl_t GROUP BY g') l;
-- few groups: the partial plan, which shares the decoding
SELECT tt.sliced('SELECT w, count(*) FROM {t} GROUP BY w') AS sliced;

SELECT q, tt.sliced(q) AS sliced, tt.cmp(q, 'sl_h', 'sl_t') FROM (VALUES
    ('SELECT g, count(*), sum(v), avg(nv), min(s), max(ts) FROM {t} GROUP BY g'),
    ('SELECT s, u, count(*) FROM {t} GROUP BY s, u'),
    ('SELECT c, w, g, count(*), sum(nv) FROM {t} GROUP BY c, w, g'),
    ('SELECT m, count(*), sum(v) FROM {t} GROUP BY m'),
    ('SELECT m, u, count(*) FROM {t} GROUP BY m, u'),
    ('SELECT u, extract(minute FROM ts) AS mi, count(*) FROM {t} GROUP BY u, mi'),
    ('SELECT g, g - 1, count(*) FROM {t} GROUP BY g, g - 1'),
    ('SELECT s, count(DISTINCT u), count(*) FROM {t} GROUP BY s'),
    ('SELECT g, count(DISTINCT u), sum(v) FROM {t} GROUP BY g'),
    ('SELECT u, count(*) FROM {t} GROUP BY u HAVING count(*) > 1'),
    ('SELECT g, u, count(*) FROM {t} WHERE v < 500 AND s <> '''' GROUP BY g, u'),
    ('SELECT length(s) AS l, u % 1000 AS b, count(*) FROM {t} GROUP BY l, b')
) x(q);

-- count(DISTINCT) alone, no GROUP BY: sliced by its values, the slices'
-- counts added up and emitted once (NULLs, HAVING, no rows)
SELECT q, tt.sliced(q) AS sliced, tt.cmp(q, 'sl_h', 'sl_t') FROM (VALUES
    ('SELECT count(DISTINCT u) FROM {t}'),
    ('SELECT count(DISTINCT un) FROM {t}'),
    ('SELECT count(DISTINCT u) FROM {t} HAVING count(DISTINCT u) > 5'),
    ('SELECT count(DISTINCT u) FROM {t} HAVING count(DISTINCT u) > 1000000'),
    ('SELECT count(DISTINCT u) FROM {t} WHERE v < 0'),
    ('SELECT count(DISTINCT m) FROM {t} WHERE u % 3 = 1')
) x(q);
-- other aggregates beside it do not add up: not sliced
SELECT tt.sliced('SELECT count(DISTINCT u), count(*) FROM {t}') AS sliced;

-- top-N of groups: each slice keeps its best, the Sort above picks
SELECT tt.sliced('SELECT u, s, count(*) FROM {t} GROUP BY u, s ORDER BY count(*) DESC, u, s LIMIT 10') AS sliced;
SELECT tt.cmp_ordered('SELECT u, s, count(*) FROM {t} GROUP BY u, s ORDER BY count(*) DESC, u, s NULLS FIRST LIMIT 10',
                      'sl_h', 'sl_t');
SELECT tt.cmp_ordered('SELECT m, count(*) FROM {t} GROUP BY m ORDER BY count(*), m LIMIT 5 OFFSET 3',
                      'sl_h', 'sl_t');

-- past hash_mem: each slice spills its own groups
SET work_mem = '1MB';
SELECT tt.sliced('SELECT g, u, count(*), sum(v) FROM {t} GROUP BY g, u') AS sliced,
       tt.cmp('SELECT g, u, count(*), sum(v) FROM {t} GROUP BY g, u', 'sl_h', 'sl_t');
SELECT tt.cmp('SELECT s, count(DISTINCT u) FROM {t} GROUP BY s', 'sl_h', 'sl_t');
-- extract()'s integral numerics spill as their int8 ids, serially too
SELECT tt.cmp('SELECT u, extract(minute FROM ts) AS mi, count(*) FROM {t} GROUP BY u, mi',
              'sl_h', 'sl_t');
SET work_mem = '64kB';
SET tessera.enable_sliced_agg = off;
SELECT tt.cmp('SELECT extract(minute FROM ts) AS mi, extract(hour FROM ts) AS h, u % 50 AS b,
                      count(*), sum(v) FROM {t} GROUP BY 1, 2, 3', 'sl_h', 'sl_t');
RESET tessera.enable_sliced_agg;
SET work_mem = '64MB';

-- no worker starts: the leader takes every slice in turn
SET max_parallel_workers = 0;
SELECT tt.cmp('SELECT g, count(*), sum(v) FROM {t} GROUP BY g', 'sl_h', 'sl_t');
SELECT tt.cmp('SELECT count(DISTINCT u) FROM {t}', 'sl_h', 'sl_t');
SELECT count(DISTINCT n) = 1 AND count(*) = 2 AS leader_took_all
FROM (SELECT (regexp_match(l, '^\s*(?:Slices|Slices Grouped by Leader): (\d+)$'))[1] AS n
      FROM tt.explain_analyze('SELECT g, count(*) FROM sl_t GROUP BY g') l) x
WHERE n IS NOT NULL;
RESET max_parallel_workers;
-- ... or the leader takes none
SET parallel_leader_participation = off;
SELECT tt.cmp('SELECT g, u, count(*) FROM {t} GROUP BY g, u', 'sl_h', 'sl_t');
SELECT tt.cmp('SELECT count(DISTINCT u) FROM {t}', 'sl_h', 'sl_t');
RESET parallel_leader_participation;

-- off: the partial plan or the serial one, the same answers
SET tessera.enable_sliced_agg = off;
SELECT tt.sliced('SELECT g, count(*) FROM {t} GROUP BY g') AS sliced,
       tt.cmp('SELECT g, count(*) FROM {t} GROUP BY g', 'sl_h', 'sl_t');
RESET tessera.enable_sliced_agg;

-- a HAVING reading a correlated value stays in one process
SELECT k, (SELECT count(*) FROM (SELECT g FROM sl_t GROUP BY g HAVING count(*) > k) q) AS n
FROM generate_series(1, 2) k;
SELECT k, (SELECT count(*) FROM (SELECT g FROM sl_h GROUP BY g HAVING count(*) > k) q) AS n
FROM generate_series(1, 2) k;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET work_mem;
DROP FUNCTION tt.sliced(text);
DROP TABLE sl_h, sl_t;
