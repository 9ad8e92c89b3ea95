/*-------------------------------------------------------------------------
 *
 * star_plan.c
 *	  What a star join found by star_path.c becomes: the expressions its
 *	  dimensions compute for the filters, its cost, and the executor's
 *	  description of it (key columns, extra columns, filters rewritten to
 *	  read them).
 *
 * IDENTIFICATION
 *	  src/planner/star_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "tessera/plan.h"
#include "tessera/tessera.h"
#include "planner.h"

static int	star_target_pos(RelOptInfo *rel, Var *var);

/* The btree family whose equality the executor's comparison of keys of type is, or 0. */
Oid
TesseraStarKeyFamily(Oid type)
{
	if (type == INT2OID || type == INT4OID || type == INT8OID)
		return INTEGER_BTREE_FAM_OID;
	if (type == DATEOID)
		return lookup_type_cache(DATEOID, TYPECACHE_BTREE_OPFAMILY)->btree_opf;
	return InvalidOid;
}

/* The share of a dimension's rows its quals keep (what its probe keeps of the table's). */
double
TesseraStarDimKept(const TesseraStarDimPlan *dim)
{
	/* (what an anti join keeps is not known: last) */
	if (dim->kind == STAR_ANTI)
		return 2.0;
	/* (a join's rows against its key relation's: what its quals keep of those) */
	return dim->key_rel->tuples > 0 ? Min(dim->rel->rows / dim->key_rel->tuples, 1.0) : 1.0;
}

/*
 * Filters across dimensions may hold an expression of one dimension's
 * columns alone that runs a subquery: TPC-H q02's `ps_supplycost =
 * (SELECT min(ps_supplycost) ... WHERE p_partkey = ps_partkey ...)`, whose
 * subquery reads part's key only.  Such an expression is computed once for
 * each row of the dimension, by a projection of its plan (its cost then
 * charged on the dimension's rows), and the filter reads the result as an
 * extra column, as PostgreSQL's hash join computes a hash key of the inner
 * side once per inner row.  Run for each row joined instead, q02's
 * subquery ran four times per part: charged so, the plan lost to one that
 * hashes 160,000 rows (47 -> 85 ms); charged for the rows the filter kept
 * (once), it was taken where its subquery scanned a table for each of
 * 30,000 rows.
 */
typedef struct StarComputedContext
{
	PlannerInfo *root;
	TesseraStarPlan *star;
} StarComputedContext;

/* The inner dimension holding relids, all of whose columns expr reads its rows give; or NULL. */
static TesseraStarDimPlan *
star_computed_dim(StarComputedContext *cxt, Node *expr, Relids relids)
{
	ListCell   *lc;

	foreach(lc, cxt->star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);
		List	   *vars;
		ListCell   *vc;
		bool		ok = true;

		if (dim->kind != STAR_INNER || !bms_is_subset(relids, dim->relids))
			continue;
		vars = pull_var_clause(expr, PVC_RECURSE_PLACEHOLDERS);
		foreach(vc, vars)
		{
			Var		   *var = lfirst(vc);

			ok &= IsA(var, Var) && var->varlevelsup == 0 &&
				star_target_pos(dim->rel, var) >= 0;
		}
		return ok ? dim : NULL;
	}
	return NULL;
}

/*
 * An operand of a filter's equality that one dimension computes: a
 * subquery (or an expression holding one) of that dimension's columns.
 * Only an equality's operand: PostgreSQL's hash join computes the same
 * one as a hash key for each inner row too, whether it joins or not, so
 * an error it raises for a row that joins nothing (a subquery returning
 * two rows) is one PostgreSQL's plan may raise as well; an operand nested
 * in other filters is left to run per joined row as in a join filter.
 */
