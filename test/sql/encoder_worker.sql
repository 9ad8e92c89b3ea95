-- Bulk loads' row groups encoded by a background worker (tessera.encoder_worker)
-- while the backend reads the next: the stripes must be byte for byte what
-- the backend writes alone -- every chunk's encoding, codec, sizes, offsets and
-- min/max, each checked against its checksum -- with NULLs, dropped columns, toasted values, collations and
-- every kind of value; when the worker quits halfway the backend encodes
-- what it did not; a rolled-back subtransaction or an error stops it.
SET tessera.row_group_row_limit = 1000;
-- this backend's encoder workers; with wait, once none is left (up to 30 s:
-- a worker leaves a moment after the backend lets it go)
CREATE FUNCTION enc_encoders(wait bool DEFAULT false) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    FOR i IN 1 .. 300 LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT count(*) INTO n FROM pg_stat_activity
        WHERE backend_type = 'tessera encoder'
          AND query = format('encoding row groups for process %s', pg_backend_pid());
        EXIT WHEN NOT wait OR n = 0;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN n;
END $$;
CREATE TABLE enc_src (id int, r bigint, h text, w varchar(12) COLLATE "C", n numeric(12,3),
                      ts timestamptz, f float8, c char(5), big text, gone int, nul text,
                      d date, arr int[], b bool);
INSERT INTO enc_src SELECT i, (i::bigint * 2654435761) % 1000003, md5(i::text),
    'w' || (i % 37), (i * 7919 % 100000)::numeric / 7,
    timestamptz '2024-01-01 00:00+00' + (i * 7919 % 86400) * interval '1 minute',
    (i % 1000) / 3.0, lpad((i % 97)::text, 5, '0'),
    CASE WHEN i % 2000 = 7 THEN repeat(md5(i::text), 200) ELSE 'short ' || i END,
    i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'v' || (i % 5) END,
    date '2020-01-01' + i % 1500, ARRAY[i % 7, i % 11], i % 2 = 0
FROM generate_series(1, 12000) i;

-- the same rows three times: the backend alone, with a worker, and with a
-- worker that quits after 20 columns (part of the second row group it had)
SET tessera.encoder_worker = off;
CREATE TABLE enc_local (LIKE enc_src) USING tessera;
ALTER TABLE enc_local DROP COLUMN gone;
INSERT INTO enc_local SELECT id, r, h, w, n, ts, f, c, big, nul, d, arr, b FROM enc_src;
SELECT enc_encoders() AS encoders;

RESET tessera.encoder_worker;
BEGIN;
CREATE TABLE enc_worker (LIKE enc_src) USING tessera;
ALTER TABLE enc_worker DROP COLUMN gone;
INSERT INTO enc_worker SELECT id, r, h, w, n, ts, f, c, big, nul, d, arr, b FROM enc_src;
-- the worker is there until the transaction ends
SELECT enc_encoders() AS encoders;
COMMIT;

-- CREATE TABLE AS (like COPY) ends its load with finish_bulk_insert: the
-- worker goes with it
BEGIN;
CREATE TABLE enc_ctas USING tessera AS
    SELECT id, r, h, w, n, ts, f, c, big, nul, d, arr, b FROM enc_src;
SELECT enc_encoders(wait => true) AS encoders;
COMMIT;

SET tessera.debug_encoder_exit_after = 20;
CREATE TABLE enc_quit (LIKE enc_src) USING tessera;
ALTER TABLE enc_quit DROP COLUMN gone;
INSERT INTO enc_quit SELECT id, r, h, w, n, ts, f, c, big, nul, d, arr, b FROM enc_src;
RESET tessera.debug_encoder_exit_after;

