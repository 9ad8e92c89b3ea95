/*-------------------------------------------------------------------------
 *
 * agg_heavy.c
 *	  TesseraAgg's top-N of counts over many groups, in two passes:
 *	  `GROUP BY … ORDER BY count(*) DESC LIMIT n [OFFSET m]` where most
 *	  groups count a row or two and the answer is a few groups of many.
 *
 * NOTES
 *	  The first pass counts the rows into a sketch: a counter per cell,
 *	  each row counted in the cell its keys' value hash names (the hash the
 *	  slices use, TesseraGroupsValueHashes).  A group's rows all land in one
 *	  cell, so a cell's count is at least the count of every group in it.
 *	  The second pass groups only the rows of cells counting at least a
 *	  threshold t: every group in the table then has all its rows, and
 *	  every group counting t or more is there.  If n + m of them count t or
 *	  more, the (n + m)th best count is at least t, so every group that can
 *	  be in the answer -- ties at the bound included -- is in the table, and
 *	  the top-N bound and PostgreSQL's Sort above finish as before.  If
 *	  fewer do, a third pass groups every row.  Correctness never rests on
 *	  the sketch's size or on how t is chosen, only the number of passes.
 *
 *	  t is chosen above the counts collisions alone make: with r rows in c
 *	  cells a cell gets about r / c of them from groups of a row or two, so
 *	  the sketch is used only where the (n + m)th fullest cell counts well
 *	  past that (twice a generous bound on it); t is that cell's count less
 *	  the bound, so that a heavy group sharing its cell with light ones
 *	  still reaches t.  A grouping with no heavy groups (every count 1:
 *	  ClickBench's WatchID, ClientIP) pays the first pass and then groups
 *	  every row.
 *
 * IDENTIFICATION
 *	  src/executor/agg_heavy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/memutils.h"

#include "tessera/plan.h"
#include "tessera/tableam.h"
#include "nodes.h"

/* the groups the planner must expect for a sketch to be worth a pass */
#define TAGG_HEAVY_MIN_GROUPS	131072
/*
 * Once this many rows are sketched, fewer cells than one in this many rows
 * means few groups (a filter that keeps a few, the planner's estimate far
 * off): grouping every row costs less than the passes, so the sketch is
 * given up there.  (ClickBench q39, 1,450 groups estimated at 100,000s:
 * 128 -> 212 ms with the passes.)
 */
#define TAGG_HEAVY_CHECK_ROWS	65536
#define TAGG_HEAVY_ROWS_PER_CELL 16
/* the groups the second pass's table is sized for */
#define TAGG_HEAVY_GROUPS		4096
/* the sketch's cells: a power of two, at most a quarter of hash_mem */
#define TAGG_HEAVY_MIN_CELLS	(1 << 16)
#define TAGG_HEAVY_MAX_CELLS	(1 << 24)

/*
 * Start a grouping: sketch first (true), or group every row.  Only where
 * the top-N of groups orders by count(*) descending over many groups, and
 * each pass reads the same rows: no star join (its counting repeats rows),
 * DISTINCT roll-up, memo, foreign table or group limit.
 */
bool
TesseraAggHeavyStart(TesseraAggState *as)
{
	Size		cells = TAGG_HEAVY_MIN_CELLS;
	TAggSpec   *sp;

	as->heavy_phase = TAGG_HEAVY_OFF;
	as->heavy_result = 0;
	if (as->topn_rows <= 0 || !as->topn_desc || !as->topn_heavy || as->mode == TAGG_PARTIAL ||
		as->groups.nkeys == 0 || as->distinct || as->star.ndims > 0 || as->memo != NIL ||
		as->source != NULL || as->group_limit > 0 || as->ts.css.ss.ps.qual != NULL ||
		as->est_groups < TAGG_HEAVY_MIN_GROUPS)
		return false;
	sp = &as->specs[as->specs[as->topn_spec].same_as >= 0 ?
					as->specs[as->topn_spec].same_as : as->topn_spec];
	if (sp->kind != TAGG_COUNT_STAR)
		return false;
	while (cells < TAGG_HEAVY_MAX_CELLS &&
		   cells * 2 * sizeof(uint16) <= (Size) get_hash_memory_limit() / 4)
		cells *= 2;
	if (as->sketch == NULL || as->sketch_mask + 1 != cells)
	{
		if (as->sketch != NULL)
			pfree(as->sketch);
		as->sketch = MemoryContextAllocHuge(as->ts.css.ss.ps.state->es_query_cxt,
											cells * sizeof(uint16));
		as->sketch_mask = (uint32) (cells - 1);
	}
	memset(as->sketch, 0, cells * sizeof(uint16));
	as->sketch_rows = 0;
	as->sketch_cells = 0;
	as->heavy_restart = false;
	as->heavy_est = as->est_groups;
	as->est_groups = TAGG_HEAVY_GROUPS;
	as->heavy_phase = TAGG_HEAVY_SKETCH;
	return true;
}

