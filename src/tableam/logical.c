/*-------------------------------------------------------------------------
 *
 * logical.c
 *	  Logical decoding of tessera tables: the rows a change inserts,
 *	  updates or deletes, logged at wal_level = logical in records of
 *	  tessera's resource manager, and turned back into the reorder buffer's
 *	  ordinary changes by its rm_decode callback.
 *
 * NOTES
 *	  Stripe pages are logged as page images and the row states as generic
 *	  WAL: neither says which rows a transaction changed, and decoding them
 *	  would need the table's descriptor, which a decoder has only at commit
 *	  (under a historic snapshot).  So, as heap does, the writer logs the
 *	  rows themselves, in heap tuple format (what output plugins read), when
 *	  the change happens:
 *
 *	  - INSERT: one record per row (tuple_insert; INSERT_ONE, a few bytes
 *		shorter than heap's record for the same row), or per batch of COPY's
 *		rows (multi_insert, up to ROWS_PER_RECORD rows or BATCH_BYTES),
 *		whose rows are compressed together when that pays: a load at
 *		logical level writes its stripes plus the compressed rows, which is
 *		less than heap's WAL for the same rows.  A speculative insertion
 *		(ON CONFLICT) is logged when it is confirmed, never when it loses.
 *	  - UPDATE: the new row, and the old row's replica identity when heap
 *		would log it: the whole old row for REPLICA IDENTITY FULL, the key
 *		columns (others NULL) when the update changes them.
 *	  - DELETE: the old row's replica identity (none for NOTHING, or for
 *		DEFAULT without a primary key: then the change has no old tuple,
 *		as heap's has not).
 *	  - TRUNCATE needs nothing here: PostgreSQL logs it for every table AM.
 *
 *	  Rows are logged with their values in line (tessera keeps no TOAST
 *	  pointers; an external value coming in from elsewhere is fetched), so
 *	  an UPDATE's new row always carries every column, where heap sends
 *	  "unchanged toast datum" for an unchanged externally stored value.
 *	  Nothing else tessera writes is decodable: compaction, VACUUM's folds
 *	  and rewrites (CLUSTER, VACUUM FULL, ALTER TABLE ... TYPE, whose
 *	  target has relrewrite set) log no rows, and tessera's own catalog
 *	  tables are marked as rewrite targets, which the reorder buffer skips
 *	  (sql/tessera--0.3.sql).
 *
 *	  Records are written only where the resource manager is registered
 *	  (shared_preload_libraries); the utility hook refuses to publish a
 *	  tessera table otherwise.
 *
 * IDENTIFICATION
 *	  src/tableam/logical.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "executor/tuptable.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "tessera/compat.h"
#include "tessera/encoding.h"
#include "tessera/format.h"
#include "tessera/slot.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/xlog.h"

/* an INSERT record holds at most this many rows, or about this many bytes */
#define ROWS_PER_RECORD		1000
#define BATCH_BYTES			(256 * 1024)

/* the most row bytes one record carries (a WAL reader allocates it whole) */
#define MAX_RECORD_ROWS		(900 * 1024 * 1024)

/* rows of a record are compressed together from this many bytes on */
#define COMPRESS_MIN_BYTES	512

/*
 * A row in a record: its length, the header fields heap's tuple needs, and
 * then the tuple's bytes after the fixed header (null bitmap, padding,
 * data).  Stored unaligned: read with memcpy.
 */
typedef struct xl_tessera_row
{
	uint32		datalen;		/* bytes after the fixed tuple header */
	uint16		infomask2;
	uint16		infomask;
	uint8		hoff;
} xl_tessera_row;

#define SizeOfTesseraRow	(offsetof(xl_tessera_row, hoff) + sizeof(uint8))
#define SizeOfTesseraRowHead	(SizeOfTesseraRow - offsetof(xl_tessera_row, infomask2))

/* what logging a change allocates; reset after each */
static MemoryContext logical_cxt = NULL;

static MemoryContext
logical_context(void)
{
	if (logical_cxt == NULL)
		logical_cxt = AllocSetContextCreate(TopMemoryContext, "tessera logical decoding rows",
											ALLOCSET_DEFAULT_SIZES);
	return MemoryContextSwitchTo(logical_cxt);
}

/* a row batch being assembled */
typedef struct RowBatch
{
	TesseraBuf	raw;
	uint32		nrows;
} RowBatch;

