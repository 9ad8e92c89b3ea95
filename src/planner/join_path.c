/*-------------------------------------------------------------------------
 *
 * join_path.c
 *	  Planning TesseraJoin: a join of one tessera table with dimension
 *	  relations it probes itself, producing the joined rows.
 *
 * NOTES
 *	  The set_join_pathlist hook offers, for a join relation that is a
 *	  star (star_path.c: the tessera table F joined to each dimension on
 *	  the dimension's unique key), a path that scans F as column vectors,
 *	  probes each dimension's keys with F's key columns and forms a row
 *	  only for the rows that join (executor/join_node.c).  PostgreSQL's
 *	  hash joins would form every row of F's scan and hash-probe them one
 *	  by one; this is what TesseraAgg's star join does below an
 *	  aggregation, for any consumer of the rows: a dimension of an outer
 *	  star join (TPC-H's orders joined to customer inside the lineitem
 *	  star of Q3, Q7, Q10), a sort, a limit, a join above.
 *
 *	  Taken for a join relation that is an inner join of its relations
 *	  (none of them on the inner or nullable side of an outer, semi or
 *	  anti join: what joins above it does not change its rows), in a
 *	  SELECT without row locks (EvalPlanQual would need to recheck a join
 *	  row by row), with a target of plain columns, and quals of F without
 *	  volatile functions or security barriers.  F's quals that are vector
 *	  quals filter its batches; the others, then the join clauses across
 *	  dimensions, are the plan qual, on the joined rows.  A partial path
 *	  scans F in parallel, one process reading the dimensions for all.
 *
 * IDENTIFICATION
 *	  src/planner/join_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#include "tessera/catalog.h"
#include "tessera/plan.h"
#include "tessera/tessera.h"
#include "planner.h"

bool		tessera_enable_join = true;

static set_join_pathlist_hook_type prev_set_join_pathlist = NULL;

static Plan *tjoin_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods tjoin_path_methods = {
	.CustomName = "TesseraJoin",
	.PlanCustomPath = tjoin_plan_path,
};

/* The path's custom_private */
typedef enum TjoinPathField
{
	TJOIN_PATH_RELID,			/* the tessera table */
	TJOIN_PATH_DESC,			/* the star join's description (TesseraStarDescribe) */
	TJOIN_PATH_CLAUSES,			/* ... and its clauses, for EXPLAIN */
	TJOIN_PATH_EXT,				/* the dimension Vars, in extra column order */
	TJOIN_PATH_FILTERS,			/* RestrictInfos across dimensions */
	TJOIN_PATH_NFIELDS
} TjoinPathField;

/*
 * Is joinrel an inner join of its relations whatever joins above it: none
 * of them on the right-hand (inner or nullable) side of a special join,
 * nor on either side of a full join?  A join relation wholly inside a
 * semi or anti join's right-hand side is one too: it is that join's inner
 * input, an inner join of its own relations that the semi or anti join
 * above consumes as it would a base relation (TPC-H Q20's `IN (SELECT
 * ps_suppkey FROM partsupp WHERE ps_partkey IN (SELECT p_partkey ...))`:
 * partsupp joined to part).
 */
static bool
tjoin_inner_only(PlannerInfo *root, RelOptInfo *joinrel)
{
	ListCell   *lc;

	foreach(lc, root->join_info_list)
	{
		SpecialJoinInfo *sjinfo = lfirst(lc);

		if ((sjinfo->jointype == JOIN_SEMI || sjinfo->jointype == JOIN_ANTI) &&
			bms_is_subset(joinrel->relids, sjinfo->syn_righthand))
			continue;
		if (bms_overlap(joinrel->relids, sjinfo->syn_righthand) ||
			bms_overlap(joinrel->relids, sjinfo->min_righthand) ||
			(sjinfo->jointype == JOIN_FULL &&
			 (bms_overlap(joinrel->relids, sjinfo->syn_lefthand) ||
			  bms_overlap(joinrel->relids, sjinfo->min_lefthand))))
			return false;
	}
	return true;
}

