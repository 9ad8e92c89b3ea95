/*-------------------------------------------------------------------------
 *
 * agg_methods.c
 *	  TesseraAgg's EXPLAIN (what it aggregates, its keys, quals and star
 *	  join, and under ANALYZE its counters) and its parallel callbacks (the
 *	  scan's or batch source's shared state, the star join's tables).
 *
 * IDENTIFICATION
 *	  src/executor/agg_methods.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "common/int.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "tessera/plan.h"
#include "tessera/rowstate.h"
#include "tessera/tableam.h"
#include "nodes.h"

/*
 * TesseraAggExplain
 *		The node's lines of EXPLAIN.
 */
void
TesseraAggExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	TesseraAggState *as = (TesseraAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Index		plan_relid = intVal(list_nth(cscan->custom_private, TAGG_PRIVATE_RELID));
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List	   *aggs = NIL;
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, cscan->custom_scan_tlist)
	{
		Node	   *expr = (Node *) lfirst_node(TargetEntry, lc)->expr;
		char	   *text = deparse_expression(expr, context, es->verbose, false);

		if (IsA(expr, Aggref))
			aggs = lappend(aggs, text);
		else
			keys = lappend(keys, text);
	}
	if (as->mode == TAGG_PARTIAL)
	{
		/* the scan tuple holds their states: show the aggregates themselves */
		List	   *plan_aggs = copyObject(list_nth(cscan->custom_private, TAGG_PRIVATE_AGGS));

		OffsetVarNodes((Node *) plan_aggs, (int) cscan->scan.scanrelid - (int) plan_relid, 0);
		aggs = NIL;
		foreach(lc, plan_aggs)
			aggs = lappend(aggs, deparse_expression(lfirst(lc), context, es->verbose, false));
	}
	if (keys != NIL)
	{
		int			ncarried = intVal(list_nth(cscan->custom_private, TAGG_PRIVATE_CARRIED));
		int			ngrouped = list_length(keys) - ncarried;

		/* keys that are functions of the others: stored per group, not grouped on */
		ExplainPropertyList("Group Key", list_truncate(list_copy(keys), ngrouped), es);
		if (ncarried > 0)
			ExplainPropertyList("Carried Keys", list_copy_tail(keys, ngrouped), es);
	}
	if (as->mode != TAGG_FINAL &&
		list_nth(cscan->custom_private, TAGG_PRIVATE_STAR_CLAUSES) != NIL)
	{
		/* planned with the query's own range table indexes, as the quals */
		List	   *kinds = copyObject(list_nth(cscan->custom_private,
												TAGG_PRIVATE_STAR_CLAUSES));
		static const char *const labels[] = {"Star Join", "Semi Join", "Anti Join",
		"Join Filter", "Left Join"};

		OffsetVarNodes((Node *) kinds, (int) cscan->scan.scanrelid - (int) plan_relid, 0);
		foreach(lc, kinds)
		{
			if (lfirst(lc) == NIL)
				continue;
			ExplainPropertyText(labels[foreach_current_index(lc)],
								deparse_expression((Node *) make_ands_explicit(lfirst(lc)),
												   context, true, false), es);
		}
	}
	if (aggs != NIL)
		ExplainPropertyList("Aggregates", aggs, es);
	if (as->mode != TAGG_SERIAL)
		ExplainPropertyText("Phase", as->mode == TAGG_PARTIAL ? "Partial" : "Finalize", es);
	/* ORDER BY a count LIMIT: groups worse than the last kept are not emitted */
	if (as->topn_rows > 0)
		ExplainPropertyInteger("Top-N Groups", NULL, as->topn_rows, es);

	/* the quals carry the planning-time varno: show them as the scan's */
	foreach(lc, list_make3(as->ts.skip_exprs, as->ts.vector_exprs,
						   list_nth(cscan->custom_private, TAGG_PRIVATE_ROW_QUALS)))
	{
		List	   *quals = copyObject(lfirst(lc));
		int			k = foreach_current_index(lc);

		if (quals == NIL)
			continue;
		ChangeVarNodes((Node *) quals, plan_relid, cscan->scan.scanrelid, 0);
		ExplainPropertyText(k == 0 ? "Row Group Filter" : k == 1 ? "Vector Filter" : "Filter",
							deparse_expression((Node *) make_ands_explicit(quals), context,
											   es->verbose, false), es);
	}
	/* a LIMIT with no ORDER BY: the first groups made, each complete */
	if (as->group_limit > 0)
		ExplainPropertyInteger("Group Limit", NULL, as->group_limit, es);
	/* sliced: every process groups the rows of the slices it takes */
	if (as->nslices > 1)
		ExplainPropertyInteger("Slices", NULL, as->nslices, es);
	if (es->analyze && node->ss.ps.instrument)
	{
		/* (the counters below: this process's, for its last slice) */
		if (as->nslices > 1)
			ExplainPropertyInteger("Slices Grouped by Leader", NULL, as->slices_done, es);
		if (as->distinct && as->mode != TAGG_PARTIAL)
			ExplainPropertyInteger("Groups", NULL, as->outer.ngroups, es);
		if (as->groups.nkeys > 0 && as->spill.spilled_groups == 0)
			ExplainPropertyInteger(as->distinct ? "Groups with Distinct Values" : "Groups", NULL,
								   as->groups.ngroups, es);
		if (as->spill.spilled_groups > 0)
		{
			ExplainPropertyUInteger("Groups Spilled", NULL, as->spill.spilled_groups, es);
			ExplainPropertyInteger("Spill Partitions", NULL, as->spill.npart, es);
			ExplainPropertyInteger("Spill Rounds", NULL, as->spill.rounds, es);
			if (as->spill.split_parts > 0)
				ExplainPropertyInteger("Spill Partitions Split", NULL, as->spill.split_parts, es);
			if (as->spill.sorted_parts > 0)
				ExplainPropertyInteger("Spill Partitions Sorted", NULL, as->spill.sorted_parts, es);
		}
		if (as->topn_rows > 0)
			ExplainPropertyUInteger("Groups Left Out by Top-N", NULL, as->topn_left_out, es);
		/* (agg_heavy.c) */
		if (as->heavy_result > 0)
			ExplainPropertyInteger("Top-N Sketch Threshold", NULL, as->heavy_result, es);
		else if (as->heavy_result < 0)
			ExplainPropertyText("Top-N Sketch", as->heavy_result == -1 ? "no heavy groups" :
								as->heavy_result == -2 ? "too few heavy groups" : "few groups",
								es);
		/* partial nodes' own counters are the leader's share only */
		if (as->mode == TAGG_SERIAL)
		{
			ExplainPropertyUInteger("Chunks Answered from Metadata", NULL, as->metadata_answers, es);
			ExplainPropertyUInteger("Row Groups Read", NULL, as->ts.rgs_read, es);
		}
		/* a correlated subquery's runs answered from one grouped pass */
		if (as->memo_built)
		{
			ExplainPropertyInteger("Memo Groups", NULL, as->memo_groups.ngroups, es);
			ExplainPropertyUInteger("Runs Answered from Memo", NULL, as->memo_lookups, es);
			if (as->memo_domain != NULL)
				ExplainPropertyInteger("Memo Limited to Join Keys", NULL,
									   as->memo_domain->nrows, es);
		}
		TesseraExplainFilterCounts(&node->ss.ps,
								   as->ts.skip_exprs != NIL || as->ts.rg_prune != NULL,
								   as->ts.vector_exprs != NIL, es);
		/* (a partial node's: the leader's share only) */
		if (list_nth(cscan->custom_private, TAGG_PRIVATE_ROW_QUALS) != NIL)
			ExplainPropertyUInteger("Rows Removed by Filter", NULL, as->rows_removed_by_quals, es);
		/* (a partial node's: the leader's share only) */
		if (as->star.ndims > 0)
			ExplainPropertyUInteger("Rows Removed by Star Join", NULL, as->star.rows_removed, es);
		if (as->mode != TAGG_FINAL && as->source == NULL)
			TesseraScanExplainBytes(&as->ts, es);
	}
	if (as->source != NULL)
		as->source->explain(as->source_state, as->source_plan, es);
}