/* ----------------------------------------------------------------
 *		writing
 * ----------------------------------------------------------------
 */

/*
 * Are rows written to rel by this statement (insert options, or 0) to be
 * logged for logical decoding?  As heap_insert decides, and never for the
 * target of a rewrite (its rows are the old table's, re-stored).
 */
bool
TesseraLogicalWanted(Relation rel, int options)
{
	return RelationIsLogicallyLogged(rel) && TesseraRmgrRegistered() &&
		!(options & TABLE_INSERT_NO_LOGICAL) && !OidIsValid(rel->rd_rel->relrewrite);
}

/*
 * The values of slot as a heap tuple of rel's descriptor, all values in
 * line; only the attributes in keep (FirstLowInvalidHeapAttributeNumber
 * offsets) when keep is given, the others NULL.
 */
static HeapTuple
form_row(Relation rel, TupleTableSlot *slot, Bitmapset *keep)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(desc->natts * sizeof(Datum));
	bool	   *nulls = palloc(desc->natts * sizeof(bool));
	HeapTuple	tuple;

	/* only the kept columns are decoded (a fetched slot decodes lazily) */
	if (keep == NULL)
		slot_getallattrs(slot);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		nulls[i] = true;
		values[i] = (Datum) 0;
		if (att->attisdropped ||
			(keep && !bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, keep)))
			continue;
		values[i] = keep ? slot_getattr(slot, i + 1, &nulls[i]) : slot->tts_values[i];
		if (!keep)
			nulls[i] = slot->tts_isnull[i];
		if (!nulls[i] && att->attlen == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			values[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(values[i])));
	}
	tuple = heap_form_tuple(desc, values, nulls);
	pfree(values);
	pfree(nulls);
	return tuple;
}

static void
batch_add(RowBatch *batch, HeapTuple tuple)
{
	xl_tessera_row row;

	row.datalen = tuple->t_len - SizeofHeapTupleHeader;
	row.infomask2 = tuple->t_data->t_infomask2;
	row.infomask = tuple->t_data->t_infomask;
	row.hoff = tuple->t_data->t_hoff;
	TesseraBufAppend(&batch->raw, &row, SizeOfTesseraRow);
	TesseraBufAppend(&batch->raw, (char *) tuple->t_data + SizeofHeapTupleHeader, row.datalen);
	batch->nrows++;
}

/* Log batch as one record of type info for rel, compressed when that pays. */
static void
batch_log(Relation rel, RowBatch *batch, uint8 info, uint8 flags)
{
	xl_tessera_rows xlrec;
	TesseraBuf	comp;
	int			codec = TESSERA_CODEC_NONE;

	memset(&comp, 0, sizeof(comp));
	if (batch->raw.len >= COMPRESS_MIN_BYTES)
		codec = TesseraCompressIfPays(TESSERA_CODEC_ZSTD, 1, &batch->raw, &comp);

	/* heap would have moved such values to TOAST, logged piecewise */
	if ((codec != TESSERA_CODEC_NONE ? comp.len : batch->raw.len) > MAX_RECORD_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rows of %zu bytes are too large to log for logical decoding",
						(Size) batch->raw.len),
				 errdetail("At wal_level = logical tessera logs a change's rows whole in one WAL record, of at most %d bytes after compression.",
						   MAX_RECORD_ROWS)));
	xlrec.node = TesseraRelLocator(rel);
	xlrec.nrows = batch->nrows;
	xlrec.rawlen = batch->raw.len;
	xlrec.codec = codec;
	xlrec.flags = flags;

	XLogBeginInsert();
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	XLogRegisterData((char *) &xlrec, SizeOfTesseraRows);
	if (codec != TESSERA_CODEC_NONE)
		XLogRegisterData(comp.data, comp.len);
	else if (batch->raw.len > 0)
		XLogRegisterData(batch->raw.data, batch->raw.len);
	(void) XLogInsert(TESSERA_RMGR_ID, info);

	if (codec != TESSERA_CODEC_NONE)
		TesseraBufFree(&comp);
	batch->raw.len = 0;
	batch->nrows = 0;
}

