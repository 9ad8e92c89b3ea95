/*-------------------------------------------------------------------------
 *
 * agg_path.c
 *	  Planning TesseraAgg: the create_upper_paths hook offers an aggregation
 *	  path over a single tessera table, serial and parallel, when every
 *	  aggregate, group key and qual is one the classifier accepts.
 *
 * NOTES
 *	  TesseraAgg is a CustomScan with scanrelid set and custom_scan_tlist =
 *	  [group keys, Aggrefs], so setrefs turns the final target list into
 *	  references to those columns.  Its quals, aggregates and their
 *	  descriptions travel in custom_private (setrefs would rewrite
 *	  custom_exprs against the aggregate tuple); custom_exprs holds only
 *	  the executor parameters they use, so that the node is rescanned when
 *	  one changes.
 *
 *	  In parallel: Final TesseraAgg <- Gather <- Parallel TesseraAgg.  The
 *	  partial node emits per group the keys and a bytea of its aggregate
 *	  states, marked in the plan as an Aggref of type bytea split
 *	  AGGSPLIT_INITIAL_SERIAL, so that setrefs matches the Gather's target
 *	  list to the partial node's.  Quals with executor parameters keep the
 *	  aggregation serial: their values would not reach the workers.
 *
 *	  The path is costed with the decoding a TesseraScan is charged, since
 *	  it runs serially in each process, and with a spill of its groups
 *	  (vector/spill.c) where the planner expects them to outgrow hash_mem.
 *
 * IDENTIFICATION
 *	  src/planner/agg_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <unistd.h>

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parse_coerce.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/plan.h"
#include "tessera/tessera.h"
#include "tessera/vector.h"
#include "planner.h"

bool		tessera_enable_custom_agg = true;
bool		tessera_enable_sliced_agg = true;
bool		tessera_enable_star_join = true;

static create_upper_paths_hook_type prev_create_upper_paths = NULL;

/* a TesseraAgg path's custom_private */
typedef enum TaggPathPrivate
{
	TAGG_PATH_RELID,
	TAGG_PATH_AGGS,
	TAGG_PATH_GROUP_VARS,
	TAGG_PATH_MODE,
	TAGG_PATH_DISTINCT_VAR,		/* count(DISTINCT)'s column, or NULL */
	TAGG_PATH_GROUPS,			/* groups expected (with the DISTINCT column) */
	TAGG_PATH_STAR,				/* a star join: [description, clauses], or NIL */
	TAGG_PATH_ROW_AGGS,			/* the aggregates and group keys as the row */
	TAGG_PATH_ROW_GROUP_VARS,	/* reads them (star joins rewritten) */
	TAGG_PATH_SOURCE_ATTNUMS,	/* a foreign table's batch source: the columns
								 * read; NIL for a tessera table */
	TAGG_PATH_ROW_QUALS,		/* quals evaluated row by row, in order */
	TAGG_PATH_CARRIED,			/* the last this many group keys are carried */
	TAGG_PATH_SLICES			/* > 1: sliced under Gather (TAGG_PRIVATE_SLICES) */
} TaggPathPrivate;

static Plan *tagg_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods tagg_path_methods = {
	.CustomName = "TesseraAgg",
	.PlanCustomPath = tagg_plan_path,
};

typedef struct TAggFindContext
{
	List	   *aggs;
	List	   *group_vars;		/* GROUP BY columns and expressions: all that
								 * may appear outside aggregates */
	bool		ok;
	Var		   *distinct_var;	/* the column of every count(DISTINCT), or NULL */
	TesseraStarPlan *star;		/* a star join, or NULL */
	List	   *row_aggs;		/* aggs and group_vars as the executor's row */
	List	   *row_group_vars; /* reads them (TesseraStarRewrite) */
	int			ndependent;		/* the last of group_vars: columns that depend
								 * on the GROUP BY keys (tagg_dependent) */
	List	   *row_quals;		/* quals with no vector form (RestrictInfos,
								 * in PostgreSQL's order) */
	int			ncarried;		/* the last of group_vars: keys that are
								 * functions of the others (tagg_carry_keys) */
} TAggFindContext;

/*
 * The fraction of rows whose value of expr's one column is new (its
 * distinct values over rows); 1 for an expression of several columns or
 * of a star join's dimension.
 */
static double
tagg_distinct_frac(PlannerInfo *root, RelOptInfo *rel, Relation relation, Node *expr,
				   double rows)
{
	List	   *vars = pull_var_clause(expr, 0);
	Var		   *var;

	if (list_length(vars) != 1 || rows <= 1)
		return 1.0;
	var = linitial(vars);
	if (var->varno != rel->relid || var->varattno <= 0 ||
		var->varattno > RelationGetNumberOfAttributes(relation))
		return 1.0;
	return Min(1.0, TesseraEstimateGroups(root, vars, rows) / rows);
}

/*
 * What evaluating the computed expressions costs per row, in operators
 * (the first nkeys are group keys, the rest aggregate arguments).  An
 * aggregate's string-valued argument (min(upper(s))) goes through
 * PostgreSQL's evaluator a row at a time, as heap's plan pays a tuple's
 * cost for each row: charged so, for each value the column does not repeat
 * (a dictionary entry or the memo answers repeats).  Charged at a tenth of
 * an operator, a scan of 2M md5 strings' max(upper(note)) stayed serial at
 * 0.75x heap's time.
 */
static double
tagg_computed_work(PlannerInfo *root, RelOptInfo *rel, Relation relation, List *computed,
				   int nkeys, double rows)
{
	double		work = 0;
	ListCell   *lc;

	foreach(lc, computed)
	{
		QualCost	qc;

		cost_qual_eval_node(&qc, lfirst(lc), root);
		work += qc.per_tuple / cpu_operator_cost;
		if (foreach_current_index(lc) >= nkeys &&
			TypeCategory(exprType(lfirst(lc))) == TYPCATEGORY_STRING)
			work += tagg_distinct_frac(root, rel, relation, lfirst(lc), rows) *
				cpu_tuple_cost / cpu_operator_cost;
	}
	return work;
}

/* The groups expected: those of the real keys (not the dependent ones). */
static double
tagg_estimate_groups(PlannerInfo *root, TAggFindContext *cxt, double rows)
{
	List	   *keys = list_truncate(list_copy(cxt->group_vars),
									 list_length(cxt->group_vars) - cxt->ndependent);

	return TesseraEstimateGroups(root, keys, rows);
}

/*
 * A column outside aggregates that is no GROUP BY key: the parser let it
 * through because the keys include its table's primary key, and the
 * planner took it out of the GROUP BY as redundant (TPC-H q10's c_name,
 * c_acctbal... beside c_custkey).  Its value is the same in every row of
 * a group, so it becomes a further key: the groups are the same, and the
 * group's row carries its value.  False if it cannot be a key.
 */
static bool
tagg_dependent(Var *var, TAggFindContext *cxt)
{
	Node	   *row_expr;

	if (var->varlevelsup != 0 || var->varattno <= 0 || cxt->group_vars == NIL ||
		list_length(cxt->group_vars) >= INDEX_MAX_KEYS ||
		TesseraKeyDescribe((Node *) var, 0) == NIL)
		return false;
	row_expr = TesseraStarRewrite(cxt->star, (Node *) var);
	if (row_expr == NULL || !IsA(row_expr, Var))
		return false;
	cxt->group_vars = lappend(cxt->group_vars, var);
	cxt->row_group_vars = lappend(cxt->row_group_vars, row_expr);
	cxt->ndependent++;
	return true;
}

