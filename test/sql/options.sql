-- Options: GUC defaults, per-table storage parameters, validation, the
-- tessera.options view, access method changes.
SHOW tessera.compression;
SHOW tessera.compression_level;
SHOW tessera.stripe_row_limit;
SHOW tessera.row_group_row_limit;
SET tessera.compression = 'nope';
SET tessera.compression_level = 20;
SET tessera.stripe_row_limit = 0;
SET tessera.row_group_row_limit = 2000000;

CREATE TABLE o1 (a int, b text) USING tessera
    WITH (tessera_compression = 'lz4', tessera_row_group_row_limit = 50);
SELECT relation, compression, compression_level, stripe_row_limit, row_group_row_limit
    FROM tessera.options WHERE relation = 'o1'::regclass;
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;
INSERT INTO o1 SELECT i, repeat('abc', i % 50) FROM generate_series(1, 500) i;
SELECT count(DISTINCT row_group) AS row_groups, array_agg(DISTINCT codec) AS codecs
    FROM tessera.chunks WHERE relation = 'o1'::regclass AND attnum = 2;

-- dotted spelling is accepted too
CREATE TABLE o2 (a int) USING tessera WITH (tessera.compression = 'none', fillfactor = 90);
SELECT reloptions FROM pg_class WHERE oid = 'o2'::regclass;

-- ALTER TABLE SET / RESET, alone or mixed with heap parameters
ALTER TABLE o1 SET (tessera_compression = 'zstd', tessera_compression_level = 9);
SELECT compression, compression_level FROM tessera.options WHERE relation = 'o1'::regclass;
ALTER TABLE o1 SET (autovacuum_enabled = false, tessera_stripe_row_limit = 1000);
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;
ALTER TABLE o1 RESET (tessera_compression_level, autovacuum_enabled);
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;
ALTER TABLE o1 SET (fillfactor = 50);
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;
ALTER TABLE o1 RESET (tessera_compression, tessera_stripe_row_limit, tessera_row_group_row_limit, fillfactor);
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;
SELECT compression, compression_level, stripe_row_limit, row_group_row_limit
    FROM tessera.options WHERE relation = 'o1'::regclass;

-- unset options follow the session's GUCs
SET tessera.compression = 'pglz';
SET tessera.row_group_row_limit = 20;
SELECT compression, row_group_row_limit FROM tessera.options WHERE relation = 'o1'::regclass;
CREATE TABLE o3 (t text) USING tessera;
INSERT INTO o3 SELECT repeat('pglz compresses this ', 10) FROM generate_series(1, 100);
SELECT count(DISTINCT row_group), array_agg(DISTINCT codec) FROM tessera.chunks WHERE relation = 'o3'::regclass;
RESET tessera.compression;
RESET tessera.row_group_row_limit;

-- CREATE TABLE AS uses its options for the rows it writes
CREATE TABLE o4 USING tessera WITH (tessera_compression = 'none', tessera_row_group_row_limit = 10)
    AS SELECT i, repeat('x', 100) AS pad FROM generate_series(1, 35) i;
SELECT count(DISTINCT row_group), array_agg(DISTINCT codec) FROM tessera.chunks WHERE relation = 'o4'::regclass;
SELECT reloptions FROM pg_class WHERE oid = 'o4'::regclass;

-- bad names and values are rejected, naming the option and its range
CREATE TABLE bad (a int) USING tessera WITH (tessera_compression = 'brotli');
CREATE TABLE bad (a int) USING tessera WITH (tessera_compression_level = 0);
CREATE TABLE bad (a int) USING tessera WITH (tessera_stripe_row_limit = 100000000);
CREATE TABLE bad (a int) USING tessera WITH (tessera_row_group_row_limit = 'many');
CREATE TABLE bad (a int) USING tessera WITH (tessera_colour = 'blue');
CREATE TABLE bad (a int) USING tessera WITH (tessera.colour = 'blue');
ALTER TABLE o1 SET (tessera_compression_level = 99);
ALTER TABLE o1 RESET (tessera_compression = 'lz4');
SELECT count(*) FROM pg_class WHERE relname = 'bad';

-- tessera options on a heap table are rejected
CREATE TABLE heap1 (a int) WITH (tessera_compression = 'lz4');
CREATE TABLE heap1 (a int);
ALTER TABLE heap1 SET (tessera_compression = 'lz4');
CREATE TABLE heap2 WITH (tessera_compression = 'lz4') AS SELECT 1 AS a;
SELECT count(*) FROM pg_class WHERE relname = 'heap2';

-- ALTER TABLE ... SET ACCESS METHOD keeps them, and moving to heap drops them
ALTER TABLE o1 SET (tessera_compression = 'lz4');
ALTER TABLE heap1 SET ACCESS METHOD tessera;
ALTER TABLE heap1 SET (tessera_compression = 'none');
ALTER TABLE heap1 SET ACCESS METHOD heap;
SELECT reloptions FROM pg_class WHERE oid = 'heap1'::regclass;
ALTER TABLE heap1 SET (fillfactor = 70);
ALTER TABLE o1 SET ACCESS METHOD tessera;
SELECT reloptions FROM pg_class WHERE oid = 'o1'::regclass;

-- only tessera tables in the view
SELECT relation FROM tessera.options WHERE relation::text LIKE 'heap%';
SELECT * FROM tessera.table_options('heap1');

DROP TABLE o1, o2, o3, o4, heap1;
