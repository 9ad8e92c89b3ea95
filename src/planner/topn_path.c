/*-------------------------------------------------------------------------
 *
 * topn_path.c
 *	  Planning TesseraTopN: `SELECT … FROM t WHERE … ORDER BY cols LIMIT n`
 *	  over one tessera table, reading only the sort keys and the quals'
 *	  columns for every row, and the rest of the row for the winners alone.
 *
 * NOTES
 *	  PostgreSQL's plan is a bounded Sort over the scan, which forms every
 *	  row the quals keep -- every column the query returns -- to compare a
 *	  few of them; for `SELECT *` of a wide table that is decoding the whole
 *	  table (ClickBench q23: 105 columns).  The path is offered at
 *	  UPPERREL_ORDERED, for ordered output of a base relation with no
 *	  grouping, window, DISTINCT, row marks or set-returning functions, when
 *	  the LIMIT (plus OFFSET) is a constant of at most TOPN_MAX_ROWS, every
 *	  qual is a vector qual or one TesseraAgg would evaluate row by row
 *	  (TesseraRowQual: the plan's qual, evaluated on the rows that would
 *	  enter the top ones only), and every sort key is a column of the table.
 *	  It yields the top rows in order; the Limit above it stays PostgreSQL's.
 *
 * IDENTIFICATION
 *	  src/planner/topn_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/plan.h"
#include "tessera/tessera.h"
#include "planner.h"

bool		tessera_enable_topn = true;

static create_upper_paths_hook_type prev_create_upper_paths = NULL;

static Plan *topn_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods topn_path_methods = {
	.CustomName = "TesseraTopN",
	.PlanCustomPath = topn_plan_path,
};

/*
 * The sort keys as descriptions [attidx, sort operator, collation,
 * nulls_first, descending], or NIL if one is not a column of the relation.
 */
static List *
topn_sort_keys(PlannerInfo *root, Index relid)
{
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, root->sort_pathkeys)
	{
		PathKey    *pk = lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		ListCell   *mc;
		Var		   *var = NULL;
		Oid			sortop = InvalidOid;

		if (ec->ec_has_volatile)
			return NIL;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Expr	   *e = em->em_expr;

			while (e && IsA(e, RelabelType))
				e = ((RelabelType *) e)->arg;
			if (e && IsA(e, Var) && ((Var *) e)->varno == relid &&
				((Var *) e)->varlevelsup == 0 && ((Var *) e)->varattno > 0)
			{
				var = (Var *) e;
				sortop = TesseraPathKeySortOp(pk, em->em_datatype);
				break;
			}
		}
		if (var == NULL || !OidIsValid(sortop))
			return NIL;
		keys = lappend(keys, list_make5(makeInteger(var->varattno - 1), makeInteger((int) sortop),
										makeInteger((int) ec->ec_collation),
										makeInteger(pk->pk_nulls_first),
										makeInteger(TesseraPathKeyDescending(pk))));
	}
	return keys;
}

/*
 * May the row groups' summaries of the first key skip row groups?  Where
 * the executor bounds by them (topn_node.c: an integer-like key).  Then
 * one process often reads a few row groups and skips the rest, and a
 * parallel plan only adds its workers' start: ClickBench's `ORDER BY
 * EventTime LIMIT 10` over rows in (CounterID, EventDate, ...) order,
 * whose EventTime correlates with the row order at 0.08 (no statistic
 * tells), 10 ms serial and 29 ms in parallel.
 */
static bool
topn_may_bound(Relation relation, List *keys)
{
	int			attidx = intVal(linitial(linitial(keys)));
	Oid			typid = TupleDescAttr(RelationGetDescr(relation), attidx)->atttypid;

	return typid == INT2OID || typid == INT4OID || typid == INT8OID || typid == DATEOID ||
		typid == TIMESTAMPOID || typid == TIMESTAMPTZOID;
}

/*
 * In parallel: each participant keeps the top rows of the row groups it
 * claims, and a Gather Merge takes the top of theirs.  Where the base
 * relation and the ordered target may run in workers (its quals then may
 * too).
 */
