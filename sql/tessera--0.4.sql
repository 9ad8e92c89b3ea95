/* tessera--0.4.sql */

\echo Use "CREATE EXTENSION tessera" to load this file. \quit

CREATE FUNCTION tessera.tessera_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE ACCESS METHOD tessera TYPE TABLE HANDLER tessera.tessera_tableam_handler;
COMMENT ON ACCESS METHOD tessera IS 'columnar table access method';

-- Internal catalog: one row per stripe, keyed by (storage_id, first_row).
-- The C code reads and writes it directly; nobody else should.
CREATE SCHEMA tessera_internal;
REVOKE ALL ON SCHEMA tessera_internal FROM PUBLIC;

CREATE SEQUENCE tessera_internal.storage_id_seq;

CREATE TABLE tessera_internal.stripe (
    storage_id   bigint NOT NULL,
    stripe_id    bigint NOT NULL,
    first_row    bigint NOT NULL,
    row_count    bigint NOT NULL,
    start_block  bigint NOT NULL,
    block_count  bigint NOT NULL,
    data_bytes   bigint NOT NULL,
    dir_offset   bigint NOT NULL,
    dir_bytes    bigint NOT NULL,
    row_groups   integer NOT NULL,
    columns      integer NOT NULL,
    flags        integer NOT NULL,
    reserved_rows bigint NOT NULL
) USING heap;
CREATE INDEX stripe_first_row_idx ON tessera_internal.stripe (storage_id, first_row);
REVOKE ALL ON tessera_internal.stripe FROM PUBLIC;

-- The delta: the bytes of small stripes (flags & 1), kept here instead of
-- pages of their own until compaction moves their rows into a stripe.
CREATE TABLE tessera_internal.delta (
    storage_id   bigint NOT NULL,
    stripe_id    bigint NOT NULL,
    bytes        bytea NOT NULL
) USING heap;
CREATE UNIQUE INDEX delta_stripe_idx ON tessera_internal.delta (storage_id, stripe_id);
REVOKE ALL ON tessera_internal.delta FROM PUBLIC;

-- Logical decoding leaves out changes to a relation marked as the target of
-- a rewrite (pg_class.relrewrite; test_decoding's include-rewrites shows
-- them).  tessera's catalog rows describe this server's storage, never a
-- user's change: mark its tables and their TOAST tables so (see
-- src/tableam/logical.c).
UPDATE pg_catalog.pg_class SET relrewrite = oid
WHERE oid IN (SELECT c.oid FROM pg_catalog.pg_class c
              WHERE c.relnamespace = 'tessera_internal'::regnamespace AND c.relkind = 'r'
              UNION ALL
              SELECT c.reltoastrelid FROM pg_catalog.pg_class c
              WHERE c.relnamespace = 'tessera_internal'::regnamespace AND c.relkind = 'r'
                AND c.reltoastrelid <> 0);

