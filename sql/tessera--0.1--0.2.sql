/* tessera--0.1--0.2.sql */

\echo Use "ALTER EXTENSION tessera UPDATE TO '0.2'" to load this file. \quit

-- chunk_info gains the framed column (a chunk stored as independently
-- compressed frames, directory format 4); its view is rebuilt over it.
DROP VIEW tessera.chunks;
DROP FUNCTION tessera.chunk_info(regclass);

CREATE FUNCTION tessera.chunk_info(rel regclass,
    OUT stripe_id bigint, OUT row_group integer, OUT attnum integer,
    OUT attname name, OUT encoding text, OUT codec text,
    OUT value_count bigint, OUT null_count bigint, OUT logical_bytes bigint,
    OUT encoded_bytes bigint, OUT stored_bytes bigint,
    OUT min_value text, OUT max_value text, OUT stripe_offset bigint,
    OUT framed boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tessera_chunk_info'
LANGUAGE C STRICT;

CREATE VIEW tessera.chunks AS
SELECT t.relation, c.*
FROM tessera.tables t, LATERAL tessera.chunk_info(t.relation) c
WHERE pg_catalog.has_any_column_privilege(t.relation, 'SELECT');

-- the shared cache of decompressed frames (tessera.shared_cache_size)
CREATE FUNCTION tessera.shared_cache_stats(
    OUT enabled boolean, OUT blocks bigint, OUT blocks_used bigint, OUT entries bigint,
    OUT hits bigint, OUT misses bigint, OUT inserts bigint, OUT evictions bigint,
    OUT backend_hits bigint, OUT backend_misses bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'tessera_shared_cache_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.shared_cache_stats() IS
    'the shared cache of decompressed frames (tessera.shared_cache_size): 4 KB blocks, blocks and entries in use, hits, misses, inserts and evictions since server start, and this session''s hits and misses';

CREATE VIEW tessera.shared_cache AS
SELECT * FROM tessera.shared_cache_stats();

GRANT SELECT ON tessera.chunks, tessera.shared_cache TO PUBLIC;
