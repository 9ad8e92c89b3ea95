-- COPY to and from Parquet (src/files/): round trips through tessera and
-- heap tables compared with their sources, what COPY FROM does on the way
-- (column lists, WHERE, defaults, constraints, triggers, partitions,
-- domains, FREEZE), and every error: types without a Parquet counterpart,
-- values that do not fit, files that do not match the table, options,
-- privileges.  (Files written and read by pyarrow and DuckDB:
-- test/files/parquet_interop.py.)
SET client_min_messages = warning;
SELECT current_setting('data_directory') AS datadir \gset
\set f_all :datadir '/regress_all.parquet'
\set f_q :datadir '/regress_q.parquet'
\set f_empty :datadir '/regress_empty.parquet'
\set f_part :datadir '/regress_part.parquet'
\set f_bad :datadir '/regress_bad.parquet'
\set f_text :datadir '/regress_text.parquet'

CREATE TABLE pq_src (
    i int, b bigint, s smallint, f4 real, f8 float8, n numeric(12,2), nu numeric,
    t text, v varchar(10), c char(4), bo bool, d date, tm time, ts timestamp,
    tz timestamptz, u uuid, j json, jb jsonb, by bytea, ai int[], at text[],
    an numeric(6,3)[]
) USING tessera;
INSERT INTO pq_src
SELECT g, g * 1000000007::bigint * (CASE WHEN g % 2 = 0 THEN -1 ELSE 1 END), (g % 30000) - 15000,
       g / 3.0, g / 7.0, g * 1.25 - 500, g / 8.0, 'text ' || g || repeat('é', g % 5), 'v' || g,
       'c' || (g % 10), g % 2 = 0, date '1960-01-01' + g * 17, time '10:00' + g * interval '1s',
       timestamp '1969-12-31 23:00' + g * interval '1 h 1.000123 s',
       timestamptz '2024-01-01 00:00+00' + g * interval '1m', md5(g::text)::uuid,
       ('{"a":' || g || '}')::json, ('{"b": [' || g || ', null]}')::jsonb, decode(md5(g::text), 'hex'),
       CASE WHEN g % 7 = 0 THEN '{}'::int[] ELSE array[g, g + 1, NULL] END,
       array['x' || g, NULL, ''], array[g / 1000.0, -1.5]
FROM generate_series(1, 3000) g;
INSERT INTO pq_src DEFAULT VALUES;
-- extremes
INSERT INTO pq_src (i, b, s, f4, f8, n, nu, t, d, ts, tz)
VALUES (2147483647, -9223372036854775808, -32768, 'NaN', '-Infinity', -9999999999.99,
        -12345678901234567890123456789.123456789, '', '4713-01-01 BC', '0001-01-01 00:00:00.000001',
        '200000-12-31 23:59:59.999999+00');

-- tessera to a file and back, into tessera and into heap
COPY pq_src TO :'f_all';
CREATE TABLE pq_back (LIKE pq_src) USING tessera;
COPY pq_back FROM :'f_all' (FORMAT parquet);
CREATE TABLE pq_back_heap (LIKE pq_src) USING heap;
COPY pq_back_heap FROM :'f_all';
CREATE VIEW pq_src_v AS SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text AS j, jb, by, ai, at, an FROM pq_src;
SELECT count(*) AS rows,
       (SELECT count(*) FROM (SELECT * FROM pq_src_v EXCEPT ALL
            SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_back) x) AS missing,
       (SELECT count(*) FROM (SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_back
            EXCEPT ALL SELECT * FROM pq_src_v) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM pq_src_v EXCEPT ALL
            SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_back_heap) x) AS heap_missing
FROM pq_back;
SELECT i, n, nu, t, d, ts, tz, ai, at FROM pq_back WHERE i IN (7, 2147483647) OR i IS NULL ORDER BY i;

-- COPY of a tessera table goes from its column vectors to the file: rows
-- deleted since are left out, updated ones are new, dropped and added
-- columns are the table's, numerics of every scale exact
CREATE TABLE pq_dml (id int, n numeric, m numeric(8,3), t text, x int) USING tessera;
INSERT INTO pq_dml SELECT g, round(g / 4.0, 2), g / 8.0, 'r' || g, g FROM generate_series(1, 5000) g;
DELETE FROM pq_dml WHERE id % 10 = 0;
UPDATE pq_dml SET t = 'updated', m = m + 1 WHERE id % 7 = 0;
ALTER TABLE pq_dml DROP COLUMN x;
ALTER TABLE pq_dml ADD COLUMN t2 text DEFAULT 'added';
INSERT INTO pq_dml VALUES (-1, -12345678901234567890123456789.123456789, NULL, NULL, NULL);
COPY pq_dml TO :'f_q';
CREATE TABLE pq_dml_back (LIKE pq_dml) USING heap;
COPY pq_dml_back FROM :'f_q';
SELECT count(*), (SELECT count(*) FROM (TABLE pq_dml EXCEPT ALL TABLE pq_dml_back) x) AS missing,
       (SELECT count(*) FROM (TABLE pq_dml_back EXCEPT ALL TABLE pq_dml) x) AS extra
