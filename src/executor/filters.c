/*-------------------------------------------------------------------------
 *
 * filters.c
 *	  The filters TesseraScan and TesseraAgg run inside the table AM's
 *	  scan: a row-group filter consulted before a row group is read, and a
 *	  vector filter that returns a selection of a loaded batch's rows.
 *
 * NOTES
 *	  Both are built from the planner's descriptions (plan.h) and the quals
 *	  they describe.  Their values (constants, parameters, outer values of
 *	  a nested loop) are computed once per (re)scan, in filter_cxt.
 *
 *	  A row group's summary (min/max, null count per chunk) covers every
 *	  row it stores, deleted or not, so skipping by it is exact.  Skip quals
 *	  use the column's default btree family, the order min/max were
 *	  computed in, cross-type comparisons included; collatable columns skip
 *	  only when the qual's collation is the column's.
 *
 *	  The vector filter leaves the rows of a batch that pass every vector
 *	  qual (vector/filter.c); when few pass, the batch is marked sparse and
 *	  its other columns are decoded value by value.  EXPLAIN's counters
 *	  ride in Instrumentation.ntuples2 (row groups skipped) and nfiltered2
 *	  (rows removed), which PostgreSQL sums over parallel workers.
 *
 * IDENTIFICATION
 *	  src/executor/filters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "tessera/tableam.h"
#include "nodes.h"

/* A row-group filter from its description and the qual it describes. */
static SkipNode *
build_skip(List *desc, Node *qual, PlanState *ps)
{
	SkipNode   *sn = palloc0(sizeof(SkipNode));
	int			value_arg = desc_int(desc, SKIP_DESC_VALUE_ARG);

	sn->kind = (SkipKind) desc_int(desc, SKIP_DESC_KIND);
	sn->attidx = desc_int(desc, SKIP_DESC_ATTIDX);
	sn->strategy = desc_int(desc, SKIP_DESC_STRATEGY);
	sn->collation = (Oid) desc_int(desc, SKIP_DESC_COLLATION);
	sn->use_or = desc_int(desc, SKIP_DESC_USE_OR);
	sn->elemtype = (Oid) desc_int(desc, SKIP_DESC_ELEMTYPE);
	switch (sn->kind)
	{
		case SKIP_CMP:
			fmgr_info((Oid) desc_int(desc, SKIP_DESC_ORDERPROC), &sn->order);
			sn->expr = ExecInitExpr(list_nth(castNode(OpExpr, qual)->args, value_arg), ps);
			break;
		case SKIP_ARRAY:
			fmgr_info((Oid) desc_int(desc, SKIP_DESC_ORDERPROC), &sn->order);
			sn->expr = ExecInitExpr(list_nth(castNode(ScalarArrayOpExpr, qual)->args, value_arg),
									ps);
			break;
		case SKIP_ISNULL:
		case SKIP_NOTNULL:
			break;
		case SKIP_AND:
		case SKIP_OR:
			{
				List	   *args = castNode(BoolExpr, qual)->args;

				for (int i = 0; i < list_length(args); i++)
					sn->children = lappend(sn->children,
										   build_skip(list_nth(desc, SKIP_DESC_NFIELDS + i),
													  list_nth(args, i), ps));
				break;
			}
	}
	return sn;
}

/* Set up the row-group filters and vector quals of a TesseraScan or TesseraAgg. */
void
TesseraFiltersInit(TesseraScanState *ts, List *skip_quals, List *skip_descs,
				   List *vector_quals, List *vector_descs)
{
	PlanState  *ps = &ts->css.ss.ps;
	ListCell   *lc,
			   *dc;

	ts->skip_exprs = skip_quals;
	forboth(lc, skip_quals, dc, skip_descs)
		ts->skip = lappend(ts->skip, build_skip(lfirst(dc), lfirst(lc), ps));

	ts->vector_exprs = vector_quals;
	ts->vquals = palloc0(sizeof(VecQual) * Max(list_length(vector_quals), 1));
	forboth(lc, vector_quals, dc, vector_descs)
	{
		TesseraVecQualInit(&ts->vquals[ts->nvquals], lfirst(dc), lfirst(lc), ps);
		ts->vquals[ts->nvquals].plan_pos = ts->nvquals;
		ts->nvquals++;
	}
	ts->filter_cxt = AllocSetContextCreate(CurrentMemoryContext, "TesseraScan filter",
										   ALLOCSET_SMALL_SIZES);
	TesseraVectorInit();
}

