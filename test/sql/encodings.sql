-- Lightweight encodings and codecs: every encoding path round-trips
-- exactly, including the extremes that overflow naive arithmetic.
SET tessera.row_group_row_limit = 64;

-- integers: constant, sorted, runs, random, extremes (delta overflow)
CREATE TABLE ih (k int, a int8, b int4, c int2, d bool, e "char", f date, g timestamptz, h money);
INSERT INTO ih SELECT i,
    CASE i % 4 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 WHEN 2 THEN 0 ELSE -1 END,
    CASE WHEN i < 200 THEN 42 WHEN i < 400 THEN i ELSE (i * 2654435761)::bigint % 2147483647 END,
    (i / 50)::int2 * (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END),
    i % 7 = 0,
    chr(32 + i % 90)::"char",
    date '2000-01-01' + (i / 3),
    timestamptz '1970-01-01 00:00+00' + i * interval '1 microsecond',
    (i * 1.01)::money
FROM generate_series(1, 1000) i;
INSERT INTO ih VALUES (1001, NULL, -2147483648, -32768, NULL, NULL, '4713-01-01 BC', '-infinity', NULL),
                      (1002, 1, 2147483647, 32767, true, '\377', '5874897-12-31', 'infinity', '-92233720368547758.08');
CREATE TABLE it (LIKE ih) USING tessera;
INSERT INTO it SELECT * FROM ih;
SELECT tt.same_table('ih', 'it');
SELECT attname, array_agg(DISTINCT encoding ORDER BY encoding) FROM tessera.chunks
    WHERE relation = 'it'::regclass GROUP BY attname ORDER BY attname;
SELECT min(a), max(a), min(b), max(b), min(c), max(c), min(f), max(f), min(g), max(g) FROM it;
SELECT tt.cmp('SELECT min(a), max(a), min(b), max(b), min(c), max(c), min(f), max(f), min(g), max(g), sum(h) FROM {t}', 'ih', 'it');

-- floats: NaN, infinities, signed zero, subnormals keep their bits
CREATE TABLE fh (k int, x float8, y float4);
INSERT INTO fh SELECT i, x, y FROM unnest(
    ARRAY['NaN', 'Infinity', '-Infinity', '0', '-0', '4.9e-324', '-4.9e-324',
          '1.7976931348623157e308', '0.1', '1e-310']::float8[],
    ARRAY['NaN', 'Infinity', '-Infinity', '0', '-0', '1.4e-45', '-1.4e-45',
          '3.4028235e38', '0.1', '1e-40']::float4[]) WITH ORDINALITY AS u(x, y, i);
INSERT INTO fh SELECT 100 + i, sin(i) * 10 ^ (i % 20), cos(i) FROM generate_series(1, 300) i;
CREATE TABLE ft (LIKE fh) USING tessera;
INSERT INTO ft SELECT * FROM fh;
SELECT tt.cmp('SELECT k, x::text, y::text, float8send(x), float4send(y) FROM {t}', 'fh', 'ft');
SELECT k, x, y FROM ft WHERE k <= 10 ORDER BY k;
SELECT min_value, max_value FROM tessera.chunks WHERE relation = 'ft'::regclass AND attname = 'x' AND row_group = 0;

-- numerics: every scale, sign, magnitude; specials and huge values fall back
CREATE TABLE nh (k int, n numeric);
INSERT INTO nh SELECT i, v FROM (SELECT row_number() OVER () AS i, v FROM unnest(ARRAY[
    '0', '0.0', '-0.00', '1', '-1', '0.5', '10', '100', '1000', '10000', '100000000',
    '12345678901234567890123456789012345678', '-12345678901234567890123456789012345678',
    '0.00000000000000000000000000000000000001', '1.10', '1.100', '9999.9999', '0.0001', '0.001',
    '123.456e10', '1e-20', '3.14159265358979323846264338327950288419716939937510']::numeric[]) v) s;
INSERT INTO nh SELECT 1000 + i, (i % 100000)::numeric / 7 FROM generate_series(1, 500) i;
INSERT INTO nh SELECT 2000 + i, round((i * 1.37)::numeric, i % 8) * (CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END) FROM generate_series(1, 500) i;
CREATE TABLE nt (LIKE nh) USING tessera;
INSERT INTO nt SELECT * FROM nh;
SELECT tt.cmp('SELECT k, n::text, numeric_send(n), scale(n) FROM {t}', 'nh', 'nt');
SELECT k, n, scale(n) FROM nt WHERE k <= 22 ORDER BY k;
SELECT array_agg(DISTINCT encoding) FROM tessera.chunks WHERE relation = 'nt'::regclass AND attname = 'n';
-- a chunk with NaN or infinity falls back to another encoding, still exact
INSERT INTO nh VALUES (3001, 'NaN'), (3002, 'Infinity'), (3003, '-Infinity'), (3004, 1e300), (3005, 1e-300);
INSERT INTO nt VALUES (3001, 'NaN'), (3002, 'Infinity'), (3003, '-Infinity'), (3004, 1e300), (3005, 1e-300);
SELECT tt.cmp('SELECT k, n::text, numeric_send(n) FROM {t}', 'nh', 'nt');
SELECT sum(n) = (SELECT sum(n) FROM nh) AS same_sum FROM nt WHERE n <> 'NaN';

