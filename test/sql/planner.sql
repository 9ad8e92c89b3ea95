-- Plans on tessera tables that heap can build must be buildable too.
-- PostgreSQL's equivclass test: an operator declared "merges" without a
-- commutator, in the btree family of int8 aliases.  tessera's estimates
-- for new tables (heap's 10 pages) lead the planner to heap's plan; with
-- 0 pages it chose a merge join it could not build ("could not find
-- commutator for operator").  (The tables stay empty, as in equivclass:
-- with rows in them heap's planner makes that choice too.)
CREATE TYPE int8alias1;
-- (18 adds the statement's position to the shell type notice)
SET client_min_messages = warning;
CREATE FUNCTION int8alias1in(cstring) RETURNS int8alias1
  STRICT IMMUTABLE LANGUAGE internal AS 'int8in';
CREATE FUNCTION int8alias1out(int8alias1) RETURNS cstring
  STRICT IMMUTABLE LANGUAGE internal AS 'int8out';
CREATE TYPE int8alias1 (input = int8alias1in, output = int8alias1out, like = int8);
RESET client_min_messages;
CREATE CAST (int8 AS int8alias1) WITHOUT FUNCTION;
CREATE CAST (int8alias1 AS int8) WITHOUT FUNCTION;
CREATE FUNCTION int8alias1eq(int8alias1, int8alias1) RETURNS bool
  STRICT IMMUTABLE LANGUAGE internal AS 'int8eq';
CREATE OPERATOR = (procedure = int8alias1eq, leftarg = int8alias1, rightarg = int8alias1,
  commutator = =, restrict = eqsel, join = eqjoinsel, merges);
ALTER OPERATOR FAMILY integer_ops USING btree ADD OPERATOR 3 = (int8alias1, int8alias1);
CREATE FUNCTION int8alias1eq(int8, int8alias1) RETURNS bool
  STRICT IMMUTABLE LANGUAGE internal AS 'int8eq';
CREATE OPERATOR = (procedure = int8alias1eq, leftarg = int8, rightarg = int8alias1,
  restrict = eqsel, join = eqjoinsel, merges);
ALTER OPERATOR FAMILY integer_ops USING btree ADD OPERATOR 3 = (int8, int8alias1);
CREATE FUNCTION int8alias1lt(int8alias1, int8alias1) RETURNS bool
  STRICT IMMUTABLE LANGUAGE internal AS 'int8lt';
CREATE OPERATOR < (procedure = int8alias1lt, leftarg = int8alias1, rightarg = int8alias1);
ALTER OPERATOR FAMILY integer_ops USING btree ADD OPERATOR 1 < (int8alias1, int8alias1);
CREATE FUNCTION int8alias1cmp(int8, int8alias1) RETURNS int
  STRICT IMMUTABLE LANGUAGE internal AS 'btint8cmp';
ALTER OPERATOR FAMILY integer_ops USING btree ADD FUNCTION 1 int8alias1cmp (int8, int8alias1);

CREATE TABLE ec1h (ff int8 PRIMARY KEY, f1 int8alias1) USING heap;
CREATE TABLE ec1t (ff int8 PRIMARY KEY, f1 int8alias1) USING tessera;
CREATE INDEX ec1h_expr2 ON ec1h ((ff + 2));
CREATE INDEX ec1h_expr4 ON ec1h ((ff + 4));
CREATE INDEX ec1t_expr2 ON ec1t ((ff + 2));
CREATE INDEX ec1t_expr4 ON ec1t ((ff + 4));
SET enable_nestloop = off;
SET enable_hashjoin = off;
SELECT tt.cmp($$SELECT * FROM {t} e,
    (SELECT ff + 2 AS x FROM {t} UNION ALL SELECT ff + 4 AS x FROM {t}) ss1
  WHERE ss1.x = e.f1 AND e.ff = 42::int8$$, 'ec1h', 'ec1t');
RESET enable_nestloop;
RESET enable_hashjoin;

-- a new table is estimated as heap estimates one never vacuumed
CREATE TABLE est_h (a int, b text) USING heap;
CREATE TABLE est_t (a int, b text) USING tessera;
INSERT INTO est_h VALUES (1, 'x'), (2, 'y');
INSERT INTO est_t VALUES (1, 'x'), (2, 'y');
SELECT (SELECT reltuples FROM pg_class WHERE relname = 'est_h') AS heap_reltuples,
       (SELECT reltuples FROM pg_class WHERE relname = 'est_t') AS tessera_reltuples;
CREATE FUNCTION tt.est_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
        RETURN substring(line FROM 'rows=(\d+)');
    END LOOP;
END $$;
SELECT tt.est_rows('SELECT * FROM est_h') = tt.est_rows('SELECT * FROM est_t') AS same_estimate;

-- a join clause below an outer join also names that join (PostgreSQL 16+
-- clause relids): a parameterized TesseraScan is built for base relations
-- only (this crashed on 17)
CREATE TABLE ojx_h (x1 int, x2 int) USING heap;
CREATE TABLE ojy_h (y1 int, y2 int) USING heap;
INSERT INTO ojx_h VALUES (1, 11), (2, 22), (3, NULL), (4, 44), (5, NULL);
INSERT INTO ojy_h VALUES (1, 111), (2, 222), (3, 333), (4, NULL);
CREATE TABLE ojx_t (LIKE ojx_h) USING tessera;
CREATE TABLE ojy_t (LIKE ojy_h) USING tessera;
INSERT INTO ojx_t SELECT * FROM ojx_h;
INSERT INTO ojy_t SELECT * FROM ojy_h;
SELECT * FROM (ojx_t LEFT JOIN ojy_t ON x1 = y1) LEFT JOIN ojx_t xx(xx1, xx2)
  ON x1 = xx1 AND y2 IS NOT NULL ORDER BY x1;
SELECT count(*) AS differences FROM (
  (SELECT * FROM (ojx_t LEFT JOIN ojy_t ON x1 = y1) LEFT JOIN ojx_t xx(xx1, xx2)
     ON x1 = xx1 AND y2 IS NOT NULL
   EXCEPT ALL
   SELECT * FROM (ojx_h LEFT JOIN ojy_h ON x1 = y1) LEFT JOIN ojx_h xx(xx1, xx2)
     ON x1 = xx1 AND y2 IS NOT NULL)
  UNION ALL
  (SELECT * FROM (ojx_h LEFT JOIN ojy_h ON x1 = y1) LEFT JOIN ojx_h xx(xx1, xx2)
     ON x1 = xx1 AND y2 IS NOT NULL
   EXCEPT ALL
   SELECT * FROM (ojx_t LEFT JOIN ojy_t ON x1 = y1) LEFT JOIN ojx_t xx(xx1, xx2)
     ON x1 = xx1 AND y2 IS NOT NULL)) d;
DROP TABLE ojx_h, ojy_h, ojx_t, ojy_t;

DROP TABLE ec1h, ec1t, est_h, est_t;
DROP FUNCTION tt.est_rows(text);
DROP TYPE int8alias1 CASCADE;