-- the same rows
SELECT (SELECT count(*) FROM (TABLE enc_local EXCEPT ALL TABLE enc_worker) x) AS local_not_worker,
       (SELECT count(*) FROM (TABLE enc_worker EXCEPT ALL TABLE enc_local) x) AS worker_not_local,
       (SELECT count(*) FROM (TABLE enc_local EXCEPT ALL TABLE enc_quit) x) AS local_not_quit,
       (SELECT count(*) FROM (TABLE enc_quit EXCEPT ALL TABLE enc_local) x) AS quit_not_local,
       (SELECT count(*) FROM (TABLE enc_local EXCEPT ALL TABLE enc_ctas) x) AS local_not_ctas,
       (SELECT count(*) FROM enc_worker) AS n;

-- the same chunks: every row group of every column, in the same stripes
CREATE FUNCTION enc_chunks(rel regclass) RETURNS TABLE (s bigint, g int, a int, e text, c text,
    vc bigint, nc bigint, lb bigint, sb bigint, mn text, mx text, so bigint, fr boolean)
LANGUAGE sql AS $$
    SELECT row_number() OVER (ORDER BY stripe_id), row_group, attnum, encoding, codec,
           value_count, null_count, logical_bytes, stored_bytes, min_value, max_value,
           stripe_offset, framed
    FROM tessera.chunk_info(rel) $$;
SELECT (SELECT count(*) FROM enc_chunks('enc_local')) AS chunks,
       (SELECT count(*) FROM (SELECT * FROM enc_chunks('enc_local')
                              EXCEPT SELECT * FROM enc_chunks('enc_worker')) x) AS worker_differs,
       (SELECT count(*) FROM (SELECT * FROM enc_chunks('enc_local')
                              EXCEPT SELECT * FROM enc_chunks('enc_quit')) x) AS quit_differs,
       (SELECT count(*) FROM enc_chunks('enc_ctas')) AS ctas_chunks;
SELECT count(*) AS verify_problems FROM tessera.verify('enc_worker');
SELECT count(*) AS verify_problems FROM tessera.verify('enc_quit');

-- a rolled-back subtransaction drops its rows and its worker; the next load
-- in the transaction gets one of its own
BEGIN;
CREATE TABLE enc_sub (LIKE enc_src) USING tessera;
SAVEPOINT a;
INSERT INTO enc_sub SELECT * FROM enc_src;
ROLLBACK TO a;
INSERT INTO enc_sub SELECT * FROM enc_src WHERE id <= 6000;
-- (the first may still be on its way out)
SELECT enc_encoders() >= 1 AS has_encoder;
COMMIT;
SELECT count(*), sum(id), count(DISTINCT h), sum(length(big)) FROM enc_sub;
SELECT count(*), sum(id), count(DISTINCT h), sum(length(big)) FROM enc_src WHERE id <= 6000;

-- an error during the load: nothing is left, the worker goes
CREATE TABLE enc_err (LIKE enc_src) USING tessera;
INSERT INTO enc_err SELECT * FROM enc_src WHERE 1 / (9000 - id) IS NOT NULL;
SELECT count(*) FROM enc_err;
SELECT enc_encoders(wait => true) AS encoders_left;

-- a column of a user-defined type keeps the load in the backend (its
-- comparison function could be anything)
CREATE TYPE enc_mood AS ENUM ('sad', 'ok', 'happy');
BEGIN;
CREATE TABLE enc_enum (id int, m enc_mood) USING tessera;
INSERT INTO enc_enum SELECT i, (ARRAY['sad', 'ok', 'happy'])[1 + i % 3]::enc_mood
FROM generate_series(1, 5000) i;
SELECT enc_encoders() AS encoders;
COMMIT;
SELECT m, count(*) FROM enc_enum GROUP BY m ORDER BY m;

DROP TABLE enc_src, enc_local, enc_worker, enc_ctas, enc_quit, enc_sub, enc_err, enc_enum;
DROP FUNCTION enc_chunks(regclass), enc_encoders(bool);
DROP TYPE enc_mood;
RESET tessera.row_group_row_limit;
