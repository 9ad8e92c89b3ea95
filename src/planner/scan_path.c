/*-------------------------------------------------------------------------
 *
 * scan_path.c
 *	  Planning TesseraScan: the set_rel_pathlist hook adds a TesseraScan
 *	  path (and a partial one for parallel plans, and parameterized ones
 *	  for nested loops) beside PostgreSQL's own, and turns the chosen one
 *	  into a plan.
 *
 * NOTES
 *	  Cost: what a scan costs is decoding, not reading (cost.c estimates
 *	  it).  The path charges the physical pages of the row groups expected
 *	  to be read, one operator per value decoded (more for wide values),
 *	  and a tuple per row handed up.  So the planner still prefers an index
 *	  scan for a few rows.
 *
 *	  Plan: the quals are sorted, with the classifier's descriptions, into
 *	  row-group filters and vector quals (custom_exprs, in that order; a
 *	  qual may be both) and the plan qual (everything not vectorized).  The
 *	  columns referenced anywhere (all for a whole-row reference) are the
 *	  only ones the slot decodes.
 *
 * IDENTIFICATION
 *	  src/planner/scan_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "tessera/catalog.h"
#include "tessera/plan.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"
#include "planner.h"

bool		tessera_enable_custom_scan = true;

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *tscan_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods tscan_path_methods = {
	.CustomName = "TesseraScan",
	.PlanCustomPath = tscan_plan_path,
};

/*
 * TesseraScanPathVectors
 *		If path is a serial TesseraScan whose quals are all vector quals, so
 *		that a consumer can read its column vectors without any row being
 *		formed (executor/star.c): what that reading costs, charged as
 *		TesseraAgg charges its own scan (a quarter of an operator per value
 *		decoded).  Else -1.
 */
Cost
TesseraScanPathVectors(PlannerInfo *root, Path *path)
{
	RelOptInfo *rel = path->parent;
	Relation	relation;
	ListCell   *lc;
	bool		ok = true;
	TscanEstimate est;
	Cost		cost = -1;

	if (!IsA(path, CustomPath) || ((CustomPath *) path)->methods != &tscan_path_methods ||
		path->parallel_aware || path->param_info != NULL)
		return -1;
	/*
	 * (kept after the columns in custom_private, which the plan reads only
	 * the first of: a star's dimension is priced for every join relation
	 * and pair of inputs holding it, a quarter of a 5-table SSB query's
	 * planning in this estimate)
	 */
	if (list_length(((CustomPath *) path)->custom_private) > 1)
		return floatVal(lsecond(((CustomPath *) path)->custom_private));
	relation = table_open(planner_rt_fetch(rel->relid, root)->relid, NoLock);
	foreach(lc, rel->baserestrictinfo)
		ok &= TesseraVecDescribe((Node *) lfirst_node(RestrictInfo, lc)->clause, rel->relid,
								 relation) != NIL;
	if (ok)
	{
		TesseraScanEstimate(root, rel, relation, linitial(((CustomPath *) path)->custom_private),
							&est);
		cost = seq_page_cost * est.phys_pages * est.read_frac +
			rel->tuples * est.read_frac * (est.decode_ops * 0.25 + est.nvec * 0.1) *
			cpu_operator_cost;
	}
	table_close(relation, NoLock);
	((CustomPath *) path)->custom_private =
		lappend(((CustomPath *) path)->custom_private, makeFloat(psprintf("%.17g", cost)));
	return cost;
}

