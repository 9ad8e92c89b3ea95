# ALTER EXTENSION tessera UPDATE from every earlier version keeps the data
# and leaves the same objects a fresh CREATE EXTENSION makes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $node = tessera_node('update');
my $default = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'tessera'");
my @versions = split /\n/, $node->safe_psql('postgres',
	"SELECT version FROM pg_available_extension_versions WHERE name = 'tessera' ORDER BY version");
ok(scalar(@versions) >= 2, 'more than one version to update from: ' . join(', ', @versions));

# every member of the extension with what defines it
my $objects = q{
	SELECT pg_describe_object(d.classid, d.objid, 0) || ' ' ||
		CASE
		WHEN d.classid = 'pg_proc'::regclass THEN
			(SELECT pg_get_function_identity_arguments(p.oid) || ' -> ' ||
				pg_get_function_result(p.oid) || ' ' || p.prosrc || ' ' ||
				coalesce(p.proacl::text, '') || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
			 FROM pg_proc p WHERE p.oid = d.objid)
		WHEN d.classid = 'pg_class'::regclass THEN
			(SELECT c.relkind::text || ' ' || coalesce(pg_get_viewdef(c.oid), '') || ' ' ||
				coalesce(c.relacl::text, '') || ' ' || (c.relrewrite = c.oid)::text || ' ' ||
				(SELECT string_agg(attname || ':' || format_type(atttypid, atttypmod), ',' ORDER BY attnum)
				 FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped)
			 FROM pg_class c WHERE c.oid = d.objid)
		ELSE '' END
	FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
	WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'tessera' AND d.deptype = 'e'
	ORDER BY 1};
my $fresh = $node->safe_psql('postgres', $objects);

my $data = q{
	SELECT count(*), sum(id), md5(string_agg(note, ',' ORDER BY id)), sum(v) FROM t;
	SET enable_seqscan = off; SET tessera.enable_custom_scan = off;
	SELECT note FROM t WHERE id = 4242;
	SELECT compression FROM tessera.options WHERE relation = 't'::regclass;
	-- the old version's SQL over the new library
	SELECT count(*), sum(value_count), sum(stored_bytes) FROM tessera.chunks
	WHERE relation = 't'::regclass;
};

foreach my $from (grep { $_ ne $default } @versions)
{
	my $db = "from_" . ($from =~ s/\./_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		CREATE EXTENSION tessera VERSION '$from';
		CREATE TABLE t (id int PRIMARY KEY, note text, v numeric(10,2)) USING tessera
			WITH (tessera_compression = 'lz4');
		INSERT INTO t SELECT i, md5(i::text), i / 3.0 FROM generate_series(1, 50000) i;
		DELETE FROM t WHERE id % 10 = 0;
		UPDATE t SET note = 'updated' WHERE id % 7 = 0;
		INSERT INTO t VALUES (100001, 'delta row', 1);
	});
	my $before = $node->safe_psql($db, $data);
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'tessera'"),
		$from, "installed $from");

	$node->safe_psql($db, 'ALTER EXTENSION tessera UPDATE');
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'tessera'"),
		$default, "$from updated to $default");
	is($node->safe_psql($db, $data), $before, "$from -> $default: rows, index and options kept");
	is($node->safe_psql($db, $objects), $fresh,
		"$from -> $default: the same objects as a fresh install");
	is($node->safe_psql($db, 'SELECT count(*) FROM tessera.verify(\'t\')'), '0',
		"$from -> $default: verify finds nothing");

	# the updated objects work: new columns, new views, writes after the update
	$node->safe_psql($db, q{INSERT INTO t SELECT i, md5(i::text), 0 FROM generate_series(200001, 230000) i});
	ok($node->safe_psql($db, 'SELECT count(*) FROM tessera.chunks WHERE relation = \'t\'::regclass AND framed') > 0,
		"$from -> $default: chunk_info shows framed chunks");
	is($node->safe_psql($db, 'SELECT enabled FROM tessera.shared_cache'), 'f',
		"$from -> $default: shared cache view");
}

$node->stop;
done_testing();
