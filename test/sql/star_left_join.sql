-- TesseraAgg over D LEFT JOIN F (F a tessera table, D joined on its unique,
-- non-null key, every GROUP BY column D's with that key among them): F
-- probes D as a star join would, and each row of D that no row of F joined
-- is a group of its own, its aggregates over the null-extended row (count
-- 0, count(*) 1, the others NULL).  TPC-H q13's shape.  The same answers
-- as heap; other left joins stay PostgreSQL's.
CREATE TABLE lf_h (id int, k int, k8 bigint, x int, v numeric(10,2), s text);
INSERT INTO lf_h SELECT i,
    CASE WHEN i % 31 = 0 THEN NULL ELSE i % 140 END,
    (i % 90) + 5,
    i % 11,
    (i % 501) / 4.0,
    CASE WHEN i % 13 = 0 THEN NULL ELSE 'w' || (i % 37) END
FROM generate_series(1, 20000) i;
CREATE TABLE lf_t (LIKE lf_h) USING tessera
    WITH (tessera_row_group_row_limit = 1500, tessera_stripe_row_limit = 6000);
INSERT INTO lf_t SELECT * FROM lf_h;
DELETE FROM lf_h WHERE id % 83 = 0;
DELETE FROM lf_t WHERE id % 83 = 0;
-- dimensions: keys the table never has (200..259), one heap, one tessera
CREATE TABLE ld (k int PRIMARY KEY, name text, grp int);
INSERT INTO ld SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE 'n' || (i % 6) END, i % 4
FROM generate_series(0, 259) i;
CREATE TABLE ld8 (k bigint NOT NULL, tag text) USING tessera;
CREATE UNIQUE INDEX ld8_k ON ld8 (k);
INSERT INTO ld8 SELECT i, 't' || (i % 3) FROM generate_series(1, 120) i;
CREATE TABLE lf_empty (LIKE lf_t) USING tessera;
CREATE TABLE lf_hempty (LIKE lf_h);
ANALYZE lf_h, lf_t, ld, ld8, lf_empty, lf_hempty;

-- the plan: one TesseraAgg, the dimension read by its own plan
EXPLAIN (COSTS OFF)
SELECT ld.k, count(f.id) FROM ld LEFT JOIN lf_t f ON f.k = ld.k AND f.s NOT LIKE '%3%' GROUP BY ld.k;

CREATE TEMP TABLE lj_q AS SELECT * FROM (VALUES
    ('SELECT c_count, count(*) FROM (SELECT ld.k, count(f.id) AS c_count FROM ld LEFT JOIN {t} f ON f.k = ld.k AND f.s NOT LIKE ''%3%'' GROUP BY ld.k) c GROUP BY c_count'),
    ('SELECT ld.k, ld.name, count(*), count(f.v), sum(f.v), avg(f.x), min(f.s), max(f.id) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k, ld.name'),
    ('SELECT ld.k, count(*), sum(f.v) FROM ld LEFT JOIN {t} f ON f.k = ld.k WHERE ld.grp = 1 GROUP BY ld.k'),
    ('SELECT ld.k, ld.name FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k HAVING count(f.id) = 0'),
    ('SELECT ld.k, count(DISTINCT f.x), count(f.s) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k'),
    ('SELECT ld.k, ld.name, ld.grp, count(f.id) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k'),
    ('SELECT ld.k, count(f.id), sum(f.x * 2 + 1) FROM ld LEFT JOIN {t} f ON f.k = ld.k AND md5(f.s) < ''8'' GROUP BY ld.k'),
    ('SELECT ld.k, count(*), max(f.v) FROM ld LEFT JOIN {t} f ON f.k = ld.k AND f.x > 5 GROUP BY ld.k'),
    ('SELECT ld.k, count(*), count(f.id), sum(f.v) FROM ld LEFT JOIN {t} f ON f.k = ld.k AND f.x > 1000 GROUP BY ld.k'),
    ('SELECT ld.k, count(f.id) FROM {t} f RIGHT JOIN ld ON ld.k = f.k GROUP BY ld.k'),
    ('SELECT ld8.k, ld8.tag, count(f.id), avg(f.v) FROM ld8 LEFT JOIN {t} f ON f.k8 = ld8.k GROUP BY ld8.k, ld8.tag'),
    ('SELECT ld8.k, count(f.id) FROM ld8 LEFT JOIN {t} f ON f.k = ld8.k GROUP BY ld8.k')
) v(q);
SELECT q, tt.cmp(q, 'lf_h', 'lf_t') FROM lj_q;
-- every one is a TesseraAgg with a left join
SELECT q FROM lj_q
WHERE NOT EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'lf_t')) l WHERE l ~ 'Left Join:');
-- an empty table: every dimension row is a group of its own
SELECT tt.cmp('SELECT ld.k, count(*), count(f.id), sum(f.v) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k', 'lf_hempty', 'lf_empty');
SELECT count(*), sum(c) FROM (SELECT ld.k, count(f.id) c FROM ld LEFT JOIN lf_empty f ON f.k = ld.k GROUP BY ld.k) q;

