/*-------------------------------------------------------------------------
 *
 * agg_plan.c
 *	  Parts of a TesseraAgg plan decided from the query as a whole: the memo
 *	  that answers a correlated subquery's runs from one grouped pass, the
 *	  top-N of groups an ORDER BY count LIMIT keeps, and the groups a LIMIT
 *	  with no ORDER BY needs.
 *
 * IDENTIFICATION
 *	  src/planner/agg_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "utils/selfuncs.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "tessera/compat.h"
#include "tessera/plan.h"
#include "tessera/vector.h"
#include "planner.h"

/* the rows a top-N of counts must expect to read to sketch them first */
int			tessera_topn_sketch_rows = 1000000;

/*
 * The key a memo qual `column = parameter` (either way round) gives: the
 * column, of a type keyed as an integer or of text, varchar or char(n)
 * compared in a deterministic collation (equal exactly when their bytes
 * are, as the groups' keys), and a parameter of its own type, by the type's
 * own equality.  NULL if the qual is not one.
 */
static Var *
memo_qual(Node *qual, Index relid, Param **param)
{
	OpExpr	   *op = (OpExpr *) qual;
	Node	   *l,
			   *r;
	Var		   *var;
	bool		string;

	if (!IsA(qual, OpExpr) || list_length(op->args) != 2)
		return NULL;
	l = strip_implicit_coercions(linitial(op->args));
	r = strip_implicit_coercions(lsecond(op->args));
	if (IsA(r, Var) && IsA(l, Param))
	{
		Node	   *t = l;

		l = r;
		r = t;
	}
	if (!IsA(l, Var) || !IsA(r, Param) || ((Param *) r)->paramkind != PARAM_EXEC)
		return NULL;
	var = (Var *) l;
	string = var->vartype == TEXTOID || var->vartype == VARCHAROID || var->vartype == BPCHAROID;
	if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
		(!TesseraIntLikeType(var->vartype) && !string) || exprType(r) != var->vartype ||
		op->opno != lookup_type_cache(var->vartype, TYPECACHE_EQ_OPR)->eq_opr)
		return NULL;
	if (string && (!OidIsValid(op->inputcollid) ||
				   !get_collation_isdeterministic(op->inputcollid)))
		return NULL;
	*param = (Param *) r;
	return var;
}

/*
 * The groups a memo would hold: the distinct values of its columns (the
 * vector quals' `column = parameter` ones; *nvars of them) in the rows the
 * other quals keep, at most one a row.  0 if there is no such qual.
 */
static double
memo_groups(PlannerInfo *root, Index relid, List *vector, int *nvars)
{
	RelOptInfo *rel = find_base_rel(root, relid);
	List	   *vars = NIL;
	List	   *others = NIL;
	ListCell   *lc;
	double		groups;
	double		rows;

	foreach(lc, vector)
	{
		Param	   *param;
		Var		   *var = memo_qual(lfirst(lc), relid, &param);

		if (var != NULL)
			vars = lappend(vars, var);
		else
			others = lappend(others, lfirst(lc));
	}
	*nvars = list_length(vars);
	if (vars == NIL)
		return 0;
	/* the rows the memo groups: those the other quals keep */
	rows = Max(rel->tuples, 1) * clauselist_selectivity(root, others, 0, JOIN_INNER, NULL);
	/*
	 * the distinct values of the columns in the table, at most one a row
	 * (estimate_num_groups would clamp them to the rows the `column =
	 * parameter` quals keep: 1)
	 */
	groups = 1;
	foreach(lc, vars)
	{
		VariableStatData vardata;
		bool		isdefault;

		examine_variable(root, lfirst(lc), 0, &vardata);
		groups *= get_variable_numdistinct(&vardata, &isdefault);
		ReleaseVariableStats(vardata);
	}
	return Min(groups, Max(rows, 1));
}

