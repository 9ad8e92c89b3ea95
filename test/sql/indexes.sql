-- Indexes and constraints on tessera tables, compared with heap.
SET tessera.row_group_row_limit = 1000;
CREATE TABLE ih (id int, k text, j jsonb, r int4range, p point, t tsvector, arr int[]);
INSERT INTO ih SELECT i, 'k' || (i % 500), jsonb_build_object('a', i % 10, 'b', i),
    int4range(i, i + 10), point(i % 100, i / 100), to_tsvector('simple', 'word' || (i % 50) || ' other'),
    ARRAY[i % 5, i % 7]
FROM generate_series(1, 20000) i;
CREATE TABLE it (LIKE ih) USING tessera;
INSERT INTO it SELECT * FROM ih;

CREATE UNIQUE INDEX it_id ON it (id);
CREATE INDEX it_k ON it USING hash (k);
CREATE INDEX it_j ON it USING gin (j);
CREATE INDEX it_t ON it USING gin (t);
CREATE INDEX it_arr ON it USING gin (arr);
CREATE INDEX it_r ON it USING gist (r);
CREATE INDEX it_p ON it USING spgist (p);
CREATE INDEX it_expr ON it ((id % 100), lower(k)) WHERE id > 1000;
CREATE INDEX it_multi ON it (k, id DESC);
CREATE UNIQUE INDEX ih_id ON ih (id);
CREATE INDEX ih_k ON ih USING hash (k);
CREATE INDEX ih_j ON ih USING gin (j);
CREATE INDEX ih_r ON ih USING gist (r);

-- each index answers as heap does, through the index
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM it WHERE id = 777;
SELECT tt.cmp('SELECT * FROM {t} WHERE id = 777', 'ih', 'it');
SELECT tt.cmp('SELECT * FROM {t} WHERE id BETWEEN 100 AND 250', 'ih', 'it');
SELECT tt.cmp_ordered('SELECT id FROM {t} WHERE id > 19990 ORDER BY id DESC', 'ih', 'it');
EXPLAIN (COSTS OFF) SELECT id FROM it WHERE k = 'k42';
SELECT tt.cmp('SELECT id FROM {t} WHERE k = ''k42''', 'ih', 'it');
EXPLAIN (COSTS OFF) SELECT id FROM it WHERE (id % 100) = 7 AND lower(k) = 'k7' AND id > 1000;
SELECT tt.cmp('SELECT id FROM {t} WHERE (id % 100) = 7 AND lower(k) = ''k7'' AND id > 1000', 'ih', 'it');
-- index-only scans fall back to fetching rows, still right
EXPLAIN (COSTS OFF) SELECT id FROM it WHERE id < 50;
SELECT tt.cmp('SELECT id FROM {t} WHERE id < 50', 'ih', 'it');
RESET enable_bitmapscan;
SELECT tt.cmp('SELECT id FROM {t} WHERE j @> ''{"a": 3}''', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE t @@ to_tsquery(''simple'', ''word7'')', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE arr @> ARRAY[3, 4]', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE r @> 15000', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE p <@ box(point(10, 10), point(12, 50))', 'ih', 'it');
EXPLAIN (COSTS OFF) SELECT id FROM it WHERE p <@ box(point(10, 10), point(12, 50));
SELECT tt.cmp_ordered('SELECT id FROM {t} ORDER BY p <-> point(50, 50), id LIMIT 5', 'ih', 'it');
RESET enable_seqscan;

-- indexes follow updates and deletes
UPDATE it SET k = 'moved', id = id + 100000 WHERE id % 1000 = 0;
UPDATE ih SET k = 'moved', id = id + 100000 WHERE id % 1000 = 0;
DELETE FROM it WHERE id % 3 = 0;
DELETE FROM ih WHERE id % 3 = 0;
SET enable_seqscan = off;
SELECT tt.cmp('SELECT * FROM {t} WHERE id > 100000', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE k = ''moved''', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE id BETWEEN 1 AND 3000', 'ih', 'it');
SELECT tt.cmp('SELECT id FROM {t} WHERE j @> ''{"a": 3}''', 'ih', 'it');
RESET enable_seqscan;

-- unique and primary key constraints
INSERT INTO it (id) VALUES (1);
INSERT INTO it (id) VALUES (3);
UPDATE it SET id = 2 WHERE id = 1;
ALTER TABLE it ADD CONSTRAINT it_pk PRIMARY KEY USING INDEX it_id;
INSERT INTO it (id) VALUES (NULL);
BEGIN;
INSERT INTO it (id) VALUES (999999);
INSERT INTO it (id) VALUES (999999);
ROLLBACK;
INSERT INTO it (id) VALUES (999999);
SELECT count(*) FROM it WHERE id = 999999;
-- deferrable unique constraint
CREATE TABLE du (a int UNIQUE DEFERRABLE INITIALLY DEFERRED) USING tessera;
INSERT INTO du VALUES (1), (2);
BEGIN;
UPDATE du SET a = a + 1;
COMMIT;
SELECT * FROM du ORDER BY a;
BEGIN;
INSERT INTO du VALUES (3);
COMMIT;

