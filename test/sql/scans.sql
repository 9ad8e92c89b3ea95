-- Plain table AM scans: sequential, parallel, TID, sample, rescans,
-- joins, and ANALYZE statistics, each compared with heap.  TesseraScan is
-- off here (customscan.sql tests it), so these are the table AM's own scans.
SET tessera.enable_custom_scan = off;
CREATE TABLE sh (id int, grp int, val numeric, txt text);
INSERT INTO sh SELECT i, i % 50, (i * 37 % 1000)::numeric / 8,
    CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || (i % 300) END FROM generate_series(1, 60000) i;
CREATE TABLE st (LIKE sh) USING tessera WITH (tessera_row_group_row_limit = 1000, tessera_stripe_row_limit = 7000);
INSERT INTO st SELECT * FROM sh;
ANALYZE sh;
ANALYZE st;

SELECT tt.same_table('sh', 'st');
SELECT tt.cmp('SELECT grp, count(*), sum(val), count(txt), min(txt), max(txt) FROM {t} GROUP BY grp', 'sh', 'st');
SELECT tt.cmp_ordered('SELECT * FROM {t} ORDER BY id LIMIT 10 OFFSET 30000', 'sh', 'st');
SELECT tt.cmp('SELECT DISTINCT txt FROM {t}', 'sh', 'st');
SELECT tt.cmp('SELECT id FROM {t} WHERE txt IS NULL AND grp = 3', 'sh', 'st');

-- parallel sequential scans, with 1, 2 and 4 workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
EXPLAIN (COSTS OFF) SELECT count(*), sum(val) FROM st WHERE grp < 10;
SELECT tt.cmp('SELECT count(*), sum(val), count(txt) FROM {t} WHERE grp < 10', 'sh', 'st');
SELECT tt.cmp('SELECT grp, count(*), sum(val) FROM {t} GROUP BY grp', 'sh', 'st');
SET max_parallel_workers_per_gather = 1;
SELECT tt.cmp('SELECT * FROM {t} WHERE id % 97 = 0', 'sh', 'st');
SET max_parallel_workers_per_gather = 2;
SELECT tt.cmp('SELECT * FROM {t} WHERE id % 97 = 0', 'sh', 'st');
EXPLAIN (COSTS OFF) SELECT a.id FROM st a JOIN st b ON a.id = b.id WHERE a.grp = 1;
SELECT tt.cmp('SELECT a.id, b.txt FROM {t} a JOIN {t} b ON a.id = b.id WHERE a.grp = 1', 'sh', 'st');
-- the leader's own buffered rows are written out before workers start
BEGIN;
INSERT INTO st VALUES (-1, -1, -1, 'pending');
SELECT count(*), sum(id) FROM st WHERE grp = -1 OR txt = 'pending';
SAVEPOINT s;
INSERT INTO st VALUES (-2, -1, -1, 'pending');
SELECT count(*) FROM st WHERE txt = 'pending';
ROLLBACK TO s;
SELECT count(*) FROM st WHERE txt = 'pending';
ROLLBACK;
SELECT count(*) FROM st WHERE txt = 'pending';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- joins of every kind and rescans (nested loops, materialize)
CREATE TABLE small_h (id int, tag text);
INSERT INTO small_h SELECT i * 3, 'tag' || i FROM generate_series(1, 400) i;
CREATE TABLE small_t (LIKE small_h) USING tessera WITH (tessera_row_group_row_limit = 50);
INSERT INTO small_t SELECT * FROM small_h;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT tt.cmp('SELECT s.id, s.tag, x.grp FROM small_{t} s LEFT JOIN (SELECT * FROM s{t} WHERE id < 200) x ON x.id = s.id', 'h', 't');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SELECT tt.cmp('SELECT s.id, x.grp FROM small_{t} s RIGHT JOIN s{t} x ON x.id = s.id WHERE x.id < 500', 'h', 't');
SELECT tt.cmp('SELECT s.id, x.id FROM small_{t} s FULL JOIN (SELECT * FROM s{t} WHERE id BETWEEN 1190 AND 1210) x ON x.id = s.id', 'h', 't');
SELECT tt.cmp('SELECT * FROM small_{t} s WHERE EXISTS (SELECT 1 FROM s{t} x WHERE x.id = s.id AND x.grp = 3)', 'h', 't');
SELECT tt.cmp('SELECT * FROM small_{t} s WHERE NOT EXISTS (SELECT 1 FROM s{t} x WHERE x.id = s.id + 1)', 'h', 't');
SELECT tt.cmp('SELECT s.id, l.n FROM small_{t} s, LATERAL (SELECT count(*) AS n FROM s{t} x WHERE x.grp = s.id % 50 AND x.id < s.id) l WHERE s.id < 60', 'h', 't');

