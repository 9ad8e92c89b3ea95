-- TesseraTopN: ORDER BY columns LIMIT n over one tessera table reads the
-- sort keys (and the quals' columns) of every row and the rest of the row
-- for the winners only; the same rows, in the same order, as heap.
CREATE TABLE th (id int, k int, s text, c char(3), ts timestamp, n numeric(8,2), f float8,
                 pad text);
INSERT INTO th SELECT i,
    CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 1000 END,
    CASE WHEN i % 17 = 0 THEN NULL ELSE md5(i::text) END,
    (ARRAY['a', 'B', 'c', 'é', NULL])[1 + i % 5],
    timestamp '2024-01-01' + (i * 7919 % 20000) * interval '1 minute',
    (i % 500) / 4.0,
    CASE WHEN i % 211 = 0 THEN 'NaN' ELSE (i % 777) / 7.0 END,
    repeat('p', i % 50)
FROM generate_series(1, 20000) i;
CREATE TABLE tt_t (LIKE th) USING tessera
    WITH (tessera_row_group_row_limit = 1500, tessera_stripe_row_limit = 6000);
INSERT INTO tt_t SELECT * FROM th;
DELETE FROM th WHERE id % 101 = 0;
DELETE FROM tt_t WHERE id % 101 = 0;
ANALYZE th;
ANALYZE tt_t;

EXPLAIN (COSTS OFF) SELECT * FROM tt_t WHERE s LIKE '%ab%' ORDER BY ts LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id, s FROM tt_t ORDER BY k DESC NULLS LAST, id LIMIT 5 OFFSET 3;

-- orders with a unique last key: the very same rows in the same order
SELECT q, tt.cmp_ordered(q, 'th', 'tt_t') FROM (VALUES
    ('SELECT * FROM {t} ORDER BY ts, id LIMIT 10'),
    ('SELECT * FROM {t} WHERE s LIKE ''%ab%'' ORDER BY ts, id LIMIT 10'),
    ('SELECT id, s FROM {t} ORDER BY k DESC, id LIMIT 25'),
    ('SELECT id, k FROM {t} ORDER BY k NULLS FIRST, id LIMIT 20'),
    ('SELECT id, k FROM {t} ORDER BY k DESC NULLS LAST, id DESC LIMIT 20 OFFSET 7'),
    ('SELECT id, s FROM {t} ORDER BY s, id LIMIT 15'),
    ('SELECT id, s FROM {t} ORDER BY s COLLATE "C" DESC, id LIMIT 15'),
    ('SELECT id, c FROM {t} ORDER BY c, id LIMIT 30'),
    ('SELECT id, c FROM {t} ORDER BY c DESC, id LIMIT 30'),
    ('SELECT id, n, f FROM {t} ORDER BY f DESC, id LIMIT 12'),
    ('SELECT id, n FROM {t} WHERE n > 100 AND k <> 5 ORDER BY n, id LIMIT 40'),
    ('SELECT id + 1, upper(s), length(pad) FROM {t} WHERE c IN (''a'', ''é'') ORDER BY ts DESC, id LIMIT 9'),
    ('SELECT * FROM {t} WHERE id < 0 ORDER BY ts, id LIMIT 10'),
    ('SELECT id FROM {t} WHERE id < 30 ORDER BY id LIMIT 100'),
    ('SELECT id FROM {t} ORDER BY id LIMIT 1'),
    ('SELECT id FROM {t} ORDER BY id DESC LIMIT 3000'),
    ('SELECT s FROM {t} WHERE s <> '''' ORDER BY ts, id LIMIT 10')
) v(q);
-- ties at the boundary: the same keys (which tied rows is free)
SELECT tt.cmp_ordered('SELECT k FROM (SELECT k, id FROM {t} ORDER BY k LIMIT 50) x', 'th', 'tt_t');

-- FETCH FIRST … WITH TIES returns every row tied with the last: PostgreSQL's
SELECT count(*) AS topn_nodes FROM tt.explain('(COSTS OFF) SELECT k FROM tt_t ORDER BY k FETCH FIRST 3 ROWS WITH TIES') l
    WHERE l LIKE '%TesseraTopN%';
SELECT tt.cmp('SELECT k FROM {t} ORDER BY k FETCH FIRST 3 ROWS WITH TIES', 'th', 'tt_t');

-- rows of this transaction, updated and deleted rows
BEGIN;
INSERT INTO th VALUES (-1, -5, 'own', 'a', timestamp '2000-01-01', 1, 1, '');
INSERT INTO tt_t VALUES (-1, -5, 'own', 'a', timestamp '2000-01-01', 1, 1, '');
UPDATE th SET ts = timestamp '1999-01-01' WHERE id = 500;
UPDATE tt_t SET ts = timestamp '1999-01-01' WHERE id = 500;
DELETE FROM th WHERE id = 501;
DELETE FROM tt_t WHERE id = 501;
SELECT tt.cmp_ordered('SELECT * FROM {t} ORDER BY ts, id LIMIT 5', 'th', 'tt_t');
SELECT tt.cmp_ordered('SELECT id, k FROM {t} ORDER BY k, id LIMIT 5', 'th', 'tt_t');
ROLLBACK;

-- in a correlated subquery (rescanned) and in a cursor
SELECT tt.cmp_ordered('SELECT t1.id, (SELECT t2.id FROM {t} t2 WHERE t2.k = t1.k ORDER BY t2.ts DESC, t2.id LIMIT 1) AS latest FROM {t} t1 WHERE t1.id < 20 ORDER BY t1.id', 'th', 'tt_t');
BEGIN;
DECLARE cur CURSOR FOR SELECT id FROM tt_t ORDER BY ts DESC, id LIMIT 4;
FETCH 2 FROM cur;
FETCH 5 FROM cur;
ROLLBACK;
SELECT id FROM th ORDER BY ts DESC, id LIMIT 4;

-- quals with no vector form are the node's Filter, evaluated on the rows
-- that would enter the top ones (a function, a regular expression, NOT IN
-- through a hashed subplan, a division an earlier qual guards)
CREATE TABLE tn_sub (k int PRIMARY KEY);
INSERT INTO tn_sub SELECT i FROM generate_series(0, 1000, 3) i;
ANALYZE tn_sub;
EXPLAIN (COSTS OFF) SELECT id, s FROM tt_t WHERE s ~ 'ab' AND id > 50 ORDER BY ts LIMIT 5;
SELECT q, tt.cmp_ordered(q, 'th', 'tt_t'),
    (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'tt_t')) l
     WHERE l LIKE '%TesseraTopN%') AS topn_nodes
FROM (VALUES
    ('SELECT id, s FROM {t} WHERE s ~ ''ab'' ORDER BY ts, id LIMIT 10'),
    ('SELECT * FROM {t} WHERE md5(s) < ''4'' AND k > 100 ORDER BY k DESC NULLS LAST, id LIMIT 25 OFFSET 5'),
    ('SELECT id, k FROM {t} WHERE k NOT IN (SELECT k FROM tn_sub) ORDER BY n, id LIMIT 30'),
    ('SELECT id FROM {t} WHERE k <> 0 AND 100000 / k > 150 ORDER BY f DESC, id LIMIT 12'),
    ('SELECT id, c FROM {t} WHERE upper(c) = ''B'' OR length(pad) > 45 ORDER BY c, ts, id LIMIT 40'),
    ('SELECT id FROM {t} WHERE s ~ ''^zzz'' ORDER BY id LIMIT 5')
) v(q);
SELECT * FROM tt.explain_analyze('SELECT id FROM tt_t WHERE s ~ ''ab'' ORDER BY ts, id LIMIT 10')
WHERE "QUERY PLAN" ~ 'TesseraTopN|Filter';

-- not ours: a LIMIT from a parameter, more rows than TOPN_MAX_ROWS,
-- expressions as keys, FOR UPDATE, a volatile qual
SELECT q, (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'tt_t')) l
           WHERE l LIKE '%TesseraTopN%') AS topn_nodes
FROM (VALUES
    ('SELECT id FROM {t} ORDER BY id LIMIT 20000'),
    ('SELECT id FROM {t} ORDER BY id + 1 LIMIT 5'),
    ('SELECT id FROM {t} ORDER BY id LIMIT 5 FOR UPDATE'),
    ('SELECT id FROM {t} WHERE k > random() * 10 ORDER BY id LIMIT 5'),
    ('SELECT id FROM {t} ORDER BY id')
) v(q);
SET tessera.enable_topn = off;
EXPLAIN (COSTS OFF) SELECT * FROM tt_t ORDER BY ts LIMIT 10;
RESET tessera.enable_topn;

-- in parallel: each participant keeps the top rows of the row groups it
-- claims, a Gather Merge takes the top of theirs (with and without the
-- leader's share)
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET tessera.limit_workers_to_cores = on;
CREATE TEMP TABLE topn_par_q (q text);
INSERT INTO topn_par_q VALUES
    ('SELECT * FROM {t} ORDER BY s, id LIMIT 10'),
    ('SELECT id, s FROM {t} WHERE k > 3 ORDER BY s DESC, id LIMIT 7'),
    ('SELECT id, n, f FROM {t} ORDER BY f DESC, id LIMIT 20 OFFSET 7'),
    ('SELECT id + 1, upper(s), length(pad) FROM {t} WHERE c IN (''a'', ''é'') ORDER BY n DESC, id LIMIT 9'),
    ('SELECT id, c FROM {t} ORDER BY c NULLS FIRST, id LIMIT 30');
-- (an integer-like first key stays serial: its row groups' summaries may
-- skip most of them, and one process reading a few is quicker)
SELECT q, (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'tt_t')) l
           WHERE l ~ 'Gather Merge|Parallel Custom Scan \(TesseraTopN\)') AS parallel_nodes
FROM (SELECT q FROM topn_par_q UNION ALL SELECT 'SELECT id FROM {t} ORDER BY ts LIMIT 5') v;
SELECT q, tt.cmp_ordered(q, 'th', 'tt_t') FROM topn_par_q;
-- a table's own parallel_workers is taken as it is, whatever the cores
ALTER TABLE tt_t SET (parallel_workers = 2);
SELECT l FROM tt.explain('(COSTS OFF) SELECT id, s FROM tt_t ORDER BY s DESC, id LIMIT 7') l
WHERE l ~ 'Workers Planned';
ALTER TABLE tt_t RESET (parallel_workers);
SET parallel_leader_participation = off;
SELECT q, tt.cmp_ordered(q, 'th', 'tt_t') FROM topn_par_q;
RESET parallel_leader_participation; RESET tessera.limit_workers_to_cores;
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
DROP TABLE topn_par_q;

DROP TABLE th, tt_t, tn_sub;

-- row groups skipped by the first key's summary once the heap is full: a
-- table loaded in the order of its timestamp; NULL keys, deleted rows, an
-- update that moves a row's key before every other, DESC, dates, and keys
-- whose summaries cannot bound (text)
CREATE TABLE sh (id int, ts timestamp, d date, s text);
INSERT INTO sh SELECT i, CASE WHEN i % 997 = 0 THEN NULL ELSE timestamp '2024-01-01' + i * interval '1 minute' END,
    date '2024-01-01' + i / 500, 's' || (i % 37)
FROM generate_series(1, 12000) i;
CREATE TABLE st (LIKE sh) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 4000);
INSERT INTO st SELECT * FROM sh;
DELETE FROM sh WHERE id BETWEEN 3 AND 40;
DELETE FROM st WHERE id BETWEEN 3 AND 40;
UPDATE sh SET ts = timestamp '2023-06-01' WHERE id = 11500;
UPDATE st SET ts = timestamp '2023-06-01' WHERE id = 11500;
ANALYZE sh;
ANALYZE st;
SELECT * FROM tt.explain_analyze('SELECT id, ts FROM st ORDER BY ts LIMIT 5')
WHERE "QUERY PLAN" ~ 'TesseraTopN|Bound';
SELECT q, tt.cmp_ordered(q, 'sh', 'st') FROM (VALUES
    ('SELECT id, ts FROM {t} ORDER BY ts LIMIT 5'),
    ('SELECT id, ts FROM {t} ORDER BY ts, id LIMIT 20 OFFSET 3'),
    ('SELECT * FROM {t} ORDER BY ts NULLS FIRST, id LIMIT 4'),
    ('SELECT id, ts FROM {t} ORDER BY ts DESC, id LIMIT 6'),
    ('SELECT id, ts FROM {t} ORDER BY ts DESC NULLS LAST, id LIMIT 6'),
    ('SELECT id, d FROM {t} ORDER BY d, id LIMIT 7'),
    ('SELECT id, d FROM {t} WHERE s = ''s3'' ORDER BY d DESC, id LIMIT 7'),
    ('SELECT id, s FROM {t} ORDER BY s, id LIMIT 5'),
    ('SELECT id FROM {t} ORDER BY id USING >, ts LIMIT 3')
) v(q);
-- most row groups skipped, the heap full after the first read: ascending
-- from the first, descending from the last
SELECT q, (SELECT count(*) FROM tt.explain_analyze(q) l
           WHERE l."QUERY PLAN" ~ 'Skipped by Bound: (9|1[0-2])') AS bounded
FROM (VALUES ('SELECT id FROM st ORDER BY id LIMIT 10'),
             ('SELECT id FROM st ORDER BY id DESC LIMIT 10'),
             ('SELECT id, ts FROM st ORDER BY ts DESC NULLS LAST LIMIT 10')) v(q);
DROP TABLE sh, st;

-- TesseraAgg's top-N of groups: ORDER BY a count LIMIT n [OFFSET m] leaves
-- out the groups whose count is worse than the (n + m)th best; PostgreSQL's
-- Sort and Limit above order the rest (ties at the bound included)
CREATE TABLE gh (g int, h text, v int);
INSERT INTO gh SELECT (i % 113) * (i % 7), CASE WHEN i % 5 = 0 THEN NULL ELSE 'h' || (i % 41) END,
    CASE WHEN i % 3 = 0 THEN NULL ELSE i % 17 END
FROM generate_series(1, 30000) i;
CREATE TABLE gt (LIKE gh) USING tessera;
INSERT INTO gt SELECT * FROM gh;
ANALYZE gh;
ANALYZE gt;
EXPLAIN (COSTS OFF) SELECT g, count(*) AS c FROM gt GROUP BY g ORDER BY c DESC LIMIT 5;
SELECT * FROM tt.explain_analyze('SELECT g, count(*) AS c FROM gt GROUP BY g ORDER BY c DESC, g LIMIT 5 OFFSET 2')
WHERE "QUERY PLAN" ~ 'Top-N|Groups';
SELECT q, tt.cmp_ordered(q, 'gh', 'gt') FROM (VALUES
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC, g LIMIT 5'),
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC, g LIMIT 5 OFFSET 7'),
    ('SELECT g, count(*) FROM {t} GROUP BY g ORDER BY count(*), g LIMIT 8'),
    ('SELECT g, h, count(v) AS c, sum(v) FROM {t} GROUP BY g, h ORDER BY c DESC, g, h LIMIT 10'),
    ('SELECT h, count(DISTINCT g) AS u, count(*) FROM {t} GROUP BY h ORDER BY u DESC, h NULLS FIRST LIMIT 3'),
    ('SELECT g, count(*), count(*) AS c2 FROM {t} GROUP BY g ORDER BY c2 DESC, g LIMIT 4'),
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC, g LIMIT 1000'),
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC, g FETCH FIRST 3 ROWS WITH TIES'),
    ('SELECT g, count(*) AS c FROM {t} WHERE v > 3 GROUP BY g ORDER BY c DESC, g LIMIT 6'),
    ('SELECT x.h, (SELECT sum(c) FROM (SELECT count(*) AS c FROM {t} t1 WHERE t1.h = x.h GROUP BY g ORDER BY c DESC LIMIT 2) s) FROM (SELECT DISTINCT h FROM {t}) x ORDER BY 1')
) v(q);
-- ties at the bound: which tied groups PostgreSQL returns is not defined,
-- their counts are
SELECT q, tt.cmp(q, 'gh', 'gt') FROM (VALUES
    ('SELECT c FROM (SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC LIMIT 9) s'),
    ('SELECT c FROM (SELECT h, count(*) AS c FROM {t} GROUP BY h ORDER BY c LIMIT 4 OFFSET 3) s')
) v(q);
-- parallel: the final node leaves them out
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT l FROM tt.explain('(COSTS OFF) SELECT g, count(*) AS c FROM gt GROUP BY g ORDER BY c DESC, g LIMIT 5') l
WHERE l ~ 'Top-N|Phase';
SELECT tt.cmp_ordered('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC, g LIMIT 5', 'gh', 'gt');
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
-- past work_mem the groups spill and come back a partition at a time: a
-- group is left out once as many groups met before it have better counts
SET work_mem = '64kB';
SELECT q, tt.cmp_ordered(q, 'gh', 'gt') FROM (VALUES
    ('SELECT g, h, count(*) AS c FROM {t} GROUP BY g, h ORDER BY c DESC, g, h LIMIT 5'),
    ('SELECT g, h, count(*) AS c FROM {t} GROUP BY g, h ORDER BY c, g, h LIMIT 5 OFFSET 3'),
    ('SELECT g, h, count(v) AS c FROM {t} GROUP BY g, h ORDER BY c DESC, g, h FETCH FIRST 4 ROWS WITH TIES')
) v(q);
SELECT tt.cmp('SELECT c FROM (SELECT g, h, count(*) AS c FROM {t} GROUP BY g, h ORDER BY c DESC LIMIT 7) s', 'gh', 'gt');
SELECT l ~ 'Groups Spilled: [1-9]' AS spilled, l ~ 'Groups Left Out by Top-N: [1-9]' AS left_out
FROM (SELECT string_agg(l, ' ') AS l
      FROM tt.explain('(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT g, h, count(*) AS c FROM gt GROUP BY g, h ORDER BY c DESC LIMIT 5') l) e;
RESET work_mem;
-- not planned: HAVING, a sum first, a parameter, DISTINCT, a window function
SELECT q, (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'gt')) l
           WHERE l LIKE '%Top-N%') AS topn_groups
FROM (VALUES
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g HAVING count(*) > 1 ORDER BY c DESC LIMIT 5'),
    ('SELECT g, sum(v) AS s FROM {t} GROUP BY g ORDER BY s DESC LIMIT 5'),
    ('SELECT g, count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC LIMIT ALL'),
    ('SELECT DISTINCT count(*) AS c FROM {t} GROUP BY g ORDER BY c DESC LIMIT 5'),
    ('SELECT g, count(*) AS c, rank() OVER (ORDER BY g) FROM {t} GROUP BY g ORDER BY c DESC LIMIT 5')
) v(q);
PREPARE topn_p(int) AS SELECT g, count(*) AS c FROM gt GROUP BY g ORDER BY c DESC, g LIMIT $1;
EXECUTE topn_p(3);
DEALLOCATE topn_p;
DROP TABLE gh, gt;