FROM pq_dml_back;
-- an unconstrained numeric with more than 9 decimals does not fit
INSERT INTO pq_dml (id, n) VALUES (-2, 0.1234567891);
COPY pq_dml TO :'f_bad';
COPY pq_dml (id, m) TO :'f_bad';
DROP TABLE pq_dml, pq_dml_back;

-- COPY FROM into a tessera table without triggers, defaults or WHERE goes
-- straight to its multi-insert: the same rows as through CopyFrom (a
-- trigger sends the twin there), index entries, constraints and their
-- errors with the file's row in the context
CREATE TABLE pq_direct (LIKE pq_src) USING tessera;
ALTER TABLE pq_direct ADD COLUMN gone int;
ALTER TABLE pq_direct DROP COLUMN gone;
CREATE INDEX ON pq_direct (i);
CREATE INDEX ON pq_direct (lower(t));
CREATE TABLE pq_via_copyfrom (LIKE pq_src) USING tessera;
CREATE FUNCTION pq_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER pq_noop BEFORE INSERT ON pq_via_copyfrom FOR EACH ROW EXECUTE FUNCTION pq_noop();
COPY pq_src TO :'f_all';
COPY pq_direct FROM :'f_all';
COPY pq_via_copyfrom FROM :'f_all';
SELECT (SELECT count(*) FROM pq_direct) AS n,
       (SELECT count(*) FROM (SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_direct
            EXCEPT ALL SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_via_copyfrom) x) AS differ;
SET enable_seqscan = off;
SET tessera.enable_custom_scan = off;
SELECT i, t FROM pq_direct WHERE i IN (17, 2999);
SELECT count(*) FROM pq_direct WHERE lower(t) = 'text 40';
RESET enable_seqscan;
RESET tessera.enable_custom_scan;
CREATE TABLE pq_direct_u (i int PRIMARY KEY, t text NOT NULL) USING tessera;
COPY (SELECT i, 'r' || i AS t FROM generate_series(1, 2500) i UNION ALL SELECT 7, 'again') TO :'f_q';
COPY pq_direct_u FROM :'f_q';
COPY (SELECT i, CASE WHEN i = 1234 THEN NULL ELSE 'r' END AS t FROM generate_series(1, 2000) i) TO :'f_q';
COPY pq_direct_u FROM :'f_q';
COPY (SELECT i, 'r' || i AS t FROM generate_series(1, 2000) i) TO :'f_q';
COPY pq_direct_u FROM :'f_q';
SELECT count(*), min(i), max(i) FROM pq_direct_u;
-- the direct import writes a batch's columns at once (no CHECK
-- constraints): the same row groups and stripes as row by row through
-- CopyFrom, across row group, stripe and batch boundaries; dropped columns
CREATE TABLE pq_layout (a int, gone text, b text, c numeric(10,2), v varchar(8)) USING tessera
    WITH (tessera_row_group_row_limit = 3000, tessera_stripe_row_limit = 20000);
ALTER TABLE pq_layout DROP COLUMN gone;
CREATE TABLE pq_layout_cf (LIKE pq_layout) USING tessera
    WITH (tessera_row_group_row_limit = 3000, tessera_stripe_row_limit = 20000);
CREATE TRIGGER pq_noop BEFORE INSERT ON pq_layout_cf FOR EACH ROW EXECUTE FUNCTION pq_noop();
COPY (SELECT g AS a, CASE WHEN g % 11 = 0 THEN NULL ELSE repeat('x', g % 40) END AS b,
             (g * 7.31)::numeric(10,2) AS c, CASE WHEN g % 13 = 0 THEN NULL ELSE 'v' || g % 997 END AS v
      FROM generate_series(1, 70000) g) TO :'f_q';