-- ON CONFLICT
CREATE TABLE oc_h (id int PRIMARY KEY, n int, note text);
CREATE TABLE oc_t (id int PRIMARY KEY, n int, note text) USING tessera;
INSERT INTO oc_h SELECT i, 0, 'init' FROM generate_series(1, 100) i;
INSERT INTO oc_t SELECT i, 0, 'init' FROM generate_series(1, 100) i;
INSERT INTO oc_h SELECT i % 150, 1, 'upsert' FROM generate_series(50, 200) i
    ON CONFLICT (id) DO UPDATE SET n = oc_h.n + excluded.n, note = excluded.note WHERE oc_h.id % 2 = 0;
INSERT INTO oc_t SELECT i % 150, 1, 'upsert' FROM generate_series(50, 200) i
    ON CONFLICT (id) DO UPDATE SET n = oc_t.n + excluded.n, note = excluded.note WHERE oc_t.id % 2 = 0;
SELECT tt.same_table('oc_h', 'oc_t');
INSERT INTO oc_h SELECT i, 1, 'upsert' FROM generate_series(50, 140) i
    ON CONFLICT (id) DO UPDATE SET n = oc_h.n + excluded.n, note = excluded.note WHERE oc_h.id % 2 = 0;
INSERT INTO oc_t SELECT i, 1, 'upsert' FROM generate_series(50, 140) i
    ON CONFLICT (id) DO UPDATE SET n = oc_t.n + excluded.n, note = excluded.note WHERE oc_t.id % 2 = 0;
SELECT tt.same_table('oc_h', 'oc_t');
INSERT INTO oc_t VALUES (1, 5, 'x'), (1000, 5, 'x') ON CONFLICT DO NOTHING;
INSERT INTO oc_h VALUES (1, 5, 'x'), (1000, 5, 'x') ON CONFLICT DO NOTHING;
SELECT tt.same_table('oc_h', 'oc_t');
INSERT INTO oc_t VALUES (2, 1, 'a'), (2, 2, 'b') ON CONFLICT (id) DO UPDATE SET n = excluded.n;
INSERT INTO oc_t VALUES (2000, 1, 'a') ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING *;
INSERT INTO oc_t VALUES (2000, 7, 'a') ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING *;

-- foreign keys in both directions
CREATE TABLE parent_t (id int PRIMARY KEY, name text) USING tessera;
CREATE TABLE child_t (id int, parent_id int REFERENCES parent_t ON DELETE CASCADE ON UPDATE CASCADE) USING tessera;
CREATE TABLE child_h (id int, parent_id int REFERENCES parent_t ON DELETE SET NULL);
INSERT INTO parent_t SELECT i, 'p' || i FROM generate_series(1, 10) i;
INSERT INTO child_t SELECT i, i % 10 + 1 FROM generate_series(1, 50) i;
INSERT INTO child_h SELECT i, i % 10 + 1 FROM generate_series(1, 50) i;
INSERT INTO child_t VALUES (99, 42);
DELETE FROM parent_t WHERE id = 3;
SELECT count(*) FROM child_t WHERE parent_id = 3;
SELECT count(*) FROM child_h WHERE parent_id IS NULL;
UPDATE parent_t SET id = 100 WHERE id = 4;
SELECT count(*) FROM child_t WHERE parent_id = 100;
UPDATE parent_t SET name = 'renamed' WHERE id = 5;
DELETE FROM child_h WHERE parent_id = 6;
ALTER TABLE child_h DROP CONSTRAINT child_h_parent_id_fkey;
DELETE FROM parent_t WHERE id = 6;
CREATE TABLE parent_h (id int PRIMARY KEY);
INSERT INTO parent_h SELECT generate_series(1, 5);
CREATE TABLE child2_t (pid int REFERENCES parent_h) USING tessera;
INSERT INTO child2_t VALUES (1), (2);
INSERT INTO child2_t VALUES (9);
DELETE FROM parent_h WHERE id = 1;

-- exclusion constraint
CREATE TABLE booking (room int, during int4range, EXCLUDE USING gist (during WITH &&)) USING tessera;
INSERT INTO booking VALUES (1, '[1,5)'), (2, '[5,9)');
INSERT INTO booking VALUES (3, '[4,6)');
SELECT count(*) FROM booking;

