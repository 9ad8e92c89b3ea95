-- Values from 0 bytes to 256 MB.  Row groups are capped by bytes as well
-- as rows, so no allocation nears MaxAllocSize.
CREATE TABLE lv_h (id int, v text, b bytea);
CREATE TABLE lv_t (id int, v text, b bytea) USING tessera;
INSERT INTO lv_h SELECT i, repeat('x', len), decode(repeat('ab', len / 2), 'hex')
    FROM unnest(ARRAY[0, 1, 2, 126, 127, 128, 255, 256, 8191, 8192, 100000, 2000000]) WITH ORDINALITY AS u(len, i);
INSERT INTO lv_t SELECT * FROM lv_h;
SELECT tt.cmp('SELECT id, length(v), md5(v), length(b), md5(b) FROM {t}', 'lv_h', 'lv_t');
SELECT id, length(v), length(b) FROM lv_t ORDER BY id;

-- 40 values of 5 MB: row groups close at 64 MB of raw values
CREATE TABLE lv_many (id int, v text) USING tessera;
INSERT INTO lv_many SELECT i, repeat(md5(i::text), 5 * 1024 * 1024 / 32) FROM generate_series(1, 40) i;
SELECT count(*), sum(length(v)) FROM lv_many;
SELECT count(*) > 1 AS several_row_groups, max(row_count) < 40 AS capped_by_bytes
    FROM tessera.row_groups WHERE relation = 'lv_many'::regclass;
SELECT bool_and(md5(v) = md5(repeat(md5(id::text), 5 * 1024 * 1024 / 32))) FROM lv_many;

-- one 256 MB value
CREATE TABLE lv_big (id int, v text) USING tessera;
INSERT INTO lv_big SELECT 1, repeat('tessera ', 32 * 1024 * 1024);
INSERT INTO lv_big VALUES (2, 'small after big');
SELECT id, length(v), md5(v) = md5(repeat('tessera ', 32 * 1024 * 1024)) AS intact FROM lv_big WHERE id = 1;
SELECT id, v FROM lv_big WHERE id = 2;
SELECT row_group, row_count FROM tessera.row_groups WHERE relation = 'lv_big'::regclass ORDER BY row_group;

DROP TABLE lv_h, lv_t, lv_many, lv_big;
