-- TesseraAgg computes GROUP BY expressions and aggregate arguments row by
-- row (once per dictionary entry for an expression of one dictionary
-- column): the same groups, results, NULLs and errors as heap, serial,
-- parallel and spilled; volatile expressions stay PostgreSQL's.
CREATE TABLE eh (id int, g int, s text, c char(4), ts timestamptz, d date, n numeric(10,2),
                 f float8, b bool);
INSERT INTO eh SELECT i,
    CASE WHEN i % 29 = 0 THEN NULL ELSE i % 50 END,
    CASE WHEN i % 31 = 0 THEN NULL ELSE (ARRAY['alpha', 'Beta', 'gamma ', 'δέλτα', ''])[1 + i % 5] END,
    CASE WHEN i % 37 = 0 THEN NULL ELSE 'c' || (i % 3) END,
    timestamptz '2024-01-01 00:00+00' + i * interval '17 minutes',
    date '2024-01-01' + i % 400,
    (i % 1000) / 8.0,
    CASE WHEN i % 41 = 0 THEN NULL ELSE i / 3.0 END,
    i % 3 = 0
FROM generate_series(1, 40000) i;
CREATE TABLE et (LIKE eh) USING tessera
    WITH (tessera_row_group_row_limit = 3000, tessera_stripe_row_limit = 12000);
INSERT INTO et SELECT * FROM eh;
DELETE FROM eh WHERE id % 101 = 0;
DELETE FROM et WHERE id % 101 = 0;
ANALYZE eh;
ANALYZE et;

EXPLAIN (COSTS OFF) SELECT date_trunc('month', ts), count(*) FROM et GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT g % 7, avg(length(s)), sum(id + 1) FROM et WHERE n > 3 GROUP BY 1;

SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT date_trunc(''month'', ts), count(*), sum(n) FROM {t} GROUP BY 1'),
    ('SELECT date_trunc(''day'', ts AT TIME ZONE ''UTC''), max(id) FROM {t} GROUP BY 1'),
    ('SELECT extract(dow FROM ts)::int, count(*) FROM {t} GROUP BY 1'),
    ('SELECT g % 7, count(*), min(s) FROM {t} GROUP BY 1'),
    ('SELECT g - 1, g, count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT upper(s), count(*), avg(length(s)) FROM {t} GROUP BY 1'),
    ('SELECT length(s), count(*) FROM {t} GROUP BY length(s)'),
    ('SELECT substr(s, 1, 2) AS p, c, count(*) FROM {t} GROUP BY p, c'),
    ('SELECT rtrim(c) || ''!'', count(*) FROM {t} GROUP BY 1'),
    ('SELECT CASE WHEN g > 25 THEN s ELSE ''low'' END, count(*), sum(f) FROM {t} GROUP BY 1'),
    ('SELECT coalesce(s, ''?''), count(*) FROM {t} GROUP BY 1'),
    ('SELECT 1, s, count(*) FROM {t} GROUP BY 1, s'),
    ('SELECT d + 1, count(*) FROM {t} WHERE id < 3000 GROUP BY 1'),
    ('SELECT (f > 100)::int, count(*) FROM {t} GROUP BY 1'),
    ('SELECT g / 10, count(DISTINCT s), count(*) FROM {t} GROUP BY 1'),
    ('SELECT sum(id + 1), sum(g * 2), avg(g - 3), min(s || ''x''), max(n * 2), count(nullif(g % 3, 0)) FROM {t}'),
    ('SELECT sum(g::bigint * 1000000000), avg(length(s)), max(length(s)), min(abs(f - 100)) FROM {t}'),
    ('SELECT sum(id + 1) FILTER (WHERE n < 10), count(*) FROM {t}'),
    ('SELECT date_part(''hour'', ts)::int h, count(*) FROM {t} GROUP BY h HAVING count(*) > 1600'),
    ('SELECT g % 5 AS k, count(*) FROM {t} WHERE s <> '''' GROUP BY k ORDER BY count(*) DESC, k LIMIT 3')
) v(q);

-- an expression of one string column with too many values for a
-- dictionary: its results are remembered per value, across row groups (and
-- the memo starts again past work_mem)
ALTER TABLE eh ADD COLUMN u text;
ALTER TABLE et ADD COLUMN u text;
UPDATE eh SET u = CASE WHEN id % 43 = 0 THEN NULL ELSE md5((id % 4000)::text) END;
UPDATE et SET u = CASE WHEN id % 43 = 0 THEN NULL ELSE md5((id % 4000)::text) END;
VACUUM FULL et;
SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT substr(u, 1, 2), count(*), max(upper(u)) FROM {t} GROUP BY 1'),
    ('SELECT regexp_replace(u, ''^([0-9]+).*$'', ''\1''), count(*) FROM {t} WHERE g < 20 GROUP BY 1'),
    ('SELECT coalesce(left(u, 1), ''-''), avg(length(u || s)) FROM {t} GROUP BY 1')
) v(q);
SET work_mem = '64kB';
SELECT tt.cmp('SELECT substr(u, 1, 3), count(*) FROM {t} GROUP BY 1', 'eh', 'et');
RESET work_mem;

-- an argument under a FILTER is PostgreSQL's: the filter comes first
SELECT tt.cmp('SELECT sum(100 / g) FILTER (WHERE g > 0), count(*) FROM {t}', 'eh', 'et');

-- errors: raised as heap raises them, only for rows that are counted
SELECT count(*) FROM et GROUP BY 100 / (g % 50);
SELECT count(*) FROM eh GROUP BY 100 / (g % 50);
SELECT tt.cmp('SELECT 100 / (g % 50), count(*) FROM {t} WHERE g % 50 <> 0 GROUP BY 1', 'eh', 'et');
-- an expression of one (dictionary) column that fails on entries no
-- counted row has ('alpha' and 'δέλτα' have five characters); and on one
-- a counted row has
EXPLAIN (COSTS OFF) SELECT 100 / (length(s) - 5), count(*) FROM et WHERE s IN ('Beta', 'gamma ', '') GROUP BY 1;
SELECT tt.cmp('SELECT 100 / (length(s) - 5), count(*) FROM {t} WHERE s IN (''Beta'', ''gamma '', '''') GROUP BY 1', 'eh', 'et');
SELECT count(*) FROM et WHERE s IN ('Beta', 'alpha') GROUP BY 100 / (length(s) - 5);

