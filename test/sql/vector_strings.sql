-- Vector quals on strings (=, <>, orderings, LIKE, NOT LIKE, ILIKE against a
-- value; once per dictionary entry or byte by byte), `<>` on every other
-- vector type, and count(DISTINCT col) in TesseraAgg: the same answers as
-- heap, serial, parallel and past work_mem.
CREATE COLLATION vs_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE vh (id int, s text, v varchar(12), c char(5), u text COLLATE "C",
                 i2 smallint, i8 bigint, n numeric(8,2), d date, f float8, ts timestamp,
                 ci text COLLATE vs_ci);
-- s: 60 dictionary words (some empty, some NULL) with 'google' in a few;
-- u: md5 text, too many values for a dictionary
INSERT INTO vh SELECT i,
    CASE WHEN i % 17 = 0 THEN NULL WHEN i % 5 = 0 THEN ''
         ELSE (ARRAY['http://www.google.com/', 'mail.google.', 'Google Maps', 'x%y', 'a_b',
                     'back\slash', 'ünïcödé', 'é', 'GOOGLE'])[1 + i % 9] || (i % 7)::text END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE 'v' || (i % 40) END,
    CASE WHEN i % 11 = 0 THEN NULL ELSE 'c' || (i % 4) END,
    md5(i::text),
    CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 9)::smallint END,
    i % 1000, (i % 300) / 4.0,
    date '2024-01-01' + i % 60,
    CASE WHEN i % 23 = 0 THEN 'NaN' ELSE (i % 50) / 4.0 END,
    timestamp '2024-01-01' + (i % 100) * interval '1 hour',
    CASE WHEN i % 3 = 0 THEN 'Abc' WHEN i % 3 = 1 THEN 'aBC' ELSE 'xyz' END
FROM generate_series(1, 30000) i;
CREATE TABLE vt (LIKE vh INCLUDING ALL) USING tessera
    WITH (tessera_row_group_row_limit = 2000, tessera_stripe_row_limit = 10000);
INSERT INTO vt SELECT * FROM vh;
-- deleted rows must not count
DELETE FROM vh WHERE id % 97 = 0;
DELETE FROM vt WHERE id % 97 = 0;
ANALYZE vh;
ANALYZE vt;

-- string quals are vector quals: TesseraAgg answers, no Filter left
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE s <> '' AND s LIKE '%google%';
EXPLAIN (COSTS OFF) SELECT s, count(*) FROM vt WHERE v = 'v7' AND c <> 'c1' GROUP BY s;
EXPLAIN (COSTS OFF) SELECT id FROM vt WHERE u NOT LIKE '%ab%' AND i2 <> 3;

-- every kind of string qual, answers as heap's
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'vh', 'vt') FROM (VALUES
    ($$s = ''$$), ($$s <> ''$$), ($$s = 'mail.google.3'$$), ($$'mail.google.3' = s$$),
    ($$s <> 'GOOGLE1'$$), ($$s < 'b'$$), ($$'b' <= s$$), ($$s > 'mail'$$), ($$s >= 'é'$$),
    ($$s LIKE '%google%'$$), ($$s NOT LIKE '%google%'$$), ($$s LIKE 'mail%'$$),
    ($$s LIKE '%3'$$), ($$s LIKE 'GOOGLE2'$$), ($$s LIKE '%'$$), ($$s LIKE ''$$),
    ($$s LIKE '%%oo%%'$$), ($$s LIKE '_%gle%'$$), ($$s LIKE '%\%%'$$), ($$s LIKE '%x\%y%'$$),
    ($$s LIKE '%a\_b%'$$), ($$s LIKE '%\\%'$$), ($$s LIKE '%ü%'$$), ($$s LIKE 'é_'$$),
    ($$s ILIKE '%google%'$$), ($$s NOT ILIKE '%GOOGLE%'$$), ($$s LIKE '%E%' ESCAPE 'E'$$),
    ($$v = 'v7'$$), ($$v <> 'v7'$$), ($$v LIKE 'v1%'$$), ($$v NOT LIKE '%1'$$), ($$v > 'v3'$$),
    ($$c = 'c1'$$), ($$c = 'c1   '$$), ($$c <> 'c1'$$), ($$c LIKE 'c1'$$), ($$c LIKE 'c1%'$$),
    ($$c < 'c2'$$), ($$c ILIKE 'C2%'$$),
    ($$u LIKE '%ab%'$$), ($$u NOT LIKE '%ab%'$$), ($$u < '5'$$), ($$u = md5('77')$$),
    ($$u LIKE 'a%' AND s <> ''$$), ($$s = u$$),
    ($$ci = 'ABC'$$), ($$ci <> 'abc'$$), ($$ci < 'b'$$),
    ($$s = current_setting('application_name')$$), ($$s LIKE NULL$$), ($$s = NULL$$),
    ($$s LIKE '%oo%le%'$$), ($$s LIKE 'http%google%/%'$$), ($$s LIKE 'mail%google%3'$$),
    ($$s LIKE '%g%g%g%'$$), ($$s NOT LIKE '%o%.%'$$), ($$s LIKE 'G%E%'$$), ($$s LIKE 'é%é'$$),
    ($$s LIKE '%ü%é%'$$), ($$s LIKE 'x%%y%'$$), ($$u LIKE '%a%b%c%'$$), ($$u LIKE 'a%0'$$),
    ($$u NOT LIKE '%1%2%'$$), ($$u LIKE '%e%e%e%e%e%e%'$$)
) x(q);
-- substring search ('%...%' and the inner literals of '%a%b%'), 16 bytes
-- at a time: values of 0 to 90 bytes over a small alphabet (matches
-- everywhere: at the start, across and at the ends of 16-byte blocks, in
-- the last bytes), needles of 1 to 20 bytes, overlapping and repeated,
-- multibyte; distinct values, so no dictionary answers for them
CREATE TABLE fbh (id int, s text);
INSERT INTO fbh SELECT i, left(translate(md5(i::text) || md5((i * 7)::text) || md5((i * 13)::text),
                                       '0123456789abcdef', 'aaaaabbbbbcccccé'),
                             (i * 37) % 91)