/* Has joinrel a TesseraJoin path already (the hook runs once per pair of inputs)? */
static bool
tjoin_has_path(RelOptInfo *joinrel)
{
	ListCell   *lc;

	foreach(lc, joinrel->pathlist)
	{
		Path	   *path = lfirst(lc);

		if (IsA(path, CustomPath) && ((CustomPath *) path)->methods == &tjoin_path_methods)
			return true;
	}
	return false;
}

/*
 * The fact table's quals are fit for the node: none of a security barrier
 * or row-level security (their order among the others matters), none
 * volatile (evaluated on the rows that join only).
 */
static bool
tjoin_quals_ok(RelOptInfo *fact)
{
	ListCell   *lc;

	foreach(lc, fact->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->security_level > 0 || rinfo->pseudoconstant ||
			contain_volatile_functions((Node *) rinfo->clause))
			return false;
	}
	return true;
}

/* What the path estimates beside its dimensions' plans */
typedef struct TjoinCosting
{
	TscanEstimate est;
	double		rows_read;		/* rows of the table read */
	double		probe_rows;		/* ... that the vector quals keep */
	double		rows;			/* rows joined */
	List	   *private;
} TjoinCosting;

/*
 * A TesseraJoin path of joinrel reading the dimensions by dim_paths (in
 * star->dims' order), serial (workers 0) or partial.  The scan decodes the
 * key columns of the rows read, the probes look each key up, the quals
 * that are not vector quals run on the rows that join every dimension
 * (TesseraStarRows: each row of the table joins one row of a dimension
 * where the dimension's quals keep it), a tuple is formed per row joined.
 * Charged on every row probed, a correlated subquery among those quals
 * priced the node that runs it 8,508 times at 800,000 runs (TPC-H Q20:
 * partsupp joined to part), and a nested loop of index probes whose
 * subquery's memo had to group all of lineitem won (0.21 s against
 * 0.06 s).  A
 * partial path shares the scan among its processes, one of them building
 * the dimensions' tables for all (the build charged once, before any
 * probe).  NULL if the dimensions should not fit hash_mem.
 */
static CustomPath *
tjoin_make_path(PlannerInfo *root, RelOptInfo *joinrel, TesseraStarPlan *star,
				TjoinCosting *c, List *dim_paths, int workers, bool parallel_safe)
{
	CustomPath *cpath;
	double		rows = c->rows;
	Cost		star_cost,
				build_cost,
				disk_cost,
				run_cost;
	QualCost	qc;
	ListCell   *lc,
			   *lc2;

	/* the star join's cost with these plans of the dimensions */
	forboth(lc, star->dims, lc2, dim_paths)
		((TesseraStarDimPlan *) lfirst(lc))->path = lfirst(lc2);
	if (!TesseraStarCost(root, star, c->probe_rows, c->rows, &star_cost, &build_cost))
		return NULL;
	cost_qual_eval(&qc, c->est.other_quals, root);
	disk_cost = seq_page_cost * c->est.phys_pages * c->est.read_frac;
	run_cost = c->rows_read * (c->est.decode_ops * 0.25 + c->est.nvec * 0.1) * cpu_operator_cost +
		star_cost + qc.startup +
		Max(c->rows, TesseraStarRows(star, c->probe_rows)) * qc.per_tuple;

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = workers > 0;
	cpath->path.parallel_safe = parallel_safe;
	cpath->path.parallel_workers = workers;
	cpath->path.pathkeys = NIL;
	if (workers > 0)
	{
		double		divisor = TesseraParallelDivisor(workers);

		run_cost = (run_cost - build_cost) / divisor +
			TesseraStarParallelBuildCost(root, star, dim_paths, build_cost, divisor);
		rows = clamp_row_est(rows / divisor);
	}
	cpath->path.rows = rows;
	cpath->path.startup_cost = build_cost;
	cpath->path.total_cost = disk_cost + run_cost +
		rows * (cpu_tuple_cost + joinrel->reltarget->cost.per_tuple);
	cpath->flags = 0;
#ifdef CUSTOMPATH_SUPPORT_PROJECTION
	/* ExecScan projects the scan tuple, which holds every column of the target */
	cpath->flags |= CUSTOMPATH_SUPPORT_PROJECTION;
#endif
	cpath->custom_paths = dim_paths;
	cpath->custom_private = c->private;
	cpath->methods = &tjoin_path_methods;
	return cpath;
}

