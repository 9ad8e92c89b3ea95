-- Range quals compared on the encoded chunks without decoding them,
-- integers stored as multiples of a common factor, codecs kept only when
-- they pay for their decoding, and sums of expressions over the few rows a
-- filter keeps.  Every answer is compared with a heap twin's.
CREATE TABLE ph (id int, i2 smallint, i4 int, i8 bigint, d date, ts timestamp,
                 tz timestamptz, q numeric(15,2), p numeric(15,2), disc numeric(15,2),
                 pn numeric(15,2), big numeric, c int, nn int, r numeric(15,2), mx numeric);
INSERT INTO ph SELECT i,
    (i % 200 - 100) * 50,
    CASE WHEN i % 997 = 0 THEN NULL ELSE (i * 7919) % 100003 - 50000 END,
    CASE i % 3 WHEN 0 THEN 9223372036854775807 - i WHEN 1 THEN -9223372036854775807 + i
        ELSE i END,
    date '2020-01-01' + (i * 37) % 2500,
    timestamp '2024-01-01' + ((i * 13) % 100000) * interval '1 second',
    timestamptz '2024-01-01 00:00+00' + i * interval '1 minute',
    (i * 31) % 50 + 1,
    ((i * 7717) % 1000000) / 100.0,
    (i % 11) / 100.0,
    CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 389) % 100000) / 100.0 END,
    CASE WHEN i BETWEEN 3001 AND 4000 AND i % 5 = 0 THEN 1e30 + i ELSE i END,
    42,
    CASE WHEN i > 12000 THEN NULL ELSE i END,
    (hashint4(i) & 63) % 50 + 1,
    CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN i WHEN 2 THEN i / 4.0 ELSE round(i / 3.0, 3) END
FROM generate_series(1, 20000) i;
CREATE TABLE pt (LIKE ph) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 5000);
INSERT INTO pt SELECT * FROM ph;
ANALYZE ph;
ANALYZE pt;

-- bits per value: i2 steps by 50, ts by whole seconds, q by whole numbers
-- at scale 2, so each packs as multiples of that step (8, 17 and 6 bits
-- instead of 14, 37 and 13); i8 spans all of bigint and cannot
SELECT attname, round(max(encoded_bytes) * 8.0 / max(value_count), 1) AS bits_per_value
FROM tessera.chunk_info('pt')
WHERE attname IN ('i2', 'ts', 'q', 'i8', 'c') GROUP BY attname ORDER BY attname;

-- zstd is kept only where it saves a quarter of a chunk: not for r (6
-- bits a value, random but for a skew zstd could squeeze a few percent
-- from), yes for p's pattern
CREATE TABLE pz (LIKE ph) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 5000,
          tessera_compression = zstd);
INSERT INTO pz SELECT * FROM ph;
SELECT attname, string_agg(DISTINCT codec, ',') AS codecs,
       sum(stored_bytes) < sum(encoded_bytes) * 3 / 4 AS saves_a_quarter
FROM tessera.chunk_info('pz') WHERE attname IN ('r', 'p') GROUP BY attname ORDER BY attname;
DROP TABLE pz;
-- the default, auto: lz4 (kept where it saves 1/32) where it halves a
-- sample of the chunk, as for p; zstd where that saves a quarter more
-- than lz4: hex digits (after an x: too many distinct bytes to pack), which
-- lz4 cannot entropy-code
SELECT attname, string_agg(DISTINCT codec, ',') AS codecs,
       sum(stored_bytes) < sum(encoded_bytes) * 3 / 4 AS saves_a_quarter
FROM tessera.chunk_info('pt') WHERE attname IN ('r', 'p') GROUP BY attname ORDER BY attname;
CREATE TABLE pcodec (h text, u text) USING tessera;
INSERT INTO pcodec SELECT 'x' || md5(i::text), 'https://www.example.com/catalog/item/' || (i * 7919 % 1000003) || '/index.html'
FROM generate_series(1, 20000) i;
SELECT attname, string_agg(DISTINCT codec, ',') AS codecs
FROM tessera.chunk_info('pcodec') GROUP BY attname ORDER BY attname;
SELECT count(*), count(DISTINCT h), count(DISTINCT u), min(u), max(h) FROM pcodec;
DROP TABLE pcodec;

