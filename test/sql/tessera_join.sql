-- TesseraJoin: a join of a tessera table with dimensions on their unique
-- integer or date keys, producing the joined rows (for a sort, a limit, a
-- join or an aggregation of PostgreSQL's above it), with the same answers
-- as heap: NULL keys, keys without a match, deleted rows, rows in the
-- delta, composite keys, snowflakes, filters across dimensions, quals of
-- the table with no vector form, rescans with new parameters, parallel.
-- Joins that are not such a star, and queries that lock rows, stay
-- PostgreSQL's.
CREATE TABLE jf_h (id int, k1 int, k2 bigint, dk date, v numeric(10,2), x int, s text);
INSERT INTO jf_h SELECT i,
    CASE WHEN i % 41 = 0 THEN NULL ELSE i % 150 END,
    (i % 23) + 1,
    date '2024-01-01' + (i % 300),
    (i % 1000) / 10.0,
    i % 9,
    CASE WHEN i % 13 = 0 THEN NULL ELSE 's' || (i % 17) END
FROM generate_series(1, 40000) i;
CREATE TABLE jf_t (LIKE jf_h) USING tessera
    WITH (tessera_row_group_row_limit = 2000, tessera_stripe_row_limit = 8000);
INSERT INTO jf_t SELECT * FROM jf_h;
DELETE FROM jf_h WHERE id % 89 = 0;
DELETE FROM jf_t WHERE id % 89 = 0;
-- a few rows in the delta
INSERT INTO jf_h SELECT 40000 + i, i % 7, 3, date '2024-02-01', i, i % 9, 'delta' FROM generate_series(1, 50) i;
INSERT INTO jf_t SELECT 40000 + i, i % 7, 3, date '2024-02-01', i, i % 9, 'delta' FROM generate_series(1, 50) i;
-- dimensions: heap and tessera, unique keys of several types, a NULL key
CREATE TABLE jd1 (k int PRIMARY KEY, name text, grp int);
INSERT INTO jd1 SELECT i, CASE WHEN i % 19 = 0 THEN NULL ELSE 'n' || (i % 10) END, i % 4
FROM generate_series(0, 119) i;
CREATE TABLE jd2 (k bigint, cat varchar(10), w int) USING tessera;
CREATE UNIQUE INDEX jd2_k ON jd2 (k);
INSERT INTO jd2 SELECT i, 'c' || (i % 5), i FROM generate_series(1, 20) i;
INSERT INTO jd2 VALUES (NULL, 'nullkey', 0);
CREATE TABLE jdd (d date PRIMARY KEY, month int);
INSERT INTO jdd SELECT d, extract(month FROM d)
FROM generate_series(date '2024-01-01', date '2024-08-31', interval '1 day') d;
CREATE TABLE jgrp (g int PRIMARY KEY, gname text);
INSERT INTO jgrp VALUES (0, 'zero'), (1, 'one'), (2, 'two');
CREATE TABLE jpair (a int, b int, label text, PRIMARY KEY (a, b));
INSERT INTO jpair SELECT i % 150, i / 150, 'p' || (i % 7) FROM generate_series(0, 150 * 9 - 1) i
WHERE i % 4 <> 0;
CREATE TABLE jouter (x int, tag text);
INSERT INTO jouter SELECT i, 't' || i FROM generate_series(0, 11) i;
ANALYZE jf_h, jf_t, jd1, jd2, jdd, jgrp, jpair, jouter;

-- the plan: one node scanning the table, the dimensions' plans below it;
-- a subquery whose GROUP BY or DISTINCT makes its key unique is a dimension
EXPLAIN (COSTS OFF)
SELECT f.id, jd1.name, jd2.cat FROM jf_t f JOIN jd1 ON f.k1 = jd1.k JOIN jd2 ON f.k2 = jd2.k
WHERE jd1.grp = 1 AND f.x < 5 ORDER BY f.id LIMIT 5;

CREATE TEMP TABLE join_q AS SELECT * FROM (VALUES
    ('SELECT f.id, f.v, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k'),
    ('SELECT f.id, jd1.name, jd2.cat, jd2.w FROM {t} f JOIN jd1 ON f.k1 = jd1.k JOIN jd2 ON f.k2 = jd2.k WHERE jd1.grp = 1 AND f.x < 5'),
    ('SELECT f.*, jd1.* FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE jd1.name = ''n3'''),
    ('SELECT f.id, jdd.month FROM {t} f JOIN jdd ON f.dk = jdd.d WHERE jdd.month BETWEEN 3 AND 4 AND f.s LIKE ''s1%'''),
    ('SELECT f.id, jd1.name, jgrp.gname FROM {t} f JOIN jd1 ON f.k1 = jd1.k JOIN jgrp ON jd1.grp = jgrp.g'),
    ('SELECT f.id, jpair.label FROM {t} f JOIN jpair ON f.k1 = jpair.a AND f.x = jpair.b'),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k AND f.x < jd1.grp'),
    ('SELECT f.id, jd1.name || f.s AS ns, f.v * jd2.w AS vw FROM {t} f JOIN jd1 ON f.k1 = jd1.k JOIN jd2 ON f.k2 = jd2.k'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE upper(f.s) ~ ''^S1[0-3]$'' AND f.v::int % 3 = 0'),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE 100 / (f.x - jd1.grp) > 10 AND f.x <> jd1.grp'),
    ('SELECT f.id, jd2.cat FROM {t} f JOIN jd2 ON f.k2 = jd2.k WHERE jd2.cat = ''nullkey'''),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE jd1.k > 1000'),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.s = ''delta'''),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k AND f.s = ''s'' || substr(jd1.name, 2)'),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x <> (SELECT min(jd2.w) % 9 FROM jd2 WHERE jd2.k = f.k2 AND jd2.w > jd1.grp + 2)'),
    ('SELECT f.id, s.n FROM {t} f JOIN (SELECT k1, count(*) AS n FROM {t} WHERE x = 2 GROUP BY k1 HAVING count(*) > 60) s ON f.k1 = s.k1'),
    ('SELECT f.id, s.k2 FROM {t} f JOIN (SELECT DISTINCT k2 FROM {t} WHERE x < 2) s ON f.k2 = s.k2 WHERE f.x = 5'),
    ('SELECT f.id FROM {t} f WHERE f.k1 IN (SELECT k1 FROM {t} GROUP BY k1 HAVING sum(v) > 13400)'),
    -- joins inside the right-hand side of a semi or anti join
    ('SELECT jd1.k, jd1.name FROM jd1 WHERE jd1.k IN (SELECT f.k1 FROM {t} f JOIN jd2 ON f.k2 = jd2.k WHERE jd2.cat = ''c1'' AND f.x < 3)'),
    ('SELECT jd1.k FROM jd1 WHERE NOT EXISTS (SELECT 1 FROM {t} f JOIN jdd ON f.dk = jdd.d WHERE jdd.month = 3 AND f.k1 = jd1.k AND f.x <> 4)'),
    ('SELECT jd1.k FROM jd1 WHERE EXISTS (SELECT 1 FROM {t} f JOIN jd2 ON f.k2 = jd2.k WHERE jd2.w > 18 AND f.k1 = jd1.k AND f.s IS NULL)')
) v(q);
SELECT q, tt.cmp(q, 'jf_h', 'jf_t') FROM join_q;
-- each of them a TesseraJoin (none listed) but the one whose filter runs a
-- subquery for each row joined: PostgreSQL's hash join runs it as its join
-- filter on as many rows and is costed so; TesseraJoin charges it for each
-- row the probes keep (it was charged for the rows the filter keeps, and
-- taken for a subquery that scanned the table for each of 30,000 rows)
SELECT q FROM join_q
WHERE NOT EXISTS (SELECT FROM tt.explain(replace(q, '{t}', 'jf_t')) p WHERE p LIKE '%TesseraJoin%');
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT tt.plan('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x <> (SELECT min(jd2.w) % 9 FROM jd2 WHERE jd2.k = f.k2 AND jd2.w > jd1.grp + 2)');
SELECT tt.cmp('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x <> (SELECT min(jd2.w) % 9 FROM jd2 WHERE jd2.k = f.k2 AND jd2.w > jd1.grp + 2)', 'jf_h', 'jf_t');
-- a subquery reading one dimension's columns alone (TPC-H q02's shape) is
-- computed once for each of its rows, below the join, and the filter reads
-- the result (the SubPlan under the dimension's plan); with a NULL result too
SELECT tt.plan('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = (SELECT max(d.w) % 9 FROM jd2 d WHERE d.k = jd1.grp + 1)');
SELECT q, tt.cmp(q, 'jf_h', 'jf_t') FROM (VALUES
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = (SELECT max(d.w) % 9 FROM jd2 d WHERE d.k = jd1.grp + 1)'),
    ('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k JOIN jd2 ON f.k2 = jd2.k WHERE f.x < (SELECT count(*) FROM jd2 d WHERE d.w < jd1.grp * 3) + jd2.w % 3'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.v > coalesce((SELECT min(d.w) FROM jd2 d WHERE d.k = jd1.k AND d.w > 15), 50)')
) v(q);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
-- ... and chosen so with PostgreSQL's joins free to run: its hash join
-- would compute the same operand for each of the dimension's rows, and the
-- star join is priced for it as that hash join is (one operator a row):
-- here a scan of the table for each of jd1's rows
SELECT tt.plan('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = (SELECT max(s.x) FROM jf_t s WHERE s.k1 = jd1.k AND s.x < jd1.grp + 5)');
SELECT tt.cmp('SELECT f.id, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = (SELECT max(s.x) FROM {t} s WHERE s.k1 = jd1.k AND s.x < jd1.grp + 5)', 'jf_h', 'jf_t');
-- (the runs of the subquery the node is charged for, against the same
-- join filtering on a column: about none, not one for each of jd1's 120 rows)
SELECT tt.subplan_runs_charged(
    $q$SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k
        WHERE f.x = (SELECT max(s.x) FROM jf_t s WHERE s.k1 = jd1.k AND s.x < jd1.grp + 5)$q$,
    $q$SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x < jd1.grp$q$)
    < 10 AS priced_as_a_hash_key;

-- under a sort and a limit, an aggregation of PostgreSQL's, a join above
SET tessera.enable_custom_agg = off;
SELECT q, tt.cmp_ordered(q, 'jf_h', 'jf_t') FROM (VALUES
    ('SELECT f.id, f.v, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = 3 ORDER BY f.v DESC, f.id LIMIT 7'),
    ('SELECT jd1.name, count(*), sum(f.v) FROM {t} f JOIN jd1 ON f.k1 = jd1.k GROUP BY 1 ORDER BY 1 NULLS FIRST'),
    ('SELECT jouter.tag, count(f.id) FROM jouter LEFT JOIN ({t} f JOIN jd1 ON f.k1 = jd1.k) ON jouter.x = f.x GROUP BY 1 ORDER BY 1'),
    ('SELECT DISTINCT jd2.cat, f.x FROM {t} f JOIN jd2 ON f.k2 = jd2.k ORDER BY 1, 2')
) v(q);
-- rescans: inside a subquery run for each outer row, with its parameter
SELECT tt.cmp_ordered('SELECT o.x, (SELECT count(*) FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = o.x AND jd1.grp = 2) FROM jouter o ORDER BY 1',
                      'jf_h', 'jf_t');
SELECT count(*) > 0 AS rescanned_join FROM tt.explain(
    'SELECT o.x, (SELECT count(*) FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = o.x AND jd1.grp = 2) FROM jouter o') p
WHERE p LIKE '%TesseraJoin%';
-- in a CTE, planned with range table indexes of its own: EXPLAIN names
-- the relations as the whole plan's range table has them
SELECT tt.plan('WITH c AS MATERIALIZED (SELECT f.id, f.x, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE jd1.grp = 1 AND f.x = 2) SELECT jouter.tag, c.name FROM jouter JOIN c ON c.x = jouter.x ORDER BY c.id LIMIT 3');
SELECT tt.cmp_ordered('WITH c AS MATERIALIZED (SELECT f.id, f.x, jd1.name FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE jd1.grp = 1 AND f.x = 2) SELECT jouter.tag, c.name FROM jouter JOIN c ON c.x = jouter.x ORDER BY c.id LIMIT 3',
                      'jf_h', 'jf_t');
SELECT p FROM tt.explain_analyze('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = 2 AND jd1.grp = 1') p
WHERE p ~ 'TesseraJoin|Join Cond|Vector Filter|Removed by Star';
RESET tessera.enable_custom_agg;

-- parallel: one process builds the dimensions' tables for all
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT tt.plan('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x < 3');
-- (heap's plans without nested loops: with workers free to start, a regular
-- expression estimated to keep one row put a Gather under a nested loop,
-- starting workers 2,874 times: 20 s of this test)
SET enable_nestloop = off;
SELECT q, tt.cmp(q, 'jf_h', 'jf_t') FROM join_q;
RESET enable_nestloop;
SELECT count(*) AS parallel_join_plans FROM join_q
WHERE EXISTS (SELECT FROM tt.explain(replace(q, '{t}', 'jf_t')) p WHERE p LIKE '%Parallel Custom Scan (TesseraJoin)%');
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;

-- not taken: the table on the nullable side of an outer join, row locks,
-- a volatile qual of the table, a key of text, a key that is not unique
-- (a column, or a subquery's column its GROUP BY does not make distinct)
CREATE TEMP TABLE join_not AS SELECT * FROM (VALUES
    ('SELECT jd1.k, f.id FROM jd1 LEFT JOIN {t} f ON f.k1 = jd1.k'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = 1 FOR UPDATE OF jd1'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = 1 AND random() < 2'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.s = jd1.name'),
    ('SELECT f.id FROM {t} f JOIN jd1 ON f.x = jd1.grp'),
    ('SELECT f.id FROM {t} f JOIN (SELECT k1, x FROM {t} GROUP BY k1, x) s ON f.k1 = s.k1')
) v(q);
SELECT q, tt.cmp(q, 'jf_h', 'jf_t') FROM join_not;
SELECT count(*) AS join_plans FROM join_not, LATERAL tt.explain(replace(q, '{t}', 'jf_t')) p
WHERE p LIKE '%TesseraJoin%';

-- row-level security on the table: its policy alone is the table's quals
-- (taken); with quals of the query beside it, their order matters (not)
CREATE ROLE regress_tjoin_reader;
GRANT SELECT ON jf_t, jd1 TO regress_tjoin_reader;
GRANT USAGE ON SCHEMA tt TO regress_tjoin_reader;
ALTER TABLE jf_t ENABLE ROW LEVEL SECURITY;
CREATE POLICY jf_t_some ON jf_t FOR SELECT USING (x < 4);
SET ROLE regress_tjoin_reader;
SELECT count(*) AS rls_join_plans FROM tt.explain('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k') p
WHERE p LIKE '%TesseraJoin%';
SELECT count(*), count(DISTINCT f.x) FROM (SELECT f.id, f.x FROM jf_t f JOIN jd1 ON f.k1 = jd1.k) f;
SELECT count(*) AS rls_join_plans FROM tt.explain('SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.s || ''x'' > ''s5''') p
WHERE p LIKE '%TesseraJoin%';
SELECT count(*), count(DISTINCT f.x) FROM (SELECT f.id, f.x FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.s || 'x' > 's5') f;
RESET ROLE;
DROP POLICY jf_t_some ON jf_t;
ALTER TABLE jf_t DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON jf_t, jd1 FROM regress_tjoin_reader;
REVOKE USAGE ON SCHEMA tt FROM regress_tjoin_reader;
DROP ROLE regress_tjoin_reader;

-- the dimensions change between runs of a prepared statement
PREPARE jq AS SELECT f.id, jd1.name FROM jf_t f JOIN jd1 ON f.k1 = jd1.k WHERE f.x = 4 ORDER BY f.id LIMIT 3;
EXECUTE jq;
UPDATE jd1 SET name = 'renamed' WHERE k IN (SELECT k1 FROM jf_h WHERE x = 4 ORDER BY id LIMIT 1);
EXECUTE jq;
DEALLOCATE jq;
SELECT q, tt.cmp(q, 'jf_h', 'jf_t') FROM join_q LIMIT 3;

-- off: PostgreSQL's joins
SET tessera.enable_star_join = off;
SELECT count(*) AS join_plans FROM join_q, LATERAL tt.explain(replace(q, '{t}', 'jf_t')) p
WHERE p LIKE '%TesseraJoin%';
RESET tessera.enable_star_join;

DROP TABLE jf_h, jf_t, jd1, jd2, jdd, jgrp, jpair, jouter;
