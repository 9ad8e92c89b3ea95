/*-------------------------------------------------------------------------
 *
 * agg_topn.c
 *	  TesseraAgg's top-N of groups: for `GROUP BY … ORDER BY count(…) LIMIT
 *	  n [OFFSET m]` (planned in agg_path.c, tagg_topn_plan), the count the
 *	  (n + m)th best group has.  Groups with a worse count cannot be among
 *	  the rows the Limit keeps, whatever the later sort keys, so the node
 *	  does not emit them: PostgreSQL's Sort above gets the few that can be
 *	  (ties at the bound included) instead of every group, each formed as a
 *	  tuple and copied.
 *
 * IDENTIFICATION
 *	  src/executor/agg_topn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/binaryheap.h"

#include "tessera/plan.h"
#include "tessera/rowstate.h"
#include "tessera/tableam.h"
#include "nodes.h"

/* The heap's first is its worst: the smallest of the keys kept. */
static int
topn_worst_first(Datum a, Datum b, void *arg)
{
	int64		x = DatumGetInt64(a);
	int64		y = DatumGetInt64(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Once the groups g are known: the bound a group's count must reach to be
 * emitted, where there are more groups than the rows kept and every group
 * is emitted (no HAVING, no left join's unmatched rows after them).  If g
 * spilled, its groups come back a partition at a time: a heap of the best
 * keys met so far then decides group by group (TesseraAggTopNStream).
 */
void
TesseraAggTopNBound(TesseraAggState *as, TesseraGroups *g)
{
	binaryheap *heap;
	int			from;

	as->topn_active = false;
	if (as->topn_heap != NULL)
	{
		binaryheap_free(as->topn_heap);
		as->topn_heap = NULL;
	}
	if (as->topn_rows <= 0 || as->ts.css.ss.ps.qual != NULL || as->star.left)
		return;
	from = as->specs[as->topn_spec].same_as >= 0 ? as->specs[as->topn_spec].same_as :
		as->topn_spec;
	if (g == &as->groups && TesseraSpillActive(&as->spill))
	{
		as->topn_state = from;
		as->topn_heap = binaryheap_allocate(as->topn_rows, topn_worst_first, NULL);
		as->topn_active = true;
		return;
	}
	if (g->ngroups <= as->topn_rows)
		return;
	/* the best rows-kept keys (a count, or its negation for ascending order) */
	heap = binaryheap_allocate(as->topn_rows, topn_worst_first, NULL);
	for (int group = 0; group < g->ngroups; group++)
	{
		int64		count = TesseraGroupState(g, group, from)->count;
		int64		key = as->topn_desc ? count : -count;

		if (heap->bh_size < as->topn_rows)
			binaryheap_add(heap, Int64GetDatum(key));
		else if (key > DatumGetInt64(binaryheap_first(heap)))
			binaryheap_replace_first(heap, Int64GetDatum(key));
	}
	as->topn_bound = DatumGetInt64(binaryheap_first(heap));
	if (!as->topn_desc)
		as->topn_bound = -as->topn_bound;
	as->topn_state = from;
	as->topn_active = true;
	binaryheap_free(heap);
}

/*
 * A spilled group, as it comes back: left out if rows-kept groups met
 * before it have strictly better counts (those it cannot displace, however
 * the groups still to come compare), else emitted and its count kept if it
 * is among the best so far.  Groups emitted that later ones pass are
 * ordered away by the Sort above, as ties at the bound are.
 */
bool
TesseraAggTopNStream(TesseraAggState *as, TesseraGroups *g, int group)
{
	binaryheap *heap = as->topn_heap;
	int64		count = TesseraGroupState(g, group, as->topn_state)->count;
	int64		key = as->topn_desc ? count : -count;

	if (heap->bh_size < as->topn_rows)
	{
		binaryheap_add(heap, Int64GetDatum(key));
		return false;
	}
	if (key > DatumGetInt64(binaryheap_first(heap)))
	{
		binaryheap_replace_first(heap, Int64GetDatum(key));
		return false;
	}
	if (key == DatumGetInt64(binaryheap_first(heap)))
		return false;
	as->topn_left_out++;
	return true;
}
