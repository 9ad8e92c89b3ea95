/*-------------------------------------------------------------------------
 *
 * agg_node.c
 *	  TesseraAgg's executor: an aggregate query over one tessera table --
 *	  count, sum, avg, min and max, grouped or not, with vector quals --
 *	  computed in loops over decoded column vectors, one row group at a
 *	  time, instead of forming a tuple per row and calling transition
 *	  functions.
 *
 * NOTES
 *	  The node walks the row groups TesseraScan would read (the same table
 *	  AM scan and filters) and folds each batch into the groups
 *	  (vector/groups.c) and their aggregate states (vector/aggtrans.c).
 *	  What the encoding already knows is not decoded: with one group and
 *	  every stored row counted, counts and min/max come from the chunk
 *	  summaries and integer sums of constant, run-length or steadily
 *	  stepping chunks from the encoding; a lone count(*) skips such row
 *	  groups without reading them.
 *
 *	  count(DISTINCT col) is a grouping by the GROUP BY columns and col,
 *	  rolled up at the end into the groups of the GROUP BY columns (each
 *	  inner group with col not NULL counts one; serially the other
 *	  aggregates fold into the rolled-up groups row by row, in parallel
 *	  their states combine as partial states do): the distinct values are
 *	  hashed like any group key (dictionary codes, direct tables), spill
 *	  with the groups past hash_mem and travel from parallel workers as
 *	  groups.
 *
 *	  Modes (TAggMode): serial; partial, in every process of a parallel
 *	  scan, emitting per group its keys and a bytea of its states; final,
 *	  above the Gather, merging them.  Groups that outgrow hash_mem spill
 *	  to hash partitions and are merged back a partition at a time
 *	  (vector/spill.c).
 *
 *	  A correlated subquery's plain aggregate is answered from a memo
 *	  (TAGG_PRIVATE_MEMO): grouped by its correlated columns, in one pass.
 *
 * IDENTIFICATION
 *	  src/executor/agg_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "tessera/rowstate.h"
#include "tessera/tableam.h"
#include "nodes.h"

static Node *tagg_create_state(CustomScan *cscan);
static void tagg_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *tagg_exec(CustomScanState *node);
static void tagg_end(CustomScanState *node);
static void tagg_rescan(CustomScanState *node);
static void tagg_shutdown(CustomScanState *node);

/* the source of foreign tables' batches, if one registered (files/parquet_fdw.c) */
const TesseraBatchSource *tessera_batch_source = NULL;

const CustomScanMethods TesseraAggPlanMethods = {
	.CustomName = "TesseraAgg",
	.CreateCustomScanState = tagg_create_state,
};

static const CustomExecMethods tagg_exec_methods = {
	.CustomName = "TesseraAgg",
	.BeginCustomScan = tagg_begin,
	.ExecCustomScan = tagg_exec,
	.EndCustomScan = tagg_end,
	.ReScanCustomScan = tagg_rescan,
	/* the partial node shares its scan like TesseraScan, or its source's */
	.EstimateDSMCustomScan = TesseraAggEstimateDSM,
	.InitializeDSMCustomScan = TesseraAggInitDSM,
	.ReInitializeDSMCustomScan = TesseraAggReInitDSM,
	.InitializeWorkerCustomScan = TesseraAggInitWorker,
	.ShutdownCustomScan = tagg_shutdown,
	.ExplainCustomScan = TesseraAggExplain,
};

static Node *
tagg_create_state(CustomScan *cscan)
{
	TesseraAggState *state = (TesseraAggState *) newNode(sizeof(TesseraAggState),
														 T_CustomScanState);

	state->ts.css.methods = &tagg_exec_methods;
	return (Node *) state;
}

/*
 * The memo of a correlated subquery's runs (TAGG_PRIVATE_MEMO), if planned:
 * not where a star join's dimensions read parameters (each run's are its own).
 */
static void
tagg_memo_init(TesseraAggState *as, EState *estate)
{
	List	   *params;
	ListCell   *lc;

	for (int d = 0; as->memo != NIL && d < as->star.ndims; d++)
		if (!bms_is_empty(as->star.dims[d].child->plan->extParam))
			as->memo = NIL;
	if (as->memo == NIL)
		return;
	params = list_nth(as->memo, TAGG_MEMO_PARAMS);
	as->memo_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg memo",
										 ALLOCSET_DEFAULT_SIZES);
	TesseraGroupsInit(&as->memo_groups, list_nth(as->memo, TAGG_MEMO_KEYS),
					  as->groups.nspecs, as->memo_cxt);
	as->memo_params = palloc(sizeof(ExprState *) * list_length(params));
	foreach(lc, params)
		as->memo_params[foreach_current_index(lc)] = ExecInitExpr(lfirst(lc),
																  &as->ts.css.ss.ps);
	for (int j = 0; j < as->memo_groups.nkeys; j++)
		as->memo_strings |= as->memo_groups.gkeys[j].kind != TAGG_KEY_INT;
}

/*
 * A carried group key's expression is computed for the first row of each
 * new group only (TesseraGroupsFillCarried), unless the grouped keys or an
 * aggregate read it too.
 */
static void
tagg_defer_carried(TesseraAggState *as)
{
	TesseraGroups *gt = &as->groups;

	/* (a final node merges groups made elsewhere: it computes nothing) */
	if (as->mode == TAGG_FINAL)
		return;
	for (int j = gt->nhash; j < gt->nkeys; j++)
	{
		int			attidx = gt->gkeys[j].attidx;
		bool		shared = false;

		if (attidx < TAGG_COMPUTED_ATTIDX || attidx - TAGG_COMPUTED_ATTIDX >= as->comp.n)
			continue;
		for (int h = 0; h < gt->nhash && !shared; h++)
			shared = gt->gkeys[h].attidx == attidx;
		for (int k = 0; k < as->nspecs && !shared; k++)
			shared = as->specs[k].attidx == attidx;
		if (!shared)
			TesseraComputedDefer(&as->comp, attidx - TAGG_COMPUTED_ATTIDX);
	}
}

