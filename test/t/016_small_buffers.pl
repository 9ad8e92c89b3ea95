# Reads through remembered buffers: point reads and scans pin a stripe page
# through the buffer it was found in last (ReadRecentBuffer, see DESIGN), and
# read it without a content lock.  With shared_buffers far smaller than the
# table, one session's remembered buffers go stale all the time -- evicted,
# then holding other blocks of the same table -- and every read must still
# return what a heap twin returns.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

# 1 MB of shared buffers (128), a 1 MB fetch cache: nothing stays
my $node = tessera_node('small', conf => "shared_buffers = 1MB\ntessera.fetch_cache_size = 1\n");

# random integers and md5 text: uncompressed and compressed frames, several MB
$node->safe_psql('postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, v bigint, note text, ts timestamptz) USING tessera;
	CREATE TABLE h (id int PRIMARY KEY, v bigint, note text, ts timestamptz) USING heap;
	SELECT setseed(0.16);
	INSERT INTO h SELECT i, (random() * 1e12)::bigint, md5(random()::text),
		timestamptz '2024-01-01' + random() * interval '365 days'
	FROM generate_series(1, 200000) i;
	INSERT INTO t SELECT * FROM h ORDER BY id;
	VACUUM ANALYZE t, h;
});
ok($node->safe_psql('postgres', q{SELECT pg_relation_size('t') > 4 * 1024 * 1024}) eq 't',
	'the table is several times shared_buffers');

# rounds of lookups in random key order, then a scan, in one session: each
# round's pins meet buffers the last round's (and the scan's) remembered
sub round_sql
{
	my ($table, $round) = @_;
	my $ids = join(',', map { ($_ * 7919 + $round * 104729) % 200000 + 1 } 1 .. 400);
	return qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT md5(string_agg(id || ':' || v || ':' || note || ':' || ts, ',' ORDER BY id))
		FROM $table WHERE id IN ($ids);
		RESET enable_seqscan; RESET enable_bitmapscan;
		SELECT count(*), sum(v), md5(string_agg(note, ',' ORDER BY id)), max(ts)
		FROM $table WHERE id % 7 = $round % 7;
	};
}
my ($heap_out, $tess_out) = ('', '');
for my $round (1 .. 6)
{
	$heap_out .= $node->safe_psql('postgres', round_sql('h', $round)) . "\n";
}
$tess_out = $node->safe_psql('postgres', join('', map { round_sql('t', $_) } 1 .. 6));
is($tess_out . "\n", $heap_out, 'lookups and scans in one session with stale remembered buffers');

done_testing();