/*
 * Can group key expr (as the row reads it) be carried rather than grouped
 * on?  If it is an expression of nothing but plain column keys among the
 * first nreal of row_group_vars that are grouped by their values' exact
 * integers or bytes (integers, dates, timestamps; text and varchar in a
 * deterministic collation; numeric(p, s)), every row of a group has the
 * same inputs, hence the same value (TesseraComputable: nothing volatile).
 */
static bool
tagg_carriable(Node *expr, List *row_group_vars, int nreal)
{
	List	   *vars;
	ListCell   *lc;

	if (IsA(expr, Var))
		return false;
	vars = pull_var_clause(expr, PVC_INCLUDE_PLACEHOLDERS);
	if (vars == NIL)
		return false;
	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);
		bool		found = false;

		if (!IsA(var, Var) || var->varlevelsup != 0)
			return false;
		for (int i = 0; i < nreal && !found; i++)
		{
			Var		   *key = list_nth(row_group_vars, i);
			List	   *desc;

			if (!IsA(key, Var) || key->varno != var->varno || key->varattno != var->varattno)
				continue;
			desc = TesseraKeyDescribe((Node *) key, 0);
			found = desc != NIL && (desc_int(desc, KEY_DESC_KIND) == TAGG_KEY_INT ||
									desc_int(desc, KEY_DESC_KIND) == TAGG_KEY_TEXT);
		}
		if (!found)
			return false;
	}
	return true;
}

/*
 * Keys that are functions of other keys need not be grouped on: an
 * expression of column keys (ClickBench q35's ClientIP - 1 beside
 * ClientIP; tagg_carriable), and the columns that depend on the keys
 * through a primary key (tagg_dependent: one row of their table per
 * group).  Such a key is the same in every row of a group: the executor
 * computes it for the row that makes each new group (every group's first
 * row, so an error it raises is raised as PostgreSQL would), stores it
 * with the group and never hashes or compares it (TesseraGroupsCarry,
 * TesseraGroupsFillCarried).  They move to the end of the keys:
 * the expressions, then the dependent columns, already last.  Not with
 * count(DISTINCT) (its column is the last key) nor a left join (its rows
 * without a match are grouped apart from the keys).
 */
static void
tagg_carry_keys(TAggFindContext *cxt)
{
	int			nreal = list_length(cxt->group_vars) - cxt->ndependent;
	List	   *vars = NIL,
			   *row_vars = NIL,
			   *carried = NIL,
			   *carried_row = NIL;
	ListCell   *lc1,
			   *lc2;

	cxt->ncarried = 0;
	if (cxt->distinct_var != NULL || (cxt->star != NULL && cxt->star->left))
		return;
	forboth(lc1, cxt->group_vars, lc2, cxt->row_group_vars)
	{
		int			i = foreach_current_index(lc1);

		if (i >= nreal)
			break;
		if (tagg_carriable(lfirst(lc2), cxt->row_group_vars, nreal))
		{
			carried = lappend(carried, lfirst(lc1));
			carried_row = lappend(carried_row, lfirst(lc2));
		}
		else
		{
			vars = lappend(vars, lfirst(lc1));
			row_vars = lappend(row_vars, lfirst(lc2));
		}
	}
	if (vars == NIL)
		return;
	cxt->ncarried = list_length(carried) + cxt->ndependent;
	cxt->group_vars = list_concat(list_concat(vars, carried),
								  list_copy_tail(cxt->group_vars, nreal));
	cxt->row_group_vars = list_concat(list_concat(row_vars, carried_row),
									  list_copy_tail(cxt->row_group_vars, nreal));
}

/* Collect the Aggrefs of the target; any other column is not ours. */
static bool
tagg_find(Node *node, TAggFindContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		cxt->aggs = list_append_unique(cxt->aggs, node);
		return false;
	}
	{
		ListCell   *lc;

		foreach(lc, cxt->group_vars)
		{
			Node	   *gv = lfirst(lc);

			if (IsA(node, Var) && IsA(gv, Var) && ((Var *) node)->varlevelsup == 0 &&
				((Var *) node)->varno == ((Var *) gv)->varno &&
				((Var *) node)->varattno == ((Var *) gv)->varattno)
				return false;
			if (!IsA(gv, Var) && equal(node, gv))
				return false;
		}
	}
	if (IsA(node, Var) && tagg_dependent((Var *) node, cxt))
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc) ||
		IsA(node, WindowFunc) || IsA(node, SubLink) || IsA(node, SubPlan))
	{
		cxt->ok = false;
		return true;
	}
	return expression_tree_walker(node, tagg_find, cxt);
}

/*
 * The GROUP BY keys, if the query groups by columns or computable
 * expressions (TesseraComputable) of types we can key on, with their
 * types' own equality.
 */
static bool
tagg_group_vars(PlannerInfo *root, Index relid, TAggFindContext *cxt)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	cxt->group_vars = NIL;
	cxt->row_group_vars = NIL;
	if (parse->groupingSets != NIL)
		return false;
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, parse->targetList);
		Node	   *row_expr = TesseraStarRewrite(cxt->star, expr);
		Var		   *var = (Var *) row_expr;
		TypeCacheEntry *tc;

		if (row_expr == NULL || list_length(cxt->group_vars) >= INDEX_MAX_KEYS ||
			TesseraKeyDescribe(expr, 0) == NIL)
			return false;
		if (IsA(row_expr, Var) ?
			(var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0) :
			!TesseraComputable(row_expr, relid))
			return false;
		tc = lookup_type_cache(getBaseType(exprType(expr)), TYPECACHE_EQ_OPR);
		if (sgc->eqop != tc->eq_opr)
			return false;
		cxt->group_vars = lappend(cxt->group_vars, expr);
		cxt->row_group_vars = lappend(cxt->row_group_vars, row_expr);
	}
	return true;
}

/*
 * Is a group key an expression?  PostgreSQL estimates the groups of an
 * expression without statistics on it as those of its columns
 * (date_trunc('month', ts) as many as ts has values), so a grouping on one
 * is not refused for that estimate: if it really outgrows hash_mem, it
 * spills.
 */
static bool
tagg_has_computed_key(List *group_vars)
{
	ListCell   *lc;

	foreach(lc, group_vars)
	{
		if (!IsA(lfirst(lc), Var))
			return true;
	}
	return false;
}

/*
 * The descriptions of the group keys (as the row reads them), computed
 * ones -- expressions and a star join's extra columns -- added to
 * *computed.
 */
static List *
tagg_describe_keys(List *row_group_vars, TesseraStarPlan *star, List **computed)
{
	List	   *descs = NIL;
	ListCell   *lc;

	foreach(lc, row_group_vars)
	{
		Node	   *expr = lfirst(lc);
		bool		column = IsA(expr, Var) &&
			!TesseraStarExtra(star, ((Var *) expr)->varattno);

		descs = lappend(descs, TesseraKeyDescribe(expr, column ?
												  ((Var *) expr)->varattno - 1 :
												  TesseraComputedColumn(computed, expr)));
	}
	return descs;
}

/* The relation's own columns of a pull_varattnos set (no extra columns). */
static Bitmapset *
tagg_own_columns(Bitmapset *attrs, TesseraStarPlan *star)
{
	Bitmapset  *own = NULL;
	int			a = -1;

	if (star == NULL)
		return attrs;
	while ((a = bms_next_member(attrs, a)) >= 0)
		if (!TesseraStarExtra(star, a + FirstLowInvalidHeapAttributeNumber))
			own = bms_add_member(own, a);
	return own;
}

static bool
tagg_has_exec_param(List *rinfos)
{
	ListCell   *lc;

	foreach(lc, rinfos)
	{
		if (TesseraHasExecParam((Node *) lfirst_node(RestrictInfo, lc)->clause, NULL))
			return true;
	}
	return false;
}