/*
 * The rows of a batch (of those ok keeps) the pass groups: none while
 * sketching (NULL: they were counted), else those of cells counting
 * heavy_min or more.
 */
const bool *
TesseraAggHeavyRows(TesseraAggState *as, TesseraBatch *b, const bool *ok, int n)
{
	TesseraGroups *gt = &as->groups;
	const uint16 *sketch = as->sketch;
	uint32		mask = as->sketch_mask;
	bool	   *keep;
	int			m;

	if (as->heavy_cap < n)
	{
		as->heavy_cap = Max(n, 1024);
		as->heavy_keep = MemoryContextAlloc(as->buf_cxt, as->heavy_cap);
	}
	keep = as->heavy_keep;
	if (ok != NULL)
		memcpy(keep, ok, n);
	else
		memset(keep, true, n);
	/* (sliced: the slice's rows were hashed by the keys the slices take) */
	if (as->nslices > 1 && as->slice_nkeys == gt->nhash)
		m = gt->nshash;
	else
		m = TesseraGroupsValueHashes(gt, gt->nhash, b, keep, n);
	if (as->heavy_phase == TAGG_HEAVY_SKETCH)
	{
		uint16	   *cell = as->sketch;
		uint64		before = as->sketch_rows;

		for (int r = 0; r < m; r++)
		{
			uint32		c = (uint32) gt->shash[r] & mask;

			as->sketch_cells += cell[c] == 0;
			cell[c] += cell[c] != PG_UINT16_MAX;
		}
		as->sketch_rows += m;
		/* few groups: every row grouped instead, from the start */
		if (before < TAGG_HEAVY_CHECK_ROWS && as->sketch_rows >= TAGG_HEAVY_CHECK_ROWS &&
			as->sketch_cells * TAGG_HEAVY_ROWS_PER_CELL < as->sketch_rows)
		{
			as->heavy_phase = TAGG_HEAVY_OFF;
			as->heavy_result = -3;
			as->est_groups = as->heavy_est;
			as->heavy_restart = true;
		}
		return NULL;
	}
	for (int r = 0; r < m; r++)
		keep[gt->srows[r]] = sketch[(uint32) gt->shash[r] & mask] >= as->heavy_min;
	return keep;
}

/* After the first pass: the threshold of the second, or 0 if none stands out. */
static int
heavy_threshold(TesseraAggState *as)
{
	double		per_cell = (double) as->sketch_rows / (as->sketch_mask + 1.0);
	int			noise = (int) ceil(per_cell + 8 * sqrt(per_cell) + 4);
	uint32	   *cells_at;
	uint64		fuller = 0;
	int			best = 0;

	if (noise >= PG_UINT16_MAX / 2)
		return 0;
	cells_at = palloc0(sizeof(uint32) * (PG_UINT16_MAX + 1));
	for (uint32 c = 0; c <= as->sketch_mask; c++)
		if (as->sketch[c] > noise)
			cells_at[as->sketch[c]]++;
	/* the count of the (n + m)th fullest cell */
	for (int v = PG_UINT16_MAX; v > noise; v--)
	{
		fuller += cells_at[v];
		if (fuller >= (uint64) as->topn_rows)
		{
			best = v;
			break;
		}
	}
	pfree(cells_at);
	if (best <= 2 * noise)
		return 0;
	return best - noise;
}

/*
 * After a pass: true if another is needed (the caller rereads the table
 * with the groups reset), the sketch's outcome noted for EXPLAIN.
 */
bool
TesseraAggHeavyNext(TesseraAggState *as)
{
	TesseraGroups *g = &as->groups;

	if (as->heavy_restart)
	{
		as->heavy_restart = false;
		return true;
	}
	if (as->heavy_phase == TAGG_HEAVY_SKETCH)
	{
		as->heavy_min = heavy_threshold(as);
		if (as->heavy_min > 0)
			as->heavy_phase = TAGG_HEAVY_FILTER;
		else
		{
			as->heavy_phase = TAGG_HEAVY_OFF;
			as->heavy_result = -1;
			as->est_groups = as->heavy_est;
		}
		return true;
	}
	if (as->heavy_phase == TAGG_HEAVY_FILTER)
	{
		int			k = as->specs[as->topn_spec].same_as >= 0 ?
			as->specs[as->topn_spec].same_as : as->topn_spec;
		int			enough = 0;

		as->heavy_phase = TAGG_HEAVY_OFF;
		as->est_groups = as->heavy_est;
		if (as->spill.spilled_groups == 0)
			for (int group = 0; group < g->ngroups; group++)
				enough += TesseraGroupState(g, group, k)->count >= as->heavy_min;
		if (as->spill.spilled_groups > 0 || enough < as->topn_rows)
		{
			as->heavy_result = -2;
			return true;
		}
		as->heavy_result = as->heavy_min;
	}
	return false;
}
