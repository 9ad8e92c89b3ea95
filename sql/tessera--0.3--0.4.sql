/* tessera--0.3--0.4.sql */

\echo Use "ALTER EXTENSION tessera UPDATE TO '0.4'" to load this file. \quit

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
