/*-------------------------------------------------------------------------
 *
 * modify.c
 *	  INSERT, DELETE, UPDATE and row locks on a tessera relation.
 *
 * NOTES
 *	  Inserts go to the backend's write buffer (writer.c), which gives each
 *	  row its final TID at once.
 *
 *	  DELETE, UPDATE and SELECT ... FOR UPDATE/SHARE change the row's state
 *	  entry (rowstate.c), which plays the part of a heap tuple's xmax, with
 *	  heap's rules: an entry names one deleter, updater or locker, or a
 *	  MultiXactId when several transactions hold compatible locks (and at
 *	  most one of them updates).  Under the state page's exclusive lock we
 *	  look at the current holders:
 *
 *	  - our own update or delete: TM_SelfModified;
 *	  - a committed update or delete: TM_Updated (with the new version's
 *		TID) or TM_Deleted, for EvalPlanQual or a serialization failure;
 *	  - a running holder whose lock conflicts with ours: unlock the page,
 *		take the heavyweight tuple lock (so waiters queue as on heap), wait
 *		for that transaction, and look again;
 *	  - otherwise we add ourselves, write the entry and WAL-log it.
 *
 *	  An UPDATE marks the old row updated first, then inserts the new
 *	  version through the write buffer, then records the new version's row
 *	  number in the old row's entry.  Until it commits, nobody else can use
 *	  that number anyway: they wait for us first.  Row locks live in the
 *	  same entries (lock-only xmax), so they cost a state page write like
 *	  heap's do.
 *
 * IDENTIFICATION
 *	  src/tableam/modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "tessera/cache.h"
#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/slot.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"
#include "tessera/xlog.h"

#define NEW_ROWNUM_PENDING	UINT64CONST(0xFFFFFFFFFFFF)

typedef enum ModifyOp
{
	OP_DELETE,
	OP_UPDATE,
	OP_LOCK
} ModifyOp;

/* a transaction holding the row: deleter, updater or locker */
typedef struct Holder
{
	TransactionId xid;
	LockTupleMode mode;
	bool		updater;
} Holder;

/* heavyweight lock modes that make tuple lock waiters queue as heap's do */
static const LOCKMODE tuple_lock_modes[] = {
	AccessShareLock,			/* LockTupleKeyShare */
	RowShareLock,				/* LockTupleShare */
	ExclusiveLock,				/* LockTupleNoKeyExclusive */
	AccessExclusiveLock			/* LockTupleExclusive */
};

static bool
modes_conflict(LockTupleMode a, LockTupleMode b)
{
	if (a == LockTupleExclusive || b == LockTupleExclusive)
		return true;
	if (a == LockTupleKeyShare || b == LockTupleKeyShare)
		return false;
	/* Share and NoKeyExclusive */
	return !(a == LockTupleShare && b == LockTupleShare);
}

static LockTupleMode
mode_of_status(MultiXactStatus status)
{
	switch (status)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		default:
			return LockTupleExclusive;
	}
}

static MultiXactStatus
status_of(LockTupleMode mode, bool updater)
{
	if (updater)
		return mode == LockTupleExclusive ? MultiXactStatusUpdate : MultiXactStatusNoKeyUpdate;
	switch (mode)
	{
		case LockTupleKeyShare:
			return MultiXactStatusForKeyShare;
		case LockTupleShare:
			return MultiXactStatusForShare;
		case LockTupleNoKeyExclusive:
			return MultiXactStatusForNoKeyUpdate;
		default:
			return MultiXactStatusForUpdate;
	}
}

/* The holders named by a state entry, palloc'd; returns their number. */
static int
entry_holders(const TesseraRowState *st, Holder **out)
{
	Holder	   *h;

	*out = NULL;
	if (st->xmax == InvalidTransactionId || (st->infomask & TESSERA_RS_XMAX_INVALID))
		return 0;
	if (st->infomask & TESSERA_RS_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(st->xmax, &members, false,
											  (st->infomask & TESSERA_RS_LOCK_ONLY) != 0);

		if (n <= 0)
			return 0;
		h = palloc(sizeof(Holder) * n);
		for (int i = 0; i < n; i++)
		{
			h[i].xid = members[i].xid;
			h[i].mode = mode_of_status(members[i].status);
			h[i].updater = ISUPDATE_from_mxstatus(members[i].status);
		}
		pfree(members);
		*out = h;
		return n;
	}
	h = palloc(sizeof(Holder));
	h->xid = st->xmax;
	h->updater = (st->infomask & TESSERA_RS_LOCK_ONLY) == 0;
	if (h->updater)
		h->mode = (st->infomask & TESSERA_RS_KEYS_UPDATED) ? LockTupleExclusive : LockTupleNoKeyExclusive;
	else
		h->mode = (LockTupleMode) ((st->infomask & TESSERA_RS_LOCK_MASK) >> TESSERA_RS_LOCK_SHIFT);
	*out = h;
	return 1;
}