static Index
tagg_max_security_level(List *rinfos)
{
	Index		level = 0;
	ListCell   *lc;

	foreach(lc, rinfos)
		level = Max(level, lfirst_node(RestrictInfo, lc)->security_level);
	return level;
}

/* The partial node's column of serialized states, as an Aggref-like marker. */
static Aggref *
tagg_state_marker(List *aggs)
{
	Aggref	   *marker = copyObject(linitial_node(Aggref, aggs));

	marker->aggsplit = AGGSPLIT_INITIAL_SERIAL;
	marker->aggtype = BYTEAOID;
	return marker;
}

/*
 * What every TesseraAgg path carries: what it aggregates (custom_private,
 * TaggPathPrivate order) and its methods.  A serial or final path, which
 * stands for the whole sequential read of the table, is disabled as a
 * sequential scan would be; it projects where PostgreSQL lets it.
 */
static void
tagg_path_finish(CustomPath *cpath, Index relid, TAggFindContext *cxt, TAggMode mode,
				 double groups, List *star, List *source_attnums)
{
	if (mode != TAGG_PARTIAL)
	{
		if (!enable_seqscan)
		{
			cpath->path.startup_cost += disable_cost;
			cpath->path.total_cost += disable_cost;
		}
#ifdef CUSTOMPATH_SUPPORT_PROJECTION
		cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
#endif
	}
	cpath->custom_private = list_make5(makeInteger(relid), cxt->aggs, cxt->group_vars,
									   makeInteger(mode), cxt->distinct_var);
	cpath->custom_private = lappend(cpath->custom_private,
									makeInteger((int) Min(groups, (double) (PG_INT32_MAX / 2))));
	cpath->custom_private = lappend(cpath->custom_private, star);
	cpath->custom_private = lappend(cpath->custom_private, cxt->row_aggs);
	cpath->custom_private = lappend(cpath->custom_private, cxt->row_group_vars);
	cpath->custom_private = lappend(cpath->custom_private, source_attnums);
	cpath->custom_private = lappend(cpath->custom_private,
									extract_actual_clauses(cxt->row_quals, false));
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(cxt->ncarried));
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(0));
	cpath->methods = &tagg_path_methods;
}

/*
 * The rows the aggregation returns: its groups, less those HAVING removes
 * (as PostgreSQL's cost_agg estimates them).  An IN (SELECT … GROUP BY …
 * HAVING …) above it is sized by this: TPC-H q18's 1.3M groups of which
 * HAVING keeps 57 made a semi join of 5.2M rows.
 */
static double
tagg_output_rows(PlannerInfo *root, double groups)
{
	if (root->parse->havingQual == NULL)
		return groups;
	return clamp_row_est(groups * clauselist_selectivity(root, (List *) root->parse->havingQual,
														 0, JOIN_INNER, NULL));
}

/*
 * Final TesseraAgg <- Gather <- partial TesseraAgg (parallel-aware): the
 * same aggregation, with the decoding shared among the processes.
 */
static void
tagg_add_parallel_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					   CustomPath *serial, TAggFindContext *cxt, int workers, double groups,
					   double inner_groups, double rows_read, double pages_read,
					   Cost build_cost, List *star, List *dim_paths, List *source_attnums)
{
	PathTarget *target = create_empty_pathtarget();
	CustomPath *partial = makeNode(CustomPath);
	CustomPath *final = makeNode(CustomPath);
	GatherPath *gather;
	ListCell   *lc;
	double		divisor = TesseraParallelDivisor(workers);
	double		partial_rows = inner_groups * (workers + 1);
	Cost		run;

	foreach(lc, cxt->group_vars)
		add_column_to_pathtarget(target, lfirst(lc), 0);
	/* count(DISTINCT col): the partial groups are keyed on col too */
	if (cxt->distinct_var != NULL)
		add_column_to_pathtarget(target, (Expr *) copyObject(cxt->distinct_var), 0);
	add_column_to_pathtarget(target, (Expr *) tagg_state_marker(cxt->aggs), 0);
	set_pathtarget_cost_width(root, target);

	partial->path.pathtype = T_CustomScan;
	partial->path.parent = output_rel;
	partial->path.pathtarget = target;
	partial->path.parallel_aware = true;
	partial->path.parallel_safe = true;
	partial->path.parallel_workers = workers;
	partial->path.rows = partial_rows;
	/* the serial cost, less the disk, shared among the processes */
	run = serial->path.startup_cost - seq_page_cost * pages_read - build_cost;

	/*
	 * Each dimension is read by one process, by its parallel-safe path,
	 * into a table the others then read too (executor/star_shared.c),
	 * before any process probes; the processes read different dimensions
	 * at once.
	 */
	build_cost = 0;
	foreach(lc, dim_paths)
		build_cost += TesseraStarDimBuildCost(root, lfirst(lc),
										  ((TesseraStarDimPlan *) list_nth(cxt->star->dims,
																		   foreach_current_index(lc)))->kind);
	build_cost = TesseraStarParallelBuildCost(root, cxt->star, dim_paths, build_cost, divisor);
	partial->path.startup_cost = seq_page_cost * pages_read + run / divisor + build_cost;
	partial->path.total_cost = partial->path.startup_cost + cpu_tuple_cost * inner_groups;
	/* a star join: one process reads the dimensions into tables all read */
	partial->custom_paths = dim_paths;
	tagg_path_finish(partial, input_rel->relid, cxt, TAGG_PARTIAL, inner_groups, star,
					 source_attnums);

	gather = create_gather_path(root, output_rel, &partial->path, target, NULL, &partial_rows);

	final->path.pathtype = T_CustomScan;
	final->path.parent = output_rel;
	final->path.pathtarget = output_rel->reltarget;
	final->path.parallel_safe = false;
	final->path.rows = tagg_output_rows(root, groups);
	/*
	 * merging a row per group and process: the row's keys looked up in a
	 * table of all the groups (a cache miss where there are many), its
	 * states read from their bytes and folded in: 40% of what moving it
	 * between processes is priced at (parallel_tuple_cost, 0.1: four rows'
	 * worth), and an operator per key and aggregate.  Priced with
	 * parallel_tuple_cost since a partial row is only received and merged
	 * in a parallel plan (setting it to 0 makes that free, as it makes the
	 * move free).  (Was an operator per aggregate: ClickBench's 10M-row
	 * GROUP BY ClientIP, 475,000 groups, went parallel by 0.3% of its cost
	 * and merged 1.34M partial groups in 350 ms: 755 ms, serially 600 ms.)
	 */
	final->path.startup_cost = gather->path.total_cost +
		partial_rows * (0.4 * parallel_tuple_cost +
						(list_length(cxt->group_vars) + list_length(cxt->aggs)) * cpu_operator_cost);
	final->path.total_cost = final->path.startup_cost + cpu_tuple_cost * groups;
	final->custom_paths = list_make1(gather);
	tagg_path_finish(final, input_rel->relid, cxt, TAGG_FINAL, inner_groups, star,
					 source_attnums);
	add_path(output_rel, &final->path);
}

/*
 * Gather <- sliced TesseraAgg (parallel-aware): every process reads and
 * decodes the whole table but groups only the rows whose keys hash into
 * the slice it takes (executor/agg_node.c), one slice per process, and
 * finishes those groups itself; no group is merged across processes.  It
 * pays a full decode per process for the grouping shared out, where the
 * partial plan above shares the decode and then merges every group each
 * process made, in one process: the sliced plan wins where there are
 * many groups and they cost more than the decode (ClickBench's WatchID,
 * ClientIP, a group per row).  Each process emits its slice's groups
 * finished, HAVING applied, and with a top-N of groups only the best of
 * them, so the Gather moves a few rows.  Not for star joins, memos or
 * foreign tables.
 */
