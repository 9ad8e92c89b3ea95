-- The delta: small writes keep their stripe in the catalog row until
-- compaction (tessera.compact, VACUUM) merges them into stripes of pages.
-- Every statement runs on a heap twin too, and the answers are compared.
SET tessera.autocompact_stripes = 0;	-- compaction only where this test asks for it
SET client_min_messages = warning;
CREATE TABLE dt (id int PRIMARY KEY, grp int, name text, amount numeric(10,2), ts timestamptz)
    USING tessera;
CREATE TABLE dh (LIKE dt INCLUDING ALL) USING heap;
RESET client_min_messages;

-- the same writes into both
CREATE FUNCTION dwrite(sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE replace(sql, 'TBL', 'dt');
    EXECUTE replace(sql, 'TBL', 'dh');
END $$;
-- rows in one and not the other (0 and 0 when they agree)
CREATE FUNCTION ddiff(q text, OUT only_tessera bigint, OUT only_heap bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
                   replace(q, 'TBL', 'dt'), replace(q, 'TBL', 'dh'))
        INTO only_tessera;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
                   replace(q, 'TBL', 'dh'), replace(q, 'TBL', 'dt'))
        INTO only_heap;
END $$;

-- 30 small transactions (\gexec runs each statement on its own)
SELECT format('SELECT dwrite(%L)',
              format('INSERT INTO TBL SELECT g, g %% 7, ''n'' || g, g * 1.25, '
                     'timestamptz ''2024-01-01'' + g * interval ''1 hour'' '
                     'FROM generate_series(%s, %s) g', k * 10 + 1, k * 10 + 10))
FROM generate_series(0, 29) k \gexec

-- a rolled-back write and a savepoint leave holes in the row numbers
BEGIN;
INSERT INTO dt VALUES (1000, 1, 'gone', 1, now());
ROLLBACK;
BEGIN;
SELECT dwrite('INSERT INTO TBL VALUES (301, 1, ''kept'', 3.5, ''2024-02-01'')');
SAVEPOINT s;
INSERT INTO dt VALUES (1001, 1, 'gone', 1, now());
ROLLBACK TO s;
SELECT dwrite('INSERT INTO TBL VALUES (302, 2, NULL, NULL, NULL)');
COMMIT;

-- small writes went to the delta, not to pages
SELECT count(*) AS delta_stripes, sum(row_count) AS delta_rows, max(blocks) AS blocks
FROM tessera.stripes WHERE relation = 'dt'::regclass AND in_delta;
SELECT stripes, rows FROM tessera.delta WHERE relation = 'dt'::regclass;
SELECT pg_relation_size('dt') < 8192 * 4 AS few_pages;

-- every read path sees the delta rows
SELECT * FROM ddiff('SELECT * FROM TBL');
SELECT * FROM ddiff('SELECT grp, count(*), sum(amount), avg(id), min(name), max(ts) FROM TBL GROUP BY grp');
SELECT * FROM ddiff('SELECT * FROM TBL WHERE id BETWEEN 95 AND 135 AND amount > 130');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM ddiff('SELECT * FROM TBL WHERE id IN (1, 55, 155, 301, 302, 1000, 1001)');
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT * FROM ddiff('SELECT * FROM TBL WHERE id < 40 OR id > 290');
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT id, name FROM dt WHERE ctid = (SELECT ctid FROM dt WHERE id = 77);

-- changes of delta rows, in small transactions again
SELECT dwrite('UPDATE TBL SET amount = amount + 1, name = ''u'' || id WHERE id % 10 = 3');
SELECT dwrite('DELETE FROM TBL WHERE id % 10 = 4');
SELECT dwrite('UPDATE TBL SET id = id + 500 WHERE id IN (1, 2)');
SELECT * FROM ddiff('SELECT * FROM TBL');
BEGIN;
SELECT id FROM dt WHERE id = 5 FOR UPDATE;
COMMIT;

-- compaction: the delta's rows move into one stripe, with their row numbers
CREATE TEMP TABLE before_ctid AS SELECT ctid AS tid, id FROM dt;
BEGIN;
DECLARE cur CURSOR FOR SELECT id, name FROM dt ORDER BY id;
FETCH 2 FROM cur;
SELECT tessera.compact('dt') > 0 AS moved;
FETCH 2 FROM cur;  -- the cursor's snapshot still reads the delta stripes
COMMIT;
SELECT count(*) FILTER (WHERE in_delta) AS delta_stripes,
       count(*) FILTER (WHERE NOT in_delta) AS page_stripes