COPY pq_layout FROM :'f_q';
COPY pq_layout_cf FROM :'f_q';
SELECT (SELECT count(*) FROM (SELECT * FROM pq_layout EXCEPT ALL SELECT * FROM pq_layout_cf) x) AS differ,
       (SELECT count(*) FROM pq_layout) AS n;
SELECT a.row_count, a.row_groups, a.row_count = b.row_count AND a.row_groups = b.row_groups AS same
FROM tessera.stripe_info('pq_layout') a
     JOIN tessera.stripe_info('pq_layout_cf') b USING (first_row) ORDER BY first_row;
SELECT count(*) AS row_groups,
       count(*) FILTER (WHERE a.row_count = b.row_count) AS same
FROM tessera.row_group_info('pq_layout') a
     JOIN tessera.row_group_info('pq_layout_cf') b USING (first_row);
-- and a row with a ctid the index finds
CREATE INDEX ON pq_layout (a);
COPY pq_layout FROM :'f_q';
SET enable_seqscan = off;
SET tessera.enable_custom_scan = off;
SELECT a, length(b), c, v FROM pq_layout WHERE a = 65432;
RESET enable_seqscan;
RESET tessera.enable_custom_scan;

-- which error comes first: the first row with one, a value's own error
-- before its row's NOT NULL violation, as through CopyFrom (heap); and
-- varchar(n)'s blanks cut as varcharrecv cuts them
CREATE TABLE pq_err (a int NOT NULL, v varchar(3), n numeric(6,2) NOT NULL) USING tessera;
CREATE TABLE pq_err_h (LIKE pq_err INCLUDING ALL) USING heap;
COPY (SELECT g AS a, CASE WHEN g = 3 THEN 'abcdef' ELSE 'ab' END AS v,
             CASE WHEN g = 5 THEN NULL ELSE 1.5 END::numeric(6,2) AS n
      FROM generate_series(1, 10) g) TO :'f_q';
COPY pq_err FROM :'f_q';
COPY pq_err_h FROM :'f_q';
COPY (SELECT g AS a, CASE WHEN g = 5 THEN 'abcdef' ELSE 'ab' END AS v,
             CASE WHEN g = 3 THEN NULL ELSE 1.5 END::numeric(6,2) AS n
      FROM generate_series(1, 10) g) TO :'f_q';
COPY pq_err FROM :'f_q';
COPY pq_err_h FROM :'f_q';
COPY (SELECT g AS a, CASE WHEN g = 4 THEN 'abc   ' WHEN g = 6 THEN 'éé ' ELSE 'ab' END AS v,
             g * 1.25 AS n FROM generate_series(1, 10) g) TO :'f_q';
COPY pq_err FROM :'f_q';
COPY pq_err_h FROM :'f_q';
SELECT (SELECT count(*) FROM (SELECT a, v, n, scale(n) FROM pq_err
            EXCEPT ALL SELECT a, v, n, scale(n) FROM pq_err_h) x) AS differ,
       (SELECT string_agg(v || '|', ',' ORDER BY a) FROM pq_err) AS v;
-- with a CHECK constraint each row is checked in turn before the batch is
-- written: the first failing row's error, whichever kind it is
CREATE TABLE pq_chk (a int NOT NULL CHECK (a % 1000 <> 999), v varchar(3)) USING tessera;
CREATE TABLE pq_chk_h (LIKE pq_chk INCLUDING ALL) USING heap;
COPY (SELECT g AS a, CASE WHEN g = 500 THEN 'abcdef' ELSE 'ab' END AS v
      FROM generate_series(1, 5000) g) TO :'f_q';
COPY pq_chk FROM :'f_q';
COPY pq_chk_h FROM :'f_q';
COPY (SELECT g AS a, CASE WHEN g = 1200 THEN 'abcdef' ELSE 'ab' END AS v
      FROM generate_series(1, 5000) g) TO :'f_q';
COPY pq_chk FROM :'f_q';
COPY pq_chk_h FROM :'f_q';
COPY (SELECT g AS a, 'ab' AS v FROM generate_series(1, 40000) g WHERE g % 1000 <> 999) TO :'f_q';
COPY pq_chk FROM :'f_q';
COPY pq_chk_h FROM :'f_q';
SELECT (SELECT count(*) FROM (SELECT * FROM pq_chk EXCEPT ALL SELECT * FROM pq_chk_h) x) AS differ,
       (SELECT count(*) FROM pq_chk) AS n;