static void
tagg_add_sliced_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					 CustomPath *serial, TAggFindContext *cxt, int workers, double groups,
					 double inner_groups, double rows_read, Cost decode_cost)
{
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bool		counts_only = cxt->distinct_var != NULL &&
		list_length(cxt->aggs) <= TAGG_SLICE_COUNTS;
	ListCell   *lc;
	int			nslices;
	CustomPath *sliced = makeNode(CustomPath);
	double		out_rows = tagg_output_rows(root, groups);
	List	   *topn = TesseraAggTopNPlan(root, cxt->aggs, cxt->group_vars);
	int			group_limit;
	Cost		group_cost,
				miss_cost = 0;
	GatherPath *gather;

	/*
	 * No GROUP BY: sliced by count(DISTINCT)'s values, each slice's counts
	 * added up (agg_methods.c), so counts of its column alone
	 */
	foreach(lc, cxt->aggs)
	{
		Aggref	   *agg = lfirst(lc);

		counts_only &= agg->aggdistinct != NIL && agg->aggfnoid == F_COUNT_ANY;
	}

	/*
	 * No more processes than CPUs: each reads the whole table, so one past
	 * them adds a decode and takes no time off (ClickBench's 10M WatchID,
	 * ClientIP on 2 CPUs: 3 slices 2.56 s, 2 slices 2.12 s, serial 3.31 s)
	 */
	if (cpus > 0 && workers + (parallel_leader_participation ? 1 : 0) > cpus)
		workers = Max((int) cpus - (parallel_leader_participation ? 1 : 0), 1);
	nslices = parallel_leader_participation ? workers + 1 : workers;
	/*
	 * (HAVING and the target list are evaluated in every process.)  Few
	 * groups of the GROUP BY keys, by which the rows are sliced, share the
	 * rows out unevenly: a count(DISTINCT) of many values in a few hundred
	 * groups (ClickBench's MobilePhoneModel, count(DISTINCT UserID)) went
	 * from 0.13 s to 0.19 s sliced.
	 */
	/* (a LIMIT with no ORDER BY: the serial node makes only the groups it takes) */
	group_limit = TesseraAggGroupLimit(root, cxt->group_vars, cxt->distinct_var);
	if (group_limit > 0 && group_limit < groups)
		return;
	if (nslices < 2 || cxt->star != NULL || !output_rel->consider_parallel ||
		(cxt->group_vars != NIL ? groups : counts_only ? inner_groups : 0) < 500.0 * nslices)
		return;
	/* what a top-N of groups hands up: its rows per slice */
	if (topn != NIL)
		out_rows = Min(out_rows, (double) intVal(linitial(topn)) * nslices);
	/*
	 * The grouping, shared out, and each row's keys hashed once more to find
	 * its slice.  The serial path's price of grouping a row is an operator or
	 * two whatever the groups; past the CPU caches each row's lookup waits on
	 * memory (ClickBench 10M: GROUP BY UserID, 620,000 groups, 50 ns a row;
	 * AVG(UserID) 5 ns), which is what the slices share out: counted here as
	 * 4 more operators a row past 65,536 groups, 8 past 262,144, in both
	 * runs, and the serial path's price scaled by their ratio, so that the
	 * choice between this plan and the serial one sees it.  The table's
	 * pages are priced once: the processes read them at the same time, all
	 * but one from memory.
	 */
	group_cost = Max(serial->path.startup_cost - decode_cost, 0);
	if (inner_groups > 262144)
		miss_cost = rows_read * 8 * cpu_operator_cost;
	else if (inner_groups > 65536)
		miss_cost = rows_read * 4 * cpu_operator_cost;
	sliced->path.pathtype = T_CustomScan;
	sliced->path.parent = output_rel;
	sliced->path.pathtarget = output_rel->reltarget;
	sliced->path.parallel_aware = true;
	sliced->path.parallel_safe = true;
	sliced->path.parallel_workers = workers;
	sliced->path.rows = out_rows;
	sliced->path.startup_cost = serial->path.startup_cost *
		(decode_cost + (group_cost + miss_cost) / nslices +
		 rows_read * 0.5 * Max(list_length(cxt->group_vars), 1) * cpu_operator_cost) /
		Max(decode_cost + group_cost + miss_cost, 1.0);
	sliced->path.total_cost = sliced->path.startup_cost + cpu_tuple_cost * groups / nslices;
	tagg_path_finish(sliced, input_rel->relid, cxt, TAGG_SERIAL, inner_groups, NIL, NIL);
	intVal(llast(sliced->custom_private)) = nslices;
	gather = create_gather_path(root, output_rel, &sliced->path, output_rel->reltarget, NULL,
								&out_rows);
	add_path(output_rel, &gather->path);
}

/*
 * Groups past hash_mem, as the executor counts it (count(DISTINCT)s alone
 * keep no states), spill (vector/spill.c): each group is written to a hash
 * partition with its states and merged back into the table with its
 * partition's others.  Charged as writing and reading their bytes and
 * hashing each once more (a partition sorted because it did not fit is
 * not foreseen: the partitions are sized for the groups expected).  The
 * sorted spill it replaced already beat PostgreSQL's own plans for the
 * same grouping (TPC-H SF1 lineitem, work_mem 64 MB: 1.5M groups of
 * l_orderkey 2.0 s vs a GroupAggregate over the primary key 5.4 s; 2M
 * one-row groups 3.9 s vs a HashAggregate of 21 batches 4.7 s); the
 * partitions take ClickBench's WatchID, ClientIP (990k groups of a million
 * rows, 128 MB of hash_mem) from 0.89 s to 0.70 s, PostgreSQL's
 * HashAggregate of 5 batches 0.79 s.  So it is not refused.  PostgreSQL estimates an expression key's groups as its
 * column's values: no spill is charged for one.
 */
static Cost
tagg_spill_cost(TAggFindContext *cxt, List *inner_keys, double inner_groups, bool only_distinct)
{
	double		group_bytes = (only_distinct ? 0 : list_length(cxt->aggs)) * sizeof(TAggState) + 64;

	/*
	 * (with a quarter more groups than estimated: a sampled n_distinct of a
	 * large table tends low -- TPC-H's l_orderkey, 1.5M values, is sampled
	 * as 1.17-1.31M -- and the table grows a quarter at a time past a
	 * million groups; at 1.17M, q18's serial grouping was priced as fitting,
	 * taken over the sliced plan, and spilled: 0.45 -> 0.91 s)
	 */
	if (inner_keys == NIL || inner_groups * 1.25 * group_bytes <= (double) get_hash_memory_limit() ||
		tagg_has_computed_key(cxt->row_group_vars))
		return 0;
	return 2 * seq_page_cost * (inner_groups * group_bytes / BLCKSZ) +
		inner_groups * (4 * cpu_operator_cost + cpu_tuple_cost);
}

/*
 * Check the aggregates of cxt (cxt->ok false if one is not ours), note
 * count(DISTINCT)'s column and the columns to decode; the work per row kept,
 * in operators.
 */
/*
 * Does expr read columns of relation fact, and no other?  (Not pull_varnos:
 * since 16 a Var above the outer join is marked with the join's relid too.)
 */
static bool
tagg_of_fact_only(Node *expr, Index fact)
{
	List	   *vars = pull_var_clause(expr, PVC_INCLUDE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varno != fact || var->varlevelsup != 0)
			return false;
	}
	return vars != NIL;
}