/*
 * Parallel: the shared scan (or batch source) and star join state; a
 * sliced node, the counters and the next slice to take.
 */
Size
TesseraAggEstimateDSM(CustomScanState *node, ParallelContext *pcxt)
{
	TesseraAggState *as = (TesseraAggState *) node;

	if (as->source == NULL)
		return TesseraScanEstimateDSM(node, pcxt);
	return MAXALIGN(sizeof(TscanShared)) + as->source->shared_size;
}

void
TesseraAggInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraAggState *as = (TesseraAggState *) node;
	char	   *shared = (char *) coordinate + MAXALIGN(sizeof(TscanShared));

	if (as->nslices > 1)
		TesseraScanInitShared(&as->ts, coordinate);		/* each reads it all */
	else if (as->source == NULL)
		TesseraScanInitDSM(node, pcxt, coordinate);
	else
	{
		memset(coordinate, 0, MAXALIGN(sizeof(TscanShared)));
		as->source->init_shared(shared);
		as->source->attach(as->source_state, shared);
	}
	/* a star join's tables: built by one process for all */
	((TscanShared *) coordinate)->star =
		TesseraStarInitShared(&as->star, node->ss.ps.state->es_query_dsa);
}

void
TesseraAggReInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraAggState *as = (TesseraAggState *) node;

	if (as->nslices > 1)
	{
		TscanShared *sh = coordinate;

		pg_atomic_write_u32(&sh->next_slice, 0);
		pg_atomic_write_u32(&sh->slices_finished, 0);
		for (int k = 0; k < TAGG_SLICE_COUNTS; k++)
			pg_atomic_write_u64(&sh->slice_counts[k], 0);
	}
	else if (as->source == NULL)
		TesseraScanReInitDSM(node, pcxt, coordinate);
	else
		as->source->init_shared((char *) coordinate + MAXALIGN(sizeof(TscanShared)));
	TesseraStarReInitShared(&as->star);
}