/* Log one small new row as an INSERT_ONE record. */
static void
log_one(Relation rel, HeapTuple tuple)
{
	RelFileLocator node = TesseraRelLocator(rel);
	xl_tessera_row row;

	row.infomask2 = tuple->t_data->t_infomask2;
	row.infomask = tuple->t_data->t_infomask;
	row.hoff = tuple->t_data->t_hoff;
	XLogBeginInsert();
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	XLogRegisterData((char *) &node, SizeOfTesseraOne);
	XLogRegisterData((char *) &row.infomask2, SizeOfTesseraRowHead);
	XLogRegisterData((char *) tuple->t_data + SizeofHeapTupleHeader,
					 tuple->t_len - SizeofHeapTupleHeader);
	(void) XLogInsert(TESSERA_RMGR_ID, XLOG_TESSERA_INSERT_ONE);
}

/*
 * TesseraLogicalInsert
 *		Log nslots new rows of rel for logical decoding (the caller checked
 *		TesseraLogicalWanted).
 */
void
TesseraLogicalInsert(Relation rel, TupleTableSlot **slots, int nslots)
{
	MemoryContext old = logical_context();
	RowBatch	batch;

	/* the transaction's xid must be in the record */
	(void) GetCurrentTransactionId();
	TesseraBufInit(&batch.raw, 1024);
	batch.nrows = 0;
	for (int i = 0; i < nslots; i++)
	{
		HeapTuple	tuple = form_row(rel, slots[i], NULL);

		if (nslots == 1 && tuple->t_len < COMPRESS_MIN_BYTES)
		{
			log_one(rel, tuple);
			break;
		}
		batch_add(&batch, tuple);
		heap_freetuple(tuple);
		if (batch.nrows >= ROWS_PER_RECORD || batch.raw.len >= BATCH_BYTES)
			batch_log(rel, &batch, XLOG_TESSERA_INSERT, 0);
	}
	if (batch.nrows > 0)
		batch_log(rel, &batch, XLOG_TESSERA_INSERT, 0);
	MemoryContextSwitchTo(old);
	MemoryContextReset(logical_cxt);
}

/*
 * The replica identity of the old row version: NULL where none is logged.
 * key_required: the change needs the key columns (a delete, or an update
 * that changes them); REPLICA IDENTITY FULL logs the whole row regardless.
 */
static HeapTuple
identity_row(Relation rel, TupleTableSlot *old, bool key_required)
{
	Bitmapset  *idattrs;
	HeapTuple	tuple;

	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_NOTHING)
		return NULL;
	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
		return form_row(rel, old, NULL);
	if (!key_required)
		return NULL;
	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	if (bms_is_empty(idattrs))
		return NULL;
	tuple = form_row(rel, old, idattrs);
	bms_free(idattrs);
	return tuple;
}

/* Do the replica identity's columns differ between old and new? */
static bool
identity_changes(Relation rel, TupleTableSlot *old, TupleTableSlot *new)
{
	Bitmapset  *idattrs;
	bool		changed;

	if (rel->rd_rel->relreplident != REPLICA_IDENTITY_DEFAULT &&
		rel->rd_rel->relreplident != REPLICA_IDENTITY_INDEX)
		return false;
	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	changed = TesseraSlotColumnsDiffer(old, new, idattrs);
	bms_free(idattrs);
	return changed;
}

/*
 * Log an UPDATE (newslot given) or DELETE of the row at otid of rel, whose
 * old version is still there to fetch (the caller has just marked it).
 */
static void
log_change(Relation rel, ItemPointer otid, TupleTableSlot *newslot)
{
	MemoryContext oldcxt = logical_context();
	TupleTableSlot *old = NULL;
	HeapTuple	oldrow = NULL;
	RowBatch	batch;
	uint8		flags = 0;

	(void) GetCurrentTransactionId();
	if (rel->rd_rel->relreplident != REPLICA_IDENTITY_NOTHING)
	{
		old = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsTessera);
		if (!TesseraFetchUnmaterialized(rel, otid, SnapshotAny, old))
			elog(ERROR, "tessera row (%u,%u) of \"%s\" vanished while it changed",
				 ItemPointerGetBlockNumberNoCheck(otid), ItemPointerGetOffsetNumberNoCheck(otid),
				 RelationGetRelationName(rel));
		oldrow = identity_row(rel, old,
							  newslot == NULL || identity_changes(rel, old, newslot));
	}

	TesseraBufInit(&batch.raw, 1024);
	batch.nrows = 0;
	if (oldrow)
	{
		batch_add(&batch, oldrow);
		flags |= XLTS_HAS_OLD;
	}
	if (newslot)
	{
		batch_add(&batch, form_row(rel, newslot, NULL));
		flags |= XLTS_HAS_NEW;
	}
	batch_log(rel, &batch, newslot ? XLOG_TESSERA_UPDATE : XLOG_TESSERA_DELETE, flags);
	if (old)
		ExecDropSingleTupleTableSlot(old);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(logical_cxt);
}

