/*-------------------------------------------------------------------------
 *
 * join_node.c
 *	  TesseraJoin's executor: a tessera table scanned as column vectors,
 *	  joined to dimension relations by probing their keys, a row formed
 *	  only for each row that joins.
 *
 * NOTES
 *	  The planner (planner/join_path.c) hands a join of the table F with
 *	  dimensions D1..Dn, each joined on its unique key, as a plan over F
 *	  whose custom_plans are the dimensions' plans.  The dimensions are
 *	  read and keyed once (star.c, as TesseraAgg's star join does); each
 *	  batch of F is filtered by its vector quals, its key columns looked up
 *	  in every dimension, and for each row that joins the scan tuple is
 *	  filled from F's decoded columns and the matched dimension rows.  The
 *	  plan qual (F's other quals, then the clauses across dimensions) and
 *	  the projection are ExecScan's.
 *
 *	  Parallel: F's scan is shared through the table AM's parallel scan
 *	  (TesseraScan's DSM parts); the dimensions' tables are built by one
 *	  process and read by all (star_shared.c).
 *
 * IDENTIFICATION
 *	  src/executor/join_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "rewrite/rewriteManip.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "tessera/reader.h"
#include "tessera/tableam.h"
#include "nodes.h"

typedef struct TesseraJoinState
{
	TesseraScanState ts;		/* the table's scan and filters; first */
	TesseraStar star;			/* the dimensions */
	TesseraComputed ext;		/* only its extra columns, which the probes fill */
	int			nsrc;
	int		   *src;			/* per scan tuple column (TJOIN_PRIVATE_SOURCES) */
	int			natts;
	MemoryContext buf_cxt;		/* buffers reused from batch to batch */
	bool	   *ok;				/* per batch: rows that join */
	int		   *rows;			/* ... listed */
	int			cap;
	int			nrows;
	int			pos;			/* the next of them to hand up */
	TesseraBatch *batch;
	bool		domains_told;	/* the dimensions' keys told to subqueries' memos */
} TesseraJoinState;

static Node *tjoin_create_state(CustomScan *cscan);
static void tjoin_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *tjoin_exec(CustomScanState *node);
static void tjoin_end(CustomScanState *node);
static void tjoin_rescan(CustomScanState *node);
static void tjoin_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods TesseraJoinPlanMethods = {
	.CustomName = "TesseraJoin",
	.CreateCustomScanState = tjoin_create_state,
};

static void tjoin_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void tjoin_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void tjoin_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);

static const CustomExecMethods tjoin_exec_methods = {
	.CustomName = "TesseraJoin",
	.BeginCustomScan = tjoin_begin,
	.ExecCustomScan = tjoin_exec,
	.EndCustomScan = tjoin_end,
	.ReScanCustomScan = tjoin_rescan,
	.EstimateDSMCustomScan = TesseraScanEstimateDSM,
	.InitializeDSMCustomScan = tjoin_init_dsm,
	.ReInitializeDSMCustomScan = tjoin_reinit_dsm,
	.InitializeWorkerCustomScan = tjoin_init_worker,
	.ShutdownCustomScan = TesseraScanShutdown,
	.ExplainCustomScan = tjoin_explain,
};

static Node *
tjoin_create_state(CustomScan *cscan)
{
	TesseraJoinState *js = (TesseraJoinState *) newNode(sizeof(TesseraJoinState),
														T_CustomScanState);

	js->ts.css.methods = &tjoin_exec_methods;
	return (Node *) js;
}

static void
tjoin_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraJoinState *js = (TesseraJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	TupleDesc	reldesc = RelationGetDescr(node->ss.ss_currentRelation);
	ListCell   *lc;

	js->natts = reldesc->natts;
	TesseraFiltersInit(&js->ts, list_nth(priv, TJOIN_PRIVATE_SKIP_QUALS),
					   list_nth(priv, TJOIN_PRIVATE_SKIP),
					   list_nth(priv, TJOIN_PRIVATE_VECTOR_QUALS),
					   list_nth(priv, TJOIN_PRIVATE_VECTOR));
	js->ts.needed_list = list_nth(priv, TJOIN_PRIVATE_NEEDED);
	js->ts.needed = palloc0(sizeof(bool) * Max(js->natts, 1));
	foreach(lc, js->ts.needed_list)
		js->ts.needed[lfirst_int(lc) - 1] = true;

	js->nsrc = list_length(list_nth(priv, TJOIN_PRIVATE_SOURCES));
	js->src = palloc(sizeof(int) * Max(js->nsrc, 1));
	foreach(lc, list_nth(priv, TJOIN_PRIVATE_SOURCES))
		js->src[foreach_current_index(lc)] = lfirst_int(lc);

	foreach(lc, cscan->custom_plans)
		node->custom_ps = lappend(node->custom_ps, ExecInitNode(lfirst(lc), estate, eflags));
	(void) TesseraStarInit(&js->star, list_nth(priv, TJOIN_PRIVATE_STAR), node->custom_ps,
						   reldesc);
	js->ext.natts_rel = js->natts;
	/* row groups whose keys join nothing are not read */
	js->ts.rg_prune = TesseraStarRowGroupMayMatch;
	js->ts.rg_prune_arg = &js->star;
	js->ext.ext_values = palloc0(sizeof(Datum *) * Max(js->star.next, 1));
	js->ext.ext_nulls = palloc0(sizeof(bool *) * Max(js->star.next, 1));
	js->buf_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraJoin buffers",
										ALLOCSET_DEFAULT_SIZES);
}