FROM generate_series(1, 6000) i;
CREATE TABLE fbt (LIKE fbh) USING tessera;
INSERT INTO fbt SELECT * FROM fbh;
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'fbh', 'fbt') FROM (VALUES
    ($$s LIKE '%c%'$$), ($$s LIKE '%ab%'$$), ($$s LIKE '%aaa%'$$), ($$s LIKE '%abcab%'$$),
    ($$s LIKE '%bcbcb%'$$), ($$s LIKE '%cab%bca%'$$), ($$s NOT LIKE '%ccc%'$$),
    ($$s LIKE '%aabbccaabb%'$$), ($$s LIKE '%abbbcabbébcaaaaac%'$$), ($$s LIKE '%é%'$$),
    ($$s LIKE '%aé%'$$), ($$s LIKE '%éb%c%'$$), ($$s LIKE 'a%bb%cc%'$$), ($$s LIKE '%ba%ab'$$)
) x(q);
SELECT count(*) AS vector_filters FROM tt.explain('SELECT count(*) FROM fbt WHERE s LIKE ''%ab%''') l
WHERE l LIKE '%Vector Filter%';
DROP TABLE fbh, fbt;
-- ILIKE: a value of ASCII bytes is lowered bytewise and matched as LIKE
-- matches the lowered pattern, where the collation lowers ASCII letters to
-- ASCII; other values (the Kelvin sign lowers to k, dotted and dotless i,
-- sharp s) and every value under a Turkish collation (I lowers to dotless
-- i) by the operator's function; values past 16 bytes, mixed case,
-- dictionary and not
CREATE TABLE ih (id int, s text, t text COLLATE "tr-x-icu");
INSERT INTO ih SELECT i, v, v FROM (SELECT i, (ARRAY['Istanbul', 'ISTANBUL', 'istanbul',
        U&'\0130stanbul', U&'\0131stanbul', 'KELVIN', U&'\212A', 'k', U&'Stra\00DFe', 'STRASSE',
        'MiXeD CaSe LoNg ' || repeat('AbC', i % 20), NULL, '', 'GOOGLE.com/Search?Q=x'])[1 + i % 14]
    || CASE WHEN i % 2 = 0 THEN '' ELSE (i % 100)::text END AS v
    FROM generate_series(1, 20000) i) x;
