-- What does not work yet fails cleanly, before changing anything.
CREATE TABLE u (a int, b text) USING tessera;
INSERT INTO u SELECT i, 'row ' || i FROM generate_series(1, 10) i;
UPDATE u SET b = 'changed' WHERE a = 1;
DELETE FROM u WHERE a = 2;
SELECT * FROM u WHERE a = 3 FOR UPDATE;
SELECT * FROM u WHERE a = 3 FOR SHARE;
CREATE INDEX ON u (a);
ALTER TABLE u ADD PRIMARY KEY (a);
CREATE TABLE u2 (a int PRIMARY KEY) USING tessera;
MERGE INTO u USING (SELECT 1 AS a) s ON u.a = s.a WHEN MATCHED THEN UPDATE SET b = 'merged';
TRUNCATE u;
INSERT INTO u VALUES (1, 'still writable');
SELECT * FROM u;
DROP TABLE u;
