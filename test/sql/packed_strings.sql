-- Strings of at most 16 distinct bytes (hex digests, digit strings, codes)
-- packed four bits a character: chosen only where every byte of a chunk's
-- values fits, decoded exactly -- odd lengths, empty strings, NULLs, values
-- long enough for a 4-byte header, char(n) padding, bytea, arrays -- by
-- scans, by index fetches (framed chunks read frame by frame, and small
-- unframed ones) and by sparse reads.  Every answer is compared with a heap
-- twin's.
SET tessera.row_group_row_limit = 3000;
CREATE TABLE sh (id int PRIMARY KEY, hex text, digits varchar(20), odd text, code char(7),
                 long text, bin bytea, arr int[], mixed text, nul text, tiny text, dom text);
INSERT INTO sh SELECT i,
    md5(i::text),
    (i * 7919 % 100000)::text,
    repeat(substr(md5(i::text), 1, 1 + i % 9), 1 + i % 3),
    lpad((i % 1000)::text, 7, '0'),
    CASE WHEN i % 500 = 0 THEN repeat('0123456789', 30 + i % 7) ELSE (i * 31)::text END,
    decode(i::bit(16)::text, 'hex'),
    ARRAY[i % 4, i / 4 % 4, i / 16 % 4, i / 64 % 4, i / 256 % 4, i / 1024 % 4, i / 4096 % 4],
    CASE WHEN i = 2500 THEN 'x' || md5(i::text) ELSE md5(i::text) END,
    CASE WHEN i % 4 = 0 THEN NULL WHEN i % 4 = 1 THEN '' ELSE (i % 97)::text || '-' || i END,
    (i * 7919 % 997)::text,
    to_char(i, 'FM000-000')
FROM generate_series(1, 9000) i;
CREATE TABLE st (LIKE sh INCLUDING ALL) USING tessera;
INSERT INTO st SELECT * FROM sh;

-- which columns were packed: hex, digits, codes, bytea of four distinct
-- bytes, small int arrays (their headers included) in every chunk; the row
-- group holding 'x' || md5 plain; values averaging under four bytes never
SELECT attname, array_agg(DISTINCT encoding ORDER BY encoding) AS encodings,
       bool_or(framed) AS some_framed
FROM tessera.chunk_info('st') GROUP BY attname ORDER BY attname;

-- scans
SELECT tt.same_table('sh', 'st');
SELECT tt.cmp('SELECT count(DISTINCT hex), min(hex), max(hex), max(length(long)), sum(length(odd)) FROM {t}', 'sh', 'st');
SELECT tt.cmp('SELECT id FROM {t} WHERE hex LIKE ''%abc%'' OR odd = ''aaa''', 'sh', 'st');
SELECT tt.cmp('SELECT nul, count(*) FROM {t} GROUP BY nul HAVING count(*) > 1', 'sh', 'st');
SELECT tt.cmp('SELECT code, count(*), min(digits) FROM {t} WHERE digits > ''5'' GROUP BY code', 'sh', 'st');
SELECT tt.cmp('SELECT arr[1], count(*) FROM {t} GROUP BY 1', 'sh', 'st');

-- index fetches, every 7th key and the last of each row group
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS fetched,
       count(*) FILTER (WHERE (SELECT row(s.*)::text FROM st s WHERE s.id = g)
                              IS DISTINCT FROM
                              (SELECT row(s.*)::text FROM sh s WHERE s.id = g)) AS different
FROM (SELECT generate_series(1, 9000, 7) UNION SELECT generate_series(3000, 9000, 3000)) AS k(g);
SELECT id, hex, odd, long IS NOT NULL AS has_long, length(long), nul, dom FROM st
WHERE id IN (1, 2, 3, 4, 500, 2500, 8999) ORDER BY id;
-- sparse reads: a few rows of each row group through a selective filter
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT tt.cmp('SELECT hex, long, nul FROM {t} WHERE id % 1000 = 17', 'sh', 'st');

-- small unframed chunks, and after an update moves rows to new stripes
CREATE TABLE sh2 (id int PRIMARY KEY, hex text);
INSERT INTO sh2 SELECT i, CASE WHEN i % 5 = 0 THEN NULL ELSE md5(i::text) END FROM generate_series(1, 50) i;
CREATE TABLE st2 (LIKE sh2 INCLUDING ALL) USING tessera;
INSERT INTO st2 SELECT * FROM sh2;
UPDATE sh2 SET hex = upper(hex) WHERE id % 3 = 0;
UPDATE st2 SET hex = upper(hex) WHERE id % 3 = 0;
SELECT attname, array_agg(encoding ORDER BY stripe_id, row_group) FROM tessera.chunk_info('st2')
WHERE attname = 'hex' GROUP BY attname;
SELECT tt.same_table('sh2', 'st2');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE (SELECT hex FROM st2 WHERE id = g) IS DISTINCT FROM
                              (SELECT hex FROM sh2 WHERE id = g)) AS different
FROM generate_series(1, 50) g;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- lengths that drift (stored as deltas, read through the fetch cache's
-- index of them), fetched at random by key
CREATE TABLE dh (id int PRIMARY KEY, s text);
INSERT INTO dh SELECT i, left(repeat(md5(i::text), 6), 8 + (i - 1) % 3000 / 20 + i % 2)
FROM generate_series(1, 9000) i;
CREATE TABLE dt (LIKE dh INCLUDING ALL) USING tessera;
INSERT INTO dt SELECT * FROM dh;
SELECT array_agg(DISTINCT encoding) AS encodings, bool_and(framed) AS framed
FROM tessera.chunk_info('dt') WHERE attname = 's';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE (SELECT s FROM dt WHERE id = g) IS DISTINCT FROM
                              (SELECT s FROM dh WHERE id = g)) AS different
FROM (SELECT (i * 7919) % 9000 + 1 FROM generate_series(1, 3000) i) AS k(g);
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT tt.same_table('dh', 'dt');
DROP TABLE dh, dt;

-- a type stored with 4-byte headers only (oidvector: storage plain), its
-- binary bytes few enough to pack
CREATE TABLE ovh (id int PRIMARY KEY, v oidvector);
INSERT INTO ovh SELECT i, (SELECT string_agg(((i >> (2 * k)) & 3)::text, ' ')
                           FROM generate_series(0, 7) k)::oidvector
FROM generate_series(1, 20000) i;
CREATE TABLE ovt (LIKE ovh INCLUDING ALL) USING tessera;
INSERT INTO ovt SELECT * FROM ovh;
SELECT array_agg(DISTINCT encoding) FROM tessera.chunk_info('ovt') WHERE attname = 'v';
SELECT tt.cmp('SELECT id, v::text FROM {t}', 'ovh', 'ovt');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE (SELECT v::text FROM ovt WHERE id = g) IS DISTINCT FROM
                              (SELECT v::text FROM ovh WHERE id = g)) AS different
FROM generate_series(1, 20000, 13) g;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE ovh, ovt;

-- a rewrite keeps them, and verify reads them
VACUUM FULL st;
SELECT tt.same_table('sh', 'st');
SELECT count(*) AS problems FROM tessera.verify('st');
DROP TABLE sh, st, sh2, st2;
RESET tessera.row_group_row_limit;
