--
-- Index, bitmap and TID scans decode only the columns the query reads
-- (the executor hook marks their slots); everything that reads more of the
-- row -- whole-row references, EvalPlanQual copies, RETURNING, triggers,
-- row-level security, views, ON CONFLICT -- must still see every column.
-- Each query runs on a tessera table and its heap twin.
--
CREATE TABLE fc_t (id int PRIMARY KEY, c1 int, c2 text, c3 numeric, c4 text, c5 int,
                   c6 timestamp, c7 text, c8 int, c9 text) USING tessera;
CREATE TABLE fc_h (LIKE fc_t INCLUDING ALL) USING heap;
INSERT INTO fc_t SELECT i, i * 3, 'two ' || i, i / 7.0, md5(i::text), i % 5,
       timestamp '2024-01-01' + i * interval '1 hour', repeat('x', i % 13), i % 4 - 1,
       'nine ' || i
FROM generate_series(1, 3000) i;
INSERT INTO fc_h SELECT * FROM fc_t;
CREATE TABLE fc_o (id int PRIMARY KEY, x text);
INSERT INTO fc_o SELECT i, 'o' || i FROM generate_series(1, 40) i;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET tessera.enable_custom_scan = off;

CREATE FUNCTION fc_both(q text) RETURNS TABLE (tbl text, result text)
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    FOREACH tbl IN ARRAY ARRAY['fc_t', 'fc_h'] LOOP
        EXECUTE format('SELECT string_agg(fc_row::text, '' | '') FROM (%s) fc_row', replace(q, 'TBL', tbl))
            INTO r;
        result := r;
        RETURN NEXT;
    END LOOP;
END $$;

