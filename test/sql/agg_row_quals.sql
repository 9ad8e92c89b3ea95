-- TesseraAgg evaluates quals that have no vector form (functions of
-- columns, x NOT IN (SELECT ...) through a hashed subplan, ...) row by row
-- on the rows its vector quals keep, in PostgreSQL's order, instead of
-- leaving the whole query to PostgreSQL's row-at-a-time plan: the same
-- answers as heap, serial and in parallel, with star joins, GROUP BY,
-- HAVING, count(DISTINCT), deleted rows and parameters.  Volatile quals,
-- correlated subplans and quals under a security barrier stay PostgreSQL's.
CREATE TABLE rq_h (id int, k int, x int, s text, v numeric(10,2));
INSERT INTO rq_h SELECT i,
    CASE WHEN i % 29 = 0 THEN NULL ELSE i % 50 END,
    i % 13,
    CASE WHEN i % 17 = 0 THEN NULL ELSE 'w' || (i % 41) END,
    (i % 997) / 4.0
FROM generate_series(1, 20000) i;
CREATE TABLE rq_t (LIKE rq_h) USING tessera
    WITH (tessera_row_group_row_limit = 1500, tessera_stripe_row_limit = 6000);
INSERT INTO rq_t SELECT * FROM rq_h;
DELETE FROM rq_h WHERE id % 89 = 0;
DELETE FROM rq_t WHERE id % 89 = 0;
-- the subqueries' tables: one with a NULL (x NOT IN (...) is then never true)
CREATE TABLE rq_sub (k int PRIMARY KEY, tag text);
INSERT INTO rq_sub SELECT i, 't' || (i % 4) FROM generate_series(0, 60) i;
CREATE TABLE rq_subn (k int);
INSERT INTO rq_subn VALUES (3), (NULL), (7);
ANALYZE rq_h, rq_t, rq_sub, rq_subn;

-- the plan: one TesseraAgg, the vector quals first, then the others as its
-- Filter (a subplan's is shown per version: 17 prints its test)
EXPLAIN (COSTS OFF)
SELECT x, count(*), sum(v) FROM rq_t
WHERE id > 100 AND md5(s) < '8' AND s ~ 'w1'
GROUP BY x;
SELECT regexp_replace(l, 'NOT \(ANY \(k = \((hashed SubPlan 1)\)\.col1\)\)', 'NOT (\1)') AS plan
FROM tt.explain('(COSTS OFF) SELECT x, count(*), sum(v) FROM rq_t WHERE id > 100 AND md5(s) < ''8'' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = ''t1'') GROUP BY x') l;

CREATE TEMP TABLE rq_q AS SELECT * FROM (VALUES
    ('SELECT x, count(*), sum(v) FROM {t} WHERE id > 100 AND md5(s) < ''8'' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = ''t1'') GROUP BY x'),
    ('SELECT count(*), sum(v), min(s), max(id) FROM {t} WHERE md5(id::text) LIKE ''%a%'''),
    ('SELECT count(*) FROM {t} WHERE k NOT IN (SELECT k FROM rq_subn)'),
    ('SELECT count(*) FROM {t} WHERE k NOT IN (SELECT k FROM rq_subn WHERE k IS NOT NULL)'),
    ('SELECT x, count(*) FROM {t} WHERE k IN (SELECT k FROM rq_sub WHERE tag = ''t2'') OR x = 5 GROUP BY x'),
    ('SELECT s, count(*), avg(v) FROM {t} WHERE length(s) * 2 > 5 AND upper(s) <> ''W7'' GROUP BY s'),
    ('SELECT x, count(DISTINCT k), count(*) FROM {t} WHERE (k * 3 + x) % 4 = 1 GROUP BY x'),
    ('SELECT k, sum(v) FROM {t} WHERE coalesce(s, ''none'') <> ''w3'' GROUP BY k HAVING count(*) > 300'),
    ('SELECT count(*), sum(id) FROM {t} WHERE x <> 0 AND 100 / x > 9'),
    ('SELECT count(*) FROM {t} WHERE (s || ''!'') IS NOT NULL AND k NOT IN (SELECT k FROM rq_sub)'),
    ('SELECT rq_sub.tag, count(*), sum(f.v) FROM {t} f JOIN rq_sub ON f.k = rq_sub.k WHERE md5(f.s) > ''4'' GROUP BY 1'),
    ('SELECT rq_sub.tag, count(*) FROM {t} f JOIN rq_sub ON f.k = rq_sub.k WHERE f.x NOT IN (SELECT k FROM rq_sub WHERE tag = ''t0'') AND f.id + rq_sub.k > 50 GROUP BY 1')
) v(q);
SELECT q, tt.cmp(q, 'rq_h', 'rq_t') FROM rq_q;
-- every one is a TesseraAgg with a row-by-row Filter
SELECT q FROM rq_q
WHERE NOT EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'rq_t')) l WHERE l LIKE '%TesseraAgg%')
   OR NOT EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'rq_t')) l WHERE l ~ '^\s+Filter: ');

