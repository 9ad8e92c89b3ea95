-- Framed chunks: single values read frame by frame (index fetches, TID
-- fetches) must equal what scans decode whole, for every encoding, with
-- NULLs, wide and narrow values, fixed and variable length, and after the
-- table is rewritten.
SET client_min_messages = warning;
DROP TABLE IF EXISTS fr_t, fr_h, fr_probe;
RESET client_min_messages;

CREATE TABLE fr_t (
    id int PRIMARY KEY,
    r int,              -- random: frame of reference
    s bigint,           -- ascending with jitter: delta
    runs int,           -- runs of 37: run-length
    f8 float8,          -- bit patterns
    amount numeric(12,2),           -- decimal, 64-bit
    big numeric,                    -- decimal, 128-bit
    note text,                      -- 'x' || md5 (not packed): plain, indexed stream, zstd
    word text,                      -- 600 long distinct values: dictionary with an indexed stream
    longtxt text,                   -- up to 3,000 bytes: 4-byte headers, alignment
    nully text,                     -- mostly NULL: null bitmap
    u uuid,                         -- fixed length, by reference
    iv interval,                    -- fixed length, 16 bytes
    ts timestamptz
) USING tessera;

SELECT setseed(0.5);
INSERT INTO fr_t
SELECT i,
       (random() * 2000000000)::int - 1000000000,
       i::bigint * 1000 + (random() * 900)::int,
       i / 37,
       random() * 1e6 - 5e5,
       round((random() * 1e8)::numeric, 2),
       (random() * 1e15)::numeric * 1e20 + i,
       'x' || md5(i::text),
       'w' || (random() * 600)::int || repeat('x', 30 + (i % 7) * 3),
       CASE WHEN i % 5 = 0 THEN repeat('x' || md5(i::text), 1 + (i % 90)) ELSE left('x' || md5(i::text), i % 30) END,
       CASE WHEN i % 97 = 0 THEN 'n' || i END,
       md5(i::text || 'u')::uuid,
       make_interval(days => i % 400, secs => i % 86400),
       timestamptz '2024-01-01' + (random() * 31536000) * interval '1 second'
FROM generate_series(1, 30000) i;

CREATE TABLE fr_h (LIKE fr_t INCLUDING ALL) USING heap;
INSERT INTO fr_h SELECT * FROM fr_t;

-- the big chunks are framed; the md5, word and long text streams too
SELECT attname, bool_and(framed) AS framed
FROM tessera.chunks WHERE relation = 'fr_t'::regclass
  AND attname IN ('r', 'note', 'word', 'longtxt', 'amount', 'big', 'u', 'iv', 'ts')
GROUP BY attname ORDER BY attname;
SELECT count(*) > 0 AS has_unframed FROM tessera.chunks
WHERE relation = 'fr_t'::regclass AND NOT framed;
SELECT array_agg(DISTINCT encoding ORDER BY encoding) FROM tessera.chunks
WHERE relation = 'fr_t'::regclass;

-- probes in random order: one value at a time, never a whole row group
SELECT setseed(0.25);
CREATE TABLE fr_probe AS SELECT (1 + floor(random() * 30000))::int AS id
FROM generate_series(1, 4000);

SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 0;

SELECT * FROM tt.plan('SELECT t.* FROM fr_probe p JOIN fr_t t USING (id)');

-- every column of every probed row, against heap: no row may differ
SELECT count(*) AS differing FROM (
    (SELECT t.* FROM fr_probe p JOIN fr_t t USING (id)
     EXCEPT ALL
     SELECT h.* FROM fr_probe p JOIN fr_h h USING (id))
    UNION ALL
    (SELECT h.* FROM fr_probe p JOIN fr_h h USING (id)
     EXCEPT ALL
     SELECT t.* FROM fr_probe p JOIN fr_t t USING (id))
) d;

-- one column at a time (a fetch decodes only the columns asked for)
SELECT count(*) FILTER (WHERE t.note IS DISTINCT FROM h.note) AS note,
       count(*) FILTER (WHERE t.longtxt IS DISTINCT FROM h.longtxt) AS longtxt,
       count(*) FILTER (WHERE t.word IS DISTINCT FROM h.word) AS word,
       count(*) FILTER (WHERE t.big IS DISTINCT FROM h.big) AS big,
       count(*) FILTER (WHERE t.nully IS DISTINCT FROM h.nully) AS nully
FROM fr_probe p JOIN fr_t t USING (id) JOIN fr_h h USING (id);

-- TID fetches
SELECT count(*) AS tid_differing
FROM fr_probe p, LATERAL (SELECT ctid FROM fr_t WHERE id = p.id) c,
     LATERAL (SELECT * FROM fr_t WHERE ctid = c.ctid) t
JOIN fr_h h USING (id)
WHERE (t.*)::text IS DISTINCT FROM (h.*)::text;

