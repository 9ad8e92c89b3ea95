-- What other roles can and cannot do to tessera tables: storage parameters
-- reach only the relation a statement created or may alter, the
-- introspection views show no values row-level security or column
-- privileges hide, and settings that could exhaust the server are bounded.
CREATE ROLE regress_tessera_alice;
CREATE ROLE regress_tessera_mallory;
CREATE SCHEMA shared;
GRANT ALL ON SCHEMA shared TO regress_tessera_alice, regress_tessera_mallory;

-- CREATE TABLE IF NOT EXISTS leaves an existing (another role's) table alone
SET ROLE regress_tessera_alice;
CREATE TABLE shared.at (x int) USING tessera;
SET ROLE regress_tessera_mallory;
CREATE TABLE IF NOT EXISTS shared.at (x int) USING tessera WITH (tessera_stripe_row_limit = 1);
CREATE TABLE IF NOT EXISTS shared.at USING tessera WITH (tessera_stripe_row_limit = 2) AS SELECT 1 AS x;
SELECT 1 AS x INTO TEMP at;
SET search_path = shared;
-- the name resolves to the temp table first: options go to what was created
CREATE TABLE IF NOT EXISTS at (x int) USING tessera WITH (tessera_stripe_row_limit = 3);
CREATE TABLE IF NOT EXISTS at2 (x int) USING tessera WITH (tessera_stripe_row_limit = 4);
ALTER TABLE shared.at SET (tessera_stripe_row_limit = 5);
ALTER TABLE shared.at RESET (tessera_stripe_row_limit);
ALTER TABLE IF EXISTS shared.at SET (tessera_compression = 'none', fillfactor = 50);
RESET search_path;
RESET ROLE;
SELECT c.relname, c.relnamespace::regnamespace = 'shared'::regnamespace AS in_shared,
       pg_get_userbyid(c.relowner) AS owner, c.reloptions
FROM pg_class c WHERE c.relname IN ('at', 'at2') ORDER BY 1, 2;
DROP TABLE shared.at, shared.at2, pg_temp.at;
DROP SCHEMA shared;

-- introspection: min/max are values, shown as pg_stats shows statistics
CREATE TABLE secret (id int, pub text, priv text, owner name) USING tessera;
INSERT INTO secret SELECT i, 'p' || i, 's' || i,
    CASE WHEN i <= 10 THEN 'regress_tessera_alice' ELSE 'someone' END
FROM generate_series(1, 100) i;
GRANT SELECT ON secret TO regress_tessera_alice;
GRANT SELECT (id, pub) ON secret TO regress_tessera_mallory;
SET ROLE regress_tessera_alice;
SELECT attname, min_value, max_value FROM tessera.chunks WHERE relation = 'secret'::regclass ORDER BY attnum;
RESET ROLE;
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON secret TO regress_tessera_alice USING (owner = current_user);
SET ROLE regress_tessera_alice;
SELECT count(*), max(id) FROM secret;
-- rows the policy hides: no values
SELECT attname, value_count, min_value, max_value FROM tessera.chunks
WHERE relation = 'secret'::regclass ORDER BY attnum;
SELECT attname, min_value, max_value FROM tessera.chunk_info('secret') ORDER BY attnum;
RESET ROLE;
-- the owner is not subject to the policy: values shown
SELECT attname, min_value, max_value FROM tessera.chunks
WHERE relation = 'secret'::regclass ORDER BY attnum;
ALTER TABLE secret DISABLE ROW LEVEL SECURITY;
-- column privileges: only the columns granted
SET ROLE regress_tessera_mallory;
SELECT attname, min_value, max_value FROM tessera.chunks
WHERE relation = 'secret'::regclass ORDER BY attnum;
SELECT count(*) FROM tessera.stripes WHERE relation = 'secret'::regclass;
RESET ROLE;
REVOKE SELECT (id, pub) ON secret FROM regress_tessera_mallory;
SET ROLE regress_tessera_mallory;
SELECT count(*) FROM tessera.chunks WHERE relation = 'secret'::regclass;
SELECT * FROM tessera.chunk_info('secret');
SELECT * FROM tessera.stripe_info('secret');
RESET ROLE;
DROP TABLE secret;

-- settings: bounded, or a superuser's
-- (the message's form differs between versions: report the SQLSTATE)
DO $$ BEGIN SET tessera.fetch_cache_size = '2GB'; RAISE NOTICE 'accepted';
EXCEPTION WHEN invalid_parameter_value THEN RAISE NOTICE 'refused: %', SQLSTATE; END $$;
SHOW tessera.fetch_cache_size;
SET tessera.fetch_cache_size = '1GB';
RESET tessera.fetch_cache_size;
SET tessera.autocompact_stripes = 5;
SET tessera.autocompact_stripes = 16;
SET tessera.autocompact_stripes = 0;
RESET tessera.autocompact_stripes;
SET ROLE regress_tessera_mallory;
SET tessera.autocompact_stripes = 100000;
SET tessera.compaction_log_level = debug1;
RESET ROLE;

-- tessera's WAL resource manager has an id of its own, not the shared
-- experimental one
SELECT rm_id, rm_name FROM pg_get_wal_resource_managers() WHERE NOT rm_builtin;

DROP ROLE regress_tessera_alice;
DROP ROLE regress_tessera_mallory;