/*
 * The dimension whose key every joined row's scan tuple column `col` (a
 * column of the table, or an extra column) holds, or NULL.
 */
static TesseraStarDim *
tjoin_key_dim(TesseraJoinState *js, int col)
{
	int			src = js->src[col];

	for (int d = 0; d < js->star.ndims; d++)
	{
		TesseraStarDim *dim = &js->star.dims[d];

		if (dim->fact_att2 >= 0 || dim->ne_pos >= 0)
			continue;
		/* the table's key column: the join keeps rows whose key the dimension holds */
		if (src < js->natts && src == dim->fact_att &&
			(dim->kind == STAR_INNER || dim->kind == STAR_SEMI || dim->kind == STAR_COUNT))
			return dim;
		/* the dimension's own key (a left join's is NULL where nothing matched) */
		if (src >= js->natts && (dim->kind == STAR_INNER || dim->kind == STAR_LEFT))
			for (int c = 0; c < dim->ncols; c++)
				if (dim->ext[c] == src - js->natts && dim->cols[c] == dim->key_pos)
					return dim;
	}
	return NULL;
}

/*
 * Tell the subqueries the plan qual runs which of their parameters are
 * keys of a dimension: TPC-H q17's `l_quantity < (SELECT 0.2 *
 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)` runs only
 * for the parts the join keeps, so a TesseraAgg answering it from a memo
 * needs those parts' groups only (agg_node.c, TesseraAggMemoDomain).
 * Once per build of the dimensions.
 */
static void
tjoin_tell_domains(TesseraJoinState *js)
{
	ListCell   *lc;

	js->domains_told = true;
	if (js->ts.css.ss.ps.subPlan == NIL)
		return;
	if (!js->star.built)
		TesseraStarBuild(&js->star);
	foreach(lc, js->ts.css.ss.ps.subPlan)
	{
		SubPlanState *sps = lfirst(lc);
		ListCell   *pc,
				   *ac;

		forboth(pc, sps->subplan->parParam, ac, sps->subplan->args)
		{
			Var		   *var = lfirst(ac);
			TesseraStarDim *dim;

			if (!IsA(var, Var) || var->varno != INDEX_VAR || var->varattno <= 0 ||
				var->varattno > js->nsrc)
				continue;
			dim = tjoin_key_dim(js, var->varattno - 1);
			if (dim != NULL)
				TesseraAggMemoDomain(sps->planstate, lfirst_int(pc), dim, var->vartype);
		}
	}
}

/* Join the next batch with rows to hand up: false at the end of the scan. */
static bool
tjoin_next_batch(TesseraJoinState *js)
{
	TableScanDesc scan = TesseraScanStart(&js->ts);
	TesseraBatch *b;
	const bool *sel;

	if (!js->domains_told)
		tjoin_tell_domains(js);
	while (TesseraScanNextBatch(scan, &b, &sel))
	{
		int			n = b->nrows;

		CHECK_FOR_INTERRUPTS();
		if (n == 0)
			continue;
		if (js->cap < n)
		{
			js->cap = Max(n, 1024);
			js->ok = MemoryContextAlloc(js->buf_cxt, js->cap);
			js->rows = MemoryContextAlloc(js->buf_cxt, sizeof(int) * js->cap);
		}
		if (sel == NULL)
			memset(js->ok, true, n);
		else
			memcpy(js->ok, sel, n);
		if (b->deleted != NULL)
			for (int i = 0; i < n; i++)
				js->ok[i] &= !b->deleted[i];
		TesseraStarProbe(&js->star, b, js->ok, n, &js->ext, js->buf_cxt);
		js->nrows = TesseraSelRows(js->ok, n, js->rows);
		js->pos = 0;
		js->batch = b;
		if (js->nrows > 0)
			return true;
	}
	js->batch = NULL;
	return false;
}