static void
tagg_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraAggState *as = (TesseraAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *aggs = list_nth(priv, TAGG_PRIVATE_AGGS);
	List	   *specs = list_nth(priv, TAGG_PRIVATE_SPECS);

	as->mode = (TAggMode) intVal(list_nth(priv, TAGG_PRIVATE_MODE));
	if (as->mode == TAGG_FINAL)
		node->custom_ps = list_make1(ExecInitNode(linitial(cscan->custom_plans), estate, eflags));
	TesseraFiltersInit(&as->ts, list_nth(priv, TAGG_PRIVATE_SKIP_QUALS),
					   list_nth(priv, TAGG_PRIVATE_SKIP),
					   list_nth(priv, TAGG_PRIVATE_VECTOR_QUALS),
					   list_nth(priv, TAGG_PRIVATE_VECTOR));
	as->specs = palloc0(sizeof(TAggSpec) * Max(list_length(specs), 1));
	for (int k = 0; k < list_length(specs); k++)
	{
		TesseraAggInitSpec(as, &as->specs[as->nspecs], list_nth(specs, k), list_nth(aggs, k));
		as->offset_checks |= as->specs[as->nspecs++].offset_check;
	}

	as->cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg groups",
									ALLOCSET_DEFAULT_SIZES);
	as->vx_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg expressions",
									   ALLOCSET_DEFAULT_SIZES);
	as->buf_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg buffers",
										ALLOCSET_DEFAULT_SIZES);
	as->partials.cxt = as->buf_cxt;
	as->distinct = intVal(list_nth(priv, TAGG_PRIVATE_NDISTINCT)) > 0;
	as->est_groups = intVal(list_nth(priv, TAGG_PRIVATE_GROUPS));
	as->group_limit = intVal(list_nth(priv, TAGG_PRIVATE_GROUP_LIMIT));
	if (as->group_limit > 0)
		as->est_groups = Min(as->est_groups, as->group_limit);
	if (as->mode != TAGG_FINAL)
	{
		TupleDesc	reldesc = RelationGetDescr(node->ss.ss_currentRelation);
		TupleDesc	rowdesc = reldesc;
		List	   *star = list_nth(priv, TAGG_PRIVATE_STAR);

		/* a star join: the dimensions' plans, their columns after the table's */
		if (star != NIL)
		{
			ListCell   *lc;

			foreach(lc, cscan->custom_plans)
				node->custom_ps = lappend(node->custom_ps,
										  ExecInitNode(lfirst(lc), estate, eflags));
			rowdesc = TesseraStarInit(&as->star, star, node->custom_ps, reldesc);
			/* row groups whose keys join nothing are not read */
			as->ts.rg_prune = TesseraStarRowGroupMayMatch;
			as->ts.rg_prune_arg = &as->star;
		}
		TesseraComputedInit(&as->comp, list_nth(priv, TAGG_PRIVATE_COMPUTED),
							intVal(list_nth(priv, TAGG_PRIVATE_RELID)), &node->ss.ps,
							rowdesc, reldesc->natts, estate);
		/* a star join's filters read the same extra columns the probe fills */
		TesseraComputedInit(&as->star_filters, as->star.filters,
							intVal(list_nth(priv, TAGG_PRIVATE_RELID)), &node->ss.ps,
							rowdesc, reldesc->natts, estate);
		as->star_filters.ext_values = as->comp.ext_values;
		as->star_filters.ext_nulls = as->comp.ext_nulls;
		TesseraComputedInit(&as->row_quals, list_nth(priv, TAGG_PRIVATE_ROW_QUALS),
							intVal(list_nth(priv, TAGG_PRIVATE_RELID)), &node->ss.ps,
							rowdesc, reldesc->natts, estate);
		as->row_quals.ext_values = as->comp.ext_values;
		as->row_quals.ext_nulls = as->comp.ext_nulls;
		as->source_plan = list_nth(priv, TAGG_PRIVATE_SOURCE);
		if (as->source_plan != NIL)
		{
			MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

			if (tessera_batch_source == NULL)
				elog(ERROR, "TesseraAgg over a foreign table without a batch source");
			as->source = tessera_batch_source;
			if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
				as->source_state = as->source->begin(node->ss.ss_currentRelation,
													 as->source_plan, &as->source_reader);
			MemoryContextSwitchTo(old);
		}
	}
	{
		/* groups of count(DISTINCT)s alone need no states: the roll-up counts them */
		int			nstates = 0;

		for (int k = 0; k < as->nspecs; k++)
			if (as->specs[k].kind != TAGG_COUNT_DISTINCT)
				nstates = as->nspecs;
		/*
		 * Serially, beside other aggregates, those fold into the roll-up's
		 * groups row by row: the groups keyed on the distinct column too
		 * (ClickBench q09: 124k of RegionID, UserID vs 3,000 of RegionID)
		 * then carry no states, which made every row's update a cache miss.
		 */
		as->fold = &as->groups;
		if (as->distinct && as->mode == TAGG_SERIAL && nstates > 0)
		{
			as->fold = &as->outer;
			nstates = 0;
		}
		TesseraGroupsInit(&as->groups, list_nth(priv, TAGG_PRIVATE_KEYS), nstates, as->cxt);
		TesseraGroupsCarry(&as->groups, intVal(list_nth(priv, TAGG_PRIVATE_CARRIED)));
		/* one count by some keys: the counts alone */
		if (nstates == 1 && as->groups.nkeys > 0 && as->specs[0].vx == NULL &&
			(as->specs[0].kind == TAGG_COUNT_STAR || as->specs[0].kind == TAGG_COUNT))
			TesseraGroupsCountOnly(&as->groups);
		tagg_defer_carried(as);
	}
	as->nslices = intVal(list_nth(priv, TAGG_PRIVATE_SLICES));
	as->memo = list_nth(priv, TAGG_PRIVATE_MEMO);
	if (list_nth(priv, TAGG_PRIVATE_TOPN) != NIL)
	{
		List	   *topn = list_nth(priv, TAGG_PRIVATE_TOPN);

		as->topn_rows = intVal(linitial(topn));
		as->topn_spec = intVal(lsecond(topn));
		as->topn_desc = intVal(lthird(topn)) != 0;
		as->topn_heavy = intVal(lfourth(topn)) != 0;
	}
	tagg_memo_init(as, estate);
	if (as->distinct && as->mode != TAGG_PARTIAL)
	{
		List	   *keys = list_nth(priv, TAGG_PRIVATE_KEYS);

		as->outer_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg outer groups",
											  ALLOCSET_DEFAULT_SIZES);
		TesseraGroupsInit(&as->outer, list_truncate(list_copy(keys), list_length(keys) - 1),
						  as->nspecs, as->outer_cxt);
	}
	/*
	 * Sliced: by the GROUP BY keys (not count(DISTINCT)'s, whose groups roll
	 * up across its values); with no GROUP BY, by count(DISTINCT)'s values,
	 * each slice's counts added up (the planner allows only counts then).
	 */
	if (as->nslices > 1)
	{
		as->slice_nkeys = as->groups.nhash;
		if (as->distinct)
			as->slice_nkeys = Max(as->outer.nkeys, 1);
		as->slice_sum = as->distinct && as->outer.nkeys == 0;
		if (as->slice_sum && as->nspecs > TAGG_SLICE_COUNTS)
			elog(ERROR, "TesseraAgg: too many counts to add up across slices");
	}
}

