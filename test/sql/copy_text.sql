--
-- COPY FROM text and CSV into a tessera table with the input functions run
-- by a worker (utility/copy_text.c): the rows and every error (message,
-- detail, context) the same as heap's, whichever row and column is bad
-- first and whichever batch it falls in.
--
CREATE TABLE ct_h (id int NOT NULL, a int, n numeric(8,2), s text, ts timestamptz, d date);
CREATE TABLE ct_t (LIKE ct_h INCLUDING ALL) USING tessera;

-- batches of 50 rows: everything past the first 50 is converted by the worker
SET tessera.debug_copy_batch_rows = 50;

-- the COPY's outcome: 'ok' and the rows' digest, or the error with the table's name masked
CREATE FUNCTION ct_try(tbl text, path text, opts text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	msg text;
	det text;
	ctx text;
	digest text;
BEGIN
	EXECUTE format('TRUNCATE %I', tbl);
	EXECUTE format('COPY %I FROM %L (%s)', tbl, path, opts);
	EXECUTE format('SELECT md5(string_agg(x::text, '','' ORDER BY x.id)) FROM %I x', tbl) INTO digest;
	RETURN 'ok ' || digest;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, ctx = PG_EXCEPTION_CONTEXT;
	RETURN replace(msg || ' | ' || coalesce(det, '') || ' | ' || split_part(ctx, E'\n', 1), tbl, 'T');
END $$;

-- heap's outcome, and whether tessera's is the same
CREATE FUNCTION ct_same(path text, opts text DEFAULT 'FORMAT csv') RETURNS TABLE (heap text, same bool)
LANGUAGE plpgsql AS $$
DECLARE
	h text := ct_try('ct_h', path, opts);
	t text := ct_try('ct_t', path, opts);
BEGIN
	IF h IS DISTINCT FROM t THEN
		RAISE NOTICE 'tessera: %', t;
	END IF;
	RETURN QUERY SELECT h, h IS NOT DISTINCT FROM t;
END $$;

-- the lines of a CSV file: 500 good rows with some lines replaced
CREATE FUNCTION ct_file(name text, VARIADIC repl text[] DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	path text := '/tmp/tessera_ct_' || name || '.csv';
BEGIN
	EXECUTE format($q$
		COPY (SELECT coalesce(r.line, g.line) FROM
			(SELECT i, concat_ws(',', i, i * 7, i * 1.25, 'v' || i,
								 '2024-01-01 00:00:00+00'::timestamptz + i * interval '1 hour',
								 '2024-01-01'::date + i) AS line
			   FROM generate_series(1, 500) i) g
			LEFT JOIN (SELECT split_part(x, ':', 1)::int AS i, substr(x, strpos(x, ':') + 1) AS line
						 FROM unnest(%L::text[]) x) r USING (i)
			ORDER BY g.i) TO %L$q$, repl, path);
	RETURN path;
END $$;

SELECT * FROM ct_same(ct_file('good'));
SELECT * FROM ct_same(ct_file('good'), 'FORMAT csv, HEADER false, DELIMITER '','', QUOTE ''"''');
-- a bad integer in the worker's batches; two, the earlier row's error first
SELECT * FROM ct_same(ct_file('int1', '320:320,x,1,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('int2', '450:450,y,1,a,2024-01-01,2024-01-01',
							  '320:320,1,1,a,notatime,2024-01-01'));
-- the same row: the earlier column's error
SELECT * FROM ct_same(ct_file('int3', '320:320,z,99999999,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('int4', '320:320,1,99999999,a,2024-01-01,nodate'));
-- a bad value in the first batch (converted by the backend) and one in a later batch
SELECT * FROM ct_same(ct_file('int5', '10:10,1,1,a,2024-01-01,bad', '320:320,x,1,a,2024-01-01,2024-01-01'));
-- NULL in the NOT NULL column: after, before and in the row of a bad value
SELECT * FROM ct_same(ct_file('nn1', '300:,1,1,a,2024-01-01,2024-01-01', '310:310,x,1,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('nn2', '290:290,x,1,a,2024-01-01,2024-01-01', '300:,1,1,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('nn3', '300:,1,1,a,2024-01-01,bad'));
SELECT * FROM ct_same(ct_file('nn4', '30:,1,1,a,2024-01-01,2024-01-01'));
-- too many and too few fields, alone and after a bad value
SELECT * FROM ct_same(ct_file('extra1', '400:400,1,1,a,2024-01-01,2024-01-01,extra'));
SELECT * FROM ct_same(ct_file('extra2', '390:390,x,1,a,2024-01-01,2024-01-01', '400:400,1,1,a,2024-01-01,2024-01-01,extra'));
SELECT * FROM ct_same(ct_file('missing1', '400:400,1,1'));
SELECT * FROM ct_same(ct_file('missing2', '400:400,x,1'));
SELECT * FROM ct_same(ct_file('missing3', '399:399,1,1,a,nodate,2024-01-01', '400:400,1'));
-- an error of the parser itself (an unterminated quoted field), alone and after a bad value
SELECT * FROM ct_same(ct_file('quote1', '500:500,1,1,"abc,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('quote2', '200:200,x,1,a,2024-01-01,2024-01-01', '500:500,1,1,"abc,2024-01-01,2024-01-01'));
-- a value out of its type's range, a numeric over its typmod
SELECT * FROM ct_same(ct_file('range1', '333:333,99999999999,1,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('range2', '333:333,1,1234567.891,a,2024-01-01,2024-01-01'));
-- NULL strings, quoted empty strings
SELECT * FROM ct_same(ct_file('nulls', '100:100,,,,,', '200:200,"",,"",,'));
SELECT * FROM ct_same(ct_file('nulls2', '100:100,,,,,', '200:200,"",,"",,'), 'FORMAT csv, NULL ''1''');

-- the worker reads dates and times with the backend's settings
SET datestyle = 'SQL, DMY';
SET timezone = 'America/New_York';
SELECT * FROM ct_same(ct_file('dmy', '100:100,1,1,a,03/04/2024 10:00,05/06/2024',
							  '300:300,1,1,a,03/04/2024 10:00 EST,05/06/2024'));
RESET datestyle;
RESET timezone;
SELECT * FROM ct_same(ct_file('dmy', '100:100,1,1,a,03/04/2024 10:00,05/06/2024',
							  '300:300,1,1,a,03/04/2024 10:00 EST,05/06/2024'));

-- 'now' and 'today' read the transaction's start: the backend's, as for heap
SELECT same FROM ct_same(ct_file('now', '300:300,1,1,a,now,Today', '400:400,1,1,a,2024-01-01,tomorrow'));

-- text format, with its escapes
COPY (SELECT i, i, i, E'tab\there ' || i, NULL, '2024-01-01'::date + i FROM generate_series(1, 300) i)
	TO '/tmp/tessera_ct_text.txt';
SELECT * FROM ct_same('/tmp/tessera_ct_text.txt', 'FORMAT text');
SELECT * FROM ct_same('/tmp/tessera_ct_text.txt', 'FORMAT text, NULL ''7''');

-- a unique index: built, and a duplicate reported as heap reports it
CREATE UNIQUE INDEX ON ct_h (id);
CREATE UNIQUE INDEX ON ct_t (id);
SELECT * FROM ct_same(ct_file('good'));
SELECT a, s FROM ct_t WHERE id = 377;
SELECT * FROM ct_same(ct_file('dup', '377:5,1,1,a,2024-01-01,2024-01-01'));

-- a worker that quits half way: the backend converts the rest
SET tessera.debug_encoder_exit_after = 3;
SELECT * FROM ct_same(ct_file('good'));
SELECT * FROM ct_same(ct_file('int1', '320:320,x,1,a,2024-01-01,2024-01-01'));
RESET tessera.debug_encoder_exit_after;

-- a COPY rolled back to a savepoint, then one that stays
BEGIN;
TRUNCATE ct_t;
SAVEPOINT s;
COPY ct_t FROM '/tmp/tessera_ct_int1.csv' (FORMAT csv);
ROLLBACK TO s;
COPY ct_t FROM '/tmp/tessera_ct_good.csv' (FORMAT csv);
COMMIT;
SELECT count(*), sum(id), sum(n) FROM ct_t;

-- what CopyFrom keeps: a CHECK constraint, a column default, FORCE_NULL
ALTER TABLE ct_t ADD CHECK (a >= 0);
ALTER TABLE ct_h ADD CHECK (a >= 0);
SELECT * FROM ct_same(ct_file('check', '320:320,-1,1,a,2024-01-01,2024-01-01'));
SELECT * FROM ct_same(ct_file('good'), 'FORMAT csv, FORCE_NULL (s)');

-- a type whose input the worker does not run (regclass: the backend's search_path)
CREATE TABLE ct_reg (id int, r regclass) USING tessera;
COPY ct_reg FROM STDIN (FORMAT csv);
1,ct_h
2,pg_class
\.
SELECT * FROM ct_reg ORDER BY id;

-- a role that may not insert gets COPY's own error; one that may, its rows
CREATE ROLE regress_ct_user;
GRANT pg_read_server_files TO regress_ct_user;
CREATE TABLE ct_priv (id int, a int) USING tessera;
COPY (SELECT i, i * 2 FROM generate_series(1, 200) i) TO '/tmp/tessera_ct_priv.csv' (FORMAT csv);
SET ROLE regress_ct_user;
COPY ct_priv FROM '/tmp/tessera_ct_priv.csv' (FORMAT csv);
RESET ROLE;
GRANT INSERT, SELECT ON ct_priv TO regress_ct_user;
SET ROLE regress_ct_user;
COPY ct_priv FROM '/tmp/tessera_ct_priv.csv' (FORMAT csv);
SELECT count(*), sum(id), sum(a) FROM ct_priv;
RESET ROLE;
-- row-level security: COPY FROM is refused, as for heap
ALTER TABLE ct_priv ENABLE ROW LEVEL SECURITY;
SET ROLE regress_ct_user;
COPY ct_priv FROM '/tmp/tessera_ct_priv.csv' (FORMAT csv);
RESET ROLE;
DROP TABLE ct_priv;
DROP ROLE regress_ct_user;

RESET tessera.debug_copy_batch_rows;
DROP TABLE ct_h, ct_t, ct_reg;
DROP FUNCTION ct_same, ct_try, ct_file;