/*
 * A left join's dimension rows without a match are groups of their own,
 * computed from the dimension row alone: every GROUP BY column is one of
 * the dimension's, its key among them (so no row of the table falls in
 * such a group), and every aggregate reads the table's columns through a
 * strict expression with no FILTER, so that over the null-extended row it
 * is NULL, or 0 for a count (1 for count(*)).
 */
static bool
tagg_left_ok(TAggFindContext *cxt)
{
	TesseraStarDimPlan *dim = linitial(cxt->star->dims);
	bool		has_key = false;
	ListCell   *lc;

	foreach(lc, cxt->group_vars)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varno != dim->dim_key->varno || var->varlevelsup != 0)
			return false;
		has_key |= var->varattno == dim->dim_key->varattno;
	}
	if (!has_key)
		return false;
	foreach(lc, cxt->aggs)
	{
		Aggref	   *agg = lfirst(lc);
		Node	   *arg;

		if (agg->aggfilter != NULL)
			return false;
		if (agg->aggstar)
			continue;
		if (list_length(agg->args) != 1)
			return false;
		arg = (Node *) linitial_node(TargetEntry, agg->args)->expr;
		if (!tagg_of_fact_only(arg, cxt->star->fact) || contain_nonstrict_functions(arg))
			return false;
	}
	return true;
}

/*
 * The executor's description of a left join's groups without a match
 * (StarLeftAgg): the extra column of each GROUP BY column, and what each
 * aggregate is over the null-extended row.
 */
static List *
tagg_left_desc(List *row_group_vars, List *specs, int natts)
{
	List	   *keys = NIL,
			   *aggs = NIL;
	ListCell   *lc;

	foreach(lc, row_group_vars)
		keys = lappend_int(keys, lfirst_node(Var, lc)->varattno - natts - 1);
	foreach(lc, specs)
	{
		TAggKind	kind = (TAggKind) desc_int(lfirst(lc), AGG_DESC_KIND);

		aggs = lappend_int(aggs, kind == TAGG_COUNT_STAR ? STAR_LEFT_ONE :
						   kind == TAGG_COUNT || kind == TAGG_COUNT_DISTINCT ? STAR_LEFT_ZERO :
						   STAR_LEFT_NULL);
	}
	return list_make2(keys, aggs);
}

static double
tagg_check_aggs(TAggFindContext *cxt, RelOptInfo *input_rel, Relation relation,
				Bitmapset **attrs, bool *has_float_sum, bool *only_distinct, List **computed)
{
	double		work = 0;
	ListCell   *lc;

	cxt->row_aggs = NIL;
	foreach(lc, cxt->aggs)
	{
		Aggref	   *agg = lfirst(lc);
		Aggref	   *row_agg = (Aggref *) TesseraStarRewrite(cxt->star, (Node *) agg);
		List	   *desc;
		TAggKind	kind;
		int			attidx;
		Oid			argtype;

		/* a FILTER is a vector qual on the table's own columns */
		if (row_agg == NULL ||
			!equal(row_agg->aggfilter, agg->aggfilter))
		{
			cxt->ok = false;
			continue;
		}
		cxt->row_aggs = lappend(cxt->row_aggs, row_agg);
		desc = TesseraAggDescribe(row_agg, input_rel->relid, relation, computed);
		if (desc == NIL)
		{
			cxt->ok = false;
			continue;
		}
		kind = (TAggKind) desc_int(desc, AGG_DESC_KIND);
		attidx = desc_int(desc, AGG_DESC_ATTIDX);
		argtype = (Oid) desc_int(desc, AGG_DESC_ARGTYPE);
		if (kind != TAGG_COUNT_DISTINCT)
			*only_distinct = false;
		if (kind == TAGG_COUNT_DISTINCT)
		{
			/* one column for every count(DISTINCT): it becomes a group key */
			Var		   *dv = (Var *) ((TargetEntry *) linitial(agg->args))->expr;

			if (cxt->distinct_var != NULL && !equal(cxt->distinct_var, dv))
				cxt->ok = false;
			cxt->distinct_var = dv;
			pull_varattnos((Node *) dv, input_rel->relid, attrs);
			continue;
		}

		/*
		 * Float sums are added in scan order to give PostgreSQL's digits;
		 * count(DISTINCT)'s roll-up would add them in another order.
		 */
		if ((kind == TAGG_SUM || kind == TAGG_AVG) &&
			(argtype == FLOAT4OID || argtype == FLOAT8OID))
			*has_float_sum = true;

		/*
		 * With no qual and no group, counts and min/max come from chunk
		 * metadata: nothing to decode.  Otherwise the argument's columns are
		 * decoded, and the work per row kept is a tenth of an operator per
		 * aggregate, more for exact numeric sums and per arithmetic operator.
		 */

		if (input_rel->baserestrictinfo != NIL || cxt->group_vars != NIL ||
			cxt->star != NULL ||
			agg->aggfilter != NULL || kind == TAGG_SUM || kind == TAGG_AVG ||
			argtype == FLOAT4OID || argtype == FLOAT8OID)
		{
			pull_varattnos((Node *) agg, input_rel->relid, attrs);
			work += (argtype == NUMERICOID ? 0.3 : 0.1) +
				0.5 * (list_length(pull_var_clause((Node *) agg->args, 0)) - (attidx >= 0 ? 1 : 0)) +
				0.1 * list_length(make_ands_implicit((Expr *) agg->aggfilter));
		}
	}
	if (cxt->star != NULL && cxt->star->left && !tagg_left_ok(cxt))
		cxt->ok = false;
	return work;
}

/*
 * The relation TesseraAgg scans: input_rel itself, or the tessera table of
 * a star join (*star filled), or NULL.
 */
static RelOptInfo *
tagg_scanned_rel(PlannerInfo *root, RelOptInfo *input_rel, TesseraStarPlan *star,
				 TesseraStarPlan **star_out)
{
	RangeTblEntry *rte;

	*star_out = NULL;
	if (input_rel->reloptkind == RELOPT_JOINREL)
	{
		if (!tessera_enable_star_join || !TesseraStarFind(root, input_rel, star, false))
			return NULL;
		*star_out = star;
		return find_base_rel(root, star->fact);
	}
	if (input_rel->reloptkind != RELOPT_BASEREL || input_rel->lateral_relids != NULL)
		return NULL;
	rte = planner_rt_fetch(input_rel->relid, root);
	if (rte->rtekind != RTE_RELATION ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_FOREIGN_TABLE) ||
		rte->tablesample != NULL || rte->inh)
		return NULL;
	return input_rel;
}

/*
 * In parallel: a partial TesseraAgg in every process of a parallel scan,
 * gathered, merged by a final one.  Quals referring to executor parameters
 * stay serial: they travel in custom_private, where the parallel executor
 * would not know to pass their values to workers.
 */
