-- Top-N of counts over many groups: `GROUP BY … ORDER BY count(*) DESC
-- LIMIT n` counts the rows into a sketch of the keys' hashes first, then
-- groups only the rows of cells that count enough (Top-N Sketch Threshold),
-- or every row where no group stands out.  The same rows as heap, in the
-- same order (every query breaks ties on all its keys), for integer, text
-- and NULL keys, filters, deleted rows, ties at the bound, other
-- aggregates beside the count, and slices.
CREATE TABLE ts_h (i int, a int, s text, v int);
-- 200,000 rows of groups of one or two; 30 groups of 60-320 rows; 12
-- groups of exactly 150 (tied); a NULL key of 400 rows
INSERT INTO ts_h SELECT i, i % 190000, 'single ' || (i % 190000), i % 100
    FROM generate_series(1, 200000) i;
INSERT INTO ts_h SELECT 100000 + i, 500000 + i % 30, 'heavy ' || (i % 30), i % 7
    FROM generate_series(1, 30 * 60) i;
INSERT INTO ts_h SELECT 200000 + i, 600000 + i % 30, 'heavy ' || (i % 30), i % 7
    FROM generate_series(1, 30 * 260) i WHERE i % 30 < 15;
INSERT INTO ts_h SELECT 300000 + i, 700000 + i % 12, 'tied', 1
    FROM generate_series(1, 12 * 150) i;
INSERT INTO ts_h SELECT 400000 + i, NULL, CASE WHEN i % 2 = 0 THEN NULL ELSE 'half' END, 2
    FROM generate_series(1, 400) i;
CREATE TABLE ts_t (LIKE ts_h) USING tessera
    WITH (tessera_row_group_row_limit = 10000, tessera_stripe_row_limit = 40000);
INSERT INTO ts_t SELECT * FROM ts_h ORDER BY i::bigint * 7919 % 100003;
DELETE FROM ts_h WHERE i % 53 = 0;
DELETE FROM ts_t WHERE i % 53 = 0;
ANALYZE ts_h;
ANALYZE ts_t;
-- (serial plans, but in the section on slices; a sketch for 100,000 rows read)
SET max_parallel_workers_per_gather = 0;
SET tessera.topn_sketch_rows = 100000;

SELECT q, tt.cmp_ordered(q, 'ts_h', 'ts_t') FROM (VALUES
    ('SELECT a, count(*) FROM {t} GROUP BY a ORDER BY count(*) DESC, a LIMIT 10'),
    ('SELECT a, s, count(*) FROM {t} GROUP BY a, s ORDER BY count(*) DESC, a, s LIMIT 5'),
    ('SELECT s, count(*), sum(v) FROM {t} GROUP BY s ORDER BY count(*) DESC, s LIMIT 8 OFFSET 3'),
    ('SELECT a, count(*) FROM {t} WHERE v < 5 GROUP BY a ORDER BY count(*) DESC, a LIMIT 20'),
    ('SELECT a, count(*) FROM {t} GROUP BY a ORDER BY count(*) DESC, a LIMIT 40'),
    ('SELECT a % 1000 AS b, count(*) FROM {t} GROUP BY b ORDER BY count(*) DESC, b LIMIT 10'),
    ('SELECT a, count(*), avg(v) FROM {t} GROUP BY a ORDER BY count(*) DESC, a LIMIT 100')
) v(q);
-- the plan, and what the sketch came to: a threshold; no group standing
-- out of the collisions (every group of one or two rows)
SELECT regexp_replace(ltrim("QUERY PLAN"), 'Threshold: \d+', 'Threshold: t') AS line
    FROM tt.explain_analyze('SELECT a, s, count(*) FROM ts_t GROUP BY a, s ORDER BY count(*) DESC LIMIT 5')
    WHERE "QUERY PLAN" ~ 'Sketch|Top-N Groups|Row Groups Read';
SELECT ltrim("QUERY PLAN") AS line
    FROM tt.explain_analyze('SELECT a, i % 50000 AS b, count(*) FROM ts_t GROUP BY a, b ORDER BY count(*) DESC LIMIT 5')
    WHERE "QUERY PLAN" ~ 'Sketch';
SELECT tt.cmp_ordered('SELECT a, i % 50000 AS b, count(*) FROM {t} GROUP BY a, b ORDER BY count(*) DESC, a, b LIMIT 5',
    'ts_h', 'ts_t');
