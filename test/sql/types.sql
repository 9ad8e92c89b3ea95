-- Every built-in type family, NULLs everywhere, edge values; compared with heap.
SET tessera.row_group_row_limit = 100;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (a int, b text);
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE DOMAIN shorttext AS text CHECK (length(VALUE) < 100);

CREATE TABLE types_h (
    id int, b bool, ch "char", i2 int2, i4 int4, i8 int8, o oid,
    f4 float4, f8 float8, n numeric, n2 numeric(12,3), m money,
    t text, vc varchar(20), bp char(5), nm name, ba bytea, tc text COLLATE "C",
    d date, tm time, tz timetz, ts timestamp, tstz timestamptz, iv interval,
    u uuid, ip inet, cid cidr, mac macaddr, mac8 macaddr8,
    pt point, ln line, ls lseg, bx box, pa path, pg polygon, ci circle,
    bt bit(5), vb varbit, tv tsvector, tq tsquery, js json, jb jsonb, x xml,
    r4 int4range, r8 int8range, rn numrange, rts tsrange, rtz tstzrange, rd daterange,
    mr int4multirange, lsn pg_lsn, tid_ tid, x8 xid8, rc regclass, rt regtype,
    ai int[], at text[], a2 int[][], an numeric[],
    e mood, cp pair, dp posint, ds shorttext
);
CREATE TABLE types_t (LIKE types_h) USING tessera;

