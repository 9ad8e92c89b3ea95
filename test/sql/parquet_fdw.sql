-- Parquet files as tables: the foreign data wrapper tessera_parquet
-- (src/files/parquet_fdw.c).  One file, a glob of two, projection and
-- renamed columns, parallel scans, joins with tessera tables, IMPORT
-- FOREIGN SCHEMA, and the errors: missing and mismatched columns,
-- options, files, privileges.  (The foreign tables name their files
-- relative to the data directory, as COPY FROM may.)
SET client_min_messages = warning;
SELECT current_setting('data_directory') AS datadir \gset
\set f1abs :datadir '/regress_fdw_1.parquet'
\set f2abs :datadir '/regress_fdw_2.parquet'
\set f1 'regress_fdw_1.parquet'
\set fglob 'regress_fdw_*.parquet'
\set fnone 'regress_nothing_*.parquet'
\set fmissing 'regress_missing.parquet'
\set fnotabs :datadir '/regress_notparquet.parquet'

CREATE TABLE fdw_src (id int, g text, n numeric(10,2), ts timestamptz, a int[], b bool) USING tessera;
INSERT INTO fdw_src
SELECT i, 'group ' || (i % 17), i * 0.75, timestamptz '2024-01-01 00:00+00' + i * interval '37 min',
       CASE WHEN i % 9 = 0 THEN NULL ELSE array[i, i % 5] END, CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END
FROM generate_series(1, 10000) i;
COPY (SELECT * FROM fdw_src WHERE id <= 6000) TO :'f1abs' (ROW_GROUP_SIZE 1000);
COPY (SELECT * FROM fdw_src WHERE id > 6000) TO :'f2abs' (ROW_GROUP_SIZE 1500);
COPY (SELECT 1 AS a) TO :'fnotabs' (FORMAT csv);

CREATE FOREIGN DATA WRAPPER tessera_parquet HANDLER tessera.parquet_fdw_handler VALIDATOR tessera.parquet_fdw_validator;
CREATE SERVER pq_files FOREIGN DATA WRAPPER tessera_parquet;
CREATE FOREIGN TABLE fdw_one (id int, g text, n numeric(10,2), ts timestamptz, a int[], b bool)
    SERVER pq_files OPTIONS (filename :'f1');
SELECT count(*), sum(id), sum(n), count(DISTINCT g), count(a), count(b) FROM fdw_one;
SELECT (SELECT count(*) FROM (SELECT * FROM fdw_one EXCEPT ALL SELECT * FROM fdw_src WHERE id <= 6000) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM fdw_src WHERE id <= 6000 EXCEPT ALL SELECT * FROM fdw_one) x) AS missing;

-- every file of a pattern, in name order
CREATE FOREIGN TABLE fdw_all (id int, g text, n numeric(10,2), ts timestamptz, a int[], b bool)
    SERVER pq_files OPTIONS (filename :'fglob');
SELECT (SELECT count(*) FROM (SELECT * FROM fdw_all EXCEPT ALL SELECT * FROM fdw_src) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM fdw_src EXCEPT ALL SELECT * FROM fdw_all) x) AS missing;
SELECT g, count(*), sum(n), min(ts), max(ts) FROM fdw_all WHERE id % 1000 < 10 GROUP BY g ORDER BY g LIMIT 5;
SELECT id, a, b FROM fdw_all WHERE id IN (1, 9, 6001, 10000) ORDER BY id;
-- a subset of columns, renamed, in another order, other types (casts)
CREATE FOREIGN TABLE fdw_sub (total numeric OPTIONS (column_name 'n'), id bigint, label varchar(20) OPTIONS (column_name 'g'))
    SERVER pq_files OPTIONS (filename :'fglob');
SELECT sum(total), sum(id), max(label) FROM fdw_sub;
SELECT count(*) FROM fdw_sub;
-- joined with the tessera table
SELECT count(*) FROM fdw_all f JOIN fdw_src s USING (id) WHERE f.n = s.n AND f.g = s.g;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fdw_all;

