-- Publications: with tessera in shared_preload_libraries (as here), tessera
-- logs the rows of its changes for logical decoding, so tessera tables are
-- published by every route heap tables are (TAP test 015 decodes and
-- replicates them; without the preload they are refused, also there).
-- tessera's own catalog tables are never published by name or schema;
-- FOR ALL TABLES lists them, and carries none of their rows.
SET client_min_messages = error;   -- no "wal_level is insufficient" warnings
CREATE TABLE pub_t (a int PRIMARY KEY, b text) USING tessera;
CREATE TABLE pub_h (a int PRIMARY KEY, b text);
CREATE TABLE pub_h2 (a int);

CREATE PUBLICATION pub_t_only FOR TABLE pub_t;
CREATE PUBLICATION pub_mixed FOR TABLE pub_h, pub_t WITH (publish = 'insert, update');
CREATE PUBLICATION pub_heap FOR TABLE pub_h;
ALTER PUBLICATION pub_heap ADD TABLE pub_t;
ALTER PUBLICATION pub_heap SET TABLE pub_h, pub_h2;

-- schema publications: existing tables, new tables, tables moved in
CREATE SCHEMA pub_s;
CREATE TABLE pub_s.h (a int);
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA pub_s;
CREATE TABLE pub_s.t (a int) USING tessera;
SET default_table_access_method = tessera;
CREATE TABLE pub_s.t2 AS SELECT 1 AS a;
RESET default_table_access_method;
ALTER TABLE pub_s.h SET ACCESS METHOD tessera;
CREATE UNLOGGED TABLE pub_s.u (a int) USING tessera;   -- unlogged: not published
-- row filters and column lists (PostgreSQL 15)
CREATE TABLE pub_rf (a int PRIMARY KEY, b text, c int) USING tessera;
CREATE PUBLICATION pub_filtered FOR TABLE pub_rf (a, b) WHERE (a > 10);

-- partitions are published through their root
CREATE TABLE pub_p (a int) PARTITION BY RANGE (a);
CREATE TABLE pub_p1 PARTITION OF pub_p FOR VALUES FROM (0) TO (10) USING tessera;
CREATE PUBLICATION pub_part FOR TABLE pub_p WITH (publish_via_partition_root = true);

SELECT pubname, schemaname, tablename, attnames, rowfilter
FROM pg_publication_tables WHERE pubname <> 'pub_all' ORDER BY 1, 2, 3;
-- replica identity is enforced as for heap: pub_rf publishes deletes, and a
-- row filter may only use replica identity columns
INSERT INTO pub_rf VALUES (1, 'one', 1), (20, 'twenty', 20);
UPDATE pub_rf SET b = 'uno' WHERE a = 1;
DELETE FROM pub_rf WHERE a = 20;
ALTER PUBLICATION pub_filtered SET TABLE pub_rf WHERE (c > 10);
UPDATE pub_rf SET b = 'eins' WHERE a = 1;
ALTER PUBLICATION pub_filtered SET TABLE pub_rf WHERE (a > 10);
ALTER TABLE pub_rf REPLICA IDENTITY NOTHING;
DELETE FROM pub_rf;
ALTER TABLE pub_rf REPLICA IDENTITY DEFAULT;
-- and tessera tables keep working
INSERT INTO pub_t VALUES (1, 'one');
UPDATE pub_t SET b = 'uno';
SELECT * FROM pub_t;

DROP PUBLICATION pub_t_only, pub_mixed, pub_heap, pub_schema, pub_filtered, pub_part;
DROP SCHEMA pub_s CASCADE;
DROP TABLE pub_t, pub_h, pub_h2, pub_p, pub_rf;

-- tessera's own catalog is never published by name or by schema
\set VERBOSITY default
CREATE PUBLICATION pub_internal FOR TABLE tessera_internal.stripe;
CREATE PUBLICATION pub_internal FOR TABLES IN SCHEMA tessera_internal;
CREATE TABLE pub_h3 (a int);
CREATE PUBLICATION pub_heap FOR TABLE pub_h3;
ALTER PUBLICATION pub_heap ADD TABLE tessera_internal.delta;
ALTER PUBLICATION pub_heap ADD TABLES IN SCHEMA tessera_internal;
\set VERBOSITY terse
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2, 3;
DROP PUBLICATION pub_heap;
DROP TABLE pub_h3;
-- logical decoding leaves out changes to tessera's catalog: its tables are
-- marked as rewrite targets, which the reorder buffer skips
SELECT c.relname, c.relrewrite = c.oid AS skipped_by_decoding
FROM pg_class c
WHERE c.relnamespace = 'tessera_internal'::regnamespace AND c.relkind = 'r'
ORDER BY 1;
-- pg_upgrade recreates the catalog tables without the mark: at wal_level =
-- logical (as the test cluster runs) the next write marks them again, in
-- place (at other levels they stay as they are until then)
UPDATE pg_class SET relrewrite = 0
WHERE relnamespace = 'tessera_internal'::regnamespace AND relkind = 'r';
UPDATE pg_class SET relrewrite = 0
WHERE oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'tessera_internal.delta'::regclass);
CREATE TABLE pub_mark (a int) USING tessera;
INSERT INTO pub_mark VALUES (1);   -- a small write: a stripe row and a delta row
SELECT current_setting('wal_level') <> 'logical' OR
       bool_and(c.relrewrite = c.oid) AS skipped_by_decoding_again
FROM pg_class c
WHERE c.relnamespace = 'tessera_internal'::regnamespace AND c.relkind = 'r'
   OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'tessera_internal.delta'::regclass);
UPDATE pg_class SET relrewrite = oid
WHERE relnamespace = 'tessera_internal'::regnamespace AND relkind = 'r'
   OR oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'tessera_internal.delta'::regclass);
DROP TABLE pub_mark;
-- FOR ALL TABLES in a database with tessera, and CREATE EXTENSION tessera
-- in a database that has one
SELECT current_database() AS regress_db \gset
CREATE DATABASE tessera_pub_all;
\c tessera_pub_all
SET client_min_messages = error;
CREATE PUBLICATION pub_all FOR ALL TABLES;
CREATE EXTENSION tessera;
CREATE TABLE works (a int PRIMARY KEY) USING tessera;
INSERT INTO works VALUES (1);
SELECT * FROM works;
SELECT schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2;
\c :regress_db
DROP DATABASE tessera_pub_all;
