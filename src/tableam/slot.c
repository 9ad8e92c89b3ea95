/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  TTSOpsTessera: a tuple table slot that points at a row of a decoded
 *	  row group and fills its values only for the columns asked for.
 *
 * NOTES
 *	  A stored row references the reader's current batch and asks the batch
 *	  for the columns the plan deforms (the batch reads single values first
 *	  and decodes a column for the whole row group once most rows want it,
 *	  reader.c), so a plan that reads columns 1..k never decodes the others.
 *	  A lazy row (fetches) decodes its columns through the fetcher.  The batch
 *	  outlives the slot's contents: scans clear their slots before moving
 *	  to another row group or ending (the same contract under which a heap
 *	  slot's tuple stays valid while its buffer is pinned).
 *	  ExecMaterializeSlot copies the values into the slot's own memory and
 *	  drops the reference.
 *
 *	  Without a batch the slot behaves exactly like a virtual slot, so
 *	  ExecStoreVirtualTuple, ExecCopySlot and ExecForceStoreHeapTuple work.
 *
 * IDENTIFICATION
 *	  src/tableam/slot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "nodes/bitmapset.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"

#include "tessera/compat.h"
#include "tessera/reader.h"
#include "tessera/slot.h"
#include "tessera/tessera.h"

typedef struct TesseraTupleTableSlot
{
	TupleTableSlot base;
	char	   *data;			/* materialized by-reference values */
	TesseraBatch *batch;		/* NULL: values live in tts_values */
	int			row;
	TransactionId xmin;
	TransactionId xmax;			/* deleter/locker, where a fetch knew it */
	/* a row fetched alone, its columns decoded on demand (lazy != NULL) */
	const TesseraLazyRowOps *lazy;
	void	   *lazy_arg;
	uint64		lazy_rownum;
	int			lazy_rg;
	/* columns the slot's consumer reads (NULL: all); the others read as NULL */
	const bool *needed;
} TesseraTupleTableSlot;

/* Stop referring to the lazy row's source (it may free itself). */
static inline void
drop_lazy(TesseraTupleTableSlot *ts)
{
	if (ts->lazy != NULL)
	{
		const TesseraLazyRowOps *ops = ts->lazy;

		ts->lazy = NULL;
		ops->release(ts->lazy_arg, &ts->base);
	}
}

static void
tts_tessera_init(TupleTableSlot *slot)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

	ts->data = NULL;
	ts->batch = NULL;
	ts->xmin = InvalidTransactionId;
	ts->xmax = InvalidTransactionId;
	ts->lazy = NULL;
	ts->needed = NULL;
}

static void
tts_tessera_release(TupleTableSlot *slot)
{
}

static void
tts_tessera_clear(TupleTableSlot *slot)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

	if (unlikely(TTS_SHOULDFREE(slot)))
	{
		pfree(ts->data);
		ts->data = NULL;
		slot->tts_flags &= ~TTS_FLAG_SHOULDFREE;
	}
	ts->batch = NULL;
	drop_lazy(ts);
	ts->xmin = InvalidTransactionId;
	ts->xmax = InvalidTransactionId;
	slot->tts_nvalid = 0;
	slot->tts_flags |= TTS_FLAG_EMPTY;
	ItemPointerSetInvalid(&slot->tts_tid);
}

