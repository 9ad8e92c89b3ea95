-- Index builds see every row: serial and parallel builds, plain, unique and
-- CONCURRENTLY, inside the transaction that loaded more than a stripe
-- (buffered rows are written before parallel workers count row groups),
-- across savepoints; checked with amcheck's heapallindexed and by comparing
-- index scans with sequential scans.
CREATE EXTENSION IF NOT EXISTS amcheck;
SET maintenance_work_mem = '64MB';
SET min_parallel_table_scan_size = 0;

CREATE FUNCTION tt.index_counts(t regclass, lo int, hi int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
    idx bigint;
    bmp bigint;
BEGIN
    SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT count(*) FROM %s WHERE a BETWEEN %s AND %s', t, lo, hi) INTO seq;
    SET LOCAL enable_seqscan = off; SET LOCAL tessera.enable_custom_scan = off;
    SET LOCAL enable_indexscan = on;
    EXECUTE format('SELECT count(*) FROM %s WHERE a BETWEEN %s AND %s', t, lo, hi) INTO idx;
    SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = on;
    EXECUTE format('SELECT count(*) FROM %s WHERE a BETWEEN %s AND %s', t, lo, hi) INTO bmp;
    RETURN format('seq %s, index %s, bitmap %s', seq, idx, bmp);
END $$;

-- parallel builds in the loading transaction
SET max_parallel_maintenance_workers = 2;
BEGIN;
-- (zstd level 19 makes writing the buffered rows slow, so that workers
-- started without them would count their row groups before they exist)
CREATE TABLE ib_par (a int, b int, c text) USING tessera
    WITH (parallel_workers = 2, tessera_stripe_row_limit = 20000, tessera_row_group_row_limit = 5000,
          tessera_compression_level = 19);
INSERT INTO ib_par SELECT i, i % 1000, md5(i::text) FROM generate_series(1, 20000) i;
SAVEPOINT s1;
INSERT INTO ib_par SELECT i, i % 1000, md5(i::text) FROM generate_series(20001, 21000) i;
RELEASE SAVEPOINT s1;
SAVEPOINT s2;
INSERT INTO ib_par SELECT i, i % 1000, 'rolled back' FROM generate_series(21001, 25000) i;
ROLLBACK TO SAVEPOINT s2;
-- still in this backend's write buffer when the index is built
INSERT INTO ib_par SELECT i, i % 1000, md5(i::text) FROM generate_series(25001, 44000) i;
ALTER TABLE ib_par RENAME TO ib_par2;
ALTER TABLE ib_par2 RENAME TO ib_par;
CREATE INDEX ib_par_a ON ib_par (a);
CREATE UNIQUE INDEX ib_par_ab ON ib_par (a, b);
INSERT INTO ib_par SELECT i, i % 1000, md5(i::text) FROM generate_series(60001, 61000) i;
ALTER TABLE ib_par ADD PRIMARY KEY (a);
COMMIT;
SELECT bt_index_check('ib_par_a', true), bt_index_check('ib_par_ab', true),
       bt_index_check('ib_par_pkey', true);
SELECT tt.index_counts('ib_par', 1, 100000);
SELECT tt.index_counts('ib_par', 19990, 20010);

-- serial builds, and a load into a table that has indexes already
SET max_parallel_maintenance_workers = 0;
BEGIN;
CREATE TABLE ib_ser (a int, b int, c text) USING tessera
    WITH (tessera_stripe_row_limit = 20000, tessera_row_group_row_limit = 5000);
INSERT INTO ib_ser SELECT i, i % 1000, md5(i::text) FROM generate_series(1, 45000) i;
CREATE INDEX ib_ser_a ON ib_ser (a);
INSERT INTO ib_ser SELECT i, i % 1000, md5(i::text) FROM generate_series(45001, 50000) i;
CREATE UNIQUE INDEX ib_ser_ab ON ib_ser (a, b);
DELETE FROM ib_ser WHERE a % 97 = 0;
REINDEX TABLE ib_ser;
COMMIT;
SELECT bt_index_check('ib_ser_a', true), bt_index_check('ib_ser_ab', true);
SELECT tt.index_counts('ib_ser', 1, 100000);

-- CONCURRENTLY, parallel, after the load and while rows are deleted
SET max_parallel_maintenance_workers = 2;
CREATE INDEX CONCURRENTLY ib_par_b ON ib_par (b);
DELETE FROM ib_par WHERE a % 13 = 0;
REINDEX INDEX CONCURRENTLY ib_par_a;
SELECT bt_index_check('ib_par_a', true), bt_index_check('ib_par_b', true);
SELECT tt.index_counts('ib_par', 1, 100000);
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;
RESET maintenance_work_mem;

DROP TABLE ib_par, ib_ser;
DROP FUNCTION tt.index_counts(regclass, int, int);