-- a column late in the row, alone
SELECT * FROM fc_both('SELECT c9 FROM TBL WHERE id = 5');
-- whole rows
SELECT * FROM fc_both('SELECT t FROM TBL t WHERE id = 6');
SELECT * FROM fc_both('SELECT row_to_json(t) FROM TBL t WHERE id = 7');
-- quals on columns the target list does not have
SELECT * FROM fc_both('SELECT c1 FROM TBL WHERE id BETWEEN 10 AND 30 AND c8 > 0 AND c7 <> '''' ORDER BY 1');
-- a sort over a physical target list
SELECT * FROM fc_both('SELECT c4 FROM TBL WHERE id < 40 ORDER BY c4 DESC LIMIT 3');
-- nested loops with the tessera table inside
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM fc_both('SELECT o.x, t.c7, t.c3 FROM fc_o o JOIN TBL t ON t.id = o.id ORDER BY o.id');
SELECT * FROM fc_both('SELECT o.x, t.c2 FROM fc_o o JOIN TBL t ON t.id = o.id WHERE o.id < 4 ORDER BY o.id FOR UPDATE OF o');
RESET enable_hashjoin;
RESET enable_mergejoin;
-- joins reading the scan slot of their input directly (its target list is
-- physical, so the scan does not project): the join's own expressions
-- say which columns it reads
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM fc_both('SELECT o.id FROM fc_o o WHERE EXISTS (SELECT * FROM TBL t WHERE t.id = o.id AND t.c8 > 0) ORDER BY 1');
SELECT * FROM fc_both('SELECT o.id FROM fc_o o WHERE NOT EXISTS (SELECT * FROM TBL t WHERE t.id = o.id AND t.c7 <> '''' AND t.c3 > 1) ORDER BY 1');
-- a nested loop's parameter from its outer input's slot
SELECT * FROM fc_both('SELECT t.id, o.x FROM TBL t JOIN fc_o o ON o.id = t.c5 + 30 WHERE t.id BETWEEN 100 AND 110 ORDER BY 1');
RESET enable_mergejoin;
SET enable_nestloop = off;
-- merge joins: merge clauses, join quals and target lists on both inputs
SELECT * FROM fc_both('SELECT o.x, t.c9, t.c3 FROM fc_o o JOIN TBL t ON t.id = o.id AND t.c2 <> o.x WHERE o.id < 6 ORDER BY o.id');
SELECT * FROM fc_both('SELECT t1.id, t2.c9 FROM TBL t1 LEFT JOIN TBL t2 ON t2.id = t1.id + 1 AND t2.c8 > t1.c8 WHERE t1.id < 20 ORDER BY 1');
RESET enable_nestloop;
RESET enable_hashjoin;
-- a correlated subquery
SELECT * FROM fc_both('SELECT id, (SELECT c9 FROM TBL t2 WHERE t2.id = t1.id) FROM TBL t1 WHERE id < 4 ORDER BY 1');
-- a view over a few columns
CREATE VIEW fc_tv AS SELECT id, c5, c9 FROM fc_t;
CREATE VIEW fc_hv AS SELECT id, c5, c9 FROM fc_h;
SELECT * FROM fc_both('SELECT c9 FROM TBLv WHERE id = 9');
-- bitmap and TID scans
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT * FROM fc_both('SELECT c6 FROM TBL WHERE id IN (3, 4, 5) ORDER BY 1');
RESET enable_indexscan;
SET enable_bitmapscan = off;
SELECT * FROM fc_both('SELECT c8, c9 FROM TBL WHERE ctid = (SELECT ctid FROM TBL WHERE id = 10)');
SELECT * FROM fc_both('SELECT t FROM TBL t WHERE ctid = ANY (ARRAY(SELECT ctid FROM TBL WHERE id IN (14, 15)))');
SELECT * FROM fc_both('SELECT c1 FROM TBL WHERE ctid = ANY (ARRAY(SELECT ctid FROM TBL WHERE id BETWEEN 16 AND 30)) AND c7 <> '''' AND c8 > 0 ORDER BY 1');
SELECT * FROM fc_both('SELECT c2 FROM TBL WHERE ctid = (SELECT ctid FROM TBL WHERE id = 31) FOR UPDATE');
-- a TID scan inside a nested loop, the join reading its slot
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM fc_both('SELECT a.id, b.c9, b.c3 FROM TBL a JOIN TBL b ON b.ctid = a.ctid WHERE a.id < 5 AND b.c8 >= 0 ORDER BY 1');
SELECT * FROM fc_both('SELECT b.* FROM TBL a JOIN TBL b ON b.ctid = a.ctid WHERE a.id IN (7, 8) ORDER BY 1');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- a generated column's expression reads other columns (on PostgreSQL 18 a
-- virtual one, which the planner replaces by its expression without
-- marking those columns selected; stored before 18)
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 180000 THEN
        EXECUTE 'CREATE TABLE fc_g (id int PRIMARY KEY, a int, b text, g int GENERATED ALWAYS AS (a * 2) VIRTUAL) USING tessera';
    ELSE
        EXECUTE 'CREATE TABLE fc_g (id int PRIMARY KEY, a int, b text, g int GENERATED ALWAYS AS (a * 2) STORED) USING tessera';
    END IF;
END $$;
INSERT INTO fc_g (id, a, b) SELECT i, i * 10, 'b' || i FROM generate_series(1, 3000) i;
SELECT sum(g) FROM fc_g WHERE ctid = (SELECT ctid FROM fc_g WHERE id = 1);
SELECT g FROM fc_g WHERE id = 2;
SELECT id, g FROM fc_g WHERE id IN (3, 4) ORDER BY g;
DROP TABLE fc_g;

-- a row fetched by TID, or as a top-N's winner, decodes the columns read
-- and no others: in a stripe not read before, one column of a row of 13
-- md5 strings costs a few buffers (with the directory's), the whole row
-- several times more
CREATE TABLE fc_w (id int, w1 text, w2 text, w3 text, w4 text, w5 text, w6 text,
                   w7 text, w8 text, w9 text, w10 text, w11 text, w12 text, w13 text)
    USING tessera WITH (tessera_stripe_row_limit = 2000, tessera_row_group_row_limit = 1000);
INSERT INTO fc_w SELECT i, md5(i::text), md5((i + 1)::text), md5((i + 2)::text),
    md5((i + 3)::text), md5((i + 4)::text), md5((i + 5)::text), md5((i + 6)::text),
    md5((i + 7)::text), md5((i + 8)::text), md5((i + 9)::text), md5((i + 10)::text),
    md5((i + 11)::text), md5((i + 12)::text) FROM generate_series(1, 8000) i;
CREATE FUNCTION fc_hits(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int;
END $$;
SET enable_seqscan = on;
SELECT fc_hits('SELECT w9 FROM fc_w WHERE ctid = ''(1, 10)''') * 3 <
       fc_hits('SELECT * FROM fc_w WHERE ctid = ''(8, 10)''') AS tid_reads_one_column;