-- LIMIT stops early; a scan with nothing to return
SELECT id FROM st LIMIT 3;
SELECT count(*) FROM st WHERE false;

-- TID scans and TID range scans
SELECT ctid, id FROM st ORDER BY id LIMIT 3;
SELECT id FROM st WHERE ctid = '(0,1)';
SELECT id FROM st WHERE ctid = (SELECT ctid FROM st WHERE id = 12345);
SELECT id FROM st WHERE ctid IN (SELECT ctid FROM st WHERE id IN (5, 6000, 59999)) ORDER BY id;
SELECT id FROM st WHERE ctid = '(0,0)';
SELECT id FROM st WHERE ctid = '(4000000000,1)';
EXPLAIN (COSTS OFF) SELECT id FROM st WHERE ctid >= '(10,5)' AND ctid < '(11,2)';
SELECT count(*), min(id), max(id) FROM st WHERE ctid >= '(10,5)' AND ctid < '(11,2)';
SELECT count(*) = (SELECT count(*) FROM st WHERE ctid > '(100,0)') FROM st WHERE ctid > '(100,0)' AND ctid < '(999999,1)';
SELECT count(*) FROM st WHERE ctid <= '(0,291)';

-- TABLESAMPLE
SELECT count(*) FROM st TABLESAMPLE SYSTEM (100);
SELECT count(*) FROM st TABLESAMPLE BERNOULLI (100);
SELECT count(*) FROM st TABLESAMPLE SYSTEM (0);
SELECT count(*) BETWEEN 5000 AND 7000 AS about_ten_percent FROM st TABLESAMPLE BERNOULLI (10) REPEATABLE (42);
SELECT (SELECT array_agg(id ORDER BY id) FROM st TABLESAMPLE SYSTEM (5) REPEATABLE (7))
     = (SELECT array_agg(id ORDER BY id) FROM st TABLESAMPLE SYSTEM (5) REPEATABLE (7)) AS repeatable;

-- ANALYZE samples 30000 rows; a table that small is read whole, so the
-- statistics match heap's exactly
CREATE TABLE ah AS SELECT * FROM sh WHERE id <= 25000;
CREATE TABLE at USING tessera WITH (tessera_row_group_row_limit = 700) AS SELECT * FROM ah;
ANALYZE ah;
ANALYZE at;
SELECT reltuples FROM pg_class WHERE oid = 'at'::regclass;
SELECT tt.cmp('SELECT attname, null_frac, n_distinct, most_common_vals::text, most_common_freqs::text,
                      histogram_bounds::text, correlation
               FROM pg_stats WHERE tablename = ''a{t}''', 'h', 't');
SELECT attname, null_frac, n_distinct FROM pg_stats WHERE tablename = 'at' ORDER BY attname;
-- a larger table: row count exact, sample statistics close
SELECT reltuples FROM pg_class WHERE oid = 'st'::regclass;
SELECT attname, null_frac BETWEEN 0.10 AND 0.12 OR null_frac = 0 AS null_frac_ok, n_distinct
    FROM pg_stats WHERE tablename = 'st' ORDER BY attname;
-- estimates use them
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM at WHERE grp = 1;
SELECT (SELECT (regexp_match(plan, 'rows=(\d+)'))[1]::int FROM
        (SELECT string_agg(x, ' ') AS plan FROM (SELECT * FROM tt.explain('SELECT * FROM at WHERE grp = 1')) e(x)) p) BETWEEN 450 AND 550 AS estimate_ok;
RESET max_parallel_workers_per_gather;

-- sequential scans count in pg_stat_*_tables.seq_scan, as heap's do
-- (a plain scan, TesseraScan, TesseraAgg, each rescan)
SET max_parallel_workers_per_gather = 0;
BEGIN;
SELECT pg_stat_get_xact_numscans('at'::regclass) AS scans;
SELECT count(*) FROM at;
SELECT pg_stat_get_xact_numscans('at'::regclass) AS scans;
SELECT sum(id) FROM at WHERE grp = 1;
SELECT pg_stat_get_xact_numscans('at'::regclass) AS scans;
SELECT id FROM at WHERE id BETWEEN 10 AND 12 ORDER BY id;
SELECT pg_stat_get_xact_numscans('at'::regclass) AS scans;
SELECT (SELECT count(*) FROM at WHERE at.id = v.x) FROM (VALUES (1), (2), (3)) v(x);
SELECT pg_stat_get_xact_numscans('at'::regclass) AS scans;
COMMIT;
RESET max_parallel_workers_per_gather;

DROP TABLE sh, st, small_h, small_t, ah, at;