static CustomPath *
tscan_make_path(PlannerInfo *root, RelOptInfo *rel, const TscanEstimate *est,
				Bitmapset *attrs, int parallel_workers, Relids required_outer)
{
	CustomPath *cpath = makeNode(CustomPath);
	Path	   *path = &cpath->path;
	double		rows_read,
				rows_kept;
	QualCost	qcost;
	Cost		disk_cost,
				cpu_run;

	path->pathtype = T_CustomScan;
	path->parent = rel;
	path->pathtarget = rel->reltarget;
	path->param_info = get_baserel_parampathinfo(root, rel, required_outer);
	path->parallel_aware = parallel_workers > 0;
	path->parallel_safe = rel->consider_parallel;
	path->parallel_workers = parallel_workers;
	path->pathkeys = NIL;
	path->rows = path->param_info ? path->param_info->ppi_rows : rel->rows;
	cpath->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
#ifdef CUSTOMPATH_SUPPORT_PROJECTION
	cpath->flags |= CUSTOMPATH_SUPPORT_PROJECTION;
#endif
	cpath->methods = &tscan_path_methods;

	/*
	 * What a scan costs is decoding, not reading: the stripes are a small
	 * part of the decoded size that rel->pages reports.  Charge the physical
	 * pages of the row groups read, one operator per value decoded, and a
	 * full tuple for every row handed up (not discounted: what the rows cost
	 * above the scan, in a join or an Agg, is the same as for heap, and an
	 * index nested loop must still win against a full scan it beats).
	 * Values by reference cost more to decode, by their width (cost.c).
	 */
	rows_read = rel->tuples * est->read_frac;
	rows_kept = rows_read * est->vec_sel;
	disk_cost = seq_page_cost * est->phys_pages * est->read_frac;
	cost_qual_eval(&qcost, est->other_quals, root);
	if (path->param_info)
	{
		QualCost	jcost;

		cost_qual_eval(&jcost, path->param_info->ppi_clauses, root);
		qcost.startup += jcost.startup;
		qcost.per_tuple += jcost.per_tuple;
	}
	/* no tuple is formed for a row the vector filter drops */
	cpu_run = rows_read * (est->decode_ops + est->nvec * 0.1) * cpu_operator_cost +
		rows_kept * (cpu_tuple_cost + qcost.per_tuple);
	if (parallel_workers > 0)
	{
		double		divisor = TesseraParallelDivisor(parallel_workers);

		cpu_run /= divisor;
		path->rows = clamp_row_est(path->rows / divisor);
	}
	path->startup_cost = qcost.startup + path->pathtarget->cost.startup;
	path->total_cost = path->startup_cost + disk_cost + cpu_run +
		path->pathtarget->cost.per_tuple * path->rows;
	if (!enable_seqscan)
	{
		path->startup_cost += disable_cost;
		path->total_cost += disable_cost;
	}
	cpath->custom_private = list_make1(attrs ? bms_copy(attrs) : NULL);
	return cpath;
}

/* generate_implied_equalities_for_column callback: any plain column of ours */
static bool
eclass_member_is_column(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
						EquivalenceMember *em, void *arg)
{
	Node	   *expr = (Node *) em->em_expr;

	while (expr && IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	return expr != NULL && IsA(expr, Var) && ((Var *) expr)->varno == rel->relid &&
		((Var *) expr)->varattno > 0;
}

static bool
has_current_of(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, CurrentOfExpr))
		return true;
	return expression_tree_walker(node, has_current_of, context);
}

/* A path list without its plain sequential scans. */
static List *
remove_seqscans(List *paths)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		if (((Path *) lfirst(lc))->pathtype == T_SeqScan)
			paths = foreach_delete_current(paths, lc);
	}
	return paths;
}