SELECT fc_hits('SELECT w9 FROM fc_w WHERE ctid = ''(15, 10)'' AND w8 <> ''''') * 2 <
       fc_hits('SELECT * FROM fc_w WHERE ctid = ''(22, 10)''') AS tid_reads_its_qual_column;
RESET enable_seqscan;
SET tessera.enable_custom_scan = on;
SELECT * FROM tt.explain('SELECT w3 FROM fc_w WHERE id BETWEEN 1000 AND 1010 ORDER BY id LIMIT 2');
SELECT fc_hits('SELECT w3 FROM fc_w WHERE id BETWEEN 1000 AND 1010 ORDER BY id LIMIT 2') * 2 <
       fc_hits('SELECT * FROM fc_w WHERE id BETWEEN 5000 AND 5010 ORDER BY id LIMIT 2') AS topn_reads_one_column;
SELECT w3, id FROM fc_w WHERE id % 1000 = 8 ORDER BY id LIMIT 2;
SELECT fc_w FROM fc_w WHERE id % 1000 = 9 ORDER BY id DESC LIMIT 2;
SET tessera.enable_custom_scan = off;
DROP TABLE fc_w;
DROP FUNCTION fc_hits(text);

-- writes through index scans: RETURNING, triggers, ON CONFLICT
CREATE FUNCTION fc_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE '% %: old % new %', TG_TABLE_NAME, TG_OP, OLD.c9, NEW.c9;
    RETURN NEW;
END $$;
CREATE TRIGGER fc_t_trig AFTER UPDATE ON fc_t FOR EACH ROW EXECUTE FUNCTION fc_trig();
CREATE TRIGGER fc_h_trig AFTER UPDATE ON fc_h FOR EACH ROW EXECUTE FUNCTION fc_trig();
UPDATE fc_t SET c1 = c1 + 1 WHERE id = 11 RETURNING *;
UPDATE fc_h SET c1 = c1 + 1 WHERE id = 11 RETURNING *;
DELETE FROM fc_t WHERE id = 12 RETURNING *;
DELETE FROM fc_h WHERE id = 12 RETURNING *;
INSERT INTO fc_t VALUES (13, 0, 'new') ON CONFLICT (id) DO UPDATE SET c2 = EXCLUDED.c2 || fc_t.c9 RETURNING *;
INSERT INTO fc_h VALUES (13, 0, 'new') ON CONFLICT (id) DO UPDATE SET c2 = EXCLUDED.c2 || fc_h.c9 RETURNING *;
SELECT * FROM fc_both('SELECT t FROM TBL t WHERE id IN (11, 12, 13) ORDER BY id');

-- row-level security on a column the query does not select
CREATE ROLE regress_fc_reader;
GRANT SELECT ON fc_t, fc_h TO regress_fc_reader;
ALTER TABLE fc_t ENABLE ROW LEVEL SECURITY;
ALTER TABLE fc_h ENABLE ROW LEVEL SECURITY;
CREATE POLICY fc_t_pol ON fc_t USING (c8 > 0);
CREATE POLICY fc_h_pol ON fc_h USING (c8 > 0);
GRANT EXECUTE ON FUNCTION fc_both(text) TO regress_fc_reader;
SET ROLE regress_fc_reader;
SELECT * FROM fc_both('SELECT id, c1 FROM TBL WHERE id BETWEEN 20 AND 30 ORDER BY id');
RESET ROLE;

DROP TABLE fc_t, fc_h, fc_o CASCADE;
DROP FUNCTION fc_both(text), fc_trig();
DROP ROLE regress_fc_reader;
RESET ALL;