-- parallel: the partial nodes compute the keys, the final one merges them
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT g % 7, sum(id + 1) FROM et GROUP BY 1') l
    WHERE l LIKE '%TesseraAgg%';
SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT g % 7, sum(id + 1), avg(length(s)) FROM {t} GROUP BY 1'),
    ('SELECT date_trunc(''week'', ts), count(*), max(upper(s)) FROM {t} GROUP BY 1')
) v(q);
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;

-- a key estimated like its column but really of that many values: spills
SET work_mem = '64kB';
SELECT count(*) AS spilled FROM tt.explain('(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id + 0, count(*) FROM et GROUP BY 1') l
    WHERE l LIKE '%Groups Spilled%';
SELECT tt.cmp('SELECT id + 0, count(*), sum(g) FROM {t} GROUP BY 1', 'eh', 'et');
RESET work_mem;

-- length() of a text or varchar column counts characters from the bytes
-- (per dictionary entry, or per row of a plain chunk): multibyte UTF-8
-- (two, three and four bytes), long values, empty strings, NULLs
CREATE TABLE lh (id int, u text, v varchar(300), w text);
INSERT INTO lh SELECT i,
    CASE WHEN i % 23 = 0 THEN NULL
         ELSE repeat(substr('aé中😀bç', 1 + i % 6, 1 + i % 4), 1 + i % 37) || md5(i::text) END,
    CASE WHEN i % 19 = 0 THEN '' ELSE left(repeat('ñx€' || i, 20), i % 300) END,
    (ARRAY['', 'ab', 'éé', '中文字', NULL])[1 + i % 5]