static void
topn_add_parallel_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					   CustomPath *cpath, TscanEstimate *est, Cost run_cost)
{
	int			workers;
	CustomPath *ppath;
	double		divisor;
	double		total_rows;

	if (!output_rel->consider_parallel || !input_rel->consider_parallel ||
		max_parallel_workers_per_gather <= 0)
		return;
	workers = TesseraCoreWorkers(input_rel);
	if (workers <= 0)
		return;
	ppath = makeNode(CustomPath);
	divisor = TesseraParallelDivisor(workers);
	total_rows = cpath->path.rows * (workers + 1);
	memcpy(ppath, cpath, sizeof(CustomPath));
	ppath->path.parallel_aware = true;
	ppath->path.parallel_safe = true;
	ppath->path.parallel_workers = workers;
	ppath->path.startup_cost = seq_page_cost * est->phys_pages * est->read_frac +
		run_cost / divisor;
	ppath->path.total_cost = ppath->path.startup_cost + cpu_tuple_cost * ppath->path.rows;
	if (!enable_seqscan)
	{
		ppath->path.startup_cost += disable_cost;
		ppath->path.total_cost += disable_cost;
	}
	add_path(output_rel, (Path *)
			 create_gather_merge_path(root, output_rel, &ppath->path, ppath->path.pathtarget,
									  root->sort_pathkeys, NULL, &total_rows));
}

static void
tessera_topn_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
						 RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	RangeTblEntry *rte;
	Relation	relation;
	CustomPath *cpath;
	List	   *keys;
	Bitmapset  *attrs = NULL;
	List	   *row_quals = NIL;
	TscanEstimate est;
	ListCell   *lc;
	double		rows_read;
	Cost		run_cost;
	bool		bounded;

	if (prev_create_upper_paths)
		prev_create_upper_paths(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_ORDERED || !tessera_enable_topn || !tessera_enable_custom_scan ||
		input_rel->reloptkind != RELOPT_BASEREL || input_rel->lateral_relids != NULL ||
		parse->hasAggs || parse->groupClause != NIL || parse->groupingSets != NIL ||
		parse->hasWindowFuncs || parse->distinctClause != NIL || parse->hasTargetSRFs ||
		parse->rowMarks != NIL || parse->havingQual != NULL || root->sort_pathkeys == NIL ||
		parse->limitOption == LIMIT_OPTION_WITH_TIES ||
		root->limit_tuples <= 0 || root->limit_tuples > TOPN_MAX_ROWS ||
		root->upper_targets[UPPERREL_ORDERED] == NULL)
		return;
	rte = planner_rt_fetch(input_rel->relid, root);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->tablesample != NULL || rte->inh)
		return;
	relation = table_open(rte->relid, NoLock);
	if (!IsTesseraRelation(relation))
	{
		table_close(relation, NoLock);
		return;
	}
	foreach(lc, input_rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant || TesseraHasExecParam((Node *) rinfo->clause, NULL))
			;					/* not ours */
		else if (TesseraVecDescribe((Node *) rinfo->clause, input_rel->relid, relation) != NIL)
		{
			pull_varattnos((Node *) rinfo->clause, input_rel->relid, &attrs);
			continue;
		}
		else if (TesseraRowQual(rinfo, input_rel->relid))
		{
			row_quals = lappend(row_quals, rinfo);
			pull_varattnos((Node *) rinfo->clause, input_rel->relid, &attrs);
			continue;
		}
		table_close(relation, NoLock);
		return;
	}
	/* (the vector quals go first: under a security barrier, PostgreSQL's order) */
	if (row_quals != NIL)
		foreach(lc, input_rel->baserestrictinfo)
		{
			if (lfirst_node(RestrictInfo, lc)->security_level > 0)
			{
				table_close(relation, NoLock);
				return;
			}
		}
	keys = topn_sort_keys(root, input_rel->relid);
	if (keys == NIL)
	{
		table_close(relation, NoLock);
		return;
	}
	foreach(lc, keys)
		attrs = bms_add_member(attrs, intVal(linitial(lfirst(lc))) + 1 -
							   FirstLowInvalidHeapAttributeNumber);
	TesseraScanEstimate(root, input_rel, relation, attrs, &est);
	bounded = topn_may_bound(relation, keys);
	table_close(relation, NoLock);

	/*
	 * Decoding the keys' and quals' columns of the row groups read, the
	 * quals, comparing the rows kept with the worst of the top ones, and
	 * fetching the winners whole: each value of a winner is decoded from its
	 * chunk alone, charged as fifty operators.
	 */
	rows_read = input_rel->tuples * est.read_frac;
	run_cost = rows_read * (est.decode_ops * 0.25 + est.nvec * 0.1) * cpu_operator_cost +
		rows_read * est.vec_sel * list_length(keys) * 2 * cpu_operator_cost +
		root->limit_tuples * (cpu_tuple_cost + 50 * cpu_operator_cost *
							  RelationGetDescr(relation)->natts);
	/* the other quals: charged as on every row the vector quals keep, as PostgreSQL's */
	if (row_quals != NIL)
	{
		QualCost	qc;

		cost_qual_eval(&qc, row_quals, root);
		run_cost += qc.startup + rows_read * est.vec_sel * qc.per_tuple;
	}

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	/* the ordered rows' target, which grouping_planner keeps for extensions */
	cpath->path.pathtarget = root->upper_targets[UPPERREL_ORDERED];
	cpath->path.parallel_safe = false;
	cpath->path.rows = Min(root->limit_tuples, input_rel->rows);
	cpath->path.pathkeys = root->sort_pathkeys;
	cpath->path.startup_cost = seq_page_cost * est.phys_pages * est.read_frac + run_cost;
	cpath->path.total_cost = cpath->path.startup_cost + cpu_tuple_cost * cpath->path.rows;
	if (!enable_seqscan)
	{
		cpath->path.startup_cost += disable_cost;
		cpath->path.total_cost += disable_cost;
	}
	cpath->custom_private = list_make3(makeInteger(input_rel->relid), keys,
									   makeInteger((int) root->limit_tuples));
	cpath->methods = &topn_path_methods;
	add_path(output_rel, &cpath->path);

	/* (not where the first key's summaries may skip row groups) */
	if (!bounded)
		topn_add_parallel_path(root, input_rel, output_rel, cpath, &est, run_cost);
}