/*
 * Command ids of rows our own transaction inserted, for the stripe last
 * asked about; kept for the transaction so bulk changes probe the catalog
 * once per stripe.
 */
typedef struct OwnStripeCache
{
	LocalTransactionId lxid;
	RelFileLocator node;
	uint64		first;
	uint64		end;
	bool		own;
	int			nruns;
	TesseraCidRun *runs;
} OwnStripeCache;

static OwnStripeCache own_cache;

/*
 * If our own transaction inserted row rownum, set *cmin to the command
 * that did and return true.
 */
static bool
own_insert_cid(Relation rel, uint64 rownum, CommandId *cmin)
{
	if (own_cache.lxid != TesseraMyLxid() || !RelFileLocatorEquals(own_cache.node, TesseraRelLocator(rel)) ||
		rownum < own_cache.first || rownum >= own_cache.end)
	{
		TesseraMeta meta;
		TesseraStripe s;

		own_cache.lxid = InvalidLocalTransactionId;
		own_cache.runs = NULL;
		TesseraReadMeta(rel, &meta);
		if (!meta.valid || !TesseraFindStripe(meta.storage_id, rownum, SnapshotAny, &s))
			return false;
		own_cache.first = s.first_rownum;
		own_cache.end = s.first_rownum + s.row_count;
		own_cache.own = s.own;
		own_cache.nruns = 0;
		if (s.own)
		{
			MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
			TesseraStripeDir *dir = TesseraLoadDir(rel, &s, TesseraPhysicalBlocks(rel));

			own_cache.nruns = dir->hdr.n_cid_runs;
			own_cache.runs = dir->cids;
			MemoryContextSwitchTo(old);
		}
		own_cache.node = TesseraRelLocator(rel);
		own_cache.lxid = TesseraMyLxid();
	}
	if (!own_cache.own)
		return false;
	*cmin = FirstCommandId;
	for (int k = 0; k < own_cache.nruns; k++)
		if (own_cache.runs[k].first_row <= rownum - own_cache.first)
			*cmin = own_cache.runs[k].cid;
	return true;
}

static void
fill_failure(TM_FailureData *tmfd, ItemPointer tid, const TesseraRowState *st,
			 TransactionId xmax, CommandId cmax)
{
	uint64		newrow = TesseraRowStateNewRownum(st);

	tmfd->xmax = xmax;
	tmfd->cmax = cmax;
	if ((st->infomask & TESSERA_RS_UPDATED) && newrow != NEW_ROWNUM_PENDING)
	{
		if (newrow == TESSERA_MAX_ROWNUM)
			ItemPointerSetMovedPartitions(&tmfd->ctid);
		else
			TesseraRownumToTid(newrow, &tmfd->ctid);
	}
	else
		tmfd->ctid = *tid;
}

/* What the holders of a row's state entry mean for a change by us. */
typedef struct HolderVerdict
{
	bool		self_modified;	/* we updated or deleted the row */
	CommandId	self_cmax;
	int			own_lock;		/* strongest LockTupleMode we hold, or -1 */
	int			own_same_lock;	/* ... under the xid we write with */
	Holder	   *wait_for;		/* a running holder whose lock conflicts */
	Holder	   *committed;		/* a committed updater or deleter */
} HolderVerdict;

static void
judge_holders(const TesseraRowState *entry, Holder *holders, int n, TransactionId xid,
			  LockTupleMode mode, HolderVerdict *v)
{
	v->self_modified = false;
	v->self_cmax = InvalidCommandId;
	v->own_lock = -1;
	v->own_same_lock = -1;
	v->wait_for = NULL;
	v->committed = NULL;
	for (int i = 0; i < n; i++)
	{
		Holder	   *h = &holders[i];

		if (TransactionIdIsCurrentTransactionId(h->xid))
		{
			if (h->updater)
			{
				v->self_modified = true;
				v->self_cmax = entry->cmax;
			}
			else
			{
				if ((int) h->mode > v->own_lock)
					v->own_lock = (int) h->mode;
				if (TransactionIdEquals(h->xid, xid) && (int) h->mode > v->own_same_lock)
					v->own_same_lock = (int) h->mode;
			}
		}
		else if (TransactionIdIsInProgress(h->xid))
		{
			if (modes_conflict(h->mode, mode) && v->wait_for == NULL)
				v->wait_for = h;
		}
		else if (h->updater && TransactionIdDidCommit(h->xid))
			v->committed = h;
	}
}

/*
 * Wait for running transaction wxid to end, as wait_policy says.  Returns
 * false, with *result, where the policy says not to wait.  The tuple lock
 * queues us behind other waiters for the row -- unless we hold a lock on
 * it already (holds_lock): a waiter queued behind us would then wait for
 * our transaction while we wait for it in the queue, a deadlock where heap
 * has none (it skips the tuple lock when upgrading a lock it holds in a
 * multixact).
 */