FROM generate_series(1, 20000) i;
CREATE TABLE lt (LIKE lh) USING tessera WITH (tessera_row_group_row_limit = 3000);
INSERT INTO lt SELECT * FROM lh;
SELECT q, tt.cmp(q, 'lh', 'lt') FROM (VALUES
    ('SELECT id % 10, sum(length(u)), avg(char_length(v)), max(character_length(w)), count(length(u)) FROM {t} GROUP BY 1'),
    ('SELECT length(w), count(*), sum(length(v)) FROM {t} GROUP BY 1'),
    ('SELECT length(u) % 7, count(*) FROM {t} WHERE id > 5000 GROUP BY 1')
) v(q);
-- min/max of a varchar column (min(v::text), relabeled: read as the
-- column, in the aggregate's collation), and string expressions over
-- mostly distinct values (their memo given up after its first 8,192
-- lookups find few repeats)
SELECT q, tt.cmp(q, 'lh', 'lt') FROM (VALUES
    ('SELECT id % 10, min(v), max(v), count(v) FROM {t} GROUP BY 1'),
    ('SELECT min(v COLLATE "C"), max(v COLLATE "C"), min(u COLLATE "C") FROM {t}'),
    ('SELECT id % 3, min(upper(u)), max(lower(u)), count(*) FROM {t} GROUP BY 1'),
    ('SELECT id % 7, max(upper(w)), min(upper(u)) FROM {t} WHERE id % 4 <> 1 GROUP BY 1')
) v(q);
SELECT count(*) AS tessera_agg_plans
FROM tt.explain('SELECT id % 10, min(v), max(v) FROM lt GROUP BY 1') p
WHERE p LIKE '%Aggregates:%';
-- a string-valued aggregate argument is charged a row through the
-- evaluator for each value its column does not repeat: about a tuple's
-- cost per row of mostly distinct u more than for w's five values
CREATE FUNCTION pg_temp.agg_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    SET LOCAL max_parallel_workers_per_gather = 0;
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
    RETURN (plan->0->'Plan'->>'Total Cost')::float8;
END $$;
ANALYZE lt;
SELECT pg_temp.agg_cost('SELECT max(upper(u)) FROM lt') - pg_temp.agg_cost('SELECT max(upper(w)) FROM lt')
       BETWEEN 1.0 * 20000 * current_setting('cpu_tuple_cost')::float8
           AND 3 * 20000 * current_setting('cpu_tuple_cost')::float8 AS distinct_values_charged;

-- integer +, -, * computed a column at a time: the same sums, NULLs and
-- overflow errors, raised only when a counted row overflows
CREATE TABLE ih (a int, b bigint, c smallint, big int);
INSERT INTO ih SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE i END, i::bigint * 1000003000, (i % 300)::smallint,
    CASE WHEN i = 777 THEN 2000000000 ELSE i END
FROM generate_series(1, 20000) i;
CREATE TABLE it (LIKE ih) USING tessera WITH (tessera_row_group_row_limit = 3000);
INSERT INTO it SELECT * FROM ih;
SELECT q, tt.cmp(q, 'ih', 'it') FROM (VALUES
    ('SELECT sum(a * c), sum(b - a), avg(c + 2), min(a * 2 - c), max(b * c) FROM {t}'),
    ('SELECT c % 5, sum(a * 3 + b), count(a - c) FROM {t} GROUP BY 1'),
    ('SELECT sum(c::int * c), sum(c::int + a) FROM {t} WHERE a > 100'),
    ('SELECT sum(big * 2) FROM {t} WHERE big < 1000000'),
    ('SELECT sum(b * 3), sum(a::bigint * b) FROM {t} WHERE a < 5000')
) v(q);
SELECT count(*) AS tessera_agg_nodes
FROM tt.explain('(COSTS OFF) SELECT c % 5, sum(a * 3 + b), sum(b * c) FROM it GROUP BY 1') l
WHERE l LIKE '%TesseraAgg%';
-- the overflowing row is counted: PostgreSQL's error
SELECT sum(big * 2) FROM ih;
SELECT sum(big * 2) FROM it;
SELECT sum(c * c) FROM ih;
SELECT sum(c * c) FROM it;
SELECT sum(b * b) FROM ih WHERE a > 10;
SELECT sum(b * b) FROM it WHERE a > 10;

-- sum/avg of a column plus or minus a constant: summed as sum(x) + c *
-- count(x) from the column's one state, with PostgreSQL's results, NULLs
-- and overflow errors (only when a counted row overflows)
SELECT q, tt.cmp(q, 'ih', 'it') FROM (VALUES
    ('SELECT sum(c), sum(c + 1), sum(c + 89), sum(2 + c), sum(c - 7), avg(c + 3), avg(c - 1000), sum(c - (-5)) FROM {t}'),
    ('SELECT sum(a + 1), sum(a - 2), avg(a + 10), sum(b + 5), avg(b - 1), sum(a + 5000000000) FROM {t} WHERE big < 1000000'),
    ('SELECT c % 7, sum(a + 3), sum(a), avg(a - 3), count(a), sum(c + 1::smallint) FROM {t} WHERE big < 1000000 GROUP BY 1'),
    ('SELECT sum(a + 1), avg(a + 1) FROM {t} WHERE a IS NULL'),
    ('SELECT sum(big + 1) FROM {t} WHERE big < 2000000000'),
    ('SELECT sum(big + 147483647) FROM {t} WHERE big < 2000000000'),
    ('SELECT sum(c + 32767::smallint) FROM {t} WHERE c <= 0')
) v(q);
-- x + c overflows on a counted row: PostgreSQL's error on both
SELECT sum(big + 147483648) FROM ih;
SELECT sum(big + 147483648) FROM it;
SELECT sum(c + 32767::smallint) FROM ih WHERE c > 0;
SELECT sum(c + 32767::smallint) FROM it WHERE c > 0;
SELECT avg(b - 9223372036854775807) FROM ih WHERE b < 0 OR a = 1;
SELECT avg(b - 9223372036854775807) FROM it WHERE b < 0 OR a = 1;
SELECT avg(b + 9223372036854775807) FROM ih WHERE a = 1;
SELECT avg(b + 9223372036854775807) FROM it WHERE a = 1;
SELECT c % 3, sum(big + 200000000) FROM ih GROUP BY 1;
SELECT c % 3, sum(big + 200000000) FROM it GROUP BY 1;
-- in parallel: the workers check, the leader adds
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT sum(c + 1), avg(a - 4), sum(a + 7) FROM {t} WHERE big < 1000000', 'ih', 'it');
-- (raised in a worker or in the leader, whichever meets the row first)
\set VERBOSITY terse
SELECT sum(big + 147483648) FROM it;
\set VERBOSITY default
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE ih, it;

-- extract() of an integer field is a numeric key grouped as an integer
-- (infinite timestamps: infinite keys); other fields stay PostgreSQL's
CREATE TABLE xh (id int, ts timestamptz, t timestamp, d date, v int);
INSERT INTO xh SELECT i, CASE WHEN i % 97 = 0 THEN NULL
                              WHEN i % 89 = 0 THEN 'infinity'
                              WHEN i % 83 = 0 THEN '-infinity'
                              ELSE timestamptz '2023-12-30 22:00+00' + i * interval '7 minutes 3 seconds' END,
    timestamp '1999-12-31 23:59' + i * interval '11 hours', date '2020-02-27' + i % 900, i % 11
FROM generate_series(1, 30000) i;
CREATE TABLE xt (LIKE xh) USING tessera WITH (tessera_row_group_row_limit = 4000);
INSERT INTO xt SELECT * FROM xh;
ANALYZE xh;
ANALYZE xt;
SELECT q, tt.cmp(q, 'xh', 'xt') FROM (VALUES
    ('SELECT extract(year FROM ts), extract(month FROM ts), count(*), sum(v) FROM {t} GROUP BY 1, 2'),
    ('SELECT extract(hour FROM ts) h, extract(minute FROM t) m, count(*) FROM {t} GROUP BY h, m'),
    ('SELECT extract(dow FROM d), extract(isodow FROM t), extract(doy FROM d), count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT extract(quarter FROM d), extract(week FROM ts), extract(isoyear FROM t), max(id) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT extract(century FROM ts), extract(decade FROM t), extract(millennium FROM d), extract(day FROM ts), count(*) FROM {t} GROUP BY 1, 2, 3, 4'),
    ('SELECT extract(year FROM ts), count(DISTINCT v), count(*) FROM {t} GROUP BY 1'),
    ('SELECT extract(minute FROM ts), v, count(*) FROM {t} WHERE v > 3 GROUP BY 1, 2 HAVING count(*) > 5'),
    ('SELECT extract(second FROM ts), count(*) FROM {t} GROUP BY 1'),
    ('SELECT extract(epoch FROM d), count(*) FROM {t} GROUP BY 1')
) v(q);
SELECT q, (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'xt')) l
           WHERE l LIKE '%TesseraAgg%') AS tessera_agg_nodes
