/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  SQL functions that show what a tessera table holds on disk: stripes,
 *	  row groups, chunks, compression ratio, options.
 *
 * NOTES
 *	  They read under the caller's snapshot after writing out this
 *	  backend's buffered rows of the table, so they agree with what a
 *	  SELECT in the same transaction sees.  The caller needs SELECT on the
 *	  table or on some of its columns (as count(*) does).  Min/max values
 *	  are data: as pg_stats does, chunk_info lists only columns the caller
 *	  may SELECT, and shows no values while row-level security is active
 *	  for the caller (they could come from rows its policies hide).
 *
 * IDENTIFICATION
 *	  src/debug/inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/options.h"
#include "tessera/shared_cache.h"
#include "tessera/reader.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

PG_FUNCTION_INFO_V1(tessera_stripe_info);
PG_FUNCTION_INFO_V1(tessera_catalog_bytes);
PG_FUNCTION_INFO_V1(tessera_row_group_info);
PG_FUNCTION_INFO_V1(tessera_chunk_info);
PG_FUNCTION_INFO_V1(tessera_compression_ratio);
PG_FUNCTION_INFO_V1(tessera_table_options);
PG_FUNCTION_INFO_V1(tessera_shared_cache_stats);

static const char *const encoding_names[TESSERA_ENC_COUNT] = {
	"absent", "plain", "integer", "dictionary", "decimal", "packed"
};

/* Open relid as a tessera table the caller may read. */
static Relation
open_tessera(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);

	if (!IsTesseraRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tessera table", RelationGetRelationName(rel))));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(relid, GetUserId(), ACL_SELECT, ACLMASK_ANY) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));
	TesseraFlushRelation(rel);
	return rel;
}

Datum
tessera_stripe_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel = open_tessera(PG_GETARG_OID(0));
	TesseraReader *r;

	InitMaterializedSRF(fcinfo, 0);
	r = TesseraReaderBegin(rel, GetActiveSnapshot(), false);
	for (int i = 0; i < r->nstripes; i++)
	{
		TesseraStripe *s = &r->stripes[i].meta;
		Datum		values[9];
		bool		nulls[9] = {0};

		values[0] = Int64GetDatum((int64) s->stripe_id);
		values[1] = Int64GetDatum((int64) s->first_rownum);
		values[2] = Int64GetDatum((int64) r->stripes[i].visible_rows);
		values[3] = Int32GetDatum((int32) s->n_row_groups);
		values[4] = Int64GetDatum((int64) s->start_block);
		values[5] = Int64GetDatum((int64) s->nblocks);
		values[6] = Int64GetDatum((int64) s->data_bytes);
		values[7] = Int64GetDatum((int64) s->dir_bytes);
		values[8] = BoolGetDatum((s->flags & TESSERA_STRIPE_DELTA) != 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	TesseraReaderEnd(r);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * tessera.catalog_bytes(regclass): what the table's stripe catalog rows --
 * its delta included -- take in tessera_internal.stripe.
 */
Datum
tessera_catalog_bytes(PG_FUNCTION_ARGS)
{
	Relation	rel = open_tessera(PG_GETARG_OID(0));
	TesseraMeta meta;
	uint64		bytes = 0;

	TesseraReadMeta(rel, &meta);
	if (meta.valid)
		bytes = TesseraCatalogBytes(meta.storage_id, GetActiveSnapshot());
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) bytes);
}

