-- DROP EXTENSION with tessera tables present: refused, or CASCADE drops
-- them; the extension can be created again afterwards.  Runs last.
CREATE TABLE de1 (a int) USING tessera;
INSERT INTO de1 SELECT generate_series(1, 100);
CREATE TABLE de_parent (k int, v int) PARTITION BY LIST (k);
CREATE TABLE de_part PARTITION OF de_parent FOR VALUES IN (1) USING tessera;
INSERT INTO de_parent VALUES (1, 1);
CREATE VIEW de_view AS SELECT count(*) FROM de1;
DROP EXTENSION tessera;
SELECT count(*) FROM de1;
BEGIN;
DROP EXTENSION tessera CASCADE;
SELECT count(*) FROM pg_class WHERE relname IN ('de1', 'de_part', 'de_view');
ROLLBACK;
SELECT count(*) FROM de1;
DROP EXTENSION tessera CASCADE;
SELECT count(*) FROM pg_class WHERE relname IN ('de1', 'de_part', 'de_view');
SELECT count(*) FROM pg_am WHERE amname = 'tessera';
SELECT count(*) FROM pg_namespace WHERE nspname IN ('tessera', 'tessera_internal');
CREATE EXTENSION tessera;
CREATE TABLE de2 (a int) USING tessera;
INSERT INTO de2 VALUES (1), (2);
SELECT sum(a) FROM de2;
DROP TABLE de2, de_parent;
