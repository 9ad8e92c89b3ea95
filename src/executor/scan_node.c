/*-------------------------------------------------------------------------
 *
 * scan_node.c
 *	  TesseraScan's executor: a custom scan of a tessera table that decodes
 *	  only the columns the query uses, skips row groups by their summaries,
 *	  filters rows on decoded column vectors, and runs in parallel.
 *
 * NOTES
 *	  It drives the table AM's own scan (the same row-group walk,
 *	  visibility and parallel counter as a SeqScan) through the two filter
 *	  callbacks of filters.c, so there is one scan loop to get right.
 *
 *	  PostgreSQL 15 gives a custom scan a virtual scan slot, which would
 *	  decode every column of every row: the node swaps in tessera's lazy
 *	  slot and compiles its projection and quals for it.  With no plan qual
 *	  and a target list of plain columns, rows go from the decoded column
 *	  arrays straight into the result slot (the fast path).
 *
 *	  Parallel: the table AM's parallel scan hands out row groups from a
 *	  shared counter; the filters run in each participant.  Bytes read and
 *	  decompressed are the reader's counters: workers add theirs to
 *	  counters in the scan's shared memory when they shut down, and the
 *	  leader collects them in its own shutdown, which runs before the
 *	  Gather detaches.  TesseraAgg's partial node shares these parts.
 *
 * IDENTIFICATION
 *	  src/executor/scan_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "tessera/reader.h"
#include "tessera/shared_cache.h"
#include "tessera/slot.h"
#include "tessera/tableam.h"
#include "nodes.h"

static Node *tscan_create_state(CustomScan *cscan);
static void tscan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *tscan_exec(CustomScanState *node);
static void tscan_rescan(CustomScanState *node);
static void tscan_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods TesseraScanPlanMethods = {
	.CustomName = "TesseraScan",
	.CreateCustomScanState = tscan_create_state,
};

static const CustomExecMethods tscan_exec_methods = {
	.CustomName = "TesseraScan",
	.BeginCustomScan = tscan_begin,
	.ExecCustomScan = tscan_exec,
	.EndCustomScan = TesseraScanEnd,
	.ReScanCustomScan = tscan_rescan,
	.EstimateDSMCustomScan = TesseraScanEstimateDSM,
	.InitializeDSMCustomScan = TesseraScanInitDSM,
	.ReInitializeDSMCustomScan = TesseraScanReInitDSM,
	.InitializeWorkerCustomScan = TesseraScanInitWorker,
	.ShutdownCustomScan = TesseraScanShutdown,
	.ExplainCustomScan = tscan_explain,
};

static Node *
tscan_create_state(CustomScan *cscan)
{
	TesseraScanState *state = (TesseraScanState *) newNode(sizeof(TesseraScanState),
														  T_CustomScanState);

	state->css.methods = &tscan_exec_methods;
	return (Node *) state;
}

static void
tscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *skip_descs = list_nth(cscan->custom_private, TSCAN_PRIVATE_SKIP);
	List	   *vector_descs = list_nth(cscan->custom_private, TSCAN_PRIVATE_VECTOR);
	int			nskip = list_length(skip_descs);
	int			natts = RelationGetDescr(rel)->natts;
	ListCell   *lc;

	/*
	 * PostgreSQL 15 gives a custom scan a virtual scan slot, which would make
	 * us decode every column of every row: use tessera's lazy slot and
	 * compile the projection and quals for it.
	 */
	node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable,
												   RelationGetDescr(rel), &TTSOpsTessera);
	node->ss.ps.scanops = &TTSOpsTessera;
	node->ss.ps.scanopsfixed = true;
	node->ss.ps.scanopsset = true;
	ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);
	node->ss.ps.qual = ExecInitQual(cscan->scan.plan.qual, &node->ss.ps);

	/*
	 * Without a plan qual, and with an output of plain columns (the usual
	 * shape under an Agg or a join), rows go straight from the decoded
	 * column arrays into the result slot.
	 */
	if (node->ss.ps.qual == NULL && node->ss.ps.ps_ProjInfo != NULL)
	{
		List	   *tlist = cscan->scan.plan.targetlist;
		ListCell   *tl;

		ts->fast = true;
		ts->proj_att = palloc(sizeof(int) * Max(list_length(tlist), 1));
		foreach(tl, tlist)
		{
			TargetEntry *tle = lfirst_node(TargetEntry, tl);
			Var		   *var = (Var *) tle->expr;

			if (!IsA(var, Var) || var->varno != cscan->scan.scanrelid ||
				var->varattno <= 0 || var->varattno > RelationGetDescr(rel)->natts ||
				TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
			{
				ts->fast = false;
				break;
			}
			ts->proj_att[ts->nproj++] = var->varattno - 1;
		}
	}

	ts->needed_list = list_nth(cscan->custom_private, TSCAN_PRIVATE_NEEDED);
	ts->needed = palloc0(sizeof(bool) * Max(natts, 1));
	foreach(lc, ts->needed_list)
	{
		int			attnum = lfirst_int(lc);

		if (attnum >= 1 && attnum <= natts)
			ts->needed[attnum - 1] = true;
	}

	TesseraFiltersInit(ts, list_copy_head(cscan->custom_exprs, nskip), skip_descs,
					   list_copy_tail(cscan->custom_exprs, nskip), vector_descs);
	ts->vector_recheck = ExecInitQual(ts->vector_exprs, &node->ss.ps);
}