-- range quals of every kind, as TesseraAgg and as TesseraScan
CREATE TEMP TABLE preds (pred text);
INSERT INTO preds VALUES
    ('i2 BETWEEN -125 AND 125'), ('i2 = 50'), ('i2 = 51'), ('i2 > 4950'), ('i2 >= 4950'),
    ('i2 < -5000'), ('i2 <= -5000'), ('i2 > -32768'), ('i2 < 32767 AND i2 > -1'),
    ('i4 >= 0 AND i4 < 1000'), ('i4 = 12345'),
    ('i8 > 0 AND i8 < 100'), ('i8 >= 9223372036854775000'), ('i8 < -9223372036854775000'),
    ('i8 = 9223372036854775806'),
    ('d >= date ''2021-01-01'' AND d < date ''2021-01-01'' + interval ''1 year'''),
    ('d = date ''2021-06-01'''), ('d > ''2020-01-01 12:00''::timestamp'),
    ('d <= ''2020-03-01''::timestamp AND d > date ''2020-02-01'''),
    ('ts >= timestamp ''2024-01-01 01:00:00.5'' AND ts < timestamp ''2024-01-01 02:00'''),
    ('ts = timestamp ''2024-01-01 00:00:13'''), ('ts = timestamp ''2024-01-01 00:00:13.5'''),
    ('tz BETWEEN timestamptz ''2024-01-02 00:00+00'' AND timestamptz ''2024-01-03 00:00+00'''),
    ('q < 24'), ('q BETWEEN 10.5 AND 20.001'), ('q = 7'), ('q = 7.001'), ('q > 49.999'),
    ('q >= 50'), ('q <= 0.99999999999999999999999'),
    ('disc BETWEEN 0.05 AND 0.07'), ('disc = 0.1'), ('disc > 0.095'),
    ('big > 1e30'), ('big BETWEEN 100 AND 200'), ('big = 1000000000000000000000000003005'),
    ('c = 42'), ('c > 42'), ('c >= 42'), ('c < 43 AND c > 41'),
    ('nn < 100'), ('nn >= 11990'),
    ('d >= date ''2021-01-01'' AND d < date ''2022-01-01'' AND disc BETWEEN 0.05 AND 0.07 AND q < 24'),
    ('q < 24 AND q > 20 AND q <> 22 AND i2 > 0 AND i2 < 2000');
SELECT pred,
       tt.cmp('SELECT count(*), sum(p * disc), sum(pn * disc), sum(q), avg(p), min(id), max(id), sum(big * disc) FROM {t} WHERE ' || pred, 'ph', 'pt') AS agg,
       tt.cmp('SELECT id, q, ts FROM {t} WHERE ' || pred, 'ph', 'pt') AS scan
FROM preds;

-- the quals above run in the vector filter, not as plan quals
SELECT * FROM tt.explain_analyze($q$SELECT sum(p * disc) FROM pt
WHERE d >= date '2021-01-01' AND d < date '2022-01-01' AND disc BETWEEN 0.05 AND 0.07 AND q < 24$q$);

-- sums over few rows: grouped, with FILTER, with NULLs and 128-bit values
SELECT tt.cmp('SELECT i2, count(*), sum(p * disc), sum(pn - q), avg(big * disc) FROM {t} WHERE q = 7 GROUP BY i2', 'ph', 'pt');
SELECT tt.cmp('SELECT sum(p * disc) FILTER (WHERE q < 3), sum(pn * 2) FILTER (WHERE disc = 0.01), count(*) FROM {t} WHERE i2 BETWEEN 0 AND 100', 'ph', 'pt');
SELECT tt.cmp('SELECT c, sum(big * q), sum(big + p) FROM {t} WHERE big > 1e30 OR id < 0 GROUP BY c', 'ph', 'pt');
SELECT tt.cmp('SELECT sum(big * q), sum(big - p), count(*) FROM {t} WHERE q = 3 AND id BETWEEN 2500 AND 4500', 'ph', 'pt');