-- in a subquery run again with new parameters: the dimension's rows joined start afresh
SELECT g, (SELECT count(*) FROM (SELECT ld.k, count(f.id) AS n FROM ld LEFT JOIN lf_t f ON f.k = ld.k AND f.id <= g * 40 GROUP BY ld.k) q WHERE n = 0) AS unmatched_t,
          (SELECT count(*) FROM (SELECT ld.k, count(f.id) AS n FROM ld LEFT JOIN lf_h f ON f.k = ld.k AND f.id <= g * 40 GROUP BY ld.k) q WHERE n = 0) AS unmatched_h
FROM generate_series(3, 0, -1) g;
SELECT count(*) AS left_joins FROM tt.explain('SELECT g, (SELECT count(*) FROM (SELECT ld.k, count(f.id) AS n FROM ld LEFT JOIN lf_t f ON f.k = ld.k AND f.id <= g * 40 GROUP BY ld.k) q WHERE n = 0) FROM generate_series(3, 0, -1) g') l
WHERE l ~ 'Left Join:';

-- serial even where parallel plans are cheap (each process sees its own matches only)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT q, tt.cmp(q, 'lf_h', 'lf_t') FROM lj_q LIMIT 3;
SELECT count(*) FROM lj_q
WHERE EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'lf_t')) l WHERE l ~ 'Left Join:.*' )
  AND EXISTS (SELECT 1 FROM tt.explain(replace(q, '{t}', 'lf_t')) l WHERE l ~ 'Parallel Custom Scan \(TesseraAgg\)');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- stay PostgreSQL's: a group of the table's column, an aggregate that is not
-- NULL over a NULL row, a condition on the dimension in ON, no dimension key
-- among the groups, an aggregate of the dimension, a filter on the table
-- above the join, three relations
CREATE TEMP TABLE lj_no AS SELECT * FROM (VALUES
    ('SELECT f.x, count(*) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY f.x'),
    ('SELECT ld.k, count(coalesce(f.x, 0)) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k'),
    ('SELECT ld.k, count(f.id) FROM ld LEFT JOIN {t} f ON f.k = ld.k AND ld.grp = 2 GROUP BY ld.k'),
    ('SELECT ld.name, count(f.id) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.name'),
    ('SELECT ld.k, sum(ld.grp), count(f.id) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k'),
    ('SELECT ld.k, count(*) FROM ld LEFT JOIN {t} f ON f.k = ld.k WHERE f.x IS NULL GROUP BY ld.k'),
    ('SELECT ld.k, count(f.id) FILTER (WHERE f.x > 3) FROM ld LEFT JOIN {t} f ON f.k = ld.k GROUP BY ld.k'),
    ('SELECT ld.k, count(f.id), count(ld8.tag) FROM ld LEFT JOIN {t} f ON f.k = ld.k LEFT JOIN ld8 ON ld8.k = f.k8 GROUP BY ld.k')
) v(q);
SELECT q, tt.cmp(q, 'lf_h', 'lf_t'),
    (SELECT count(*) FROM tt.explain(replace(q, '{t}', 'lf_t')) l WHERE l ~ 'Left Join:') AS ours
FROM lj_no;

DROP TABLE lf_h, lf_t, ld, ld8, lf_empty, lf_hempty;