FROM tessera.stripes WHERE relation = 'dt'::regclass;
SELECT count(*) AS same_ctid FROM before_ctid b JOIN dt ON dt.ctid = b.tid WHERE dt.id = b.id;
SELECT count(*) AS rows FROM dt;
SELECT * FROM ddiff('SELECT * FROM TBL');
SELECT * FROM ddiff('SELECT grp, count(*), sum(amount), min(ts), max(name) FROM TBL GROUP BY grp');
SET enable_seqscan = off;
SELECT * FROM ddiff('SELECT * FROM TBL WHERE id IN (3, 4, 5, 77, 299, 301, 302, 501, 502, 1000)');
RESET enable_seqscan;
-- the moved rows can be changed, and a second compaction finds nothing
SELECT dwrite('UPDATE TBL SET grp = grp + 10 WHERE id BETWEEN 100 AND 120');
SELECT dwrite('DELETE FROM TBL WHERE id BETWEEN 200 AND 210');
SELECT * FROM ddiff('SELECT * FROM TBL');
SELECT tessera.compact('dt') AS moved_again_only_new;

-- VACUUM compacts too, and removes the dead rows' index entries
SELECT format('SELECT dwrite(%L)', format('INSERT INTO TBL VALUES (%s, 3, ''v'', 1, NULL)', 600 + k))
FROM generate_series(1, 5) k \gexec
VACUUM dt;
SELECT count(*) FILTER (WHERE in_delta) AS delta_stripes FROM tessera.stripes WHERE relation = 'dt'::regclass;
SELECT * FROM ddiff('SELECT * FROM TBL');
SET enable_seqscan = off;
SELECT * FROM ddiff('SELECT id FROM TBL WHERE id > 590');
RESET enable_seqscan;

-- the threshold: a GUC and a table option; 0 turns the delta off
SET tessera.delta_row_limit = 5;
INSERT INTO dt SELECT g, 0, 'big', 0, NULL FROM generate_series(700, 709) g;
INSERT INTO dt SELECT g, 0, 'small', 0, NULL FROM generate_series(710, 714) g;
SELECT first_row, row_count, in_delta FROM tessera.stripes
WHERE relation = 'dt'::regclass ORDER BY first_row DESC LIMIT 2;
RESET tessera.delta_row_limit;
ALTER TABLE dt SET (tessera.delta_row_limit = 0);
SELECT delta_row_limit FROM tessera.options WHERE relation = 'dt'::regclass;
INSERT INTO dt VALUES (720, 0, 'paged', 0, NULL);
SELECT in_delta FROM tessera.stripes WHERE relation = 'dt'::regclass ORDER BY first_row DESC LIMIT 1;
ALTER TABLE dt RESET (tessera.delta_row_limit);
ALTER TABLE dt SET (tessera.delta_row_limit = -1);
ALTER TABLE dt SET (tessera.delta_row_limit = 100001);

-- a transaction that writes a lot in small statements writes a stripe of pages
BEGIN;
SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 2)) x;
INSERT INTO dt SELECT g, 0, 'many', 0, NULL FROM generate_series(800, 1399) g;
INSERT INTO dt SELECT g, 0, 'many', 0, NULL FROM generate_series(1400, 1999) g;
COMMIT;
SELECT row_count, in_delta FROM tessera.stripes WHERE relation = 'dt'::regclass ORDER BY first_row DESC LIMIT 1;

-- a small write read back by its own transaction goes to the delta too,
-- and a rolled-back one leaves nothing behind
BEGIN;
INSERT INTO dt VALUES (3000, 1, 'mid', 1, NULL);
SELECT id, name FROM dt WHERE id = 3000;
INSERT INTO dt VALUES (3001, 1, 'mid2', 1, NULL);
COMMIT;
SELECT row_count, in_delta FROM tessera.stripes WHERE relation = 'dt'::regclass
ORDER BY first_row DESC LIMIT 2;
BEGIN;
INSERT INTO dt VALUES (3002, 1, 'gone', 1, NULL);
SELECT count(*) FROM dt WHERE id >= 3000;
ROLLBACK;
SELECT id, name FROM dt WHERE id >= 3000 ORDER BY id;
SET enable_seqscan = off;
SELECT id FROM dt WHERE id IN (3000, 3001, 3002) ORDER BY id;
RESET enable_seqscan;

-- errors
SELECT tessera.compact('dh');
SELECT tessera.compact(0);

-- TRUNCATE and DROP take the delta with them
SELECT dwrite('INSERT INTO TBL VALUES (2000, 1, ''t'', 1, NULL)');
TRUNCATE dt;
SELECT count(*) FROM dt;
SELECT count(*) FROM tessera.stripes WHERE relation = 'dt'::regclass;
INSERT INTO dt VALUES (1, 1, 'again', 1, NULL);
SELECT id, name FROM dt;
DROP TABLE dt, dh;
DROP FUNCTION dwrite(text);
DROP FUNCTION ddiff(text);
RESET tessera.autocompact_stripes;