/*
 * A plain aggregate of a correlated subquery, run once per outer row with
 * the quals `column = outer value`: the memo that answers its runs from
 * one grouped pass over the table (TAggMemoField), or NIL.  Every other
 * qual, and what is aggregated, must not depend on a parameter or vary
 * from call to call, so that the groups hold each run's answer.
 */
List *
TesseraAggMemoPlan(PlannerInfo *root, Index relid, List *skip, List *vector, List *row_quals,
				   List *row_aggs, List *computed)
{
	List	   *vec_pos = NIL,
			   *skip_pos = NIL,
			   *params = NIL,
			   *keys = NIL;
	Bitmapset  *cols = NULL;
	ListCell   *lc;
	double		groups;
	int			nvars;

	if (root->parse->havingQual != NULL || row_quals != NIL ||
		TesseraHasExecParam((Node *) row_aggs, NULL) ||
		TesseraHasExecParam((Node *) computed, NULL) ||
		contain_volatile_functions((Node *) list_make3(vector, row_aggs, computed)))
		return NIL;
	foreach(lc, vector)
	{
		Param	   *param;
		Var		   *var = memo_qual(lfirst(lc), relid, &param);

		if (var == NULL)
		{
			if (TesseraHasExecParam(lfirst(lc), NULL))
				return NIL;
			continue;
		}
		if (bms_is_member(var->varattno, cols) || list_length(keys) >= INDEX_MAX_KEYS)
			return NIL;
		cols = bms_add_member(cols, var->varattno);
		vec_pos = lappend_int(vec_pos, foreach_current_index(lc));
		params = lappend(params, copyObject(param));
		keys = lappend(keys, TesseraKeyDescribe((Node *) var, var->varattno - 1));
		if (llast(keys) == NIL)
			return NIL;
	}
	if (keys == NIL)
		return NIL;
	/* the same quals as row-group filters; any other must not read a parameter */
	foreach(lc, skip)
	{
		Param	   *param;

		if (memo_qual(lfirst(lc), relid, &param) != NULL)
			skip_pos = lappend_int(skip_pos, foreach_current_index(lc));
		else if (TesseraHasExecParam(lfirst(lc), NULL))
			return NIL;
	}
	/* (the groups expected, to size the memo's table: TPC-H q20's 543,000) */
	groups = memo_groups(root, relid, vector, &nvars);
	return lappend(list_make4(vec_pos, skip_pos, params, keys),
				   makeInteger((int) Min(groups, 1 << 24)));
}

/*
 * TesseraAggMemoCost
 *		Price a memoized correlated subquery's plan as a run costs once the
 *		memo is built: a lookup.  PostgreSQL charges a correlated subplan's
 *		plan cost on every call (cost_subplan, from the plan's costs, which
 *		create_customscan_plan copies from this path after the plan is
 *		made), as if each call scanned the table; the memo answers every
 *		call after those that cost one pass over the table, plus one pass to
 *		build it, which is not charged.  Priced per pass, TPC-H q17 took a
 *		hash join that formed and hashed lineitem's 6M rows to run the
 *		subquery on the 6,000 that join (0.55 s) over a TesseraJoin that
 *		forms only those (0.26 s), and q20 a nested loop that compared 44M
 *		pairs of rows (0.80 -> 0.23 s).  Not where the memo's groups should
 *		not fit hash_mem: it is then given up and every run scans.  vector:
 *		the plan's vector quals, which hold the memo's `column = parameter`.
 */
void
TesseraAggMemoCost(PlannerInfo *root, Index relid, List *vector, int nspecs, CustomPath *path)
{
	int			nvars;
	double		groups = memo_groups(root, relid, vector, &nvars);

	if (nvars == 0)
		return;
	/* a group's states, keys and hash slot */
	if (groups * (nspecs * sizeof(TAggState) + nvars * (sizeof(int64) + 1) + 16) >
		(double) get_hash_memory_limit())
		return;
	path->path.startup_cost = 0;
	path->path.total_cost = 10 * cpu_operator_cost;
}

