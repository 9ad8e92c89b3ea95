/*-------------------------------------------------------------------------
 *
 * spill.c
 *	  Groups past memory: written to a sort by key, merged back at the end.
 *
 * NOTES
 *	  Once the groups take more than hash_mem (planned so, or an estimate
 *	  that was wrong), each is written as a row (its keys,
 *	  then its states serialized as for the parallel merge) into a
 *	  tuplesort ordered by the keys' default btree order, whose equality is
 *	  the grouping's, and the table starts empty.  After the input, the
 *	  groups left are written too, and sorted runs of equal keys are merged
 *	  into one group at a time: memory stays bounded without a second
 *	  aggregation path.
 *
 * IDENTIFICATION
 *	  src/vector/spill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "tessera/vector.h"

/* The sort, made on the first spill: keys in their order, then the states. */
static void
spill_begin(TesseraSpill *s, TesseraGroups *g, MemoryContext longcxt)
{
	int			k = g->nkeys;
	AttrNumber *cols = palloc(sizeof(AttrNumber) * k);
	Oid		   *ops = palloc(sizeof(Oid) * k);
	Oid		   *colls = palloc(sizeof(Oid) * k);
	bool	   *nullsfirst = palloc0(sizeof(bool) * k);
	MemoryContext old = MemoryContextSwitchTo(longcxt);

	s->desc = CreateTemplateTupleDesc(k + 1);
	for (int j = 0; j < k; j++)
	{
		TAggKey    *key = &g->gkeys[j];

		TupleDescInitEntry(s->desc, j + 1, NULL, key->typid, -1, 0);
		TupleDescInitEntryCollation(s->desc, j + 1, key->collation);
		cols[j] = j + 1;
		ops[j] = lookup_type_cache(key->typid, TYPECACHE_LT_OPR)->lt_opr;
		colls[j] = key->collation;
		if (!OidIsValid(ops[j]))
			elog(ERROR, "TesseraAgg: no ordering for type %u", key->typid);
	}
	TupleDescInitEntry(s->desc, k + 1, NULL, BYTEAOID, -1, 0);
	s->next = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
	s->sort = tuplesort_begin_heap(s->desc, k, cols, ops, colls, nullsfirst,
								   work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
}

/*
 * Write every group of g into the sort (made in longcxt the first time;
 * tmpcxt is reset per group) and empty the table.
 */
void
TesseraSpillGroups(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
				   MemoryContext longcxt, MemoryContext tmpcxt)
{
	TupleTableSlot *slot;

	if (s->sort == NULL)
		spill_begin(s, g, longcxt);
	slot = MakeSingleTupleTableSlot(s->desc, &TTSOpsVirtual);
	for (int group = 0; group < g->ngroups; group++)
	{
		MemoryContext old = MemoryContextSwitchTo(tmpcxt);

		ExecClearTuple(slot);
		TesseraGroupsKeyDatums(g, group, slot->tts_values, slot->tts_isnull);
		slot->tts_values[g->nkeys] = TesseraAggSerialize(specs, g->nspecs,
														 TesseraGroupState(g, group, 0));
		slot->tts_isnull[g->nkeys] = false;
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(s->sort, slot);
		MemoryContextSwitchTo(old);
		MemoryContextReset(tmpcxt);
	}
	ExecDropSingleTupleTableSlot(slot);
	s->spilled_groups += g->ngroups;
	TesseraGroupsReset(g, 256);
}

/* After the input: if anything spilled, the rest follows and the merge starts. */
void
TesseraSpillFinish(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
				   MemoryContext longcxt, MemoryContext tmpcxt)
{
	if (s->sort == NULL)
		return;
	TesseraSpillGroups(s, g, specs, longcxt, tmpcxt);
	tuplesort_performsort(s->sort);
	s->pending = tuplesort_gettupleslot(s->sort, true, false, s->next, NULL);
}

/*
 * The next group of the sorted spill: the rows with equal keys merged into
 * group 0 of an emptied table.  False when none is left.
 */
bool
TesseraSpillNextGroup(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs)
{
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	bool		first = true;

	if (!s->pending)
		return false;
	TesseraGroupsReset(g, 1);
	while (s->pending)
	{
		int			group;

		TesseraGroupsKeysOf(g, s->next, keys, nulls);
		if (!first)
		{
			bool		same = true;

			for (int j = 0; j < g->nkeys; j++)
				same &= g->keynull[j] == nulls[j] && g->keys[j] == keys[j];
			if (!same)
				break;			/* the next group's first row stays pending */
		}
		/* the table holds this group alone: no hashing */
		group = first ? TesseraGroupsAdd(g, keys, nulls) : 0;
		slot_getallattrs(s->next);
		TesseraAggMergeRow(specs, g->nspecs, TesseraGroupState(g, group, 0),
						   s->next->tts_values[g->nkeys], g->cxt);
		first = false;
		s->pending = tuplesort_gettupleslot(s->sort, true, false, s->next, NULL);
	}
	return true;
}

void
TesseraSpillEnd(TesseraSpill *s)
{
	if (s->sort != NULL)
	{
		tuplesort_end(s->sort);
		s->sort = NULL;
		s->pending = false;
	}
}
