/*-------------------------------------------------------------------------
 *
 * writer.c
 *	  Buffered writes of a tessera relation.
 *
 * NOTES
 *	  Inserted rows are collected in a write state per (relfilenode,
 *	  subtransaction).  Raw values of the current row group are kept as
 *	  Datum arrays; a full row group is encoded at once, so that memory is
 *	  bounded by one raw row group plus one encoded stripe.  A stripe is
 *	  written to pages when it is full, at commit, before any scan of the
 *	  relation by this backend, and before a parallel query starts.
 *
 *	  Row numbers are reserved from the metapage when a stripe starts (and
 *	  extended in place while nobody else reserved after us), so every row
 *	  gets its final TID at insert time and a stripe's rows are contiguous.
 *	  Row numbers left over when a stripe ends early are never used.
 *
 *	  When a stripe starts, a placeholder row is inserted into the stripe
 *	  catalog in the current subtransaction; writing the stripe fills it in
 *	  place.  This makes the stripe's visibility that of the subtransaction
 *	  that inserted the rows, even when a deeper subtransaction writes it
 *	  out.  In parallel mode in-place updates are forbidden, so the leader
 *	  inserts a complete row instead (same subtransaction, since nothing
 *	  else can write in parallel mode) and the placeholder stays empty.
 *
 *	  Subtransactions: states are stacked per relfilenode.  On subcommit a
 *	  state becomes its parent's, or is written out if the parent has one;
 *	  on subabort it is dropped, and its placeholder dies with the
 *	  subtransaction.  At top-level commit and PREPARE everything is
 *	  written.  Each stripe records the command id of each run of rows, so
 *	  that scans in this transaction see exactly the rows inserted by
 *	  earlier commands.
 *
 * IDENTIFICATION
 *	  src/writer/writer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "tessera/catalog.h"
#include "tessera/encoder.h"
#include "tessera/encoding.h"
#include "tessera/format.h"
#include "tessera/options.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/reader.h"
#include "tessera/writer.h"

#include "write_state.h"

/*
 * Row numbers are reserved 1 at first, then 4x more each time a stripe runs
 * out: a single-row insert takes exactly one, a bulk load reaches the stripe
 * limit after a few reservations, and what a stripe leaves unused is given
 * back at flush when nobody reserved after it.  Consecutive small writes so
 * get consecutive row numbers, which compaction needs to merge them.
 */
#define FIRST_RESERVATION	1
#define RESERVATION_GROWTH	4


typedef struct WriteEntry
{
	RelFileLocator node;			/* hash key */
	WriteState *top;
	int			early_deltas;	/* delta stripes written before commit */
} WriteEntry;


static HTAB *write_entries = NULL;
static WriteState *last_state = NULL;
static bool flushing_for_commit = false;

/*
 * Stripes a transaction writes out before it commits (a scan of the table
 * asked for them) go to the delta only this many times per table: a
 * transaction that alternates writes and reads thousands of times (logical
 * replication applying row by row with a sequential scan each) would
 * otherwise make every one of those scans read thousands of delta stripes.
 */
#define MAX_EARLY_DELTAS	8

/* a rewrite's new storage whose stripes are written frozen (TesseraWriteFrozen) */
static RelFileLocator frozen_node;
static bool frozen_node_set = false;

TesseraDeltaStripeHook tessera_delta_stripe_hook = NULL;

static void flush_stripe(WriteState *ws, Relation rel);
static void free_state(WriteState *ws);
static void set_state_columns(WriteState *ws, TupleDesc desc);