static void
tessera_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	Relation	relation;
	Bitmapset  *attrs = NULL;
	TscanEstimate est;
	ListCell   *lc;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);

	if (!tessera_enable_custom_scan || rte->rtekind != RTE_RELATION ||
		rte->relkind != RELKIND_RELATION || rte->tablesample != NULL || rte->inh ||
		(rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		IS_DUMMY_REL(rel))
		return;
	foreach(lc, rel->baserestrictinfo)
	{
		if (has_current_of((Node *) lfirst_node(RestrictInfo, lc)->clause, NULL))
			return;				/* only a TID scan can do that */
	}

	relation = table_open(rte->relid, NoLock);
	if (!IsTesseraRelation(relation))
	{
		table_close(relation, NoLock);
		return;
	}

	/* every column the query uses: target list, quals, joins, RETURNING */
	pull_varattnos((Node *) rel->reltarget->exprs, rel->relid, &attrs);
	foreach(lc, rel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause, rel->relid, &attrs);

	TesseraScanEstimate(root, rel, relation, attrs, &est);

	/*
	 * TesseraScan replaces the plain sequential scan: it does the same work
	 * (decoding the columns the query uses), never more, and is costed for
	 * it, while PostgreSQL costs a sequential scan by the pages the decoded
	 * rows would fill, which knows nothing of what decoding wide or
	 * compressed values costs.  Kept, that cheaper-looking estimate would
	 * win where the work is the same, and against index nested loops where
	 * the full scan really is dearer.
	 */
	rel->pathlist = remove_seqscans(rel->pathlist);
	rel->partial_pathlist = remove_seqscans(rel->partial_pathlist);
	add_path(rel, &tscan_make_path(root, rel, &est, attrs, 0, rel->lateral_relids)->path);

	if (rel->consider_parallel && rel->lateral_relids == NULL)
	{
		int			workers = TesseraCoreWorkers(rel);

		if (workers > 0)
			add_partial_path(rel, &tscan_make_path(root, rel, &est, attrs, workers, NULL)->path);
	}

	/*
	 * Parameterized paths: a join clause `col op outer_expr` that can skip
	 * row groups makes a nested loop with TesseraScan inside read, for each
	 * outer row, only the row groups whose min/max admit its value (an
	 * index-like plan on columns that follow the row order, without an
	 * index).
	 */
	{
		List	   *candidates = list_copy(rel->joininfo);
		List	   *done = NIL;

		/* equality join clauses live in equivalence classes */
		if (rel->has_eclass_joins)
			candidates = list_concat(candidates,
									 generate_implied_equalities_for_column(root, rel,
																			eclass_member_is_column,
																			NULL, NULL));
		foreach(lc, candidates)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
			Relids		outer;
			ParamPathInfo *ppi;
			TscanEstimate pest;
			ListCell   *dc;
			bool		seen = false;

			if (rinfo->pseudoconstant ||
				TesseraSkipDescribe((Node *) rinfo->clause, rel->relid, relation) == NIL ||
				TesseraSingleColumn((Node *) rinfo->clause, rel->relid) <= 0)
				continue;
			/*
			 * Base relations only: since PostgreSQL 16 a clause's relids
			 * also name the outer joins below it, which no path can be
			 * parameterized by.
			 */
			outer = bms_intersect(bms_union(bms_difference(rinfo->clause_relids, rel->relids),
											rel->lateral_relids),
								  root->all_baserels);
			if (bms_is_empty(outer))
				continue;
			foreach(dc, done)
			{
				if (bms_equal(lfirst(dc), outer))
					seen = true;
			}
			if (seen)
				continue;
			done = lappend(done, outer);
			ppi = get_baserel_parampathinfo(root, rel, outer);
			if (ppi == NULL)
				continue;

			/* per outer row, the join clauses select like restrictions */
			pest = est;
			pest.read_frac = Min(est.read_frac,
								 TesseraReadFraction(root, rel, relation, ppi->ppi_clauses,
													 rel->relid));
			if (pest.read_frac < est.read_frac)
				add_path(rel, &tscan_make_path(root, rel, &pest, attrs, 0, outer)->path);
		}
	}
	table_close(relation, NoLock);
}

/* The plan of a TesseraScan path: quals sorted and described, columns listed. */
static Plan *
tscan_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	Relation	relation = table_open(rte->relid, NoLock);
	Bitmapset  *attrs = linitial(best_path->custom_private);
	List	   *quals = extract_actual_clauses(clauses, false);
	List	   *skip = NIL,
			   *skip_descs = NIL,
			   *vector = NIL,
			   *vector_descs = NIL,
			   *plain = NIL;
	List	   *needed = NIL;
	ListCell   *lc;
	int			natts = RelationGetDescr(relation)->natts;

	foreach(lc, quals)
	{
		Node	   *qual = lfirst(lc);
		List	   *sdesc = TesseraSkipDescribe(qual, rel->relid, relation);
		List	   *vdesc = TesseraVecDescribe(qual, rel->relid, relation);

		if (sdesc != NIL)
		{
			skip = lappend(skip, qual);
			skip_descs = lappend(skip_descs, sdesc);
		}
		if (vdesc != NIL)
		{
			vector = lappend(vector, qual);
			vector_descs = lappend(vector_descs, vdesc);
		}
		else
			plain = lappend(plain, qual);
	}

	/* the columns to decode; the target list is the final one */
	pull_varattnos((Node *) tlist, rel->relid, &attrs);
	pull_varattnos((Node *) quals, rel->relid, &attrs);
	for (int i = 1; i <= natts; i++)
	{
		if (TesseraWholeRow(attrs) ||
			bms_is_member(i - FirstLowInvalidHeapAttributeNumber, attrs))
			needed = lappend_int(needed, i);
	}
	table_close(relation, NoLock);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = plain;
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->methods = &TesseraScanPlanMethods;
	/* the skip quals, then the vector quals: setrefs fixes them up */
	cscan->custom_exprs = list_concat(list_copy(skip), vector);
	cscan->custom_private = list_make3(needed, skip_descs, vector_descs);
	return &cscan->scan.plan;
}

/* _PG_init: offer TesseraScan paths. */
void
TesseraInstallScanPaths(void)
{
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = tessera_set_rel_pathlist;
}