-- REINDEX, CREATE INDEX CONCURRENTLY
REINDEX TABLE it;
CREATE INDEX CONCURRENTLY it_conc ON it (k);
REINDEX INDEX CONCURRENTLY it_conc;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'it_conc'::regclass;
SET enable_seqscan = off;
SELECT tt.cmp('SELECT id FROM {t} WHERE k = ''k42''', 'ih', 'it');
RESET enable_seqscan;

-- BRIN: ranges of TID blocks up to the blocks the row numbers span (far
-- more than the compressed pages), summarized at build, on insert, by
-- brin_summarize_new_values and VACUUM; bitmap scans find every row
CREATE TABLE br_t (a int, b text, ts timestamp) USING tessera;
CREATE TABLE br_h (a int, b text, ts timestamp);
INSERT INTO br_t SELECT g, 'b' || g % 97, timestamp '2024-01-01' + g * interval '1 minute'
FROM generate_series(1, 50000) g;
INSERT INTO br_h SELECT * FROM br_t;
SELECT pg_relation_size('br_t') < 50000 / 291 * 8192 AS fewer_pages_than_tid_blocks;
CREATE INDEX br_t_a ON br_t USING brin (a) WITH (pages_per_range = 4);
CREATE INDEX br_t_ts ON br_t USING brin (ts timestamp_minmax_multi_ops) WITH (pages_per_range = 8);
CREATE INDEX br_h_a ON br_h USING brin (a) WITH (pages_per_range = 4);
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM br_t WHERE a BETWEEN 30000 AND 30100;
SELECT tt.cmp('SELECT a, b FROM {t} WHERE a BETWEEN 30000 AND 30100', 'br_h', 'br_t');
SELECT tt.cmp('SELECT a FROM {t} WHERE a > 49900 OR a < 20', 'br_h', 'br_t');
SELECT tt.cmp('SELECT a FROM {t} WHERE ts BETWEEN ''2024-01-10'' AND ''2024-01-10 02:00''', 'br_h', 'br_t');
-- rows added later: an unsummarized range is scanned whole, then summarized
INSERT INTO br_t SELECT g, 'late', NULL FROM generate_series(50001, 52000) g;
INSERT INTO br_h SELECT g, 'late', NULL FROM generate_series(50001, 52000) g;
SELECT tt.cmp('SELECT a FROM {t} WHERE a BETWEEN 50990 AND 51010', 'br_h', 'br_t');
SELECT brin_summarize_new_values('br_t_a') >= 0 AS summarized;
SELECT tt.cmp('SELECT a FROM {t} WHERE a BETWEEN 50990 AND 51010', 'br_h', 'br_t');
-- deletes and updates, then VACUUM
DELETE FROM br_t WHERE a % 3 = 0 AND a > 40000;
DELETE FROM br_h WHERE a % 3 = 0 AND a > 40000;
UPDATE br_t SET a = -a WHERE a BETWEEN 45000 AND 45010;
UPDATE br_h SET a = -a WHERE a BETWEEN 45000 AND 45010;
VACUUM br_t;
VACUUM br_h;
SELECT tt.cmp('SELECT a FROM {t} WHERE a BETWEEN 44990 AND 45020 OR a BETWEEN -45020 AND -44990', 'br_h', 'br_t');
SELECT brin_desummarize_range('br_t_a', 0);
SELECT brin_summarize_range('br_t_a', 0) >= 0 AS resummarized;
SELECT tt.cmp('SELECT a FROM {t} WHERE a < 100', 'br_h', 'br_t');
RESET enable_seqscan;
RESET enable_indexscan;
DROP TABLE br_t, br_h;


-- CLUSTER: rewrites in index order, by sort or by index scan
CREATE TABLE cl_t (a int, b text, d int) USING tessera;
CREATE TABLE cl_h (a int, b text, d int);
INSERT INTO cl_t SELECT (g * 7919) % 10007, 'v' || g, g FROM generate_series(1, 10007) g;
INSERT INTO cl_h SELECT * FROM cl_t;
ALTER TABLE cl_t DROP COLUMN d;
ALTER TABLE cl_h DROP COLUMN d;
CREATE INDEX cl_t_a ON cl_t (a);
CREATE INDEX cl_h_a ON cl_h (a);
DELETE FROM cl_t WHERE a % 3 = 0;
DELETE FROM cl_h WHERE a % 3 = 0;
SET enable_indexscan = off;         -- CLUSTER sorts
CLUSTER cl_t USING cl_t_a;
CLUSTER cl_h USING cl_h_a;
RESET enable_indexscan;
SELECT tt.cmp_ordered('SELECT a, b FROM {t}', 'cl_h', 'cl_t');
SELECT min(ctid), max(ctid) FROM cl_t;
UPDATE cl_t SET a = -a WHERE a < 5000;
UPDATE cl_h SET a = -a WHERE a < 5000;
SET enable_seqscan = off;           -- CLUSTER scans the index
SET enable_bitmapscan = off;
CLUSTER cl_t;
CLUSTER cl_h;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT tt.cmp_ordered('SELECT a, b FROM {t}', 'cl_h', 'cl_t');
SET enable_seqscan = off;
SELECT tt.cmp('SELECT a, b FROM {t} WHERE a BETWEEN -100 AND 100', 'cl_h', 'cl_t');
RESET enable_seqscan;
DROP TABLE cl_t, cl_h;


