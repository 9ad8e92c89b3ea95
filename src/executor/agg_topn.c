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
 * emitted, where there are more groups than the rows kept, the groups were
 * not spilled (they are merged back one by one) and every group is
 * emitted (no HAVING, no left join's unmatched rows after them).
 */
void
TesseraAggTopNBound(TesseraAggState *as, TesseraGroups *g)
{
	binaryheap *heap;
	int			from;

	as->topn_active = false;
	if (as->topn_rows <= 0 || g->ngroups <= as->topn_rows || TesseraSpillActive(&as->spill) ||
		as->ts.css.ss.ps.qual != NULL || as->star.left)
		return;
	from = as->specs[as->topn_spec].same_as >= 0 ? as->specs[as->topn_spec].same_as :
		as->topn_spec;
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
