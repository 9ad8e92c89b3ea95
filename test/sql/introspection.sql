-- What is on disk: stripes, row groups, chunks, compression ratio, sizes.
CREATE TABLE seed (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
    WITH (tessera_stripe_row_limit = 20000, tessera_row_group_row_limit = 5000);
INSERT INTO seed SELECT i, 'single-value', i % 1000, (i % 100000)::numeric / 7,
    timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(1, 50000) i;

SELECT stripe_id, first_row, row_count, row_groups, blocks > 0 AS has_blocks,
       data_bytes > directory_bytes AS has_data
    FROM tessera.stripes WHERE relation = 'seed'::regclass ORDER BY stripe_id;
SELECT stripe_id, row_group, first_row, row_count, logical_bytes > stored_bytes AS compressed
    FROM tessera.row_groups WHERE relation = 'seed'::regclass ORDER BY stripe_id, row_group;
-- encodings picked for each column, and min/max per chunk
SELECT attname, encoding, codec, sum(value_count) AS vals, sum(null_count) AS nulls,
       min(min_value) FILTER (WHERE attname <> 'c4') AS a_min_text
    FROM tessera.chunks WHERE relation = 'seed'::regclass GROUP BY attname, encoding, codec ORDER BY attname;
SELECT row_group, min_value, max_value FROM tessera.chunks
    WHERE relation = 'seed'::regclass AND attname = 'c1' AND stripe_id = 1 ORDER BY row_group;
SELECT min_value, max_value FROM tessera.chunks
    WHERE relation = 'seed'::regclass AND attname IN ('c4', 'c5') AND stripe_id = 1 AND row_group = 0 ORDER BY attname;
-- the chunk sums add up to the row group and stripe figures
SELECT (SELECT sum(stored_bytes) FROM tessera.chunks WHERE relation = 'seed'::regclass)
     = (SELECT sum(stored_bytes) FROM tessera.row_groups WHERE relation = 'seed'::regclass) AS consistent;
SELECT tessera.compression_ratio('seed') > 50 AS well_compressed;

-- sizes are real
SELECT pg_relation_size('seed') = 8192 * (1 + (SELECT sum(blocks) FROM tessera.stripes WHERE relation = 'seed'::regclass)) AS size_matches;
SELECT pg_total_relation_size('seed') = pg_relation_size('seed') AS no_toast;
SELECT pg_size_pretty(pg_relation_size('seed')) <> '0 bytes' AS nonzero;

-- a table with NULL-only and mixed columns
CREATE TABLE nulls (a int, b text, c int) USING tessera;
INSERT INTO nulls SELECT NULL, CASE WHEN i % 2 = 0 THEN 'x' END, i FROM generate_series(1, 10) i;
SELECT attname, encoding, value_count, null_count, min_value, max_value
    FROM tessera.chunks WHERE relation = 'nulls'::regclass ORDER BY attnum;
SELECT tessera.compression_ratio('nulls') IS NOT NULL AS has_ratio;

-- empty table and errors
CREATE TABLE empty (a int) USING tessera;
SELECT count(*) FROM tessera.stripe_info('empty');
SELECT tessera.compression_ratio('empty');
CREATE TABLE plain_heap (a int);
SELECT * FROM tessera.stripe_info('plain_heap');
SELECT * FROM tessera.chunk_info('plain_heap');

-- introspection needs SELECT on the table
CREATE ROLE tessera_reader;
GRANT USAGE ON SCHEMA tessera TO tessera_reader;
SET ROLE tessera_reader;
SELECT count(*) FROM tessera.stripe_info('seed');
SELECT count(*) FROM tessera.stripes WHERE relation = 'seed'::regclass;
RESET ROLE;
GRANT SELECT ON seed TO tessera_reader;
SET ROLE tessera_reader;
SELECT count(*) FROM tessera.stripe_info('seed');
RESET ROLE;
REVOKE ALL ON seed FROM tessera_reader;
REVOKE ALL ON SCHEMA tessera FROM tessera_reader;
DROP ROLE tessera_reader;

-- \d+ shows the access method and size
\d+ seed

-- tessera.verify: nothing to report on a sound table, after deletes,
-- updates, VACUUM and compaction too (test/t/010_verify.pl damages one)
SELECT * FROM tessera.verify('seed');
DELETE FROM seed WHERE c1 % 7 = 0;
UPDATE seed SET c3 = -1 WHERE c1 % 11 = 0;
VACUUM seed;
SELECT * FROM tessera.verify('seed');
SELECT * FROM tessera.verify('plain_heap');

DROP TABLE seed, nulls, empty, plain_heap;

-- the shared frame cache (tessera.shared_cache_size, 0 here: off)
SELECT enabled, blocks, blocks_used, entries, hits, misses, backend_hits, backend_misses
FROM tessera.shared_cache;