/*
 * Top-N of groups: `GROUP BY … ORDER BY count(…) [DESC] LIMIT n [OFFSET m]`
 * sorts every group to keep n + m of them.  A group whose count is worse
 * than the (n + m)th best cannot be among those, whatever the later sort
 * keys, so the node leaves such groups out and PostgreSQL's Sort and Limit
 * above order the rest as before (ties included).  Planned where this node
 * is what the query level's ordering sorts: no window function, DISTINCT,
 * set-returning function or HAVING after it, the LIMIT and OFFSET known
 * (root->limit_tuples: constants, or a custom plan's parameters), and the
 * first sort key one of its counts, in integer order.  [rows kept, spec,
 * descending, heavy groups possible], or NIL.  Known on the path too (agg_path.c prices what a
 * sliced aggregation hands up by it).
 */
/*
 * The rows the query level's LIMIT and OFFSET take, n + m, where both are
 * constants (root->limit_tuples is not set for a grouping) and the sum is
 * at most PG_INT32_MAX / 2; else 0.
 */
static int
limit_rows(Query *parse)
{
	Const	   *count = (Const *) parse->limitCount;
	Const	   *offset = (Const *) parse->limitOffset;
	int64		rows;

	if (count == NULL || !IsA(count, Const) || count->consttype != INT8OID || count->constisnull ||
		DatumGetInt64(count->constvalue) < 1 || DatumGetInt64(count->constvalue) > PG_INT32_MAX / 4 ||
		parse->limitOption != LIMIT_OPTION_COUNT)
		return 0;
	rows = DatumGetInt64(count->constvalue);
	if (offset != NULL)
	{
		if (!IsA(offset, Const) || offset->consttype != INT8OID ||
			DatumGetInt64(offset->constvalue) > PG_INT32_MAX / 4)
			return 0;
		if (!offset->constisnull)
			rows += Max(DatumGetInt64(offset->constvalue), 0);
	}
	return (int) rows;
}

/*
 * Nothing between the query level's grouping and its LIMIT but a
 * projection: no window function, DISTINCT, set-returning function,
 * grouping sets or HAVING.  (A sort is the caller's to rule in or out.)
 */
static bool
limit_takes_groups(Query *parse)
{
	return !parse->hasWindowFuncs && parse->distinctClause == NIL && !parse->hasTargetSRFs &&
		parse->groupingSets == NIL && parse->havingQual == NULL;
}

/*
 * Can a group of these keys hold many rows?  By the statistics: a group
 * has no more rows than the fullest value of any one of its columns (its
 * most common value's, NULL's, or, without those, an average value's).
 * The executor sketches the counts first only where it can
 * (executor/agg_heavy.c): ClickBench's WatchID, ClientIP, unique WatchIDs,
 * would pay a pass for nothing.  Unknown: it can.  And only where the rows
 * read are many (tessera.topn_sketch_rows): groups of fewer rows stay in
 * the CPU caches, cheaper to make than a pass (ClickBench q39, 600,000 rows
 * of CounterID 62: 128 -> 212 ms with the passes).
 */