/*
 * TesseraScanStart
 *		The table scan, begun on first use (a parallel one was begun by the
 *		DSM callbacks), with its filters set and their values evaluated.
 *		TesseraJoin's scan of its table too.
 */
TableScanDesc
TesseraScanStart(TesseraScanState *ts)
{
	ScanState  *ss = &ts->css.ss;

	if (ss->ss_currentScanDesc == NULL)
	{
		ss->ss_currentScanDesc = table_beginscan(ss->ss_currentRelation,
												 ss->ps.state->es_snapshot, 0, NULL);
		ts->filters_set = false;
	}
	if (!ts->filters_set)
		TesseraFiltersStart(ts);
	if (!ts->values_ready)
		TesseraFiltersEval(ts);
	return ss->ss_currentScanDesc;
}

static TupleTableSlot *
tscan_next(ScanState *ss)
{
	TableScanDesc scan = TesseraScanStart((TesseraScanState *) ss);
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (table_scan_getnextslot(scan, ss->ps.state->es_direction, slot))
		return slot;
	return ExecClearTuple(slot);
}

static bool
tscan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	TesseraScanState *ts = (TesseraScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (ts->vector_recheck == NULL)
		return true;
	econtext->ecxt_scantuple = slot;
	return ExecQual(ts->vector_recheck, econtext);
}

static TupleTableSlot *
tscan_exec_fast(TesseraScanState *ts)
{
	ScanState  *ss = &ts->css.ss;
	TableScanDesc scan = TesseraScanStart(ts);
	TupleTableSlot *out = ss->ps.ps_ResultTupleSlot;
	TesseraBatch *b;
	int			row;

	ExecClearTuple(out);
	if (!TesseraScanNextRow(scan, ss->ps.state->es_direction, &b, &row))
		return out;
	for (int j = 0; j < ts->nproj; j++)
		out->tts_values[j] = TesseraBatchDatum(b, ts->proj_att[j], row, &out->tts_isnull[j]);
	return ExecStoreVirtualTuple(out);
}

/*
 * TesseraScanVectorSource
 *		A TesseraScan node whose rows a consumer may read as column vectors
 *		instead (a star join reading a dimension): one with no plan qual,
 *		returning plain columns (proj_att), outside EvalPlanQual; or NULL.
 */