static void
star_computed_operand(Node *node, StarComputedContext *cxt)
{
	Relids		relids;
	TesseraStarDimPlan *dim;

	if (IsA(node, Var) || !contain_subplans(node) || contain_volatile_functions(node) ||
		contain_vars_of_level(node, 1) || expression_returns_set(node))
		return;
	relids = pull_varnos(cxt->root, node);
	dim = bms_is_empty(relids) ? NULL : star_computed_dim(cxt, node, relids);
	if (dim != NULL && !list_member(dim->computed, node))
		dim->computed = lappend(dim->computed, node);
}

/*
 * A plan of dim giving its computed expressions after its target's columns.
 *
 * Priced as PostgreSQL prices the same expression as a hash key: one
 * operator per row (initial_cost_hashjoin).  Its hash join, the plan a
 * star join competes with, computes the operand for each row of this
 * dimension too, and charged in full here a subquery run per row priced
 * the star join out for that work alone: TPC-H Q02's min(ps_supplycost)
 * for each of 747 parts, which PostgreSQL's hash join runs as many times
 * beside hashing 160,000 joined rows of partsupp (0.07 s against 0.03 s).
 */
static Path *
star_computed_path(PlannerInfo *root, TesseraStarDimPlan *dim, Path *path)
{
	PathTarget *target;
	QualCost	qc;
	Cost		discount;
	Path	   *result;
	ListCell   *lc;

	if (dim->computed == NIL)
		return path;
	target = copy_pathtarget(dim->rel->reltarget);
	foreach(lc, dim->computed)
		add_column_to_pathtarget(target, lfirst(lc), 0);
	set_pathtarget_cost_width(root, target);
	cost_qual_eval(&qc, dim->computed, root);
	discount = Max(qc.per_tuple - list_length(dim->computed) * cpu_operator_cost, 0) *
		path->rows;

	/* under a Gather, computed by the workers too (a new Gather: paths are shared) */
	if (IsA(path, GatherPath) && is_parallel_safe(root, (Node *) dim->computed))
	{
		GatherPath *gather = (GatherPath *) path;
		Path	   *sub = (Path *) create_projection_path(root, gather->subpath->parent,
														 gather->subpath, target);

		result = (Path *) create_gather_path(root, dim->rel, sub, target, NULL, NULL);
	}
	else
		result = (Path *) create_projection_path(root, dim->rel, path, target);
	result->total_cost = Max(result->total_cost - discount, result->startup_cost);
	return result;
}

/*
 * TesseraStarFindComputed
 *		Find the filters' expressions each dimension computes, and give the
 *		dimensions plans that compute them.
 */
void
TesseraStarFindComputed(PlannerInfo *root, TesseraStarPlan *star)
{
	StarComputedContext cxt = {root, star};
	ListCell   *lc;

	foreach(lc, star->filters)
	{
		OpExpr	   *op = (OpExpr *) lfirst_node(RestrictInfo, lc)->clause;

		if (IsA(op, OpExpr) && list_length(op->args) == 2 &&
			get_mergejoin_opfamilies(op->opno) != NIL)
		{
			star_computed_operand(linitial(op->args), &cxt);
			star_computed_operand(lsecond(op->args), &cxt);
		}
	}
	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		dim->path = star_computed_path(root, dim, dim->path);
	}
}

/* The position of computed expression e in dim's list. */
static int
star_computed_index(TesseraStarDimPlan *dim, Node *e)
{
	ListCell   *lc;

	foreach(lc, dim->computed)
	{
		if (equal(lfirst(lc), e))
			return foreach_current_index(lc);
	}
	elog(ERROR, "TesseraAgg: computed expression not found");
	return -1;
}

/* Is node one of the dimensions' computed expressions? */
static bool
star_is_computed(TesseraStarPlan *star, Node *node)
{
	ListCell   *lc;

	if (IsA(node, Var))
		return false;
	foreach(lc, star->dims)
	{
		if (list_member(((TesseraStarDimPlan *) lfirst(lc))->computed, node))
			return true;
	}
	return false;
}

/*
 * TesseraStarStripComputed
 *		A copy of node with the expressions of computed as NULLs: what is left
 *		to cost of the filters, or the columns they read beside them.
 */
