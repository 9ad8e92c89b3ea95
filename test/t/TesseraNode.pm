# Helpers shared by tessera's TAP tests.
package TesseraNode;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use Exporter 'import';

our @EXPORT = qw(tessera_node seed_sql same_results crash_and_restart);

# A started node with tessera preloaded and the extension created.
sub tessera_node
{
	my ($name, %params) = @_;
	my $extra = delete $params{conf} // '';
	my $node = PostgreSQL::Test::Cluster->new($name);
	# 18's initdb turns page checksums on: the tests look at what tessera
	# itself detects, as on the versions before
	$params{extra} = [@{ $params{extra} // [] }, '--no-data-checksums']
	  if $node->pg_version >= 18;
	$node->init(%params);
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tessera'
max_prepared_transactions = 5
restart_after_crash = on
$extra
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION tessera');
	return $node;
}

# SQL loading the seed table's rows first..last into table $t.
sub seed_sql
{
	my ($t, $first, $last, $tag) = @_;
	$tag //= 'seed';
	return qq{INSERT INTO $t SELECT i, '$tag', i % 1000, (i % 100000)::numeric / 7,
		timestamp '2024-01-01' + i * interval '1 second' FROM generate_series($first, $last) i};
}

# The same query on two nodes (or twice on one) returns the same rows.
sub same_results
{
	my ($node_a, $node_b, $query, $name) = @_;
	my $a = $node_a->safe_psql('postgres', $query);
	my $b = $node_b->safe_psql('postgres', $query);
	Test::More::is($b, $a, $name);
}

# Crash the node: either kill -9 one backend (the postmaster then resets
# shared memory and runs crash recovery) or an immediate shutdown (no
# checkpoint; the next start recovers).  Killing the postmaster itself is
# not portable to containers whose init does not reap it.
sub crash_and_restart
{
	my ($node, $backend_pid) = @_;
	if (defined $backend_pid)
	{
		kill(9, $backend_pid);
		# wait until the postmaster has reset and recovered
		$node->poll_query_until('postgres', 'SELECT pg_is_in_recovery() = false')
		  or die 'no recovery after killing a backend';
		return;
	}
	$node->stop('immediate');
	$node->start;
}

1;
