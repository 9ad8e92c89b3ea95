/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  tessera.verify(regclass): check a tessera table's storage the way
 *	  amcheck checks heap and btree, and return what is wrong as rows.
 *
 * NOTES
 *	  Reads never trust the catalog blindly, but they take what it says as
 *	  the truth about which stripes exist: a catalog row edited or deleted
 *	  by hand makes rows vanish without an error.  verify cross-checks what
 *	  the pieces say of each other:
 *
 *	  - the metapage (magic, version, the row numbers and stripe ids handed
 *		out so far);
 *	  - every stripe catalog row against the metapage and the others (known
 *		flags, row numbers and ids handed out, no two stripes holding the
 *		same rows, reservations overlapping no other stripe, placeholders
 *		only of running transactions and without pages);
 *	  - every stripe's directory (checksum, header equal to the catalog
 *		row, row groups covering the stripe's rows) and every chunk of
 *		every row group, read, checksummed and decoded;
 *	  - the row state map (map pages at their levels, pointing inside the
 *		relation) and every row state (known flags, row numbers handed out,
 *		transaction ids neither in the future nor older than relfrozenxid
 *		or relminmxid);
 *	  - every page: what references it (the metapage, a stripe, the state
 *		map) agrees with what it says it is, and no page is claimed twice.
 *		Stripe pages no catalog row references are reported as a warning:
 *		rolled-back writes and replaced stripes leave such pages until
 *		VACUUM moves stripes over them, and a lost catalog row does too.
 *
 *	  Each check that reads data runs in a subtransaction, so a corrupt
 *	  chunk or page is reported as a row and the rest is still checked.
 *	  Locking: AccessShareLock on the table, as a sequential scan; the
 *	  catalog is read under the latest snapshot.  Only the owner of the
 *	  table (or a superuser) may run it, as for VACUUM.
 *
 * IDENTIFICATION
 *	  src/debug/verify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

PG_FUNCTION_INFO_V1(tessera_verify);

#define KNOWN_STRIPE_FLAGS \
	(TESSERA_STRIPE_DELTA | TESSERA_STRIPE_FROZEN | TESSERA_STRIPE_FOLDED)
#define KNOWN_STATE_FLAGS \
	(TESSERA_RS_XMAX_COMMITTED | TESSERA_RS_XMAX_INVALID | TESSERA_RS_IS_MULTI | \
	 TESSERA_RS_LOCK_ONLY | TESSERA_RS_UPDATED | TESSERA_RS_KEYS_UPDATED | \
	 TESSERA_RS_FROZEN_DELETED | TESSERA_RS_INDEXES_CLEAN | TESSERA_RS_LOCK_MASK)

/* what references a page */
typedef enum PageUse
{
	PAGE_UNUSED = 0,
	PAGE_META,
	PAGE_STRIPE,				/* a visible stripe's */
	PAGE_OLD_STRIPE,			/* a catalog row no longer visible (not vacuumed yet) */
	PAGE_STATE_MAP,				/* a map or state page */
	PAGE_LOST_STRIPE			/* a stripe page nothing references */
} PageUse;

typedef struct Verify
{
	ReturnSetInfo *rsinfo;
	Relation	rel;
	Snapshot	snapshot;
	TesseraMeta meta;
	BlockNumber nblocks;
	uint8	   *use;			/* [nblocks] PageUse */
	int64		problems;
} Verify;

static void
report(Verify *v, const char *severity, int64 stripe_id, int rg, int attnum, int64 block,
	   const char *fmt,...) pg_attribute_printf(7, 8);