FROM (VALUES
    ('SELECT extract(year FROM ts), count(*) FROM {t} GROUP BY 1'),
    ('SELECT extract(second FROM ts), count(*) FROM {t} GROUP BY 1'),
    ('SELECT extract(epoch FROM d), count(*) FROM {t} GROUP BY 1')
) v(q);
SELECT extract(year FROM ts) y, count(*) FROM xt WHERE extract(year FROM ts) IS NULL OR ts IN ('infinity', '-infinity') GROUP BY 1 ORDER BY 1;
SET work_mem = '64kB';
SELECT tt.cmp('SELECT extract(minute FROM ts), extract(hour FROM t), id % 50, count(*) FROM {t} GROUP BY 1, 2, 3', 'xh', 'xt');
RESET work_mem;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT extract(year FROM ts), extract(month FROM t), count(*), sum(v) FROM {t} GROUP BY 1, 2', 'xh', 'xt');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE xh, xt;

-- date_trunc() of a timestamp to a day or less is rounded down here (the
-- unit read as PostgreSQL reads it); before 2000 (negative), BC, between
-- microseconds, infinities and NULLs; longer units and timestamptz stay
-- PostgreSQL's
CREATE TABLE dth (id int, t timestamp, tz timestamptz, v int);
INSERT INTO dth SELECT i, CASE WHEN i % 97 = 0 THEN NULL
                               WHEN i % 89 = 0 THEN 'infinity'
                               WHEN i % 83 = 0 THEN '-infinity'
                               WHEN i % 7 = 0 THEN timestamp '0044-03-15 12:34:56.789 BC' + i * interval '13 seconds 17 microseconds'
                               ELSE timestamp '1999-12-31 22:13:14.123456' + i * interval '1 minute 7.000123 seconds' END,
    timestamptz '2024-03-30 20:00+00' + i * interval '1 minute', i % 13
FROM generate_series(1, 30000) i;
CREATE TABLE dtt (LIKE dth) USING tessera WITH (tessera_row_group_row_limit = 4000);
INSERT INTO dtt SELECT * FROM dth;
ANALYZE dth;
ANALYZE dtt;
SELECT q, tt.cmp(q, 'dth', 'dtt') FROM (VALUES
    ('SELECT date_trunc(''minute'', t), count(*) FROM {t} GROUP BY 1'),
    ('SELECT date_trunc(''MINUTES'', t), v, count(*) FROM {t} WHERE v > 3 GROUP BY 1, 2'),
    ('SELECT date_trunc(''hour'', t) h, count(*), min(id) FROM {t} GROUP BY h HAVING count(*) > 1'),
    ('SELECT date_trunc(''day'', t), date_trunc(''second'', t), count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT date_trunc(''milliseconds'', t), count(*) FROM {t} GROUP BY 1'),
    ('SELECT date_trunc(''microseconds'', t), count(*) FROM {t} GROUP BY 1'),
    ('SELECT date_trunc(''week'', t), date_trunc(''month'', t), count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT date_trunc(''hour'', tz), date_trunc(''day'', tz), count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT v, min(date_trunc(''hour'', t)), max(date_trunc(''minute'', t)), count(DISTINCT date_trunc(''day'', t)) FROM {t} GROUP BY v')
) v(q);
SELECT count(*) AS tessera_agg_nodes
FROM tt.explain('(COSTS OFF) SELECT date_trunc(''minute'', t), count(*) FROM dtt GROUP BY 1') l
WHERE l LIKE '%TesseraAgg%';
SELECT date_trunc('hour', t) h, count(*) FROM dtt WHERE id % 89 = 0 OR id % 83 = 0 GROUP BY 1 ORDER BY 1;
SELECT date_trunc('fortnight', t), count(*) FROM dtt GROUP BY 1;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT date_trunc(''minute'', t), count(*), sum(v) FROM {t} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5', 'dth', 'dtt');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE dth, dtt;

-- not ours: volatile expressions, a whole-row reference, a key of a
-- nondeterministic collation
CREATE COLLATION ae_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT q, (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'et')) l
           WHERE l LIKE '%TesseraAgg%') AS tessera_agg_nodes