-- entries left by rolled-back inserts and updates are dead to everyone:
-- unique checks skip them, the same keys insert again, scans agree with heap
CREATE TABLE rb_t (k int PRIMARY KEY, v int) USING tessera;
CREATE TABLE rb_h (k int PRIMARY KEY, v int);
INSERT INTO rb_t SELECT g, g FROM generate_series(1, 3000) g;
INSERT INTO rb_h SELECT g, g FROM generate_series(1, 3000) g;
BEGIN; UPDATE rb_t SET v = -v WHERE k <= 2000; ROLLBACK;
BEGIN; UPDATE rb_t SET v = -v WHERE k <= 2000; ROLLBACK;
BEGIN; INSERT INTO rb_t SELECT g, 0 FROM generate_series(3001, 4000) g; ROLLBACK;
BEGIN; INSERT INTO rb_t SELECT g, 0 FROM generate_series(3001, 4000) g; SAVEPOINT s;
  INSERT INTO rb_t VALUES (5000, 0); ROLLBACK TO s; COMMIT;
INSERT INTO rb_h SELECT g, 0 FROM generate_series(3001, 4000) g;
INSERT INTO rb_t VALUES (5000, 1);
INSERT INTO rb_h VALUES (5000, 1);
INSERT INTO rb_t VALUES (10, 0);             -- still a duplicate
UPDATE rb_t SET v = v + 1 WHERE k <= 2000;
UPDATE rb_h SET v = v + 1 WHERE k <= 2000;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT tt.cmp('SELECT k, v FROM {t} WHERE k BETWEEN 1 AND 6000', 'rb_h', 'rb_t');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT tt.same_table('rb_h', 'rb_t');
DROP TABLE rb_t, rb_h;

-- single-row fetches from long chunks with many NULLs (a value's rank
-- among the non-NULL ones comes from a per-512-row directory): every
-- NULL pattern and block boundary, through the index, against heap
CREATE TABLE nf_h (id int PRIMARY KEY, a int, b text, c numeric);
INSERT INTO nf_h SELECT i,
    CASE WHEN i % 7 = 0 OR i BETWEEN 1000 AND 1600 THEN NULL ELSE i * 3 END,
    CASE WHEN i % 3 <> 0 THEN NULL ELSE 'b' || i END,
    CASE WHEN i > 2500 THEN NULL ELSE i / 4.0 END
    FROM generate_series(1, 6000) i;
CREATE TABLE nf_t (id int PRIMARY KEY, a int, b text, c numeric) USING tessera
    WITH (tessera_row_group_row_limit = 10000);
INSERT INTO nf_t SELECT * FROM nf_h;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT tt.cmp('SELECT id, a, b, c FROM generate_series(1, 6000, 7) g(k), LATERAL
               (SELECT * FROM {t} WHERE id = g.k) x', 'nf_h', 'nf_t');
SELECT tt.cmp('SELECT id, a, b, c FROM generate_series(6000, 1, -13) g(k), LATERAL
               (SELECT * FROM {t} WHERE id = g.k) x', 'nf_h', 'nf_t');
SELECT tt.cmp('SELECT id, a, b, c FROM {t} WHERE id IN (1, 511, 512, 513, 1023, 1024, 1025, 1601, 2500, 2501, 5999, 6000)',
              'nf_h', 'nf_t');
-- each row in a statement of its own: a lone fetch decodes single values
CREATE FUNCTION tt.fetch_each(t text, ids int[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    k int;
    r text;
    acc text := '';
BEGIN
    FOREACH k IN ARRAY ids LOOP
        EXECUTE format('SELECT x::text FROM %I x WHERE id = $1', t) INTO r USING k;
        acc := acc || coalesce(r, 'none') || ';';
    END LOOP;
    RETURN acc;
END $$;
SELECT tt.fetch_each('nf_h', a) = tt.fetch_each('nf_t', a) AS same_lone_fetches,
       length(tt.fetch_each('nf_t', a)) > 0 AS fetched
    FROM (SELECT array_agg(k ORDER BY k * 7919 % 6007) a FROM generate_series(1, 6000, 3) k) s;
DROP FUNCTION tt.fetch_each(text, int[]);
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE nf_h, nf_t;

DROP TABLE ih, it, du, oc_h, oc_t, child_t, child_h, parent_t, child2_t, parent_h, booking;
