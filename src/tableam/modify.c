/*-------------------------------------------------------------------------
 *
 * modify.c
 *	  Inserts into a tessera relation; UPDATE, DELETE and row locks.
 *
 * NOTES
 *	  Inserts go to the backend's write buffer (writer.c), which assigns
 *	  each row its final TID at once.  UPDATE, DELETE and row locks are not
 *	  implemented yet and fail cleanly before anything is changed.
 *
 * IDENTIFICATION
 *	  src/tableam/modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "utils/rel.h"

#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

static void
not_yet(Relation rel, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on tessera table \"%s\" yet",
					what, RelationGetRelationName(rel)),
			 errhint("Copy the rows you need to change into a heap table, or change the table's access method with ALTER TABLE ... SET ACCESS METHOD heap.")));
}

void
tessera_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
					 struct BulkInsertStateData *bistate)
{
	TesseraWriteRow(rel, slot, cid);
}

void
tessera_multi_insert(Relation rel, TupleTableSlot **slots, int nslots, CommandId cid,
					 int options, struct BulkInsertStateData *bistate)
{
	for (int i = 0; i < nslots; i++)
		TesseraWriteRow(rel, slots[i], cid);
}

void
tessera_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
								 int options, struct BulkInsertStateData *bistate,
								 uint32 specToken)
{
	not_yet(rel, "INSERT ... ON CONFLICT");
}

void
tessera_tuple_complete_speculative(Relation rel, TupleTableSlot *slot, uint32 specToken,
								   bool succeeded)
{
	not_yet(rel, "INSERT ... ON CONFLICT");
}

TM_Result
tessera_tuple_delete(Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot,
					 Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changingPart)
{
	not_yet(rel, "DELETE");
	return TM_Ok;
}

TM_Result
tessera_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
					 Snapshot snapshot, Snapshot crosscheck, bool wait,
					 TM_FailureData *tmfd, LockTupleMode *lockmode, bool *update_indexes)
{
	not_yet(rel, "UPDATE");
	return TM_Ok;
}

TM_Result
tessera_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
				   CommandId cid, LockTupleMode mode, LockWaitPolicy wait_policy,
				   uint8 flags, TM_FailureData *tmfd)
{
	not_yet(rel, "row locking (SELECT ... FOR UPDATE/SHARE)");
	return TM_Ok;
}

void
tessera_finish_bulk_insert(Relation rel, int options)
{
	TesseraFlushRelation(rel);
}

TransactionId
tessera_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	/* rows are never deleted yet, so no index entry is ever dead */
	delstate->ndeltids = 0;
	return InvalidTransactionId;
}