static void
tts_tessera_getsomeattrs(TupleTableSlot *slot, int natts)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;
	TesseraBatch *b = ts->batch;

	if (ts->lazy != NULL)
	{
		int			from = slot->tts_nvalid;

		natts = Min(natts, slot->tts_tupleDescriptor->natts);
		/* decode runs of needed columns; the others are NULL */
		while (from < natts)
		{
			int			to = from;

			if (ts->needed && !ts->needed[from])
			{
				slot->tts_values[from] = (Datum) 0;
				slot->tts_isnull[from] = true;
				from++;
				continue;
			}
			while (to < natts && (ts->needed == NULL || ts->needed[to]))
				to++;
			ts->lazy->decode(ts->lazy_arg, ts->lazy_rownum, ts->lazy_rg, ts->row, slot,
							 from, to);
			from = to;
		}
		slot->tts_nvalid = Max(slot->tts_nvalid, natts);
		return;
	}
	if (b == NULL)
		elog(ERROR, "tessera slot has no row to deform");
	if (natts > b->reader->natts)
		natts = b->reader->natts;

	for (int i = slot->tts_nvalid; i < natts; i++)
	{
		Datum	   *values;
		bool	   *isnull;

		if ((b->reader->needed && !b->reader->needed[i]) || (ts->needed && !ts->needed[i]))
		{
			/* a column the plan never looks at */
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
			continue;
		}
		if (b->values[i] == NULL)
		{
			/* decodes this value or the column, as the reads so far suggest */
			slot->tts_values[i] = TesseraBatchValue(b, i, ts->row, &slot->tts_isnull[i]);
			continue;
		}
		TesseraBatchColumn(b, i, &values, &isnull);
		slot->tts_values[i] = values[ts->row];
		slot->tts_isnull[i] = isnull[ts->row];
	}
	slot->tts_nvalid = natts;
}

/*
 * TesseraSlotSetNeeded
 *		The columns (one flag per attribute, NULL: all) that whoever reads
 *		this slot will read: a row stored in it later decodes only those,
 *		and the others read as NULL.  The array must live as long as the
 *		slot.  Set by the executor hook for scan slots of index, bitmap and
 *		TID scans, whose consumers read only what the query selects.
 */
void
TesseraSlotSetNeeded(TupleTableSlot *slot, const bool *needed)
{
	Assert(slot->tts_ops == &TTSOpsTessera);
	((TesseraTupleTableSlot *) slot)->needed = needed;
}

/* The columns TesseraSlotSetNeeded gave the slot (NULL: all). */
const bool *
TesseraSlotNeeded(TupleTableSlot *slot)
{
	Assert(slot->tts_ops == &TTSOpsTessera);
	return ((TesseraTupleTableSlot *) slot)->needed;
}

static Datum
tts_tessera_getsysattr(TupleTableSlot *slot, int attnum, bool *isnull)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

	*isnull = false;
	switch (attnum)
	{
		case MinTransactionIdAttributeNumber:
			if (!TransactionIdIsValid(ts->xmin))
				break;
			return TransactionIdGetDatum(ts->xmin);
		case MaxTransactionIdAttributeNumber:
			return TransactionIdGetDatum(ts->xmax);
		case MinCommandIdAttributeNumber:
		case MaxCommandIdAttributeNumber:
			return CommandIdGetDatum(FirstCommandId);
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot retrieve a system column in this context")));
	return (Datum) 0;			/* keep compiler quiet */
}

/* Was the row inserted by the current transaction (the RI triggers ask)? */
pg_attribute_unused()
static bool
tts_tessera_is_current_xact_tuple(TupleTableSlot *slot)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

	return TransactionIdIsValid(ts->xmin) && TransactionIdIsCurrentTransactionId(ts->xmin);
}

