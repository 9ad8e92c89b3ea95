-- Table rewrites (ALTER TABLE ... TYPE, ADD COLUMN with a volatile default,
-- SET ACCESS METHOD, VACUUM FULL, CLUSTER) keep every row after rows were
-- deleted, updated or locked, and ALTER TABLE in the transaction that wrote
-- the table keeps that transaction's later writes.  The same statements run
-- on heap tables and tessera tables; the tables must end up equal.
\getenv abs_srcdir PG_ABS_SRCDIR
\set cases :abs_srcdir '/sql/include/rewrite_cases.psql'
\set am heap
\i :cases
\set am tessera
\i :cases

SELECT tt.same_table('rw_del_heap', 'rw_del_tessera');
SELECT count(*) FROM rw_del_tessera;
SELECT tt.same_table('rw_upd_heap', 'rw_upd_tessera');
SELECT tt.same_table('rw_lock_heap', 'rw_lock_tessera');
SELECT count(*) FROM rw_lock_tessera;
SELECT tt.same_table('rw_ref_heap', 'rw_ref_tessera');
SELECT tt.same_table('rw_tx_heap', 'rw_tx_tessera');
SELECT * FROM rw_tx_tessera ORDER BY x;
SELECT tt.same_table('rw_big_heap', 'rw_big_tessera');
SELECT count(*), sum(a), count(c) FROM rw_big_tessera;
SELECT tt.same_table('rw_trunc1_heap', 'rw_trunc1_tessera');
SELECT count(*), sum(a) FROM rw_trunc1_tessera;
SELECT * FROM rw_trunc2_tessera ORDER BY a;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
    WHERE c.relname LIKE 'rw\_%\_tessera' ORDER BY 1;

-- scroll cursors backward over every scan type, from a fresh scan too
CREATE TABLE sc_h (id int, t text);
CREATE TABLE sc_t (id int, t text) USING tessera;
INSERT INTO sc_h SELECT i, 'r' || i FROM generate_series(1, 3000) i;
INSERT INTO sc_t SELECT * FROM sc_h;
CREATE INDEX ON sc_h (id);
CREATE INDEX ON sc_t (id);
DELETE FROM sc_h WHERE id % 17 = 0;
DELETE FROM sc_t WHERE id % 17 = 0;
-- a TID range scan restarts at its end when fetched backward
SET enable_seqscan = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM sc_t WHERE ctid < '(1,0)';
EXPLAIN (COSTS OFF) SELECT id FROM sc_t WHERE ctid < '(1,0)';
FETCH LAST c;
FETCH BACKWARD 2 c;
FETCH FIRST c;
FETCH ABSOLUTE 5 c;
FETCH RELATIVE -2 c;
FETCH BACKWARD ALL c;
FETCH LAST c;
SELECT max(id) FROM sc_t WHERE ctid < '(1,0)';
COMMIT;
RESET enable_seqscan;
-- sequential, TesseraScan, index and bitmap scans: the same rows backward as forward
CREATE FUNCTION tt.scroll(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c refcursor;
    r record;
    fwd text := '';
    bwd text := '';
    n int := 0;
BEGIN
    OPEN c SCROLL FOR EXECUTE q;
    LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; fwd := fwd || r.id || ','; n := n + 1; END LOOP;
    LOOP FETCH PRIOR FROM c INTO r; EXIT WHEN NOT FOUND; bwd := r.id || ',' || bwd; END LOOP;
    FETCH LAST FROM c INTO r;
    CLOSE c;
    RETURN format('%s rows, backward %s, last %s', n,
                  CASE WHEN fwd = bwd THEN 'same' ELSE 'DIFFERENT' END, r.id);
END $$;
SELECT tt.scroll('SELECT id FROM sc_t WHERE id BETWEEN 100 AND 2500');
SELECT tt.scroll('SELECT id FROM sc_h WHERE id BETWEEN 100 AND 2500');
SET tessera.enable_custom_scan = off;
SELECT tt.scroll('SELECT id FROM sc_t WHERE id BETWEEN 100 AND 2500');
RESET tessera.enable_custom_scan;
SET enable_seqscan = off;
SELECT tt.scroll('SELECT id FROM sc_t WHERE id BETWEEN 100 AND 2500 ORDER BY id');
SELECT tt.scroll('SELECT id FROM sc_h WHERE id BETWEEN 100 AND 2500 ORDER BY id');
SET enable_indexscan = off;
SELECT tt.scroll('SELECT id FROM sc_t WHERE id BETWEEN 100 AND 2500');
RESET enable_seqscan;
RESET enable_indexscan;

DROP TABLE rw_del_heap, rw_del_tessera, rw_upd_heap, rw_upd_tessera, rw_ref_heap, rw_ref_tessera,
    rw_lock_heap, rw_lock_tessera, rw_tx_heap, rw_tx_tessera, rw_big_heap, rw_big_tessera, sc_h, sc_t,
    rw_trunc1_heap, rw_trunc1_tessera, rw_trunc2_heap, rw_trunc2_tessera;
DROP FUNCTION tt.scroll(text);
