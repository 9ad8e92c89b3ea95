/*-------------------------------------------------------------------------
 *
 * options.c
 *	  Per-table write options of tessera tables, their tessera.* defaults,
 *	  and the options of a table CREATE TABLE AS is creating.
 *
 * NOTES
 *	  The options are tessera_compression, tessera_compression_level,
 *	  tessera_stripe_row_limit, tessera_row_group_row_limit and
 *	  tessera_delta_row_limit (also accepted as tessera.compression etc.).
 *	  They are stored in pg_class.reloptions, so pg_dump, pg_restore and
 *	  ALTER TABLE ... SET ACCESS METHOD carry them.
 *
 *	  PostgreSQL validates a table's reloptions against the heap option
 *	  table, which an extension cannot extend, so the utility hook takes
 *	  tessera options out of CREATE TABLE / CREATE TABLE AS / ALTER TABLE
 *	  before PostgreSQL sees them, validates them here against a reloption
 *	  kind of our own (PostgreSQL's parser, messages and range checks), and
 *	  writes them into pg_class.reloptions itself.  Relcache builds parse
 *	  reloptions without validation and ignore names they do not know.
 *
 *	  An option that is not set follows the tessera.* setting of the
 *	  session that writes.  CREATE TABLE AS writes its rows before the hook
 *	  can store the new table's options: they are pending here meanwhile
 *	  (one statement at a time per backend), bound to the relation once the
 *	  hook recognizes it among the relations the statement created.
 *
 *	  The codec names are listed once, here, for the setting and the
 *	  storage parameter alike.
 *
 * IDENTIFICATION
 *	  src/catalog/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "tessera/options.h"
#include "tessera/tessera.h"

typedef struct TesseraRdOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			compression;
	int			compression_level;
	int			stripe_row_limit;
	int			row_group_row_limit;
	int			delta_row_limit;
} TesseraRdOptions;

int			tessera_compression = TESSERA_CODEC_AUTO;
int			tessera_compression_level = TESSERA_DEFAULT_COMPRESSION_LEVEL;
int			tessera_stripe_row_limit = 150000;
int			tessera_row_group_row_limit = 10000;
int			tessera_delta_row_limit = 1000;

/* the one list of codec names: tessera.compression and tessera_compression */
const struct config_enum_entry TesseraCodecEntries[] = {
	{"none", TESSERA_CODEC_NONE, false},
	{"pglz", TESSERA_CODEC_PGLZ, false},
	{"lz4", TESSERA_CODEC_LZ4, false},
	{"zstd", TESSERA_CODEC_ZSTD, false},
	{"auto", TESSERA_CODEC_AUTO, false},
	{NULL, 0, false}
};

static relopt_kind tessera_relopt_kind;
static relopt_enum_elt_def codec_options[lengthof(TesseraCodecEntries)];

/*
 * Options of the table that the running CREATE TABLE AS is creating: the
 * rows it writes must already use them, before the utility hook can store
 * them in pg_class.
 */
static Datum pending_options = (Datum) 0;
static bool pending_active = false;
static Oid	pending_relid = InvalidOid;

static const relopt_parse_elt tessera_relopt_tab[] = {
	{"tessera_compression", RELOPT_TYPE_ENUM, offsetof(TesseraRdOptions, compression)},
	{"tessera_compression_level", RELOPT_TYPE_INT, offsetof(TesseraRdOptions, compression_level)},
	{"tessera_stripe_row_limit", RELOPT_TYPE_INT, offsetof(TesseraRdOptions, stripe_row_limit)},
	{"tessera_row_group_row_limit", RELOPT_TYPE_INT, offsetof(TesseraRdOptions, row_group_row_limit)},
	{"tessera_delta_row_limit", RELOPT_TYPE_INT, offsetof(TesseraRdOptions, delta_row_limit)}
};

/* "not set" marker: the option then follows its GUC */
#define UNSET (-1)