static bool
wait_for_row(Relation rel, ItemPointer tid, TransactionId wxid, ModifyOp op,
			 LockTupleMode tuplock_mode, LockWaitPolicy wait_policy, bool holds_lock,
			 bool *have_tuple_lock, TM_Result *result)
{
	if (!*have_tuple_lock && !holds_lock)
	{
		switch (wait_policy)
		{
			case LockWaitBlock:
				LockTuple(rel, tid, tuple_lock_modes[tuplock_mode]);
				break;
			case LockWaitSkip:
				if (!TesseraConditionalLockTuple(rel, tid, tuple_lock_modes[tuplock_mode]))
				{
					*result = TM_WouldBlock;
					return false;
				}
				break;
			case LockWaitError:
				if (!TesseraConditionalLockTuple(rel, tid, tuple_lock_modes[tuplock_mode]))
					ereport(ERROR,
							(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
							 errmsg("could not obtain lock on row in relation \"%s\"",
									RelationGetRelationName(rel))));
				break;
		}
		*have_tuple_lock = true;
	}
	switch (wait_policy)
	{
		case LockWaitBlock:
			XactLockTableWait(wxid, rel, tid,
							  op == OP_DELETE ? XLTW_Delete :
							  op == OP_UPDATE ? XLTW_Update : XLTW_Lock);
			break;
		case LockWaitSkip:
			if (!TesseraConditionalXactLockTableWait(wxid))
			{
				*result = TM_WouldBlock;
				return false;
			}
			break;
		case LockWaitError:
			if (!TesseraConditionalXactLockTableWait(wxid))
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			break;
	}
	return true;
}

/*
 * Write the row's new state entry (page locked by ref): our change joins
 * the holders that stay.
 */
static void
write_change(Relation rel, TesseraStateRef *ref, Holder *holders, int n, TransactionId xid,
			 CommandId cid, ModifyOp op, LockTupleMode mode, int own_same_lock,
			 bool changing_part)
{
	MultiXactMember *members = palloc(sizeof(MultiXactMember) * (n + 1));
	int			nmembers = 0;
	TesseraRowState newst;
	bool		updater_present = (op != OP_LOCK);
	bool		stay_updater = false;	/* another's update stays */

	/*
	 * Holders that stay: running compatible locks and updaters, a committed
	 * non-key update a key-share lock joins, and our own under another
	 * (sub)transaction id -- a lock the parent holds must outlive a
	 * subtransaction that rolls back, as heap keeps it in a multixact.  Our
	 * entries under this id merge into the new one.
	 */
	for (int i = 0; i < n; i++)
	{
		Holder	   *h = &holders[i];

		if (TransactionIdEquals(h->xid, xid))
			continue;
		if (TransactionIdIsCurrentTransactionId(h->xid))
		{
			if (h->updater)
				continue;		/* an update of ours: self_modified before */
		}
		else if (!TransactionIdIsInProgress(h->xid) &&
				 !(h->updater && TransactionIdDidCommit(h->xid)))
			continue;			/* gone: finished lockers, aborted updaters */
		members[nmembers].xid = h->xid;
		members[nmembers].status = status_of(h->mode, h->updater);
		if (h->updater)
		{
			updater_present = true;
			stay_updater = true;
		}
		nmembers++;
	}

	memset(&newst, 0, sizeof(newst));
	newst.cmax = cid;
	/* never weaken a lock we already hold under this id */
	if (own_same_lock > (int) mode)
		mode = (LockTupleMode) own_same_lock;
	if (nmembers == 0)
	{
		newst.xmax = xid;
		if (op == OP_LOCK)
			newst.infomask = TESSERA_RS_LOCK_ONLY | ((uint16) mode << TESSERA_RS_LOCK_SHIFT);
	}
	else
	{
		members[nmembers].xid = xid;
		members[nmembers].status = status_of(mode, op != OP_LOCK);
		nmembers++;
		newst.xmax = MultiXactIdCreateFromMembers(nmembers, members);
		newst.infomask = TESSERA_RS_IS_MULTI;
		if (!updater_present)
			newst.infomask |= TESSERA_RS_LOCK_ONLY;
	}
	pfree(members);

	/*
	 * A lock that joins a running update (FOR KEY SHARE beside a non-key
	 * UPDATE) keeps the row marked updated, with the way to its new
	 * version: a change that waits for the update must find the new
	 * version once it commits, and not take the row for deleted.
	 */
	if (op == OP_LOCK && stay_updater)
	{
		newst.infomask |= ref->entry->infomask & (TESSERA_RS_UPDATED | TESSERA_RS_KEYS_UPDATED);
		newst.new_hi = ref->entry->new_hi;
		newst.new_lo = ref->entry->new_lo;
	}
	if (op != OP_LOCK)
	{
		if (mode == LockTupleExclusive)
			newst.infomask |= TESSERA_RS_KEYS_UPDATED;
		if (op == OP_UPDATE || changing_part)
		{
			uint64		pending = changing_part ? TESSERA_MAX_ROWNUM : NEW_ROWNUM_PENDING;

			newst.infomask |= TESSERA_RS_UPDATED;
			newst.new_hi = (uint16) (pending >> 32);
			newst.new_lo = (uint32) pending;
		}
	}

	START_CRIT_SECTION();
	*ref->entry = newst;
	TesseraLogRowState(rel, ref);
	END_CRIT_SECTION();
}

