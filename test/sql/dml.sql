-- UPDATE, DELETE, MERGE, RETURNING, triggers, subtransactions: every
-- statement runs on a heap twin and the results are compared.
SET tessera.row_group_row_limit = 500;
SET tessera.stripe_row_limit = 3000;
CREATE TABLE dh (id int, grp int, val numeric, note text);
CREATE TABLE dt (LIKE dh) USING tessera;
INSERT INTO dh SELECT i, i % 17, i * 1.5, 'n' || i FROM generate_series(1, 10000) i;
INSERT INTO dt SELECT * FROM dh;

-- a statement on both tables, then compare them
CREATE FUNCTION tt.both(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE nh bigint; nt bigint;
BEGIN
    EXECUTE replace(stmt, '{t}', 'dh');
    GET DIAGNOSTICS nh = ROW_COUNT;
    EXECUTE replace(stmt, '{t}', 'dt');
    GET DIAGNOSTICS nt = ROW_COUNT;
    IF nh <> nt THEN
        RETURN format('DIFFERENT row counts: heap %s, tessera %s', nh, nt);
    END IF;
    RETURN format('%s rows, tables %s', nh, tt.same_table('dh', 'dt'));
END $$;

SELECT tt.both('UPDATE {t} SET val = val + 1 WHERE grp = 3');
SELECT tt.both('UPDATE {t} SET note = NULL, grp = grp + 100 WHERE id % 10 = 0');
SELECT tt.both('DELETE FROM {t} WHERE id % 7 = 0');
SELECT tt.both('UPDATE {t} SET val = val * 2 WHERE id < 500');
SELECT tt.both('UPDATE {t} SET val = val * 2 WHERE id < 500');
SELECT tt.both('DELETE FROM {t} WHERE id BETWEEN 5000 AND 6000');
SELECT tt.both('UPDATE {t} SET id = -id WHERE grp = 5');
SELECT tt.both('INSERT INTO {t} SELECT i, 0, 0, ''again'' FROM generate_series(5000, 5100) i');
SELECT tt.both('UPDATE {t} SET note = ''again '' || note WHERE note = ''again''');
SELECT tt.both('DELETE FROM {t} WHERE note IS NULL');
-- updates of rows updated before in the same statement's table
SELECT tt.both('UPDATE {t} a SET val = b.val FROM {t} b WHERE a.id = b.id + 1 AND a.grp = 1');

-- RETURNING
UPDATE dt SET val = 0 WHERE id IN (1, 2, 3) RETURNING id, val, note;
DELETE FROM dt WHERE id IN (1, 2) RETURNING *;
UPDATE dh SET val = 0 WHERE id IN (1, 2, 3);
DELETE FROM dh WHERE id IN (1, 2);
SELECT tt.same_table('dh', 'dt');

-- transactions and savepoints
BEGIN;
DELETE FROM dt WHERE grp = 4;
SAVEPOINT s1;
UPDATE dt SET note = 'in s1' WHERE grp = 6;
SELECT count(*) FILTER (WHERE grp = 4) AS g4, count(*) FILTER (WHERE note = 'in s1') AS s1 FROM dt;
ROLLBACK TO s1;
SELECT count(*) FILTER (WHERE grp = 4) AS g4, count(*) FILTER (WHERE note = 'in s1') AS s1 FROM dt;
UPDATE dt SET note = 'after' WHERE grp = 6;
COMMIT;
DELETE FROM dh WHERE grp = 4;
UPDATE dh SET note = 'after' WHERE grp = 6;
SELECT tt.same_table('dh', 'dt');
BEGIN;
UPDATE dt SET val = -1;
DELETE FROM dt WHERE id > 100;
ROLLBACK;
SELECT tt.same_table('dh', 'dt');

-- a row updated several times in one transaction, visible to each command
BEGIN;
UPDATE dt SET val = 1 WHERE id = 10;
UPDATE dt SET val = val + 1 WHERE id = 10;
UPDATE dt SET val = val + 1 WHERE id = 10;
SELECT id, val FROM dt WHERE id = 10;
DELETE FROM dt WHERE id = 10;
SELECT count(*) FROM dt WHERE id = 10;
COMMIT;
SELECT count(*) FROM dt WHERE id = 10;
DELETE FROM dh WHERE id = 10;

-- PL/pgSQL exception blocks around changes
DO $$
BEGIN
    FOR i IN 20..40 LOOP
        BEGIN
            UPDATE dt SET note = 'plpgsql' WHERE id = i;
            DELETE FROM dt WHERE id = i + 1000;
            IF i % 3 = 0 THEN RAISE EXCEPTION 'undo'; END IF;
        EXCEPTION WHEN raise_exception THEN NULL;
        END;
    END LOOP;
END $$;
DO $$
BEGIN
    FOR i IN 20..40 LOOP
        BEGIN
            UPDATE dh SET note = 'plpgsql' WHERE id = i;
            DELETE FROM dh WHERE id = i + 1000;
            IF i % 3 = 0 THEN RAISE EXCEPTION 'undo'; END IF;
        EXCEPTION WHEN raise_exception THEN NULL;
        END;
    END LOOP;
END $$;
SELECT tt.same_table('dh', 'dt');

-- a cursor keeps seeing rows deleted after it was opened
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM dt WHERE id BETWEEN 100 AND 105 ORDER BY id;
DELETE FROM dt WHERE id BETWEEN 100 AND 105;
FETCH ALL FROM c;
SELECT count(*) FROM dt WHERE id BETWEEN 100 AND 105;
ROLLBACK;

-- MERGE
CREATE TABLE src (id int, val numeric);
INSERT INTO src SELECT i, i FROM generate_series(9900, 10200, 3) i;
SELECT tt.both($m$MERGE INTO {t} d USING src s ON d.id = s.id
    WHEN MATCHED AND s.val % 2 = 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET val = s.val, note = 'merged'
    WHEN NOT MATCHED THEN INSERT VALUES (s.id, -1, s.val, 'inserted')$m$);

-- triggers on UPDATE and DELETE, row and statement level with transition tables
CREATE TABLE tlog (tbl text, op text, old_id int, new_id int);
CREATE FUNCTION tlog_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tlog VALUES (TG_TABLE_NAME, TG_WHEN || ' ' || TG_OP,
        CASE WHEN TG_OP <> 'INSERT' THEN OLD.id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.id END);
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    IF TG_WHEN = 'BEFORE' AND NEW.note = 'skip me' THEN RETURN NULL; END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION tlog_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tlog SELECT TG_TABLE_NAME, 'transition ' || TG_OP, (SELECT sum(id) FROM oldt), (SELECT sum(id) FROM newt);
    RETURN NULL;
END $$;
CREATE TRIGGER b BEFORE UPDATE OR DELETE ON dt FOR EACH ROW EXECUTE FUNCTION tlog_row();
CREATE TRIGGER a AFTER UPDATE OR DELETE ON dt FOR EACH ROW EXECUTE FUNCTION tlog_row();
CREATE TRIGGER s AFTER UPDATE ON dt REFERENCING OLD TABLE AS oldt NEW TABLE AS newt FOR EACH STATEMENT EXECUTE FUNCTION tlog_stmt();
CREATE TRIGGER b BEFORE UPDATE OR DELETE ON dh FOR EACH ROW EXECUTE FUNCTION tlog_row();
CREATE TRIGGER a AFTER UPDATE OR DELETE ON dh FOR EACH ROW EXECUTE FUNCTION tlog_row();
CREATE TRIGGER s AFTER UPDATE ON dh REFERENCING OLD TABLE AS oldt NEW TABLE AS newt FOR EACH STATEMENT EXECUTE FUNCTION tlog_stmt();
SELECT tt.both('UPDATE {t} SET note = CASE WHEN id = 50 THEN ''skip me'' ELSE ''trig'' END WHERE id BETWEEN 48 AND 52');
SELECT tt.both('DELETE FROM {t} WHERE id IN (60, 61)');
SELECT tt.cmp('SELECT op, old_id, new_id, count(*) FROM tlog WHERE tbl = ''{t}'' GROUP BY 1, 2, 3', 'dh', 'dt');
SELECT op, old_id, new_id FROM tlog WHERE tbl = 'dt' ORDER BY op, old_id NULLS FIRST, new_id;

-- partitions: updates that move rows between tessera partitions
CREATE TABLE ph (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE ph1 PARTITION OF ph FOR VALUES FROM (0) TO (100);
CREATE TABLE ph2 PARTITION OF ph FOR VALUES FROM (100) TO (200);
CREATE TABLE pt (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (100) USING tessera;
CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (100) TO (200) USING tessera;
INSERT INTO ph SELECT i, 'p' || i FROM generate_series(0, 199) i;
INSERT INTO pt SELECT i, 'p' || i FROM generate_series(0, 199) i;
UPDATE ph SET k = k + 100 WHERE k < 20;
UPDATE pt SET k = k + 100 WHERE k < 20;
SELECT tt.cmp('SELECT right(tableoid::regclass::text, 1) AS part, k, v FROM {t}', 'ph', 'pt');
SELECT tableoid::regclass, count(*) FROM pt GROUP BY 1 ORDER BY 1;

-- system columns of changed rows
SELECT xmax = 0 AS untouched FROM dt WHERE id = 3;
BEGIN;
SELECT id FROM dt WHERE id = 3 FOR UPDATE;
COMMIT;
SELECT count(*) FROM dt WHERE id = 3;

DROP TABLE dh, dt, src, tlog, ph, pt;
DROP FUNCTION tt.both(text), tlog_row(), tlog_stmt();

-- VACUUM removes index entries of dead rows and keeps everything else right
CREATE TABLE vh (id int PRIMARY KEY, v text);
CREATE TABLE vt (id int PRIMARY KEY, v text) USING tessera;
INSERT INTO vh SELECT i, 'v' || i FROM generate_series(1, 5000) i;
INSERT INTO vt SELECT i, 'v' || i FROM generate_series(1, 5000) i;
DELETE FROM vh WHERE id % 2 = 0;
DELETE FROM vt WHERE id % 2 = 0;
UPDATE vh SET v = 'u' WHERE id % 5 = 1;
UPDATE vt SET v = 'u' WHERE id % 5 = 1;
BEGIN;
DELETE FROM vt WHERE id < 100;
ROLLBACK;
VACUUM vh;
VACUUM vt;
SELECT tt.same_table('vh', 'vt');
SET enable_seqscan = off;
SELECT tt.cmp('SELECT * FROM {t} WHERE id BETWEEN 100 AND 400', 'vh', 'vt');
RESET enable_seqscan;
SELECT reltuples, relfrozenxid <> '0' AS has_frozenxid FROM pg_class WHERE oid = 'vt'::regclass;
-- rows deleted after VACUUM, and a second VACUUM
DELETE FROM vt WHERE id % 3 = 0;
DELETE FROM vh WHERE id % 3 = 0;
VACUUM vt;
VACUUM vt;
SELECT tt.same_table('vh', 'vt');
-- VACUUM FULL drops the dead rows and the row states
VACUUM FULL vt;
SELECT tt.same_table('vh', 'vt');
SELECT pg_relation_size('vt') < 8192 * 10 AS compact;
INSERT INTO vt VALUES (1, 'dup');
DROP TABLE vh, vt;

-- RETURNING system columns of new rows, as on heap
CREATE TABLE sys_t (a int PRIMARY KEY, b text) USING tessera;
INSERT INTO sys_t VALUES (1, 'x') RETURNING a, xmin = pg_current_xact_id()::xid AS xmin_ok, tableoid::regclass;
INSERT INTO sys_t VALUES (1, 'y') ON CONFLICT (a) DO UPDATE SET b = 'z'
    RETURNING a, b, xmin = pg_current_xact_id()::xid AS xmin_ok;
UPDATE sys_t SET b = 'w' RETURNING a, b, xmin = pg_current_xact_id()::xid AS xmin_ok;
DROP TABLE sys_t;

-- RETURNING (xmax = 0) AS inserted tells an upsert's inserts from its
-- updates, as on heap (the update locked the row first); a plain UPDATE's
-- new version has no xmax, one after SELECT FOR UPDATE has ours
CREATE TABLE ups_h (k int PRIMARY KEY, v int);
CREATE TABLE ups_t (k int PRIMARY KEY, v int) USING tessera;
INSERT INTO ups_h VALUES (1, 1), (3, 3);
INSERT INTO ups_t VALUES (1, 1), (3, 3);
INSERT INTO ups_h VALUES (1, 5), (2, 5), (3, 5) ON CONFLICT (k) DO UPDATE SET v = excluded.v
    RETURNING k, v, xmax = 0 AS inserted;
INSERT INTO ups_t VALUES (1, 5), (2, 5), (3, 5) ON CONFLICT (k) DO UPDATE SET v = excluded.v
    RETURNING k, v, xmax = 0 AS inserted;
UPDATE ups_h SET v = 9 WHERE k = 2 RETURNING k, xmax = 0 AS no_xmax;
UPDATE ups_t SET v = 9 WHERE k = 2 RETURNING k, xmax = 0 AS no_xmax;
BEGIN;
SELECT k FROM ups_h WHERE k = 1 FOR UPDATE;
SELECT k FROM ups_t WHERE k = 1 FOR UPDATE;
UPDATE ups_h SET v = 10 WHERE k IN (1, 3) RETURNING k, xmax = 0 AS no_xmax;
UPDATE ups_t SET v = 10 WHERE k IN (1, 3) RETURNING k, xmax = 0 AS no_xmax;
COMMIT;
SELECT tt.same_table('ups_h', 'ups_t');
DROP TABLE ups_h, ups_t;

-- ON COMMIT DELETE ROWS right after rows were written in the same transaction
CREATE TEMP TABLE ocd (a int) USING tessera ON COMMIT DELETE ROWS;
INSERT INTO ocd VALUES (1), (2);
SELECT count(*) FROM ocd;
BEGIN;
INSERT INTO ocd SELECT generate_series(1, 1000);
SELECT count(*) FROM ocd;
COMMIT;
SELECT count(*) FROM ocd;
DROP TABLE ocd;

-- DELETE ... RETURNING xmax shows the deleting transaction, as on heap
CREATE TABLE xmh (a int, b text);
CREATE TABLE xmt (a int, b text) USING tessera;
INSERT INTO xmh VALUES (1, 'one'), (2, 'two');
INSERT INTO xmt VALUES (1, 'one'), (2, 'two');
BEGIN;
DELETE FROM xmh WHERE a = 1 RETURNING a, b, xmax = pg_current_xact_id()::xid AS xmax_ok;
DELETE FROM xmt WHERE a = 1 RETURNING a, b, xmax = pg_current_xact_id()::xid AS xmax_ok;
ROLLBACK;
DROP TABLE xmh, xmt;
