# pg_dump / pg_restore carry tessera tables, their rows and their options.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $node = tessera_node('dump');
$node->safe_psql('postgres', q{
	CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
	CREATE TABLE t (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp, m mood, j jsonb, a int[]) USING tessera
		WITH (tessera_compression = 'lz4', tessera_row_group_row_limit = 1000, fillfactor = 80);
	CREATE TABLE p (k int, v text) PARTITION BY RANGE (k);
	CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100) USING tessera
		WITH (tessera_compression = 'zstd', tessera_compression_level = 9);
	CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (100) TO (200);
	CREATE TABLE dropped (a int, gone text, b int) USING tessera;
	INSERT INTO dropped SELECT i, 'x', i FROM generate_series(1, 50) i;
	ALTER TABLE dropped DROP COLUMN gone;
	CREATE MATERIALIZED VIEW mv USING tessera AS SELECT c1, c2 FROM t WITH NO DATA;
});
$node->safe_psql('postgres', seed_sql('t (c1, c2, c3, c4, c5)', 1, 25000));
$node->safe_psql('postgres', q{
	INSERT INTO t (c1, m, j, a) VALUES (-1, 'happy', '{"k": [1, 2]}', '{1,NULL,3}');
	INSERT INTO p SELECT i, 'x' || md5(i::text) FROM generate_series(0, 199) i;
	REFRESH MATERIALIZED VIEW mv;
});

my @checks = (
	'SELECT count(*), sum(c1), sum(c3), sum(c4), max(c5), max(m), max(j::text), max(a::text) FROM t',
	'SELECT tableoid::regclass, count(*), md5(string_agg(v, \',\' ORDER BY k)) FROM p GROUP BY 1 ORDER BY 1',
	'SELECT * FROM dropped ORDER BY a',
	'SELECT count(*), sum(c1) FROM mv',
	"SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname IN ('t', 'p1', 'p2', 'dropped', 'mv') ORDER BY 1",
	'SELECT relation::text, compression, compression_level, row_group_row_limit FROM tessera.options ORDER BY 1',
);
my %expect = map { $_ => $node->safe_psql('postgres', $_) } @checks;

my $tmp = PostgreSQL::Test::Utils::tempdir;

# custom format, restored into a new database in one session
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/dump.custom", '-d', $node->connstr('postgres') ],
	'pg_dump custom format');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), "$tmp/dump.custom" ],
	'pg_restore');
foreach my $q (@checks)
{
	is($node->safe_psql('restored', $q), $expect{$q}, "restored: $q");
}
ok($node->safe_psql('restored', "SELECT count(*) FROM tessera.chunks WHERE relation = 'p1'::regclass AND codec = 'zstd'") > 0,
	'restored rows were written with the restored options');

# directory format with parallel restore (several sessions)
$node->command_ok([ 'pg_dump', '-Fd', '-j', '2', '-f', "$tmp/dump.dir", '-d', $node->connstr('postgres') ],
	'pg_dump directory format');
$node->safe_psql('postgres', 'CREATE DATABASE restored_j');
$node->command_ok([ 'pg_restore', '-j', '2', '-d', $node->connstr('restored_j'), "$tmp/dump.dir" ],
	'parallel pg_restore');
foreach my $q (@checks)
{
	is($node->safe_psql('restored_j', $q), $expect{$q}, "parallel restore: $q");
}

# plain SQL format through psql
$node->command_ok([ 'pg_dump', '-f', "$tmp/dump.sql", '-d', $node->connstr('postgres') ], 'pg_dump plain');
$node->safe_psql('postgres', 'CREATE DATABASE restored_sql');
$node->command_ok([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-q', '-f', "$tmp/dump.sql", '-d', $node->connstr('restored_sql') ],
	'plain dump replays');
is($node->safe_psql('restored_sql', $checks[0]), $expect{ $checks[0] }, 'plain restore has the rows');
is($node->safe_psql('restored_sql', $checks[5]), $expect{ $checks[5] }, 'plain restore has the options');

$node->stop;
done_testing();