static void
tagg_shutdown(CustomScanState *node)
{
	if (((TesseraAggState *) node)->mode != TAGG_FINAL)
		TesseraScanShutdown(node);
}

static void
tagg_end(CustomScanState *node)
{
	TesseraAggState *as = (TesseraAggState *) node;
	ListCell   *lc;

	if (as->source_state != NULL)
		as->source->end(as->source_state);
	as->source_state = NULL;

	TesseraSpillEnd(&((TesseraAggState *) node)->spill);
	/* the final node's Gather, or a star join's dimensions */
	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
	TesseraScanEnd(node);
}

/* Forget every group and result. */
static void
tagg_reset(TesseraAggState *as)
{
	TesseraGroupsReset(&as->groups, as->groups.nkeys > 0 ? 256 : 1);
	TesseraGroupsPresize(&as->groups, as->est_groups);
	as->groups.limit = as->group_limit;
	if (as->memo_building)
		TesseraGroupsReserve(&as->groups, as->est_groups);
	as->spill.est_groups = as->est_groups;
	if (as->fold != &as->groups)
		TesseraGroupsReset(as->fold, as->fold->nkeys > 0 ? 256 : 1);
	as->ok = NULL;
	as->ok_cap = 0;
	as->computed = false;
	as->groups_done = false;
	as->next = 0;
}

/* groups a table that hardly folds rows holds between spills */

/*
 * Should the groups spill now?  Past hash_mem (vector/spill.c); and where
 * the table that first filled hash_mem had folded fewer than 5 rows in 4
 * into its groups (rows >= 0: this batch's rows, known), at every
 * TESSERA_SPILL_WINDOW groups after that: nearly every row is a group of its
 * own and is written out anyway, and a table of that size stays in cache
 * while one of hash_mem does not (ClickBench's 10M WatchID, ClientIP
 * groups, one row each: 3.56 -> 3.05 s).  Decided on the full table, not a
 * first window: `GROUP BY UserID, SearchPhrase` folds 10M rows into 2.7M
 * groups over the whole table but hardly within 65,536 of them, and spilled
 * 9.5M rows instead of 4.4M.
 */
static bool
tagg_should_spill(TesseraAggState *as, int rows)
{
	TesseraGroups *g = &as->groups;

	/*
	 * (A full table of limited groups makes none and interns nothing more:
	 * it does not spill, since rows of its groups would then be left out.)
	 */
	if (g->nkeys == 0 || g->ngroups <= 1 || (g->limit > 0 && g->ngroups >= g->limit))
		return false;
	if (rows >= 0)
		as->spill.rows_since += rows;
	if (MemoryContextMemAllocated(as->cxt, true) > get_hash_memory_limit())
	{
		if (as->spill.npart == 0)
			as->spill.window = rows >= 0 &&
				as->spill.rows_since < (uint64) g->ngroups * 5 / 4;
		return true;
	}
	return as->spill.window && g->ngroups >= TESSERA_SPILL_WINDOW;
}

/* Bounded memory: past hash_mem the groups spill (vector/spill.c). */
static void
tagg_check_memory(TesseraAggState *as, int rows)
{
	if (tagg_should_spill(as, rows))
	{
		/* a memo that does not fit is given up, not spilled */
		if (as->memo_building)
		{
			as->memo_failed = true;
			return;
		}
		/*
		 * Spilled groups would be merged with rows a full table left out:
		 * past hash_mem before its limit, the table has no limit (no row
		 * was left out yet).
		 */
		as->groups.limit = 0;
		TesseraSpillGroups(&as->spill, &as->groups, as->specs,
						   as->ts.css.ss.ps.state->es_query_cxt, as->vx_cxt);
		as->ok = NULL;
		as->ok_cap = 0;
	}
}