/* Evaluate the quals' expressions for this (re)scan. */
static void
eval_skip_values(TesseraScanState *ts, List *nodes, ExprContext *econtext)
{
	ListCell   *lc;

	foreach(lc, nodes)
	{
		SkipNode   *sn = lfirst(lc);

		if (sn->kind == SKIP_AND || sn->kind == SKIP_OR)
			eval_skip_values(ts, sn->children, econtext);
		else if (sn->expr != NULL)
		{
			sn->value = ExecEvalExprSwitchContext(sn->expr, econtext, &sn->isnull);
			if (sn->kind == SKIP_ARRAY && !sn->isnull)
			{
				ArrayType  *arr = DatumGetArrayTypeP(sn->value);
				int16		elmlen;
				bool		elmbyval;
				char		elmalign;

				get_typlenbyvalalign(sn->elemtype, &elmlen, &elmbyval, &elmalign);
				deconstruct_array(arr, sn->elemtype, elmlen, elmbyval, elmalign,
								  &sn->elems, &sn->elemnulls, &sn->nelems);
			}
		}
	}
}

/* Evaluate the filters' values for this (re)scan. */
void
TesseraFiltersEval(TesseraScanState *ts)
{
	ExprContext *econtext = ts->css.ss.ps.ps_ExprContext;
	MemoryContext old;

	/* values live until the next rescan */
	MemoryContextReset(ts->filter_cxt);
	old = MemoryContextSwitchTo(ts->filter_cxt);
	ResetExprContext(econtext);
	eval_skip_values(ts, ts->skip, econtext);
	for (int i = 0; i < ts->nvquals; i++)
		TesseraVecQualEval(&ts->vquals[i], econtext);
	MemoryContextSwitchTo(old);
	ts->values_ready = true;
}

/* Could a row with a value in [min, max] satisfy `col strategy value`? */
static bool
range_may_match(SkipNode *sn, TesseraChunkSummary *cs, Datum value)
{
	int			c;

	switch (sn->strategy)
	{
		case BTLessStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value)) < 0;
		case BTLessEqualStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value)) <= 0;
		case BTEqualStrategyNumber:
			c = DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value));
			if (c > 0)
				return false;
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) >= 0;
		case BTGreaterEqualStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) >= 0;
		case BTGreaterStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) > 0;
	}
	return true;
}

/* May some row of the row group satisfy the filter? */
static bool
skip_may_match(SkipNode *sn, TesseraReader *r, int stripe, int rg)
{
	TesseraChunkSummary cs;
	ListCell   *lc;

	switch (sn->kind)
	{
		case SKIP_AND:
			foreach(lc, sn->children)
			{
				if (!skip_may_match(lfirst(lc), r, stripe, rg))
					return false;
			}
			return true;
		case SKIP_OR:
			foreach(lc, sn->children)
			{
				if (skip_may_match(lfirst(lc), r, stripe, rg))
					return true;
			}
			return false;
		default:
			break;
	}

	TesseraReaderChunkSummary(r, stripe, rg, sn->attidx, &cs);
	switch (sn->kind)
	{
		case SKIP_ISNULL:
			return cs.nonnull < cs.rows;
		case SKIP_NOTNULL:
			return cs.nonnull > 0;
		case SKIP_CMP:
			/* comparisons are strict: NULLs never match */
			if (sn->isnull || cs.nonnull == 0)
				return false;
			return !cs.has_minmax || range_may_match(sn, &cs, sn->value);
		case SKIP_ARRAY:
			if (sn->isnull || cs.nonnull == 0)
				return false;
			if (!cs.has_minmax)
				return true;
			for (int i = 0; i < sn->nelems; i++)
			{
				bool		m = !sn->elemnulls[i] && range_may_match(sn, &cs, sn->elems[i]);

				if (sn->use_or && m)
					return true;
				if (!sn->use_or && !m)
					return false;
			}
			return !sn->use_or;
		default:
			return true;
	}
}