-- plain sums of 128-bit and mixed-scale numerics, whole and filtered
SELECT q, tt.cmp('SELECT sum(big), avg(big), sum(mx), avg(mx), min(mx), max(mx), sum(mx * q), count(mx) FROM {t} WHERE ' || q, 'ph', 'pt')
FROM (VALUES ('true'), ('q = 7'), ('mx > 100.5 AND mx < 2000'), ('mx = 3333.333'), ('big > 1e30')) v(q);
SELECT tt.cmp('SELECT i2, sum(mx), avg(big), count(*) FROM {t} GROUP BY i2', 'ph', 'pt');

-- sums the encoding gives without decoding: constants, steady steps (also
-- steps that would wrap past bigint), runs; against every other layout
CREATE TABLE sh (id int, k int, st bigint, w bigint, rl int, s2 smallint);
INSERT INTO sh SELECT i, 7, 1000000000000 + i * 3,
    ((9000000000000000000 + i * 1000000000000000::numeric + 9223372036854775808)
        % 18446744073709551616 - 9223372036854775808)::bigint,
    i / 250, (i % 3000)::smallint FROM generate_series(1, 20000) i;
CREATE TABLE st (LIKE sh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO st SELECT * FROM sh;
SELECT * FROM tt.explain_analyze($q$SELECT sum(k), sum(st), avg(rl) FROM st$q$);
SELECT a, tt.cmp('SELECT ' || a || ' FROM {t}', 'sh', 'st') FROM (VALUES
    ('sum(k), avg(k)'), ('sum(st), avg(st)'), ('sum(w), avg(w)'), ('sum(rl), avg(rl)'),
    ('sum(s2), avg(s2), sum(id)')) v(a);
BEGIN;
DELETE FROM sh WHERE id = 5000;
DELETE FROM st WHERE id = 5000;
SELECT tt.cmp('SELECT sum(k), sum(st), sum(rl), avg(w) FROM {t}', 'sh', 'st');
ROLLBACK;
DROP TABLE sh, st;

-- sums over every row of a row group added from the packed values (no
-- Datum per value): frame-of-reference widths from 1 to 64 bits,
-- negatives, a stride (multiples of a large factor), smallint, int, bigint
CREATE TABLE bh (id int, b1 int, b7 smallint, b20 int, b33 bigint, b64 bigint, neg int,
                 str bigint);
INSERT INTO bh SELECT i, hashint4(i) & 1, ((hashint4(i) & 127) - 64)::smallint,
    hashint4(i) & 1048575, (hashint8(i) & 8589934591) - 4294967296, hashint8(i),
    -(hashint4(i * 7) & 65535) - 100000, 5 + (hashint4(i) & 4095)::bigint * 1000000007
FROM generate_series(1, 20000) i;
CREATE TABLE bt (LIKE bh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO bt SELECT * FROM bh;
SELECT tt.cmp('SELECT sum(b1), avg(b1), sum(b7), avg(b7), sum(b20), avg(b20), sum(b33), avg(b33),
                      sum(b64), avg(b64), sum(neg), avg(neg), sum(str), avg(str), count(*) FROM {t}', 'bh', 'bt');
SELECT tt.cmp('SELECT sum(b64), sum(str), sum(neg) FROM {t} WHERE id > 500', 'bh', 'bt');
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT sum(b33), avg(b64), sum(str), avg(b7) FROM {t}', 'bh', 'bt');
DELETE FROM bh WHERE id % 7 = 0;
DELETE FROM bt WHERE id % 7 = 0;
SELECT tt.cmp('SELECT sum(b33), avg(b64), sum(str), avg(b7) FROM {t}', 'bh', 'bt');
ROLLBACK;
DROP TABLE bh, bt;

-- float sums and averages, row by row as PostgreSQL's transition functions
-- go (same scan order: the same digits), NaN and infinities, and the same
-- overflow errors
CREATE TABLE fh (id int, g int, a real, b float8);
INSERT INTO fh SELECT i, i % 7,
    CASE WHEN i % 13 = 0 THEN NULL WHEN i = 15000 THEN 'NaN' ELSE (i * 0.37)::real / 3 END,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i = 17000 THEN '-Infinity' ELSE i / 7.0 + 1e-9 * i END
FROM generate_series(1, 20000) i;
CREATE TABLE ft (LIKE fh) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO ft SELECT * FROM fh;
EXPLAIN (COSTS OFF) SELECT sum(a), sum(b), avg(a), avg(b) FROM ft;
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT q, tt.cmp(q, 'fh', 'ft') FROM (VALUES
    ('SELECT sum(a), sum(b), avg(a), avg(b), count(a) FROM {t}'),
    ('SELECT sum(a), sum(b), avg(a), avg(b) FROM {t} WHERE id < 14000'),
    ('SELECT g, sum(a), sum(b), avg(a), avg(b) FROM {t} WHERE id < 16000 GROUP BY g'),
    ('SELECT sum(b), avg(a) FROM {t} WHERE id < 0'),
    ('SELECT sum(a) FILTER (WHERE g = 3), avg(b) FILTER (WHERE id > 5) FROM {t}')) v(q);
SELECT sum(a), avg(b) FROM ft WHERE id = 11 * 13;
SELECT sum(b) FROM ft WHERE id BETWEEN 16990 AND 17010;
SELECT sum(b) FROM fh WHERE id BETWEEN 16990 AND 17010;
ROLLBACK;
-- parallel: partial states combined as float8_combine / float8pl do
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT g, round(sum(b)::numeric, 3), round(avg(b)::numeric, 6), round(avg(a)::numeric, 3) FROM {t} WHERE id < 14000 GROUP BY g', 'fh', 'ft');
ROLLBACK;
INSERT INTO fh VALUES (1, 1, 3e38, 1e308), (2, 1, 3e38, 1e308), (3, 2, 1, 1e200), (4, 2, 1, -1e200);
INSERT INTO ft VALUES (1, 1, 3e38, 1e308), (2, 1, 3e38, 1e308), (3, 2, 1, 1e200), (4, 2, 1, -1e200);
SELECT sum(a) FROM ft WHERE g = 1 AND id < 5;
SELECT sum(a) FROM fh WHERE g = 1 AND id < 5;
SELECT sum(b) FROM ft WHERE g = 1 AND id < 5;
SELECT sum(b) FROM fh WHERE g = 1 AND id < 5;
SELECT avg(b) FROM ft WHERE g = 2 AND id < 5;
SELECT avg(b) FROM fh WHERE g = 2 AND id < 5;
DROP TABLE fh, ft;

-- interval sums and averages (interval_pl per field, interval_div)
CREATE TABLE ih (id int, g int, v interval);
INSERT INTO ih SELECT i, i % 5, CASE WHEN i % 17 = 0 THEN NULL
    ELSE make_interval(months => i % 13 - 6, days => i % 40, secs => i * 1.5) END
FROM generate_series(1, 20000) i;
CREATE TABLE it (LIKE ih) USING tessera WITH (tessera_row_group_row_limit = 1000);
INSERT INTO it SELECT * FROM ih;
EXPLAIN (COSTS OFF) SELECT g, sum(v), avg(v) FROM it GROUP BY g;
SELECT q, tt.cmp(q, 'ih', 'it') FROM (VALUES
    ('SELECT sum(v), avg(v), count(v) FROM {t}'), ('SELECT g, sum(v), avg(v) FROM {t} GROUP BY g'),
    ('SELECT sum(v), avg(v) FROM {t} WHERE id < 0'), ('SELECT avg(v) FROM {t} WHERE id % 17 = 0')) v(q);
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT g, sum(v), avg(v) FROM {t} WHERE id > 10 GROUP BY g', 'ih', 'it');
ROLLBACK;
INSERT INTO it VALUES (1, 9, make_interval(days => 2000000000)), (2, 9, make_interval(days => 2000000000));
SELECT sum(v) FROM it WHERE g = 9;
DROP TABLE ih, it;

-- GROUP BY with no aggregate (the distinct keys), also past work_mem
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT i2 FROM pt GROUP BY i2) s;
SELECT k, tt.cmp(k, 'ph', 'pt') FROM (VALUES
    ('SELECT i2 FROM {t} GROUP BY i2'), ('SELECT i2, c FROM {t} WHERE q < 10 GROUP BY i2, c'),
    ('SELECT nn FROM {t} GROUP BY nn'), ('SELECT count(*) FROM (SELECT d FROM {t} GROUP BY d) s')) v(k);
BEGIN;
SET LOCAL work_mem = '64kB';
SELECT tt.cmp('SELECT id, i2 FROM {t} GROUP BY id, i2', 'ph', 'pt');
ROLLBACK;

-- deleted rows and rows of the current transaction
BEGIN;
DELETE FROM ph WHERE id % 7 = 0;
DELETE FROM pt WHERE id % 7 = 0;
INSERT INTO ph SELECT id + 100000, i2, i4, i8, d, ts, tz, q, p, disc, pn, big, c, nn, r, mx FROM ph WHERE id < 300;
INSERT INTO pt SELECT id + 100000, i2, i4, i8, d, ts, tz, q, p, disc, pn, big, c, nn, r, mx FROM pt WHERE id < 300;
SELECT pred,
       tt.cmp('SELECT count(*), sum(p * disc), sum(q), min(id), max(id) FROM {t} WHERE ' || pred, 'ph', 'pt') AS agg
FROM preds WHERE pred LIKE 'q%' OR pred LIKE 'd >=%';
ROLLBACK;

-- the same in parallel workers
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT pred,
       tt.cmp('SELECT count(*), sum(p * disc), sum(pn * disc), min(id) FROM {t} WHERE ' || pred, 'ph', 'pt') AS agg
FROM preds WHERE pred LIKE 'd%' OR pred LIKE 'q <%';
ROLLBACK;

DROP TABLE ph, pt;

-- `<>` and ranges compared on the chunk without decoding it: packed
-- offsets, and runs (each compared once) with and without NULLs among
-- them, over all rows and over the few rows an earlier qual listed
CREATE TABLE rh (id int, rl int, rn int, sp smallint, dn numeric(10,2), f int, g float8);
INSERT INTO rh SELECT i, i / 250,
    CASE WHEN i % 1000 < 100 THEN NULL ELSE i / 300 END,
    CASE WHEN i % 50 = 0 THEN (i % 7)::smallint ELSE 0 END,
    (i / 500) / 4.0, (i * 7919) % 1000, i % 10
FROM generate_series(1, 20000) i;
CREATE TABLE rt (LIKE rh) USING tessera
    WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 5000);
INSERT INTO rt SELECT * FROM rh;
-- runs: a few bytes a chunk (f, packed, takes 10 bits a value)
SELECT attname, max(encoded_bytes) < 300 AS few_bytes
FROM tessera.chunk_info('rt') WHERE attname IN ('rl', 'rn', 'sp', 'dn', 'f')
GROUP BY attname ORDER BY attname;
SELECT pred,
       tt.cmp('SELECT count(*), sum(f), min(id), max(id) FROM {t} WHERE ' || pred, 'rh', 'rt') AS agg,
       tt.cmp('SELECT id, rn, dn FROM {t} WHERE ' || pred, 'rh', 'rt') AS scan
FROM (VALUES ('rl <> 10'), ('rl = 10'), ('rl BETWEEN 5 AND 9'), ('rl <> -1'), ('rl > 79'),
    ('rn <> 20'), ('rn = 20'), ('rn > 30 AND rn <= 40'), ('sp <> 0'), ('sp = 0'), ('sp <> 3'),
    ('sp <> 100000'), ('dn <> 2.5'), ('dn <> 2.55'), ('dn = 2.5'), ('dn <> 0'),
    ('f <> 500'), ('f <> 5000'), ('f <> 500 AND f <> 501'), ('rl <> 10 AND f < 500'),
    ('sp <> 0 AND rl > 20'), ('f < 100 AND g < 5 AND rl <> 10'),
    ('f < 100 AND g < 5 AND rn <> 12 AND sp = 0'), ('f < 50 AND g > 2 AND rl BETWEEN 3 AND 60')) v(pred);
SELECT * FROM tt.explain_analyze($q$SELECT count(*) FROM rt WHERE sp <> 0 AND rl <> 10$q$);
BEGIN;
DELETE FROM rh WHERE id % 9 = 0;
DELETE FROM rt WHERE id % 9 = 0;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT rl, count(*), sum(f) FROM {t} WHERE sp <> 0 AND rn <> 30 GROUP BY rl', 'rh', 'rt');
ROLLBACK;
DROP TABLE rh, rt;

-- Quals applied in the order their pass rates make cheapest, learned row
-- group by row group: a and b swap selectivity halfway through the table
-- (a keeps half the rows, then one in fifty; b one in fifty, then two
-- thirds), h and hn are
-- hashes in runs of seven (run-length sections of many short runs, with
-- NULLs in hn), g a few random hashes (an lz4 payload read frame by frame
-- for the few rows an earlier qual keeps).  Every order keeps the same rows.
CREATE TABLE oh (id int, h bigint, hn bigint, a int, b int, g bigint, d date, s smallint);
INSERT INTO oh SELECT i, hashint8((i / 7)::bigint),
    CASE WHEN i % 101 = 0 THEN NULL ELSE hashint8((i / 7)::bigint) END,
    CASE WHEN i <= 20000 THEN i % 2 ELSE (i % 50 = 1)::int END,
    CASE WHEN i <= 20000 THEN (i % 50 = 1)::int ELSE (i % 3 > 0)::int END,
    hashint8((hashint4(i) & 63)::bigint), date '2020-01-01' + i % 1000, (i % 300)::smallint
FROM generate_series(1, 40000) i;
CREATE TABLE ot (LIKE oh) USING tessera WITH (tessera_row_group_row_limit = 2500);
INSERT INTO ot SELECT * FROM oh;
ANALYZE oh;
ANALYZE ot;
-- g is lz4 and framed, h a run-length section (well under 8 bytes a value)
SELECT attname, string_agg(DISTINCT codec, ',') AS codecs, bool_and(framed) AS framed,
       max(stored_bytes) < 2500 * 8 / 4 AS packed_small
FROM tessera.chunk_info('ot') WHERE attname IN ('g', 'h') GROUP BY attname ORDER BY attname;
SELECT pred,
       tt.cmp('SELECT count(*), sum(id), min(g), max(s) FROM {t} WHERE ' || pred, 'oh', 'ot') AS agg,
       tt.cmp('SELECT id, g, d FROM {t} WHERE ' || pred, 'oh', 'ot') AS scan
FROM (VALUES ('a = 1 AND b = 1'), ('b = 1 AND a = 1 AND s < 150'),
    ('a = 1 AND b = 1 AND h = hashint8(2864)'), ('h = hashint8(700) AND a = 1'),
    ('a = 1 AND h = hashint8(3500)'), ('d < date ''2020-06-01'' AND h = hashint8(5000)'),
    ('h BETWEEN 0 AND 4611686018427387904'), ('h < 0 AND b = 0'), ('h <> hashint8(10)'),
    ('hn > 0 AND a = 1'), ('hn = hashint8(707) AND s > 0'),
    ('b = 1 AND g = hashint8(5)'), ('a = 1 AND b = 1 AND g <> hashint8(7) AND d > date ''2020-03-01'''),
    ('a = 1 AND b = 1 AND g IN (hashint8(1), hashint8(2), hashint8(3))'),
    ('a = 1 AND b = 1 AND s < a + 100'), ('a = 1 AND b = 1 AND a = b'),
    ('h = hashint8(4000) AND s = 100'), ('s = 151 AND b = 1 AND a = 1 AND id > 100')) v(pred);
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT a, b, count(*), sum(g % 1000) FROM {t} WHERE a = 1 AND b = 1 AND h > 0 GROUP BY a, b', 'oh', 'ot');
SELECT tt.cmp('SELECT id FROM {t} WHERE h = hashint8(3100) AND b = 1', 'oh', 'ot');
ROLLBACK;
DROP TABLE oh, ot;