/* The columns of fact the node reads: its output's, its quals', the keys. */
static Bitmapset *
tjoin_fact_columns(RelOptInfo *joinrel, RelOptInfo *fact, TesseraStarPlan *star)
{
	Bitmapset  *attrs = NULL;
	ListCell   *lc;

	pull_varattnos((Node *) joinrel->reltarget->exprs, fact->relid, &attrs);
	pull_varattnos((Node *) extract_actual_clauses(fact->baserestrictinfo, false),
				   fact->relid, &attrs);
	pull_varattnos((Node *) extract_actual_clauses(star->filters, false), fact->relid, &attrs);
	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		pull_varattnos((Node *) dim->fact_key, fact->relid, &attrs);
		pull_varattnos((Node *) dim->fact_key2, fact->relid, &attrs);
	}
	return attrs;
}

/*
 * Offer TesseraJoin for joinrel when it is a star around a tessera table.
 * Costed as TesseraAgg costs its scan and star join, plus a tuple for each
 * row handed up (tjoin_make_path).
 */
static void
tessera_set_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
						  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	TesseraStarPlan *star;
	RelOptInfo *fact;
	RangeTblEntry *rte;
	Relation	relation;
	TjoinCosting c;
	CustomPath *cpath;
	List	   *desc,
			   *clauses,
			   *dim_paths = NIL,
			   *safe_paths = NIL;
	ListCell   *lc;
	bool		is_tessera,
				parallel_ok,
				cheapest_safe = true,
				params = false;
	int			workers;

	if (prev_set_join_pathlist)
		prev_set_join_pathlist(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!tessera_enable_join || !tessera_enable_star_join || !tessera_enable_custom_scan ||
		jointype != JOIN_INNER ||
		root->parse->commandType != CMD_SELECT || root->parse->rowMarks != NIL ||
		root->rowMarks != NIL || joinrel->reloptkind != RELOPT_JOINREL ||
		tjoin_has_path(joinrel) || !tjoin_inner_only(root, joinrel))
		return;
	/* a target of plain columns */
	foreach(lc, joinrel->reltarget->exprs)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varlevelsup != 0 || var->varattno <= 0)
			return;
	}
	star = palloc0(sizeof(TesseraStarPlan));
	if (!TesseraStarFind(root, joinrel, star, true))
		return;
	fact = find_base_rel(root, star->fact);
	rte = planner_rt_fetch(star->fact, root);
	if (rte->relkind != RELKIND_RELATION || !tjoin_quals_ok(fact))
		return;
	relation = table_open(rte->relid, NoLock);
	is_tessera = IsTesseraRelation(relation);
	if (is_tessera)
		TesseraScanEstimate(root, fact, relation, tjoin_fact_columns(joinrel, fact, star), &c.est);
	table_close(relation, NoLock);
	if (!is_tessera)
		return;

	/* the dimension columns the rows hand up become extra columns */
	foreach(lc, joinrel->reltarget->exprs)
	{
		if (TesseraStarRewrite(star, lfirst(lc)) == NULL)
			return;
	}
	if (!TesseraStarDescribe(star, &desc, &clauses))
		return;

	/*
	 * Rows joined: PostgreSQL's estimate, but where a dimension's key is a
	 * pair of columns it multiplies the two columns' selectivities as if
	 * independent, however unique the pair (TPC-H's partsupp: 6M lineitem
	 * rows estimated to join 998), and nested loops above are costed on
	 * far too few rows.  There, each row of the table joins at most one
	 * row of each dimension, and one where the dimension's quals keep it
	 * (as a foreign key would have it): the join relation's estimate is
	 * raised to that, before the joins above it are sized from it.
	 */
	c.rows_read = fact->tuples * c.est.read_frac;
	c.probe_rows = c.rows_read * c.est.vec_sel;
	c.rows = joinrel->rows;
	foreach(lc, star->dims)
	{
		if (((TesseraStarDimPlan *) lfirst(lc))->fact_key2 != NULL)
			c.rows = Max(c.rows, clamp_row_est(TesseraStarRows(star, c.probe_rows) *
											   clauselist_selectivity(root, c.est.other_quals,
																	  fact->relid, JOIN_INNER,
																	  NULL)));
	}
	joinrel->rows = c.rows;
	c.private = list_make5(makeInteger(star->fact), desc, clauses, star->ext, star->filters);

	/*
	 * In parallel (the scan shared, the dimensions read by every process),
	 * and a serial path that can run in a parallel plan's process: with
	 * plans of the dimensions that are parallel-safe.
	 */
	parallel_ok = joinrel->consider_parallel && fact->consider_parallel &&
		TesseraStarParallelSafe(root, star, &safe_paths) &&
		is_parallel_safe(root, (Node *) extract_actual_clauses(fact->baserestrictinfo, false));
	foreach(lc, star->dims)
	{
		Path	   *path = ((TesseraStarDimPlan *) lfirst(lc))->path;

		dim_paths = lappend(dim_paths, path);
		cheapest_safe &= path->parallel_safe;
	}
	cpath = tjoin_make_path(root, joinrel, star, &c, dim_paths, 0, parallel_ok && cheapest_safe);
	if (cpath == NULL)
		return;
	add_path(joinrel, &cpath->path);
	if (!parallel_ok)
		return;
	if (!cheapest_safe && (cpath = tjoin_make_path(root, joinrel, star, &c, safe_paths, 0,
												   true)) != NULL)
		add_path(joinrel, &cpath->path);
	foreach(lc, fact->baserestrictinfo)
		params |= TesseraHasExecParam((Node *) lfirst_node(RestrictInfo, lc)->clause, NULL);
	workers = TesseraCoreWorkers(fact);
	if (!params && workers > 0 &&
		(cpath = tjoin_make_path(root, joinrel, star, &c, safe_paths, workers, true)) != NULL)
		add_partial_path(joinrel, &cpath->path);
}