Node *
TesseraStarStripComputed(Node *node, List *computed)
{
	if (node == NULL)
		return NULL;
	if (list_member(computed, node))
		return (Node *) makeNullConst(exprType(node), exprTypmod(node), exprCollation(node));
	return expression_tree_mutator(node, TesseraStarStripComputed, computed);
}

/*
 * What a star join adds to the cost: reading each dimension, hashing its
 * rows, one lookup per dimension for each fact row the quals and the
 * dimensions probed before it keep, and
 * gathering the dimension columns of the rows joined.  False if the
 * dimensions' tables should not fit hash_mem.
 */
Cost
TesseraStarDimBuildCost(PlannerInfo *root, Path *path, int kind)
{
	/* a TesseraScan read as column vectors forms no row */
	Cost		read = TesseraScanPathVectors(root, path);

	/*
	 * a key set's row sets a bit; an inner dimension's stores its columns
	 * too, by-reference values copied (an operator per 8 bytes)
	 */
	return (read >= 0 ? read : path->total_cost) +
		path->rows * (kind == STAR_INNER || kind == STAR_LEFT ?
					  2 + path->pathtarget->width / 8.0 : 1) *
		cpu_operator_cost;
}

/*
 * TesseraStarParallelBuildCost
 *		What building the dimensions (by paths, costing build_cost in all)
 *		takes a parallel plan, whose processes build different dimensions
 *		at once (executor/star_shared.c): the largest one's build, or the
 *		total spread over the processes the divisor stands for, whichever
 *		is more.
 */
Cost
TesseraStarParallelBuildCost(PlannerInfo *root, TesseraStarPlan *star, List *paths,
							 Cost build_cost, double divisor)
{
	Cost		largest = 0,
				shared = 0;
	ListCell   *lc,
			   *pc;

	if (star == NULL)
		return build_cost;
	forboth(lc, star->dims, pc, paths)
	{
		Path	   *path = lfirst(pc);
		double		words = path->pathtarget->width / 8.0;

		/*
		 * The builder copies the table into shared memory: its hash entries
		 * and columns, into pages the kernel must first provide (a 1.5M-row
		 * dimension of TPC-H q12 took longer to share than each process
		 * spent probing its share of the table).
		 */
		Cost		copy = path->rows * (4 + words) * cpu_operator_cost;

		largest = Max(largest, TesseraStarDimBuildCost(root, path,
													   ((TesseraStarDimPlan *) lfirst(lc))->kind) +
					  copy);
		shared += copy;
	}
	return Max(largest, (build_cost + shared) / Max(divisor, 1.0));
}

bool
TesseraStarCost(PlannerInfo *root, TesseraStarPlan *star, double probe_rows, double join_rows,
				Cost *cost, Cost *build_cost)
{
	double		bytes = 0;
	ListCell   *lc;

	*cost = 0;
	*build_cost = 0;
	if (star == NULL)
		return true;
	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		*build_cost += TesseraStarDimBuildCost(root, dim->path, dim->kind);
		/* each probes the rows the ones before it kept */
		*cost += probe_rows * cpu_operator_cost;
		probe_rows *= Min(TesseraStarDimKept(dim), 1.0);
		if (dim->kind == STAR_INNER || dim->kind == STAR_LEFT)
			bytes += dim->path->rows * (32 + dim->rel->reltarget->width);
		else
		{
			/*
			 * a key set holds its distinct keys (a `<>` join's with a value
			 * and a flag each): TPC-H q21's two sets over lineitem's 6M
			 * rows hold 1.5M keys each, not 6M
			 */
			double		keys = dim->path->rows;

			if (dim->dim_key2 == NULL)
				keys = Min(keys, estimate_num_groups(root, list_make1(dim->dim_key),
													 dim->path->rows, NULL, NULL));
			bytes += keys * (dim->ne_dim != NULL ? 24 : 16);
		}
	}
	*cost += *build_cost;
	*cost += join_rows * list_length(star->ext) * 0.25 * cpu_operator_cost;
	/*
	 * filters across dimensions: on the rows the probes keep, before the
	 * filters (the rows joined are after them: a correlated subquery as a
	 * filter was charged for the 31 rows it keeps, not the 30,000 it runs
	 * for)
	 */
	if (star->filters != NIL)
	{
		QualCost	qc;

		List	   *computed = NIL;

		foreach(lc, star->dims)
			computed = list_concat(computed, ((TesseraStarDimPlan *) lfirst(lc))->computed);
		cost_qual_eval(&qc, (List *) TesseraStarStripComputed((Node *) extract_actual_clauses(star->filters, false),
															  computed), root);
		*cost += qc.startup + Max(join_rows, probe_rows) * qc.per_tuple;
	}
	return bytes <= (double) get_hash_memory_limit();
}