/*
 * Row-group filter of a TesseraAgg that computes only count(*), with no
 * qual: a row group whose every row the snapshot sees -- a stripe of
 * another transaction, nothing folded, no row with a state (deleted,
 * locked) -- is counted from its row count and not read at all.  A delta
 * stripe of one row group has that count in its catalog row, so its bytes
 * are not even fetched: a table with a fresh delta counts as fast as a
 * compacted one.
 */
static bool
tagg_count_rg_filter(void *arg, TesseraReader *r, int stripe, int rg)
{
	TesseraAggState *as = arg;
	TesseraScanStripe *ss = &r->stripes[stripe];
	uint64		first;
	uint64		n;

	if (ss->meta.own || (ss->meta.flags & TESSERA_STRIPE_FOLDED))
		return true;
	if (ss->meta.flags & TESSERA_STRIPE_DELTA)
	{
		if (ss->meta.n_row_groups != 1)
			return true;
		first = ss->meta.first_rownum;
		n = ss->meta.row_count;
	}
	else
	{
		TesseraStripeDir *dir = TesseraReaderDir(r, stripe);

		first = dir->rgs[rg].first_rownum;
		n = dir->rgs[rg].row_count;
	}
	if (TesseraAnyRowState(r->rel, first, n))
		return true;
	for (int k = 0; k < as->nspecs; k++)
		TesseraGroupState(&as->groups, 0, k)->count += n;
	as->metadata_answers++;
	return false;
}

/* Is every aggregate count(*), with no GROUP BY, FILTER or qual? */
static bool
tagg_count_only(TesseraAggState *as)
{
	if (as->groups.nkeys > 0 || as->ts.skip != NIL || as->ts.nvquals > 0 ||
		as->ts.css.ss.ps.qual != NULL || as->star.ndims > 0 || as->row_quals.n > 0)
		return false;
	for (int k = 0; k < as->nspecs; k++)
		if (as->specs[k].kind != TAGG_COUNT_STAR || as->specs[k].nfq > 0)
			return false;
	return as->nspecs > 0;
}

/*
 * Quals evaluated row by row on the rows still counted: the table's quals
 * with no vector form, then a star join's filters across dimensions (on
 * the rows the probes kept: PostgreSQL's join filter, on the same rows).
 * A row stays if the qual (one AND) is true; rows not counted are not
 * evaluated.  Returns the rows it removed.
 */
static uint64
tagg_row_filter(TesseraAggState *as, TesseraComputed *f, TesseraBatch *b, bool *mask, int n)
{
	uint64		before = TesseraSelCount(mask, n);

	TesseraComputedBatch(f, b, mask, n, NULL, 0, as->buf_cxt);
	for (int j = 0; j < f->n; j++)
	{
		Datum	   *v = f->values[j];
		bool	   *isnull = f->nulls[j];

		for (int i = 0; i < n; i++)
			mask[i] = mask[i] && !isnull[i] && DatumGetBool(v[i]);
	}
	return before - TesseraSelCount(mask, n);
}

/*
 * The rows of the batch to count: the filter's selection, less deleted
 * rows (NULL: all), less those a star join finds no match for.
 */
static const bool *
tagg_counted_rows(TesseraAggState *as, TesseraBatch *b, const bool *sel)
{
	int			n = b->nrows;
	bool	   *mask;

	as->superset = NULL;
	if (b->deleted == NULL && as->star.ndims == 0 && as->row_quals.n == 0 &&
		!(as->memo_building && as->memo_domain != NULL))
		return sel;
	if (as->ok_cap < n || as->ok == NULL)
	{
		as->ok_cap = Max(Max(n, 1024), as->ok_cap);
		as->ok = MemoryContextAlloc(as->buf_cxt, as->ok_cap);
		as->again = as->star.counting ? MemoryContextAlloc(as->buf_cxt, as->ok_cap) : NULL;
	}
	mask = as->ok;
	if (b->deleted == NULL)
	{
		if (sel == NULL)
			memset(mask, true, n);
		else
			memcpy(mask, sel, n);
	}
	else if (sel == NULL)
		for (int i = 0; i < n; i++)
			mask[i] = !b->deleted[i];
	else
		for (int i = 0; i < n; i++)
			mask[i] = sel[i] & !b->deleted[i];
	/*
	 * The table's quals on the rows that join (the probe is cheaper), but
	 * before a left join's probe marks the dimension rows joined.
	 */
	if (as->row_quals.n > 0 && as->star.left)
		as->rows_removed_by_quals += tagg_row_filter(as, &as->row_quals, b, mask, n);
	if (as->star.ndims > 0)
	{
		TesseraStarProbe(&as->star, b, mask, n, &as->comp, as->buf_cxt);
		/* (the quals below only clear rows) */
		as->superset = as->star.listed;
		as->nsuperset = as->star.nlisted;
	}
	if (as->row_quals.n > 0 && !as->star.left)
		as->rows_removed_by_quals += tagg_row_filter(as, &as->row_quals, b, mask, n);
	if (as->star_filters.n > 0)
		as->star.rows_removed += tagg_row_filter(as, &as->star_filters, b, mask, n);
	if (as->memo_building && as->memo_domain != NULL)
	{
		TAggKey    *key = &as->memo_groups.gkeys[as->memo_domain_key];

		TesseraStarDimFilter(as->memo_domain, b, key->attidx, key->typid, mask, n);
	}
	return mask;
}