void
TesseraAggInitWorker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	TesseraAggState *as = (TesseraAggState *) node;

	if (as->nslices > 1)
	{
		as->ts.shared = coordinate;
		as->ts.is_worker = true;
	}
	else if (as->source == NULL)
		TesseraScanInitWorker(node, toc, coordinate);
	else
		as->source->attach(as->source_state, (char *) coordinate + MAXALIGN(sizeof(TscanShared)));
	TesseraStarAttachShared(&as->star, node->ss.ps.state->es_query_dsa,
							((TscanShared *) coordinate)->star);
}

/* The range of an integer type. */
static void
tagg_int_range(Oid type, int64 *lo, int64 *hi)
{
	*lo = type == INT2OID ? PG_INT16_MIN : type == INT4OID ? PG_INT32_MIN : PG_INT64_MIN;
	*hi = type == INT2OID ? PG_INT16_MAX : type == INT4OID ? PG_INT32_MAX : PG_INT64_MAX;
}

/*
 * sum/avg(x + c) (classify.c, offset_describe): the values of x for which
 * x + c lies in the range of its type, and whether x's own type has others.
 */
static void
tagg_init_offset(TAggSpec *sp, Const *c, Oid type)
{
	int64		lo,
				hi,
				xlo,
				xhi;

	sp->has_offset = true;
	sp->offset = DatumGetInt64(c->constvalue);
	sp->offset_type = type;
	tagg_int_range(type, &lo, &hi);
	tagg_int_range(sp->argtype, &xlo, &xhi);
	/* x + c in [lo, hi]: x in [lo - c, hi - c], saturated (beyond means none) */
	if (pg_sub_s64_overflow(lo, sp->offset, &sp->offset_lo))
		sp->offset_lo = PG_INT64_MIN;
	if (pg_sub_s64_overflow(hi, sp->offset, &sp->offset_hi))
		sp->offset_hi = PG_INT64_MAX;
	sp->offset_check = xlo < sp->offset_lo || xhi > sp->offset_hi;
}

/*
 * TesseraAggInitSpec
 *		An aggregate of the node from its description.
 */