/* Copy by-reference values into memory owned by the slot. */
static void
tts_tessera_materialize(TupleTableSlot *slot)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	Size		sz = 0;
	char	   *data;

	if (TTS_SHOULDFREE(slot))
		return;
	if (ts->batch || ts->lazy)
	{
		slot_getallattrs(slot);
		ts->batch = NULL;
	}

	for (int natt = 0; natt < desc->natts; natt++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, natt);
		Datum		val;

		if (att->attbyval || slot->tts_isnull[natt])
			continue;
		val = slot->tts_values[natt];
		if (att->attlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(val)))
		{
			sz = att_align_nominal(sz, att->attalign);
			sz += EOH_get_flat_size(DatumGetEOHP(val));
		}
		else
		{
			sz = att_align_nominal(sz, att->attalign);
			sz = att_addlength_datum(sz, att->attlen, val);
		}
	}
	if (sz == 0)
	{
		drop_lazy(ts);
		return;
	}

	data = ts->data = MemoryContextAlloc(slot->tts_mcxt, sz);
	slot->tts_flags |= TTS_FLAG_SHOULDFREE;

	for (int natt = 0; natt < desc->natts; natt++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, natt);
		Datum		val;

		if (att->attbyval || slot->tts_isnull[natt])
			continue;
		val = slot->tts_values[natt];
		if (att->attlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(val)))
		{
			ExpandedObjectHeader *eoh = DatumGetEOHP(val);
			Size		data_length;

			data = (char *) att_align_nominal(data, att->attalign);
			data_length = EOH_get_flat_size(eoh);
			EOH_flatten_into(eoh, data, data_length);
			slot->tts_values[natt] = PointerGetDatum(data);
			data += data_length;
		}
		else
		{
			Size		data_length = 0;

			data = (char *) att_align_nominal(data, att->attalign);
			data_length = att_addlength_datum(data_length, att->attlen, val);
			memcpy(data, DatumGetPointer(val), data_length);
			slot->tts_values[natt] = PointerGetDatum(data);
			data += data_length;
		}
	}
	/* the values are ours now */
	drop_lazy(ts);
}

static void
tts_tessera_copyslot(TupleTableSlot *dstslot, TupleTableSlot *srcslot)
{
	TupleDesc	srcdesc = srcslot->tts_tupleDescriptor;

	tts_tessera_clear(dstslot);
	slot_getallattrs(srcslot);
	for (int natt = 0; natt < srcdesc->natts; natt++)
	{
		dstslot->tts_values[natt] = srcslot->tts_values[natt];
		dstslot->tts_isnull[natt] = srcslot->tts_isnull[natt];
	}
	dstslot->tts_nvalid = srcdesc->natts;
	dstslot->tts_flags &= ~TTS_FLAG_EMPTY;
	tts_tessera_materialize(dstslot);
	/* the copy is still that row: logical apply finds rows this way */
	dstslot->tts_tid = srcslot->tts_tid;
	dstslot->tts_tableOid = srcslot->tts_tableOid;
}

static HeapTuple
tts_tessera_copy_heap_tuple(TupleTableSlot *slot)
{
	HeapTuple	tuple;

	slot_getallattrs(slot);
	tuple = heap_form_tuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
	tuple->t_self = slot->tts_tid;
	tuple->t_tableOid = slot->tts_tableOid;
	return tuple;
}

static MinimalTuple
tts_tessera_copy_minimal_tuple(TESSERA_COPY_MINIMAL_TUPLE_ARGS)
{
	slot_getallattrs(slot);
	return TesseraFormMinimalTupleExtra(slot->tts_tupleDescriptor, slot->tts_values,
										slot->tts_isnull);
}

const TupleTableSlotOps TTSOpsTessera = {
	.base_slot_size = sizeof(TesseraTupleTableSlot),
	.init = tts_tessera_init,
	.release = tts_tessera_release,
	.clear = tts_tessera_clear,
	.getsomeattrs = tts_tessera_getsomeattrs,
	.getsysattr = tts_tessera_getsysattr,
	TESSERA_SLOT_OPS_IS_CURRENT_XACT(tts_tessera_is_current_xact_tuple)
	.materialize = tts_tessera_materialize,
	.copyslot = tts_tessera_copyslot,
	.get_heap_tuple = NULL,
	.get_minimal_tuple = NULL,
	.copy_heap_tuple = tts_tessera_copy_heap_tuple,
	.copy_minimal_tuple = tts_tessera_copy_minimal_tuple
};

/*
 * TesseraSlotStoreLazyRow
 *		Store a row whose columns ops->decode fills on demand
 *		(decode(arg, rownum, rg, row, slot, from, to) sets tts_values[from..to)
 *		to values valid until ops->release(arg, slot), which the slot calls
 *		when it lets go of the row).
 */
