-- Writes of every kind and plain reads, compared with heap.
SET tessera.row_group_row_limit = 1000;
SET tessera.stripe_row_limit = 5000;

CREATE TABLE h (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp);
CREATE TABLE t (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 't'::regclass;

-- single-row and multi-row INSERT
INSERT INTO h VALUES (1, 'a', 1, 1.5, '2024-01-01');
INSERT INTO t VALUES (1, 'a', 1, 1.5, '2024-01-01');
INSERT INTO h VALUES (2, NULL, NULL, NULL, NULL), (3, '', -3, -0.001, 'infinity'), (4, 'x', 4, 'NaN', '-infinity');
INSERT INTO t VALUES (2, NULL, NULL, NULL, NULL), (3, '', -3, -0.001, 'infinity'), (4, 'x', 4, 'NaN', '-infinity');
SELECT * FROM t ORDER BY c1;
SELECT tt.same_table('h', 't');

-- INSERT ... SELECT, spanning several row groups and stripes
INSERT INTO h SELECT i, 'single-value', i % 1000, (i % 100000)::numeric / 7,
    timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(5, 23456) i;
INSERT INTO t SELECT i, 'single-value', i % 1000, (i % 100000)::numeric / 7,
    timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(5, 23456) i;
SELECT tt.same_table('h', 't');
SELECT count(*), count(c2), sum(c1), sum(c3), avg(c4), min(c5), max(c5) FROM t;
SELECT tt.cmp('SELECT count(*), count(c2), sum(c1), sum(c3), avg(c4), min(c5), max(c5) FROM {t}', 'h', 't');
SELECT tt.cmp('SELECT c3, count(*), avg(c4) FROM {t} GROUP BY c3', 'h', 't');
SELECT tt.cmp('SELECT count(*) FROM {t} WHERE c1 BETWEEN 1000 AND 1100', 'h', 't');
SELECT tt.cmp('SELECT count(*) FROM {t} a JOIN {t} b ON a.c1 = b.c1 WHERE a.c3 < 10', 'h', 't');
SELECT tt.cmp_ordered('SELECT * FROM {t} ORDER BY c1 DESC LIMIT 20', 'h', 't');
SELECT count(*) FROM tessera.stripes WHERE relation = 't'::regclass;

-- COPY FROM (multi-insert path) and COPY TO
COPY h FROM stdin;
100000	copy one	1	1.25	2020-02-29 12:00:00
100001	\N	2	\N	\N
100002	tab\there	3	3	1999-12-31 23:59:59.999999
\.
COPY t FROM stdin;
100000	copy one	1	1.25	2020-02-29 12:00:00
100001	\N	2	\N	\N
100002	tab\there	3	3	1999-12-31 23:59:59.999999
\.
SELECT tt.same_table('h', 't');
COPY (SELECT * FROM t WHERE c1 >= 100000 ORDER BY c1) TO stdout;
COPY (SELECT c1, c4 FROM t ORDER BY c1 LIMIT 3) TO stdout WITH (FORMAT csv, HEADER);

-- a larger COPY goes through multi_insert in batches
CREATE TEMP TABLE src AS SELECT i AS c1, md5(i::text) AS c2, i % 7 AS c3,
    i::numeric / 3 AS c4, timestamp '2000-01-01' + i * interval '1 minute' AS c5
    FROM generate_series(1, 12000) i;
COPY src TO '/tmp/tessera_basic_copy.data';
COPY h FROM '/tmp/tessera_basic_copy.data';
COPY t FROM '/tmp/tessera_basic_copy.data';
SELECT tt.same_table('h', 't');

-- RETURNING and ctid of inserted rows
INSERT INTO t VALUES (200000, 'returning', 0, 0, now()) RETURNING c1, c2, ctid IS NOT NULL AS has_ctid;
INSERT INTO h VALUES (200000, 'returning', 0, 0, now());
SELECT tt.cmp('SELECT c1, c2, c3, c4 FROM {t}', 'h', 't');

-- a table read back in one transaction sees its own rows
BEGIN;
INSERT INTO t SELECT -i, 'own', -i, -i, NULL FROM generate_series(1, 3) i;
SELECT c1, c2 FROM t WHERE c1 < 0 ORDER BY c1;
ROLLBACK;
SELECT count(*) FROM t WHERE c1 < 0;

-- one-column table and a table with no columns
CREATE TABLE one (x int) USING tessera;
INSERT INTO one SELECT generate_series(1, 2500);
SELECT count(*), sum(x), min(x), max(x) FROM one;
CREATE TABLE nocols () USING tessera;
INSERT INTO nocols SELECT FROM generate_series(1, 5);
SELECT count(*) FROM nocols;

-- default_table_access_method
SET default_table_access_method = tessera;
CREATE TABLE dflt (a int);
RESET default_table_access_method;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'dflt'::regclass;

-- triggers: AFTER ROW triggers fetch the inserted row by TID
CREATE TABLE trig_log (op text, val int);
CREATE FUNCTION trig_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO trig_log VALUES (TG_WHEN || ' ' || TG_OP, NEW.x); RETURN NEW; END $$;
CREATE TABLE trg (x int) USING tessera;
CREATE TRIGGER b BEFORE INSERT ON trg FOR EACH ROW EXECUTE FUNCTION trig_fn();
CREATE TRIGGER a AFTER INSERT ON trg FOR EACH ROW EXECUTE FUNCTION trig_fn();
INSERT INTO trg SELECT generate_series(1, 3);
SELECT * FROM trig_log ORDER BY op, val;
CREATE FUNCTION trig_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO trig_log SELECT 'transition', sum(x) FROM newrows; RETURN NULL; END $$;
CREATE TRIGGER s AFTER INSERT ON trg REFERENCING NEW TABLE AS newrows
    FOR EACH STATEMENT EXECUTE FUNCTION trig_stmt();
INSERT INTO trg SELECT generate_series(10, 12);
SELECT * FROM trig_log WHERE op = 'transition';
SELECT sum(x) FROM trg;

DROP TABLE h, t, one, nocols, dflt, trg, trig_log;
