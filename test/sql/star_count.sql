-- Star joins on keys that are not unique (counted dimensions): a relation
-- joined to the tessera table on a key without a unique index, none of
-- whose columns the aggregation reads (but its key, which equals the
-- table's column), is a table of counts per key, and
-- each row of the tessera table is aggregated once per row it joins.  The
-- answers must be heap's for every aggregate: counts, sums, averages,
-- min/max, count(DISTINCT), FILTER, HAVING, GROUP BY; with NULL keys,
-- keys without a match, deleted rows, two counted relations (their counts
-- multiply), a counted relation beside unique ones, a self-join, serial
-- and parallel.  A key repeated more than the statistics allow, or a
-- relation whose columns are read, keeps PostgreSQL's plan.
CREATE TABLE sc_h (id int, k int, k8 bigint, kd date, v numeric(10,2), x int, f float8);
INSERT INTO sc_h SELECT i,
    CASE WHEN i % 41 = 0 THEN NULL ELSE i % 300 END,
    (i % 50) * 1000000000::bigint,
    date '2024-01-01' + (i % 90),
    (i % 997) / 4.0,
    i % 9,
    (i % 64) / 8.0
FROM generate_series(1, 20000) i;
CREATE TABLE sc_t (LIKE sc_h) USING tessera
    WITH (tessera_row_group_row_limit = 2000, tessera_stripe_row_limit = 8000);
INSERT INTO sc_t SELECT * FROM sc_h;
DELETE FROM sc_h WHERE id % 89 = 0;
DELETE FROM sc_t WHERE id % 89 = 0;
-- keys repeated 1 to 4 times, NULL keys, keys the table does not have
CREATE TABLE mk (k int, note text);
INSERT INTO mk SELECT i % 200, 'n' || (i % 3) FROM generate_series(0, 199) i, generate_series(1, 4) r
    WHERE r <= (i % 4) + 1;
INSERT INTO mk VALUES (NULL, 'null'), (NULL, 'null'), (5000, 'none'), (5000, 'none');
-- bigint keys, in a tessera relation, 1 to 3 rows each
CREATE TABLE mk8 (k bigint, w int) USING tessera;
INSERT INTO mk8 SELECT (i % 50) * 1000000000::bigint, r FROM generate_series(0, 49) i, generate_series(1, 3) r
    WHERE r <= (i % 3) + 1;
-- date keys, 2 rows each
CREATE TABLE mkd (d date, tag int);
INSERT INTO mkd SELECT date '2024-01-01' + i, r FROM generate_series(0, 59) i, generate_series(1, 2) r;
-- a unique dimension beside them
CREATE TABLE uk (k int PRIMARY KEY, grp int);
INSERT INTO uk SELECT i, i % 5 FROM generate_series(0, 299) i;
-- one key repeated 200 times
CREATE TABLE mk_skew (k int);
INSERT INTO mk_skew SELECT CASE WHEN i <= 200 THEN 7 ELSE i END FROM generate_series(1, 400) i;
ANALYZE sc_h, sc_t, mk, mk8, mkd, uk, mk_skew;

-- the plan: one TesseraAgg, the relation counted
EXPLAIN (COSTS OFF)
SELECT f.x, count(*), sum(f.v) FROM sc_t f JOIN mk ON f.k = mk.k GROUP BY f.x;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM sc_t f JOIN mk ON f.k = mk.k JOIN mk8 ON f.k8 = mk8.k JOIN uk ON f.k = uk.k;

CREATE TEMP TABLE count_q AS SELECT * FROM (VALUES
    ('SELECT count(*), sum(f.v), avg(f.x), min(f.id), max(f.kd), count(f.k), sum(f.f) FROM {t} f JOIN mk ON f.k = mk.k'),
    ('SELECT f.x, count(*), sum(f.v), avg(f.v), max(f.v) FROM {t} f JOIN mk ON mk.k = f.k GROUP BY f.x'),
    ('SELECT f.x, count(DISTINCT f.k), count(*) FROM {t} f JOIN mk ON f.k = mk.k GROUP BY f.x'),
    ('SELECT count(DISTINCT f.id) FROM {t} f JOIN mk ON f.k = mk.k'),
    ('SELECT f.x, sum(f.v) FILTER (WHERE f.id > 5000), count(*) FILTER (WHERE f.v > 100) FROM {t} f JOIN mk ON f.k = mk.k GROUP BY f.x'),
    ('SELECT f.k, count(*) FROM {t} f JOIN mk ON f.k = mk.k GROUP BY f.k HAVING count(*) > 200'),
    ('SELECT count(*), sum(f.x) FROM {t} f JOIN mk ON f.k = mk.k WHERE mk.note = ''n1'' AND f.v < 100'),
    ('SELECT f.x, count(*), sum(f.id) FROM {t} f JOIN mk8 ON f.k8 = mk8.k WHERE mk8.w < 3 GROUP BY f.x'),
    ('SELECT count(*), sum(f.v) FROM {t} f JOIN mkd ON f.kd = mkd.d'),
    ('SELECT f.x, count(*), sum(f.v) FROM {t} f JOIN mk ON f.k = mk.k JOIN mk8 ON f.k8 = mk8.k GROUP BY f.x'),
    ('SELECT uk.grp, count(*), sum(f.v) FROM {t} f JOIN mk ON f.k = mk.k JOIN uk ON f.k = uk.k GROUP BY uk.grp'),
    ('SELECT uk.grp, count(*) FROM {t} f JOIN mk ON f.k = mk.k JOIN mkd ON f.kd = mkd.d JOIN uk ON f.k = uk.k WHERE uk.grp > 1 GROUP BY 1'),
    ('SELECT count(*) FROM {t} f WHERE EXISTS (SELECT 1 FROM mk8 WHERE mk8.k = f.k8) AND f.k IN (SELECT k FROM uk)'),
    ('SELECT count(*), sum(b.v) FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.x = 3'),
    ('SELECT count(*) FROM {t} f JOIN mk ON f.k = mk.k WHERE mk.k > 10000'),
    ('SELECT mk.k, count(*), sum(f.v) FROM {t} f JOIN mk ON f.k = mk.k GROUP BY mk.k HAVING count(*) > 150'),
    ('SELECT mk.k % 5, sum(mk.k), count(DISTINCT f.x) FROM {t} f JOIN mk ON f.k = mk.k WHERE f.x < 4 GROUP BY 1'),
    ('SELECT a.id % 4, count(*), sum(a.id) FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.x = 3 GROUP BY 1')
) v(q);
SELECT q, tt.cmp(q, 'sc_h', 'sc_t') FROM count_q;

-- counted in each one: every query above is one TesseraAgg reading the relations' plans
SELECT q FROM count_q
WHERE NOT EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'sc_t')) e WHERE e ~ 'TesseraAgg')
   OR EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'sc_t')) e WHERE e ~ 'Hash Join|Nested Loop|Merge Join');

