/* tessera--0.2--0.3.sql */

\echo Use "ALTER EXTENSION tessera UPDATE TO '0.3'" to load this file. \quit

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