Datum
tessera_row_group_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel = open_tessera(PG_GETARG_OID(0));
	TesseraReader *r;

	InitMaterializedSRF(fcinfo, 0);
	r = TesseraReaderBegin(rel, GetActiveSnapshot(), false);
	for (int i = 0; i < r->nstripes; i++)
	{
		TesseraStripeDir *dir = TesseraReaderDir(r, i);

		for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
		{
			Datum		values[8];
			bool		nulls[8] = {0};
			int64		logical = 0,
						raw = 0,
						stored = 0;

			for (uint32 a = 0; a < dir->hdr.natts; a++)
			{
				TesseraChunkDisk *c = TesseraReaderChunk(r, i, (int) g, (int) a);

				logical += c->logical_bytes;
				raw += c->raw_bytes;
				stored += c->stored_bytes;
			}
			values[0] = Int64GetDatum((int64) r->stripes[i].meta.stripe_id);
			values[1] = Int32GetDatum((int32) g);
			values[2] = Int64GetDatum((int64) dir->rgs[g].first_rownum);
			values[3] = Int64GetDatum((int64) dir->rgs[g].row_count);
			values[4] = Int64GetDatum(logical);
			values[5] = Int64GetDatum(raw);
			values[6] = Int64GetDatum(stored);
			values[7] = Int64GetDatum(dir->dead ? (int64) dir->dead[g].value_count : 0);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	TesseraReaderEnd(r);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

static text *
stat_text(TesseraColumnType *type, const char *stats, uint32 off, uint32 len)
{
	Datum		d = TesseraStatDeserialize(type, stats + off, len);
	Oid			outfunc;
	bool		isvarlena;

	if (d == (Datum) 0 && !type->typbyval)
		return NULL;
	getTypeOutputInfo(type->typid, &outfunc, &isvarlena);
	return cstring_to_text(OidOutputFunctionCall(outfunc, d));
}

Datum
tessera_chunk_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel = open_tessera(PG_GETARG_OID(0));
	TupleDesc	desc = RelationGetDescr(rel);
	TesseraColumnType *types = palloc0(sizeof(TesseraColumnType) * Max(desc->natts, 1));
	bool	   *readable = palloc0(sizeof(bool) * Max(desc->natts, 1));
	bool		table_select = pg_class_aclcheck(RelationGetRelid(rel), GetUserId(),
												 ACL_SELECT) == ACLCHECK_OK;
	bool		show_values = check_enable_rls(RelationGetRelid(rel), InvalidOid, true) != RLS_ENABLED;
	TesseraReader *r;

	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		if (attr->attisdropped)
			continue;
		TesseraColumnTypeInit(&types[a], attr);
		readable[a] = table_select ||
			pg_attribute_aclcheck(RelationGetRelid(rel), attr->attnum, GetUserId(),
								  ACL_SELECT) == ACLCHECK_OK;
	}

	InitMaterializedSRF(fcinfo, 0);
	r = TesseraReaderBegin(rel, GetActiveSnapshot(), false);
	for (int i = 0; i < r->nstripes; i++)
	{
		TesseraStripeDir *dir = TesseraReaderDir(r, i);

		for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
		{
			for (uint32 a = 0; a < dir->hdr.natts && a < (uint32) desc->natts; a++)
			{
				TesseraChunkDisk *c = TesseraReaderChunk(r, i, (int) g, (int) a);
				Form_pg_attribute attr = TupleDescAttr(desc, a);
				Datum		values[15];
				bool		nulls[15] = {0};
				text	   *t;

				if (attr->attisdropped || !readable[a])
					continue;
				values[0] = Int64GetDatum((int64) r->stripes[i].meta.stripe_id);
				values[1] = Int32GetDatum((int32) g);
				values[2] = Int32GetDatum(attr->attnum);
				values[3] = NameGetDatum(&attr->attname);
				values[4] = CStringGetTextDatum(encoding_names[c->encoding]);
				values[5] = CStringGetTextDatum(TesseraCodecName(c->codec));
				values[6] = Int64GetDatum((int64) c->value_count);
				values[7] = Int64GetDatum((int64) dir->rgs[g].row_count - c->value_count);
				values[8] = Int64GetDatum((int64) c->logical_bytes);
				values[9] = Int64GetDatum((int64) c->raw_bytes);
				values[10] = Int64GetDatum((int64) c->stored_bytes);
				nulls[11] = nulls[12] = true;
				if ((c->flags & TESSERA_CHUNK_HAS_STATS) && show_values)
				{
					if ((t = stat_text(&types[a], dir->col_stats[a], c->min_off, c->min_len)) != NULL)
					{
						values[11] = PointerGetDatum(t);
						nulls[11] = false;
					}
					if ((t = stat_text(&types[a], dir->col_stats[a], c->max_off, c->max_len)) != NULL)
					{
						values[12] = PointerGetDatum(t);
						nulls[12] = false;
					}
				}
				values[13] = Int64GetDatum((int64) c->offset);
				values[14] = BoolGetDatum((c->flags & TESSERA_CHUNK_FRAMED) != 0);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
	}
	TesseraReaderEnd(r);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * Bytes of the values themselves (as PostgreSQL would hand them to a
 * function) divided by the bytes their chunks take on disk.  NULL for an
 * empty table.
 */
Datum
tessera_compression_ratio(PG_FUNCTION_ARGS)
{
	Relation	rel = open_tessera(PG_GETARG_OID(0));
	TesseraReader *r = TesseraReaderBegin(rel, GetActiveSnapshot(), false);
	double		logical = 0,
				stored = 0;

	for (int i = 0; i < r->nstripes; i++)
	{
		TesseraStripeDir *dir = TesseraReaderDir(r, i);

		for (uint32 a = 0; a < dir->hdr.natts; a++)
			for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
			{
				TesseraChunkDisk *c = TesseraReaderChunk(r, i, (int) g, (int) a);

				logical += c->logical_bytes;
				stored += c->stored_bytes;
			}
	}
	TesseraReaderEnd(r);
	relation_close(rel, AccessShareLock);
	if (logical == 0)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(stored > 0 ? logical / stored : logical);
}

Datum
tessera_table_options(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	TesseraOptions opts;
	Datum		values[5];
	bool		nulls[5] = {0};
	Relation	rel = relation_open(relid, AccessShareLock);

	if (!IsTesseraRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tessera table", RelationGetRelationName(rel))));
	relation_close(rel, AccessShareLock);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	TesseraGetOptions(relid, &opts);
	values[0] = CStringGetTextDatum(TesseraCodecName(opts.compression));
	values[1] = Int32GetDatum(opts.compression_level);
	values[2] = Int32GetDatum(opts.stripe_row_limit);
	values[3] = Int32GetDatum(opts.row_group_row_limit);
	values[4] = Int32GetDatum(opts.delta_row_limit);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * tessera.shared_cache_stats(): the shared decoded-frame cache's size and
 * counters (zeros when it is off), and this backend's own hits and misses.
 */
Datum
tessera_shared_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	uint64		stats[TESSERA_SHARED_CACHE_NSTATS];
	uint64		hits,
				misses;
	Datum		values[TESSERA_SHARED_CACHE_NSTATS + 3];
	bool		nulls[TESSERA_SHARED_CACHE_NSTATS + 3] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	TesseraSharedCacheStats(stats);
	TesseraSharedCacheBackendCounts(&hits, &misses);
	values[0] = BoolGetDatum(TesseraSharedCacheEnabled());
	for (int i = 0; i < TESSERA_SHARED_CACHE_NSTATS; i++)
		values[i + 1] = Int64GetDatum((int64) stats[i]);
	values[TESSERA_SHARED_CACHE_NSTATS + 1] = Int64GetDatum((int64) hits);
	values[TESSERA_SHARED_CACHE_NSTATS + 2] = Int64GetDatum((int64) misses);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