void
TesseraRegisterReloptions(void)
{
	for (int i = 0; i < lengthof(TesseraCodecEntries); i++)
	{
		codec_options[i].string_val = TesseraCodecEntries[i].name;
		codec_options[i].symbol_val = TesseraCodecEntries[i].val;
	}
	tessera_relopt_kind = add_reloption_kind();
	add_enum_reloption(tessera_relopt_kind, "tessera_compression",
					   "Compression codec of a tessera table.",
					   codec_options, UNSET,
					   "Valid values are \"none\", \"pglz\", \"lz4\", \"zstd\" and \"auto\".",
					   ShareUpdateExclusiveLock);
	add_int_reloption(tessera_relopt_kind, "tessera_compression_level",
					  "Compression level of a tessera table (zstd).",
					  UNSET, TESSERA_MIN_COMPRESSION_LEVEL, TESSERA_MAX_COMPRESSION_LEVEL,
					  ShareUpdateExclusiveLock);
	add_int_reloption(tessera_relopt_kind, "tessera_stripe_row_limit",
					  "Maximum rows per stripe of a tessera table.",
					  UNSET, TESSERA_MIN_STRIPE_ROWS, TESSERA_MAX_STRIPE_ROWS,
					  ShareUpdateExclusiveLock);
	add_int_reloption(tessera_relopt_kind, "tessera_row_group_row_limit",
					  "Maximum rows per row group of a tessera table.",
					  UNSET, TESSERA_MIN_ROW_GROUP_ROWS, TESSERA_MAX_ROW_GROUP_ROWS,
					  ShareUpdateExclusiveLock);
	add_int_reloption(tessera_relopt_kind, "tessera_delta_row_limit",
					  "Writes of at most this many rows go to the delta of a tessera table (0: never).",
					  UNSET, 0, TESSERA_MAX_DELTA_ROWS,
					  ShareUpdateExclusiveLock);
}

const char *
TesseraCodecName(int codec)
{
	for (int i = 0; codec_options[i].string_val; i++)
		if (codec_options[i].symbol_val == codec)
			return codec_options[i].string_val;
	return "unknown";
}

int
TesseraCodecFromName(const char *name)
{
	for (int i = 0; codec_options[i].string_val; i++)
		if (pg_strcasecmp(codec_options[i].string_val, name) == 0)
			return codec_options[i].symbol_val;
	return -1;
}

static bool
is_tessera_def(DefElem *def)
{
	if (def->defnamespace != NULL)
		return strcmp(def->defnamespace, "tessera") == 0;
	return strncmp(def->defname, "tessera_", 8) == 0;
}

/*
 * TesseraExtractOptions
 *		Split a statement's option list into tessera options (returned,
 *		normalized to tessera_<name> without namespace) and the rest (left
 *		in *options).
 */
List *
TesseraExtractOptions(List **options)
{
	List	   *rest = NIL;
	List	   *ours = NIL;
	ListCell   *lc;

	foreach(lc, *options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (!is_tessera_def(def))
		{
			rest = lappend(rest, def);
			continue;
		}
		if (def->defnamespace != NULL)
			def = makeDefElemExtended(NULL, psprintf("tessera_%s", def->defname),
									  def->arg, def->defaction, def->location);
		ours = lappend(ours, def);
	}
	*options = rest;
	return ours;
}

/* Does a reloptions array hold tessera options? */
bool
TesseraRelOptionsPresent(Datum reloptions)
{
	List	   *list = untransformRelOptions(reloptions);

	return TesseraExtractOptions(&list) != NIL;
}

/* A reloptions array without its tessera options ((Datum) 0 if empty). */
Datum
TesseraStripRelOptions(Datum reloptions)
{
	List	   *list = untransformRelOptions(reloptions);

	(void) TesseraExtractOptions(&list);
	return transformRelOptions((Datum) 0, list, NULL, NULL, false, false);
}

/* Only the tessera options of a reloptions array ((Datum) 0 if none). */
Datum
TesseraOnlyRelOptions(Datum reloptions)
{
	List	   *list = untransformRelOptions(reloptions);
	List	   *ours = TesseraExtractOptions(&list);

	return transformRelOptions((Datum) 0, ours, NULL, NULL, false, false);
}

/*
 * TesseraApplyOptions
 *		Apply SET (isReset = false) or RESET definitions to a tessera
 *		options array and validate the result, with PostgreSQL's messages.
 */
Datum
TesseraApplyOptions(Datum current, List *defs, bool isReset)
{
	Datum		result = transformRelOptions(current, defs, NULL, NULL, false, isReset);

	if (result != (Datum) 0)
		pfree(build_reloptions(result, true, tessera_relopt_kind, sizeof(TesseraRdOptions),
							   tessera_relopt_tab, lengthof(tessera_relopt_tab)));
	return result;
}

