-- Correlated subqueries of a plain aggregate, `(SELECT agg(…) FROM t WHERE
-- t.k = outer.k …)`: PostgreSQL runs the subquery once per outer row.
-- Once its runs have read the tessera table once over, TesseraAgg computes
-- the aggregates grouped by the correlated columns in one pass and answers
-- the later runs from those groups.  The answers must be heap's: keys
-- without rows (count 0, sum NULL), NULL outer values, NULL keys in the
-- table, deleted and updated rows, two keys, bigint and date keys, other
-- quals beside, outer values in the output expression, the subquery in
-- WHERE, a table reading itself, an UPDATE reading the table it updates,
-- and groups past hash_mem (no memo: every run scans).
CREATE TABLE sm_h (id int, k int, k8 bigint, kd date, v numeric(10,2), x int, r int);
INSERT INTO sm_h SELECT i,
    CASE WHEN i % 37 = 0 THEN NULL ELSE i % 700 END,
    (i % 50) * 1000000000::bigint,
    date '2024-01-01' + (i % 90),
    (i % 997) / 4.0,
    i % 9,
    (i * 7919) % 30000          -- every value once, in no order
FROM generate_series(1, 30000) i;
CREATE TABLE sm_t (LIKE sm_h) USING tessera
    WITH (tessera_row_group_row_limit = 2000, tessera_stripe_row_limit = 8000);
INSERT INTO sm_t SELECT * FROM sm_h;
DELETE FROM sm_h WHERE id % 53 = 0;
DELETE FROM sm_t WHERE id % 53 = 0;
UPDATE sm_h SET v = v + 1 WHERE id % 71 = 0;
UPDATE sm_t SET v = v + 1 WHERE id % 71 = 0;
-- outer values: keys the table has, keys it has not (700..899), NULLs, repeats
CREATE TABLE mo (ok int, ok8 bigint, okd date, ox int, w int);
INSERT INTO mo SELECT i % 900, (i % 60) * 1000000000::bigint, date '2024-01-01' + (i % 120),
    i % 11, i
