-- Transactions: rollback, savepoints, command visibility, cursors, 2PC.
SET tessera.row_group_row_limit = 10;
SET tessera.stripe_row_limit = 25;
CREATE TABLE tx (id int, note text) USING tessera;

-- rolled back rows are gone, committed rows stay
BEGIN;
INSERT INTO tx SELECT i, 'rolled back' FROM generate_series(1, 100) i;
ROLLBACK;
INSERT INTO tx SELECT i, 'kept' FROM generate_series(1, 30) i;
SELECT count(*), min(id), max(id) FROM tx;

-- savepoints: exactly the rows written after a savepoint are discarded
BEGIN;
INSERT INTO tx VALUES (101, 'top');
SAVEPOINT a;
INSERT INTO tx SELECT i, 'in a' FROM generate_series(102, 140) i;
SAVEPOINT b;
INSERT INTO tx VALUES (141, 'in b');
SELECT note, count(*) FROM tx WHERE id > 100 GROUP BY note ORDER BY note;
ROLLBACK TO b;
SELECT note, count(*) FROM tx WHERE id > 100 GROUP BY note ORDER BY note;
INSERT INTO tx VALUES (142, 'after b');
RELEASE a;
SAVEPOINT c;
INSERT INTO tx VALUES (143, 'in c');
ROLLBACK TO c;
INSERT INTO tx VALUES (144, 'after c');
COMMIT;
SELECT note, count(*), min(id), max(id) FROM tx WHERE id > 100 GROUP BY note ORDER BY note;

-- a scan in a nested savepoint sees (and writes out) rows of outer levels;
-- rolling the inner level back keeps them
BEGIN;
INSERT INTO tx VALUES (201, 'outer');
SAVEPOINT s1;
INSERT INTO tx VALUES (202, 's1');
SAVEPOINT s2;
SELECT id, note FROM tx WHERE id > 200 ORDER BY id;
INSERT INTO tx VALUES (203, 's2');
ROLLBACK TO s1;
SELECT id, note FROM tx WHERE id > 200 ORDER BY id;
INSERT INTO tx VALUES (204, 'outer again');
COMMIT;
SELECT id, note FROM tx WHERE id > 200 ORDER BY id;

-- subtransactions from PL/pgSQL exception blocks
DO $$
BEGIN
    FOR i IN 301..320 LOOP
        BEGIN
            INSERT INTO tx VALUES (i, 'plpgsql');
            IF i % 4 = 0 THEN
                RAISE EXCEPTION 'undo %', i;
            END IF;
        EXCEPTION WHEN raise_exception THEN
            NULL;
        END;
    END LOOP;
END $$;
SELECT count(*), sum(id) FROM tx WHERE note = 'plpgsql';

-- an error aborts the whole transaction's rows
BEGIN;
INSERT INTO tx VALUES (401, 'doomed');
SELECT 1 / 0;
COMMIT;
SELECT count(*) FROM tx WHERE id = 401;

-- a statement does not see the rows it inserts itself
INSERT INTO tx SELECT id + 1000, 'copy' FROM tx WHERE id <= 30;
SELECT count(*) FROM tx WHERE note = 'copy';
WITH ins AS (INSERT INTO tx VALUES (2000, 'cte') RETURNING id)
SELECT (SELECT count(*) FROM tx WHERE id = 2000) AS seen_by_same_statement, (SELECT count(*) FROM ins) AS inserted;
SELECT count(*) FROM tx WHERE id = 2000;

-- later commands of a transaction see earlier ones, across stripes
BEGIN;
INSERT INTO tx SELECT i, 'batch 1' FROM generate_series(3001, 3040) i;
SELECT count(*) FROM tx WHERE note LIKE 'batch%';
INSERT INTO tx SELECT i, 'batch 2' FROM generate_series(3041, 3050) i;
SELECT note, count(*) FROM tx WHERE note LIKE 'batch%' GROUP BY note ORDER BY note;
COMMIT;

-- cursors opened before later inserts keep their snapshot
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM tx WHERE id BETWEEN 1 AND 30 ORDER BY id;
FETCH 3 FROM c;
INSERT INTO tx SELECT i, 'after cursor' FROM generate_series(5, 7) i;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
CLOSE c;
-- a cursor without ORDER BY scans the table itself, backwards too
DECLARE d SCROLL CURSOR FOR SELECT id FROM tx WHERE note = 'kept';
FETCH 2 FROM d;
FETCH BACKWARD 1 FROM d;
MOVE LAST IN d;
FETCH BACKWARD 3 FROM d;
FETCH ABSOLUTE 15 FROM d;
COMMIT;
DECLARE h CURSOR WITH HOLD FOR SELECT id FROM tx WHERE note = 'kept' ORDER BY id;
FETCH 2 FROM h;
INSERT INTO tx VALUES (9999, 'kept');
FETCH ALL FROM h;
CLOSE h;

-- two-phase commit
BEGIN;
INSERT INTO tx SELECT i, '2pc' FROM generate_series(5001, 5010) i;
PREPARE TRANSACTION 'tessera_2pc';
SELECT count(*) FROM tx WHERE note = '2pc';
COMMIT PREPARED 'tessera_2pc';
SELECT count(*) FROM tx WHERE note = '2pc';
BEGIN;
INSERT INTO tx VALUES (5100, '2pc rolled back');
PREPARE TRANSACTION 'tessera_2pc_rb';
ROLLBACK PREPARED 'tessera_2pc_rb';
SELECT count(*) FROM tx WHERE note = '2pc rolled back';

-- TRUNCATE is transactional
BEGIN;
TRUNCATE tx;
SELECT count(*) FROM tx;
INSERT INTO tx VALUES (1, 'after truncate');
SELECT * FROM tx;
ROLLBACK;
SELECT count(*) FROM tx;

-- table created and truncated in one transaction (non-transactional truncate)
BEGIN;
CREATE TABLE tx2 (a int) USING tessera;
INSERT INTO tx2 SELECT generate_series(1, 50);
TRUNCATE tx2;
INSERT INTO tx2 SELECT generate_series(100, 104);
SELECT count(*), min(a), max(a) FROM tx2;
SAVEPOINT s;
TRUNCATE tx2;
ROLLBACK TO s;
SELECT count(*) FROM tx2;
COMMIT;
SELECT count(*), min(a), max(a) FROM tx2;

-- a table dropped in the transaction that wrote it
BEGIN;
CREATE TABLE tx3 (a int) USING tessera;
INSERT INTO tx3 VALUES (1);
DROP TABLE tx3;
COMMIT;
BEGIN;
INSERT INTO tx VALUES (7000, 'dropped later');
DROP TABLE tx2;
ROLLBACK;
SELECT count(*) FROM tx2;

DROP TABLE tx, tx2;