/*
 * Delete, mark updated or lock row *tid.  mode is the lock strength the
 * operation needs.  On TM_Ok the entry is written and the page released.
 */
static TM_Result
modify_row(Relation rel, ItemPointer tid, CommandId cid, Snapshot crosscheck,
		   ModifyOp op, LockTupleMode mode, LockWaitPolicy wait_policy,
		   bool changing_part, TM_FailureData *tmfd, bool *own_locked)
{
	uint64		rownum;
	TransactionId xid = GetCurrentTransactionId();
	LockTupleMode tuplock_mode = mode;
	bool		have_tuple_lock = false;
	TesseraStateRef ref;
	TM_Result	result;

	if (!TesseraTidToRownum(tid, &rownum))
		elog(ERROR, "invalid tessera TID (%u,%u)",
			 ItemPointerGetBlockNumberNoCheck(tid), ItemPointerGetOffsetNumberNoCheck(tid));

	/* a row still in this backend's buffer must be on disk before it changes */
	TesseraFlushRowIfPending(rel, rownum);
	MultiXactIdSetOldestMember();
	if (op != OP_LOCK)
		CheckForSerializableConflictIn(rel, tid, ItemPointerGetBlockNumber(tid));

	for (;;)
	{
		Holder	   *holders;
		int			n;
		HolderVerdict v;
		CommandId	cmin;

		CHECK_FOR_INTERRUPTS();

		/* inserted by a later command of our own transaction: not ours to see */
		if (own_insert_cid(rel, rownum, &cmin) && cmin >= cid)
		{
			result = TM_Invisible;
			break;
		}

		TesseraLockRowState(rel, rownum, &ref);
		n = entry_holders(ref.entry, &holders);

		if (ref.entry->infomask & TESSERA_RS_FROZEN_DELETED)
		{
			fill_failure(tmfd, tid, ref.entry, InvalidTransactionId, InvalidCommandId);
			TesseraUnlockRowState(&ref);
			result = TM_Deleted;
			break;
		}

		judge_holders(ref.entry, holders, n, xid, mode, &v);
		if (v.self_modified)
		{
			fill_failure(tmfd, tid, ref.entry, xid, v.self_cmax);
			TesseraUnlockRowState(&ref);
			/* changed by this command or a later one, or before it (then gone) */
			result = (v.self_cmax >= cid) ? TM_SelfModified : TM_Invisible;
			break;
		}

		/*
		 * FOR KEY SHARE may lock a version whose committed update kept the
		 * keys (heap's rule): the update stays in the entry, the lock joins
		 * it and follows to the newer versions.
		 */
		if (v.committed && op == OP_LOCK && mode == LockTupleKeyShare &&
			v.committed->mode == LockTupleNoKeyExclusive &&
			(ref.entry->infomask & TESSERA_RS_UPDATED))
			v.committed = NULL;
		if (v.committed)
		{
			fill_failure(tmfd, tid, ref.entry, v.committed->xid, InvalidCommandId);
			result = (ref.entry->infomask & TESSERA_RS_UPDATED) ? TM_Updated : TM_Deleted;
			TesseraUnlockRowState(&ref);
			break;
		}
		if (v.wait_for)
		{
			TransactionId wxid = v.wait_for->xid;

			fill_failure(tmfd, tid, ref.entry, wxid, InvalidCommandId);
			TesseraUnlockRowState(&ref);
			if (op != OP_LOCK && wait_policy == LockWaitError)
			{
				/* tuple_delete/update without waiting */
				result = TM_BeingModified;
				break;
			}
			if (!wait_for_row(rel, tid, wxid, op, tuplock_mode, wait_policy, v.own_lock >= 0,
							  &have_tuple_lock, &result))
				break;
			if (n > 0)
				pfree(holders);
			continue;
		}

		/* free to go; a serializable crosscheck may still object */
		if (crosscheck != InvalidSnapshot && !TesseraRowInsertedVisible(rel, rownum, crosscheck))
		{
			fill_failure(tmfd, tid, ref.entry, InvalidTransactionId, InvalidCommandId);
			TesseraUnlockRowState(&ref);
			result = TM_Updated;
			break;
		}

		/* a lock we already hold at least as strongly: nothing to write */
		if (op == OP_LOCK && v.own_lock >= (int) mode)
		{
			TesseraUnlockRowState(&ref);
			result = TM_Ok;
			break;
		}

		write_change(rel, &ref, holders, n, xid, cid, op, mode, v.own_same_lock,
					 changing_part);
		TesseraUnlockRowState(&ref);
		if (own_locked)
			*own_locked = v.own_lock >= 0;
		result = TM_Ok;
		break;
	}

	if (have_tuple_lock)
		UnlockTuple(rel, tid, tuple_lock_modes[tuplock_mode]);
	return result;
}