void
TesseraAggInitSpec(TesseraAggState *as, TAggSpec *sp, List *desc, Aggref *agg)
{
	List	   *vx = list_nth(desc, AGG_DESC_VX);
	List	   *filter = list_nth(desc, AGG_DESC_FILTER);

	sp->kind = (TAggKind) desc_int(desc, AGG_DESC_KIND);
	sp->attidx = desc_int(desc, AGG_DESC_ATTIDX);
	sp->argtype = (Oid) desc_int(desc, AGG_DESC_ARGTYPE);
	sp->restype = (Oid) desc_int(desc, AGG_DESC_RESTYPE);
	sp->generic = desc_int(desc, AGG_DESC_GENERIC);
	sp->same_as = desc_int(desc, AGG_DESC_SAME_AS);
	sp->var_form = desc_int(desc, AGG_DESC_VAR_FORM);
	if (list_nth(desc, AGG_DESC_OFFSET) != NULL)
		tagg_init_offset(sp, (Const *) list_nth(desc, AGG_DESC_OFFSET),
						 (Oid) desc_int(desc, AGG_DESC_OFFSET_TYPE));
	if (sp->generic)
	{
		fmgr_info(lookup_type_cache(sp->argtype, TYPECACHE_CMP_PROC)->cmp_proc, &sp->cmp);
		sp->collation = agg->inputcollid;
		get_typlenbyval(sp->argtype, &sp->typlen, &sp->typbyval);
	}
	if (vx != NIL)
		sp->vx = TesseraVxBuild(vx);
	if (filter != NIL)
	{
		List	   *conj = make_ands_implicit(agg->aggfilter);

		sp->fq = palloc0(sizeof(VecQual) * list_length(filter));
		for (int i = 0; i < list_length(filter); i++)
			TesseraVecQualInit(&sp->fq[sp->nfq++], list_nth(filter, i), list_nth(conj, i),
							   &as->ts.css.ss.ps);
	}
}

/*
 * TesseraAggTakeSlice
 *		Take the next slice no process has taken (sliced node): false when
 *		none is left.  Every slice is taken by one process, whichever
 *		processes start: a worker that never launched leaves its slice to
 *		the others, which take it after their own.  Without shared memory
 *		(Gather ran no workers) this process takes them all in turn.
 */
bool
TesseraAggTakeSlice(TesseraAggState *as)
{
	uint32		s;

	if (as->ts.shared != NULL)
		s = pg_atomic_fetch_add_u32(&as->ts.shared->next_slice, 1);
	else
		s = (uint32) as->local_slice++;
	if (s >= (uint32) as->nslices)
		return false;
	as->slice = (int) s;
	as->slices_done++;
	return true;
}

/*
 * TesseraAggSliceCounted
 *		count(DISTINCT)s alone, no GROUP BY (slice_sum): a slice's values are
 *		counted (its one rolled-up group); add its counts to the others' and
 *		note whether it was the last slice to finish, whose process emits
 *		the sums.  The slices hold disjoint values, so the counts add up.
 */
void
TesseraAggSliceCounted(TesseraAggState *as)
{
	TscanShared *sh = as->ts.shared;
	uint32		finished;

	Assert(as->nspecs <= TAGG_SLICE_COUNTS && as->outer.ngroups == 1);
	for (int k = 0; k < as->nspecs; k++)
	{
		int64		n = TesseraGroupState(&as->outer, 0, k)->count;

		if (sh != NULL)
			pg_atomic_fetch_add_u64(&sh->slice_counts[k], (uint64) n);
		else
			as->local_counts[k] += n;
	}
	/* (a full barrier: the counts are in before the slice counts as finished) */
	if (sh != NULL)
		finished = pg_atomic_add_fetch_u32(&sh->slices_finished, 1);
	else
		finished = ++as->local_finished;
	if (finished == (uint32) as->nslices)
	{
		/* the last: every slice's counts are in; this process emits them */
		as->slice_emitter = true;
		for (int k = 0; k < as->nspecs; k++)
			TesseraGroupState(&as->outer, 0, k)->count = sh != NULL ?
				(int64) pg_atomic_read_u64(&sh->slice_counts[k]) : as->local_counts[k];
	}
}