/* The position of var in the scan tuple's columns, added if missing. */
static int
tjoin_scan_column(List **scan_tlist, Var *var)
{
	ListCell   *lc;

	foreach(lc, *scan_tlist)
	{
		Var		   *v = (Var *) lfirst_node(TargetEntry, lc)->expr;

		if (v->varno == var->varno && v->varattno == var->varattno)
			return foreach_current_index(lc);
	}
	*scan_tlist = lappend(*scan_tlist,
						  makeTargetEntry((Expr *) makeVar(var->varno, var->varattno,
														   var->vartype, var->vartypmod,
														   var->varcollid, 0),
										  list_length(*scan_tlist) + 1, NULL, false));
	return list_length(*scan_tlist) - 1;
}

/*
 * The plan: the scan tuple holds the columns of the table and of the
 * dimensions that the target list and the plan qual read; the executor
 * fills each from a decoded column of the table or an extra column.
 */
static Plan *
tjoin_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	Index		relid = intVal(list_nth(priv, TJOIN_PATH_RELID));
	List	   *ext = list_nth(priv, TJOIN_PATH_EXT);
	List	   *filters = list_nth(priv, TJOIN_PATH_FILTERS);
	RelOptInfo *fact = find_base_rel(root, relid);
	Relation	relation = table_open(planner_rt_fetch(relid, root)->relid, NoLock);
	int			natts = RelationGetNumberOfAttributes(relation);
	List	   *fact_quals = list_copy(fact->baserestrictinfo);
	List	   *skip = NIL,
			   *skip_descs = NIL,
			   *vector = NIL,
			   *vector_descs = NIL,
			   *rest = NIL,
			   *quals,
			   *scan_tlist = NIL,
			   *sources = NIL,
			   *needed = NIL,
			   *params = NIL,
			   *computed = NIL;
	Bitmapset  *attrs = NULL;
	ListCell   *lc;

	/* the table's quals, PostgreSQL's order, then the filters across dimensions */
	if (!TesseraOrderQuals(root, &fact_quals) || !TesseraOrderQuals(root, &filters))
		elog(ERROR, "TesseraJoin: quals no longer as planned");
	TesseraDescribeVectorQuals(extract_actual_clauses(fact_quals, false), relid, relation,
							   &skip, &skip_descs, &vector, &vector_descs, &rest);
	quals = list_concat(rest, extract_actual_clauses(filters, false));

	/*
	 * (the path's target, not tlist: a projection above, taking this node's
	 * tlist for its own, plans it with none)  The expressions a dimension
	 * computes for the filters (the extra columns that are not Vars) are
	 * columns of the scan tuple, which setrefs finds in the quals; the
	 * columns they read are not needed here.
	 */
	foreach(lc, ext)
	{
		if (!IsA(lfirst(lc), Var))
			computed = lappend(computed, lfirst(lc));
	}
	foreach(lc, pull_var_clause(TesseraStarStripComputed((Node *) list_make2(best_path->path.pathtarget->exprs,
																		 quals),
													 computed),
								0))
		(void) tjoin_scan_column(&scan_tlist, lfirst(lc));
	foreach(lc, computed)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));
	foreach(lc, scan_tlist)
	{
		Var		   *var = (Var *) lfirst_node(TargetEntry, lc)->expr;
		int			src = -1;

		if (!IsA(var, Var))
		{
			ListCell   *ec;

			foreach(ec, ext)
			{
				if (equal(lfirst(ec), var))
					src = natts + foreach_current_index(ec);
			}
		}
		else if (var->varno == relid)
			src = var->varattno - 1;
		else
		{
			ListCell   *ec;

			foreach(ec, ext)
			{
				Var		   *e = lfirst(ec);

				if (IsA(e, Var) && e->varno == var->varno && e->varattno == var->varattno)
					src = natts + foreach_current_index(ec);
			}
		}
		if (src < 0)
			elog(ERROR, "TesseraJoin: column of relation %u not gathered", var->varno);
		sources = lappend_int(sources, src);
	}

	/* the table's columns decoded: the scan tuple's, the keys', the vector quals' */
	pull_varattnos((Node *) scan_tlist, relid, &attrs);
	pull_varattnos((Node *) vector, relid, &attrs);
	foreach(lc, linitial(list_nth(priv, TJOIN_PATH_DESC)))
	{
		List	   *d = lfirst(lc);

		attrs = bms_add_member(attrs, desc_int(d, STAR_DIM_FACT_ATTIDX) + 1 -
							   FirstLowInvalidHeapAttributeNumber);
		if (desc_int(d, STAR_DIM_FACT_ATTIDX2) >= 0)
			attrs = bms_add_member(attrs, desc_int(d, STAR_DIM_FACT_ATTIDX2) + 1 -
								   FirstLowInvalidHeapAttributeNumber);
	}
	for (int i = 1; i <= natts; i++)
		if (bms_is_member(i - FirstLowInvalidHeapAttributeNumber, attrs))
			needed = lappend_int(needed, i);
	table_close(relation, NoLock);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = quals;
	cscan->scan.scanrelid = relid;
	cscan->flags = best_path->flags;
	cscan->methods = &TesseraJoinPlanMethods;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_plans = custom_plans;
	/* the parameters the filters read, for the executor to know them */
	(void) TesseraCollectParams((Node *) list_make2(skip, vector), &params);
	cscan->custom_exprs = params;
	cscan->custom_private = NIL;
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(relid));
	cscan->custom_private = lappend(cscan->custom_private, skip);
	cscan->custom_private = lappend(cscan->custom_private, skip_descs);
	cscan->custom_private = lappend(cscan->custom_private, vector);
	cscan->custom_private = lappend(cscan->custom_private, vector_descs);
	cscan->custom_private = lappend(cscan->custom_private,
									copyObject(list_nth(priv, TJOIN_PATH_DESC)));
	cscan->custom_private = lappend(cscan->custom_private,
									copyObject(linitial(list_nth(priv, TJOIN_PATH_CLAUSES))));
	cscan->custom_private = lappend(cscan->custom_private, sources);
	cscan->custom_private = lappend(cscan->custom_private, needed);
	Assert(list_length(cscan->custom_private) == TJOIN_PRIVATE_NFIELDS);
	return &cscan->scan.plan;
}

/* _PG_init: offer TesseraJoin paths. */
void
TesseraInstallJoinPaths(void)
{
	prev_set_join_pathlist = set_join_pathlist_hook;
	set_join_pathlist_hook = tessera_set_join_pathlist;
}