FROM generate_series(1, 1500) i;
INSERT INTO mo VALUES (NULL, NULL, NULL, NULL, 0), (5, NULL, NULL, 3, -1);
CREATE TABLE md0 (dk int PRIMARY KEY, tag text);
INSERT INTO md0 SELECT i, CASE WHEN i % 97 = 3 THEN 'pick' ELSE 'other' END FROM generate_series(0, 699) i;
-- (heap's runs use indexes, so that comparing with heap takes seconds, not minutes)
CREATE INDEX ON sm_h (k);
CREATE INDEX ON sm_h (k8);
CREATE INDEX ON sm_h (kd);
CREATE INDEX ON sm_h (x);
CREATE INDEX ON sm_h (r);
ANALYZE sm_h, sm_t, mo, md0;

-- string keys: text, varchar and char(n) (compared without trailing blanks),
-- a long value stored compressed on both sides, values the table lacks, NULLs
CREATE TABLE ss_h (id int, s text, vc varchar(20), ch char(6), v int);
INSERT INTO ss_h SELECT i, CASE WHEN i % 29 = 0 THEN NULL ELSE 's' || (i % 300) END,
    'v' || (i % 40), 'c' || (i % 25), i % 1000
FROM generate_series(1, 12000) i;
INSERT INTO ss_h VALUES (0, repeat('long value ', 400), 'v1', 'c1 ', 7);
CREATE TABLE ss_t (LIKE ss_h) USING tessera WITH (tessera_row_group_row_limit = 2000);
INSERT INTO ss_t SELECT * FROM ss_h;
CREATE TABLE mso (os text, ovc varchar(30), och char(3), w int);
INSERT INTO mso SELECT 's' || (i % 400), 'v' || (i % 60), 'c' || (i % 30), i FROM generate_series(1, 700) i;
INSERT INTO mso VALUES (NULL, NULL, NULL, 0), (repeat('long value ', 400), 'v1', 'c1', -1);
ANALYZE ss_h, ss_t, mso;

-- runs answered from the memo, as EXPLAIN ANALYZE counts them (NULL: no
-- memo); or another of the memo's counts (label)
CREATE FUNCTION tt.memo_runs(q text, label text DEFAULT 'Runs Answered from Memo')
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    line text;
    runs bigint;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF position(label IN line) > 0 THEN
            runs := substring(line from '(\d+)\s*$')::bigint;
        END IF;
    END LOOP;
    RETURN runs;
END $$;

CREATE TEMP TABLE memo_q AS SELECT * FROM (VALUES
    ('SELECT mo.w, (SELECT avg(v) FROM {t} t WHERE t.k = mo.ok) FROM mo'),
    ('SELECT mo.w, (SELECT count(*) FROM {t} t WHERE t.k = mo.ok) FROM mo'),
    ('SELECT mo.w, (SELECT sum(x) FROM {t} t WHERE t.k = mo.ok AND t.x > 2),
            (SELECT max(v) FROM {t} t WHERE mo.ok = t.k) FROM mo'),
    ('SELECT mo.w, (SELECT sum(v) FROM {t} t WHERE t.k = mo.ok AND t.x = mo.ox) FROM mo'),
    ('SELECT mo.w, (SELECT count(*) FROM {t} t WHERE t.k8 = mo.ok8) FROM mo'),
    ('SELECT mo.w, (SELECT min(id) FROM {t} t WHERE t.kd = mo.okd AND t.v < 200) FROM mo'),
    ('SELECT mo.w, (SELECT count(v) + count(*) FROM {t} t WHERE t.k = mo.ok AND t.kd >= date ''2024-02-01'') FROM mo'),
    ('SELECT mo.w, (SELECT avg(v) + mo.w FROM {t} t WHERE t.k = mo.ok) FROM mo'),
    ('SELECT count(*), sum(w) FROM mo WHERE mo.w % 100 < (SELECT count(*) FROM {t} t WHERE t.k = mo.ok)'),
    ('SELECT count(*), sum(t1.v) FROM {t} t1 JOIN mo ON t1.k = mo.ok
      WHERE t1.v < (SELECT avg(v) FROM {t} t2 WHERE t2.k = t1.k)'),
    -- over a star join (the dimension read once for every run): its columns aggregated, a
    -- filter across it and the table
    ('SELECT mo.w, (SELECT sum(t.v) FROM {t} t JOIN md0 ON t.k = md0.dk WHERE md0.tag = ''pick'' AND t.x = mo.ox) FROM mo WHERE mo.w < 300'),
    ('SELECT mo.w, (SELECT count(*) + max(md0.dk) FROM {t} t JOIN md0 ON t.k = md0.dk WHERE md0.dk + t.id % 7 > 300 AND t.x = mo.ox) FROM mo WHERE mo.w < 300'),
    -- not memoized (HAVING; a volatile qual; a parameter of another type; a dimension
    -- reading a parameter): still heap's answers
    ('SELECT mo.w, (SELECT sum(t.v) FROM {t} t JOIN md0 ON t.k = md0.dk WHERE md0.dk < mo.ok AND t.x = mo.ox) FROM mo WHERE mo.w < 300'),
    ('SELECT mo.w, (SELECT sum(v) FROM {t} t WHERE t.k = mo.ok HAVING count(*) > 40) FROM mo'),
    ('SELECT mo.w, (SELECT count(*) FROM {t} t WHERE t.k = mo.ok AND random() >= 0) FROM mo WHERE mo.w < 200'),
    ('SELECT mo.w, (SELECT count(*) FROM {t} t WHERE t.k = mo.ok8) FROM mo WHERE mo.w < 200')
) v(q);
SELECT q, tt.cmp(q, 'sm_h', 'sm_t') FROM memo_q;

CREATE TEMP TABLE memo_sq AS SELECT * FROM (VALUES
    ('SELECT mso.w, (SELECT count(*) FROM {t} t WHERE t.s = mso.os) FROM mso'),
    ('SELECT mso.w, (SELECT sum(v) FROM {t} t WHERE t.vc = mso.ovc AND t.v > 100) FROM mso'),
    ('SELECT mso.w, (SELECT max(id) FROM {t} t WHERE t.ch = mso.och) FROM mso'),
    ('SELECT mso.w, (SELECT avg(v) FROM {t} t WHERE t.s = mso.os AND t.ch = mso.och) FROM mso')
) v(q);
SELECT q, tt.cmp(q, 'ss_h', 'ss_t') FROM memo_sq;
SELECT left(q, 60) AS q, tt.memo_runs(replace(q, '{t}', 'ss_t')) > 0 AS memoized FROM memo_sq;

-- which of them ran from a memo (and how many runs it answered)
SELECT left(q, 60) AS q, tt.memo_runs(replace(q, '{t}', 'sm_t')) AS memo_runs FROM memo_q;

-- an UPDATE whose subquery reads the table it updates: every run sees the
-- table as the statement began (its own new row versions are not seen)
CREATE TABLE su_h AS SELECT * FROM sm_h;
CREATE INDEX ON su_h (k);
CREATE TABLE su_t (LIKE sm_h) USING tessera WITH (tessera_row_group_row_limit = 2000);
INSERT INTO su_t SELECT * FROM sm_h;
UPDATE su_h u SET x = (SELECT count(*) FROM su_h t WHERE t.k = u.k) WHERE u.id % 3 = 0;
SELECT tt.memo_runs('UPDATE su_t u SET x = (SELECT count(*) FROM su_t t WHERE t.k = u.k) WHERE u.id % 3 = 0')
    > 0 AS memoized;
SELECT tt.same_table('su_h', 'su_t');
SELECT count(*) > 1000 AS updated FROM su_t WHERE x > 9;

-- a key in no order: every run reads every row group, the second builds the memo
SELECT tt.cmp('SELECT mo.w, (SELECT sum(v) FROM {t} t WHERE t.r = mo.w) FROM mo WHERE mo.w < 40',
              'sm_h', 'sm_t');
SELECT tt.memo_runs('SELECT mo.w, (SELECT sum(v) FROM sm_t t WHERE t.r = mo.w) FROM mo WHERE mo.w < 40');
-- its 30,000 groups past hash_mem: the memo is given up, every run scans
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT tt.cmp('SELECT mo.w, (SELECT sum(v) FROM {t} t WHERE t.r = mo.w) FROM mo WHERE mo.w < 40',
              'sm_h', 'sm_t');
SELECT tt.memo_runs('SELECT mo.w, (SELECT sum(v) FROM sm_t t WHERE t.r = mo.w) FROM mo WHERE mo.w < 40')
    IS NULL AS no_memo;
RESET work_mem;
RESET hash_mem_multiplier;

-- runs that read a row group each (the table is in id order) are memoized
-- only once they have read as many as the table has (15)
SELECT tt.memo_runs('SELECT mo.w, (SELECT sum(v) FROM sm_t t WHERE t.id = mo.w) FROM mo WHERE mo.w < 10')
    IS NULL AS not_yet;
SELECT tt.memo_runs('SELECT mo.w, (SELECT sum(v) FROM sm_t t WHERE t.id = mo.w) FROM mo WHERE mo.w < 40');
SELECT tt.cmp('SELECT mo.w, (SELECT sum(v) FROM {t} t WHERE t.id = mo.w) FROM mo WHERE mo.w < 40',
              'sm_h', 'sm_t');

-- priced as the memo runs (a lookup a call): TPC-H q17's shape, the table
-- joined to a few rows of a dimension and the subquery filtering the rows
-- that join, is a TesseraJoin that forms only those rows, not a hash join
-- over every row of the table (priced by scan a call, the subquery made
-- the join look 300 times dearer than the hash join)
CREATE TABLE md (dk int PRIMARY KEY, tag text);
INSERT INTO md SELECT i, CASE WHEN i % 97 = 3 THEN 'pick' ELSE 'other' END FROM generate_series(0, 699) i;
ANALYZE md;
EXPLAIN (COSTS OFF) SELECT sum(t.v), count(*) FROM sm_t t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT 0.6 * avg(s.x) FROM sm_t s WHERE s.k = md.dk);
SELECT tt.cmp($q$SELECT sum(t.v), count(*), min(t.id) FROM {t} t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT 0.6 * avg(s.x) FROM {t} s WHERE s.k = md.dk)$q$,
              'sm_h', 'sm_t');
SELECT tt.memo_runs($q$SELECT sum(t.v), count(*) FROM sm_t t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT 0.6 * avg(s.x) FROM sm_t s WHERE s.k = md.dk)$q$) > 0
    AS answered_from_memo;