void
TesseraSlotStoreLazyRow(TupleTableSlot *slot, const TesseraLazyRowOps *ops, void *arg,
						uint64 rownum, int rg, int row, TransactionId xmin, Oid relid)
{
	TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

	Assert(slot->tts_ops == &TTSOpsTessera);
	ExecClearTuple(slot);
	ts->lazy = ops;
	ts->lazy_arg = arg;
	ts->lazy_rownum = rownum;
	ts->lazy_rg = rg;
	ts->row = row;
	ts->xmin = xmin;
	ts->xmax = InvalidTransactionId;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
	TesseraRownumToTid(rownum, &slot->tts_tid);
	slot->tts_tableOid = relid;
}

/*
 * TesseraSlotStoreRow
 *		Store row `row` of the batch in slot.  Slots of other types get all
 *		values at once.
 */
void
TesseraSlotStoreRow(TupleTableSlot *slot, TesseraBatch *batch, int row)
{
	uint64		rownum = batch->first_rownum + row;

	/* decode as the caller's descriptor says (ALTER TABLE rewrites) */
	if (unlikely(slot->tts_tupleDescriptor != batch->reader->tupdesc))
		TesseraReaderSetTupleDesc(batch->reader, slot->tts_tupleDescriptor);

	if (likely(slot->tts_ops == &TTSOpsTessera))
	{
		TesseraTupleTableSlot *ts = (TesseraTupleTableSlot *) slot;

		ExecClearTuple(slot);
		ts->batch = batch;
		ts->row = row;
		ts->xmin = batch->xmin;
		ts->xmax = InvalidTransactionId;
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
		slot->tts_nvalid = 0;
	}
	else
	{
		TupleDesc	desc = slot->tts_tupleDescriptor;

		ExecClearTuple(slot);
		for (int i = 0; i < desc->natts; i++)
		{
			Datum	   *values;
			bool	   *isnull;

			if (i >= batch->reader->natts)
			{
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
				continue;
			}
			TesseraBatchColumn(batch, i, &values, &isnull);
			slot->tts_values[i] = values[row];
			slot->tts_isnull[i] = isnull[row];
		}
		if (TTS_IS_VIRTUAL(slot))
		{
			ExecStoreVirtualTuple(slot);
			ExecMaterializeSlot(slot);
		}
		else
		{
			HeapTuple	tup = heap_form_tuple(desc, slot->tts_values, slot->tts_isnull);

			ExecForceStoreHeapTuple(tup, slot, true);
		}
	}
	TesseraRownumToTid(rownum, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(batch->reader->rel);
}

/* Record the row's deleter or locker (fetches that read its state). */
void
TesseraSlotSetXmax(TupleTableSlot *slot, TransactionId xmax)
{
	if (slot->tts_ops == &TTSOpsTessera)
		((TesseraTupleTableSlot *) slot)->xmax = xmax;
}

/* Record the inserting transaction of a row stored by value (single-row fetches). */
void
TesseraSlotSetXmin(TupleTableSlot *slot, TransactionId xmin)
{
	if (slot->tts_ops == &TTSOpsTessera)
		((TesseraTupleTableSlot *) slot)->xmin = xmin;
}

/*
 * Does any of the columns in attrs (FirstLowInvalidHeapAttributeNumber
 * offsets, as RelationGetIndexAttrBitmap gives them) differ between two
 * versions of a row?  Only those columns are decoded; binary comparison,
 * as heap decides which indexed columns an update changed.
 */
bool
TesseraSlotColumnsDiffer(TupleTableSlot *a, TupleTableSlot *b, Bitmapset *attrs)
{
	TupleDesc	desc = a->tts_tupleDescriptor;
	int			attr = -1;

	while ((attr = bms_next_member(attrs, attr)) >= 0)
	{
		int			attnum = attr + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		bool		anull,
					bnull;
		Datum		aval,
					bval;

		if (attnum <= 0)
			continue;
		att = TupleDescAttr(desc, attnum - 1);
		aval = slot_getattr(a, attnum, &anull);
		bval = slot_getattr(b, attnum, &bnull);
		if (anull != bnull ||
			(!anull && !datumIsEqual(aval, bval, att->attbyval, att->attlen)))
			return true;
	}
	return false;
}