/*
 * Fold the batch's counted rows (sel: the vector quals' selection).  A row
 * a counted star join (STAR_COUNT) joins to w rows is folded w times: the
 * batch is folded again for the rows that join a second row, a third, and
 * so on -- at most STAR_COUNT_MAX_REPEAT times where the statistics held.
 * Every aggregate, FILTER and count(DISTINCT) then sees each joined row
 * as PostgreSQL's join would give it.
 */
static void
tagg_fold(TesseraAggState *as, TesseraBatch *b, const bool *sel)
{
	int			n = b->nrows;
	const bool *ok = tagg_counted_rows(as, b, sel);
	const int64 *w = as->star.weight;

	TesseraAggBatch(as, b, ok, n);
	for (int64 k = 2; as->star.counting && k <= as->star.max_weight; k++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < n; i++)
			as->again[i] = ok[i] & (w[i] >= k);
		TesseraAggBatch(as, b, as->again, n);
	}
}

/* FILTER values, in the filter context TesseraFiltersEval just reset */
static void
tagg_eval_filters(TesseraAggState *as)
{
	TesseraScanState *ts = &as->ts;
	MemoryContext old = MemoryContextSwitchTo(ts->filter_cxt);

	for (int k = 0; k < as->nspecs; k++)
		for (int q = 0; q < as->specs[k].nfq; q++)
			TesseraVecQualEval(&as->specs[k].fq[q], ts->css.ss.ps.ps_ExprContext);
	MemoryContextSwitchTo(old);
}

/*
 * Serial and partial, over a foreign table: fold every batch its source
 * loads (in a parallel plan, the units the shared state hands this
 * process).  The source skips what its own statistics rule out; the vector
 * quals select the rows.
 */
static void
tagg_compute_source(TesseraAggState *as)
{
	TesseraScanState *ts = &as->ts;
	TesseraBatch *b = &as->source_reader->batch;
	uint64		batches = 0;

	TesseraFiltersEval(ts);
	tagg_eval_filters(as);
	tagg_reset(as);
	as->metadata_answers = 0;
	while (as->source->next(as->source_state))
	{
		const bool *sel = TesseraFilterBatch(ts, b);

		CHECK_FOR_INTERRUPTS();
		batches++;
		if (b->nrows == 0)
			continue;
		tagg_fold(as, b, sel);
		tagg_check_memory(as, b->nrows);
	}
	TesseraSpillFinish(&as->spill, &as->groups, as->specs, as->ts.css.ss.ps.state->es_query_cxt,
					   as->vx_cxt);
	ts->rgs_read = batches;
	as->computed = true;
}

/* Serial and partial: scan the table, fold every batch. */
static void
tagg_compute(TesseraAggState *as)
{
	TesseraScanState *ts = &as->ts;
	ScanState  *ss = &as->ts.css.ss;
	TableScanDesc scan = ss->ss_currentScanDesc;
	TesseraBatch *b;
	const bool *sel;
	uint64		batches = 0;
	uint64		rgs_before;

	if (as->source != NULL)
	{
		tagg_compute_source(as);
		return;
	}
	if (scan == NULL)
	{
		scan = table_beginscan(ss->ss_currentRelation, ss->ps.state->es_snapshot, 0, NULL);
		ss->ss_currentScanDesc = scan;
	}
	if (tagg_count_only(as))
		TesseraScanSetFilters(scan, tagg_count_rg_filter, NULL, as);
	else
		TesseraScanSetFilters(scan, ts->skip != NIL || ts->rg_prune != NULL ?
							  TesseraRowGroupMayMatch : NULL,
							  ts->nvquals > 0 ? TesseraFilterBatch : NULL, ts);
	TesseraFiltersEval(ts);
	tagg_eval_filters(as);
	(void) TesseraAggHeavyStart(as);
	tagg_reset(as);
	/* (a sliced node's counts add up over its slices) */
	rgs_before = as->slices_done > 1 ? ts->rgs_read : 0;
	if (as->slices_done <= 1)
		as->metadata_answers = 0;

	for (;;)
	{
		while (TesseraScanNextBatch(scan, &b, &sel))
		{
			batches++;
			tagg_fold(as, b, sel);
			if (as->heavy_phase != TAGG_HEAVY_SKETCH)
				tagg_check_memory(as, as->nslices > 1 ? as->slice_rows : b->nrows);
			if ((as->memo_failed && as->memo_building) || as->heavy_restart)
				break;
		}
		/* a top-N of counts' next pass: the rows of its heavy cells, or all */
		if (!TesseraAggHeavyNext(as))
			break;
		TesseraSpillEnd(&as->spill);
		tagg_reset(as);
		table_rescan(scan, NULL);
	}
	TesseraSpillFinish(&as->spill, &as->groups, as->specs, ss->ps.state->es_query_cxt,
					   as->vx_cxt);
	/* row groups with visible rows actually read */
	ts->rgs_read = rgs_before + batches;
	as->computed = true;
}

/*
 * Build the memo: the aggregates over the rows the other quals keep,
 * grouped by the memo's columns -- tagg_compute with the memo's groups
 * and without the `column = parameter` quals.  Given up (memo_failed) if
 * the groups outgrow hash_mem.
 */