/*
 * TesseraStarRows
 *		The rows of the table that join every dimension, of probe_rows: each
 *		joins at most one row of a dimension, and one where the dimension's
 *		quals keep it (as a foreign key would have it).
 */
double
TesseraStarRows(TesseraStarPlan *star, double probe_rows)
{
	ListCell   *lc;

	foreach(lc, star->dims)
		probe_rows *= Min(TesseraStarDimKept(lfirst(lc)), 1.0);
	return probe_rows;
}

/*
 * Can every process of a parallel plan read the star join's dimensions
 * itself?  *paths: the cheapest parallel-safe plain path of each.
 */
bool
TesseraStarParallelSafe(PlannerInfo *root, TesseraStarPlan *star, List **paths)
{
	ListCell   *lc;

	*paths = NIL;
	if (star != NULL && !star->filters_parallel_safe)
		return false;
	foreach(lc, star != NULL ? star->dims : NIL)
	{
		TesseraStarDimPlan *dim = lfirst(lc);
		Path	   *best = NULL;
		ListCell   *pc;

		if (!dim->rel->consider_parallel)
			return false;
		foreach(pc, dim->rel->pathlist)
		{
			Path	   *path = lfirst(pc);

			if (path->parallel_safe && path->param_info == NULL &&
				(best == NULL || path->total_cost < best->total_cost))
				best = path;
		}
		if (best == NULL)
			return false;
		best = star_computed_path(root, dim, best);
		if (!best->parallel_safe)
			return false;
		*paths = lappend(*paths, best);
	}
	return true;
}

typedef struct StarRewriteContext
{
	TesseraStarPlan *star;
	bool		ok;
} StarRewriteContext;

/* Is the relation a counted dimension (STAR_COUNT), none of whose columns is read? */
static bool
star_counted(TesseraStarPlan *star, int relid)
{
	ListCell   *lc;

	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		if (dim->kind == STAR_COUNT && bms_is_member(relid, dim->relids))
			return true;
	}
	return false;
}

/*
 * A counted dimension's key column of the same type as the table's column
 * it is joined to: the table's column, equal to it in every joined row
 * (`GROUP BY a.c1` of a self-join whose a is counted); else NULL.
 */
static Var *
star_counted_key(TesseraStarPlan *star, Var *var)
{
	ListCell   *lc;

	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);

		if (dim->kind != STAR_COUNT)
			continue;
		for (int k = 0; k < 2; k++)
		{
			Var		   *dk = k == 0 ? dim->dim_key : dim->dim_key2;
			Var		   *fk = k == 0 ? dim->fact_key : dim->fact_key2;

			if (dk != NULL && dk->varno == var->varno && dk->varattno == var->varattno &&
				fk->vartype == var->vartype && fk->vartypmod == var->vartypmod)
				return fk;
		}
	}
	return NULL;
}

