-- VACUUM gives deleted rows' space back: stripes mostly dead are rewritten
-- with those rows folded (listed as dead, values gone), their row states and
-- state pages are given back, stripes move down into free pages and the end
-- of the relation is truncated.  Every step is checked against a heap twin.
SET tessera.autocompact_stripes = 0;
SET client_min_messages = warning;
CREATE TABLE rt (id int PRIMARY KEY, grp int, name text, amount numeric(12,2), ts timestamp)
    USING tessera WITH (tessera.stripe_row_limit = 20000, tessera.row_group_row_limit = 5000,
                        autovacuum_enabled = off);
CREATE TABLE rh (LIKE rt INCLUDING ALL) USING heap WITH (autovacuum_enabled = off);
RESET client_min_messages;

-- (before a VACUUM whose folds are checked: no other session's snapshot
-- -- an autovacuum ANALYZE of another table -- may still see the deleted
-- rows, or VACUUM rightly keeps them; waits up to 30 s)
CREATE FUNCTION rquiet() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity
                              WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;

CREATE FUNCTION rwrite(sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE replace(sql, '{t}', 'rt');
    EXECUTE replace(sql, '{t}', 'rh');
END $$;
-- the same query through every read path, compared with heap (tt.cmp)
CREATE FUNCTION rcheck(OUT path text, OUT result text)
RETURNS SETOF record LANGUAGE plpgsql AS $$
DECLARE
    q text := 'SELECT * FROM {t} WHERE id BETWEEN 1 AND 1000000';
BEGIN
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('tessera.enable_custom_scan', 'on', true);
    path := 'custom scan'; result := tt.cmp(q, 'rh', 'rt'); RETURN NEXT;
    PERFORM set_config('tessera.enable_custom_scan', 'off', true);
    path := 'seq scan'; result := tt.cmp(q, 'rh', 'rt'); RETURN NEXT;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    path := 'index scan'; result := tt.cmp(q, 'rh', 'rt'); RETURN NEXT;
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    path := 'bitmap scan'; result := tt.cmp(q, 'rh', 'rt'); RETURN NEXT;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('tessera.enable_custom_scan', 'on', true);
    path := 'aggregates';
    result := tt.cmp('SELECT count(*), count(name), sum(amount), min(id), max(id), avg(grp) FROM {t}',
                     'rh', 'rt');
    RETURN NEXT;
    path := 'group by';
    result := tt.cmp('SELECT grp, count(*), sum(amount) FROM {t} GROUP BY grp', 'rh', 'rt');
    RETURN NEXT;
END $$;

SELECT rwrite($$INSERT INTO {t} SELECT g, g % 10, 'name ' || g, g * 1.5,
                 timestamp '2024-01-01' + g * interval '1 minute'
                 FROM generate_series(1, 100000) g$$);
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT pg_relation_size('rt') AS loaded \gset

-- deleting half of the rows writes a state entry per row: the table grows
SELECT rwrite('DELETE FROM {t} WHERE id % 2 = 0');
SELECT pg_relation_size('rt') > :loaded AS grew_with_states;

-- one VACUUM folds them, gives the state pages back and truncates
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT pg_relation_size('rt') <= 0.6 * :loaded AS shrunk_below_60_percent;
SELECT sum(folded_rows) AS folded, sum(row_count) AS row_numbers
    FROM tessera.row_groups WHERE relation = 'rt'::regclass;
SELECT * FROM rcheck();
-- folded rows are gone for every kind of fetch: TID scan, TID range scan
SELECT count(*) AS folded_by_tid FROM rt
    WHERE ctid IN (SELECT format('(%s,%s)', b, o)::tid FROM generate_series(0, 3) b,
                   generate_series(1, 291) o) AND id % 2 = 0;
SELECT (SELECT count(*) FROM rt
        WHERE ctid IN (SELECT format('(%s,%s)', b, o)::tid FROM generate_series(0, 3) b,
                       generate_series(1, 291) o))
     = (SELECT count(*) FROM rt WHERE ctid < '(4,0)') AS tid_paths_agree,
       (SELECT count(*) FROM rt WHERE ctid < '(4,0)') > 0 AS some_rows;
SELECT tt.cmp('SELECT id FROM {t} WHERE id <= 1200', 'rh', 'rt');
ANALYZE rt;
SELECT reltuples FROM pg_class WHERE oid = 'rt'::regclass;

-- indexes built after the fold skip folded rows
CREATE INDEX rt_grp ON rt (grp);
CREATE INDEX CONCURRENTLY rt_name ON rt (name);
REINDEX TABLE rt;
SET enable_seqscan = off;
SELECT tt.cmp('SELECT id, grp FROM {t} WHERE grp = 3', 'rh', 'rt');
SELECT tt.cmp('SELECT id, name FROM {t} WHERE name > ''name 9''', 'rh', 'rt');
RESET enable_seqscan;
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_check('rt_grp', true), bt_index_check('rt_name', true), bt_index_check('rt_pkey', true);

-- the rows left can be updated, deleted, locked; keys of folded rows are free
SELECT rwrite('UPDATE {t} SET amount = amount + 1, name = name || ''!'' WHERE id % 3 = 0');
SELECT rwrite('DELETE FROM {t} WHERE id % 5 = 0');
SELECT rwrite('INSERT INTO {t} VALUES (2, 2, ''again'', 2, NULL), (4, 4, ''again'', 4, NULL)');
INSERT INTO rt VALUES (3, 3, 'duplicate', 3, NULL);
BEGIN;
SELECT id, name FROM rt WHERE id IN (1, 2, 3, 9) ORDER BY id FOR UPDATE;
ROLLBACK;
SELECT * FROM rcheck();

-- a second VACUUM folds again: the rows folded before stay folded
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT * FROM rcheck();
SELECT sum(folded_rows) > 50000 AS folded_again FROM tessera.row_groups WHERE relation = 'rt'::regclass;

-- a rolled-back delete folds nothing
BEGIN;
DELETE FROM rt WHERE id < 50000;
ROLLBACK;
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT tt.cmp('SELECT * FROM {t}', 'rh', 'rt');

-- delete everything: the table goes back to almost nothing, and is usable
SELECT rwrite('DELETE FROM {t}');
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT pg_relation_size('rt') <= 8192 * 4 AS nearly_empty;
SELECT count(*) FROM rt;
SELECT rwrite($$INSERT INTO {t} SELECT g, g % 10, 'new ' || g, g, NULL
                 FROM generate_series(1, 1000) g$$);
SELECT * FROM rcheck();

-- with the fraction at 1, VACUUM rewrites nothing (and the states stay)
SET tessera.vacuum_fold_fraction = 1;
SELECT rwrite('DELETE FROM {t} WHERE id % 2 = 1');
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT coalesce(sum(folded_rows), 0) AS folded_off
    FROM tessera.row_groups WHERE relation = 'rt'::regclass
    AND first_row >= (SELECT max(first_row) FROM tessera.row_groups WHERE relation = 'rt'::regclass);
SELECT * FROM rcheck();
RESET tessera.vacuum_fold_fraction;
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT * FROM rcheck();

-- small stripes (small loads, background compaction's output) merge in VACUUM
TRUNCATE rt, rh;
SELECT format('SELECT rwrite(%L)',
              format('INSERT INTO {t} SELECT g, g %% 10, ''s'' || g, g, NULL FROM generate_series(%s, %s) g',
                     k * 2000 + 1, k * 2000 + 2000))
FROM generate_series(0, 7) k \gexec
SELECT count(*) AS stripes_before FROM tessera.stripes WHERE relation = 'rt'::regclass;
SELECT pg_relation_size('rt') AS small_before \gset
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT count(*) AS stripes_after FROM tessera.stripes WHERE relation = 'rt'::regclass;
SELECT pg_relation_size('rt') < :small_before AS smaller;
SELECT * FROM rcheck();

-- scattered updates: one row in every 500-row range makes every state page;
-- VACUUM folds the stripe although few of its rows are dead, since those
-- pages outweigh it
SELECT rwrite('UPDATE {t} SET name = ''scattered'' WHERE id % 400 = 7');
SELECT pg_relation_size('rt') AS scattered_before \gset
SELECT rquiet() AS quiet \gset
VACUUM rt;
SELECT pg_relation_size('rt') < :scattered_before / 2 AS state_pages_given_back;
SELECT * FROM rcheck();

-- errors
SET tessera.vacuum_fold_fraction = 2;
SET tessera.vacuum_fold_fraction = -0.5;

DROP TABLE rt, rh;
DROP FUNCTION rwrite(text), rcheck(), rquiet();
DROP EXTENSION amcheck;