INSERT INTO types_h VALUES
 (1, true, 'a', 1, 1, 1, 1, 1.5, 2.25, 3.14159, 12.345, 1.23, 'hello', 'vc', 'bp', 'name',
  '\x00ff10', 'C text', '2024-02-29', '12:34:56.789', '12:00+02', '2024-01-01 00:00:00.000001',
  '2024-01-01 00:00:00+00', '1 year 2 months 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05',
  '(1,2)', '{1,-1,0}', '[(0,0),(1,1)]', '(1,1),(0,0)', '[(0,0),(1,1),(2,0)]', '((0,0),(1,1),(1,0))', '<(0,0),1>',
  B'10101', B'1100101', 'a fat cat', 'fat & rat', '{"a": [1, 2.50, null]}', '{"b": {"c": true}}', '<x a="1">text</x>',
  '[1,10)', '[1,100)', '[1.5,2.5]', '[2024-01-01,2024-02-01)', '[2024-01-01 00:00+00,2024-02-01 00:00+00)', '[2024-01-01,2024-12-31]',
  '{[1,3),[5,7)}', '16/B374D848', '(1,2)', '123456789012', 'types_h', 'int4',
  '{1,2,3}', '{"a",NULL,"c d"}', '{{1,2},{3,4}}', '{1.5,NaN,-2}',
  'happy', ROW(1, 'x'), 5, 'domain text'),
 (2, false, 'z', -32768, -2147483648, -9223372036854775808, 4294967295,
  '-Infinity', 'NaN', '-0.0000000000000000000001', -999999999.999, -92233720368547758.08,
  '', '', '', '', '\x', '', '4713-01-01 BC', '00:00', '23:59:59.999999-14', '294276-12-31 23:59:59.999999',
  '-infinity', '-178000000 years', '00000000-0000-0000-0000-000000000000',
  '::1', '::/0', '00:00:00:00:00:00', 'ff:ff:ff:ff:ff:ff:ff:ff',
  '(-1e300,1e-300)', '{0,1,0}', '[(0,0),(0,0)]', '(0,0),(0,0)', '((0,0))', '((0,0))', '<(0,0),0>',
  B'00000', B'', '', 'a', '[]', '[]', '',
  'empty', '(,)', '(,)', 'empty', 'empty', '(,)',
  '{}', '0/0', '(0,0)', '0', '-', '-',
  '{}', '{}', '{}', '{}',
  'sad', ROW(NULL, NULL), 1, ''),
 (3, NULL, NULL, 32767, 2147483647, 9223372036854775807, 0,
  'Infinity', '-0', '1e1000', 0, 92233720368547758.07,
  repeat('long text ', 50), repeat('v', 20), 'abcde', repeat('n', 63), decode(repeat('ab', 300), 'hex'),
  'Ünïcödé ✓ 漢字', 'infinity', '24:00:00', '00:00:00+15:59', 'infinity', 'infinity', '178000000 years',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', '2001:db8::ff00:42:8329/128', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff', '00:00:00:00:00:00:00:00',
  '(NaN,Infinity)', '{1,0,-5}', '[(1,2),(3,4)]', '(3,4),(1,2)', '[(0,0),(1,1)]', '((0,0),(10,0),(10,10),(0,10))', '<(1,1),100>',
  B'11111', repeat('1', 200)::varbit, repeat('word ', 40)::tsvector, '!a | (b & c)', (repeat('[1,', 30) || '1' || repeat(']', 30))::json,
  ('{"k": "' || repeat('x', 300) || '"}')::jsonb, '<r/>',
  '[-2147483648,2147483647)', '(,)', '(-1e100,1e100)', '[-infinity,infinity]', '(,infinity)', '[4713-01-01 BC,)',
  '{[1,2),[3,4),[5,6)}', 'FFFFFFFF/FFFFFFFF', '(4294967295,65535)', '18446744073709551615', 'pg_class', 'text[]',
  '{-2147483648,2147483647,NULL}', ARRAY[repeat('z', 500)], '{{{1}}}', '{1e-100,1e100}',
  'ok', ROW(-1, repeat('y', 200)), 2147483647, repeat('d', 99)),
 (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- many more rows: random values with NULLs sprinkled in, several row groups
INSERT INTO types_h (id, b, i2, i4, i8, f4, f8, n, t, d, ts, tstz, iv, u, ip, ai, js, jb, e, cp, ba, nm, bp)
SELECT i,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3 = 0 END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919 % 65536 - 32768)::int2 END,
    CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 104729)::int4 END,
    CASE WHEN i % 19 = 0 THEN NULL ELSE i::int8 * 1000003 * (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END) END,
    CASE WHEN i % 23 = 0 THEN NULL ELSE (i / 7.0)::float4 END,
    CASE WHEN i % 29 = 0 THEN NULL ELSE sin(i) * 1e10 END,
    CASE WHEN i % 31 = 0 THEN NULL WHEN i % 5 = 0 THEN (i::numeric / 3)::numeric ELSE round(i::numeric * 1.01, i % 6) END,
    CASE WHEN i % 37 = 0 THEN NULL ELSE md5(i::text) || repeat('-', i % 150) END,
    CASE WHEN i % 41 = 0 THEN NULL ELSE date '2000-01-01' + i END,
    CASE WHEN i % 43 = 0 THEN NULL ELSE timestamp '2000-01-01' + i * interval '37 minutes 13.5 seconds' END,
    CASE WHEN i % 47 = 0 THEN NULL ELSE timestamptz '2000-01-01 00:00+00' + i * interval '1 hour' END,
    CASE WHEN i % 53 = 0 THEN NULL ELSE i * interval '1 day 1 second' END,
    CASE WHEN i % 59 = 0 THEN NULL ELSE md5(i::text)::uuid END,
    CASE WHEN i % 61 = 0 THEN NULL ELSE ('10.0.' || (i % 256) || '.' || (i / 256 % 256))::inet END,
    CASE WHEN i % 67 = 0 THEN NULL ELSE ARRAY[i, i + 1, NULL, i * 2] END,
    CASE WHEN i % 71 = 0 THEN NULL ELSE json_build_object('i', i, 's', md5(i::text)) END,
    CASE WHEN i % 73 = 0 THEN NULL ELSE jsonb_build_object('i', i, 'a', jsonb_build_array(i, i / 2.0)) END,
    CASE WHEN i % 79 = 0 THEN NULL ELSE (ARRAY['sad', 'ok', 'happy'])[i % 3 + 1]::mood END,
    CASE WHEN i % 83 = 0 THEN NULL ELSE ROW(i, md5(i::text))::pair END,
    CASE WHEN i % 89 = 0 THEN NULL ELSE decode(md5(i::text), 'hex') END,
    CASE WHEN i % 97 = 0 THEN NULL ELSE ('n' || i)::name END,
    CASE WHEN i % 101 = 0 THEN NULL ELSE (i % 100)::text END