static Plan *
topn_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Index		relid = intVal(linitial(best_path->custom_private));
	RelOptInfo *input_rel = find_base_rel(root, relid);
	RangeTblEntry *rte = planner_rt_fetch(relid, root);
	Relation	relation = table_open(rte->relid, NoLock);
	List	   *skip = NIL,
			   *skip_descs = NIL,
			   *vector = NIL,
			   *vector_descs = NIL;

	List	   *rest = NIL;
	List	   *row_quals = NIL;
	ListCell   *lc;

	TesseraDescribeVectorQuals(extract_actual_clauses(input_rel->baserestrictinfo, false),
							   relid, relation, &skip, &skip_descs, &vector, &vector_descs, &rest);
	foreach(lc, input_rel->baserestrictinfo)
	{
		if (list_member_ptr(rest, lfirst_node(RestrictInfo, lc)->clause))
			row_quals = lappend(row_quals, lfirst(lc));
	}
	table_close(relation, NoLock);

	cscan->scan.plan.targetlist = tlist;
	/* the others: the plan's qual, in PostgreSQL's order, on the rows that would enter the top */
	(void) TesseraOrderQuals(root, &row_quals);
	cscan->scan.plan.qual = extract_actual_clauses(row_quals, false);
	cscan->scan.scanrelid = relid;
	cscan->flags = best_path->flags;
	cscan->methods = &TesseraTopNPlanMethods;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_plans = NIL;
	/* like TesseraScan's: the skip quals, then the vector quals */
	cscan->custom_exprs = list_concat(list_copy(skip), vector);
	cscan->custom_private = NIL;
	cscan->custom_private = lappend(cscan->custom_private, skip_descs);
	cscan->custom_private = lappend(cscan->custom_private, vector_descs);
	cscan->custom_private = lappend(cscan->custom_private,
									lsecond(best_path->custom_private));
	cscan->custom_private = lappend(cscan->custom_private,
									lthird(best_path->custom_private));
	Assert(list_length(cscan->custom_private) == TOPN_PRIVATE_NFIELDS);
	return &cscan->scan.plan;
}

/* _PG_init: offer TesseraTopN paths. */
void
TesseraInstallTopNPaths(void)
{
	prev_create_upper_paths = create_upper_paths_hook;
	create_upper_paths_hook = tessera_topn_upper_paths;
}