-- a qual is not evaluated on a row an earlier (cheaper) one rejected: no division by zero
SELECT count(*) FROM rq_t WHERE x <> 0 AND 100 / x > 9;
SELECT count(*) FROM rq_t WHERE 100 / x > 9;

-- EXPLAIN ANALYZE counts the rows the filter removed
SELECT * FROM tt.explain_analyze('SELECT count(*) FROM rq_t WHERE md5(s) < ''8''')
WHERE "QUERY PLAN" ~ 'TesseraAgg|Filter';
SELECT count(*) FROM rq_h WHERE md5(s) < '8';

-- in parallel: each process evaluates the quals on its own rows (and runs
-- the hashed subplans: their tables read serially, or they could not be)
ALTER TABLE rq_sub SET (parallel_workers = 0);
ALTER TABLE rq_subn SET (parallel_workers = 0);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT regexp_replace(l, 'NOT \(ANY \(k = \((hashed SubPlan 1)\)\.col1\)\)', 'NOT (\1)') AS plan
FROM tt.explain('(COSTS OFF) SELECT x, count(*), sum(v) FROM rq_t WHERE md5(s) < ''8'' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = ''t1'') GROUP BY x') l;
SELECT q, tt.cmp(q, 'rq_h', 'rq_t') FROM rq_q;
SELECT count(*) AS parallel_plans FROM rq_q
WHERE EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'rq_t')) l
              WHERE l LIKE '%Parallel Custom Scan (TesseraAgg)%');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- parameters: custom and generic plans
PREPARE rq_p(text, int) AS SELECT x, count(*) FROM rq_t WHERE md5(s) < $1 AND k + $2 > 10 GROUP BY x ORDER BY x;
PREPARE rq_ph(text, int) AS SELECT x, count(*) FROM rq_h WHERE md5(s) < $1 AND k + $2 > 10 GROUP BY x ORDER BY x;
SET plan_cache_mode = force_generic_plan;
CREATE TEMP TABLE rq_r1 AS EXECUTE rq_p('5', 3);
CREATE TEMP TABLE rq_r2 AS EXECUTE rq_ph('5', 3);
SELECT tt.cmp('SELECT * FROM {t}', 'rq_r1', 'rq_r2');
CREATE TEMP TABLE rq_r3 AS EXECUTE rq_p('c', -20);
CREATE TEMP TABLE rq_r4 AS EXECUTE rq_ph('c', -20);
SELECT tt.cmp('SELECT * FROM {t}', 'rq_r3', 'rq_r4');
RESET plan_cache_mode;

-- run again with new parameters (a subquery per outer row): the hashed
-- subplan probed on every run, the quals seeing each run's parameter
SELECT g, (SELECT count(*) FROM rq_t WHERE x = g AND md5(s) < '9' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = 't1')) AS t,
          (SELECT count(*) FROM rq_h WHERE x = g AND md5(s) < '9' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = 't1')) AS h
FROM generate_series(0, 4) g;
SELECT count(*) AS tessera_aggs FROM tt.explain('SELECT g, (SELECT count(*) FROM rq_t WHERE x = g AND md5(s) < ''9'' AND k NOT IN (SELECT k FROM rq_sub WHERE tag = ''t1'')) FROM generate_series(0, 4) g') l
WHERE l LIKE '%TesseraAgg%';

-- stay PostgreSQL's: a volatile qual, a correlated subplan, a barrier's qual
SELECT count(*) FROM tt.explain('SELECT count(*) FROM rq_t WHERE x + random() > 3') l
WHERE l LIKE '%TesseraAgg%';
SELECT count(*) FROM tt.explain('SELECT count(*) FROM rq_t f WHERE x = 1 OR EXISTS (SELECT 1 FROM rq_sub WHERE rq_sub.k = f.k AND rq_sub.tag = f.s)') l
WHERE l LIKE '%TesseraAgg%';
SELECT tt.cmp('SELECT count(*) FROM {t} f WHERE x = 1 OR EXISTS (SELECT 1 FROM rq_sub WHERE rq_sub.k = f.k AND rq_sub.tag = f.s)', 'rq_h', 'rq_t');
CREATE VIEW rq_v WITH (security_barrier) AS SELECT * FROM rq_t WHERE md5(s) < '8';
SELECT count(*) FROM tt.explain('SELECT count(*) FROM rq_v WHERE x > 3') l
WHERE l LIKE '%TesseraAgg%';
SELECT count(*) FROM rq_v WHERE x > 3;
SELECT count(*) FROM rq_h WHERE md5(s) < '8' AND x > 3;

DROP VIEW rq_v;
DROP TABLE rq_h, rq_t, rq_sub, rq_subn;