/* Record where an updated row's new version went. */
static void
set_new_version(Relation rel, uint64 rownum, uint64 newrow)
{
	TesseraStateRef ref;

	TesseraLockRowState(rel, rownum, &ref);
	START_CRIT_SECTION();
	ref.entry->new_hi = (uint16) (newrow >> 32);
	ref.entry->new_lo = (uint32) newrow;
	TesseraLogRowState(rel, &ref);
	END_CRIT_SECTION();
	TesseraUnlockRowState(&ref);
}

/*
 * The new version of an updated row inherits the locks other transactions
 * still hold on the old one (only FOR KEY SHARE survives a non-key update):
 * a foreign key check's lock must keep the row from being deleted whatever
 * version it is in, as heap's update copies the lockers to the new tuple.
 * Returns the xmax written (InvalidTransactionId if none).
 */
static TransactionId
carry_lockers(Relation rel, uint64 oldrow, uint64 newrow)
{
	TesseraRowState st;
	Holder	   *holders;
	MultiXactMember *members;
	int			n;
	int			nmembers = 0;
	TesseraStateRef ref;
	TesseraRowState newst;

	if (!TesseraGetRowState(rel, oldrow, &st))
		return InvalidTransactionId;
	n = entry_holders(&st, &holders);
	if (n == 0)
		return InvalidTransactionId;
	members = palloc(sizeof(MultiXactMember) * n);
	for (int i = 0; i < n; i++)
	{
		Holder	   *h = &holders[i];

		if (h->updater || TransactionIdIsCurrentTransactionId(h->xid) ||
			!TransactionIdIsInProgress(h->xid))
			continue;
		members[nmembers].xid = h->xid;
		members[nmembers].status = status_of(h->mode, false);
		nmembers++;
	}
	pfree(holders);
	if (nmembers == 0)
	{
		pfree(members);
		return InvalidTransactionId;
	}

	memset(&newst, 0, sizeof(newst));
	if (nmembers == 1)
	{
		newst.xmax = members[0].xid;
		newst.infomask = TESSERA_RS_LOCK_ONLY |
			((uint16) mode_of_status(members[0].status) << TESSERA_RS_LOCK_SHIFT);
	}
	else
	{
		newst.xmax = MultiXactIdCreateFromMembers(nmembers, members);
		newst.infomask = TESSERA_RS_IS_MULTI | TESSERA_RS_LOCK_ONLY;
	}
	pfree(members);

	TesseraLockRowState(rel, newrow, &ref);
	START_CRIT_SECTION();
	*ref.entry = newst;
	TesseraLogRowState(rel, &ref);
	END_CRIT_SECTION();
	TesseraUnlockRowState(&ref);
	return newst.xmax;
}

/* Does the update change a column that a unique index or foreign key uses? */
static bool
keys_change(Relation rel, ItemPointer otid, TupleTableSlot *newslot)
{
	Bitmapset  *keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	TupleTableSlot *old;
	bool		changed;

	if (bms_is_empty(keys))
		return false;
	old = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsTessera);
	/* only the key columns are decoded and compared */
	changed = !TesseraFetchUnmaterialized(rel, otid, SnapshotAny, old) ||
		TesseraSlotColumnsDiffer(old, newslot, keys);
	ExecDropSingleTupleTableSlot(old);
	bms_free(keys);
	return changed;
}

/*
 * Buffer a new row version; the slot gets its TID, and the inserting
 * transaction as xmin (RETURNING xmin sees it, as on heap).
 */
static void
write_row(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	TesseraWriteRow(rel, slot, cid);
	TesseraSlotSetXmin(slot, GetCurrentTransactionId());
}

static void
insert_row(Relation rel, TupleTableSlot *slot, CommandId cid)
{
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	write_row(rel, slot, cid);
	pgstat_count_heap_insert(rel, 1);
}

void
tessera_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
					 struct BulkInsertStateData *bistate)
{
	insert_row(rel, slot, cid);
	if (TesseraLogicalWanted(rel, options))
		TesseraLogicalInsert(rel, &slot, 1);
}

void
tessera_multi_insert(Relation rel, TupleTableSlot **slots, int nslots, CommandId cid,
					 int options, struct BulkInsertStateData *bistate)
{
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	for (int i = 0; i < nslots; i++)
		write_row(rel, slots[i], cid);
	pgstat_count_heap_insert(rel, nslots);
	if (TesseraLogicalWanted(rel, options))
		TesseraLogicalInsert(rel, slots, nslots);
}

/*
 * TesseraInsertColumns
 *		tessera_multi_insert of nrows rows given as columns (as
 *		TesseraWriteColumns takes them); tids get their TIDs.  False, with
 *		nothing inserted, where the rows must be slots: logical decoding
 *		hears of inserts as tuples.
 */