DROP TABLE pq_chk, pq_chk_h;
-- decimals into numeric (unconstrained: the file's scale), a wider
-- numeric(p, s), another scale, and values beyond the precision
CREATE TABLE pq_dec (a numeric, b numeric(14,3), c numeric(8,1), d numeric(5,2)) USING tessera;
CREATE TABLE pq_dec_h (LIKE pq_dec) USING heap;
COPY (SELECT (g * 1.25)::numeric(12,3) AS a, (g * -3.5)::numeric(12,3) AS b,
             (g * 0.05)::numeric(12,3) AS c, (g * 0.01)::numeric(12,3) AS d
      FROM generate_series(-2000, 2000) g) TO :'f_q';
COPY pq_dec FROM :'f_q';
COPY pq_dec_h FROM :'f_q';
SELECT (SELECT count(*) FROM (SELECT a, b, c, d, scale(a), scale(b), scale(c) FROM pq_dec
            EXCEPT ALL SELECT a, b, c, d, scale(a), scale(b), scale(c) FROM pq_dec_h) x) AS differ,
       (SELECT count(*) FROM pq_dec) AS n;
COPY (SELECT 999.994::numeric(12,3) AS a, 1 AS b, 1 AS c, 999.994::numeric(12,3) AS d
      UNION ALL SELECT 1, 1, 1, 999.995::numeric(12,3)) TO :'f_q';
COPY pq_dec FROM :'f_q';
COPY pq_dec_h FROM :'f_q';
DROP TABLE pq_direct, pq_via_copyfrom, pq_direct_u, pq_layout, pq_layout_cf, pq_err, pq_err_h,
    pq_dec, pq_dec_h;
DROP FUNCTION pq_noop();

-- every compression, and small row groups; heap as the source too
COPY pq_src TO :'f_all' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE 500);
TRUNCATE pq_back;
COPY pq_back FROM :'f_all';
SELECT count(*) FROM pq_back;
COPY pq_back_heap TO :'f_all' (FORMAT parquet, COMPRESSION lz4);
TRUNCATE pq_back;
COPY pq_back FROM :'f_all';
SELECT count(*), sum(i), sum(length(t)) FROM pq_back;
COPY pq_src TO :'f_all' (FORMAT parquet, COMPRESSION gzip);
COPY pq_src TO :'f_all' (FORMAT parquet, COMPRESSION uncompressed);
TRUNCATE pq_back;
COPY pq_back FROM :'f_all';
SELECT count(*), sum(b), count(jb) FROM pq_back;

-- Arrow IPC files (Feather v2): the same types; COPY FROM tells the
-- formats apart by the file's first bytes
\set f_arrow :datadir '/regress_all.arrow'
COPY pq_src TO :'f_arrow';
TRUNCATE pq_back;
COPY pq_back FROM :'f_arrow';
SELECT count(*) AS rows,
       (SELECT count(*) FROM (SELECT * FROM pq_src_v EXCEPT ALL
            SELECT i, b, s, f4, f8, n, nu, t, v, c, bo, d, tm, ts, tz, u, j::text, jb, by, ai, at, an FROM pq_back) x) AS missing
FROM pq_back;
COPY pq_src TO :'f_arrow' (FORMAT feather, COMPRESSION zstd);
TRUNCATE pq_back;
COPY pq_back FROM :'f_arrow' (FORMAT parquet);
SELECT count(*), sum(i) FROM pq_back;
COPY pq_src TO :'f_arrow' (FORMAT arrow, COMPRESSION snappy);
COPY pq_src TO :'f_arrow' (FORMAT arrow, ROW_GROUP_SIZE 10);

-- a query, a column list, an empty result
COPY (SELECT i AS id, t, i * 2 AS twice FROM pq_src WHERE i <= 100) TO :'f_q';
CREATE TABLE pq_q (id int, t text, twice bigint, extra text DEFAULT 'dflt') USING tessera;
COPY pq_q (id, t, twice) FROM :'f_q';
SELECT count(*), sum(twice), min(extra), max(extra) FROM pq_q;
COPY pq_src (t, i) TO :'f_q';
TRUNCATE pq_q;
COPY pq_q (t, id) FROM :'f_q' WHERE id % 1000 = 0;
SELECT * FROM pq_q ORDER BY id;
-- by name, whatever the order; file columns not named are left out
COPY (SELECT t, 'ignored' AS other, i AS id FROM pq_src) TO :'f_q';
TRUNCATE pq_q;
COPY pq_q (id, t) FROM :'f_q' (MATCH_BY 'name') WHERE id < 3;
SELECT * FROM pq_q ORDER BY id;
COPY (SELECT 1 AS a WHERE false) TO :'f_empty';
CREATE TABLE pq_one (a int) USING tessera;
COPY pq_one FROM :'f_empty';
SELECT count(*) FROM pq_one;