INSERT INTO ih SELECT 20000 + i, translate(md5(i::text), 'abc', 'ABC'), md5(i::text)
FROM generate_series(1, 20000) i;
CREATE TABLE it (LIKE ih INCLUDING ALL) USING tessera;
INSERT INTO it SELECT * FROM ih;
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'ih', 'it') FROM (VALUES
    ($$s ILIKE 'istanbul%'$$), ($$t ILIKE 'istanbul%'$$), ($$s NOT ILIKE 'ISTANBUL'$$),
    ($$t ILIKE '%I%'$$), ($$s ILIKE '%k%'$$), ($$s ILIKE 'k'$$), ($$s ILIKE 'K'$$),
    ($$s ILIKE '%strasse%'$$), ($$s ILIKE U&'%STRA\00DFE%'$$), ($$s ILIKE '%abcabc%'$$),
    ($$s NOT ILIKE '%abc%ABC%'$$), ($$s ILIKE 'mixed case%c'$$), ($$s ILIKE ''$$),
    ($$s NOT ILIKE '%'$$), ($$s ILIKE 'google%search?q=%'$$), ($$s ILIKE '_stanbul%'$$),
    ($$s ILIKE '%\%%'$$), ($$s ILIKE '%AB%'$$), ($$s ILIKE '%aB%c%'$$), ($$t ILIKE '%ab%'$$),
    ($$s ILIKE '%9'$$), ($$s ILIKE '%' || 'ab' || '%'$$)
) x(q);
SELECT count(*) AS vector_filters FROM tt.explain('SELECT count(*) FROM it WHERE s ILIKE ''%ab%''') l
WHERE l LIKE '%Vector Filter%';
-- rescanned (a nested loop's inner side): each scan lowers its values anew
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET max_parallel_workers_per_gather = 0;
SELECT tt.cmp($$SELECT v.x, count(*), sum(o.id) FROM (VALUES (1), (2), (3), (4), (5)) v(x)
    JOIN {t} o ON o.id % 5 = v.x - 1 WHERE o.s ILIKE '%AbC%' OR o.s ILIKE 'istanbul%'
    GROUP BY v.x$$, 'ih', 'it');
SELECT count(*) AS rescanned FROM tt.explain($$SELECT count(*) FROM (VALUES (1), (2)) v(x)
    JOIN it o ON o.id % 5 = v.x - 1 WHERE o.s ILIKE '%AbC%'$$) l
WHERE l LIKE '%Nested Loop%';
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET max_parallel_workers_per_gather;
DROP TABLE ih, it;
-- in a prepared statement: the value comes from a parameter
PREPARE vs_p(text) AS SELECT count(*) FROM vt WHERE s LIKE $1;
PREPARE vs_ph(text) AS SELECT count(*) FROM vh WHERE s LIKE $1;
EXECUTE vs_p('%google%'); EXECUTE vs_ph('%google%');
EXECUTE vs_p('%\'); EXECUTE vs_ph('%\');
DEALLOCATE vs_p; DEALLOCATE vs_ph;
-- a pattern ending in an escape is no vector qual: PostgreSQL's evaluator
-- runs it row by row (raising its error only for a value that reaches the
-- escape)
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE s LIKE 'abc\';
SELECT tt.cmp($$SELECT count(*) FROM {t} WHERE s LIKE 'abc\'$$, 'vh', 'vt');
SELECT count(*) FROM vt WHERE s LIKE 'http%\';
-- LIKE in a nondeterministic collation stays PostgreSQL's (before 18 an
-- error, from 18 on a count): the same on both tables
CREATE FUNCTION vs_try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE q INTO n;
    RETURN n::text;
EXCEPTION WHEN feature_not_supported THEN
    RETURN 'not supported';
END $$;
SELECT vs_try($$SELECT count(*) FROM vh WHERE ci LIKE 'a%'$$) =
    vs_try($$SELECT count(*) FROM vt WHERE ci LIKE 'a%'$$) AS same;
DROP FUNCTION vs_try(text);

-- `<>` on integers, numerics, dates, timestamps, floats (NaN = NaN), columns
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'vh', 'vt') FROM (VALUES
    ('i2 <> 3'), ('3 <> i2'), ('i8 <> 999'), ('i2 <> 70000'), ('n <> 1.25'), ('n <> 1.255'),
    ('d <> date ''2024-01-05'''), ('d <> timestamp ''2024-01-05 00:00'''),
    ('d <> timestamp ''2024-01-05 00:01'''), ('ts <> timestamp ''2024-01-01 05:00'''),
    ('f <> 1.5'), ('f <> ''NaN'''), ('i2 <> i8'), ('id <> i8')
) x(q);
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE i2 <> 3 AND f <> 1.5 AND n <> 1.25;

-- IN and NOT IN lists of integers (any integer width), dates and strings,
-- with NULL elements (NOT IN then passes nothing) and NULL values
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE i2 IN (-1, 6) AND s IN ('GOOGLE1', 'é2') AND c NOT IN ('c1');
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'vh', 'vt') FROM (VALUES
    ('i2 IN (-1, 6)'), ('i2 IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)'), ('i2 NOT IN (1, 2)'),
    ('i2 IN (1, NULL)'), ('i2 NOT IN (1, NULL)'), ('i8 IN (5::bigint, 999)'), ('id IN (7, 8::smallint)'),
    ('i8 = ANY (ARRAY[1, 2, 3])'), ('i8 <> ALL (ARRAY[1, 2, 3])'), ('i2 = ANY (''{}'')'),
    ('d IN (date ''2024-01-03'', date ''2024-02-01'')'), ('d NOT IN (date ''2024-01-03'')'),
    ('ts IN (timestamp ''2024-01-01 05:00'')'),
    ($$s IN ('GOOGLE1', 'é2', '')$$), ($$s NOT IN ('GOOGLE1', '')$$), ($$s IN ('x', NULL)$$),
    ($$s NOT IN ('x', NULL)$$), ($$v IN ('v1', 'v2')$$), ($$v NOT IN ('v1')$$),
    ($$c IN ('c1', 'c2   ')$$), ($$c NOT IN ('c1')$$), ($$u IN (md5('1'), md5('2'))$$),
    ($$ci IN ('ABC', 'q')$$), ($$ci NOT IN ('xyz')$$),
    ($$s = ANY (string_to_array(current_setting('application_name') || ',GOOGLE3', ','))$$)
) x(q);