bool
TesseraInsertColumns(Relation rel, Datum **values, bool **isnull, int nrows, CommandId cid,
					 int options, ItemPointer tids)
{
	if (TesseraLogicalWanted(rel, options))
		return false;
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	TesseraWriteColumns(rel, values, isnull, nrows, cid, tids);
	pgstat_count_heap_insert(rel, nrows);
	return true;
}

/*
 * INSERT ... ON CONFLICT: the row is inserted as usual, and its token
 * published (speculative.c): others' unique checks see an in-progress
 * insert (through the stripe placeholder) and wait for the token, as for
 * heap's speculative tuples.  Logical decoding hears of the row only once
 * it is confirmed.
 */
void
tessera_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
								 int options, struct BulkInsertStateData *bistate,
								 uint32 specToken)
{
	uint64		rownum;

	insert_row(rel, slot, cid);
	if (TesseraTidToRownum(&slot->tts_tid, &rownum))
		TesseraSpeculativePublish(rel, rownum, specToken);
}

/*
 * If the insertion lost (a conflicting row appeared meanwhile), the row
 * must vanish for everyone at once, as heap's "super-delete" does: its
 * state says deleted before every snapshot.
 */
void
tessera_tuple_complete_speculative(Relation rel, TupleTableSlot *slot, uint32 specToken,
								   bool succeeded)
{
	uint64		rownum;

	if (!succeeded)
	{
		if (!TesseraTidToRownum(&slot->tts_tid, &rownum))
			elog(ERROR, "invalid tessera TID in speculative insertion");
		TesseraBuryRow(rel, rownum);
	}
	else if (TesseraLogicalWanted(rel, 0))
		TesseraLogicalInsert(rel, &slot, 1);
	/* before the executor releases the token: waiters then see the outcome */
	TesseraSpeculativeClear();
}

TM_Result
tessera_tuple_delete(Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot,
					 Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changingPart)
{
	TM_Result	result;

	result = modify_row(rel, tid, cid, crosscheck, OP_DELETE, LockTupleExclusive,
						wait ? LockWaitBlock : LockWaitError, changingPart, tmfd, NULL);
	if (result == TM_Ok)
	{
		pgstat_count_heap_delete(rel);
		if (TesseraLogicalWanted(rel, 0))
			TesseraLogicalDelete(rel, tid);
	}
	return result;
}

TM_Result
tessera_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
					 Snapshot snapshot, Snapshot crosscheck, bool wait,
					 TM_FailureData *tmfd, LockTupleMode *lockmode, TesseraUpdateIndexes *update_indexes)
{
	TM_Result	result;
	uint64		oldrow = 0;
	uint64		newrow = 0;
	bool		own_locked = false;
	TransactionId xmax;

	*lockmode = keys_change(rel, otid, slot) ? LockTupleExclusive : LockTupleNoKeyExclusive;
	*update_indexes = TESSERA_UPDATE_NO_INDEXES;
	result = modify_row(rel, otid, cid, crosscheck, OP_UPDATE, *lockmode,
						wait ? LockWaitBlock : LockWaitError, false, tmfd, &own_locked);
	if (result != TM_Ok)
		return result;

	write_row(rel, slot, cid);
	if (!TesseraTidToRownum(otid, &oldrow) || !TesseraTidToRownum(&slot->tts_tid, &newrow))
		elog(ERROR, "invalid tessera TID in update");
	set_new_version(rel, oldrow, newrow);
	xmax = carry_lockers(rel, oldrow, newrow);

	/*
	 * The new version's xmax as heap's update leaves it in the new tuple:
	 * the lockers that stay, or our own lock on the old version (ON
	 * CONFLICT DO UPDATE locks before it updates) -- so that the idiom
	 * RETURNING (xmax = 0) AS inserted tells an upsert's updates from its
	 * inserts.  Our own lock is not written to the new version's state.
	 */
	if (!TransactionIdIsValid(xmax) && own_locked)
		xmax = GetCurrentTransactionId();
	TesseraSlotSetXmax(slot, xmax);
	if (TesseraLogicalWanted(rel, 0))
		TesseraLogicalUpdate(rel, otid, slot);

	/* the new version has a new TID: every index needs an entry for it */
	*update_indexes = TESSERA_UPDATE_ALL_INDEXES;
	TesseraCountUpdate(rel);
	return TM_Ok;
}

/*
 * Was row rownum updated?  Then *upd is its updater and *newrow where the
 * new version went (NEW_ROWNUM_PENDING while the updater is writing it).
 */
static bool
row_update(Relation rel, uint64 rownum, TransactionId *upd, uint64 *newrow)
{
	TesseraRowState st;

	if (!TesseraGetRowState(rel, rownum, &st) || !(st.infomask & TESSERA_RS_UPDATED))
		return false;
	*upd = TesseraRowUpdateXid(&st);
	*newrow = TesseraRowStateNewRownum(&st);
	return TransactionIdIsValid(*upd);
}