static void
report(Verify *v, const char *severity, int64 stripe_id, int rg, int attnum, int64 block,
	   const char *fmt,...)
{
	Datum		values[6];
	bool		nulls[6] = {0};
	StringInfoData buf;
	va_list		args;

	initStringInfo(&buf);
	for (;;)
	{
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	values[0] = CStringGetTextDatum(severity);
	values[1] = Int64GetDatum(stripe_id);
	nulls[1] = stripe_id < 0;
	values[2] = Int32GetDatum(rg);
	nulls[2] = rg < 0;
	values[3] = Int32GetDatum(attnum);
	nulls[3] = attnum <= 0;
	values[4] = Int64GetDatum(block);
	nulls[4] = block < 0;
	values[5] = CStringGetTextDatum(buf.data);
	tuplestore_putvalues(v->rsinfo->setResult, v->rsinfo->setDesc, values, nulls);
	v->problems++;
	pfree(buf.data);
}

/*
 * Run fn(v, arg) in a subtransaction; an error it raises is reported as a
 * problem (query cancel and the like are raised again).  Returns false if
 * it failed.
 */
typedef void (*VerifyStep) (Verify *v, void *arg);

static bool
try_step(Verify *v, VerifyStep fn, void *arg, int64 stripe_id, int rg, int attnum, int64 block)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bool		ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(v, arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
			edata->sqlerrcode == ERRCODE_OUT_OF_MEMORY)
			ReThrowError(edata);
		report(v, "error", stripe_id, rg, attnum, block, "%s%s%s", edata->message,
			   edata->detail ? ": " : "", edata->detail ? edata->detail : "");
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* ---- the catalog ---- */

static int
stripe_first_cmp(const ListCell *a, const ListCell *b)
{
	const TesseraStripe *x = lfirst(a);
	const TesseraStripe *y = lfirst(b);

	if (x->first_rownum != y->first_rownum)
		return x->first_rownum < y->first_rownum ? -1 : 1;
	return 0;
}

static void
check_catalog_row(Verify *v, TesseraStripe *s)
{
	int64		id = (int64) s->stripe_id;

	if (s->flags & ~KNOWN_STRIPE_FLAGS)
		report(v, "error", id, -1, -1, -1, "unknown stripe flags 0x%x", s->flags);
	if (s->stripe_id >= v->meta.next_stripe_id)
		report(v, "error", id, -1, -1, -1,
			   "stripe id was never handed out (the metapage's next is " UINT64_FORMAT ")",
			   v->meta.next_stripe_id);
	if (s->first_rownum + Max(s->row_count, s->reserved_rows) > v->meta.next_rownum)
		report(v, "error", id, -1, -1, -1,
			   "rows " UINT64_FORMAT ".." UINT64_FORMAT " were never handed out (the metapage's next row is " UINT64_FORMAT ")",
			   s->first_rownum, s->first_rownum + Max(s->row_count, s->reserved_rows) - 1,
			   v->meta.next_rownum);
	if (s->row_count == 0)
	{
		/* a placeholder: filled in when its stripe is written */
		if (s->nblocks != 0 || s->data_bytes != 0 || s->dir_bytes != 0 || s->n_row_groups != 0)
			report(v, "error", id, -1, -1, -1,
				   "catalog row says 0 rows (a placeholder, never read) but lists %u pages and %u row groups",
				   s->nblocks, s->n_row_groups);
		else if (!s->own && !TransactionIdIsInProgress(s->catalog_xmin))
			report(v, "error", id, -1, -1, -1,
				   "placeholder of a finished transaction (%u): a committed write fills its placeholder in",
				   s->catalog_xmin);
		return;
	}
	if (s->reserved_rows != 0 && s->reserved_rows < s->row_count)
		report(v, "error", id, -1, -1, -1,
			   "stripe holds " UINT64_FORMAT " rows but reserved only " UINT64_FORMAT,
			   s->row_count, s->reserved_rows);
	if (s->flags & TESSERA_STRIPE_DELTA)
	{
		if (s->nblocks != 0)
			report(v, "error", id, -1, -1, -1,
				   "a delta stripe (bytes in tessera_internal.delta) lists %u pages", s->nblocks);
	}
	else if (s->nblocks == 0)
		report(v, "error", id, -1, -1, -1, "stripe lists no pages and is not a delta stripe");
	else if (s->start_block == TESSERA_METAPAGE_BLKNO ||
			 (uint64) s->start_block + s->nblocks > v->nblocks)
		report(v, "error", id, -1, -1, s->start_block,
			   "stripe pages %u..%u lie outside the relation's %u pages",
			   s->start_block, s->start_block + s->nblocks - 1, v->nblocks);
}

/* Rows and reservations of the visible stripes, in row number order. */
static void
check_row_ranges(Verify *v, List *rows)
{
	TesseraStripe *prev = NULL;
	ListCell   *lc;

	foreach(lc, rows)
	{
		TesseraStripe *s = lfirst(lc);

		if (s->row_count == 0)
			continue;
		if (prev != NULL)
		{
			uint64		prev_end = prev->first_rownum + prev->row_count;
			uint64		prev_reserved = prev->first_rownum + Max(prev->row_count, prev->reserved_rows);

			if (s->first_rownum < prev_end)
				report(v, "error", (int64) s->stripe_id, -1, -1, -1,
					   "rows " UINT64_FORMAT ".. are also in stripe " UINT64_FORMAT,
					   s->first_rownum, prev->stripe_id);
			else if (s->first_rownum < prev_reserved)
				report(v, "error", (int64) prev->stripe_id, -1, -1, -1,
					   "reservation up to row " UINT64_FORMAT " overlaps stripe " UINT64_FORMAT,
					   prev_reserved - 1, s->stripe_id);
		}
		prev = s;
	}
}

/*
 * Catalog rows no longer visible whose inserter committed were replaced:
 * compaction, VACUUM's folds and moves write the same rows under a new
 * catalog row.  Rows such a row held that no visible stripe holds were
 * lost: the catalog row was deleted or changed by hand.
 */
static bool
is_visible_row(List *visible, TesseraStripe *s)
{
	ListCell   *lc;

	foreach(lc, visible)
	{
		if (ItemPointerEquals(&((TesseraStripe *) lfirst(lc))->catalog_tid, &s->catalog_tid))
			return true;
	}
	return false;
}

static void
check_replaced_rows(Verify *v, List *visible, List *all)
{
	ListCell   *lc;

	foreach(lc, all)
	{
		TesseraStripe *s = lfirst(lc);
		uint64		next,
					end;
		ListCell   *lc2;

		if (s->row_count == 0 || is_visible_row(visible, s) ||
			!TransactionIdDidCommit(s->catalog_xmin))
			continue;
		/* walk the visible stripes (in row order) over [first, end) */
		next = s->first_rownum;
		end = s->first_rownum + s->row_count;
		foreach(lc2, visible)
		{
			TesseraStripe *w = lfirst(lc2);

			if (w->row_count == 0 || w->first_rownum > next)
				continue;
			if (w->first_rownum + w->row_count > next)
				next = w->first_rownum + w->row_count;
			if (next >= end)
				break;
		}
		if (next < end)
			report(v, "error", (int64) s->stripe_id, -1, -1, -1,
				   "rows " UINT64_FORMAT ".." UINT64_FORMAT " of a replaced catalog row of this stripe are in no visible stripe: the catalog row was deleted or changed",
				   next, end - 1);
	}
}

/* ---- stripes: directories and chunks ---- */

typedef struct StripeArg
{
	TesseraReader *reader;
	int			stripe;
	int			rg;
} StripeArg;

static void
check_directory(Verify *v, void *arg)
{
	StripeArg  *a = arg;
	TesseraScanStripe *ss = &a->reader->stripes[a->stripe];
	TesseraStripeDir *dir = TesseraReaderDir(a->reader, a->stripe);
	uint64		next = ss->meta.first_rownum;
	uint64		rows = 0;
	int64		id = (int64) ss->meta.stripe_id;

	if (dir->hdr.stripe_id != ss->meta.stripe_id ||
		dir->hdr.first_rownum != ss->meta.first_rownum ||
		dir->hdr.row_count != ss->meta.row_count ||
		dir->hdr.n_row_groups != ss->meta.n_row_groups ||
		dir->hdr.natts != ss->meta.natts)
		report(v, "error", id, -1, -1, -1,
			   "directory (stripe " UINT64_FORMAT ", rows " UINT64_FORMAT "+" UINT64_FORMAT ", %u row groups, %u columns) disagrees with the catalog row (rows " UINT64_FORMAT "+" UINT64_FORMAT ", %u row groups, %u columns)",
			   dir->hdr.stripe_id, dir->hdr.first_rownum, dir->hdr.row_count,
			   dir->hdr.n_row_groups, dir->hdr.natts, ss->meta.first_rownum,
			   ss->meta.row_count, ss->meta.n_row_groups, ss->meta.natts);
	for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
	{
		if (dir->rgs[g].first_rownum != next)
			report(v, "error", id, (int) g, -1, -1,
				   "row group starts at row " UINT64_FORMAT ", expected " UINT64_FORMAT,
				   dir->rgs[g].first_rownum, next);
		next = dir->rgs[g].first_rownum + dir->rgs[g].row_count;
		rows += dir->rgs[g].row_count;
	}
	if (rows != dir->hdr.row_count)
		report(v, "error", id, -1, -1, -1,
			   "row groups hold " UINT64_FORMAT " rows, the stripe " UINT64_FORMAT,
			   rows, dir->hdr.row_count);
}

/* Read, checksum and decode every column of one row group. */
static void
check_row_group(Verify *v, void *arg)
{
	StripeArg  *a = arg;
	TesseraReader *r = a->reader;

	if (!TesseraReaderLoad(r, a->stripe, a->rg))
		return;
	for (int i = 0; i < r->natts; i++)
	{
		Datum	   *values;
		bool	   *isnull;

		if (TupleDescAttr(r->tupdesc, i)->attisdropped)
			continue;
		TesseraBatchColumn(&r->batch, i, &values, &isnull);
	}
	/* the next row group starts from a clean batch */
	r->batch.stripe = -1;
}

static void
check_stripes(Verify *v)
{
	TesseraReader *r = TesseraReaderBegin(v->rel, v->snapshot, false);

	/*
	 * The reader outlives the subtransactions of the steps: what it holds
	 * open across them must be opened out here (a relation opened inside
	 * a step would be closed when the step's subtransaction ends).
	 */
	if (r->catalog == NULL)
		r->catalog = TesseraOpenDelta();
	for (int i = 0; i < r->nstripes; i++)
	{
		TesseraScanStripe *ss = &r->stripes[i];
		StripeArg	a = {r, i, -1};
		int64		id = (int64) ss->meta.stripe_id;

		if (!try_step(v, check_directory, &a, id, -1, -1, -1))
			continue;
		for (uint32 g = 0; g < ss->meta.n_row_groups; g++)
		{
			a.rg = (int) g;
			if (!try_step(v, check_row_group, &a, id, (int) g, -1, -1))
				r->batch.stripe = -1;
		}
		CHECK_FOR_INTERRUPTS();
	}
	TesseraReaderEnd(r);
}

typedef struct CatalogArg
{
	List	   *visible;
	List	   *all;
} CatalogArg;

static void
list_catalog(Verify *v, void *arg)
{
	CatalogArg *c = arg;

	c->visible = TesseraListCatalogRows(v->meta.storage_id, v->snapshot, true);
	c->all = TesseraListCatalogRows(v->meta.storage_id, SnapshotAny, true);
}

/* The reader's own checks of the catalog rows it lists (sizes, bounds). */
static void
begin_reader(Verify *v, void *arg)
{
	TesseraReaderEnd(TesseraReaderBegin(v->rel, v->snapshot, false));
}

/* ---- pages ---- */

static void
claim_pages(Verify *v, TesseraStripe *s, PageUse use)
{
	if (s->row_count == 0 || (s->flags & TESSERA_STRIPE_DELTA) || s->nblocks == 0)
		return;
	for (BlockNumber b = s->start_block; b < s->start_block + s->nblocks && b < v->nblocks; b++)
	{
		if (use == PAGE_STRIPE && v->use[b] == PAGE_STRIPE)
			report(v, "error", (int64) s->stripe_id, -1, -1, b,
				   "page belongs to another visible stripe too");
		else if (use == PAGE_STRIPE && v->use[b] == PAGE_META)
			report(v, "error", (int64) s->stripe_id, -1, -1, b, "stripe lists the metapage");
		if (v->use[b] == PAGE_UNUSED || v->use[b] == PAGE_OLD_STRIPE)
			v->use[b] = use;
	}
}

typedef struct PageArg
{
	BlockNumber blkno;
} PageArg;

static void
check_page_kind(Verify *v, void *arg)
{
	BlockNumber blkno = ((PageArg *) arg)->blkno;
	Buffer		buf = ReadBufferExtended(v->rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	Page		page;
	TesseraPageOpaqueData *opaque = NULL;
	bool		ours;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	ours = !PageIsNew(page) &&
		((PageHeader) page)->pd_special == BLCKSZ - MAXALIGN(sizeof(TesseraPageOpaqueData));
	if (ours)
	{
		opaque = (TesseraPageOpaqueData *) PageGetSpecialPointer(page);
		ours = opaque->magic == TESSERA_PAGE_MAGIC;
	}
	switch ((PageUse) v->use[blkno])
	{
		case PAGE_META:
			break;
		case PAGE_STRIPE:
			if (!ours || opaque->kind != TESSERA_PAGE_STRIPE)
				report(v, "error", -1, -1, -1, blkno,
					   "page of a stripe is not a stripe page");
			break;
		case PAGE_STATE_MAP:
			/* their kinds and levels are checked walking the map */
			break;
		case PAGE_OLD_STRIPE:
		case PAGE_UNUSED:
		case PAGE_LOST_STRIPE:
			if (ours && (opaque->kind == TESSERA_PAGE_MAP || opaque->kind == TESSERA_PAGE_STATE) &&
				v->use[blkno] == PAGE_UNUSED)
				v->use[blkno] = PAGE_UNUSED;	/* an unhooked map or state page: free */
			else if (ours && opaque->kind == TESSERA_PAGE_STRIPE && v->use[blkno] == PAGE_UNUSED)
				v->use[blkno] = PAGE_LOST_STRIPE;
			else if (!ours && !PageIsNew(page))
				report(v, "error", -1, -1, -1, blkno, "page is not a tessera page");
			break;
	}
	UnlockReleaseBuffer(buf);
}

static void
check_pages(Verify *v)
{
	BlockNumber run_start = InvalidBlockNumber;

	for (BlockNumber b = 1; b < v->nblocks; b++)
	{
		PageArg		a = {b};

		try_step(v, check_page_kind, &a, -1, -1, -1, b);
		CHECK_FOR_INTERRUPTS();
	}
	/* runs of stripe pages nothing references */
	for (BlockNumber b = 1; b <= v->nblocks; b++)
	{
		bool		lost = b < v->nblocks && v->use[b] == PAGE_LOST_STRIPE;

		if (lost && run_start == InvalidBlockNumber)
			run_start = b;
		else if (!lost && run_start != InvalidBlockNumber)
		{
			report(v, "warning", -1, -1, -1, run_start,
				   "stripe pages %u..%u are referenced by no stripe catalog row: left by a rolled-back write or a replaced stripe (VACUUM reuses them), or a stripe whose catalog row was lost",
				   run_start, b - 1);
			run_start = InvalidBlockNumber;
		}
	}
}

/* ---- row states ---- */

typedef struct StateArg
{
	Verify	   *v;
	TransactionId next_xid;
	TransactionId frozenxid;
	MultiXactId minmulti;
	MultiXactId next_multi;
} StateArg;

static void
check_state_page(Relation rel, BlockNumber blkno, uint64 first, void *arg)
{
	StateArg   *sa = arg;
	Verify	   *v = sa->v;
	TesseraRowState entries[TESSERA_STATE_ROWS];

	if (blkno < v->nblocks)
	{
		if (v->use[blkno] == PAGE_STRIPE)
			report(v, "error", -1, -1, -1, blkno, "state page is also a stripe's page");
		v->use[blkno] = PAGE_STATE_MAP;
	}
	TesseraCopyStatePage(rel, blkno, entries);
	for (int i = 0; i < TESSERA_STATE_ROWS; i++)
	{
		TesseraRowState *st = &entries[i];
		uint64		rownum = first + i;

		if (TesseraRowStateEmpty(st))
			continue;
		if (st->infomask & ~KNOWN_STATE_FLAGS)
			report(v, "error", -1, -1, -1, blkno,
				   "row " UINT64_FORMAT ": unknown state flags 0x%x", rownum, st->infomask);
		if (rownum >= v->meta.next_rownum)
			report(v, "error", -1, -1, -1, blkno,
				   "row " UINT64_FORMAT " has a state but was never handed out", rownum);
		if ((st->infomask & TESSERA_RS_UPDATED) &&
			TesseraRowStateNewRownum(st) >= v->meta.next_rownum)
			report(v, "error", -1, -1, -1, blkno,
				   "row " UINT64_FORMAT " was updated to row " UINT64_FORMAT ", never handed out",
				   rownum, TesseraRowStateNewRownum(st));
		if ((st->infomask & TESSERA_RS_FROZEN_DELETED) || !TransactionIdIsValid(st->xmax))
			continue;
		if (st->infomask & TESSERA_RS_IS_MULTI)
		{
			if (MultiXactIdIsValid(sa->minmulti) && MultiXactIdPrecedes(st->xmax, sa->minmulti))
				report(v, "error", -1, -1, -1, blkno,
					   "row " UINT64_FORMAT ": multixact %u precedes relminmxid %u",
					   rownum, st->xmax, sa->minmulti);
			else if (!MultiXactIdPrecedes(st->xmax, sa->next_multi))
				report(v, "error", -1, -1, -1, blkno,
					   "row " UINT64_FORMAT ": multixact %u is in the future", rownum, st->xmax);
		}
		else if (TransactionIdIsNormal(st->xmax))
		{
			if (TransactionIdIsNormal(sa->frozenxid) &&
				TransactionIdPrecedes(st->xmax, sa->frozenxid))
				report(v, "error", -1, -1, -1, blkno,
					   "row " UINT64_FORMAT ": xmax %u precedes relfrozenxid %u",
					   rownum, st->xmax, sa->frozenxid);
			else if (!TransactionIdPrecedes(st->xmax, sa->next_xid))
				report(v, "error", -1, -1, -1, blkno,
					   "row " UINT64_FORMAT ": xmax %u is in the future", rownum, st->xmax);
		}
	}
}

static void
check_states(Verify *v, void *arg)
{
	StateArg	sa;
	bool	   *used = palloc0(sizeof(bool) * Max(v->nblocks, 1));

	sa.v = v;
	sa.next_xid = XidFromFullTransactionId(ReadNextFullTransactionId());
	sa.frozenxid = v->rel->rd_rel->relfrozenxid;
	sa.minmulti = v->rel->rd_rel->relminmxid;
	sa.next_multi = ReadNextMultiXactId();

	/* map and state pages: the map walk checks their kinds and levels */
	(void) TesseraMarkStatePages(v->rel, used, v->nblocks);
	for (BlockNumber b = 0; b < v->nblocks; b++)
	{
		if (!used[b])
			continue;
		if (v->use[b] == PAGE_STRIPE || v->use[b] == PAGE_META)
			report(v, "error", -1, -1, -1, b,
				   "the row state map references a page of a stripe or the metapage");
		else
			v->use[b] = PAGE_STATE_MAP;
	}
	pfree(used);
	TesseraForEachStatePage(v->rel, check_state_page, &sa);
}

/* ---- the function ---- */

static void
read_meta(Verify *v, void *arg)
{
	TesseraReadMeta(v->rel, &v->meta);
}

Datum
tessera_verify(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Verify		v;
	CatalogArg	cat = {NIL, NIL};
	ListCell   *lc;

	memset(&v, 0, sizeof(v));
	v.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	InitMaterializedSRF(fcinfo, 0);

	v.rel = relation_open(relid, AccessShareLock);
	if (!IsTesseraRelation(v.rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tessera table", RelationGetRelationName(v.rel))));
	if (!TesseraRelationOwnerCheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(v.rel));
	TesseraFlushRelation(v.rel);
	v.snapshot = RegisterSnapshot(GetLatestSnapshot());
	v.nblocks = TesseraPhysicalBlocks(v.rel);
	v.use = palloc0(Max(v.nblocks, 1));
	if (v.nblocks > 0)
		v.use[TESSERA_METAPAGE_BLKNO] = PAGE_META;

	if (!try_step(&v, read_meta, NULL, -1, -1, -1, TESSERA_METAPAGE_BLKNO))
		goto done;
	if (!v.meta.valid)
	{
		if (v.nblocks > 1)
			report(&v, "error", -1, -1, -1, TESSERA_METAPAGE_BLKNO,
				   "the relation has %u pages but no valid metapage", v.nblocks);
		goto done;
	}

	/* the catalog rows and what they say */
	if (!try_step(&v, list_catalog, &cat, -1, -1, -1, -1))
		goto done;
	list_sort(cat.visible, stripe_first_cmp);
	foreach(lc, cat.visible)
		check_catalog_row(&v, lfirst(lc));
	check_row_ranges(&v, cat.visible);
	check_replaced_rows(&v, cat.visible, cat.all);
	foreach(lc, cat.visible)
		claim_pages(&v, lfirst(lc), PAGE_STRIPE);
	foreach(lc, cat.all)
		claim_pages(&v, lfirst(lc), PAGE_OLD_STRIPE);

	/* directories and chunks of every visible stripe */
	if (try_step(&v, begin_reader, NULL, -1, -1, -1, -1))
		check_stripes(&v);

	/* the row state map and the states */
	try_step(&v, check_states, NULL, -1, -1, -1, -1);

	/* every page */
	check_pages(&v);

done:
	UnregisterSnapshot(v.snapshot);
	relation_close(v.rel, AccessShareLock);
	return (Datum) 0;
}
