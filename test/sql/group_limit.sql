-- GROUP BY … LIMIT n [OFFSET m] with no ORDER BY returns any n (+ m) of the
-- groups, each with its aggregates over all its rows: TesseraAgg makes only
-- that many groups and leaves out the rows of other keys (Group Limit).
-- Which groups is free, so each answer is checked against heap's groups:
-- as many rows as LIMIT/OFFSET leave of heap's groups, each one of them
-- exactly (keys and aggregates), none twice.  Keys of every kind (integers,
-- text plain and dictionary-encoded, NULLs, computed, carried), filters,
-- deleted rows, a spill that starts before the limit is reached.
CREATE TABLE gl_h (
    i int, a int, b bigint, s text, d text, c char(4), ts timestamp, v int, n numeric(10,2));
INSERT INTO gl_h
SELECT i,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 300 END,
       (i::bigint * 2654435761) % 5003,
       CASE WHEN i % 11 = 0 THEN NULL WHEN i % 3 = 0 THEN ''
            ELSE 'phrase ' || ((i * 31) % 700) || repeat('x', i % 40) END,
       -- the first half's row groups hold 6 values (a dictionary), the
       -- second's thousands (plain)
       CASE WHEN i <= 30000 THEN 'd' || (i % 6) ELSE 'd' || (i % 4000) END,
       'c' || (i % 50),
       '2024-01-01'::timestamp + ((i * 37) % 50000) * interval '1 minute',
       i % 1000,
       ((i * 13) % 10000) / 100.0
FROM generate_series(1, 60000) i;
CREATE TABLE gl_t (LIKE gl_h) USING tessera
    WITH (tessera_row_group_row_limit = 3000, tessera_stripe_row_limit = 12000);
INSERT INTO gl_t SELECT * FROM gl_h;
DELETE FROM gl_h WHERE i % 97 = 0;
DELETE FROM gl_t WHERE i % 97 = 0;
ALTER TABLE gl_h ADD PRIMARY KEY (i);
ALTER TABLE gl_t ADD PRIMARY KEY (i);
ANALYZE gl_h;
ANALYZE gl_t;

-- tt.some_groups(grouped query, limit, offset): the query with LIMIT and
-- OFFSET over tessera, against the query's every group over heap
CREATE FUNCTION tt.some_groups(q text, lim int, off int DEFAULT 0) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    qh text := replace(q, '{t}', 'gl_h');
    qt text := format('%s LIMIT %s OFFSET %s', replace(q, '{t}', 'gl_t'), lim, off);
    nh bigint;
    nt bigint;
    extra bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (%s) q', qh) INTO nh;
    EXECUTE format('SELECT count(*) FROM (%s) q', qt) INTO nt;
    EXECUTE format($f$SELECT count(*) FROM
        (SELECT row_to_json(tt_b)::text FROM (%2$s) tt_b
         EXCEPT ALL SELECT row_to_json(tt_a)::text FROM (%1$s) tt_a) d$f$, qh, qt) INTO extra;
    IF nt = greatest(least(lim, nh - off), 0) AND extra = 0 THEN
        RETURN format('right (%s of %s groups)', nt, nh);
    END IF;
    RETURN format('WRONG: %s rows of %s groups, %s not heap''s', nt, nh, extra);
END $$;

EXPLAIN (COSTS OFF) SELECT a, s, count(*) FROM gl_t GROUP BY a, s LIMIT 10;
-- not with ORDER BY (top-N of groups or a sort), HAVING or count(DISTINCT)
SELECT count(*) AS group_limits FROM tt.explain('(COSTS OFF) SELECT a, count(*) FROM gl_t GROUP BY a ORDER BY a LIMIT 10') l
    WHERE l LIKE '%Group Limit%';
SELECT count(*) AS group_limits FROM tt.explain('(COSTS OFF) SELECT a, count(*) FROM gl_t GROUP BY a HAVING count(*) > 1 LIMIT 10') l
    WHERE l LIKE '%Group Limit%';
SELECT count(*) AS group_limits FROM tt.explain('(COSTS OFF) SELECT a, count(DISTINCT b) FROM gl_t GROUP BY a LIMIT 10') l
    WHERE l LIKE '%Group Limit%';