static Node *
star_rewrite_mutator(Node *node, StarRewriteContext *cxt)
{
	if (node == NULL)
		return NULL;
	/* a computed expression: an extra column of its own */
	if (star_is_computed(cxt->star, node))
	{
		ListCell   *lc;
		int			k = -1;

		foreach(lc, cxt->star->ext)
		{
			if (equal(lfirst(lc), node))
				k = foreach_current_index(lc);
		}
		if (k < 0)
		{
			k = list_length(cxt->star->ext);
			cxt->star->ext = lappend(cxt->star->ext, node);
		}
		return (Node *) makeVar(cxt->star->fact, cxt->star->natts + k + 1, exprType(node),
								exprTypmod(node), exprCollation(node), 0);
	}
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 &&
		((Var *) node)->varno != cxt->star->fact)
	{
		Var		   *var = (Var *) node;
		ListCell   *lc;
		int			k = -1;

		/* a counted join's key: the table's column it equals */
		if (star_counted_key(cxt->star, var) != NULL)
			return (Node *) copyObject(star_counted_key(cxt->star, var));
		/* a whole row, a system column, or a semi, anti or counted join's: not gathered */
		if (var->varattno <= 0 || bms_is_member(var->varno, cxt->star->semi) ||
			bms_is_member(var->varno, cxt->star->anti) || star_counted(cxt->star, var->varno))
		{
			cxt->ok = false;
			return node;
		}
		foreach(lc, cxt->star->ext)
		{
			Var		   *e = lfirst(lc);

			if (IsA(e, Var) && e->varno == var->varno && e->varattno == var->varattno)
				k = foreach_current_index(lc);
		}
		if (k < 0)
		{
			k = list_length(cxt->star->ext);
			cxt->star->ext = lappend(cxt->star->ext, var);
		}
		return (Node *) makeVar(cxt->star->fact, cxt->star->natts + k + 1, var->vartype,
								var->vartypmod, var->varcollid, 0);
	}
	if (IsA(node, PlaceHolderVar))
	{
		cxt->ok = false;
		return node;
	}
	return expression_tree_mutator(node, star_rewrite_mutator, cxt);
}

/*
 * TesseraStarRewrite
 *		A copy of expr with the dimensions' columns as extra columns of the
 *		fact table's row; NULL if it reads something of a dimension that
 *		cannot be gathered.  Without a star join, expr itself.
 */
Node *
TesseraStarRewrite(TesseraStarPlan *star, Node *expr)
{
	StarRewriteContext cxt = {star, true};
	Node	   *result;

	if (star == NULL || expr == NULL)
		return expr;
	result = star_rewrite_mutator(expr, &cxt);
	return cxt.ok ? result : NULL;
}

/* Is an attribute number one of the star's extra columns? */
bool
TesseraStarExtra(TesseraStarPlan *star, AttrNumber attno)
{
	return star != NULL && attno > star->natts;
}

/* The position of dimension column var in its plan's rows, or -1. */
static int
star_target_pos(RelOptInfo *rel, Var *var)
{
	ListCell   *lc;

	foreach(lc, rel->reltarget->exprs)
	{
		Var		   *t = lfirst(lc);

		if (IsA(t, Var) && t->varno == var->varno && t->varattno == var->varattno &&
			t->varlevelsup == 0)
			return foreach_current_index(lc);
	}
	return -1;
}

/*
 * TesseraStarDescribe
 *		The executor's description of the star join (TAGG_PRIVATE_STAR) and
 *		its join clauses for EXPLAIN (inner, semi and anti joins' lists,
 *		the filters, the left join's);
 *		false if a column the executor needs
 *		is missing from a dimension plan's rows.
 */