-- row groups ruled out by their statistics (regress_fdw_1: ids ascending,
-- 1000 rows per row group); the answers stay those of the table
CREATE FUNCTION fdw_skipped(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    j json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO j;
    RETURN coalesce(j->0->'Plan'->>'Row Groups Skipped',
                    j->0->'Plan'->'Plans'->0->>'Row Groups Skipped')::int;
END $$;
SET max_parallel_workers_per_gather = 0;
SELECT q, fdw_skipped(q) AS skipped FROM (VALUES
    ('SELECT count(*) FROM fdw_one WHERE id <= 1500'),
    ('SELECT count(*) FROM fdw_one WHERE 1500 >= id'),
    ('SELECT count(*) FROM fdw_one WHERE id = 4321'),
    ('SELECT count(*) FROM fdw_one WHERE id > 5999'),
    ('SELECT count(*) FROM fdw_one WHERE id < 1::bigint'),
    ('SELECT count(*) FROM fdw_one WHERE n = 750.00'),
    ('SELECT count(*) FROM fdw_one WHERE ts < ''2024-01-02 00:00+00'''),
    ('SELECT count(*) FROM fdw_one WHERE id BETWEEN 2500 AND 3500 AND g <> ''x'''),
    ('SELECT count(*) FROM fdw_one WHERE g = ''group 1''')) v(q);
SELECT (SELECT count(*) FROM fdw_one WHERE id <= 1500) AS a, (SELECT count(*) FROM fdw_one WHERE id = 4321) AS b,
       (SELECT count(*) FROM fdw_one WHERE id > 5999) AS c, (SELECT count(*) FROM fdw_one WHERE id < 1::bigint) AS d,
       (SELECT count(*) FROM fdw_one WHERE n = 750.00) AS e,
       (SELECT count(*) FROM fdw_one WHERE ts < '2024-01-02 00:00+00') AS f,
       (SELECT count(*) FROM fdw_src WHERE id <= 6000 AND ts < '2024-01-02 00:00+00') AS f_table,
       (SELECT count(*) FROM fdw_all WHERE id BETWEEN 2500 AND 7500) AS g;
RESET max_parallel_workers_per_gather;

-- parallel: row groups handed out to the workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 2;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(n) FROM fdw_all;
SELECT count(*), sum(n), sum(id), count(DISTINCT g) FROM fdw_all;
SELECT count(*) FROM fdw_all WHERE b;
SELECT count(*), sum(id) FROM fdw_all WHERE id BETWEEN 2500 AND 7500;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;

-- an Arrow IPC file (Feather v2) as a table: its record batches are the units
\set farrowabs :datadir '/regress_fdw.arrow'
COPY (SELECT * FROM fdw_src) TO :'farrowabs' (FORMAT arrow, COMPRESSION zstd);
CREATE FOREIGN TABLE fdw_arrow (id int, g text, n numeric(10,2), ts timestamptz, a int[], b bool)
    SERVER pq_files OPTIONS (filename 'regress_fdw.arrow');
SELECT (SELECT count(*) FROM (SELECT * FROM fdw_arrow EXCEPT ALL SELECT * FROM fdw_src) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM fdw_src EXCEPT ALL SELECT * FROM fdw_arrow) x) AS missing;
SELECT count(*) FROM fdw_arrow;

-- IMPORT FOREIGN SCHEMA: a file, or the Parquet files of a directory
CREATE SCHEMA fdw_imp;
IMPORT FOREIGN SCHEMA :"f1" FROM SERVER pq_files INTO fdw_imp;
IMPORT FOREIGN SCHEMA "." LIMIT TO (regress_fdw_2) FROM SERVER pq_files INTO fdw_imp;
IMPORT FOREIGN SCHEMA "." LIMIT TO (regress_notparquet) FROM SERVER pq_files INTO fdw_imp;
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = 'fdw_imp'::regnamespace AND a.attnum > 0 ORDER BY 1, a.attnum;
SELECT count(*), sum(n) FROM fdw_imp.regress_fdw_1;
SELECT count(*), sum(n) FROM fdw_imp.regress_fdw_2;

-- errors
CREATE FOREIGN TABLE fdw_bad1 (id int, nope text) SERVER pq_files OPTIONS (filename :'f1');
SELECT count(*), count(id) FROM fdw_bad1;
SELECT count(nope) FROM fdw_bad1;
CREATE FOREIGN TABLE fdw_bad2 (id date) SERVER pq_files OPTIONS (filename :'f1');
SELECT * FROM fdw_bad2 LIMIT 1;
CREATE FOREIGN TABLE fdw_bad3 (id int) SERVER pq_files OPTIONS (filename :'fmissing');
SELECT * FROM fdw_bad3;
CREATE FOREIGN TABLE fdw_none (id int) SERVER pq_files OPTIONS (filename :'fnone');
SELECT count(*) FROM fdw_none;
CREATE FOREIGN TABLE fdw_bad4 (id int) SERVER pq_files;
CREATE FOREIGN TABLE fdw_bad5 (id int) SERVER pq_files OPTIONS (filename :'f1', format 'csv');
CREATE FOREIGN TABLE fdw_bad6 (id int OPTIONS (name 'x')) SERVER pq_files OPTIONS (filename :'f1');
CREATE SERVER pq_bad FOREIGN DATA WRAPPER tessera_parquet OPTIONS (filename 'x');
INSERT INTO fdw_one (id) VALUES (1);
IMPORT FOREIGN SCHEMA "no_such_directory" FROM SERVER pq_files INTO fdw_imp;

-- privileges: naming files takes pg_read_server_files; reading needs SELECT
CREATE ROLE fdw_user;
GRANT USAGE ON FOREIGN SERVER pq_files TO fdw_user;
GRANT CREATE ON SCHEMA public TO fdw_user;
GRANT SELECT ON fdw_one TO fdw_user;
SET ROLE fdw_user;
CREATE FOREIGN TABLE fdw_mine (id int) SERVER pq_files OPTIONS (filename '/etc/passwd');
ALTER FOREIGN TABLE fdw_one OPTIONS (SET filename '/etc/passwd');
IMPORT FOREIGN SCHEMA "/etc" FROM SERVER pq_files INTO public;
SELECT count(*) FROM fdw_one;
SELECT count(*) FROM fdw_all;
RESET ROLE;

DROP SCHEMA fdw_imp CASCADE;
DROP FOREIGN DATA WRAPPER tessera_parquet CASCADE;
DROP TABLE fdw_src;
DROP FUNCTION fdw_skipped(text);
REVOKE CREATE ON SCHEMA public FROM fdw_user;
DROP ROLE fdw_user;