TesseraScanState *
TesseraScanVectorSource(PlanState *ps)
{
	TesseraScanState *ts = (TesseraScanState *) ps;

	if (!IsA(ps, CustomScanState) ||
		((CustomScan *) ps->plan)->methods != &TesseraScanPlanMethods ||
		!ts->fast || ps->state->es_epq_active != NULL)
		return NULL;
	return ts;
}

/*
 * TesseraScanNodeBatch
 *		The next batch of such a node and the rows its vector quals keep
 *		(sel, NULL: all; deleted rows are the caller's to leave out).
 */
bool
TesseraScanNodeBatch(TesseraScanState *ts, TesseraBatch **b, const bool **sel)
{
	return TesseraScanNextBatch(TesseraScanStart(ts), b, sel);
}

static TupleTableSlot *
tscan_exec(CustomScanState *node)
{
	TesseraScanState *ts = (TesseraScanState *) node;

	if (ts->fast && node->ss.ps.state->es_epq_active == NULL)
		return tscan_exec_fast(ts);
	return ExecScan(&node->ss, tscan_next, tscan_recheck);
}

void
TesseraScanEnd(CustomScanState *node)
{
	if (node->ss.ps.ps_ResultTupleSlot)
		ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	if (node->ss.ss_currentScanDesc)
		table_endscan(node->ss.ss_currentScanDesc);
}

static void
tscan_rescan(CustomScanState *node)
{
	TesseraScanState *ts = (TesseraScanState *) node;

	if (node->ss.ss_currentScanDesc)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	/* parameters may have changed */
	ts->values_ready = false;
	ExecScanReScan(&node->ss);
}

Size
TesseraScanEstimateDSM(CustomScanState *node, ParallelContext *pcxt)
{
	return MAXALIGN(sizeof(TscanShared)) +
		table_parallelscan_estimate(node->ss.ss_currentRelation, node->ss.ps.state->es_snapshot);
}

void
TesseraScanInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	ParallelTableScanDesc pscan = TSCAN_PSCAN(coordinate);

	TesseraScanInitShared(ts, coordinate);
	table_parallelscan_initialize(node->ss.ss_currentRelation, pscan,
								  node->ss.ps.state->es_snapshot);
	node->ss.ss_currentScanDesc = table_beginscan_parallel(node->ss.ss_currentRelation, pscan);
	ts->filters_set = false;
}

/* The shared counters (a sliced TesseraAgg has them without the parallel scan). */
void
TesseraScanInitShared(TesseraScanState *ts, void *coordinate)
{
	ts->shared = coordinate;
	pg_atomic_init_u64(&ts->shared->bytes_read, 0);
	pg_atomic_init_u64(&ts->shared->bytes_decompressed, 0);
	pg_atomic_init_u64(&ts->shared->delta_rows, 0);
	pg_atomic_init_u64(&ts->shared->frames_cached, 0);
	pg_atomic_init_u32(&ts->shared->next_slice, 0);
	pg_atomic_init_u32(&ts->shared->slices_finished, 0);
	for (int k = 0; k < TAGG_SLICE_COUNTS; k++)
		pg_atomic_init_u64(&ts->shared->slice_counts[k], 0);
	ts->shared->star = InvalidDsaPointer;
}

void
TesseraScanReInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	table_parallelscan_reinitialize(node->ss.ss_currentRelation, TSCAN_PSCAN(coordinate));
}

void
TesseraScanInitWorker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	TesseraScanState *ts = (TesseraScanState *) node;

	ts->shared = coordinate;
	ts->is_worker = true;
	node->ss.ss_currentScanDesc = table_beginscan_parallel(node->ss.ss_currentRelation,
														   TSCAN_PSCAN(coordinate));
	ts->filters_set = false;
}

/*
 * At the end of execution: a worker adds its byte counts to the shared
 * ones; the leader, whose children shut down before the Gather detaches
 * the shared memory, keeps the total for EXPLAIN.
 */