FROM (VALUES
    ('SELECT g + (random() * 0)::int, count(*) FROM {t} GROUP BY 1'),
    ('SELECT sum(id + (random() * 0)::int) FROM {t}'),
    ('SELECT length({t}::text), count(*) FROM {t} GROUP BY 1'),
    ('SELECT (s || '''') COLLATE ae_ci, count(*) FROM {t} GROUP BY 1')
) v(q);
SELECT tt.cmp('SELECT (s || '''') COLLATE ae_ci, count(*) FROM {t} GROUP BY 1', 'eh', 'et');

-- a subquery run again for each outer row: an expression of a string
-- column that reads the outer value is remembered per value within one run
-- only (a memo kept across runs gave the first run's results to all)
SELECT gg,
    (SELECT min(k) FROM (SELECT s || gg::text AS k, count(*) FROM et GROUP BY 1) q) AS key_t,
    (SELECT min(k) FROM (SELECT s || gg::text AS k, count(*) FROM eh GROUP BY 1) q) AS key_h,
    (SELECT sum(length(s || repeat('x', gg))) FROM et) AS sum_t,
    (SELECT sum(length(s || repeat('x', gg))) FROM eh) AS sum_h
FROM generate_series(1, 3) gg;
SELECT count(*) AS tessera_aggs
FROM tt.explain('SELECT gg, (SELECT sum(length(s || repeat(''x'', gg))) FROM et) FROM generate_series(1, 3) gg') l
WHERE l LIKE '%TesseraAgg%';

-- the groups of time fields are estimated from their range (a year from
-- the column's histogram), not as the column's distinct values
CREATE TABLE ey (d date, ts timestamp, v int) USING tessera;
INSERT INTO ey SELECT date '2019-03-01' + (i % 1800), timestamp '2024-01-01' + i * interval '7 minutes', i
FROM generate_series(1, 20000) i;
ANALYZE ey;
SELECT q, (regexp_match(l, 'rows=(\d+)'))[1]::int AS groups_expected
FROM (VALUES
    ('SELECT extract(year FROM d), count(*) FROM ey GROUP BY 1'),
    ('SELECT extract(month FROM ts), extract(year FROM d), sum(v) FROM ey GROUP BY 1, 2'),
    ('SELECT extract(hour FROM ts), count(*) FROM ey GROUP BY 1'),
    ('SELECT extract(dow FROM d), extract(quarter FROM d), count(*) FROM ey GROUP BY 1, 2')
) v(q), LATERAL (SELECT l FROM tt.explain(q) l WHERE l LIKE '%TesseraAgg%' LIMIT 1) p;
SELECT tt.cmp('SELECT extract(year FROM d), extract(month FROM ts), count(*), sum(v) FROM {t} GROUP BY 1, 2', 'ey', 'ey');
DROP TABLE ey;

-- extract()'s fields of a timestamp or date column, computed from their
-- integers: days before 2000 and BC, infinities (NULL, but a year's), NULLs
CREATE TABLE exh (ts timestamp, d date, v int);
INSERT INTO exh SELECT timestamp '1999-12-31 23:59:00' + (i * 7919 % 100000 - 50000) * interval '97 minutes',
    date '2000-01-01' + (i * 104729 % 2000000 - 1000000), i
FROM generate_series(1, 6000) i;
INSERT INTO exh VALUES ('infinity', 'infinity', 1), ('-infinity', '-infinity', 2), (NULL, NULL, 3),
    ('0044-03-15 12:30:00 BC', '0044-03-15 BC', 4), ('0001-01-01 00:00:00', '0001-01-01', 5),
    ('0001-12-31 23:59:59 BC', '0001-12-31 BC', 6), ('2000-02-29 00:00:00', '2000-02-29', 7);
CREATE TABLE ext (LIKE exh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO ext SELECT * FROM exh;
SELECT f, tt.cmp(format('SELECT extract(%s FROM ts) AS k, count(*), sum(v) FROM {t} GROUP BY 1', f), 'exh', 'ext') AS ts,
    CASE WHEN f IN ('minute', 'hour') THEN NULL
         ELSE tt.cmp(format('SELECT extract(%s FROM d) AS k, count(*), min(v) FROM {t} GROUP BY 1', f), 'exh', 'ext') END AS d
FROM unnest(ARRAY['minute', 'hour', 'day', 'month', 'year', 'quarter', 'dow', 'isodow', 'doy']) f;
SELECT tt.cmp('SELECT extract(year FROM ts), extract(month FROM d), extract(minute FROM ts), count(*) FROM {t} GROUP BY 1, 2, 3', 'exh', 'ext');
SELECT tt.cmp('SELECT v % 10, sum(extract(doy FROM d)), max(extract(year FROM ts)), min(extract(hour FROM ts)) FROM {t} GROUP BY 1', 'exh', 'ext');
-- a date's time fields stay PostgreSQL's: its error
SELECT extract(minute FROM d), count(*) FROM ext GROUP BY 1;
DROP TABLE exh, ext;

-- keys that are functions of other keys are carried, not grouped on:
-- computed per row (errors as heap's), stored from each group's first row
EXPLAIN (COSTS OFF) SELECT g, g - 1, g * 2 + id % 1, count(*) FROM et GROUP BY g, g - 1, g * 2 + id % 1;
EXPLAIN (COSTS OFF) SELECT g, g + 1, upper(s), s, count(*) FROM et GROUP BY 1, 2, 3, 4;
-- not carried: a key of a char(n) column (its trailing blanks), of a
-- computed key, a count(DISTINCT) beside them, a volatile key
EXPLAIN (COSTS OFF) SELECT c, c || 'x', count(*) FROM et GROUP BY 1, 2;
EXPLAIN (COSTS OFF) SELECT g % 7, (g % 7) + 1, count(*) FROM et GROUP BY 1, 2;
EXPLAIN (COSTS OFF) SELECT g, g - 1, count(DISTINCT s) FROM et GROUP BY 1, 2;
SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT g, g - 1, g - 2, count(*), sum(id) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT g - 1, g, count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT g + 1, g * 2, count(*) FROM {t} WHERE g IS NOT NULL GROUP BY g, 1, 2'),
    ('SELECT s, length(s), upper(s), s || ''!'', min(id) FROM {t} GROUP BY 1, 2, 3, 4'),
    ('SELECT g, s, g::text || s, coalesce(s, ''none''), count(*), max(ts) FROM {t} GROUP BY 1, 2, 3, 4'),
    ('SELECT d, extract(dow FROM d), d + 7, count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT ts, date_trunc(''day'', ts), count(*) FROM {t} WHERE id < 5000 GROUP BY 1, 2'),
    ('SELECT n, n * 2, round(n), count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT g, g % 3, count(*) FROM {t} GROUP BY 1, 2 HAVING count(*) > 700'),
    ('SELECT g, g - 1, max(f), sum(id) FROM {t} GROUP BY 1, 2 ORDER BY count(*) DESC, g LIMIT 5'),
    ('SELECT g, g - 1, s, count(DISTINCT d), count(*) FROM {t} GROUP BY 1, 2, 3')
) v(q);
-- parallel, and past hash_mem (spilled): the carried keys come back with their groups
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT tt.cmp('SELECT id, id + 1, id::text, count(*) FROM {t} GROUP BY 1, 2, 3', 'eh', 'et');
-- a new group's carried expressions are computed for its first row only:
-- sliced in parallel, over the rows a filter keeps, and beside an
-- aggregate of the same expression (which computes it for every row)
EXPLAIN (COSTS OFF) SELECT id, id - 1, id * 2, count(*) FROM et GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1 LIMIT 5;
SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT id, id - 1, id * 2, count(*) FROM {t} GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1 LIMIT 5'),
    ('SELECT id, id - 1, id * 2, count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT id, id - 1, length(s), s, count(*) FROM {t} WHERE id % 7 = 0 GROUP BY 1, 2, 4, 3'),
    ('SELECT g, g - 1, extract(year FROM ts), ts, count(*) FROM {t} WHERE id < 3000 GROUP BY 1, 2, 4, 3'),
    ('SELECT g, g - 1, sum(g - 1), count(*) FROM {t} GROUP BY 1, 2')
) v(q);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
SELECT tt.cmp('SELECT id, id * 3, s, s || id::text, count(*) FROM {t} GROUP BY 1, 2, 3, 4', 'eh', 'et');
RESET work_mem;
RESET max_parallel_workers_per_gather;
-- an error in a carried key is raised as heap raises it
CREATE TABLE ebh (k int);
INSERT INTO ebh VALUES (1), (2147483647), (3);
CREATE TABLE ebt (LIKE ebh) USING tessera;
INSERT INTO ebt SELECT * FROM ebh;
SELECT k, k + 1, count(*) FROM ebh GROUP BY 1, 2;
SELECT k, k + 1, count(*) FROM ebt GROUP BY 1, 2;
SELECT k, k + 1, count(*) FROM ebh GROUP BY 1, 2 HAVING k < 10;
SELECT k, k + 1, count(*) FROM ebt GROUP BY 1, 2 HAVING k < 10;
DROP TABLE ebh, ebt;

-- integer arithmetic as group keys over every row of a batch (a loop over
-- all rows) and over the rows a filter keeps (over a row list): smallint,
-- integer and bigint, NULLs, constants on either side, two columns, and
-- the range of each type's result checked as PostgreSQL checks it
CREATE TABLE iah (s smallint, i int, b bigint);
INSERT INTO iah SELECT (g % 300 - 150)::smallint, CASE WHEN g % 11 = 0 THEN NULL ELSE g * 7919 % 100000 END,
    g::bigint * 1000003
FROM generate_series(1, 20000) g;
CREATE TABLE iat (LIKE iah) USING tessera;
INSERT INTO iat SELECT * FROM iah;
SELECT q, tt.cmp(q, 'iah', 'iat') FROM (VALUES
    ('SELECT i, i - 1, i * 3, 5 - i, count(*) FROM {t} GROUP BY 1, 2, 3, 4'),
    ('SELECT s, s + 1::smallint, s * 100::smallint, count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT b, b - 7, b * 2, count(*) FROM {t} WHERE b % 3 = 0 GROUP BY 1, 2, 3'),
    ('SELECT i, i + s, count(*) FROM {t} WHERE s > 0 GROUP BY 1, 2'),
    ('SELECT s + 2::smallint, sum(i - 1), count(*) FROM {t} GROUP BY 1')
) x(q);
SELECT s, s * 300::smallint, count(*) FROM iah GROUP BY 1, 2;
SELECT s, s * 300::smallint, count(*) FROM iat GROUP BY 1, 2;
SELECT i, i + 2147400000, count(*) FROM iah WHERE s > 100 GROUP BY 1, 2;
SELECT i, i + 2147400000, count(*) FROM iat WHERE s > 100 GROUP BY 1, 2;
SELECT b, b * 9000000000000, count(*) FROM iah GROUP BY 1, 2;
SELECT b, b * 9000000000000, count(*) FROM iat GROUP BY 1, 2;
DROP TABLE iah, iat;

-- bool group keys (an integer of one byte): a column with NULLs, bool
-- expressions (a comparison is NULL where its input is), beside other
-- keys, under count(DISTINCT), HAVING, ORDER BY the key, a spill past
-- work_mem and a parallel plan
CREATE TABLE bkh (id int, flag bool, n int, s text);
INSERT INTO bkh SELECT g, CASE WHEN g % 13 = 0 THEN NULL ELSE g % 3 = 0 END,
    CASE WHEN g % 17 = 0 THEN NULL ELSE g % 1000 END, 'v' || (g % 40)
FROM generate_series(1, 60000) g;
CREATE TABLE bkt (LIKE bkh) USING tessera;
INSERT INTO bkt SELECT * FROM bkh;
ANALYZE bkh, bkt;
EXPLAIN (COSTS OFF) SELECT flag, n > 500, count(*) FROM bkt GROUP BY 1, 2;
SELECT q, tt.cmp(q, 'bkh', 'bkt') FROM (VALUES
    ('SELECT flag, count(*), sum(n) FROM {t} GROUP BY flag'),
    ('SELECT n > 500, count(*), min(s) FROM {t} GROUP BY 1'),
    ('SELECT flag, n % 7 = 0, s, count(*) FROM {t} GROUP BY 1, 2, 3'),
    ('SELECT flag, count(DISTINCT s), count(*) FROM {t} GROUP BY flag'),
    ('SELECT n IS NULL, flag IS NOT TRUE, count(*) FROM {t} GROUP BY 1, 2'),
    ('SELECT flag, n, count(*) FROM {t} WHERE id < 20000 GROUP BY 1, 2 HAVING count(*) > 3'),
    ('SELECT s, flag, avg(n) FROM {t} WHERE n < 100 GROUP BY 1, 2'),
    ('SELECT bool_and(flag), bool_or(flag), every(flag), bool_or(n > 998) FROM {t}'),
    ('SELECT bool_and(flag), bool_or(flag), count(*) FROM {t} WHERE id % 13 = 0'),
    ('SELECT s, bool_and(flag), bool_or(flag), every(n > 5), bool_or(n IS NULL) FROM {t} GROUP BY s'),
    ('SELECT n % 9, bool_or(flag) FILTER (WHERE id > 30000), bool_and(flag) FILTER (WHERE n < 500) FROM {t} GROUP BY 1'),
    ('SELECT id % 13 = 0 AS k, bool_and(flag), bool_or(flag) FROM {t} GROUP BY 1'),
    ('SELECT flag, bool_and(id % 2 = 0), bool_or(id > 59990) FROM {t} GROUP BY flag')
) x(q);
EXPLAIN (COSTS OFF) SELECT s, bool_and(flag), bool_or(n > 5), every(flag) FROM bkt GROUP BY s;
SELECT tt.cmp_ordered('SELECT flag, count(*) FROM {t} GROUP BY flag ORDER BY flag NULLS FIRST', 'bkh', 'bkt');
SELECT tt.cmp_ordered('SELECT flag, n, count(*) FROM {t} GROUP BY 1, 2 ORDER BY 1 DESC, 2 LIMIT 7', 'bkh', 'bkt');
SET work_mem = '64kB';
SELECT tt.cmp('SELECT id % 2 = 0, id, flag, count(*) FROM {t} GROUP BY 1, 2, 3', 'bkh', 'bkt');
SELECT tt.cmp('SELECT flag, id / 2, n IS NULL, count(*) FROM {t} GROUP BY 1, 2, 3', 'bkh', 'bkt');
RESET work_mem;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT flag, n > 10, count(*), sum(id) FROM {t} GROUP BY 1, 2', 'bkh', 'bkt');
SELECT tt.cmp('SELECT s, bool_and(flag), bool_or(n < 3) FROM {t} GROUP BY s', 'bkh', 'bkt');
SELECT tt.cmp('SELECT bool_and(flag), bool_or(flag), every(id > 0) FROM {t}', 'bkh', 'bkt');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE bkh, bkt;

-- variances and standard deviations of floats (float8_accum's state, as
-- avg keeps it): NULLs, a group of one value (NULL for a sample), NaN and
-- infinity, expressions, FILTER; serial (a parallel plan combines partial
-- states, whose last digits depend on how the rows were split)
CREATE TABLE vfh (g int, x float8, y real);
INSERT INTO vfh SELECT i % 7, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919 % 1000) / 7.0 END,
    (i % 97)::real / 3
FROM generate_series(1, 30000) i;
INSERT INTO vfh VALUES (100, 1.5, NULL), (101, NULL, NULL), (102, 'NaN', 1), (103, 'Infinity', 2),
    (103, 1, 3);
CREATE TABLE vft (LIKE vfh) USING tessera;
INSERT INTO vft SELECT * FROM vfh;
ANALYZE vfh, vft;
EXPLAIN (COSTS OFF) SELECT g, stddev(x), variance(y), var_pop(x), stddev_pop(y) FROM vft GROUP BY g;
SELECT q, tt.cmp(q, 'vfh', 'vft') FROM (VALUES
    ('SELECT g, stddev(x), variance(y), var_pop(x), stddev_pop(y), var_samp(x), stddev_samp(y) FROM {t} GROUP BY g'),
    ('SELECT stddev(x), variance(x), var_pop(y), stddev_pop(x), avg(x) FROM {t} WHERE g < 100'),
    ('SELECT g % 2, stddev(x * 2 + 1), variance(y) FILTER (WHERE x > 50) FROM {t} GROUP BY 1'),
    ('SELECT g, var_samp(x), count(*) FROM {t} GROUP BY g HAVING stddev(y) > 1')
) x(q);
SELECT g, stddev(x), variance(y), var_pop(x), stddev_pop(y) FROM vft WHERE g >= 100 GROUP BY g ORDER BY g;
DROP TABLE vfh, vft;

-- SELECT DISTINCT over a tessera table is planned as the GROUP BY it is
-- (TesseraAgg): columns, expressions and NULLs, with quals, ORDER BY and
-- LIMIT, in FROM subqueries, CTEs, views and INSERT ... SELECT, prepared;
-- DISTINCT ON, volatile targets and EXISTS keep PostgreSQL's plan
CREATE TABLE dsh (id int, k int, s text, flag bool);
INSERT INTO dsh SELECT g, CASE WHEN g % 9 = 0 THEN NULL ELSE g % 50 END, 'w' || (g % 13),
    CASE WHEN g % 7 = 0 THEN NULL ELSE g % 2 = 0 END
FROM generate_series(1, 20000) g;
CREATE TABLE dst (LIKE dsh) USING tessera;
INSERT INTO dst SELECT * FROM dsh;
DELETE FROM dsh WHERE id % 101 = 0;
DELETE FROM dst WHERE id % 101 = 0;
UPDATE dsh SET s = 'moved' WHERE id % 997 = 0;
UPDATE dst SET s = 'moved' WHERE id % 997 = 0;
ANALYZE dsh, dst;
EXPLAIN (COSTS OFF) SELECT DISTINCT s FROM dst;
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT DISTINCT k, flag FROM dst WHERE id > 10) d;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (s) s, k FROM dst ORDER BY s, k;
EXPLAIN (COSTS OFF) SELECT DISTINCT k, random() > 2 FROM dst;
SELECT q, tt.cmp(q, 'dsh', 'dst') FROM (VALUES
    ('SELECT DISTINCT s FROM {t}'),
    ('SELECT DISTINCT k, flag FROM {t}'),
    ('SELECT DISTINCT k % 7, upper(s), flag IS NULL FROM {t} WHERE id < 15000'),
    ('SELECT count(*), count(k) FROM (SELECT DISTINCT k, s FROM {t}) d'),
    ('WITH d AS (SELECT DISTINCT s, k FROM {t} WHERE k > 10) SELECT s, count(*) FROM d GROUP BY s'),
    ('SELECT DISTINCT ON (s) s, k FROM {t} ORDER BY s, k'),
    ('SELECT s FROM {t} WHERE EXISTS (SELECT DISTINCT k FROM {t} x WHERE x.k = {t}.id % 60)'),
    ('SELECT DISTINCT s FROM {t} UNION SELECT DISTINCT s || ''!'' FROM {t} WHERE k = 3')
) x(q);
SELECT tt.cmp_ordered('SELECT DISTINCT k, s FROM {t} ORDER BY k DESC NULLS LAST, s LIMIT 12', 'dsh', 'dst');
CREATE VIEW dsv AS SELECT DISTINCT s, flag FROM dst;
SELECT tt.cmp('SELECT * FROM {t}', '(SELECT DISTINCT s, flag FROM dsh) h', 'dsv');
EXPLAIN (COSTS OFF) SELECT * FROM dsv;
CREATE TABLE dsi (k int, s text);
INSERT INTO dsi SELECT DISTINCT k, s FROM dst;
SELECT tt.cmp('SELECT * FROM {t}', '(SELECT DISTINCT k, s FROM dsh) h', 'dsi');
-- (a generic plan from the sixth execution on)
PREPARE dsp(int) AS SELECT count(*), min(s), max(s) FROM (SELECT DISTINCT s, flag FROM dst WHERE k = $1) d;
EXECUTE dsp(3); EXECUTE dsp(3); EXECUTE dsp(3); EXECUTE dsp(3); EXECUTE dsp(3); EXECUTE dsp(4);
SELECT count(*), min(s), max(s) FROM (SELECT DISTINCT s, flag FROM dsh WHERE k = 4) d;
EXECUTE dsp(NULL);
DEALLOCATE dsp;
-- a DISTINCT subquery under an enclosing qual keeps PostgreSQL's plan: a
-- qual whose equality differs from the grouping's (here another collation)
-- stays above a DISTINCT in PostgreSQL 18, and is pushed below a GROUP BY
CREATE TABLE dch (x text COLLATE ae_ci);
INSERT INTO dch VALUES ('abc'), ('ABC'), ('abd');
CREATE TABLE dct (LIKE dch) USING tessera;
INSERT INTO dct SELECT * FROM dch;
-- (how many rows, and the plan, differ between PostgreSQL versions: only
-- that heap and tessera agree, and that no TesseraAgg groups, are shown)
SELECT tt.cmp('SELECT * FROM (SELECT DISTINCT x FROM {t}) s WHERE x = ''abc'' COLLATE "C"', 'dch', 'dct')
    LIKE 'same%' AS same;
SELECT tt.cmp('SELECT * FROM (SELECT DISTINCT x FROM {t}) s JOIN (VALUES (''ABC'')) v(y) ON s.x = v.y COLLATE "C"',
              'dch', 'dct') LIKE 'same%' AS same;
SELECT count(*) AS tessera_agg FROM tt.explain('SELECT * FROM (SELECT DISTINCT x FROM dct) s WHERE x = ''abc'' COLLATE "C"') l
WHERE l LIKE '%TesseraAgg%';
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT DISTINCT x FROM dct) s;
DROP TABLE dch, dct;
DROP VIEW dsv;
DROP TABLE dsh, dst, dsi;

-- one integer key spread over a range a few times the direct-mapped
-- window's 65,536 entries, met first in its middle: the window widens down
-- and up (keys below the first one seen, above it, negative ones, NULLs,
-- the extremes of bigint, which stay hashed); the same groups as heap
CREATE TABLE wkh (k bigint, v int);
INSERT INTO wkh SELECT CASE WHEN i % 1000 = 7 THEN NULL
                            WHEN i = 2 THEN 9223372036854775807
                            WHEN i = 3 THEN -9223372036854775808
                            ELSE (i::bigint * 7919 + 65000) % 300000 - 150000 END, i % 97
FROM generate_series(1, 450000) i;
CREATE TABLE wkt (LIKE wkh) USING tessera;
INSERT INTO wkt SELECT * FROM wkh;
ANALYZE wkh, wkt;
SET max_parallel_workers_per_gather = 0;
SELECT tt.cmp('SELECT k, count(*), sum(v), min(v) FROM {t} GROUP BY k', 'wkh', 'wkt');
SELECT tt.cmp('SELECT k % 300000, count(*) FROM {t} GROUP BY 1', 'wkh', 'wkt');
SELECT count(*) AS tessera_agg FROM tt.explain('SELECT k, count(*), sum(v), min(v) FROM wkt GROUP BY k') l
WHERE l LIKE '%TesseraAgg%';
RESET max_parallel_workers_per_gather;
DROP TABLE wkh, wkt;

DROP TABLE eh, et, lh, lt;
DROP COLLATION ae_ci;