static bool
heavy_groups_possible(PlannerInfo *root, List *group_vars)
{
	ListCell   *lc;

	if (tessera_topn_sketch_rows <= 0)
		return false;
	foreach(lc, group_vars)
	{
		Var		   *var = lfirst(lc);
		RelOptInfo *rel;

		if (!IsA(var, Var) || var->varno < 1 || var->varno >= root->simple_rel_array_size)
			continue;
		rel = root->simple_rel_array[var->varno];
		if (rel != NULL && rel->rows < tessera_topn_sketch_rows)
			return false;
	}
	foreach(lc, group_vars)
	{
		VariableStatData vardata;
		AttStatsSlot sslot;
		double		freq;
		double		ndistinct;
		bool		isdefault;

		if (!IsA(lfirst(lc), Var))
			continue;
		examine_variable(root, lfirst(lc), 0, &vardata);
		if (!HeapTupleIsValid(vardata.statsTuple) || vardata.rel == NULL)
		{
			ReleaseVariableStats(vardata);
			continue;
		}
		freq = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;
		if (get_attstatsslot(&sslot, vardata.statsTuple, STATISTIC_KIND_MCV, InvalidOid,
							 ATTSTATSSLOT_NUMBERS))
		{
			if (sslot.nnumbers > 0)
				freq = Max(freq, sslot.numbers[0]);
			free_attstatsslot(&sslot);
		}
		ndistinct = get_variable_numdistinct(&vardata, &isdefault);
		if (!isdefault && ndistinct >= 1)
			freq = Max(freq, 1.0 / ndistinct);
		else
			freq = 1;
		if (freq * vardata.rel->tuples < TAGG_HEAVY_ROWS)
		{
			ReleaseVariableStats(vardata);
			return false;
		}
		ReleaseVariableStats(vardata);
	}
	return true;
}

List *
TesseraAggTopNPlan(PlannerInfo *root, List *aggs, List *group_vars)
{
	Query	   *parse = root->parse;
	int			rows = limit_rows(parse);
	PathKey    *pk;
	ListCell   *lc;

	if (rows == 0 || root->sort_pathkeys == NIL || !limit_takes_groups(parse))
		return NIL;
	pk = linitial(root->sort_pathkeys);
	if (pk->pk_opfamily != INTEGER_BTREE_FAM_OID)
		return NIL;
	foreach(lc, pk->pk_eclass->ec_members)
	{
		Node	   *expr = (Node *) ((EquivalenceMember *) lfirst(lc))->em_expr;
		ListCell   *la;

		foreach(la, aggs)
		{
			Aggref	   *agg = lfirst(la);

			/* count(*), count(x), count(DISTINCT x): TesseraAgg's counts */
			if (equal(expr, agg) &&
				(agg->aggfnoid == F_COUNT_ || agg->aggfnoid == F_COUNT_ANY))
				return list_make4(makeInteger(rows),
								  makeInteger(foreach_current_index(la)),
								  makeInteger(TesseraPathKeyDescending(pk)),
								  makeInteger(heavy_groups_possible(root, group_vars)));
		}
	}
	return NIL;
}

/*
 * `GROUP BY … LIMIT n [OFFSET m]` with no ORDER BY returns any n + m groups
 * (SQL leaves which to the system), each with its aggregates over all its
 * rows.  The aggregation makes the first n + m groups it meets and leaves
 * out the rows of any other key (TesseraGroups.limit): every row is still
 * read, but the table stays small, nothing spills, and a string no group
 * has is not interned.  Serial plans only: partial nodes cannot know which
 * groups the others made, and a sliced plan's processes would each read
 * the whole table for groups that a serial node now makes cheaply.  Not
 * with count(DISTINCT), whose inner groups are keyed on its column too.
 * The limit, or 0.
 */
int
TesseraAggGroupLimit(PlannerInfo *root, List *group_vars, Var *distinct_var)
{
	Query	   *parse = root->parse;

	if (group_vars == NIL || distinct_var != NULL || root->sort_pathkeys != NIL ||
		!limit_takes_groups(parse))
		return 0;
	return limit_rows(parse);
}

/*
 * A serial path's price under a group limit that leaves out groups: no
 * spill, and each row's lookup in a table that stays in cache.
 */
void
TesseraAggGroupLimitCost(PlannerInfo *root, List *group_vars, Var *distinct_var, double groups,
						 Cost spill_cost, Path *path)
{
	int			limit = TesseraAggGroupLimit(root, group_vars, distinct_var);

	if (limit == 0 || limit >= groups)
		return;
	path->rows = Min(path->rows, limit);
	path->startup_cost -= spill_cost;
	path->total_cost = path->startup_cost + cpu_tuple_cost * limit;
}