-- AND / OR of vector quals (TPC-H Q19's OR of ranges), NULL values and
-- NULL comparison values, nested, in FILTER too
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE (n >= 1 AND n <= 11) OR (n >= 10 AND n <= 20) OR s LIKE '%google%';
SELECT q, tt.cmp('SELECT count(*), sum(id) FROM {t} WHERE ' || q, 'vh', 'vt') FROM (VALUES
    ('(n >= 1 AND n <= 11) OR (n >= 10 AND n <= 20) OR (n >= 50 AND n <= 60)'),
    ('(i2 = 3 AND s LIKE ''%google%'') OR (c = ''c1'' AND v IN (''v1'', ''v2''))'),
    ('i2 = 3 OR i2 IS NULL'), ('i2 = 3 OR i2 = NULL'), ('(i2 = 3 OR f > 5) AND (s <> '''' OR d < date ''2024-01-20'')'),
    ('i2 <> 3 OR NOT (f > 5)'), ('((id > 100 AND id < 200) OR id > 29000) AND (i8 <> 5 OR s IS NULL)')
) x(q);
SELECT tt.cmp('SELECT count(*) FILTER (WHERE i2 = 1 OR s = ''GOOGLE1''), sum(n) FILTER (WHERE (n > 10 AND n < 20) OR i8 < 5) FROM {t}', 'vh', 'vt');

-- count(DISTINCT): integers, strings (a dictionary, and not), char(n)
-- (trailing blanks do not count), NULLs, beside other aggregates and keys
EXPLAIN (COSTS OFF) SELECT v, count(DISTINCT s), count(*), sum(n) FROM vt GROUP BY v;
SELECT q, tt.cmp(q, 'vh', 'vt') FROM (VALUES
    ('SELECT count(DISTINCT s) FROM {t}'),
    ('SELECT count(DISTINCT u) FROM {t}'),
    ('SELECT count(DISTINCT i8), count(DISTINCT i8) FROM {t}'),
    ('SELECT count(DISTINCT c) FROM {t}'),
    ('SELECT count(DISTINCT i2), count(*), count(i2), sum(i8), avg(n), min(s), max(u), min(d) FROM {t}'),
    ('SELECT v, count(DISTINCT s), count(*), sum(n) FROM {t} GROUP BY v'),
    ('SELECT c, v, count(DISTINCT i8) FROM {t} GROUP BY c, v'),
    ('SELECT s, count(DISTINCT s) FROM {t} GROUP BY s'),
    ('SELECT i2, count(DISTINCT u) FROM {t} WHERE s <> '''' AND u LIKE ''%a%'' GROUP BY i2'),
    ('SELECT d, count(DISTINCT c) FROM {t} WHERE id < 0 GROUP BY d'),
    ('SELECT count(DISTINCT c), count(*) FROM {t} WHERE id < 0'),
    ('SELECT count(DISTINCT ts), min(ts), max(n) FROM {t} WHERE n <> 2.5'),
    ('SELECT count(DISTINCT ci) FROM {t}'),
    ('SELECT v, count(DISTINCT s) AS u FROM {t} GROUP BY v ORDER BY u DESC, v LIMIT 5')
) x(q);
-- serially, the other aggregates fold into the rolled-up groups row by row
-- (the groups of (keys, value) carry no states): computed and NULL keys,
-- FILTER, sums of expressions, min/max of strings, no key, no row, and a
-- rescan under a correlated subquery
SELECT q, tt.cmp(q, 'vh', 'vt') FROM (VALUES
    ('SELECT i2, count(DISTINCT u), count(*), sum(i8), avg(n), min(s), max(v) FROM {t} GROUP BY i2'),
    ('SELECT length(s) AS l, count(DISTINCT i8), sum(n + 1), count(*) FILTER (WHERE i2 > 3) FROM {t} GROUP BY 1'),
    ('SELECT d, c, count(DISTINCT s), avg(f), max(ts) FROM {t} WHERE s <> '''' GROUP BY d, c'),
    ('SELECT count(DISTINCT c), count(*), sum(i2), min(u) FROM {t} WHERE id % 3 = 0'),
    ('SELECT v, count(DISTINCT i2), count(*) FROM {t} WHERE id < 0 GROUP BY v'),
    ('SELECT id, (SELECT count(DISTINCT t1.i2) + sum(t1.i8) FROM {t} t1 WHERE t1.v = t0.v) FROM {t} t0 WHERE id < 40')
) x(q);
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT i2, count(DISTINCT u), count(*), sum(i8) FROM vt GROUP BY i2') l
    WHERE l LIKE '%TesseraAgg%';
-- parallel: partial nodes group by (keys, value), the final one rolls up
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT count(*) AS tessera_agg_nodes FROM tt.explain('(COSTS OFF) SELECT v, count(DISTINCT s), sum(n) FROM vt GROUP BY v') l
    WHERE l LIKE '%TesseraAgg%';
SELECT q, tt.cmp(q, 'vh', 'vt') FROM (VALUES
    ('SELECT count(DISTINCT u) FROM {t}'),
    ('SELECT v, count(DISTINCT s), count(*), sum(n), min(u) FROM {t} GROUP BY v'),
    ('SELECT c, count(DISTINCT i8) FROM {t} WHERE s LIKE ''%google%'' GROUP BY c')
) x(q);
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;

-- more distinct values than work_mem holds (the estimate was wrong): the
-- groups spill, merge back and roll up
CREATE TABLE sph (g int, k int, s text) WITH (autovacuum_enabled = off);
CREATE TABLE spt (LIKE sph) USING tessera WITH (autovacuum_enabled = off);
INSERT INTO sph SELECT i % 3, 0, 'x' FROM generate_series(1, 1000) i;
INSERT INTO spt SELECT * FROM sph;
ANALYZE sph;
ANALYZE spt;
INSERT INTO sph SELECT i % 5, i, 's' || (i % 30011) FROM generate_series(1, 60000) i;
INSERT INTO spt SELECT * FROM sph WHERE k > 0;
SET work_mem = '64kB';
SELECT count(*) AS spilled FROM tt.explain('(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT g, count(DISTINCT s), count(*) FROM spt GROUP BY g') l
    WHERE l LIKE '%Groups Spilled%';
SELECT q, tt.cmp(q, 'sph', 'spt') FROM (VALUES
    ('SELECT g, count(DISTINCT s), count(*), sum(k) FROM {t} GROUP BY g'),
    ('SELECT count(DISTINCT k), max(s) FROM {t}'),
    ('SELECT s, count(DISTINCT g) FROM {t} GROUP BY s')
) x(q);
RESET work_mem;
DROP TABLE sph, spt;

-- not ours: two DISTINCT columns, DISTINCT of an expression, with FILTER,
-- and float sums beside a count(DISTINCT) (added in scan order by
-- PostgreSQL); ours, though not a vector qual: a regular expression
-- (evaluated row by row: agg_row_quals)
SELECT q, tt.cmp(q, 'vh', 'vt'),
    (SELECT count(*) FROM tt.explain('(COSTS OFF) ' || replace(q, '{t}', 'vt')) l
     WHERE l LIKE '%TesseraAgg%') AS tessera_agg_nodes
FROM (VALUES
    ('SELECT count(DISTINCT s), count(DISTINCT v) FROM {t}'),
    ('SELECT count(DISTINCT i2 + 1) FROM {t}'),
    ('SELECT count(DISTINCT s) FILTER (WHERE id > 5) FROM {t}'),
    ('SELECT count(DISTINCT s), sum(f) FROM {t}'),
    ('SELECT count(*) FROM {t} WHERE s ~ ''goo''')
) x(q);

-- `substring(col FROM 1 FOR n) IN (...)` and NOT IN: a vector filter matching
-- each value's first n characters (multibyte ones counted as characters;
-- a shorter value whole), over dictionary and plain chunks, text, varchar
-- and char(n) (without its trailing blanks, as its cast to text drops
-- them), NULLs in the column and in the list; not in a nondeterministic
-- collation, nor from another position
EXPLAIN (COSTS OFF) SELECT count(*) FROM vt WHERE substring(u FROM 1 FOR 2) IN ('ab', '1f', 'c4');
SELECT q, tt.cmp('SELECT id FROM {t} WHERE ' || q, 'vh', 'vt'),
    (SELECT count(*) FROM tt.explain('(COSTS OFF) SELECT count(*) FROM vt WHERE ' || q) l
     WHERE l LIKE '%Vector Filter%') AS vector