-- ... and priced per scan where the memo's groups should not fit hash_mem
-- (it is given up then: every run scans): r's 30,000 groups in 64 kB
CREATE FUNCTION tt.subplan_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
    RETURN (SELECT max(c::text::float8)
            FROM jsonb_path_query(j, '$.** ? (@."Parent Relationship" == "SubPlan")."Total Cost"') c);
END $$;
SELECT tt.subplan_cost($q$SELECT count(*) FROM sm_t t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT avg(s.x) FROM sm_t s WHERE s.r = md.dk)$q$) < 1
    AS priced_as_lookup;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT tt.subplan_cost($q$SELECT count(*) FROM sm_t t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT avg(s.x) FROM sm_t s WHERE s.r = md.dk)$q$) > 10
    AS priced_as_scan;
RESET work_mem;
RESET hash_mem_multiplier;
DROP FUNCTION tt.subplan_cost(text);

-- The join runs the subquery only for keys of the dimension's rows it
-- keeps: the memo is built over those keys' rows only, and says how many
-- keys it was limited to (NULL: not limited).  The parameter is the
-- dimension's key, or the table's column it equals; a bigint key; a
-- dimension whose quals change from run to run of an outer subquery (its
-- keys are read again, and so is the memo).
CREATE TABLE md8 (dk8 bigint PRIMARY KEY, tag text);
INSERT INTO md8 SELECT i * 1000000000::bigint, CASE WHEN i % 7 = 2 THEN 'pick' ELSE 'other' END
FROM generate_series(0, 59) i;
ANALYZE md8;
CREATE TEMP TABLE memo_jq AS SELECT * FROM (VALUES
    ($q$SELECT sum(t.v), count(*), min(t.id) FROM {t} t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.x < (SELECT 0.6 * avg(s.x) FROM {t} s WHERE s.k = md.dk)$q$),
    ($q$SELECT sum(t.v), count(*), max(t.id) FROM {t} t, md
WHERE t.k = md.dk AND md.tag = 'pick' AND t.id % 50 = 0
  AND t.v > (SELECT avg(s.v) FROM {t} s WHERE s.k = t.k AND s.x > 3)$q$),
    ($q$SELECT count(*), sum(t.x) FROM {t} t, md
WHERE t.k = md.dk AND md.dk % 10 = 1 AND t.id % 3 = 0
  AND t.x <= (SELECT min(s.x) + 1 FROM {t} s WHERE s.k = md.dk AND s.kd < date '2024-02-15')$q$),
    ($q$SELECT count(*), sum(t.id) FROM {t} t, md8
WHERE t.k8 = md8.dk8 AND md8.tag = 'pick' AND t.id % 8 = 0
  AND t.id > (SELECT avg(s.id) FROM {t} s WHERE s.k8 = md8.dk8)$q$),
    -- the join inside an IN subquery (TPC-H Q20's shape): still a TesseraJoin
    ($q$SELECT mo.w, mo.ok FROM mo WHERE mo.ok IN (SELECT t.k FROM {t} t, md
WHERE t.k = md.dk AND md.tag = 'pick'
  AND t.v > (SELECT 0.9 * avg(s.v) FROM {t} s WHERE s.k = t.k AND s.x = t.x))$q$)
) v(q);
SELECT left(q, 70) AS q, tt.cmp(q, 'sm_h', 'sm_t') FROM memo_jq;
SELECT left(q, 70) AS q, tt.memo_runs(replace(q, '{t}', 'sm_t'), 'Memo Limited to Join Keys') AS memo_keys FROM memo_jq;
SELECT tt.cmp($q$SELECT v.c, (SELECT count(*) FROM {t} t, md
WHERE t.k = md.dk AND md.tag = v.c AND md.dk < v.lim
  AND t.x < (SELECT avg(s.x) FROM {t} s WHERE s.k = md.dk)) AS n
FROM (VALUES ('pick', 700), ('other', 15), ('pick', 300), ('nothing', 700)) v(c, lim)$q$,
              'sm_h', 'sm_t');
-- ... and TesseraJoin charges that subquery for the rows that join (md
-- keeps 8 of 700 keys: about 340 of the table's 30,000 rows), not for
-- every row its probes read: so charged, a nested loop of index probes
-- whose memo had to group the whole table was taken over it (TPC-H Q20)
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT tt.subplan_runs_charged(
    $q$SELECT t.id FROM sm_t t, md WHERE t.k = md.dk AND md.tag = 'pick'
        AND t.x > (SELECT avg(s.x) FROM sm_t s WHERE s.k = t.k)$q$,
    $q$SELECT t.id FROM sm_t t, md WHERE t.k = md.dk AND md.tag = 'pick'$q$)
    BETWEEN 100 AND 3000 AS charged_for_rows_joined;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
DROP TABLE md, md8;

DROP TABLE sm_h, sm_t, su_h, su_t, mo, md0, ss_h, ss_t, mso;
DROP FUNCTION tt.memo_runs(text, text);