-- COPY FROM does what it does for other formats: casts, constraints,
-- triggers, partitions, domains, generated columns, FREEZE
COPY (SELECT i, i::text AS s, (i % 3)::smallint AS k FROM generate_series(1, 30) i) TO :'f_part';
CREATE DOMAIN pq_small AS int CHECK (VALUE < 1000);
CREATE TABLE pq_parted (i bigint, s text, k pq_small, g int GENERATED ALWAYS AS (i * 10) STORED)
    PARTITION BY LIST (k);
CREATE TABLE pq_parted_0 PARTITION OF pq_parted FOR VALUES IN (0) USING tessera;
CREATE TABLE pq_parted_1 PARTITION OF pq_parted FOR VALUES IN (1) USING heap;
CREATE TABLE pq_parted_2 PARTITION OF pq_parted FOR VALUES IN (2) USING tessera;
CREATE TABLE pq_log (what text);
CREATE FUNCTION pq_trig() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO pq_log VALUES (TG_TABLE_NAME || ':' || NEW.i); RETURN NEW; END $$;
CREATE TRIGGER pq_trig BEFORE INSERT ON pq_parted_2 FOR EACH ROW EXECUTE FUNCTION pq_trig();
COPY pq_parted (i, s, k) FROM :'f_part';
SELECT tableoid::regclass, count(*), sum(g) FROM pq_parted GROUP BY 1 ORDER BY 1;
SELECT count(*) FROM pq_log;
-- assignment casts (int to numeric, smallint into a domain over int), text
-- through the column type's input function, values to text
CREATE TABLE pq_cast (a numeric, b text, c pq_small) USING tessera;
COPY pq_cast FROM :'f_part';
SELECT sum(a), min(b), sum(c) FROM pq_cast;
CREATE TABLE pq_cast2 (a float8, b int, c text) USING tessera;
COPY pq_cast2 FROM :'f_part';
SELECT sum(a), sum(b), string_agg(c, '' ORDER BY a) FROM pq_cast2;
-- casts that do not take the typmod are followed by its length coercion,
-- as in an INSERT: int into numeric(8,2), text into varchar(4),
-- fractional seconds into timestamp(0); the same through COPY's own path
-- (heap) and straight into a tessera table (the file tables' conversions)
COPY (SELECT i AS a, 'ab' || i AS b, timestamp '2024-01-01 10:00:00.6' + i * interval '1 s' AS c
      FROM generate_series(1, 3) i) TO :'f_q';
CREATE TABLE pq_mod (a numeric(8,2), b varchar(4), c timestamp(0)) USING tessera;
CREATE TABLE pq_mod_heap (a numeric(8,2), b varchar(4), c timestamp(0)) USING heap;
COPY pq_mod FROM :'f_q';
COPY pq_mod_heap FROM :'f_q';
SELECT * FROM pq_mod EXCEPT ALL SELECT * FROM pq_mod_heap;
SELECT * FROM pq_mod ORDER BY a;
COPY (SELECT 123456789 AS a, 'abcde' AS b, timestamp '2024-01-01' AS c) TO :'f_q';
COPY pq_mod FROM :'f_q';
COPY (SELECT 1 AS a, 'abcde' AS b, timestamp '2024-01-01' AS c) TO :'f_q';
COPY pq_mod FROM :'f_q';
DROP TABLE pq_mod, pq_mod_heap;
CREATE TABLE pq_check (i int CHECK (i < 20), s text, k int) USING tessera;
COPY pq_check FROM :'f_part';
SELECT count(*) FROM pq_check;
BEGIN;
CREATE TABLE pq_frozen (i int, s text, k int) USING heap;
COPY pq_frozen FROM :'f_part' (FREEZE);
COMMIT;
SELECT count(*) FROM pq_frozen;
COPY (SELECT 'x' || i AS s FROM generate_series(1, 3) i) TO :'f_text';
CREATE TYPE pq_mood AS ENUM ('x1', 'x2', 'x3');
CREATE TABLE pq_enum (s pq_mood) USING tessera;
COPY pq_enum FROM :'f_text';
SELECT * FROM pq_enum ORDER BY s;
COPY (SELECT 'x9' AS s) TO :'f_bad';
COPY pq_enum FROM :'f_bad';

-- types without a Parquet counterpart, values without one
COPY (SELECT point(1, 2) AS p) TO :'f_bad';
COPY (SELECT interval '1 day' AS iv) TO :'f_bad';
COPY (SELECT '{{1,2},{3,4}}'::int[] AS m) TO :'f_bad';
COPY (SELECT 'infinity'::date AS d) TO :'f_bad';
COPY (SELECT '-infinity'::timestamptz AS t) TO :'f_bad';
COPY (SELECT '294276-12-31 23:59:59.999999+00'::timestamptz AS t) TO :'f_bad';
COPY (SELECT 0.1234567891::numeric AS n) TO :'f_bad';
COPY (SELECT 'NaN'::numeric AS n) TO :'f_bad';
COPY (SELECT 1e40::numeric AS n) TO :'f_bad';
COPY (SELECT 1::numeric(40,2) AS n) TO :'f_bad';
COPY (SELECT 0.1234567891::numeric(20,10) AS n, 123::numeric(5,-2) AS m) TO :'f_bad';
CREATE TABLE pq_nm (n numeric(20,10), m numeric) USING tessera;
COPY pq_nm FROM :'f_bad';
SELECT * FROM pq_nm;

-- files that do not match the table
COPY pq_one FROM :'f_part';
COPY pq_q FROM :'f_part' (MATCH_BY 'name');
CREATE TABLE pq_dates (d date, s text, k int) USING tessera;
COPY pq_dates FROM :'f_part';
COPY pq_one FROM :'f_text';
COPY pq_one FROM 'no_such_file.parquet';
COPY pq_one FROM 'postgresql.conf' (FORMAT parquet);
COPY pq_one FROM 'base' (FORMAT parquet);
SELECT count(*) FROM pq_one;

-- options
COPY pq_one TO :'f_bad' (FORMAT parquet, DELIMITER ',');
COPY pq_one TO :'f_bad' (FORMAT parquet, COMPRESSION brotli);
COPY pq_one TO :'f_bad' (FORMAT parquet, COMPRESSION_LEVEL 40);
COPY pq_one TO :'f_bad' (FORMAT parquet, ROW_GROUP_SIZE 0);
COPY pq_one FROM :'f_empty' (COMPRESSION zstd);
COPY pq_one TO :'f_bad' (FORMAT parquet, MATCH_BY 'name');
COPY pq_one FROM :'f_empty' (MATCH_BY 'column');
COPY pq_one TO :'f_bad' (FORMAT parquet, FREEZE);
COPY pq_one TO PROGRAM 'cat' (FORMAT parquet);
COPY pq_one TO 'relative.parquet';
COPY (INSERT INTO pq_one VALUES (1) RETURNING a) TO :'f_bad' (FORMAT parquet);
SELECT count(*) FROM pq_one;
-- not parquet: other formats and names are PostgreSQL's
COPY (SELECT 1 AS a) TO :'f_bad' (FORMAT csv);
COPY pq_one FROM :'f_bad' (FORMAT csv);
SELECT count(*) FROM pq_one;

-- privileges: files need pg_read/write_server_files; table privileges and
-- row-level security apply
CREATE ROLE pq_user;
GRANT SELECT, INSERT ON pq_one TO pq_user;
CREATE TABLE pq_rls (a int, owner text) USING tessera;
INSERT INTO pq_rls VALUES (1, 'pq_user'), (2, 'someone');
ALTER TABLE pq_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY pq_own ON pq_rls USING (owner = current_user);
GRANT SELECT, INSERT ON pq_rls TO pq_user;
SET ROLE pq_user;
COPY pq_one TO :'f_bad';
COPY pq_one FROM :'f_empty';
COPY pq_src TO :'f_bad';
RESET ROLE;
GRANT pg_write_server_files, pg_read_server_files TO pq_user;
SET ROLE pq_user;
COPY pq_src TO :'f_bad';
COPY pq_src (i) TO :'f_bad';
COPY pq_rls TO :'f_q';
COPY pq_rls FROM :'f_q';
RESET ROLE;
CREATE TABLE pq_rls_out (a int, owner text) USING heap;
COPY pq_rls_out FROM :'f_q';
SELECT * FROM pq_rls_out;

DROP TABLE pq_src, pq_back, pq_back_heap, pq_q, pq_one, pq_parted, pq_log, pq_cast, pq_cast2, pq_check,
    pq_frozen, pq_enum, pq_nm, pq_dates, pq_rls, pq_rls_out CASCADE;
DROP FUNCTION pq_trig();
DROP DOMAIN pq_small;
DROP TYPE pq_mood;
DROP ROLE pq_user;