-- text: dictionary (few values), plain (many; 'x' and hex digits are 17
-- distinct bytes, too many to pack), runs, empty strings
CREATE TABLE xh (k int, a text, b text, c varchar(3), d bytea);
INSERT INTO xh SELECT i, (ARRAY['red', 'green', 'blue', ''])[i % 4 + 1], 'x' || md5(i::text),
    CASE WHEN i < 500 THEN 'aaa' ELSE 'bbb' END, decode(lpad(to_hex(i % 3), 2, '0'), 'hex')
FROM generate_series(1, 1000) i;
CREATE TABLE xt (LIKE xh) USING tessera;
INSERT INTO xt SELECT * FROM xh;
SELECT tt.same_table('xh', 'xt');
SELECT attname, array_agg(DISTINCT encoding ORDER BY encoding) FROM tessera.chunks
    WHERE relation = 'xt'::regclass GROUP BY attname ORDER BY attname;

-- every codec and level round-trips
DO $$
DECLARE
    spec text;
    res text;
BEGIN
    FOREACH spec IN ARRAY ARRAY['none', 'pglz', 'lz4', 'zstd:1', 'zstd:3', 'zstd:19'] LOOP
        EXECUTE format('CREATE TABLE codec_t (LIKE xh) USING tessera WITH (tessera_compression = %L%s)',
                       split_part(spec, ':', 1),
                       CASE WHEN spec LIKE '%:%' THEN ', tessera_compression_level = ' || split_part(spec, ':', 2) ELSE '' END);
        INSERT INTO codec_t SELECT * FROM xh;
        res := tt.same_table('xh', 'codec_t');
        RAISE NOTICE '%: % codecs %', spec, res,
            (SELECT array_agg(DISTINCT codec ORDER BY codec) FROM tessera.chunks WHERE relation = 'codec_t'::regclass);
        DROP TABLE codec_t;
    END LOOP;
END $$;

-- incompressible data is stored raw rather than inflated
CREATE TABLE rnd (b bytea) USING tessera WITH (tessera_compression = 'zstd');
INSERT INTO rnd SELECT decode(string_agg(lpad(to_hex((random() * 255)::int), 2, '0'), ''), 'hex')
    FROM generate_series(1, 4000) g GROUP BY g % 40;
SELECT bool_and(stored_bytes <= encoded_bytes) AS never_inflated FROM tessera.chunks WHERE relation = 'rnd'::regclass;

-- auto: zstd only where it is at most three fifths of lz4's bytes (md5 text
-- after an 'x', not packed, which lz4 cannot compress); lz4 where zstd saves less than that over it
-- (words of skewed letters: lz4 0.8 of raw, zstd 0.65 of lz4), since lz4 decodes several times faster.
-- Row groups of 100 rows keep chunks unframed, so the choice is made on the
-- very bytes each table stores; each chunk is checked against the rule.
SELECT setseed(0.3);
CREATE TEMP TABLE words AS
    SELECT array_agg((SELECT string_agg(chr(97 + floor(26 * random() ^ 2)::int), '')
                      FROM generate_series(1, 3 + i % 6) c WHERE i >= 0)) AS w
    FROM generate_series(0, 2999) i;
CREATE TEMP TABLE wtext AS
    SELECT g, array_to_string(ARRAY(SELECT w[1 + floor(3000 * random() ^ 6)::int]
                                    FROM generate_series(1, 3 + g % 5) k WHERE g > 0), ' ') AS s,
           'x' || md5(g::text) AS h
    FROM generate_series(1, 5000) g, words;
CREATE TABLE auto_w (s text, h text) USING tessera WITH (tessera_row_group_row_limit = 100);
CREATE TABLE zstd_w (s text, h text) USING tessera
    WITH (tessera_compression = 'zstd', tessera_row_group_row_limit = 100);
CREATE TABLE lz4_w (s text, h text) USING tessera
    WITH (tessera_compression = 'lz4', tessera_row_group_row_limit = 100);
INSERT INTO auto_w SELECT s, h FROM wtext ORDER BY g;
INSERT INTO zstd_w SELECT s, h FROM wtext ORDER BY g;
INSERT INTO lz4_w SELECT s, h FROM wtext ORDER BY g;
SELECT a.attname, count(*) AS chunks, bool_and(NOT a.framed) AS unframed,
       count(*) FILTER (WHERE z.stored_bytes < 0.58 * l.stored_bytes) AS zstd_wins_big,
       count(*) FILTER (WHERE z.stored_bytes < 0.58 * l.stored_bytes AND a.codec = 'zstd') AS auto_zstd,
       count(*) FILTER (WHERE z.stored_bytes BETWEEN 0.62 * l.stored_bytes AND 0.74 * l.stored_bytes
                        AND l.codec = 'lz4') AS zstd_wins_little,
       count(*) FILTER (WHERE z.stored_bytes BETWEEN 0.62 * l.stored_bytes AND 0.74 * l.stored_bytes
                        AND l.codec = 'lz4' AND a.codec = 'lz4') AS auto_lz4
FROM tessera.chunks a
JOIN tessera.chunks z ON z.relation = 'zstd_w'::regclass AND z.attname = a.attname
     AND z.stripe_id = a.stripe_id AND z.row_group = a.row_group
JOIN tessera.chunks l ON l.relation = 'lz4_w'::regclass AND l.attname = a.attname
     AND l.stripe_id = a.stripe_id AND l.row_group = a.row_group
WHERE a.relation = 'auto_w'::regclass
GROUP BY a.attname ORDER BY a.attname;
DROP TABLE auto_w, zstd_w, lz4_w, wtext, words;

DROP TABLE ih, it, fh, ft, nh, nt, xh, xt, rnd;