void
TesseraLogicalUpdate(Relation rel, ItemPointer otid, TupleTableSlot *newslot)
{
	log_change(rel, otid, newslot);
}

void
TesseraLogicalDelete(Relation rel, ItemPointer otid)
{
	log_change(rel, otid, NULL);
}

/* ----------------------------------------------------------------
 *		decoding
 * ----------------------------------------------------------------
 */

/* the reorder buffer's tuples: a tuple buffer until 16, a HeapTuple since 17 */
#if PG_VERSION_NUM >= 170000
typedef HeapTuple DecodedTuple;
#define DecodedHeapTuple(t)		(t)
#if PG_VERSION_NUM >= 180000
#define AllocDecodedTuple(rb, len)	ReorderBufferAllocTupleBuf(rb, len)
#define AllocChange(rb)				ReorderBufferAllocChange(rb)
#else
#define AllocDecodedTuple(rb, len)	ReorderBufferGetTupleBuf(rb, len)
#define AllocChange(rb)				ReorderBufferGetChange(rb)
#endif
#else
typedef ReorderBufferTupleBuf *DecodedTuple;
#define DecodedHeapTuple(t)		(&(t)->tuple)
#define AllocDecodedTuple(rb, len)	ReorderBufferGetTupleBuf(rb, len)
#define AllocChange(rb)				ReorderBufferGetChange(rb)
#endif

#if PG_VERSION_NUM >= 160000
#define ChangeLocator(change)	((change)->data.tp.rlocator)
#else
#define ChangeLocator(change)	((change)->data.tp.relnode)
#endif

static void
malformed(XLogRecordBuffer *buf)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("malformed tessera logical decoding record at %X/%X",
					LSN_FORMAT_ARGS(buf->origptr))));
}

/* A reorder buffer tuple of a row's header fields and bytes. */
static DecodedTuple
make_tuple(ReorderBuffer *rb, const xl_tessera_row *row, const char *data)
{
	DecodedTuple tuple = AllocDecodedTuple(rb, row->datalen);
	HeapTuple	htup = DecodedHeapTuple(tuple);

	htup->t_len = row->datalen + SizeofHeapTupleHeader;
	ItemPointerSetInvalid(&htup->t_self);
	htup->t_tableOid = InvalidOid;
	memset(htup->t_data, 0, SizeofHeapTupleHeader);
	memcpy((char *) htup->t_data + SizeofHeapTupleHeader, data, row->datalen);
	htup->t_data->t_infomask = row->infomask;
	htup->t_data->t_infomask2 = row->infomask2;
	htup->t_data->t_hoff = row->hoff;
	return tuple;
}

/* The next row of a record's row data as a reorder buffer tuple. */
static DecodedTuple
next_row(ReorderBuffer *rb, XLogRecordBuffer *buf, const char **p, const char *end)
{
	xl_tessera_row row;
	DecodedTuple tuple;

	if (end - *p < (ptrdiff_t) SizeOfTesseraRow)
		malformed(buf);
	memcpy(&row, *p, SizeOfTesseraRow);
	*p += SizeOfTesseraRow;
	if ((Size) (end - *p) < row.datalen)
		malformed(buf);
	tuple = make_tuple(rb, &row, *p);
	*p += row.datalen;
	return tuple;
}

static ReorderBufferChange *
new_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, const RelFileLocator *node,
		   ReorderBufferChangeType action)
{
	ReorderBufferChange *change = AllocChange(ctx->reorder);

	change->action = action;
	change->origin_id = XLogRecGetOrigin(buf->record);
	memcpy(&ChangeLocator(change), node, sizeof(RelFileLocator));
	change->data.tp.clear_toast_afterwards = true;
	return change;
}

/* Is a change to node to be decoded here (our database, a wanted origin)? */
static bool
wanted_here(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, const RelFileLocator *node)
{
	if (TesseraLocatorDb(*node) != ctx->slot->data.database)
		return false;
	return !(ctx->callbacks.filter_by_origin_cb &&
			 filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(buf->record)));
}