-- in parallel: every process counts its share of the table's rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT f.x, count(*), sum(f.v) FROM sc_t f JOIN mk ON f.k = mk.k GROUP BY f.x;
SELECT q, tt.cmp(q, 'sc_h', 'sc_t') FROM count_q;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- not counted: a column of the relation is read, a key repeats too often
-- (in the whole relation, whatever its quals keep: 66 rows per key here),
-- no statistics, a join whose rows are wanted (not an aggregation)
EXPLAIN (COSTS OFF)
SELECT mk.note, count(*) FROM sc_t f JOIN mk ON f.k = mk.k GROUP BY mk.note;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM sc_t f JOIN mk_skew s ON f.k = s.k;
EXPLAIN (COSTS OFF)
SELECT b.x, count(*) FROM sc_t a JOIN sc_t b ON a.k = b.k WHERE a.id < 500 GROUP BY b.x;
CREATE TABLE mk_nostats (k int);
INSERT INTO mk_nostats SELECT i % 100 FROM generate_series(1, 300) i;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM sc_t f JOIN mk_nostats s ON f.k = s.k;
EXPLAIN (COSTS OFF)
SELECT f.id FROM sc_t f JOIN mk ON f.k = mk.k WHERE f.id < 10;
SELECT q, tt.cmp(q, 'sc_h', 'sc_t') FROM (VALUES
    ('SELECT mk.note, count(*), sum(f.v) FROM {t} f JOIN mk ON f.k = mk.k GROUP BY mk.note'),
    ('SELECT count(*), sum(f.v) FROM {t} f JOIN mk_skew s ON f.k = s.k'),
    ('SELECT count(*) FROM {t} f JOIN mk_nostats s ON f.k = s.k'),
    ('SELECT b.x, count(*) FROM {t} a JOIN {t} b ON a.k = b.k WHERE a.id < 500 GROUP BY b.x'),
    ('SELECT f.id, mk.note FROM {t} f JOIN mk ON f.k = mk.k WHERE f.id < 1000')
) v(q);

-- a change to the relation between two runs of a prepared statement
PREPARE cq AS SELECT count(*), sum(f.v) FROM sc_t f JOIN mk ON f.k = mk.k;
EXECUTE cq;
INSERT INTO mk SELECT k, 'again' FROM mk WHERE k < 20;
EXECUTE cq;
SELECT count(*), sum(f.v) FROM sc_h f JOIN mk ON f.k = mk.k;
DEALLOCATE cq;

DROP TABLE sc_h, sc_t, mk, mk8, mkd, uk, mk_skew, mk_nostats;