bool
TesseraRowGroupMayMatch(void *arg, TesseraReader *r, int stripe, int rg)
{
	TesseraScanState *ts = arg;
	MemoryContext tmp = ts->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory;
	MemoryContext old = MemoryContextSwitchTo(tmp);
	bool		may = true;
	ListCell   *lc;

	foreach(lc, ts->skip)
	{
		if (!skip_may_match(lfirst(lc), r, stripe, rg))
		{
			may = false;
			break;
		}
	}
	MemoryContextSwitchTo(old);
	/* (a star join's dimensions are built in their own memory) */
	if (may && ts->rg_prune != NULL && !ts->rg_prune(ts->rg_prune_arg, r, stripe, rg))
		may = false;
	if (may)
		ts->rgs_read++;
	else
	{
		ts->rgs_skipped++;
		if (ts->css.ss.ps.instrument)
			ts->css.ss.ps.instrument->ntuples2 += 1;
	}
	return may;
}

const bool *
TesseraFilterBatch(void *arg, TesseraBatch *b)
{
	TesseraScanState *ts = arg;
	bool	   *sel;
	int			n = b->nrows;
	uint64		kept = 0,
				live = 0;

	if (ts->nvquals == 0)
		return NULL;
	if (ts->sel_cap < b->chunk_rows)
	{
		if (ts->sel)
			pfree(ts->sel);
		if (ts->idx)
			pfree(ts->idx);
		ts->sel_cap = Max(b->chunk_rows, 1024);
		ts->sel = MemoryContextAlloc(ts->css.ss.ps.state->es_query_cxt, ts->sel_cap);
		ts->idx = MemoryContextAlloc(ts->css.ss.ps.state->es_query_cxt,
									 sizeof(int) * ts->sel_cap);
	}
	sel = ts->sel;
	TesseraVecApply(ts->vquals, ts->nvquals, b, sel, n, ts->idx);

	if (b->deleted == NULL)
	{
		live = n;
		kept = TesseraSelCount(sel, n);
	}
	else
		for (int i = 0; i < n; i++)
		{
			live += !b->deleted[i];
			kept += sel[i] & !b->deleted[i];
		}
	ts->rows_removed += live - kept;
	/* few rows survive: decode their other columns value by value */
	b->sparse = kept * 32 < (uint64) n;
	if (ts->css.ss.ps.instrument)
		ts->css.ss.ps.instrument->nfiltered2 += live - kept;
	return sel;
}

/* Give the scan the columns to decode and the filters, before it starts. */
void
TesseraFiltersStart(TesseraScanState *ts)
{
	TableScanDesc scan = ts->css.ss.ss_currentScanDesc;

	TesseraScanSetColumns(scan, ts->needed);
	TesseraScanSetFilters(scan, ts->skip != NIL || ts->rg_prune != NULL ?
						  TesseraRowGroupMayMatch : NULL,
						  ts->nvquals > 0 ? TesseraFilterBatch : NULL, ts);
	ts->filters_set = true;
}


/* EXPLAIN ANALYZE's filter counters, summed over all loops. */
void
TesseraExplainFilterCounts(PlanState *ps, bool skip, bool vector, ExplainState *es)
{
	Instrumentation *instr = ps->instrument;

	if (skip)
		ExplainPropertyFloat("Row Groups Skipped", NULL, instr->ntuples2, 0, es);
	if (vector)
		ExplainPropertyFloat("Rows Removed by Vector Filter", NULL, instr->nfiltered2, 0, es);
}