static WriteState *
create_state(Relation rel, SubTransactionId subxid)
{
	MemoryContext cxt = AllocSetContextCreate(TopTransactionContext,
											  "tessera write state",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	WriteState *ws = palloc0(sizeof(WriteState));

	ws->cxt = cxt;
	ws->enc_cxt = AllocSetContextCreate(cxt, "tessera encoder",
										ALLOCSET_DEFAULT_SIZES);
	ws->node = TesseraRelLocator(rel);
	ws->relid = RelationGetRelid(rel);
	ws->subxid = subxid;
	ws->seen_desc = RelationGetDescr(rel);
	TesseraGetOptions(ws->relid, &ws->opts);
	ws->rg_limit = Min(ws->opts.row_group_row_limit, ws->opts.stripe_row_limit);
	ws->reserve_size = FIRST_RESERVATION;
	ws->sent_rg = -1;

	TesseraBufInit(&ws->data, 8192);
	TesseraBufInit(&ws->stats, 1024);
	ws->rgs_cap = 4;
	ws->rgs = palloc(sizeof(TesseraRowGroupDisk) * ws->rgs_cap);
	ws->cids_cap = 4;
	ws->cids = palloc(sizeof(TesseraCidRun) * ws->cids_cap);
	ws->dead = palloc0(sizeof(TesseraChunkDisk) * ws->rgs_cap);
	set_state_columns(ws, RelationGetDescr(rel));

	MemoryContextSwitchTo(old);
	return ws;
}

/* Do two descriptors store their columns alike? */
static bool
same_columns(TupleDesc a, TupleDesc b)
{
	if (a->natts != b->natts)
		return false;
	for (int i = 0; i < a->natts; i++)
	{
		Form_pg_attribute x = TupleDescAttr(a, i);
		Form_pg_attribute y = TupleDescAttr(b, i);

		if (x->atttypid != y->atttypid || x->atttypmod != y->atttypmod ||
			x->attlen != y->attlen || x->attbyval != y->attbyval ||
			x->attalign != y->attalign || x->attisdropped != y->attisdropped ||
			x->attcollation != y->attcollation)
			return false;
	}
	return true;
}

/* Build the per-column parts of ws for desc (ws holds no rows). */
static void
set_state_columns(WriteState *ws, TupleDesc desc)
{
	MemoryContext old = MemoryContextSwitchTo(ws->cxt);

	Assert(ws->rg_rows == 0 && ws->nrgs == 0 && ws->sent_rg < 0);
	if (ws->encoder)
	{
		/* it has the old column types */
		TesseraEncoderStop(ws->encoder);
		ws->encoder = NULL;
	}
	ws->tupdesc = CreateTupleDescCopy(desc);
	ws->natts = ws->tupdesc->natts;
	ws->types = palloc0(sizeof(TesseraColumnType) * Max(ws->natts, 1));
	ws->kinds = palloc(Max(ws->natts, 1));
	for (int i = 0; i < ws->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(ws->tupdesc, i);

		if (!attr->attisdropped)
			TesseraColumnTypeInit(&ws->types[i], attr);
		ws->kinds[i] = attr->attisdropped ? WK_DROPPED :
			attr->attbyval ? WK_BYVAL :
			attr->attlen == -1 ? WK_VARLENA :
			attr->attlen > 0 ? WK_FIXED : WK_CSTRING;
	}
	ws->chunks = palloc(sizeof(TesseraChunkDisk) * ws->rgs_cap * Max(ws->natts, 1));
	TesseraInitRowGroupBuf(&ws->cur, ws->natts);
	TesseraInitRowGroupBuf(&ws->sent, ws->natts);
	ws->sent_done = palloc0(Max(ws->natts, 1));
	ws->eligible = TesseraEncoderEligible(ws->tupdesc);
	ws->null_values = NULL;
	ws->null_isnull = NULL;
	MemoryContextSwitchTo(old);
}

/*
 * Keep an entry's states in step with the relation that owns their
 * storage now.  A rewrite in this transaction (ALTER TABLE … TYPE, SET
 * ACCESS METHOD) wrote the storage under a transient relation that then
 * swapped its storage with the table's: the states must follow the table's
 * OID, or the commit-time flush would look for the dropped transient one.
 * A non-rewriting ALTER TABLE (ADD/DROP COLUMN, a binary-compatible TYPE
 * change) changes the descriptor under buffered rows: those rows are
 * written as they were read in, and later rows are buffered as the new
 * descriptor says.
 */
static void
follow_relation(WriteEntry *entry, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
	{
		ws->relid = RelationGetRelid(rel);
		if (ws->seen_desc == desc)
			continue;
		if (!same_columns(ws->tupdesc, desc))
		{
			flush_stripe(ws, rel);
			set_state_columns(ws, desc);
		}
		ws->seen_desc = desc;
	}
}

static WriteState *
get_state(Relation rel)
{
	SubTransactionId subxid = GetCurrentSubTransactionId();
	WriteEntry *entry;
	bool		found;

	if (last_state && last_state->subxid == subxid &&
		RelFileLocatorEquals(last_state->node, TesseraRelLocator(rel)) &&
		last_state->seen_desc == RelationGetDescr(rel) &&
		last_state->relid == RelationGetRelid(rel))
		return last_state;

	if (write_entries == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(RelFileLocator);
		ctl.entrysize = sizeof(WriteEntry);
		ctl.hcxt = TopTransactionContext;
		write_entries = hash_create("tessera write states", 16, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(write_entries, &TesseraRelLocator(rel), HASH_ENTER, &found);
	if (!found)
	{
		entry->top = NULL;
		entry->early_deltas = 0;
	}
	else
		follow_relation(entry, rel);
	if (entry->top == NULL || entry->top->subxid != subxid)
	{
		WriteState *ws = create_state(rel, subxid);

		ws->below = entry->top;
		ws->early_deltas = &entry->early_deltas;
		entry->top = ws;
	}
	last_state = entry->top;
	return last_state;
}

static void
start_stripe(WriteState *ws, Relation rel)
{
	uint64		storage_id;
	uint64		first;
	uint64		stripe_id;
	uint64		want = Min((uint64) ws->opts.stripe_row_limit, ws->reserve_size);

	TesseraReserve(rel, want, &storage_id, &first, &stripe_id);
	memset(&ws->stripe, 0, sizeof(TesseraStripe));
	ws->stripe.storage_id = storage_id;
	ws->stripe.stripe_id = stripe_id;
	ws->stripe.first_rownum = first;
	ws->stripe.natts = ws->natts;
	ws->stripe.reserved_rows = want;
	if (frozen_node_set && RelFileLocatorEquals(frozen_node, ws->node))
		ws->stripe.flags |= TESSERA_STRIPE_FROZEN;
	TesseraInsertStripe(&ws->stripe);

	ws->has_stripe = true;
	ws->stripe_rows = 0;
	ws->next_rownum = first;
	ws->reserved_end = first + want;
}

/* Get more row numbers for the current stripe; false if they would not be contiguous. */
static bool
extend_reservation(WriteState *ws, Relation rel)
{
	uint64		want = Min(ws->reserve_size * RESERVATION_GROWTH,
						   (uint64) ws->opts.stripe_row_limit - ws->stripe_rows);

	if (want == 0)
		return false;
	if (!TesseraExtendReservation(rel, ws->stripe.storage_id, ws->reserved_end, want))
		return false;
	ws->reserved_end += want;
	ws->reserve_size = Max(ws->reserve_size, want);

	/* let others' dirty snapshots see that these rows are being inserted */
	ws->stripe.reserved_rows = ws->reserved_end - ws->stripe.first_rownum;
	if (!IsInParallelMode())
		TesseraCompleteStripe(&ws->stripe);
	return true;
}

/* bytes a non-NULL value of column i counts in a row group (detoasted) */
static inline Size
value_size(WriteState *ws, int i, Datum d)
{
	switch (ws->kinds[i])
	{
		case WK_BYVAL:
			return sizeof(Datum);
		case WK_VARLENA:
			if (VARATT_IS_EXTERNAL(DatumGetPointer(d)) || VARATT_IS_COMPRESSED(DatumGetPointer(d)))
				return toast_raw_datum_size(d);
			return VARSIZE_ANY(DatumGetPointer(d));
		case WK_FIXED:
			return TupleDescAttr(ws->tupdesc, i)->attlen;
		case WK_CSTRING:
			return strlen(DatumGetCString(d)) + 1;
		default:
			return 0;
	}
}

/* Make room for need rows in the row group's arrays. */
static void
ensure_rg_capacity(WriteState *ws, int need)
{
	int			cap;
	MemoryContext old;

	if (need <= ws->cur.cap)
		return;
	cap = ws->cur.cap == 0 ? Min(64, ws->rg_limit) : ws->cur.cap * 2;
	while (cap < need)
		cap *= 2;
	/* only a row group with folded rows outgrows the limit */
	if (ws->rg_ndead == 0 && !ws->mark_dead)
		cap = Min(cap, ws->rg_limit);
	cap = Min(Max(cap, need), TESSERA_MAX_ROW_GROUP_ROWS);
	old = MemoryContextSwitchTo(ws->cxt);
	for (int i = 0; i < ws->natts; i++)
	{
		if (ws->cur.cap == 0)
		{
			ws->cur.values[i] = palloc(sizeof(Datum) * cap);
			ws->cur.isnull[i] = palloc(sizeof(bool) * cap);
		}
		else
		{
			ws->cur.values[i] = repalloc_huge(ws->cur.values[i], sizeof(Datum) * cap);
			ws->cur.isnull[i] = repalloc_huge(ws->cur.isnull[i], sizeof(bool) * cap);
		}
	}
	MemoryContextSwitchTo(old);
	ws->cur.cap = cap;
}

static Size
row_size(WriteState *ws, Datum *values, bool *isnull)
{
	Size		row_bytes = 0;

	for (int i = 0; i < ws->natts; i++)
		if (!isnull[i])
			row_bytes += value_size(ws, i, values[i]);
	return row_bytes;
}

/*
 * A copy of len bytes at src in column i's bytes; returns its offset.  A
 * palloc per value was a tenth of what a COPY spent in the writer.
 */
static Datum
copy_value(WriteState *ws, int i, const void *src, Size len)
{
	ColBytes   *cb = &ws->cur.bytes[i];
	Size		need = MAXALIGN(len);
	Size		off = cb->len;

	if (need > cb->cap - cb->len)
	{
		Size		cap = Max(cb->cap * 2, 16384);

		while (cap < cb->len + need)
			cap *= 2;
		cb->data = cb->data == NULL
			? MemoryContextAllocHuge(ws->cxt, cap)
			: repalloc_huge(cb->data, cap);
		cb->cap = cap;
	}
	memcpy(cb->data + off, src, len);
	cb->len += need;
	return (Datum) off;
}

/*
 * The row group's copy of a non-NULL value of column i, as an offset into
 * the column's bytes: external, compressed or expanded values are stored
 * plain.
 */
static inline Datum
store_value(WriteState *ws, int i, Datum d)
{
	switch (ws->kinds[i])
	{
		case WK_BYVAL:
			return d;
		case WK_VARLENA:
			if (VARATT_IS_EXTERNAL(DatumGetPointer(d)) || VARATT_IS_COMPRESSED(DatumGetPointer(d)))
			{
				struct varlena *plain = detoast_attr((struct varlena *) DatumGetPointer(d));
				Datum		off = copy_value(ws, i, plain, VARSIZE_ANY(plain));

				if ((Pointer) plain != DatumGetPointer(d))
					pfree(plain);
				return off;
			}
			return copy_value(ws, i, DatumGetPointer(d), VARSIZE_ANY(DatumGetPointer(d)));
		case WK_FIXED:
			return copy_value(ws, i, DatumGetPointer(d), TupleDescAttr(ws->tupdesc, i)->attlen);
		case WK_CSTRING:
			return copy_value(ws, i, DatumGetPointer(d), strlen(DatumGetCString(d)) + 1);
		default:
			return (Datum) 0;
	}
}

/* Rows appended now were inserted by command cid. */
static inline void
note_cid(WriteState *ws, CommandId cid)
{
	if (ws->ncids > 0 && ws->cids[ws->ncids - 1].cid == cid)
		return;
	if (ws->ncids == ws->cids_cap)
	{
		ws->cids_cap *= 2;
		ws->cids = repalloc(ws->cids, sizeof(TesseraCidRun) * ws->cids_cap);
	}
	ws->cids[ws->ncids].cid = cid;
	ws->cids[ws->ncids].first_row = (uint32) ws->stripe_rows;
	ws->ncids++;
}

/* Append one row to the current row group (the stripe has room for it). */
static void
append_row(WriteState *ws, Datum *values, bool *isnull, Size row_bytes, CommandId cid)
{
	int			r;

	ensure_rg_capacity(ws, ws->rg_rows + 1);
	r = ws->rg_rows;
	if (ws->mark_dead)
	{
		if (ws->rg_ndead == ws->rg_dead_cap)
		{
			ws->rg_dead_cap = Max(ws->rg_dead_cap * 2, 1024);
			ws->rg_dead = ws->rg_dead == NULL
				? MemoryContextAlloc(ws->cxt, sizeof(int64) * ws->rg_dead_cap)
				: repalloc_huge(ws->rg_dead, sizeof(int64) * ws->rg_dead_cap);
		}
		ws->rg_dead[ws->rg_ndead++] = r;
		ws->mark_dead = false;
	}
	{
		/* in locals: the stores below could alias ws's fields for all the compiler knows */
		Datum	  **cols = ws->cur.values;
		bool	  **nulls = ws->cur.isnull;
		const uint8 *kinds = ws->kinds;
		int			natts = ws->natts;

		for (int i = 0; i < natts; i++)
		{
			bool		n = isnull[i] || kinds[i] == WK_DROPPED;

			nulls[i][r] = n;
			cols[i][r] = n ? (Datum) 0 :
				kinds[i] == WK_BYVAL ? values[i] : store_value(ws, i, values[i]);
		}
	}

	note_cid(ws, cid);
	ws->next_rownum++;
	ws->rg_rows++;
	ws->stripe_rows++;
	ws->rg_bytes += row_bytes;
	/* folded rows take no room: a row group is as long as its live rows make it */
	if (ws->rg_rows - ws->rg_ndead >= ws->rg_limit || ws->rg_rows >= TESSERA_MAX_ROW_GROUP_ROWS)
		TesseraFinishRowGroup(ws);
}

/*
 * Before a row of row_bytes is appended: end the row group if the row would
 * take it past its byte limit, write the stripe out if it is full, and have
 * a stripe with a row number reserved for the row.
 */
static void
make_room(WriteState *ws, Relation rel, Size row_bytes)
{
	if (ws->rg_rows > 0 && ws->rg_bytes + row_bytes > TESSERA_ROW_GROUP_BYTE_LIMIT)
		TesseraFinishRowGroup(ws);
	if (ws->has_stripe && ws->data.len >= TESSERA_STRIPE_BYTE_LIMIT)
		flush_stripe(ws, rel);

	if (!ws->has_stripe)
		start_stripe(ws, rel);
	else if (ws->next_rownum == ws->reserved_end && !extend_reservation(ws, rel))
	{
		flush_stripe(ws, rel);
		start_stripe(ws, rel);
	}
}

/*
 * TesseraWriteRow
 *		Buffer one row; sets slot->tts_tid to its TID.
 */
void
TesseraWriteRow(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	WriteState *ws = get_state(rel);
	Size		row_bytes;

	slot_getallattrs(slot);
	row_bytes = row_size(ws, slot->tts_values, slot->tts_isnull);
	make_room(ws, rel, row_bytes);

	TesseraRownumToTid(ws->next_rownum, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	append_row(ws, slot->tts_values, slot->tts_isnull, row_bytes, cid);

	if (ws->stripe_rows >= (uint64) ws->opts.stripe_row_limit)
		flush_stripe(ws, rel);
}

/*
 * Append rows first..first+k-1 of the columns to the current row group (the
 * stripe, its reservation and the row group have room for them), column by
 * column; tids get their TIDs.
 */
static void
append_rows(WriteState *ws, Datum **values, bool **isnull, int first, int k, Size bytes,
			CommandId cid, ItemPointer tids)
{
	int			r = ws->rg_rows;

	Assert(!ws->mark_dead);
	ensure_rg_capacity(ws, r + k);
	for (int i = 0; i < ws->natts; i++)
	{
		Datum	   *dst = ws->cur.values[i] + r;
		bool	   *dnull = ws->cur.isnull[i] + r;

		if (ws->kinds[i] == WK_DROPPED)
		{
			memset(dst, 0, sizeof(Datum) * k);
			memset(dnull, true, k);
			continue;
		}
		memcpy(dnull, isnull[i] + first, k);
		if (ws->kinds[i] == WK_BYVAL)
		{
			memcpy(dst, values[i] + first, sizeof(Datum) * k);
			for (int j = 0; j < k; j++)
				if (dnull[j])
					dst[j] = (Datum) 0;
			continue;
		}
		for (int j = 0; j < k; j++)
			dst[j] = dnull[j] ? (Datum) 0 : store_value(ws, i, values[i][first + j]);
	}

	note_cid(ws, cid);
	for (int j = 0; j < k; j++)
		TesseraRownumToTid(ws->next_rownum + j, &tids[j]);
	ws->next_rownum += k;
	ws->rg_rows += k;
	ws->stripe_rows += k;
	ws->rg_bytes += bytes;
	if (ws->rg_rows - ws->rg_ndead >= ws->rg_limit || ws->rg_rows >= TESSERA_MAX_ROW_GROUP_ROWS)
		TesseraFinishRowGroup(ws);
}

/*
 * TesseraWriteColumns
 *		Buffer nrows rows given a column at a time: values[att][r] and
 *		isnull[att][r] for every attribute of the relation (dropped ones are
 *		not read).  The same row groups, stripes and TIDs (into tids) as
 *		TesseraWriteRow of each row in turn, without forming the rows: what
 *		a load whose values come as columns (COPY FROM Parquet) calls.
 */
void
TesseraWriteColumns(Relation rel, Datum **values, bool **isnull, int nrows, CommandId cid,
					ItemPointer tids)
{
	WriteState *ws = get_state(rel);
	Size	   *bytes = palloc0(sizeof(Size) * Max(nrows, 1));
	int			r = 0;

	/* each row's bytes, as row_size counts them */
	for (int i = 0; i < ws->natts; i++)
	{
		if (ws->kinds[i] == WK_DROPPED)
			continue;
		for (int j = 0; j < nrows; j++)
			if (!isnull[i][j])
				bytes[j] += value_size(ws, i, values[i][j]);
	}

	while (r < nrows)
	{
		uint64		room;
		Size		sum;
		int			k;

		/* the boundaries TesseraWriteRow crosses before row r */
		make_room(ws, rel, bytes[r]);

		/* and the rows from r that cross none */
		room = Min(ws->reserved_end - ws->next_rownum,
				   (uint64) ws->opts.stripe_row_limit - ws->stripe_rows);
		room = Min(room, (uint64) (ws->rg_limit - (ws->rg_rows - ws->rg_ndead)));
		room = Min(room, (uint64) (TESSERA_MAX_ROW_GROUP_ROWS - ws->rg_rows));
		room = Min(room, (uint64) (nrows - r));
		sum = bytes[r];
		for (k = 1; k < (int) room; k++)
		{
			if (ws->rg_bytes + sum + bytes[r + k] > TESSERA_ROW_GROUP_BYTE_LIMIT)
				break;
			sum += bytes[r + k];
		}
		append_rows(ws, values, isnull, r, k, sum, cid, tids + r);
		if (ws->stripe_rows >= (uint64) ws->opts.stripe_row_limit)
			flush_stripe(ws, rel);
		r += k;
	}
	pfree(bytes);
}

/*
 * Stripe builders (compaction).
 *
 * A builder writes one stripe of rows whose row numbers are given (those of
 * the delta stripes it replaces, consecutive from first_rownum), outside
 * the per-transaction write states: no reservation, no placeholder.  Its
 * catalog row replaces the old stripes' rows and is marked frozen: the
 * caller only moves rows every snapshot already sees.
 */
TesseraStripeBuilder *
TesseraBuilderBegin(Relation rel, uint64 first_rownum)
{
	WriteState *ws = create_state(rel, GetCurrentSubTransactionId());

	/* a merged stripe is always a stripe of pages; never split */
	ws->opts.stripe_row_limit = TESSERA_MAX_STRIPE_ROWS;
	memset(&ws->stripe, 0, sizeof(TesseraStripe));
	ws->stripe.storage_id = 0;	/* set by the caller's finish */
	ws->stripe.first_rownum = first_rownum;
	ws->stripe.natts = ws->natts;
	ws->has_stripe = true;
	ws->stripe_rows = 0;
	ws->next_rownum = first_rownum;
	ws->reserved_end = PG_UINT64_MAX;
	return (TesseraStripeBuilder *) ws;
}

uint64
TesseraBuilderRows(TesseraStripeBuilder *builder)
{
	return ((WriteState *) builder)->stripe_rows;
}

Size
TesseraBuilderBytes(TesseraStripeBuilder *builder)
{
	WriteState *ws = (WriteState *) builder;

	return ws->data.len + ws->rg_bytes;
}

void
TesseraBuilderAdd(TesseraStripeBuilder *builder, Datum *values, bool *isnull)
{
	WriteState *ws = (WriteState *) builder;
	Size		row_bytes = row_size(ws, values, isnull);

	if (ws->rg_rows > 0 && ws->rg_bytes + row_bytes > TESSERA_ROW_GROUP_BYTE_LIMIT)
		TesseraFinishRowGroup(ws);
	append_row(ws, values, isnull, row_bytes, FirstCommandId);
}

/*
 * TesseraBuilderAddDead
 *		Add a folded row: deleted for everyone, its values gone.  It keeps
 *		its row number; the directory lists it as dead.
 */
void
TesseraBuilderAddDead(TesseraStripeBuilder *builder)
{
	WriteState *ws = (WriteState *) builder;

	if (ws->null_values == NULL)
	{
		ws->null_values = MemoryContextAllocZero(ws->cxt, sizeof(Datum) * Max(ws->natts, 1));
		ws->null_isnull = MemoryContextAlloc(ws->cxt, sizeof(bool) * Max(ws->natts, 1));
		memset(ws->null_isnull, true, sizeof(bool) * Max(ws->natts, 1));
	}
	if (ws->rg_rows > 0 && ws->rg_bytes > TESSERA_ROW_GROUP_BYTE_LIMIT)
		TesseraFinishRowGroup(ws);
	ws->mark_dead = true;
	append_row(ws, ws->null_values, ws->null_isnull, 0, FirstCommandId);
}

/*
 * TesseraBuilderAddBatch
 *		Add every row of a reader's current row group, in order; rows marked
 *		in dead (if not NULL) are added folded.  Returns the rows folded.
 */
uint64
TesseraBuilderAddBatch(TesseraStripeBuilder *builder, TesseraBatch *batch, const bool *dead)
{
	WriteState *ws = (WriteState *) builder;
	int			natts = ws->natts;
	Datum	   *values = palloc(sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(natts, 1));
	Datum	  **colv = palloc0(sizeof(Datum *) * Max(natts, 1));
	bool	  **coln = palloc0(sizeof(bool *) * Max(natts, 1));
	uint64		folded = 0;

	for (int i = 0; i < natts; i++)
		if (!TupleDescAttr(ws->tupdesc, i)->attisdropped)
			TesseraBatchColumn(batch, i, &colv[i], &coln[i]);
	for (int row = 0; row < batch->chunk_rows; row++)
	{
		if (dead && dead[row])
		{
			TesseraBuilderAddDead(builder);
			folded++;
			continue;
		}
		for (int i = 0; i < natts; i++)
		{
			isnull[i] = colv[i] == NULL || coln[i][row];
			values[i] = colv[i] == NULL ? (Datum) 0 : colv[i][row];
		}
		TesseraBuilderAdd(builder, values, isnull);
	}
	pfree(values);
	pfree(isnull);
	pfree(colv);
	pfree(coln);
	return folded;
}

/*
 * TesseraBuilderFinish
 *		Write the stripe and replace the catalog rows of `replaced` by its
 *		own, in the current transaction.  Frees the builder.
 */
void
TesseraBuilderFinish(TesseraStripeBuilder *builder, Relation rel, uint64 storage_id,
					 uint64 stripe_id, List *replaced)
{
	WriteState *ws = (WriteState *) builder;

	ws->stripe.storage_id = storage_id;
	ws->stripe.stripe_id = stripe_id;
	ws->replaces = replaced;
	flush_stripe(ws, rel);
	free_state(ws);
}

/*
 * Does the current stripe go to the delta?  Only if it is small, and only
 * from the subtransaction that inserted its placeholder: its bytes are a
 * row of tessera_internal.delta, which must live and die with the rows (a
 * scan in a deeper subtransaction writes the outer level's rows to pages).
 */
static bool
use_delta(WriteState *ws)
{
	if (!flushing_for_commit &&
		(ws->early_deltas == NULL || *ws->early_deltas >= MAX_EARLY_DELTAS))
		return false;
	return (ws->stripe.flags & TESSERA_STRIPE_FROZEN) == 0 &&
		ws->stripe_rows <= (uint64) ws->opts.delta_row_limit &&
		ws->data.len <= TESSERA_DELTA_MAX_BYTES &&
		!IsInParallelMode() &&
		ws->subxid == GetCurrentSubTransactionId();
}

/* Write the current stripe to pages (or the delta) and complete its catalog row. */
static void
flush_stripe(WriteState *ws, Relation rel)
{
	TesseraDirHeader hdr;
	Size		dir_start;
	Size		dir_len;
	pg_crc32c	crc;
	BlockNumber nblocks;

	TesseraFinishRowGroup(ws);
	TesseraDrainEncoder(ws);
	if (!ws->has_stripe)
		return;
	Assert(ws->stripe_rows > 0);

	TesseraOrderByColumn(&ws->data, ws->chunks, ws->dead, ws->nrgs, ws->natts);
	TesseraBufAlign(&ws->data);
	dir_start = ws->data.len;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = TESSERA_DIR_MAGIC;
	hdr.format_version = TESSERA_DIR_VERSION_COLUMNS;
	hdr.flags = ws->any_dead ? TESSERA_DIR_DEAD_ROWS : 0;
	hdr.stripe_id = ws->stripe.stripe_id;
	hdr.first_rownum = ws->stripe.first_rownum;
	hdr.row_count = ws->stripe_rows;
	hdr.natts = ws->natts;
	hdr.n_row_groups = ws->nrgs;
	hdr.n_cid_runs = ws->ncids;
	TesseraBufAppend(&ws->data, &hdr, sizeof(hdr));
	TesseraBufAppend(&ws->data, ws->rgs, sizeof(TesseraRowGroupDisk) * ws->nrgs);
	TesseraBufAppend(&ws->data, ws->cids, sizeof(TesseraCidRun) * ws->ncids);
	if (ws->any_dead)
		TesseraBufAppend(&ws->data, ws->dead, sizeof(TesseraChunkDisk) * ws->nrgs);
	TesseraAppendSections(&ws->data, &ws->stats, ws->chunks, ws->nrgs, ws->natts, dir_start);
	dir_len = ws->data.len - dir_start;
	if (dir_len > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tessera stripe directory of %zu bytes exceeds 4 GB", dir_len)));

	/* (the head's checksum, over its column table too) */
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, ws->data.data + dir_start,
				TesseraDirHeadSize(ws->natts, ws->nrgs, ws->ncids, hdr.flags));
	FIN_CRC32C(crc);
	((TesseraDirHeader *) (ws->data.data + dir_start))->crc = crc;

	ws->stripe.row_count = ws->stripe_rows;
	ws->stripe.data_bytes = ws->data.len;
	ws->stripe.dir_offset = dir_start;
	ws->stripe.dir_bytes = (uint32) dir_len;
	ws->stripe.n_row_groups = ws->nrgs;
	ws->stripe.natts = ws->natts;

	if (ws->replaces != NIL)
	{
		/* a builder's stripe: the rows of the stripes it replaces, frozen */
		ws->stripe.flags = TESSERA_STRIPE_FROZEN | (ws->any_dead ? TESSERA_STRIPE_FOLDED : 0);
		ws->stripe.reserved_rows = ws->stripe_rows;
		ws->stripe.start_block = TesseraWriteStripePages(rel, ws->data.data, ws->data.len, &nblocks);
		ws->stripe.nblocks = nblocks;
		TesseraReplaceStripes(ws->replaces, &ws->stripe);
	}
	else
	{
		/* row numbers we did not use go back if nobody reserved after them */
		if (ws->next_rownum < ws->reserved_end &&
			TesseraReleaseReservation(rel, ws->stripe.storage_id, ws->reserved_end,
									  ws->next_rownum))
			ws->stripe.reserved_rows = ws->stripe_rows;

		if (use_delta(ws))
		{
			/* a small write: its bytes go to the delta, no pages */
			ws->stripe.start_block = 0;
			ws->stripe.nblocks = 0;
			ws->stripe.flags |= TESSERA_STRIPE_DELTA;
			TesseraInsertDeltaBytes(&ws->stripe, ws->data.data, ws->data.len);
			TesseraCompleteStripe(&ws->stripe);
			if (!flushing_for_commit)
				(*ws->early_deltas)++;
			if (tessera_delta_stripe_hook)
				tessera_delta_stripe_hook(rel, ws->stripe.stripe_id);
		}
		else
		{
			ws->stripe.start_block = TesseraWriteStripePages(rel, ws->data.data, ws->data.len,
															 &nblocks);
			ws->stripe.nblocks = nblocks;
			if (IsInParallelMode())
				TesseraInsertStripe(&ws->stripe);
			else
				TesseraCompleteStripe(&ws->stripe);
		}
	}

	ws->has_stripe = false;
	ws->stripe_rows = 0;
	ws->data.len = 0;
	ws->stats.len = 0;
	ws->nrgs = 0;
	ws->ncids = 0;
	ws->any_dead = false;
	ws->next_rownum = ws->reserved_end = 0;
}

static void
free_state(WriteState *ws)
{
	if (last_state == ws)
		last_state = NULL;
	if (ws->encoder)
		TesseraEncoderStop(ws->encoder);
	MemoryContextDelete(ws->cxt);
}

/* Flush every state of an entry, given the relation they belong to. */
static void
flush_entry(WriteEntry *entry, Relation rel)
{
	for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
		flush_stripe(ws, rel);
}

/*
 * TesseraFlushRelation
 *		Write out this backend's buffered rows of rel, so that scans (ours
 *		and parallel workers') find them on disk, and stop its encoder
 *		worker (a load that goes on starts another).
 */
void
TesseraFlushRelation(Relation rel)
{
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	entry = hash_search(write_entries, &TesseraRelLocator(rel), HASH_FIND, NULL);
	if (entry == NULL)
		return;
	flush_entry(entry, rel);
	/* the load is over (COPY's end) or read: its encoder's slot goes back */
	for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
	{
		TesseraStopEncoder(ws);
		ws->encoder_tried = false;
		ws->full_rgs = 0;
	}
}

/*
 * TesseraFlushRowIfPending
 *		Write out this backend's buffered rows of rel if row rownum is among
 *		them, so that it can be fetched, changed or locked.
 */
void
TesseraFlushRowIfPending(Relation rel, uint64 rownum)
{
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	entry = hash_search(write_entries, &TesseraRelLocator(rel), HASH_FIND, NULL);
	if (entry == NULL)
		return;
	for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
	{
		if (ws->has_stripe && rownum >= ws->stripe.first_rownum && rownum < ws->next_rownum)
		{
			flush_entry(entry, rel);
			return;
		}
	}
}

/*
 * TesseraWriteFrozen
 *		Until TesseraWriteFrozenEnd, stripes written to rel's (new,
 *		transaction-private) storage are visible to every snapshot: the
 *		rewrite copies only rows every snapshot sees.
 */
void
TesseraWriteFrozen(Relation rel)
{
	frozen_node = TesseraRelLocator(rel);
	frozen_node_set = true;
}

void
TesseraWriteFrozenEnd(void)
{
	frozen_node_set = false;
}

bool
TesseraHavePendingWrites(void)
{
	HASH_SEQ_STATUS status;
	WriteEntry *entry;

	if (write_entries == NULL)
		return false;
	hash_seq_init(&status, write_entries);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
			if (ws->has_stripe)
			{
				hash_seq_term(&status);
				return true;
			}
	}
	return false;
}

/*
 * TesseraFlushAll
 *		Write out every buffered row of this backend.
 */
void
TesseraFlushAll(void)
{
	HASH_SEQ_STATUS status;
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	hash_seq_init(&status, write_entries);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		Relation	rel;

		if (entry->top == NULL)
			continue;
		rel = RelationIdGetRelation(entry->top->relid);
		if (rel == NULL)
			continue;
		if (RelFileLocatorEquals(TesseraRelLocator(rel), entry->node))
			flush_entry(entry, rel);
		RelationClose(rel);
	}
}

/*
 * TesseraDiscardWrites
 *		Forget buffered rows of a relfilenode that is being dropped or
 *		replaced by this transaction.
 */
void
TesseraDiscardWrites(const RelFileLocator *node)
{
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	entry = hash_search(write_entries, node, HASH_FIND, NULL);
	if (entry == NULL)
		return;
	while (entry->top)
	{
		WriteState *ws = entry->top;

		entry->top = ws->below;
		free_state(ws);
	}
	last_state = NULL;
}

/* Stop every encoder worker (before commit: their segments must not outlive it). */
static void
stop_encoders(void)
{
	HASH_SEQ_STATUS status;
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	hash_seq_init(&status, write_entries);
	while ((entry = hash_seq_search(&status)) != NULL)
		for (WriteState *ws = entry->top; ws != NULL; ws = ws->below)
			TesseraStopEncoder(ws);
}

static void
tessera_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			flushing_for_commit = true;
			TesseraFlushAll();
			flushing_for_commit = false;
			stop_encoders();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			/* the memory went with TopTransactionContext */
			write_entries = NULL;
			last_state = NULL;
			frozen_node_set = false;
			flushing_for_commit = false;
			break;
		default:
			break;
	}
}

static void
tessera_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	WriteEntry *entry;

	if (write_entries == NULL)
		return;
	if (event != SUBXACT_EVENT_PRE_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;

	last_state = NULL;
	hash_seq_init(&status, write_entries);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		WriteState *ws = entry->top;

		if (ws == NULL || ws->subxid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			entry->top = ws->below;
			free_state(ws);
		}
		else if (ws->below && ws->below->subxid == parentSubid)
		{
			Relation	rel = RelationIdGetRelation(ws->relid);

			if (rel != NULL)
			{
				if (RelFileLocatorEquals(TesseraRelLocator(rel), ws->node))
					flush_stripe(ws, rel);
				RelationClose(rel);
			}
			entry->top = ws->below;
			free_state(ws);
		}
		else
			ws->subxid = parentSubid;
	}
}

void
TesseraRegisterXactCallbacks(void)
{
	RegisterXactCallback(tessera_xact_callback, NULL);
	RegisterSubXactCallback(tessera_subxact_callback, NULL);
}