/*
 * A lock taken on a row whose update is still in progress must hold on the
 * newer versions as well, or a later change of the new version (once the
 * update commits) would not wait for it: a FOR KEY SHARE lock of a foreign
 * key check would not keep the referenced row from being deleted.  Lock
 * every newer version the same way, waiting as the lock itself does
 * (heap's heap_lock_updated_tuple).
 */
static TM_Result
lock_newer_versions(Relation rel, ItemPointer tid, CommandId cid, LockTupleMode mode,
					LockWaitPolicy wait_policy, TM_FailureData *tmfd)
{
	uint64		rownum;

	if (!TesseraTidToRownum(tid, &rownum))
		return TM_Ok;
	for (;;)
	{
		TransactionId upd;
		uint64		newrow;
		ItemPointerData newtid;
		TM_Result	result;

		CHECK_FOR_INTERRUPTS();
		if (!row_update(rel, rownum, &upd, &newrow) || TransactionIdIsCurrentTransactionId(upd))
			return TM_Ok;
		if (!TransactionIdIsInProgress(upd) && !TransactionIdDidCommit(upd))
			return TM_Ok;		/* rolled back: there is no newer version */
		if (newrow == NEW_ROWNUM_PENDING)
		{
			/* the updater is writing the new version right now */
			pg_usleep(1000L);
			continue;
		}
		if (newrow >= TESSERA_MAX_ROWNUM)
			return TM_Ok;		/* moved to another partition */
		TesseraRownumToTid(newrow, &newtid);
		result = modify_row(rel, &newtid, cid, InvalidSnapshot, OP_LOCK, mode, wait_policy,
							false, tmfd, NULL);
		if (result != TM_Ok)
			return result;
		rownum = newrow;
	}
}

/*
 * Following an update chain to its last version (READ COMMITTED re-checks)
 * into versions this transaction made: pass the ones it replaced itself, as
 * heap's dirty fetch does, and report a newest version that a later command
 * of ours inserted as TM_SelfModified with that command's id -- the executor
 * tells a row changed by this very command (skipped) from one changed by a
 * trigger or function it ran (an error).  Returns false if *tid, moved to
 * the newest version, is to be locked.
 */
static bool
skip_own_versions(Relation rel, ItemPointer tid, CommandId cid, TM_FailureData *tmfd)
{
	uint64		rownum;
	CommandId	cmin;

	if (!TesseraTidToRownum(tid, &rownum))
		return false;
	for (;;)
	{
		TransactionId upd;
		uint64		newrow;

		if (!row_update(rel, rownum, &upd, &newrow) || !TransactionIdIsCurrentTransactionId(upd))
			break;
		if (newrow >= TESSERA_MAX_ROWNUM)
			break;				/* moved to another partition, or being written */
		rownum = newrow;
	}
	TesseraRownumToTid(rownum, tid);
	/* a version still in this backend's buffer: its stripe tells its command */
	TesseraFlushRowIfPending(rel, rownum);
	if (own_insert_cid(rel, rownum, &cmin) && cmin >= cid)
	{
		tmfd->ctid = *tid;
		tmfd->xmax = GetCurrentTransactionId();
		tmfd->cmax = cmin;
		return true;
	}
	return false;
}

TM_Result
tessera_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
				   CommandId cid, LockTupleMode mode, LockWaitPolicy wait_policy,
				   uint8 flags, TM_FailureData *tmfd)
{
	TM_Result	result;

	tmfd->traversed = false;
	for (;;)
	{
		result = modify_row(rel, tid, cid, InvalidSnapshot, OP_LOCK, mode, wait_policy,
							false, tmfd, NULL);
		if (result == TM_Ok && (flags & TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS))
			result = lock_newer_versions(rel, tid, cid, mode, wait_policy, tmfd);
		if (result != TM_Updated || !(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
			break;
		if (ItemPointerIndicatesMovedPartitions(&tmfd->ctid))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
		if (ItemPointerEquals(&tmfd->ctid, tid))
		{
			result = TM_Deleted;
			break;
		}
		/* follow the update to the new version and lock that one */
		*tid = tmfd->ctid;
		tmfd->traversed = true;
		if (skip_own_versions(rel, tid, cid, tmfd))
		{
			result = TM_SelfModified;
			break;
		}
	}

	/* the slot gets the row even on failure: callers look at its xmin */
	if (!tessera_tuple_fetch_row_version(rel, tid, SnapshotAny, slot) && result == TM_Ok)
		elog(ERROR, "locked row (%u,%u) of \"%s\" does not exist",
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			 RelationGetRelationName(rel));
	return result;
}

void
tessera_finish_bulk_insert(Relation rel, int options)
{
	TesseraFlushRelation(rel);
}

/* Bottom-up deletion visits at most this many state pages' worth of rows. */
#define BOTTOMUP_MAX_STATE_PAGES	4

static int
deltid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const TM_IndexDelete *) a)->tid,
							  (ItemPointer) &((const TM_IndexDelete *) b)->tid);
}

