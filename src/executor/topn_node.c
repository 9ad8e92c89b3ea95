/*-------------------------------------------------------------------------
 *
 * topn_node.c
 *	  TesseraTopN's executor: the first rows of one tessera table in the
 *	  order of some of its columns (ORDER BY … LIMIT n), found from those
 *	  columns alone, then read whole.
 *
 * NOTES
 *	  The node walks the row groups TesseraScan would read, with its
 *	  row-group and vector filters, decoding only the sort keys' and the
 *	  quals' columns.  The rows the filters keep compete in a bounded heap
 *	  (the worst of the best n on top) compared with the sort operators'
 *	  SortSupport, as PostgreSQL's bounded sort compares them; the heap
 *	  holds each candidate's keys and row number.  At the end the winners are
 *	  sorted and fetched by TID with the scan's snapshot (the table AM's
 *	  fetch, which decodes one value per column), and projected.  Rows that
 *	  tie at the boundary may be any of the tied ones, as with PostgreSQL's
 *	  top-N sort.
 *
 * IDENTIFICATION
 *	  src/executor/topn_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/typcache.h"

#include "tessera/slot.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "nodes.h"

/* A candidate row: its keys and row number */
typedef struct TopNRow
{
	uint64		rownum;
	Datum	   *keys;
	bool	   *nulls;
} TopNRow;

typedef struct TesseraTopNState
{
	TesseraScanState ts;		/* filters and EXPLAIN counters; first */
	int			nkeys;
	int		   *keyatt;
	bool	   *keybyval;
	int16	   *keylen;
	SortSupportData *ssup;
	int			bound;
	TopNRow    *rows;			/* a max-heap (worst on top) while scanning, then sorted */
	int			nrows;
	bool		done;
	int			next;
	MemoryContext keys_cxt;
	uint64		candidates;		/* rows that entered the heap (EXPLAIN) */
	bool		rg_bound;		/* row groups may be skipped by the first key's summary */
	uint64		rgs_bounded;	/* row groups so skipped (EXPLAIN) */
	/* quals with no vector form (the plan's qual): on the rows that would enter */
	TupleTableSlot *qual_slot;	/* a virtual row of the table, their columns set */
	int			nqual_atts;
	int		   *qual_atts;
} TesseraTopNState;

static Node *topn_create_state(CustomScan *cscan);
static void topn_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *topn_exec(CustomScanState *node);
static void topn_end(CustomScanState *node);
static void topn_rescan(CustomScanState *node);
static void topn_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods TesseraTopNPlanMethods = {
	.CustomName = "TesseraTopN",
	.CreateCustomScanState = topn_create_state,
};

static const CustomExecMethods topn_exec_methods = {
	.CustomName = "TesseraTopN",
	.BeginCustomScan = topn_begin,
	.ExecCustomScan = topn_exec,
	.EndCustomScan = topn_end,
	.ReScanCustomScan = topn_rescan,
	/* in parallel: TesseraScan's shared scan, row groups claimed one by one */
	.EstimateDSMCustomScan = TesseraScanEstimateDSM,
	.InitializeDSMCustomScan = TesseraScanInitDSM,
	.ReInitializeDSMCustomScan = TesseraScanReInitDSM,
	.InitializeWorkerCustomScan = TesseraScanInitWorker,
	.ShutdownCustomScan = TesseraScanShutdown,
	.ExplainCustomScan = topn_explain,
};

static Node *
topn_create_state(CustomScan *cscan)
{
	TesseraTopNState *state = (TesseraTopNState *) newNode(sizeof(TesseraTopNState),
														   T_CustomScanState);

	state->ts.css.methods = &topn_exec_methods;
	return (Node *) state;
}

