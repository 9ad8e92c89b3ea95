# tessera's ProcessUtility hook hands every statement on down the chain,
# also an ALTER TABLE that held nothing but tessera's storage parameters,
# so other extensions' hooks (Citus propagating DDL to shards) see it.
# hook_witness (test/modules/hook_witness) stands in for such an
# extension and reports each ALTER/CREATE TABLE it is given.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# scripts/test.sh installs it; make installcheck leaves it to
# "make install-test-modules" (it installs into the server's libdir)
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all => 'hook_witness is not installed (make install-test-modules)'
  unless -f "$pkglibdir/hook_witness.so";

# $first is loaded first, so the other one's hook runs first
sub node_with
{
	my ($name, $libs) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = '$libs'\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION tessera');
	$node->safe_psql('postgres', 'CREATE TABLE t (a int) USING tessera');
	return $node;
}

sub witness
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SET hook_witness.enabled = on; $sql");
	my @seen = ($err =~ /hook_witness: ([^\n]*)/g);
	return ($ret, join("\n", @seen));
}

# tessera's hook first (loaded last), the witness after it
my $node = node_with('tessera_first', 'hook_witness, tessera');
my ($ret, $seen) = witness($node, 'ALTER TABLE t SET (tessera_compression = lz4)');
is($ret, 0, 'ALTER TABLE SET (tessera_...) succeeds');
is($seen, 'ALTER TABLE t, 0 command(s)', 'an ALTER TABLE with only tessera options still reaches the next hook');
is($node->safe_psql('postgres', "SELECT reloptions FROM pg_class WHERE relname = 't'"),
	'{tessera_compression=lz4}', 'and tessera applied its option');

($ret, $seen) = witness($node, 'ALTER TABLE t SET (tessera_compression = zstd, fillfactor = 70)');
is($seen, 'ALTER TABLE t, 1 command(s); SET fillfactor', 'other options go down the chain');
is($node->safe_psql('postgres', "SELECT reloptions FROM pg_class WHERE relname = 't'"),
	'{fillfactor=70,tessera_compression=zstd}', 'both applied');

($ret, $seen) = witness($node, 'ALTER TABLE t RESET (tessera_compression)');
is($seen, 'ALTER TABLE t, 0 command(s)', 'RESET of only tessera options reaches the next hook');

($ret, $seen) = witness($node, 'CREATE TABLE c (a int) USING tessera WITH (tessera_compression = lz4)');
is($seen, 'CREATE TABLE c; WITH', 'CREATE TABLE reaches the next hook');

($ret, $seen) = witness($node, 'ALTER TABLE t ADD COLUMN b int');
is($seen, 'ALTER TABLE t, 1 command(s)', 'ordinary ALTER TABLE reaches the next hook');
$node->stop;

# the witness first: it sees the statement as written, tessera options included
$node = node_with('witness_first', 'tessera, hook_witness');
($ret, $seen) = witness($node, 'ALTER TABLE t SET (tessera_compression = lz4)');
is($ret, 0, 'ALTER TABLE SET (tessera_...) succeeds with the witness first');
is($seen, 'ALTER TABLE t, 1 command(s); SET tessera_compression',
	'a hook before tessera sees tessera options');
is($node->safe_psql('postgres', "SELECT reloptions FROM pg_class WHERE relname = 't'"),
	'{tessera_compression=lz4}', 'and tessera applied its option');
$node->stop;

done_testing();
