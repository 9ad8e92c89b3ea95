/*-------------------------------------------------------------------------
 *
 * speculative.c
 *	  Speculative insertion tokens (INSERT ... ON CONFLICT) of rows that
 *	  other backends may find before the insertion is confirmed or killed.
 *
 * NOTES
 *	  Heap keeps a speculative insertion's token in the tuple's header, so a
 *	  unique check that finds the tuple waits for the token (the inserter's
 *	  decision) rather than for the inserter's transaction, and two sessions
 *	  inserting the same key break their tie by transaction id instead of
 *	  waiting for each other (check_exclusion_or_unique_constraint's
 *	  livelock-preventing wait).  A tessera row is still in its inserter's
 *	  write buffer at that point, so the token lives here: one slot per
 *	  backend in shared memory (a backend has at most one speculative
 *	  insertion in progress), naming the relation storage, the row number
 *	  and the token.  Nothing of it needs to survive a crash: every
 *	  transaction that could hold a token is aborted by then.
 *
 *	  Slots need shared memory, reserved only when tessera is in
 *	  shared_preload_libraries; without it no token is published and
 *	  others wait for the inserting transaction.
 *
 *	  Locking: each slot has a spinlock; only its own backend writes it.
 *
 * IDENTIFICATION
 *	  src/tableam/speculative.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "tessera/compat.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/rel.h"

#include "tessera/tableam.h"

typedef struct SpecSlot
{
	slock_t		mutex;
	uint32		token;			/* 0: no speculative insertion */
	RelFileLocator node;
	uint64		rownum;
} SpecSlot;

typedef struct SpecShared
{
	int			nslots;
	SpecSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} SpecShared;

static SpecShared *spec_shared = NULL;
static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

/* slots are indexed by BackendId, 1..MaxBackends */
static Size
spec_shmem_size(void)
{
	return add_size(offsetof(SpecShared, slots),
					mul_size(MaxBackends + 1, sizeof(SpecSlot)));
}

static void
spec_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(spec_shmem_size());
}

static void
spec_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	spec_shared = ShmemInitStruct("tessera speculative insertions", spec_shmem_size(), &found);
	if (!found)
	{
		spec_shared->nslots = MaxBackends + 1;
		for (int i = 0; i < spec_shared->nslots; i++)
		{
			SpinLockInit(&spec_shared->slots[i].mutex);
			spec_shared->slots[i].token = 0;
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* An aborted (sub)transaction leaves no token behind. */
static void
spec_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		TesseraSpeculativeClear();
}

static void
spec_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		TesseraSpeculativeClear();
}

/* _PG_init, when loaded through shared_preload_libraries */
void
TesseraSpeculativeShmemInit(void)
{
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = spec_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = spec_shmem_startup;
	RegisterXactCallback(spec_xact_callback, NULL);
	RegisterSubXactCallback(spec_subxact_callback, NULL);
}

static SpecSlot *
my_slot(void)
{
	if (spec_shared == NULL || TesseraMyBackendSlot() <= 0 || TesseraMyBackendSlot() >= spec_shared->nslots)
		return NULL;
	return &spec_shared->slots[TesseraMyBackendSlot()];
}

/*
 * TesseraSpeculativePublish
 *		rownum of rel is being inserted speculatively under token: others'
 *		unique checks that find it wait for the token.
 */
void
TesseraSpeculativePublish(Relation rel, uint64 rownum, uint32 token)
{
	SpecSlot   *slot = my_slot();

	if (slot == NULL)
		return;
	SpinLockAcquire(&slot->mutex);
	slot->node = TesseraRelLocator(rel);
	slot->rownum = rownum;
	slot->token = token;
	SpinLockRelease(&slot->mutex);
}

/* The insertion is confirmed or killed (before its token is released). */
void
TesseraSpeculativeClear(void)
{
	SpecSlot   *slot = my_slot();

	if (slot == NULL || slot->token == 0)
		return;
	SpinLockAcquire(&slot->mutex);
	slot->token = 0;
	SpinLockRelease(&slot->mutex);
}

/*
 * TesseraSpeculativeToken
 *		The token under which another backend is inserting rownum of rel, or
 *		0 if it is not a speculative insertion in progress.
 */
uint32
TesseraSpeculativeToken(Relation rel, uint64 rownum)
{
	if (spec_shared == NULL)
		return 0;
	for (int i = 1; i < spec_shared->nslots; i++)
	{
		SpecSlot   *slot = &spec_shared->slots[i];
		uint32		token = 0;

		if (slot->token == 0 || i == TesseraMyBackendSlot())
			continue;
		SpinLockAcquire(&slot->mutex);
		if (slot->token != 0 && slot->rownum == rownum &&
			RelFileLocatorEquals(slot->node, TesseraRelLocator(rel)))
			token = slot->token;
		SpinLockRelease(&slot->mutex);
		if (token != 0)
			return token;
	}
	return 0;
}