void
TesseraScanShutdown(CustomScanState *node)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	TesseraScanCounts c;

	if (ts->bytes_final)
		return;
	memset(&c, 0, sizeof(c));
	if (node->ss.ss_currentScanDesc)
		TesseraScanBytes(node->ss.ss_currentScanDesc, &c);
	if (ts->shared != NULL && ts->is_worker)
	{
		pg_atomic_fetch_add_u64(&ts->shared->bytes_read, c.bytes_read);
		pg_atomic_fetch_add_u64(&ts->shared->bytes_decompressed, c.bytes_decompressed);
		pg_atomic_fetch_add_u64(&ts->shared->delta_rows, c.delta_rows);
		pg_atomic_fetch_add_u64(&ts->shared->frames_cached, c.frames_cached);
	}
	else if (ts->shared != NULL)
	{
		c.bytes_read += pg_atomic_read_u64(&ts->shared->bytes_read);
		c.bytes_decompressed += pg_atomic_read_u64(&ts->shared->bytes_decompressed);
		c.delta_rows += pg_atomic_read_u64(&ts->shared->delta_rows);
		c.frames_cached += pg_atomic_read_u64(&ts->shared->frames_cached);
	}
	ts->counts = c;
	ts->bytes_final = true;
	ts->shared = NULL;
}

/*
 * EXPLAIN (ANALYZE, VERBOSE): what the scan read and decompressed, rows
 * from the delta, frames from the shared cache (when it is on).
 */
void
TesseraScanExplainBytes(TesseraScanState *ts, ExplainState *es)
{
	if (!es->analyze || !es->verbose)
		return;
	if (!ts->bytes_final && ts->css.ss.ss_currentScanDesc)
		TesseraScanBytes(ts->css.ss.ss_currentScanDesc, &ts->counts);
	ExplainPropertyInteger("Bytes Read", "kB", (int64) ((ts->counts.bytes_read + 1023) / 1024), es);
	ExplainPropertyInteger("Bytes Decompressed", "kB",
						   (int64) ((ts->counts.bytes_decompressed + 1023) / 1024), es);
	ExplainPropertyInteger("Delta Rows Read", NULL, (int64) ts->counts.delta_rows, es);
	if (TesseraSharedCacheEnabled())
		ExplainPropertyInteger("Shared Cache Frames", NULL, (int64) ts->counts.frames_cached, es);
}

static void
tscan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *context;
	List	   *names = NIL;
	ListCell   *lc;

	foreach(lc, ts->needed_list)
		names = lappend(names, NameStr(TupleDescAttr(RelationGetDescr(rel), lfirst_int(lc) - 1)->attname));
	if (names == NIL && es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Columns", "none", es);
	else if (es->verbose || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyList("Columns", names, es);

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	if (ts->skip_exprs != NIL)
		ExplainPropertyText("Row Group Filter",
							deparse_expression((Node *) make_ands_explicit(ts->skip_exprs),
											   context, es->verbose, false), es);
	if (ts->vector_exprs != NIL)
		ExplainPropertyText("Vector Filter",
							deparse_expression((Node *) make_ands_explicit(ts->vector_exprs),
											   context, es->verbose, false), es);
	if (es->analyze && node->ss.ps.instrument)
	{
		if (ts->skip_exprs != NIL && !node->ss.ps.plan->parallel_aware)
			ExplainPropertyUInteger("Row Groups Read", NULL, ts->rgs_read, es);
		TesseraExplainFilterCounts(&node->ss.ps, ts->skip_exprs != NIL,
								   ts->vector_exprs != NIL, es);
		TesseraScanExplainBytes(ts, es);
	}
}

/* _PG_init: the node's plan methods, by name for plans read back (parallel workers). */
void
TesseraRegisterScanNode(void)
{
	RegisterCustomScanMethods(&TesseraScanPlanMethods);
}