SELECT q, lim, off, tt.some_groups(q, lim, off) FROM (VALUES
    ('SELECT a, s, count(*) FROM {t} GROUP BY a, s', 10, 0),
    ('SELECT b, s, count(*), sum(v), min(ts) FROM {t} GROUP BY b, s', 10, 0),
    ('SELECT a, count(*), sum(n), avg(v), max(s) FROM {t} GROUP BY a', 7, 0),
    ('SELECT a, count(*) FROM {t} GROUP BY a', 5, 3),
    ('SELECT a, count(*) FROM {t} GROUP BY a', 1000, 0),
    ('SELECT a, count(*) FROM {t} GROUP BY a', 10, 295),
    ('SELECT s, count(*) FROM {t} GROUP BY s', 12, 0),
    ('SELECT d, count(*), sum(v) FROM {t} GROUP BY d', 3, 0),
    ('SELECT d, a, count(*) FROM {t} GROUP BY d, a', 20, 0),
    ('SELECT c, d, count(*) FROM {t} GROUP BY c, d', 25, 0),
    ('SELECT b, a, count(*) FROM {t} WHERE v < 500 AND s <> '''' GROUP BY b, a', 15, 0),
    ('SELECT a, extract(minute FROM ts) AS m, s, count(*) FROM {t} GROUP BY a, m, s', 10, 0),
    ('SELECT v - 1 AS w, length(s), count(*) FROM {t} GROUP BY w, length(s)', 8, 0),
    ('SELECT i, a, count(*) FROM {t} GROUP BY i, a', 10, 0),
    ('SELECT b, count(*) FROM {t} GROUP BY b', 1500, 0),
    ('SELECT b, s, count(*) FROM {t} GROUP BY b, s', 3000, 10),
    ('SELECT a, count(*) FROM {t} WHERE a IS NULL OR a < 3 GROUP BY a', 2, 0)
) v(q, lim, off);

-- the groups made first, each complete: a key met again after the table
-- is full is counted, one met first after it is not
SELECT * FROM tt.explain_analyze('SELECT a, s, count(*) FROM gl_t GROUP BY a, s LIMIT 10');

-- in a subquery, and as a prepared statement's generic plan (a parameter
-- as the LIMIT: no group limit)
SELECT count(*), sum(c) > 0 AS counted FROM (SELECT a, count(*) AS c FROM gl_t GROUP BY a LIMIT 4) x;
PREPARE gl_p(bigint) AS SELECT a, count(*) FROM gl_t GROUP BY a LIMIT $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE gl_p(5);
RESET plan_cache_mode;
DEALLOCATE gl_p;

-- past hash_mem before the limit: the groups spill and no row is left out
SET work_mem = '64kB';
SELECT tt.some_groups('SELECT b, s, count(*), sum(v) FROM {t} GROUP BY b, s', 4000);
RESET work_mem;

-- parallel plans merge or slice the groups and have no limit; the serial
-- node's is cheaper than either
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET tessera.limit_workers_to_cores = off;
EXPLAIN (COSTS OFF) SELECT b, s, count(*) FROM gl_t GROUP BY b, s LIMIT 10;
EXPLAIN (COSTS OFF) SELECT b, s, count(*) FROM gl_t GROUP BY b, s LIMIT 10 OFFSET 40000;
SELECT tt.some_groups('SELECT b, s, count(*) FROM {t} GROUP BY b, s', 10, 40000);
SELECT tt.some_groups('SELECT b, count(*), sum(n) FROM {t} GROUP BY b', 500, 20);
RESET tessera.limit_workers_to_cores;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- rows of this transaction
BEGIN;
INSERT INTO gl_h SELECT -i, 1, 1, 'own', 'd1', 'c1', '2024-01-01', 1, 1 FROM generate_series(1, 500) i;
INSERT INTO gl_t SELECT -i, 1, 1, 'own', 'd1', 'c1', '2024-01-01', 1, 1 FROM generate_series(1, 500) i;
UPDATE gl_h SET a = 1 WHERE i % 5 = 0;
UPDATE gl_t SET a = 1 WHERE i % 5 = 0;
SELECT tt.some_groups('SELECT a, s, count(*) FROM {t} GROUP BY a, s', 10);
SELECT tt.some_groups('SELECT a, count(*), sum(v) FROM {t} GROUP BY a', 3);
ROLLBACK;

DROP FUNCTION tt.some_groups(text, int, int);
DROP TABLE gl_h, gl_t;