static void
tagg_memo_build(TesseraAggState *as)
{
	TesseraScanState *ts = &as->ts;
	List	   *vec_pos = list_nth(as->memo, TAGG_MEMO_VECTOR);
	List	   *skip_pos = list_nth(as->memo, TAGG_MEMO_SKIP);
	List	   *skip = ts->skip;
	VecQual    *vquals = ts->vquals;
	int			nvquals = ts->nvquals;
	TesseraGroups plain = as->groups;
	MemoryContext plain_cxt = as->cxt;
	ListCell   *lc;

	ts->skip = NIL;
	foreach(lc, skip)
		if (!list_member_int(skip_pos, foreach_current_index(lc)))
			ts->skip = lappend(ts->skip, lfirst(lc));
	ts->vquals = palloc(sizeof(VecQual) * Max(nvquals, 1));
	ts->nvquals = 0;
	for (int i = 0; i < nvquals; i++)
		if (!list_member_int(vec_pos, vquals[i].plan_pos))
			ts->vquals[ts->nvquals++] = vquals[i];
	as->groups = as->memo_groups;
	as->cxt = as->memo_cxt;
	as->memo_building = true;
	/* (over a dimension's keys: at most a group each, for one column) */
	as->est_groups = intVal(list_nth(as->memo, TAGG_MEMO_GROUPS));
	if (as->memo_domain != NULL && as->memo_groups.nkeys == 1)
		as->est_groups = Min(as->est_groups, Max(as->memo_domain->nrows, 1));

	tagg_compute(as);

	as->memo_building = false;
	as->memo_groups = as->groups;
	as->groups = plain;
	as->cxt = plain_cxt;
	as->est_groups = 1;
	ts->skip = skip;
	ts->vquals = vquals;
	ts->nvquals = nvquals;
	as->computed = false;
	if (as->memo_failed)
	{
		MemoryContextReset(as->memo_cxt);
		table_rescan(as->ts.css.ss.ss_currentScanDesc, NULL);
	}
	else
		as->memo_built = true;
}

/*
 * Answer this run from the memo, building it first if the runs so far
 * have read as many row groups as one pass over the table reads (so that
 * building it costs at most what the runs have cost: a subquery whose
 * quals pick a row group or two per run is not memoized until it has run
 * many times), or, its keys known to be a dimension's, would once run for
 * each.  False if the run must scan.
 */