FROM generate_series(5, 1500) i;

INSERT INTO types_t SELECT * FROM types_h;
SELECT tt.same_table('types_h', 'types_t');
SELECT tt.cmp('SELECT * FROM {t} WHERE id < 5', 'types_h', 'types_t');
-- every column on its own, with NULLs counted
DO $$
DECLARE
    col record;
    res text;
BEGIN
    FOR col IN SELECT attname FROM pg_attribute WHERE attrelid = 'types_h'::regclass AND attnum > 0 ORDER BY attnum
    LOOP
        res := tt.cmp(format('SELECT %I::text AS v, count(*) FROM {t} GROUP BY 1', col.attname), 'types_h', 'types_t');
        IF res NOT LIKE 'same%' THEN
            RAISE NOTICE 'column %: %', col.attname, res;
        END IF;
    END LOOP;
END $$;
-- values come back with their exact bytes
SELECT tt.cmp('SELECT id, n::text, f8::text, f4::text, t::bytea, ba, js::text, x::text, tv::text FROM {t}', 'types_h', 'types_t');
SELECT left(n::text, 30) AS n, length(n::text) AS len, n2, f4, f8 FROM types_t WHERE id <= 3 ORDER BY id;
SELECT count(*) FROM types_t WHERE n = 3.14159;
SELECT count(*) FROM types_t WHERE e = 'happy';
SELECT sum(i8), sum(i4::int8), min(ts), max(tstz), min(u::text), max(ip) FROM types_t;
SELECT tt.cmp('SELECT sum(i8), sum(i4::int8), min(ts), max(tstz), min(u::text), max(ip), sum(n), avg(f8) FROM {t}', 'types_h', 'types_t');

-- collations: text compared and sorted under the column's collation
CREATE TABLE coll_h (a text COLLATE "C", b text COLLATE "POSIX", c text);
CREATE TABLE coll_t (LIKE coll_h INCLUDING ALL) USING tessera;
INSERT INTO coll_h SELECT x, x, x FROM unnest(ARRAY['a', 'B', 'b', 'A', 'é', 'e', 'Z', '1', '', ' ']) x;
INSERT INTO coll_t SELECT * FROM coll_h;
SELECT tt.cmp_ordered('SELECT a FROM {t} ORDER BY a', 'coll_h', 'coll_t');
SELECT tt.cmp_ordered('SELECT c FROM {t} ORDER BY c', 'coll_h', 'coll_t');
SELECT min(a), max(a), min(b), max(b) FROM coll_t;

-- a table of 1600 columns
DO $$
BEGIN
    EXECUTE 'CREATE TABLE wide_h (' ||
        (SELECT string_agg(format('c%s int', i), ', ') FROM generate_series(1, 1600) i) || ')';
    EXECUTE 'CREATE TABLE wide_t (LIKE wide_h) USING tessera';
    EXECUTE 'INSERT INTO wide_h SELECT ' ||
        (SELECT string_agg(format('CASE WHEN g %% %s = 0 THEN NULL ELSE g * %s END', i % 7 + 2, i), ', ')
         FROM generate_series(1, 1600) i) || ' FROM generate_series(1, 250) g';
END $$;
INSERT INTO wide_t SELECT * FROM wide_h;
SELECT tt.same_table('wide_h', 'wide_t');
SELECT c1, c800, c1600 FROM wide_t ORDER BY c1 NULLS FIRST LIMIT 3;
SELECT count(*) FROM tessera.chunks WHERE relation = 'wide_t'::regclass;

DROP TABLE types_h, types_t, coll_h, coll_t, wide_h, wide_t;
DROP TYPE mood, pair;
DROP DOMAIN posint, shorttext;