/* A run of deltids (sorted by TID) whose rows share a state page. */
typedef struct DeleteGroup
{
	int			start;
	int			end;
	int			promising;
} DeleteGroup;

static int
group_cmp(const void *a, const void *b)
{
	const DeleteGroup *x = a;
	const DeleteGroup *y = b;

	if (x->promising != y->promising)
		return x->promising > y->promising ? -1 : 1;
	return x->start < y->start ? -1 : (x->start > y->start ? 1 : 0);
}

static inline uint64
deltid_rownum(const TM_IndexDelete *d)
{
	ItemPointerData tid = d->tid;
	uint64		rownum = 0;

	(void) TesseraTidToRownum(&tid, &rownum);
	return rownum;
}

TransactionId
tessera_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	/*
	 * Report the entries whose rows no snapshot can see any more; the
	 * latest deleting xid is what a standby must wait for before applying
	 * the index deletion.  Entries are taken a state page at a time (one
	 * page read for all of its rows).  A bottom-up pass is speculative: as
	 * heap visits a few favorable blocks, we visit the state pages with the
	 * most promising entries, at most BOTTOMUP_MAX_STATE_PAGES, and stop at
	 * the space target or when the first of them frees nothing (old
	 * versions of rows our own transaction is updating, typically).
	 */
	TransactionId latest = InvalidTransactionId;
	TesseraMeta meta;
	DeleteGroup *groups;
	int			ngroups = 0;
	int			freed = 0;
	int			kept = 0;
	TM_IndexDelete *keep;
	TesseraRowState *states;

	if (delstate->ndeltids == 0)
		return InvalidTransactionId;
	TesseraReadMeta(rel, &meta);
	qsort(delstate->deltids, delstate->ndeltids, sizeof(TM_IndexDelete), deltid_cmp);

	groups = palloc(sizeof(DeleteGroup) * delstate->ndeltids);
	for (int i = 0; i < delstate->ndeltids; i++)
	{
		TM_IndexDelete *d = &delstate->deltids[i];

		if (ngroups == 0 ||
			deltid_rownum(d) / TESSERA_STATE_ROWS !=
			deltid_rownum(&delstate->deltids[groups[ngroups - 1].start]) / TESSERA_STATE_ROWS)
		{
			groups[ngroups].start = i;
			groups[ngroups].promising = 0;
			ngroups++;
		}
		groups[ngroups - 1].end = i + 1;
		if (delstate->status[d->id].promising)
			groups[ngroups - 1].promising++;
	}
	if (delstate->bottomup)
	{
		qsort(groups, ngroups, sizeof(DeleteGroup), group_cmp);
		ngroups = Min(ngroups, BOTTOMUP_MAX_STATE_PAGES);
	}

	keep = palloc(sizeof(TM_IndexDelete) * delstate->ndeltids);
	states = palloc(sizeof(TesseraRowState) * TESSERA_STATE_ROWS);
	for (int g = 0; g < ngroups; g++)
	{
		uint64		first = deltid_rownum(&delstate->deltids[groups[g].start]);
		uint64		last = deltid_rownum(&delstate->deltids[groups[g].end - 1]);
		bool		any_states;

		if (delstate->bottomup && g > 0 && (freed >= delstate->bottomupfreespace || freed == 0))
			break;
		any_states = TesseraReadRowStates(rel, first, (int) (last - first + 1), states);
		for (int i = groups[g].start; i < groups[g].end; i++)
		{
			TM_IndexDelete *d = &delstate->deltids[i];
			TM_IndexStatus *s = &delstate->status[d->id];
			uint64		rownum;
			TesseraRowState *st;
			TesseraCachedStripe *cs;

			keep[kept++] = *d;
			/* what the caller knows to be deletable (LP_DEAD) stays so */
			if (s->knowndeletable ||
				!TesseraTidToRownum(&d->tid, &rownum) || rownum < first || rownum > last)
				continue;
			st = &states[rownum - first];

			/*
			 * Rows of aborted transactions never existed for anyone (known
			 * from the fetch cache, which unique checks and scans fill; no
			 * catalog probes here).
			 */
			if (meta.valid && (cs = TesseraCacheStripeLookup(meta.storage_id, rownum)) != NULL &&
				TesseraCachedStripeAborted(cs))
				s->knowndeletable = true;
			else if (any_states && !TesseraRowStateEmpty(st) && TesseraRowDeadToAll(st, rel))
			{
				TransactionId upd = TesseraRowUpdateXid(st);

				s->knowndeletable = true;
				if (TransactionIdIsValid(upd) &&
					(!TransactionIdIsValid(latest) || TransactionIdFollows(upd, latest)))
					latest = upd;
			}
			if (s->knowndeletable)
				freed += s->freespace;
		}
	}

	/* what was not looked at is not reported (bottom-up callers accept that) */
	memcpy(delstate->deltids, keep, sizeof(TM_IndexDelete) * kept);
	delstate->ndeltids = kept;
	pfree(keep);
	pfree(states);
	pfree(groups);
	return latest;
}