-- index ranges in index order: a streak of fetches from one row group
-- reads its values singly for a while (frame by frame), then decodes the
-- columns; ranges shorter and longer than that, and one across row groups
SELECT lo, hi, (SELECT count(*) FROM (
    (SELECT * FROM fr_t WHERE id BETWEEN lo AND hi EXCEPT ALL SELECT * FROM fr_h WHERE id BETWEEN lo AND hi)
    UNION ALL
    (SELECT * FROM fr_h WHERE id BETWEEN lo AND hi EXCEPT ALL SELECT * FROM fr_t WHERE id BETWEEN lo AND hi)
) d) AS range_differing
FROM (VALUES (101, 180), (5000, 5700), (9500, 10700)) r(lo, hi) ORDER BY lo;
SELECT count(*) AS index_scans FROM tt.explain('SELECT * FROM fr_t WHERE id BETWEEN 5000 AND 5700') p
WHERE p LIKE '%Index Scan using fr_t_pkey%';
SELECT count(*) AS range_rows FROM fr_t WHERE id BETWEEN 9500 AND 10700;

-- the first and last value of each frame boundary region of the long text
SELECT count(*) AS edge_differing
FROM generate_series(1, 30000, 113) g(id)
JOIN fr_t t USING (id) JOIN fr_h h USING (id)
WHERE t.longtxt IS DISTINCT FROM h.longtxt OR t.word IS DISTINCT FROM h.word;

RESET ALL;

-- a star join keeping one row in 1,000: its batches are sparse, and the
-- columns its aggregates and expressions read are read value by value,
-- frame by frame (not decoded whole), with deleted rows among them
CREATE TABLE fr_few (id int PRIMARY KEY, tag text);
INSERT INTO fr_few SELECT id, 'g' || (id / 1000 % 3) FROM generate_series(7, 30000, 1000) id;
INSERT INTO fr_few VALUES (40000, 'none'), (-1, 'none');
DELETE FROM fr_t WHERE id % 91 = 0;
DELETE FROM fr_h WHERE id % 91 = 0;
ANALYZE fr_few, fr_t, fr_h;
-- (not the index probes the planner prefers for so few rows)
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS star_plans FROM tt.explain(
    'SELECT count(*), sum(length(t.note)) FROM fr_t t JOIN fr_few f USING (id)') p
WHERE p LIKE '%Star Join%';
SELECT q, tt.cmp(q, 'fr_h', 'fr_t') FROM (VALUES
    ('SELECT count(*), sum(length(t.note)), sum(t.amount), sum(t.big), avg(t.r), min(t.word), max(t.longtxt), count(t.nully), min(t.ts), max(t.s) FROM {t} t JOIN fr_few f USING (id)'),
    ('SELECT f.tag, upper(t.word), count(*), sum(t.amount + 1), max(t.iv) FROM {t} t JOIN fr_few f USING (id) GROUP BY 1, 2'),
    ('SELECT f.tag, sum(length(t.longtxt)), min(t.note), avg(t.f8)::numeric(20,6) FROM {t} t JOIN fr_few f USING (id) WHERE t.runs > 100 GROUP BY 1'),
    ('SELECT t.id, t.note, t.amount, t.u FROM {t} t JOIN fr_few f USING (id) ORDER BY t.id LIMIT 5')
) v(q);
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT tt.cmp('SELECT f.tag, count(*), sum(length(t.note)), sum(t.amount), max(t.longtxt) FROM {t} t JOIN fr_few f USING (id) GROUP BY 1',
              'fr_h', 'fr_t') AS parallel_sparse_star;
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost;
RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
-- ... and it decompresses a fraction of what a scan of the column does
CREATE FUNCTION pg_temp.decompressed_kb(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    line text;
    total bigint;   -- NULL: no TesseraAgg or TesseraScan in the plan
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Bytes Decompressed:' THEN
            total := coalesce(total, 0) + substring(line FROM 'Bytes Decompressed: (\d+)')::bigint;
        END IF;
    END LOOP;
    RETURN total;
END $$;
SET max_parallel_workers_per_gather = 0;
SELECT pg_temp.decompressed_kb('SELECT sum(length(t.note)) FROM fr_t t JOIN fr_few f USING (id)') * 2
     < pg_temp.decompressed_kb('SELECT sum(length(note)) FROM fr_t') AS sparse_reads_fewer_frames;
RESET ALL;
DROP TABLE fr_few;

-- a rewrite (VACUUM FULL) writes framed chunks again; fetches still agree
VACUUM FULL fr_t;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS differing_after_rewrite
FROM fr_probe p JOIN fr_t t USING (id) JOIN fr_h h USING (id)
WHERE (t.*)::text IS DISTINCT FROM (h.*)::text;
RESET ALL;

-- scans decode framed chunks whole
SELECT count(*) AS scan_differing FROM (
    (SELECT * FROM fr_t EXCEPT ALL SELECT * FROM fr_h)
    UNION ALL
    (SELECT * FROM fr_h EXCEPT ALL SELECT * FROM fr_t)
) d;
SELECT sum(amount) = (SELECT sum(amount) FROM fr_h) AS sums_equal,
       max(note) = (SELECT max(note) FROM fr_h) AS max_equal
FROM fr_t;

-- verify reads every frame
SELECT count(*) AS problems FROM tessera.verify('fr_t');

DROP TABLE fr_t, fr_h, fr_probe;