static void
topn_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraTopNState *tn = (TesseraTopNState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *priv = cscan->custom_private;
	List	   *skip_descs = list_nth(priv, TOPN_PRIVATE_SKIP);
	List	   *keys = list_nth(priv, TOPN_PRIVATE_KEYS);
	int			nskip = list_length(skip_descs);
	int			natts = RelationGetDescr(rel)->natts;
	ListCell   *lc;

	/* the winners are fetched into a slot of the table's own kind */
	node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, RelationGetDescr(rel),
												   table_slot_callbacks(rel));
	node->ss.ps.scanops = table_slot_callbacks(rel);
	node->ss.ps.scanopsfixed = true;
	node->ss.ps.scanopsset = true;
	ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);
	/* and decode only the columns the target list projects from them */
	{
		Bitmapset  *attrs = NULL;
		int			a = -1;
		bool	   *fetch_needed = palloc0(sizeof(bool) * Max(natts, 1));

		pull_varattnos((Node *) cscan->scan.plan.targetlist, cscan->scan.scanrelid, &attrs);
		if (node->ss.ss_ScanTupleSlot->tts_ops == &TTSOpsTessera &&
			!bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber, attrs))
		{
			while ((a = bms_next_member(attrs, a)) >= 0)
			{
				int			attidx = a + FirstLowInvalidHeapAttributeNumber - 1;

				if (attidx >= 0 && attidx < natts)
					fetch_needed[attidx] = true;
			}
			TesseraSlotSetNeeded(node->ss.ss_ScanTupleSlot, fetch_needed);
		}
	}

	tn->bound = intVal(list_nth(priv, TOPN_PRIVATE_BOUND));
	tn->nkeys = list_length(keys);
	tn->keyatt = palloc(sizeof(int) * tn->nkeys);
	tn->keybyval = palloc(sizeof(bool) * tn->nkeys);
	tn->keylen = palloc(sizeof(int16) * tn->nkeys);
	tn->ssup = palloc0(sizeof(SortSupportData) * tn->nkeys);
	tn->ts.needed = palloc0(sizeof(bool) * Max(natts, 1));
	foreach(lc, keys)
	{
		List	   *k = lfirst(lc);
		int			i = foreach_current_index(lc);
		Form_pg_attribute attr;

		tn->keyatt[i] = intVal(linitial(k));
		attr = TupleDescAttr(RelationGetDescr(rel), tn->keyatt[i]);
		tn->keybyval[i] = attr->attbyval;
		tn->keylen[i] = attr->attlen;
		tn->ts.needed[tn->keyatt[i]] = true;
		tn->ssup[i].ssup_cxt = CurrentMemoryContext;
		tn->ssup[i].ssup_collation = (Oid) intVal(lthird(k));
		tn->ssup[i].ssup_nulls_first = intVal(lfourth(k)) != 0;
		PrepareSortSupportFromOrderingOp((Oid) intVal(lsecond(k)), &tn->ssup[i]);
	}
	/*
	 * Row groups are skipped by their summary of the first key where its
	 * minimum and maximum are in the sort's order: an integer-like column
	 * sorted by its type's own < or >.
	 */
	{
		Form_pg_attribute attr = TupleDescAttr(RelationGetDescr(rel), tn->keyatt[0]);
		Oid			typid = attr->atttypid;
		Oid			sortop = (Oid) intVal(lsecond(linitial(keys)));
		TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

		tn->rg_bound = (typid == INT2OID || typid == INT4OID || typid == INT8OID ||
						typid == DATEOID || typid == TIMESTAMPOID || typid == TIMESTAMPTZOID) &&
			(sortop == tc->lt_opr || sortop == tc->gt_opr);
	}
	/* the quals' columns */
	{
		Bitmapset  *attrs = NULL;
		int			a = -1;

		pull_varattnos((Node *) cscan->custom_exprs, cscan->scan.scanrelid, &attrs);
		while ((a = bms_next_member(attrs, a)) >= 0)
		{
			int			attidx = a + FirstLowInvalidHeapAttributeNumber - 1;

			if (attidx >= 0 && attidx < natts)
				tn->ts.needed[attidx] = true;
		}
		/* and the plan qual's, set in a virtual row for it */
		attrs = NULL;
		pull_varattnos((Node *) cscan->scan.plan.qual, cscan->scan.scanrelid, &attrs);
		tn->qual_atts = palloc(sizeof(int) * (bms_num_members(attrs) + 1));
		a = -1;
		while ((a = bms_next_member(attrs, a)) >= 0)
		{
			int			attidx = a + FirstLowInvalidHeapAttributeNumber - 1;

			if (attidx >= 0 && attidx < natts)
			{
				tn->ts.needed[attidx] = true;
				tn->qual_atts[tn->nqual_atts++] = attidx;
			}
		}
		if (cscan->scan.plan.qual != NIL)
			tn->qual_slot = ExecAllocTableSlot(&estate->es_tupleTable, RelationGetDescr(rel),
											   &TTSOpsVirtual);
	}
	TesseraFiltersInit(&tn->ts, list_copy_head(cscan->custom_exprs, nskip), skip_descs,
					   list_copy_tail(cscan->custom_exprs, nskip),
					   list_nth(priv, TOPN_PRIVATE_VECTOR));
	tn->rows = palloc(sizeof(TopNRow) * (tn->bound + 1));
	tn->keys_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraTopN keys",
										 ALLOCSET_DEFAULT_SIZES);
}

