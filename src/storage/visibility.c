/*-------------------------------------------------------------------------
 *
 * visibility.c
 *	  Whether a row's deletion (its state entry's xmax) is visible to a
 *	  snapshot.
 *
 * NOTES
 *	  A row is visible if its stripe is (catalog MVCC plus command ids of
 *	  the current transaction, see reader.c) and its deletion is not.  This
 *	  file decides the second half, following the rules heap applies to a
 *	  tuple's xmax for each kind of snapshot.  Lock-only entries never hide
 *	  a row.  The updater of a MultiXactId is found among its members.
 *
 * IDENTIFICATION
 *	  src/storage/visibility.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "tessera/rowstate.h"
#include "tessera/tessera.h"

/*
 * The transaction that deleted or updated the row, or InvalidTransactionId
 * if the entry only locks it.
 */
TransactionId
TesseraRowUpdateXid(const TesseraRowState *st)
{
	if (st->xmax == InvalidTransactionId || (st->infomask & TESSERA_RS_LOCK_ONLY))
		return InvalidTransactionId;
	if (st->infomask & TESSERA_RS_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(st->xmax, &members, false, false);
		TransactionId result = InvalidTransactionId;

		for (int i = 0; i < n; i++)
		{
			if (ISUPDATE_from_mxstatus(members[i].status))
			{
				result = members[i].xid;
				break;
			}
		}
		if (n > 0)
			pfree(members);
		return result;
	}
	return st->xmax;
}

/*
 * Is the row deleted (or replaced by a newer version) as far as snapshot
 * is concerned?  A dirty snapshot gets the deleter in snapshot->xmax when
 * that one is still running, as heap does.
 */
bool
TesseraRowDeleted(const TesseraRowState *st, Snapshot snapshot)
{
	TransactionId upd;

	if (snapshot == NULL || snapshot->snapshot_type == SNAPSHOT_ANY)
		return false;
	if (st->infomask & TESSERA_RS_FROZEN_DELETED)
		return true;
	if (st->xmax == InvalidTransactionId || (st->infomask & TESSERA_RS_XMAX_INVALID))
		return false;
	upd = TesseraRowUpdateXid(st);
	if (!TransactionIdIsValid(upd))
		return false;

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(upd))
				return st->cmax < snapshot->curcid;
			if (XidInMVCCSnapshot(upd, snapshot))
				return false;
			return TransactionIdDidCommit(upd);

		case SNAPSHOT_SELF:
			if (TransactionIdIsCurrentTransactionId(upd))
				return true;
			if (TransactionIdIsInProgress(upd))
				return false;
			return TransactionIdDidCommit(upd);

		case SNAPSHOT_DIRTY:
			if (TransactionIdIsCurrentTransactionId(upd))
				return true;
			if (TransactionIdIsInProgress(upd))
			{
				snapshot->xmax = upd;
				return false;
			}
			return TransactionIdDidCommit(upd);

		case SNAPSHOT_NON_VACUUMABLE:
			if (TransactionIdIsCurrentTransactionId(upd) || TransactionIdIsInProgress(upd))
				return false;
			return TransactionIdDidCommit(upd) &&
				GlobalVisTestIsRemovableXid(snapshot->vistest, upd);

		default:
			return false;
	}
}

/*
 * Is the row deleted by a committed transaction that no snapshot anywhere
 * can still see the row through?  (Its index entries may then go.)
 */
bool
TesseraRowDeadToAll(const TesseraRowState *st, Relation rel)
{
	TransactionId upd;

	if (st->infomask & TESSERA_RS_FROZEN_DELETED)
		return true;
	if (st->xmax == InvalidTransactionId || (st->infomask & TESSERA_RS_XMAX_INVALID))
		return false;
	upd = TesseraRowUpdateXid(st);
	if (!TransactionIdIsValid(upd) || TransactionIdIsCurrentTransactionId(upd) ||
		TransactionIdIsInProgress(upd))
		return false;
	return TransactionIdDidCommit(upd) && GlobalVisCheckRemovableXid(rel, upd);
}