static void
decode_one(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	const char *data = XLogRecGetData(r);
	Size		len = XLogRecGetDataLen(r);
	RelFileLocator node;
	xl_tessera_row row;
	ReorderBufferChange *change;

	if (len < SizeOfTesseraOne + SizeOfTesseraRowHead)
		malformed(buf);
	memcpy(&node, data, SizeOfTesseraOne);
	if (!wanted_here(ctx, buf, &node))
		return;
	memcpy(&row.infomask2, data + SizeOfTesseraOne, SizeOfTesseraRowHead);
	row.datalen = len - SizeOfTesseraOne - SizeOfTesseraRowHead;
	change = new_change(ctx, buf, &node, REORDER_BUFFER_CHANGE_INSERT);
	change->data.tp.newtuple = make_tuple(ctx->reorder, &row,
										  data + SizeOfTesseraOne + SizeOfTesseraRowHead);
	ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r), buf->origptr, change, false);
}

static void
decode_rows(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, uint8 info)
{
	XLogReaderState *r = buf->record;
	xl_tessera_rows xlrec;
	const char *data = XLogRecGetData(r);
	Size		len = XLogRecGetDataLen(r);
	char	   *raw = NULL;
	const char *p,
			   *end;
	TransactionId xid = XLogRecGetXid(r);

	if (len < SizeOfTesseraRows)
		malformed(buf);
	memcpy(&xlrec, data, SizeOfTesseraRows);
	if (!wanted_here(ctx, buf, &xlrec.node))
		return;

	data += SizeOfTesseraRows;
	len -= SizeOfTesseraRows;
	if (xlrec.codec != TESSERA_CODEC_NONE)
	{
		raw = palloc(xlrec.rawlen);
		if (!TesseraDecompress(xlrec.codec, data, len, raw, xlrec.rawlen))
			malformed(buf);
		p = raw;
		end = raw + xlrec.rawlen;
	}
	else
	{
		if (len != xlrec.rawlen)
			malformed(buf);
		p = data;
		end = data + len;
	}

	if (info == XLOG_TESSERA_INSERT)
	{
		for (uint32 i = 0; i < xlrec.nrows; i++)
		{
			ReorderBufferChange *change = new_change(ctx, buf, &xlrec.node,
													 REORDER_BUFFER_CHANGE_INSERT);

			change->data.tp.newtuple = next_row(ctx->reorder, buf, &p, end);
			ReorderBufferQueueChange(ctx->reorder, xid, buf->origptr, change, false);
		}
	}
	else
	{
		ReorderBufferChange *change =
			new_change(ctx, buf, &xlrec.node, info == XLOG_TESSERA_UPDATE ?
					   REORDER_BUFFER_CHANGE_UPDATE : REORDER_BUFFER_CHANGE_DELETE);

		if (xlrec.flags & XLTS_HAS_OLD)
			change->data.tp.oldtuple = next_row(ctx->reorder, buf, &p, end);
		if (xlrec.flags & XLTS_HAS_NEW)
			change->data.tp.newtuple = next_row(ctx->reorder, buf, &p, end);
		ReorderBufferQueueChange(ctx->reorder, xid, buf->origptr, change, false);
	}
	if (p != end)
		malformed(buf);
	if (raw)
		pfree(raw);
}

/*
 * TesseraLogicalDecode
 *		The resource manager's rm_decode: every record makes its transaction
 *		known to the reorder buffer; the row records become changes, as
 *		heap's records do (heap_decode in PostgreSQL's decode.c).
 */
void
TesseraLogicalDecode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	uint8		info = XLogRecGetInfo(buf->record) & ~XLR_INFO_MASK;
	TransactionId xid = XLogRecGetXid(buf->record);

	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (info != XLOG_TESSERA_INSERT && info != XLOG_TESSERA_UPDATE &&
		info != XLOG_TESSERA_DELETE && info != XLOG_TESSERA_INSERT_ONE)
		return;

	/* no snapshot yet, or only fast-forwarding: nothing to decode */
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT)
		return;
	if (!SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr) || ctx->fast_forward)
		return;
	if (info == XLOG_TESSERA_INSERT_ONE)
		decode_one(ctx, buf);
	else
		decode_rows(ctx, buf, info);
}