static void
tagg_try_parallel(PlannerInfo *root, RelOptInfo *rel, RelOptInfo *output_rel, CustomPath *cpath,
				  TAggFindContext *cxt, double groups, double inner_groups, TscanEstimate *est,
				  Cost run_cost, Cost build_cost, List *star_info, List *source_attnums)
{
	List	   *dim_paths = NIL;
	int			workers;

	if (!rel->consider_parallel || max_parallel_workers_per_gather <= 0 ||
		!TesseraStarParallelSafe(root, cxt->star, &dim_paths) ||
		cxt->aggs == NIL ||		/* the partial states ride in an Aggref */
		tagg_has_exec_param(rel->baserestrictinfo) ||
		!is_parallel_safe(root, (Node *) extract_actual_clauses(cxt->row_quals, false)) ||
		TesseraHasExecParam((Node *) cxt->aggs, NULL) ||
		TesseraHasExecParam((Node *) cxt->group_vars, NULL) ||
		run_cost <= 5 * parallel_setup_cost)
		return;
	workers = TesseraCoreWorkers(rel);
	if (workers <= 0)
		return;
	tagg_add_parallel_path(root, rel, output_rel, cpath, cxt, workers, groups, inner_groups,
						   est->read_frac * rel->tuples, est->phys_pages * est->read_frac,
						   build_cost, star_info, dim_paths, source_attnums);
	if (source_attnums == NIL && tessera_enable_sliced_agg)
		tagg_add_sliced_path(root, rel, output_rel, cpath, cxt, workers, groups, inner_groups,
							 est->read_frac * rel->tuples * est->vec_sel,
							 seq_page_cost * est->phys_pages * est->read_frac +
							 est->read_frac * rel->tuples *
							 (est->decode_ops * 0.25 + est->nvec * 0.1) * cpu_operator_cost);
}

/*
 * The columns a foreign table's batch source reads: every one the
 * aggregation uses, also those of counts and min/max (which a tessera
 * table answers from its chunks' summaries); [0] for none (count(*)).
 * False if it would need a system column or the whole row.
 */
static bool
tagg_source_attnums(TAggFindContext *cxt, RelOptInfo *rel, Bitmapset *attrs, List **attnums)
{
	int			x = -1;
	ListCell   *lc;

	pull_varattnos((Node *) cxt->aggs, rel->relid, &attrs);
	/* a star join's keys in the table, which its probes read */
	foreach(lc, cxt->star != NULL ? cxt->star->dims : NIL)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		pull_varattnos((Node *) dim->fact_key, rel->relid, &attrs);
		pull_varattnos((Node *) dim->fact_key2, rel->relid, &attrs);
		pull_varattnos((Node *) dim->ne_fact, rel->relid, &attrs);
	}
	*attnums = NIL;
	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		AttrNumber	a = x + FirstLowInvalidHeapAttributeNumber;

		if (a <= 0)
			return false;
		*attnums = lappend_int(*attnums, a);
	}
	if (*attnums == NIL)
		*attnums = list_make1_int(0);
	return true;
}

/*
 * Every qual a vector qual, or one evaluated row by row on the rows the
 * vector quals keep (cxt->row_quals, in PostgreSQL's order; not for a
 * batch source: it filters by vector quals only).  The columns they read
 * go to *attrs.
 */
static void
tagg_classify_quals(PlannerInfo *root, RelOptInfo *rel, Relation relation, bool external,
					TAggFindContext *cxt, Bitmapset **attrs)
{
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (TesseraVecDescribe((Node *) rinfo->clause, rel->relid, relation) != NIL)
			;
		else if (!external && TesseraRowQual(rinfo, rel->relid))
			cxt->row_quals = lappend(cxt->row_quals, rinfo);
		else
			cxt->ok = false;
		pull_varattnos((Node *) rinfo->clause, rel->relid, attrs);
	}
	/* (the vector quals go first: under a security barrier, PostgreSQL's order) */
	if (!TesseraOrderQuals(root, &cxt->row_quals) ||
		(cxt->row_quals != NIL && tagg_max_security_level(rel->baserestrictinfo) > 0))
		cxt->ok = false;
}

/*
 * Quals with no vector form: evaluated on the rows the vector quals keep,
 * as PostgreSQL's, and in a star join on those that join every dimension
 * (the caller passes TesseraStarRows); *agg_rows, of a single table, is
 * what they keep.
 */
static Cost
tagg_row_quals_cost(PlannerInfo *root, TAggFindContext *cxt, Index relid, double rows,
					double *agg_rows)
{
	QualCost	qc;

	if (cxt->row_quals == NIL)
		return 0;
	cost_qual_eval(&qc, cxt->row_quals, root);
	if (cxt->star == NULL)
		*agg_rows *= clauselist_selectivity(root, cxt->row_quals, relid, JOIN_INNER, NULL);
	return qc.startup + rows * qc.per_tuple;
}

static void
tessera_create_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
						   RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	RelOptInfo *rel;
	TesseraStarPlan star_plan;
	RangeTblEntry *rte;
	Relation	relation;
	TAggFindContext cxt = {NIL, NIL, true, NULL, NULL, NIL, NIL, 0};
	ListCell   *lc;
	CustomPath *cpath;
	double		rows_read,
				agg_rows,
				groups = 1,
				inner_groups = 1,
				agg_work = 0;
	List	   *inner_keys;
	bool		has_float_sum = false;
	List	   *computed = NIL;
	int			nkey_computed;
	List	   *star_info = NIL;
	bool		only_distinct = true;
	Cost		run_cost,
				star_cost,
				build_cost,
				spill_cost;
	TscanEstimate est;
	Bitmapset  *attrs = NULL;
	bool		external = false;
	List	   *source_attnums = NIL;

	if (prev_create_upper_paths)
		prev_create_upper_paths(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG || !tessera_enable_custom_agg || !tessera_enable_custom_scan ||
		(!parse->hasAggs && parse->groupClause == NIL) ||
		parse->hasTargetSRFs || parse->rowMarks != NIL)
		return;
	rel = tagg_scanned_rel(root, input_rel, &star_plan, &cxt.star);
	if (rel == NULL || !tagg_group_vars(root, rel->relid, &cxt))
		return;
	rte = planner_rt_fetch(rel->relid, root);
	relation = table_open(rte->relid, NoLock);
	/* a foreign table whose rows a batch source reads as vectors (Parquet files) */
	if (rte->relkind == RELKIND_FOREIGN_TABLE)
		external = tessera_batch_source != NULL && tessera_batch_source->accepts(relation);
	if (!external && !IsTesseraRelation(relation))
	{
		table_close(relation, NoLock);
		return;
	}
	/* the quals; every output an aggregate of ours */
	tagg_classify_quals(root, rel, relation, external, &cxt, &attrs);
	foreach(lc, output_rel->reltarget->exprs)
		(void) tagg_find(lfirst(lc), &cxt);
	/* HAVING: evaluated on each group's row, its aggregates computed too */
	(void) tagg_find(parse->havingQual, &cxt);
	pull_varattnos((Node *) cxt.group_vars, rel->relid, &attrs);
	(void) tagg_describe_keys(cxt.row_group_vars, cxt.star, &computed);
	nkey_computed = list_length(computed);
	agg_work = tagg_check_aggs(&cxt, rel, relation, &attrs, &has_float_sum,
							   &only_distinct, &computed);
	/* (once count(DISTINCT)'s column is known) */
	if (cxt.ok)
		tagg_carry_keys(&cxt);
	/* expressions computed per row: their columns, and what evaluating them costs */
	pull_varattnos((Node *) computed, rel->relid, &attrs);
	attrs = tagg_own_columns(attrs, cxt.star);
	agg_work += tagg_computed_work(root, rel, relation, computed, nkey_computed,
								   input_rel->rows);
	if (cxt.distinct_var != NULL && has_float_sum)
		cxt.ok = false;
	if (cxt.group_vars != NIL)
		groups = tagg_estimate_groups(root, &cxt, input_rel->rows);
	inner_keys = cxt.group_vars;
	inner_groups = groups;
	if (cxt.distinct_var != NULL)
	{
		inner_keys = lappend(list_copy(cxt.group_vars), cxt.distinct_var);
		inner_groups = TesseraEstimateGroups(root, inner_keys, input_rel->rows);
		if (list_length(inner_keys) > INDEX_MAX_KEYS)
			cxt.ok = false;
	}
	spill_cost = tagg_spill_cost(&cxt, inner_keys, inner_groups, only_distinct);
	/* a star join: what the executor needs of each dimension's rows */
	if (cxt.ok && cxt.star != NULL)
	{
		List	   *desc,
				   *clauses;

		if (!TesseraStarDescribe(cxt.star, &desc, &clauses))
			cxt.ok = false;
		star_info = list_make2(desc, clauses);
	}
	/* GROUP BY alone (distinct keys) is an aggregation with no aggregates */
	if (!cxt.ok || (cxt.aggs == NIL && cxt.group_vars == NIL))
	{
		table_close(relation, NoLock);
		return;
	}
	TesseraScanEstimate(root, rel, relation, attrs, &est);
	table_close(relation, NoLock);
	if (external && !tagg_source_attnums(&cxt, rel, attrs, &source_attnums))
		return;

	/*
	 * Decoding a value into a vector, a quarter of an operator (measured:
	 * about 1 ns per integer); a vector qual, a tenth per row; the work per
	 * row kept as above, and half an operator per group key.  A star join
	 * keeps the rows that join.
	 */
	rows_read = rel->tuples * est.read_frac;
	agg_rows = cxt.star != NULL ? input_rel->rows : rows_read * est.vec_sel;
	if (!TesseraStarCost(root, cxt.star, rows_read * est.vec_sel, agg_rows, &star_cost,
						&build_cost))
		return;
	run_cost = rows_read * (est.decode_ops * 0.25 + est.nvec * 0.1) * cpu_operator_cost +
		star_cost + spill_cost;
	run_cost += tagg_row_quals_cost(root, &cxt, rel->relid,
									cxt.star == NULL ? rows_read * est.vec_sel :
									Max(agg_rows, TesseraStarRows(cxt.star, rows_read * est.vec_sel)),
									&agg_rows);
	run_cost += agg_rows * (agg_work + 0.5 * (list_length(inner_keys) - cxt.ncarried)) *
		cpu_operator_cost;
	/* count(DISTINCT): each inner group is folded into its outer group */
	if (cxt.distinct_var != NULL)
		run_cost += inner_groups * list_length(cxt.aggs) * cpu_operator_cost;

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.rows = tagg_output_rows(root, groups);
	cpath->path.startup_cost = seq_page_cost * est.phys_pages * est.read_frac + run_cost;
	cpath->path.total_cost = cpath->path.startup_cost + cpu_tuple_cost * groups;
	TesseraAggGroupLimitCost(root, cxt.group_vars, cxt.distinct_var, groups, spill_cost,
							 &cpath->path);
	foreach(lc, cxt.star != NULL ? cxt.star->dims : NIL)
		cpath->custom_paths = lappend(cpath->custom_paths,
									  ((TesseraStarDimPlan *) lfirst(lc))->path);
	tagg_path_finish(cpath, rel->relid, &cxt, TAGG_SERIAL, inner_groups, star_info,
					 source_attnums);
	/* (before add_path, which frees a path it finds dominated) */
	tagg_try_parallel(root, rel, output_rel, cpath, &cxt, groups, inner_groups, &est, run_cost,
					  build_cost, star_info, source_attnums);
	add_path(output_rel, &cpath->path);
}