static bool
tagg_memo_answer(TesseraAggState *as)
{
	ExprContext *econtext = as->ts.css.ss.ps.ps_ExprContext;
	int			nkeys = as->memo_groups.nkeys;
	Datum		values[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	bool		anynull = false;

	if (as->memo_failed)
		return false;
	if (!as->memo_built)
	{
		/*
		 * (over a dimension's keys, once the runs for as many keys as it has
		 * would read that much: one run for each is to be expected)
		 */
		if (as->memo_rgs_table == 0 ||
			(as->memo_rgs < as->memo_rgs_table &&
			 (as->memo_domain == NULL ||
			  as->memo_rgs * (uint64) Max(as->memo_domain->nrows, 1) < as->memo_rgs_table)))
			return false;
		tagg_memo_build(as);
		if (as->memo_failed)
			return false;
	}
	for (int j = 0; j < nkeys; j++)
	{
		values[j] = ExecEvalExprSwitchContext(as->memo_params[j], econtext, &nulls[j]);
		anynull |= nulls[j];
	}
	/* a key the memo was not built for (another caller's): scanned */
	if (as->memo_domain != NULL && !anynull &&
		!TesseraStarDimHasKey(as->memo_domain, values[as->memo_domain_key],
							  as->memo_domain_type))
		return false;
	/*
	 * `column = NULL` keeps no row: the empty group, as a miss.  A string
	 * key is looked up by its bytes, interned: a key the table lacks makes
	 * a group of no rows, the same answer.
	 */
	if (anynull)
		as->memo_group = -1;
	else if (as->memo_strings)
		as->memo_group = TesseraGroupsLookupDatums(&as->memo_groups, values, nulls);
	else
		as->memo_group = TesseraGroupsFindInts(&as->memo_groups, values, nulls);
	if (as->memo_group < 0)
		tagg_reset(as);
	as->memo_answer = true;
	as->memo_lookups++;
	as->computed = true;
	as->next = 0;
	return true;
}

/*
 * TesseraAggMemoDomain
 *		Tell the TesseraAgg ps (if it is one with a memo) that its parameter
 *		paramid, of type `type`, will be a key of the star join dimension dim
 *		whenever the caller runs it: a join above runs the subquery only for
 *		rows that joined dim on that key (join_node.c).  The memo is then
 *		built over the rows of those keys only (TPC-H q17: the 6,088 rows of
 *		the 204 parts the outer query keeps, not 200,000 groups of 6M rows)
 *		-- again if dim was rebuilt.  Runs for other keys (a caller that
 *		shares the plan) scan the table, as without a memo.
 */
void
TesseraAggMemoDomain(PlanState *ps, int paramid, TesseraStarDim *dim, Oid type)
{
	TesseraAggState *as = (TesseraAggState *) ps;
	ListCell   *lc;

	if (!IsA(ps, CustomScanState) || ((CustomScanState *) ps)->methods != &tagg_exec_methods ||
		as->memo == NIL || as->memo_failed ||
		(type == DATEOID) != (dim->key_type == DATEOID))
		return;
	foreach(lc, list_nth(as->memo, TAGG_MEMO_PARAMS))
	{
		Param	   *param = lfirst(lc);
		TAggKey    *key = &as->memo_groups.gkeys[foreach_current_index(lc)];

		if (!IsA(param, Param) || param->paramkind != PARAM_EXEC || param->paramid != paramid ||
			key->kind != TAGG_KEY_INT || param->paramtype != type ||
			(key->typid == DATEOID) != (type == DATEOID) ||
			!(key->typid == DATEOID || key->typid == INT2OID || key->typid == INT4OID ||
			  key->typid == INT8OID))
			continue;
		if (as->memo_built)
		{
			/* built over another set of keys (the dimension was read again) */
			MemoryContextReset(as->memo_cxt);
			as->memo_built = false;
		}
		as->memo_domain = dim;
		as->memo_domain_key = foreach_current_index(lc);
		as->memo_domain_type = type;
		return;
	}
}

/* A run's row from the memo: its group's results, or those over no rows. */
static void
tagg_memo_tuple(TesseraAggState *as, TupleTableSlot *slot, ExprContext *econtext)
{
	TesseraGroups *g = as->memo_group >= 0 ? &as->memo_groups : &as->groups;
	int			group = Max(as->memo_group, 0);
	MemoryContext old;

	ExecClearTuple(slot);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	for (int k = 0; k < as->nspecs; k++)
	{
		int			from = as->specs[k].same_as >= 0 ? as->specs[k].same_as : k;

		slot->tts_values[k] = TesseraAggResult(&as->specs[k], TesseraGroupState(g, group, from),
											   &slot->tts_isnull[k]);
	}
	MemoryContextSwitchTo(old);
	ExecStoreVirtualTuple(slot);
}

/* Final: merge the partial nodes' rows, each a group's keys and states. */
static void
tagg_merge_input(TesseraAggState *as)
{
	PlanState  *child = linitial(as->ts.css.custom_ps);
	ExprContext *econtext = as->ts.css.ss.ps.ps_ExprContext;
	TesseraGroups *g = &as->groups;
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	uint64		nrows = 0;

	tagg_reset(as);
	for (;;)
	{
		TupleTableSlot *in = ExecProcNode(child);
		MemoryContext old;
		int			group;

		if (TupIsNull(in))
			break;
		ResetExprContext(econtext);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		TesseraGroupsKeysOf(g, in, keys, nulls, false);
		group = TesseraGroupsLookup(g, keys, nulls);
		slot_getallattrs(in);
		if (in->tts_isnull[g->nkeys])
			elog(ERROR, "TesseraAgg: partial aggregate states missing");
		TesseraAggMergeRow(as->specs, g->nspecs, TesseraGroupState(g, group, 0),
						   in->tts_values[g->nkeys], g->cxt);
		MemoryContextSwitchTo(old);
		if ((++nrows & 255) == 0)
			tagg_check_memory(as, -1);
	}
	TesseraSpillFinish(&as->spill, g, as->specs, as->ts.css.ss.ps.state->es_query_cxt,
					   as->vx_cxt);
	as->computed = true;
}

/*
 * count(DISTINCT col): fold the groups keyed on (GROUP BY columns, col)
 * into groups keyed on the GROUP BY columns alone.  Every other
 * aggregate's states combine as partial states do; count(DISTINCT) counts
 * the inner groups whose col is not NULL.
 */
static void
tagg_rollup(TesseraAggState *as)
{
	TesseraGroups *in = &as->groups;
	TesseraGroups *out = &as->outer;
	int			nouter = out->nkeys;
	Datum		values[INDEX_MAX_KEYS + 1];
	bool		isnull[INDEX_MAX_KEYS + 1];
	int			group;
	uint64		n = 0;
	MemoryContext old;

	/* (folded into already, when the others' states are there) */
	if (as->fold != out)
		TesseraGroupsReset(out, nouter > 0 ? 256 : 1);
	for (;;)
	{
		int			og;

		if (TesseraSpillActive(&as->spill))
		{
			if (!TesseraSpillNextGroup(&as->spill, in, as->specs, &group))
				break;
		}
		else if (as->next >= in->ngroups)
			break;
		else
			group = as->next++;
		/* (a numeric key's Datum is made for the lookup: per-tuple memory) */
		ResetExprContext(as->ts.css.ss.ps.ps_ExprContext);
		old = MemoryContextSwitchTo(as->ts.css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
		TesseraGroupsKeyDatums(in, group, values, isnull, false);
		og = TesseraGroupsLookupDatums(out, values, isnull);
		MemoryContextSwitchTo(old);
		if (as->fold == out)
		{
			for (int k = 0; k < as->nspecs; k++)
				if (as->specs[k].kind == TAGG_COUNT_DISTINCT && !isnull[nouter])
					TesseraGroupState(out, og, k)->count++;
		}
		else
			TesseraAggCombine(as->specs, as->nspecs, TesseraGroupState(out, og, 0),
							  TesseraGroupState(in, group, 0), !isnull[nouter], out->cxt);
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	as->next = 0;
}

/* The scan tuple of a group: its keys, then its results or (partial) its states. */
static void
tagg_group_tuple(TesseraAggState *as, TesseraGroups *g, int group, TupleTableSlot *slot,
				 ExprContext *econtext)
{
	MemoryContext old;

	ExecClearTuple(slot);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	TesseraGroupsKeyDatums(g, group, slot->tts_values, slot->tts_isnull, false);
	if (as->mode == TAGG_PARTIAL)
	{
		slot->tts_values[g->nkeys] = TesseraAggSerialize(as->specs, g->nspecs,
														 TesseraGroupState(g, group, 0));
		slot->tts_isnull[g->nkeys] = false;
	}
	else
	{
		for (int k = 0; k < as->nspecs; k++)
		{
			int			from = as->specs[k].same_as >= 0 ? as->specs[k].same_as : k;

			slot->tts_values[g->nkeys + k] =
				TesseraAggResult(&as->specs[k], TesseraGroupState(g, group, from),
								 &slot->tts_isnull[g->nkeys + k]);
		}
	}
	MemoryContextSwitchTo(old);
	ExecStoreVirtualTuple(slot);
}

/*
 * A left join's next dimension row that no row of the table joined, as a
 * group of its own: the aggregates over its null-extended row.  False when
 * there are no more.
 */
static bool
tagg_unmatched_tuple(TesseraAggState *as, TupleTableSlot *slot)
{
	int			nkeys = as->star.nleft_keys;

	if (!as->star.left)
		return false;
	ExecClearTuple(slot);
	if (!TesseraStarNextUnmatched(&as->star, slot->tts_values, slot->tts_isnull))
		return false;
	for (int k = 0; k < as->nspecs; k++)
	{
		slot->tts_values[nkeys + k] = Int64GetDatum(as->star.left_aggs[k] == STAR_LEFT_ONE);
		slot->tts_isnull[nkeys + k] = as->star.left_aggs[k] == STAR_LEFT_NULL;
	}
	ExecStoreVirtualTuple(slot);
	return true;
}

static TupleTableSlot *
tagg_exec(CustomScanState *node)
{
	TesseraAggState *as = (TesseraAggState *) node;
	TesseraGroups *g = &as->groups;
	ScanState  *ss = &node->ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	int			group;

	/* sliced: the first slice, if any is left */
	if (as->nslices > 1 && as->slices_done == 0 && !TesseraAggTakeSlice(as))
		return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
next_slice:
	if (!as->computed)
	{
		if (as->mode == TAGG_FINAL)
			tagg_merge_input(as);
		else if (as->memo == NIL || !tagg_memo_answer(as))
		{
			uint64		skipped = as->ts.rgs_skipped;

			tagg_compute(as);
			/* what the runs cost, for the memo */
			as->memo_rgs += as->ts.rgs_read;
			as->memo_rgs_table = Max(as->memo_rgs_table,
									 as->ts.rgs_read + as->ts.rgs_skipped - skipped);
		}
		if (as->distinct && as->mode != TAGG_PARTIAL)
			tagg_rollup(as);
		TesseraAggTopNBound(as, as->distinct && as->mode != TAGG_PARTIAL ? &as->outer : g);
		/* a slice's counts: added up, emitted by the last slice's process */
		if (as->slice_sum)
		{
			TesseraAggSliceCounted(as);
			if (!as->slice_emitter)
				as->next = as->outer.ngroups;
		}
	}
	if (as->memo_answer)
	{
		ResetExprContext(econtext);
		if (as->next++ > 0)
			return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
		tagg_memo_tuple(as, slot, econtext);
		econtext->ecxt_scantuple = slot;
		if (ss->ps.ps_ProjInfo == NULL)
			return slot;
		return ExecProject(ss->ps.ps_ProjInfo);
	}
	for (;;)
	{
		group = -1;
		if (as->groups_done)
			;
		else if (as->distinct && as->mode != TAGG_PARTIAL)
		{
			/* the rolled-up groups */
			g = &as->outer;
			if (as->next < g->ngroups)
				group = as->next++;
		}
		else if (TesseraSpillActive(&as->spill))
		{
			if (!TesseraSpillNextGroup(&as->spill, g, as->specs, &group))
				group = -1;
		}
		else if (as->next < g->ngroups)
			group = as->next++;

		if (group < 0 && as->nslices > 1)
		{
			/* sliced: this slice's groups are out; the next one, read afresh */
			if (!TesseraAggTakeSlice(as))
				return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
			table_rescan(ss->ss_currentScanDesc, NULL);
			TesseraSpillEnd(&as->spill);
			as->computed = false;
			as->groups_done = false;
			as->next = 0;
			g = &as->groups;
			goto next_slice;
		}
		if (group >= 0 && TesseraAggTopNLeavesOut(as, g, group))
			continue;
		ResetExprContext(econtext);
		if (group >= 0)
			tagg_group_tuple(as, g, group, slot, econtext);
		else
		{
			/* then a left join's dimension rows without a match */
			as->groups_done = true;
			if (!tagg_unmatched_tuple(as, slot))
				return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
		}
		econtext->ecxt_scantuple = slot;

		/* HAVING */
		if (ss->ps.qual != NULL && !ExecQual(ss->ps.qual, econtext))
		{
			InstrCountFiltered1(node, 1);
			continue;
		}
		if (ss->ps.ps_ProjInfo == NULL)
			return slot;
		return ExecProject(ss->ps.ps_ProjInfo);
	}
}

static void
tagg_rescan(CustomScanState *node)
{
	TesseraAggState *as = (TesseraAggState *) node;

	if (node->ss.ss_currentScanDesc)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	if (as->source_state != NULL)
		as->source->rescan(as->source_state);
	if (as->mode == TAGG_FINAL && ((PlanState *) linitial(node->custom_ps))->chgParam == NULL)
		ExecReScan(linitial(node->custom_ps));
	if (as->star.ndims > 0)
		(void) TesseraStarRescan(&as->star, &node->ss.ps);
	/* (their memos hold results under the old parameters) */
	TesseraComputedRescan(&as->comp);
	TesseraComputedRescan(&as->star_filters);
	TesseraComputedRescan(&as->row_quals);
	as->computed = false;
	as->groups_done = false;
	as->next = 0;
	as->memo_answer = false;
	TesseraSpillEnd(&as->spill);
	/* (Gather's rescan sets the shared slices back too) */
	as->slices_done = 0;
	as->local_slice = 0;
	as->local_finished = 0;
	memset(as->local_counts, 0, sizeof(as->local_counts));
	as->slice_emitter = false;
}

/*
 * Parallel: the partial node shares TesseraScan's shared state (byte
 * counters, then the table's parallel scan), or, over a foreign table, the
 * counters and then its source's shared state.
 */
/* _PG_init: the node's plan methods, by name for plans read back (parallel workers). */
void
TesseraRegisterAggNode(void)
{
	RegisterCustomScanMethods(&TesseraAggPlanMethods);
}
