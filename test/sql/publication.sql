-- Publications: logical decoding does not see tessera's stripe pages, so
-- putting a tessera table into a publication, by any route, is refused
-- with feature_not_supported; heap tables beside it publish as usual.
SET client_min_messages = error;   -- no "wal_level is insufficient" warnings
CREATE TABLE pub_t (a int PRIMARY KEY, b text) USING tessera;
CREATE TABLE pub_h (a int PRIMARY KEY, b text);
CREATE TABLE pub_h2 (a int);
CREATE TABLE pub_h3 (a int);

\set VERBOSITY default
CREATE PUBLICATION pub_t_only FOR TABLE pub_t;
\set VERBOSITY sqlstate
CREATE PUBLICATION pub_all FOR ALL TABLES;   -- names whichever tessera table it meets first
\set VERBOSITY default
CREATE PUBLICATION pub_mixed FOR TABLE pub_h, pub_t;
CREATE PUBLICATION pub_heap FOR TABLE pub_h;
ALTER PUBLICATION pub_heap ADD TABLE pub_t;
ALTER PUBLICATION pub_heap SET TABLE pub_h, pub_t;
ALTER PUBLICATION pub_heap ADD TABLE pub_h2;
\set VERBOSITY terse

-- schema publications: existing tables, new tables, tables moved in
CREATE SCHEMA pub_s;
CREATE TABLE pub_s.h (a int);
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA pub_s;
CREATE TABLE pub_s.t (a int) USING tessera;
CREATE TABLE pub_s.t AS SELECT 1 AS a;      -- heap (default AM): fine
SET default_table_access_method = tessera;
CREATE TABLE pub_s.t2 AS SELECT 1 AS a;
SELECT 1 AS a INTO pub_s.t3;
RESET default_table_access_method;
ALTER TABLE pub_s.h SET ACCESS METHOD tessera;
ALTER TABLE pub_t SET SCHEMA pub_s;
CREATE UNLOGGED TABLE pub_s.u (a int) USING tessera;   -- unlogged: never published
ALTER TABLE pub_s.u SET LOGGED;
ALTER PUBLICATION pub_schema DROP TABLES IN SCHEMA pub_s;
\set VERBOSITY sqlstate
ALTER PUBLICATION pub_schema ADD TABLES IN SCHEMA public;
\set VERBOSITY terse

-- partitions are published through their root
CREATE TABLE pub_p (a int) PARTITION BY RANGE (a);
CREATE TABLE pub_p1 PARTITION OF pub_p FOR VALUES FROM (0) TO (10) USING tessera;
ALTER PUBLICATION pub_heap ADD TABLE pub_p;
DROP TABLE pub_p1;
ALTER PUBLICATION pub_heap ADD TABLE pub_p;
CREATE TABLE pub_p1 PARTITION OF pub_p FOR VALUES FROM (0) TO (10) USING tessera;
CREATE TABLE pub_p2 (a int) USING tessera;
ALTER TABLE pub_p ATTACH PARTITION pub_p2 FOR VALUES FROM (10) TO (20);
CREATE TABLE pub_p3 PARTITION OF pub_p FOR VALUES FROM (20) TO (30);   -- heap

-- what is published: only heap tables
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2, 3;
-- and tessera tables keep working
INSERT INTO pub_t VALUES (1, 'one');
UPDATE pub_t SET b = 'uno';
SELECT * FROM pub_t;

DROP PUBLICATION pub_heap, pub_schema;
DROP SCHEMA pub_s CASCADE;
DROP TABLE pub_t, pub_h, pub_h2, pub_p, pub_p2;

-- tessera's own catalog is never published: FOR ALL TABLES would carry it
-- (PostgreSQL cannot leave tables out), as would naming it or its schema
\set VERBOSITY default
CREATE PUBLICATION pub_all FOR ALL TABLES;
CREATE PUBLICATION pub_internal FOR TABLE tessera_internal.stripe;
CREATE PUBLICATION pub_internal FOR TABLES IN SCHEMA tessera_internal;
CREATE PUBLICATION pub_heap FOR TABLE pub_h3;
ALTER PUBLICATION pub_heap ADD TABLE tessera_internal.delta;
ALTER PUBLICATION pub_heap ADD TABLES IN SCHEMA tessera_internal;
\set VERBOSITY terse
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2, 3;
DROP PUBLICATION pub_heap;
DROP TABLE pub_h3;
-- in a database with a FOR ALL TABLES publication, CREATE EXTENSION tessera
-- is refused by name (the publication would take its catalog)
SELECT current_database() AS regress_db \gset
CREATE DATABASE tessera_pub_all;
\c tessera_pub_all
SET client_min_messages = error;
CREATE PUBLICATION pub_all FOR ALL TABLES;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE EXTENSION tessera;   -- (18 would add the extension script's line as context)
\set SHOW_CONTEXT errors
\set VERBOSITY terse
SELECT count(*) AS tessera_installed FROM pg_extension WHERE extname = 'tessera';
DROP PUBLICATION pub_all;
CREATE EXTENSION tessera;
CREATE TABLE works (a int) USING tessera;
INSERT INTO works VALUES (1);
SELECT * FROM works;
\c :regress_db
DROP DATABASE tessera_pub_all;