-- Introspection
CREATE FUNCTION tessera.stripe_info(rel regclass,
    OUT stripe_id bigint, OUT first_row bigint, OUT row_count bigint,
    OUT row_groups integer, OUT start_block bigint, OUT blocks bigint,
    OUT data_bytes bigint, OUT directory_bytes bigint, OUT in_delta boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tessera_stripe_info'
LANGUAGE C STRICT;

CREATE FUNCTION tessera.row_group_info(rel regclass,
    OUT stripe_id bigint, OUT row_group integer, OUT first_row bigint,
    OUT row_count bigint, OUT logical_bytes bigint, OUT encoded_bytes bigint,
    OUT stored_bytes bigint, OUT folded_rows bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tessera_row_group_info'
LANGUAGE C STRICT;

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

CREATE FUNCTION tessera.compression_ratio(rel regclass)
RETURNS double precision
AS 'MODULE_PATHNAME', 'tessera_compression_ratio'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.compression_ratio(regclass) IS
    'bytes of the values themselves divided by the bytes their chunks take on disk';

CREATE FUNCTION tessera.catalog_bytes(rel regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'tessera_catalog_bytes'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.catalog_bytes(regclass) IS
    'bytes the table''s rows in tessera_internal.stripe and tessera_internal.delta take; pg_total_relation_size does not count them';

CREATE FUNCTION tessera.compact(rel regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'tessera_compact'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.compact(regclass) IS
    'moves the table''s delta rows into stripes now (VACUUM does too); returns the rows moved';

CREATE FUNCTION tessera.verify(rel regclass,
    OUT severity text, OUT stripe_id bigint, OUT row_group integer, OUT attnum integer,
    OUT block bigint, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tessera_verify'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.verify(regclass) IS
    'checks the table''s catalog rows, stripe directories, chunks, row states and pages against each other; returns the problems found';

CREATE FUNCTION tessera.table_options(rel regclass,
    OUT compression text, OUT compression_level integer,
    OUT stripe_row_limit integer, OUT row_group_row_limit integer,
    OUT delta_row_limit integer)
RETURNS record
AS 'MODULE_PATHNAME', 'tessera_table_options'
LANGUAGE C STRICT;

CREATE FUNCTION tessera.shared_cache_stats(
    OUT enabled boolean, OUT blocks bigint, OUT blocks_used bigint, OUT entries bigint,
    OUT hits bigint, OUT misses bigint, OUT inserts bigint, OUT evictions bigint,
    OUT backend_hits bigint, OUT backend_misses bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'tessera_shared_cache_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tessera.shared_cache_stats() IS
    'the shared cache of decompressed frames (tessera.shared_cache_size): 4 KB blocks, blocks and entries in use, hits, misses, inserts and evictions since server start, and this session''s hits and misses';

CREATE VIEW tessera.tables AS
SELECT c.oid::regclass AS relation
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_am a ON a.oid = c.relam
WHERE a.amname = 'tessera' AND c.relkind IN ('r', 'm');

CREATE VIEW tessera.options AS
SELECT t.relation, o.*
FROM tessera.tables t, LATERAL tessera.table_options(t.relation) o;

CREATE VIEW tessera.stripes AS
SELECT t.relation, s.*
FROM tessera.tables t, LATERAL tessera.stripe_info(t.relation) s
WHERE pg_catalog.has_any_column_privilege(t.relation, 'SELECT');

CREATE VIEW tessera.row_groups AS
SELECT t.relation, g.*
FROM tessera.tables t, LATERAL tessera.row_group_info(t.relation) g
WHERE pg_catalog.has_any_column_privilege(t.relation, 'SELECT');

CREATE VIEW tessera.chunks AS
SELECT t.relation, c.*
FROM tessera.tables t, LATERAL tessera.chunk_info(t.relation) c
WHERE pg_catalog.has_any_column_privilege(t.relation, 'SELECT');

-- The delta: small writes whose stripes live in the catalog until compacted
CREATE VIEW tessera.delta AS
SELECT relation, count(*) AS stripes, sum(row_count) AS rows,
       sum(data_bytes) AS bytes
FROM tessera.stripes
WHERE in_delta
GROUP BY relation;

-- Background compactions running now (tessera.autocompact_stripes)
-- The shared cache of decompressed frames (tessera.shared_cache_size)
CREATE VIEW tessera.shared_cache AS
SELECT * FROM tessera.shared_cache_stats();

CREATE VIEW tessera.compactions AS
SELECT pid, datname, backend_start AS started, query AS progress
FROM pg_catalog.pg_stat_activity
WHERE backend_type = 'tessera compaction';

GRANT USAGE ON SCHEMA tessera TO PUBLIC;
GRANT SELECT ON tessera.tables, tessera.options, tessera.stripes,
    tessera.row_groups, tessera.chunks, tessera.delta, tessera.compactions,
    tessera.shared_cache TO PUBLIC;

-- Parquet and Arrow files as tables (src/files/parquet_fdw.c).  The
-- foreign data wrapper itself is left to a superuser who wants it (a
-- table access method installed everywhere should not add a wrapper to
-- every database's pg_foreign_data_wrapper):
--   CREATE FOREIGN DATA WRAPPER tessera_parquet
--       HANDLER tessera.parquet_fdw_handler VALIDATOR tessera.parquet_fdw_validator;
--   CREATE SERVER files FOREIGN DATA WRAPPER tessera_parquet;
--   CREATE FOREIGN TABLE t (...) SERVER files OPTIONS (filename '/path/x.parquet');
--   IMPORT FOREIGN SCHEMA "/path/dir" FROM SERVER files INTO public;
-- Naming files takes pg_read_server_files (the validator checks it).
CREATE FUNCTION tessera.parquet_fdw_handler() RETURNS fdw_handler
AS 'MODULE_PATHNAME', 'tessera_parquet_fdw_handler' LANGUAGE C STRICT;
CREATE FUNCTION tessera.parquet_fdw_validator(text[], oid) RETURNS void
AS 'MODULE_PATHNAME', 'tessera_parquet_fdw_validator' LANGUAGE C STRICT;