-- few groups where the planner expected many: given up after 65,536 rows
ALTER TABLE ts_t ALTER COLUMN v SET (n_distinct = 300000);
ANALYZE ts_t;
SELECT ltrim("QUERY PLAN") AS line
    FROM tt.explain_analyze('SELECT v, count(*) FROM ts_t GROUP BY v ORDER BY count(*) DESC LIMIT 5')
    WHERE "QUERY PLAN" ~ 'Sketch';
SELECT tt.cmp_ordered('SELECT v, count(*) FROM {t} GROUP BY v ORDER BY count(*) DESC, v LIMIT 5', 'ts_h', 'ts_t');
ALTER TABLE ts_t ALTER COLUMN v RESET (n_distinct);
ANALYZE ts_t;
-- fewer rows read than tessera.topn_sketch_rows, or 0: no sketch
SET tessera.topn_sketch_rows = 0;
SELECT count(*) AS sketches FROM tt.explain_analyze('SELECT a, count(*) FROM ts_t GROUP BY a ORDER BY count(*) DESC LIMIT 5') l
    WHERE l."QUERY PLAN" LIKE '%Sketch%';
SET tessera.topn_sketch_rows = 250000;
SELECT count(*) AS sketches FROM tt.explain_analyze('SELECT a, count(*) FROM ts_t GROUP BY a ORDER BY count(*) DESC LIMIT 5') l
    WHERE l."QUERY PLAN" LIKE '%Sketch%';
SET tessera.topn_sketch_rows = 100000;
-- ascending counts and other aggregates' orders are not sketched
SELECT count(*) AS sketches FROM tt.explain_analyze('SELECT a, count(*) FROM ts_t GROUP BY a ORDER BY count(*), a LIMIT 5') l
    WHERE l."QUERY PLAN" LIKE '%Sketch%';
SELECT tt.cmp_ordered('SELECT a, count(*) FROM {t} GROUP BY a ORDER BY count(*), a LIMIT 5', 'ts_h', 'ts_t');

-- a small hash_mem: a smaller sketch, more collisions
SET work_mem = '64kB';
SELECT tt.cmp_ordered('SELECT a, s, count(*) FROM {t} GROUP BY a, s ORDER BY count(*) DESC, a, s LIMIT 12',
    'ts_h', 'ts_t');
RESET work_mem;

-- sliced under Gather: each process sketches its slice's rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET tessera.limit_workers_to_cores = off;
ALTER TABLE ts_t ALTER COLUMN a SET (n_distinct = -1), ALTER COLUMN s SET (n_distinct = -1);
ANALYZE ts_t;
SELECT regexp_replace(ltrim("QUERY PLAN"), 'Threshold: \d+', 'Threshold: t') AS line
    FROM tt.explain_analyze('SELECT a, s, count(*) FROM ts_t GROUP BY a, s ORDER BY count(*) DESC LIMIT 10')
    WHERE "QUERY PLAN" ~ 'Sketch|Slices:';
SELECT tt.cmp_ordered('SELECT a, s, count(*) FROM {t} GROUP BY a, s ORDER BY count(*) DESC, a, s LIMIT 10',
    'ts_h', 'ts_t');
SELECT tt.cmp_ordered('SELECT a, count(*) FROM {t} GROUP BY a ORDER BY count(*) DESC, a LIMIT 25',
    'ts_h', 'ts_t');
RESET tessera.limit_workers_to_cores;
SET max_parallel_workers_per_gather = 0;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- rows of this transaction: a new heaviest group
BEGIN;
INSERT INTO ts_h SELECT -i, -1, 'own', 0 FROM generate_series(1, 1000) i;
INSERT INTO ts_t SELECT -i, -1, 'own', 0 FROM generate_series(1, 1000) i;
UPDATE ts_h SET a = 500001 WHERE i BETWEEN 1 AND 300;
UPDATE ts_t SET a = 500001 WHERE i BETWEEN 1 AND 300;
SELECT tt.cmp_ordered('SELECT a, count(*) FROM {t} GROUP BY a ORDER BY count(*) DESC, a LIMIT 10',
    'ts_h', 'ts_t');
ROLLBACK;

RESET max_parallel_workers_per_gather;
RESET tessera.topn_sketch_rows;
DROP TABLE ts_h, ts_t;