/*
 * TesseraCollectParams
 *		The Params an expression reads (a subplan's own aside), for a plan's
 *		custom_exprs: the executor learns from them what it depends on.
 */
bool
TesseraCollectParams(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		*params = list_append_unique(*params, copyObject(node));
		return false;
	}
	/* a subplan's test reads its own output columns: only its arguments are ours */
	if (IsA(node, SubPlan))
		return TesseraCollectParams((Node *) ((SubPlan *) node)->args, params);
	return expression_tree_walker(node, TesseraCollectParams, params);
}

/*
 * Do two sum/avg descriptions sum the same column of the relation (one of
 * them, or both, with an offset: sum(x + c))?
 */
static bool
tagg_same_column(List *a, List *b)
{
	int			ax = desc_int(a, AGG_DESC_ATTIDX);

	return ax >= 0 && ax < TAGG_COMPUTED_ATTIDX && ax == desc_int(b, AGG_DESC_ATTIDX) &&
		list_nth(a, AGG_DESC_VX) == NIL && list_nth(b, AGG_DESC_VX) == NIL &&
		(list_nth(a, AGG_DESC_OFFSET) != NULL || list_nth(b, AGG_DESC_OFFSET) != NULL);
}

/*
 * The descriptions of the aggregates, for the executor: an earlier sum or
 * avg of the same argument (with no FILTER) shares its state, as PostgreSQL
 * shares transition states (TPC-H Q1 has two such pairs); float states
 * differ between sum and avg.  Sums of a column plus constants share the
 * column's state (offset_describe in classify.c).
 */
static List *
tagg_describe_aggs(List *aggs, Index relid, Relation rel, List **computed)
{
	List	   *specs = NIL;
	ListCell   *lc;

	foreach(lc, aggs)
	{
		Aggref	   *agg = lfirst(lc);
		List	   *desc = TesseraAggDescribe(agg, relid, rel, computed);
		TAggKind	kind;
		Oid			argtype;

		if (desc == NIL)
			elog(ERROR, "TesseraAgg: aggregate no longer supported");
		kind = (TAggKind) desc_int(desc, AGG_DESC_KIND);
		argtype = (Oid) desc_int(desc, AGG_DESC_ARGTYPE);
		if ((kind == TAGG_SUM || kind == TAGG_AVG) && agg->aggfilter == NULL &&
			argtype != FLOAT4OID && argtype != FLOAT8OID)
		{
			ListCell   *pc;

			foreach(pc, aggs)
			{
				Aggref	   *prev = lfirst(pc);
				int			j = foreach_current_index(pc);
				List	   *pdesc;
				TAggKind	pkind;

				if (j >= foreach_current_index(lc))
					break;
				pdesc = list_nth(specs, j);
				pkind = (TAggKind) desc_int(pdesc, AGG_DESC_KIND);
				if ((pkind == TAGG_SUM || pkind == TAGG_AVG) &&
					desc_int(pdesc, AGG_DESC_SAME_AS) < 0 && prev->aggfilter == NULL &&
					(Oid) desc_int(pdesc, AGG_DESC_ARGTYPE) == argtype &&
					(equal(prev->args, agg->args) || tagg_same_column(pdesc, desc)))
				{
					intVal(list_nth(desc, AGG_DESC_SAME_AS)) = j;
					break;
				}
			}
		}
		specs = lappend(specs, desc);
	}
	return specs;
}

/*
 * May a memo answer a correlated subquery's runs over this star join (NIL:
 * none)?  Its dimensions are read once for all runs: not where a filter
 * across them reads a parameter (the executor also checks that no
 * dimension's plan does, agg_node.c), nor a left join, whose rows without
 * a match are not the groups of any key.  (TPC-H q02's min(ps_supplycost)
 * of the part's suppliers in the region.)
 */
static bool
tagg_star_memo_ok(List *star)
{
	ListCell   *lc;

	if (star == NIL)
		return true;
	/* (the description: the dimensions, the extra columns, then the filters) */
	if (TesseraHasExecParam((Node *) lthird(linitial(star)), NULL))
		return false;
	foreach(lc, linitial(linitial(star)))
		if (desc_int(lfirst(lc), STAR_DIM_KIND) == STAR_LEFT)
			return false;
	return true;
}