/* ExecScan's access method: the next joined row in the scan tuple. */
static TupleTableSlot *
tjoin_next(ScanState *ss)
{
	TesseraJoinState *js = (TesseraJoinState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	TesseraBatch *b;
	int			row;

	ExecClearTuple(slot);
	if (js->pos >= js->nrows && !tjoin_next_batch(js))
		return slot;
	b = js->batch;
	row = js->rows[js->pos++];
	for (int j = 0; j < js->nsrc; j++)
	{
		int			a = js->src[j];

		if (a >= js->natts)
		{
			slot->tts_values[j] = js->ext.ext_values[a - js->natts][row];
			slot->tts_isnull[j] = js->ext.ext_nulls[a - js->natts][row];
		}
		else
			slot->tts_values[j] = TesseraBatchDatum(b, a, row, &slot->tts_isnull[j]);
	}
	return ExecStoreVirtualTuple(slot);
}

/* No EvalPlanQual: the planner leaves queries with row locks to PostgreSQL. */
static bool
tjoin_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
tjoin_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, tjoin_next, tjoin_recheck);
}

static void
tjoin_end(CustomScanState *node)
{
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
	TesseraScanEnd(node);
}

static void
tjoin_rescan(CustomScanState *node)
{
	TesseraJoinState *js = (TesseraJoinState *) node;

	if (node->ss.ss_currentScanDesc)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	/* parameters may have changed */
	js->ts.values_ready = false;
	/* (the dimensions read again: their keys told again) */
	if (TesseraStarRescan(&js->star, &node->ss.ps))
		js->domains_told = false;
	js->nrows = js->pos = 0;
	js->batch = NULL;
	ExecScanReScan(&node->ss);
}

static void
tjoin_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	TesseraJoinState *js = (TesseraJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	int			offset = (int) cscan->scan.scanrelid -
		intVal(list_nth(cscan->custom_private, TJOIN_PRIVATE_RELID));
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List	   *keys = copyObject(list_nth(cscan->custom_private, TJOIN_PRIVATE_STAR_CLAUSES));
	ListCell   *lc;

	/* planned with the query's own range table indexes: shown as the plan's */
	OffsetVarNodes((Node *) keys, offset, 0);
	ExplainPropertyText("Join Cond",
						deparse_expression((Node *) make_ands_explicit(keys), context, true,
										   false), es);
	foreach(lc, list_make2(js->ts.skip_exprs, js->ts.vector_exprs))
	{
		List	   *quals = copyObject(lfirst(lc));

		if (quals == NIL)
			continue;
		OffsetVarNodes((Node *) quals, offset, 0);
		ExplainPropertyText(foreach_current_index(lc) == 0 ? "Row Group Filter" : "Vector Filter",
							deparse_expression((Node *) make_ands_explicit(quals), context,
											   es->verbose, false), es);
	}
	if (es->analyze && node->ss.ps.instrument)
	{
		if (js->ts.skip_exprs != NIL && !node->ss.ps.plan->parallel_aware)
			ExplainPropertyUInteger("Row Groups Read", NULL, js->ts.rgs_read, es);
		TesseraExplainFilterCounts(&node->ss.ps, true, js->ts.vector_exprs != NIL, es);
		/* (a parallel node's: the leader's share only) */
		ExplainPropertyUInteger("Rows Removed by Star Join", NULL, js->star.rows_removed, es);
		TesseraScanExplainBytes(&js->ts, es);
	}
}

/* Parallel: TesseraScan's shared scan, and the star join's tables built once (star_shared.c). */
static void
tjoin_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraJoinState *js = (TesseraJoinState *) node;

	TesseraScanInitDSM(node, pcxt, coordinate);
	((TscanShared *) coordinate)->star =
		TesseraStarInitShared(&js->star, node->ss.ps.state->es_query_dsa);
}

static void
tjoin_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraJoinState *js = (TesseraJoinState *) node;

	TesseraScanReInitDSM(node, pcxt, coordinate);
	TesseraStarReInitShared(&js->star);
}

static void
tjoin_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	TesseraJoinState *js = (TesseraJoinState *) node;

	TesseraScanInitWorker(node, toc, coordinate);
	TesseraStarAttachShared(&js->star, node->ss.ps.state->es_query_dsa,
							((TscanShared *) coordinate)->star);
}

/* _PG_init: the node's plan methods, by name for plans read back (parallel workers). */
void
TesseraRegisterJoinNode(void)
{
	RegisterCustomScanMethods(&TesseraJoinPlanMethods);
}