/*
 * TesseraSetRelOptions
 *		Replace the tessera options in relid's pg_class.reloptions.
 */
void
TesseraSetRelOptions(Oid relid, Datum tessera_options)
{
	Relation	pg_class = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	Datum		values[Natts_pg_class];
	bool		nulls[Natts_pg_class];
	bool		replace[Natts_pg_class];
	bool		isnull;
	Datum		old;
	List	   *merged;
	Datum		newopts;
	HeapTuple	newtup;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	old = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	merged = isnull ? NIL : untransformRelOptions(old);
	(void) TesseraExtractOptions(&merged);
	merged = list_concat(merged, untransformRelOptions(tessera_options));
	newopts = transformRelOptions((Datum) 0, merged, NULL, NULL, false, false);

	memset(replace, false, sizeof(replace));
	memset(nulls, false, sizeof(nulls));
	replace[Anum_pg_class_reloptions - 1] = true;
	values[Anum_pg_class_reloptions - 1] = newopts;
	nulls[Anum_pg_class_reloptions - 1] = (newopts == (Datum) 0);
	newtup = heap_modify_tuple(tup, RelationGetDescr(pg_class), values, nulls, replace);
	CatalogTupleUpdate(pg_class, &newtup->t_self, newtup);
	heap_freetuple(newtup);
	heap_freetuple(tup);
	table_close(pg_class, RowExclusiveLock);
	CommandCounterIncrement();
}

/* The reloptions of relid ((Datum) 0 if none), palloc'd. */
Datum
TesseraGetRelOptions(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Datum		result = (Datum) 0;

	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);

		if (!isnull)
			result = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		ReleaseSysCache(tup);
	}
	return result;
}

/*
 * TesseraGetOptions
 *		The options that apply to writes into relid now: its own, else the
 *		session's GUCs.  pending, if not (Datum) 0, holds options of a table
 *		being created by the current statement.
 */
void
TesseraGetOptions(Oid relid, TesseraOptions *opts)
{
	Datum		reloptions = TesseraGetRelOptions(relid);
	Datum		pending = (pending_active && OidIsValid(relid) && relid == pending_relid) ?
		pending_options : (Datum) 0;

	opts->compression = tessera_compression;
	opts->compression_level = tessera_compression_level;
	opts->stripe_row_limit = tessera_stripe_row_limit;
	opts->row_group_row_limit = tessera_row_group_row_limit;
	opts->delta_row_limit = tessera_delta_row_limit;

	for (int pass = 0; pass < 2; pass++)
	{
		Datum		d = pass == 0 ? reloptions : pending;
		TesseraRdOptions *ro;

		if (d == (Datum) 0)
			continue;
		ro = (TesseraRdOptions *) build_reloptions(d, false, tessera_relopt_kind,
												   sizeof(TesseraRdOptions),
												   tessera_relopt_tab,
												   lengthof(tessera_relopt_tab));
		if (ro == NULL)
			continue;
		if (ro->compression != UNSET)
			opts->compression = ro->compression;
		if (ro->compression_level != UNSET)
			opts->compression_level = ro->compression_level;
		if (ro->stripe_row_limit != UNSET)
			opts->stripe_row_limit = ro->stripe_row_limit;
		if (ro->row_group_row_limit != UNSET)
			opts->row_group_row_limit = ro->row_group_row_limit;
		if (ro->delta_row_limit != UNSET)
			opts->delta_row_limit = ro->delta_row_limit;
		pfree(ro);
	}
}

void
TesseraBeginPendingOptions(Datum options)
{
	pending_options = options;
	pending_relid = InvalidOid;
	pending_active = true;
}

/* Are pending options waiting for the relation they belong to? */
bool
TesseraPendingOptionsUnbound(void)
{
	return pending_active && !OidIsValid(pending_relid);
}

void
TesseraBindPendingOptions(Oid relid)
{
	Assert(pending_active);
	pending_relid = relid;
}

void
TesseraEndPendingOptions(void)
{
	pending_active = false;
	pending_relid = InvalidOid;
	pending_options = (Datum) 0;
}