static Plan *
tagg_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Index		relid = intVal(list_nth(best_path->custom_private, TAGG_PATH_RELID));
	List	   *aggs = list_nth(best_path->custom_private, TAGG_PATH_AGGS);
	List	   *group_vars = list_nth(best_path->custom_private, TAGG_PATH_GROUP_VARS);
	TAggMode	mode = intVal(list_nth(best_path->custom_private, TAGG_PATH_MODE));
	Var		   *distinct_var = list_nth(best_path->custom_private, TAGG_PATH_DISTINCT_VAR);
	List	   *star = list_nth(best_path->custom_private, TAGG_PATH_STAR);
	List	   *row_aggs = list_nth(best_path->custom_private, TAGG_PATH_ROW_AGGS);
	List	   *row_group_vars = list_nth(best_path->custom_private, TAGG_PATH_ROW_GROUP_VARS);
	List	   *source_attnums = list_nth(best_path->custom_private, TAGG_PATH_SOURCE_ATTNUMS);
	List	   *row_quals = list_nth(best_path->custom_private, TAGG_PATH_ROW_QUALS);
	List	   *rest = NIL;
	List	   *source_plan = NIL;
	TesseraStarPlan star_plan;
	RelOptInfo *input_rel = find_base_rel(root, relid);
	RangeTblEntry *rte = planner_rt_fetch(relid, root);
	Relation	relation = table_open(rte->relid, NoLock);
	List	   *skip = NIL,
			   *skip_descs = NIL,
			   *vector = NIL,
			   *vector_descs = NIL,
			   *key_descs = NIL,
			   *scan_tlist = NIL,
			   *computed = NIL,
			   *specs;
	ListCell   *lc;

	/* the final node scans nothing: its input is the partial nodes' groups */
	if (mode != TAGG_FINAL)
	{
		TesseraDescribeVectorQuals(extract_actual_clauses(input_rel->baserestrictinfo, false),
								   relid, relation, &skip, &skip_descs, &vector, &vector_descs,
								   &rest);
		if (list_length(rest) != list_length(row_quals))
			elog(ERROR, "TesseraAgg: quals no longer as planned");
		/* a source skips by its own statistics; every qual is a vector qual */
		if (source_attnums != NIL)
		{
			skip = skip_descs = NIL;
			source_plan = tessera_batch_source->plan(root, input_rel, source_attnums);
		}
	}
	/*
	 * computed columns: the group keys' first, then the aggregates', as the
	 * row reads them (a star join's dimension columns are its extra ones)
	 */
	memset(&star_plan, 0, sizeof(star_plan));
	star_plan.natts = RelationGetNumberOfAttributes(relation);
	key_descs = tagg_describe_keys(row_group_vars, star != NIL ? &star_plan : NULL, &computed);
	specs = tagg_describe_aggs(row_aggs, relid, relation, &computed);
	table_close(relation, NoLock);

	/* the scan tuple: the group keys, then the aggregates (or their states) */
	foreach(lc, group_vars)
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(lfirst(lc)),
														 list_length(scan_tlist) + 1,
														 NULL, false));
	if (distinct_var != NULL)
	{
		/* the partial node emits it as a key; the others roll it up */
		if (mode == TAGG_PARTIAL)
			scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(distinct_var),
															 list_length(scan_tlist) + 1,
															 NULL, false));
		key_descs = lappend(key_descs,
							TesseraKeyDescribe((Node *) distinct_var, distinct_var->varattno - 1));
	}
	if (mode == TAGG_PARTIAL)
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) tagg_state_marker(aggs),
														 list_length(scan_tlist) + 1,
														 NULL, false));
	else
		foreach(lc, aggs)
			scan_tlist = lappend(scan_tlist, makeTargetEntry(copyObject(lfirst(lc)),
															 list_length(scan_tlist) + 1,
															 NULL, false));

	cscan->scan.plan.targetlist = tlist;
	/* HAVING, on the groups' rows (setrefs points its Aggrefs at the scan tuple) */
	cscan->scan.plan.qual = mode == TAGG_PARTIAL ? NIL :
		(List *) copyObject(root->parse->havingQual);
	cscan->scan.scanrelid = mode == TAGG_FINAL ? 0 : relid;
	cscan->flags = best_path->flags;
	cscan->methods = &TesseraAggPlanMethods;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	(void) TesseraCollectParams((Node *) list_make4(vector, row_aggs, computed, row_quals),
							   &cscan->custom_exprs);

	cscan->custom_private = NIL;
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(relid));
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(mode));
	cscan->custom_private = lappend(cscan->custom_private, skip);
	cscan->custom_private = lappend(cscan->custom_private, skip_descs);
	cscan->custom_private = lappend(cscan->custom_private, vector);
	cscan->custom_private = lappend(cscan->custom_private, vector_descs);
	/* (as written: a FILTER reads the table's own columns only) */
	cscan->custom_private = lappend(cscan->custom_private, copyObject(aggs));
	cscan->custom_private = lappend(cscan->custom_private, specs);
	cscan->custom_private = lappend(cscan->custom_private, key_descs);
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(distinct_var != NULL ? 1 : 0));
	cscan->custom_private = lappend(cscan->custom_private,
									copyObject(list_nth(best_path->custom_private,
														TAGG_PATH_GROUPS)));
	cscan->custom_private = lappend(cscan->custom_private, copyObject(computed));
	/* a left join: what its groups of rows without a match hold */
	cscan->custom_private = lappend(cscan->custom_private,
									star == NIL ? NIL :
									lappend(copyObject(linitial(star)),
											desc_int(linitial(linitial(linitial(star))),
													 STAR_DIM_KIND) == STAR_LEFT ?
											tagg_left_desc(row_group_vars, specs, star_plan.natts) :
											NIL));
	cscan->custom_private = lappend(cscan->custom_private,
									star != NIL ? copyObject(lsecond(star)) : NIL);
	cscan->custom_private = lappend(cscan->custom_private, source_plan);
	/* the row quals as one AND, PostgreSQL's order: a qual is not evaluated after one failed */
	cscan->custom_private = lappend(cscan->custom_private,
									mode == TAGG_FINAL || row_quals == NIL ? NIL :
									list_make1(make_ands_explicit(copyObject(row_quals))));
	cscan->custom_private = lappend(cscan->custom_private,
									mode != TAGG_SERIAL || group_vars != NIL ||
									distinct_var != NULL || !tagg_star_memo_ok(star) ||
									source_plan != NIL ? NIL :
									TesseraAggMemoPlan(root, relid, skip, vector, row_quals, row_aggs,
													   computed));
	if (llast(cscan->custom_private) != NIL)
		TesseraAggMemoCost(root, relid, vector, list_length(specs), best_path);
	cscan->custom_private = lappend(cscan->custom_private,
									mode == TAGG_PARTIAL ? NIL :
									TesseraAggTopNPlan(root, aggs, group_vars));
	cscan->custom_private = lappend(cscan->custom_private,
									copyObject(list_nth(best_path->custom_private,
														TAGG_PATH_CARRIED)));
	cscan->custom_private = lappend(cscan->custom_private,
									copyObject(list_nth(best_path->custom_private,
														TAGG_PATH_SLICES)));
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(mode == TAGG_SERIAL &&
												intVal(list_nth(best_path->custom_private,
																TAGG_PATH_SLICES)) <= 1 ?
												TesseraAggGroupLimit(root, group_vars,
																	 distinct_var) : 0));
	Assert(list_length(cscan->custom_private) == TAGG_PRIVATE_NFIELDS);
	return &cscan->scan.plan;
}

/* _PG_init: offer TesseraAgg paths. */
void
TesseraInstallAggPaths(void)
{
	prev_create_upper_paths = create_upper_paths_hook;
	create_upper_paths_hook = tessera_create_upper_paths;
}