bool
TesseraStarDescribe(TesseraStarPlan *star, List **desc, List **clauses)
{
	List	   *dims = NIL,
			   *ext = NIL,
			   *by_kind[5] = {NIL, NIL, NIL, NIL, NIL};
	List	   *filters = extract_actual_clauses(star->filters, false);
	Node	   *row_filters = filters == NIL ? NULL :
		TesseraStarRewrite(star, (Node *) list_make1(make_ands_explicit(filters)));
	ListCell   *lc;

	/* (first: the dimension columns the filters read become extra columns) */
	if (filters != NIL && row_filters == NULL)
		return false;

	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);
		int			pos = star_target_pos(dim->rel, dim->dim_key);
		int			pos2 = dim->dim_key2 ? star_target_pos(dim->rel, dim->dim_key2) : -1;
		List	   *d;

		if (pos < 0 || (dim->dim_key2 != NULL && pos2 < 0) ||
			(dim->ne_dim != NULL && star_target_pos(dim->rel, dim->ne_dim) < 0))
			return false;
		d = list_make5(makeInteger(dim->fact_key->varattno - 1),
					   makeInteger((int) dim->fact_key->vartype),
					   makeInteger(pos),
					   makeInteger((int) dim->dim_key->vartype),
					   makeInteger(dim->kind));
		d = lappend(d, makeInteger(dim->fact_key2 ? dim->fact_key2->varattno - 1 : -1));
		d = lappend(d, makeInteger(dim->fact_key2 ? (int) dim->fact_key2->vartype : 0));
		d = lappend(d, makeInteger(pos2));
		d = lappend(d, makeInteger(dim->dim_key2 ? (int) dim->dim_key2->vartype : 0));
		d = lappend(d, makeInteger(dim->ne_fact ? dim->ne_fact->varattno - 1 : -1));
		d = lappend(d, makeInteger(dim->ne_fact ? (int) dim->ne_fact->vartype : 0));
		d = lappend(d, makeInteger(dim->ne_dim ? star_target_pos(dim->rel, dim->ne_dim) : -1));
		d = lappend(d, makeInteger(dim->ne_dim ? (int) dim->ne_dim->vartype : 0));
		dims = lappend(dims, d);
		/* EXPLAIN shows the inner, semi and anti joins' apart */
		for (int k = 0; k < 2; k++)
		{
			Var		   *fk = k == 0 ? dim->fact_key : dim->fact_key2;
			Var		   *dk = k == 0 ? dim->dim_key : dim->dim_key2;
			Oid			eqop;
			Expr	   *clause;

			if (fk == NULL)
				continue;
			eqop = get_opfamily_member(TesseraStarKeyFamily(dk->vartype), fk->vartype, dk->vartype,
									   BTEqualStrategyNumber);
			if (!OidIsValid(eqop))
				return false;
			clause = make_opclause(eqop, BOOLOID, false, (Expr *) copyObject(fk),
								   (Expr *) copyObject(dk), InvalidOid, InvalidOid);
			set_opfuncid((OpExpr *) clause);
			/* (a counted join is an inner join) */
			by_kind[dim->kind == STAR_COUNT ? STAR_INNER : dim->kind] =
				lappend(by_kind[dim->kind == STAR_COUNT ? STAR_INNER : dim->kind], clause);
		}
		if (dim->ne_clause != NULL)
			by_kind[dim->kind] = lappend(by_kind[dim->kind], copyObject(dim->ne_clause));
	}
	foreach(lc, star->ext)
	{
		Node	   *e = lfirst(lc);
		ListCell   *dc;
		int			d = -1;
		int			pos = -1;

		foreach(dc, star->dims)
		{
			TesseraStarDimPlan *dim = lfirst(dc);

			if (IsA(e, Var) ? bms_is_member(((Var *) e)->varno, dim->relids) :
				list_member(dim->computed, e))
			{
				d = foreach_current_index(dc);
				/* (a computed expression follows the target's columns) */
				pos = IsA(e, Var) ? star_target_pos(dim->rel, (Var *) e) :
					list_length(dim->rel->reltarget->exprs) + star_computed_index(dim, e);
			}
		}
		if (d < 0 || pos < 0)
			return false;
		ext = lappend(ext, list_make5(makeInteger(d), makeInteger(pos),
									  makeInteger((int) exprType(e)), makeInteger(exprTypmod(e)),
									  makeInteger((int) exprCollation(e))));
	}
	*desc = list_make3(dims, ext, row_filters);
	*clauses = list_make5(by_kind[STAR_INNER], by_kind[STAR_SEMI], by_kind[STAR_ANTI],
						  copyObject(filters), by_kind[STAR_LEFT]);
	return true;
}