/* <0 if a sorts before b, by the sort keys */
static int
topn_compare(TesseraTopNState *tn, const Datum *akeys, const bool *anulls, const TopNRow *b)
{
	for (int k = 0; k < tn->nkeys; k++)
	{
		int			c = ApplySortComparator(akeys[k], anulls[k], b->keys[k], b->nulls[k],
											&tn->ssup[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

static int
topn_row_cmp(const void *a, const void *b, void *arg)
{
	const TopNRow *ra = a;

	return topn_compare(arg, ra->keys, ra->nulls, b);
}

/* Restore the max-heap from position i down. */
static void
topn_sift_down(TesseraTopNState *tn, int i)
{
	TopNRow    *h = tn->rows;

	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;
		TopNRow		t;

		if (l < tn->nrows && topn_row_cmp(&h[l], &h[m], tn) > 0)
			m = l;
		if (r < tn->nrows && topn_row_cmp(&h[r], &h[m], tn) > 0)
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void
topn_sift_up(TesseraTopNState *tn, int i)
{
	TopNRow    *h = tn->rows;

	while (i > 0)
	{
		int			p = (i - 1) / 2;
		TopNRow		t;

		if (topn_row_cmp(&h[i], &h[p], tn) <= 0)
			return;
		t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/* A row's keys into a heap slot's (its old keys freed). */
static void
topn_store(TesseraTopNState *tn, TopNRow *r, uint64 rownum, const Datum *keys, const bool *nulls)
{
	MemoryContext old = MemoryContextSwitchTo(tn->keys_cxt);

	if (r->keys == NULL)
	{
		r->keys = palloc(sizeof(Datum) * tn->nkeys);
		r->nulls = palloc(sizeof(bool) * tn->nkeys);
	}
	else
		for (int k = 0; k < tn->nkeys; k++)
			if (!tn->keybyval[k] && !r->nulls[k])
				pfree(DatumGetPointer(r->keys[k]));
	for (int k = 0; k < tn->nkeys; k++)
	{
		r->nulls[k] = nulls[k];
		r->keys[k] = nulls[k] ? (Datum) 0 :
			datumCopy(keys[k], tn->keybyval[k], tn->keylen[k]);
	}
	r->rownum = rownum;
	MemoryContextSwitchTo(old);
}

/*
 * Does row i of the batch pass the plan's qual (the quals with no vector
 * form)?  Evaluated only for a row that would enter the top ones: any other
 * cannot be in the result whatever its qual says.
 */
static bool
topn_row_passes(TesseraTopNState *tn, TesseraBatch *b, int i)
{
	ScanState  *ss = &tn->ts.css.ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	TupleTableSlot *slot = tn->qual_slot;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < tn->nqual_atts; c++)
	{
		int			a = tn->qual_atts[c];

		slot->tts_values[a] = TesseraBatchValue(b, a, i, &slot->tts_isnull[a]);
	}
	ExecStoreVirtualTuple(slot);
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	if (ExecQual(ss->ps.qual, econtext))
		return true;
	InstrCountFiltered1(tn, 1);
	return false;
}

/* The batch's kept rows against the heap. */
static void
topn_batch(TesseraTopNState *tn, TesseraBatch *b, const bool *sel)
{
	Datum	   *cols[INDEX_MAX_KEYS];
	bool	   *colnulls[INDEX_MAX_KEYS];
	Datum		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];

	for (int k = 0; k < tn->nkeys; k++)
		TesseraBatchColumn(b, tn->keyatt[k], &cols[k], &colnulls[k]);
	for (int i = 0; i < b->nrows; i++)
	{
		if ((sel && !sel[i]) || (b->deleted && b->deleted[i]))
			continue;
		for (int k = 0; k < tn->nkeys; k++)
		{
			keys[k] = cols[k][i];
			nulls[k] = colnulls[k][i];
		}
		if (tn->qual_slot != NULL &&
			(tn->nrows < tn->bound || topn_compare(tn, keys, nulls, &tn->rows[0]) < 0) &&
			!topn_row_passes(tn, b, i))
			continue;
		if (tn->nrows < tn->bound)
		{
			tn->rows[tn->nrows].keys = NULL;
			topn_store(tn, &tn->rows[tn->nrows], b->first_rownum + i, keys, nulls);
			topn_sift_up(tn, tn->nrows++);
			tn->candidates++;
		}
		else if (topn_compare(tn, keys, nulls, &tn->rows[0]) < 0)
		{
			topn_store(tn, &tn->rows[0], b->first_rownum + i, keys, nulls);
			topn_sift_down(tn, 0);
			tn->candidates++;
		}
	}
}

/*
 * Row-group filter: the table's skip quals, then, once the heap is full, a
 * row group none of whose rows could enter it: by its summary of the first
 * sort key, every value it holds, and a NULL if it holds one, sorts
 * strictly after the worst row kept.  The summary covers every stored row,
 * visible or not, so it only widens the bounds.  (A table loaded in the
 * order of its timestamp and `ORDER BY ts LIMIT n`: the first row groups
 * fill the heap, the others are not read.)
 */
static bool
topn_rg_filter(void *arg, TesseraReader *r, int stripe, int rg)
{
	TesseraTopNState *tn = arg;
	TopNRow    *worst = &tn->rows[0];
	SortSupport ssup = &tn->ssup[0];
	TesseraChunkSummary cs;

	if (tn->ts.skip != NIL && !TesseraRowGroupMayMatch(&tn->ts, r, stripe, rg))
		return false;
	if (!tn->rg_bound || tn->nrows == 0 || tn->nrows < tn->bound)
		return true;
	TesseraReaderChunkSummary(r, stripe, rg, tn->keyatt[0], &cs);
	if (cs.nonnull > 0 &&
		(!cs.has_minmax ||
		 ApplySortComparator(ssup->ssup_reverse ? cs.max : cs.min, false,
							 worst->keys[0], worst->nulls[0], ssup) <= 0))
		return true;
	if (cs.nonnull < cs.rows &&
		ApplySortComparator((Datum) 0, true, worst->keys[0], worst->nulls[0], ssup) <= 0)
		return true;
	tn->rgs_bounded++;
	return false;
}

/* Scan the table: the winners, sorted. */
static void
topn_compute(TesseraTopNState *tn)
{
	ScanState  *ss = &tn->ts.css.ss;
	TableScanDesc scan = ss->ss_currentScanDesc;
	TesseraBatch *b;
	const bool *sel;

	if (scan == NULL)
	{
		scan = table_beginscan(ss->ss_currentRelation, ss->ps.state->es_snapshot, 0, NULL);
		ss->ss_currentScanDesc = scan;
	}
	TesseraScanSetColumns(scan, tn->ts.needed);
	/* a descending first key: the last row groups first, where they are the best */
	TesseraScanSetBatchesBackward(scan, tn->rg_bound && tn->ssup[0].ssup_reverse);
	TesseraScanSetFilters(scan, tn->ts.skip != NIL || tn->rg_bound ? topn_rg_filter : NULL,
						  tn->ts.nvquals > 0 ? TesseraFilterBatch : NULL, &tn->ts);
	TesseraFiltersEval(&tn->ts);
	MemoryContextReset(tn->keys_cxt);
	tn->nrows = 0;
	tn->candidates = 0;
	tn->rgs_bounded = 0;
	tn->ts.rgs_read = 0;
	while (TesseraScanNextBatch(scan, &b, &sel))
	{
		CHECK_FOR_INTERRUPTS();
		tn->ts.rgs_read++;
		topn_batch(tn, b, sel);
	}
	qsort_arg(tn->rows, tn->nrows, sizeof(TopNRow), topn_row_cmp, tn);
	tn->next = 0;
	tn->done = true;
}

static TupleTableSlot *
topn_exec(CustomScanState *node)
{
	TesseraTopNState *tn = (TesseraTopNState *) node;
	ScanState  *ss = &node->ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	ItemPointerData tid;

	if (!tn->done)
		topn_compute(tn);
	if (tn->next >= tn->nrows)
		return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
	TesseraRownumToTid(tn->rows[tn->next++].rownum, &tid);
	if (!table_tuple_fetch_row_version(ss->ss_currentRelation, &tid, ss->ps.state->es_snapshot,
									   slot))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("row (%u,%u) of table \"%s\" found by its scan is not visible to its fetch",
						ItemPointerGetBlockNumber(&tid), ItemPointerGetOffsetNumber(&tid),
						RelationGetRelationName(ss->ss_currentRelation))));
	ResetExprContext(econtext);
	if (ss->ps.ps_ProjInfo == NULL)
		return slot;
	econtext->ecxt_scantuple = slot;
	return ExecProject(ss->ps.ps_ProjInfo);
}

static void
topn_rescan(CustomScanState *node)
{
	TesseraTopNState *tn = (TesseraTopNState *) node;

	if (node->ss.ss_currentScanDesc)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	tn->done = false;
	tn->ts.values_ready = false;
}

static void
topn_end(CustomScanState *node)
{
	TesseraScanEnd(node);
}

static void
topn_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	TesseraTopNState *tn = (TesseraTopNState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, list_nth(cscan->custom_private, TOPN_PRIVATE_KEYS))
	{
		List	   *k = lfirst(lc);
		int			attidx = intVal(linitial(k));
		Form_pg_attribute attr = TupleDescAttr(RelationGetDescr(node->ss.ss_currentRelation),
											   attidx);
		Var		   *var = makeVar(cscan->scan.scanrelid, attidx + 1, attr->atttypid,
								  attr->atttypmod, attr->attcollation, 0);
		bool		desc = intVal(list_nth(k, 4)) != 0;
		char	   *s = deparse_expression((Node *) var, context, es->verbose, false);

		if (desc)
			s = psprintf("%s DESC", s);
		/* the default is NULLS LAST ascending, NULLS FIRST descending */
		if ((intVal(lfourth(k)) != 0) != desc)
			s = psprintf("%s NULLS %s", s, intVal(lfourth(k)) ? "FIRST" : "LAST");
		keys = lappend(keys, s);
	}
	ExplainPropertyList("Sort Key", keys, es);
	ExplainPropertyInteger("Rows Kept", NULL, tn->bound, es);
	foreach(lc, list_make2(tn->ts.skip_exprs, tn->ts.vector_exprs))
	{
		List	   *quals = lfirst(lc);

		if (quals == NIL)
			continue;
		ExplainPropertyText(lfirst(lc) == tn->ts.skip_exprs ? "Row Group Filter" : "Vector Filter",
							deparse_expression((Node *) make_ands_explicit(quals), context,
											   es->verbose, false), es);
	}
	if (es->analyze && node->ss.ps.instrument)
	{
		ExplainPropertyUInteger("Row Groups Read", NULL, tn->ts.rgs_read, es);
		ExplainPropertyUInteger("Candidate Rows", NULL, tn->candidates, es);
		if (tn->rg_bound)
			ExplainPropertyUInteger("Row Groups Skipped by Bound", NULL, tn->rgs_bounded, es);
		TesseraExplainFilterCounts(&node->ss.ps, tn->ts.skip_exprs != NIL,
								   tn->ts.vector_exprs != NIL, es);
	}
}

/* _PG_init: the node's plan methods, by name for plans read back. */
void
TesseraRegisterTopNNode(void)
{
	RegisterCustomScanMethods(&TesseraTopNPlanMethods);
}