FROM (VALUES
    ('substring(u FROM 1 FOR 2) IN (''ab'', ''1f'', ''c4'')'),
    ('substring(u FROM 1 FOR 2) NOT IN (''ab'', ''1f'', ''c4'')'),
    ('substr(u, 1, 1) = ANY (ARRAY[''a'', ''b'', NULL])'),
    ('substring(u FROM 1 FOR 1) <> ALL (ARRAY[''a'', NULL])'),
    ('substring(s FROM 1 FOR 4) IN (''http'', ''GOOG'', ''ünïc'', ''é3'')'),
    ('substring(s FROM 1 FOR 1) IN (''é'', ''ü'', '''')'),
    ('substring(s FROM 1 FOR 40) IN (''Google Maps1'', ''x%y2'')'),
    ('substring(v FROM 1 FOR 2) IN (''v1'', ''v3'') AND id > 100'),
    ('substring(c FROM 1 FOR 3) IN (''c1'', ''c2 '')'),
    ('substring(c FROM 1 FOR 2) NOT IN (''x'', ''c3'')'),
    ('substring(u FROM 2 FOR 2) IN (''ab'', ''1f'')'),
    ('substring(s FROM 1 FOR 2) <> ALL (''{}''::text[])'),
    ('s <> ALL (''{}''::text[])'),
    ('i2 <> ALL (''{}''::smallint[])'),
    ('s = ANY (''{}''::text[])'),
    ('substring(ci FROM 1 FOR 1) IN (''a'')')
) x(q);

DROP TABLE vh, vt;
DROP COLLATION vs_ci;

-- mostly empty strings: runs of every length up to 20 between non-empty
-- values (short, and long ones whose header is four bytes), NULLs among
-- them, row groups whose last values are empty; `= ''` / `<> ''` and the
-- values themselves, as heap returns them
CREATE TABLE eh (id int, s text, v varchar(300));
INSERT INTO eh SELECT i,
    CASE WHEN i % 97 = 0 THEN NULL
         WHEN (i * 7919) % 21 < (i / 21) % 21 THEN ''
         WHEN i % 5 = 0 THEN repeat('long' || i, 40)
         ELSE 'p' || i END,
    CASE WHEN i % 3 = 0 THEN '' ELSE 'v' || i END
FROM generate_series(1, 9000) i;
CREATE TABLE et (LIKE eh) USING tessera
    WITH (tessera_compression = 'none', tessera_row_group_row_limit = 1003);
INSERT INTO et SELECT * FROM eh;
SELECT q, tt.cmp(q, 'eh', 'et') FROM (VALUES
    ('SELECT count(*) FROM {t} WHERE s = '''''),
    ('SELECT count(*) FROM {t} WHERE s <> '''''),
    ('SELECT id, s FROM {t} WHERE s <> '''' AND id % 7 = 0'),
    ('SELECT id FROM {t} WHERE s = '''' AND v <> '''''),
    ('SELECT id, s, v FROM {t}'),
    ('SELECT md5(string_agg(coalesce(s, ''~''), '','' ORDER BY id)) FROM {t}')
) x(q);
DROP TABLE eh, et;
