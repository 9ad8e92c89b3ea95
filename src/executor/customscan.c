/*-------------------------------------------------------------------------
 *
 * customscan.c
 *	  TesseraScan: a custom scan of a tessera table that decodes only the
 *	  columns the query uses, skips row groups by their min/max and null
 *	  counts, filters rows on decoded column vectors, and runs in parallel.
 *
 * NOTES
 *	  Planning: set_rel_pathlist_hook adds a TesseraScan path (and a
 *	  partial one for parallel plans) beside PostgreSQL's own.  Its cost
 *	  scales the decoded size of the table by the share of the row width
 *	  the query reads and by the share of row groups expected to survive
 *	  skipping: the qual's selectivity where the column's values follow
 *	  the row order (pg_stats correlation), all of them where they do not.
 *	  So the planner still prefers an index scan for a few rows.
 *
 *	  Quals are sorted at plan time into three overlapping sets:
 *	  - row-group filters: `col op expr`, `col op ANY/ALL (array)`,
 *	    `col IS [NOT] NULL`, and AND/OR trees of them, where op is in the
 *	    column type's default btree family (the order the chunk min/max was
 *	    computed in; same collation for collatable types) and expr uses no
 *	    column of this table and nothing volatile: constants, parameters
 *	    (prepared statements, init plans, lateral and nested-loop values).
 *	    expr is evaluated once per (re)scan; a row group whose summary
 *	    proves the filter false for every row is never read.  A row group's
 *	    summary covers every row it stores, deleted or not, so skipping
 *	    is exact.
 *	  - vector quals: top-level `col op expr` on integers, dates,
 *	    timestamps and floats with a btree comparison: evaluated by tight
 *	    loops over the decoded column, leaving a selection of rows; only
 *	    selected rows become tuples.  They are left out of the plan's qual
 *	    and re-checked only for EvalPlanQual.
 *	  - everything else stays in the plan's qual, run by ExecScan.
 *
 *	  Projection: the columns referenced anywhere in the target list or the
 *	  quals (all of them for a whole-row reference) are the only ones a
 *	  slot decodes; the others read as NULL and are never fetched.
 *
 *	  Parallel: the table AM's parallel scan hands out row groups from a
 *	  shared counter; the filters run in each participant.
 *
 * IDENTIFICATION
 *	  src/executor/customscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "common/hashfn.h"
#include "access/relscan.h"
#include "port/atomics.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "optimizer/planner.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/datum.h"
#include "utils/date.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"

bool		tessera_enable_custom_scan = true;

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

#ifdef HAVE_INT128
static int128 pow10_i128[39];

static void
init_pow10_i128(void)
{
	if (pow10_i128[0] != 0)
		return;
	pow10_i128[0] = 1;
	for (int k = 1; k < lengthof(pow10_i128); k++)
		pow10_i128[k] = pow10_i128[k - 1] * 10;
}
#endif

/* ---- qual analysis, shared by planning and execution ---- */

static bool group_key_type(Oid t);

/* A comparison's column: Var of the scanned relation, maybe relabeled. */
static Var *
scan_var(Node *node, Index relid)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node && IsA(node, Var) && ((Var *) node)->varno == relid &&
		((Var *) node)->varlevelsup == 0 && ((Var *) node)->varattno > 0)
		return (Var *) node;
	return NULL;
}

/* Can expr be evaluated once per scan, before any row is read? */
static bool
scan_constant(Node *expr, Index relid)
{
	return !bms_is_member(relid, pull_varnos(NULL, expr)) &&
		!contain_volatile_functions(expr) && !contain_subplans(expr);
}

/*
 * The btree family that orders a column's chunk min/max: the default one
 * of its base type.
 */
static Oid
column_btree_family(Oid typid)
{
	TypeCacheEntry *tc = lookup_type_cache(getBaseType(typid), TYPECACHE_BTREE_OPFAMILY);

	return tc->btree_opf;
}

/*
 * Is opno (with the column on the left) a comparison that chunk min/max
 * can decide?  Returns the strategy and the cross-type ORDER proc.
 */
static bool
skip_operator(Oid opno, Var *var, Oid inputcollid, Relation rel, int *strategy,
			  Oid *orderproc)
{
	Oid			opf = column_btree_family(var->vartype);
	Oid			lefttype,
				righttype;
	Form_pg_attribute attr;

	if (!OidIsValid(opf) || !op_in_opfamily(opno, opf))
		return false;
	get_op_opfamily_properties(opno, opf, false, strategy, &lefttype, &righttype);
	if (*strategy < BTLessStrategyNumber || *strategy > BTGreaterStrategyNumber)
		return false;
	*orderproc = get_opfamily_proc(opf, lefttype, righttype, BTORDER_PROC);
	if (!OidIsValid(*orderproc))
		return false;
	attr = TupleDescAttr(RelationGetDescr(rel), var->varattno - 1);
	if (attr->attisdropped)
		return false;
	/* min/max were computed in the column's collation */
	if (type_is_collatable(attr->atttypid) && inputcollid != attr->attcollation)
		return false;
	return true;
}

/*
 * Put a comparison in the form `col op expr`: returns the column and the
 * operator and expression to use, or NULL.
 */
static Var *
normalize_opexpr(OpExpr *op, Index relid, Oid *opno, Node **value)
{
	Var		   *var;

	if (list_length(op->args) != 2)
		return NULL;
	if ((var = scan_var(linitial(op->args), relid)) != NULL &&
		scan_constant(lsecond(op->args), relid))
	{
		*opno = op->opno;
		*value = lsecond(op->args);
		return var;
	}
	if ((var = scan_var(lsecond(op->args), relid)) != NULL &&
		scan_constant(linitial(op->args), relid))
	{
		*opno = get_commutator(op->opno);
		*value = linitial(op->args);
		return OidIsValid(*opno) ? var : NULL;
	}
	return NULL;
}

/* Can row-group summaries decide this qual (a tree of supported parts)? */
static bool
skippable(Node *node, Index relid, Relation rel)
{
	if (node == NULL)
		return false;
	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;
		Oid			opno;
		Node	   *value;
		Var		   *var = normalize_opexpr(op, relid, &opno, &value);
		int			strategy;
		Oid			proc;

		return var != NULL && skip_operator(opno, var, op->inputcollid, rel, &strategy, &proc);
	}
	if (IsA(node, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) node;
		Var		   *var;
		int			strategy;
		Oid			proc;

		if (list_length(op->args) != 2)
			return false;
		var = scan_var(linitial(op->args), relid);
		return var != NULL && scan_constant(lsecond(op->args), relid) &&
			skip_operator(op->opno, var, op->inputcollid, rel, &strategy, &proc);
	}
	if (IsA(node, NullTest))
	{
		NullTest   *nt = (NullTest *) node;

		return !nt->argisrow && scan_var((Node *) nt->arg, relid) != NULL;
	}
	if (IsA(node, BoolExpr))
	{
		BoolExpr   *b = (BoolExpr *) node;
		ListCell   *lc;

		if (b->boolop == NOT_EXPR)
			return false;
		foreach(lc, b->args)
		{
			if (!skippable(lfirst(lc), relid, rel))
				return false;
		}
		return true;
	}
	return false;
}

typedef enum VecKind
{
	VEC_INT,					/* integers, date, timestamps: compared as int64 */
	VEC_FLOAT4,
	VEC_FLOAT8,
	VEC_DATE_TS,				/* date column, timestamp value */
	VEC_COLCOL,					/* two integer-like columns of one type */
	VEC_NUMERIC					/* compared as scaled integers */
} VecKind;

/* Is this top-level qual one the vector filter evaluates? */
static bool
vectorizable(Node *node, Index relid, Relation rel, VecKind *kind, int *strategy,
			 int *attidx, Node **value)
{
	OpExpr	   *op;
	Oid			opno;
	Var		   *var;
	Oid			coltype,
				valtype,
				proc;

	if (!IsA(node, OpExpr))
		return false;
	op = (OpExpr *) node;
	if (list_length(op->args) == 2 && scan_var(linitial(op->args), relid) != NULL &&
		scan_var(lsecond(op->args), relid) != NULL)
	{
		/* two columns of the same integer-like type: `l_commitdate < l_receiptdate` */
		Var		   *l = scan_var(linitial(op->args), relid);
		Var		   *r = scan_var(lsecond(op->args), relid);

		coltype = getBaseType(l->vartype);
		if (coltype != getBaseType(r->vartype) || !group_key_type(coltype) ||
			TupleDescAttr(RelationGetDescr(rel), r->varattno - 1)->attisdropped ||
			!skip_operator(op->opno, l, op->inputcollid, rel, strategy, &proc))
			return false;
		*kind = VEC_COLCOL;
		*attidx = l->varattno - 1;
		*value = (Node *) r;
		return true;
	}
	var = normalize_opexpr(op, relid, &opno, value);
	if (var == NULL)
		return false;
	if (!skip_operator(opno, var, op->inputcollid, rel, strategy, &proc))
		return false;
	coltype = getBaseType(var->vartype);
	valtype = exprType(*value);
	*attidx = var->varattno - 1;
	switch (coltype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			*kind = VEC_INT;
			return valtype == INT2OID || valtype == INT4OID || valtype == INT8OID;
		case DATEOID:
			*kind = valtype == TIMESTAMPOID ? VEC_DATE_TS : VEC_INT;
			return valtype == DATEOID || valtype == TIMESTAMPOID;
#ifdef HAVE_INT128
		case NUMERICOID:
			*kind = VEC_NUMERIC;
			return valtype == NUMERICOID;
#endif
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*kind = VEC_INT;
			return valtype == coltype;
		case FLOAT4OID:
			*kind = VEC_FLOAT4;
			return valtype == FLOAT4OID;
		case FLOAT8OID:
			*kind = VEC_FLOAT8;
			return valtype == FLOAT8OID;
		default:
			return false;
	}
}

/* ---- planning ---- */

typedef struct ColumnsContext
{
	Bitmapset  *attrs;			/* offset by FirstLowInvalidHeapAttributeNumber */
} ColumnsContext;

static bool
whole_row(Bitmapset *attrs)
{
	return bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
}

/* Correlation of a column with the row order (0 when unknown). */
static double
column_correlation(Oid relid, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
									  Int16GetDatum(attnum), BoolGetDatum(false));
	AttStatsSlot sslot;
	double		corr = 0.0;

	if (!HeapTupleIsValid(tup))
		return 0.0;
	if (get_attstatsslot(&sslot, tup, STATISTIC_KIND_CORRELATION, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers == 1)
			corr = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(tup);
	return corr;
}

/* The single column a qual tree refers to, or 0. */
static AttrNumber
single_column(Node *clause, Index relid)
{
	Bitmapset  *attrs = NULL;
	int			k;

	pull_varattnos(clause, relid, &attrs);
	if (bms_num_members(attrs) != 1)
		return 0;
	k = bms_singleton_member(attrs) + FirstLowInvalidHeapAttributeNumber;
	return k > 0 ? k : 0;
}

static double
parallel_divisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - (0.3 * workers);

		if (leader > 0)
			divisor += leader;
	}
	return divisor;
}

static CustomPathMethods tscan_path_methods;

/* What a TesseraScan of the relation costs, apart from parallelism. */
typedef struct TscanEstimate
{
	double		read_frac;		/* share of row groups expected to be read */
	int			ncols;			/* columns decoded */
	BlockNumber phys_pages;		/* the relation's real size */
	double		vec_sel;		/* selectivity of the vector quals */
	int			nvec;
	List	   *other_quals;	/* RestrictInfos left to the plan qual */
} TscanEstimate;

static void
tscan_estimate(PlannerInfo *root, RelOptInfo *rel, Relation relation, Bitmapset *attrs,
			   TscanEstimate *est)
{
	TupleDesc	desc = RelationGetDescr(relation);
	bool		all = whole_row(attrs);
	ListCell   *lc;

	memset(est, 0, sizeof(TscanEstimate));
	est->read_frac = 1.0;
	est->vec_sel = 1.0;
	est->phys_pages = TesseraPhysicalBlocks(relation);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		if (!attr->attisdropped &&
			(all || bms_is_member(attr->attnum - FirstLowInvalidHeapAttributeNumber, attrs)))
			est->ncols++;
	}

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Node	   *clause = (Node *) rinfo->clause;
		VecKind		kind;
		int			strategy,
					attidx;
		Node	   *value;

		if (vectorizable(clause, rel->relid, relation, &kind, &strategy, &attidx, &value))
		{
			est->nvec++;
			est->vec_sel *= clause_selectivity(root, (Node *) rinfo, 0, JOIN_INNER, NULL);
		}
		else
			est->other_quals = lappend(est->other_quals, rinfo);
	}

	/*
	 * Skipping pays where a column follows the row order: then only the
	 * share of row groups its quals select is read (a BETWEEN's two bounds
	 * together), otherwise nearly all.  The best column decides.
	 */
	for (int i = 0; i < desc->natts; i++)
	{
		List	   *col_quals = NIL;
		Selectivity sel;
		double		corr;

		foreach(lc, rel->baserestrictinfo)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

			if (single_column((Node *) rinfo->clause, rel->relid) == i + 1 &&
				skippable((Node *) rinfo->clause, rel->relid, relation))
				col_quals = lappend(col_quals, rinfo);
		}
		if (col_quals == NIL)
			continue;
		sel = clauselist_selectivity(root, col_quals, 0, JOIN_INNER, NULL);
		corr = column_correlation(RelationGetRelid(relation), i + 1);
		est->read_frac = Min(est->read_frac, sel + (1.0 - sel) * (1.0 - corr * corr));
		list_free(col_quals);
	}
	/* at least one row group (of the default size) */
	est->read_frac = Max(est->read_frac, 1.0 / Max(rel->tuples / 10000.0, 1.0));
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
	cpu_run = rows_read * (est->ncols + est->nvec * 0.1) * cpu_operator_cost +
		rows_kept * (cpu_tuple_cost + qcost.per_tuple);
	if (parallel_workers > 0)
	{
		double		divisor = parallel_divisor(parallel_workers);

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

	tscan_estimate(root, rel, relation, attrs, &est);
	add_path(rel, &tscan_make_path(root, rel, &est, attrs, 0, rel->lateral_relids)->path);

	if (rel->consider_parallel && rel->lateral_relids == NULL)
	{
		int			workers = compute_parallel_worker(rel, rel->pages, -1,
													  max_parallel_workers_per_gather);

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
				!skippable((Node *) rinfo->clause, rel->relid, relation) ||
				single_column((Node *) rinfo->clause, rel->relid) <= 0)
				continue;
			outer = bms_union(bms_difference(rinfo->clause_relids, rel->relids),
							  rel->lateral_relids);
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
			for (int i = 0; i < RelationGetDescr(relation)->natts; i++)
			{
				List	   *col = NIL;
				ListCell   *pc;
				Selectivity sel;
				double		corr;

				foreach(pc, ppi->ppi_clauses)
				{
					RestrictInfo *pr = lfirst_node(RestrictInfo, pc);

					if (single_column((Node *) pr->clause, rel->relid) == i + 1 &&
						skippable((Node *) pr->clause, rel->relid, relation))
						col = lappend(col, pr);
				}
				if (col == NIL)
					continue;
				sel = clauselist_selectivity(root, col, rel->relid, JOIN_INNER, NULL);
				corr = column_correlation(RelationGetRelid(relation), i + 1);
				pest.read_frac = Min(pest.read_frac, sel + (1.0 - sel) * (1.0 - corr * corr));
			}
			pest.read_frac = Max(pest.read_frac, 1.0 / Max(rel->tuples / 10000.0, 1.0));
			if (pest.read_frac < est.read_frac)
				add_path(rel, &tscan_make_path(root, rel, &pest, attrs, 0, outer)->path);
		}
	}
	table_close(relation, NoLock);
}

static CustomScanMethods tscan_plan_methods;

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
			   *vector = NIL,
			   *plain = NIL;
	List	   *needed = NIL;
	ListCell   *lc;
	int			natts = RelationGetDescr(relation)->natts;

	foreach(lc, quals)
	{
		Node	   *qual = lfirst(lc);
		VecKind		kind;
		int			strategy,
					attidx;
		Node	   *value;

		if (skippable(qual, rel->relid, relation))
			skip = lappend(skip, qual);
		if (vectorizable(qual, rel->relid, relation, &kind, &strategy, &attidx, &value))
			vector = lappend(vector, qual);
		else
			plain = lappend(plain, qual);
	}

	/* the columns to decode; the target list is the final one */
	pull_varattnos((Node *) tlist, rel->relid, &attrs);
	pull_varattnos((Node *) quals, rel->relid, &attrs);
	for (int i = 1; i <= natts; i++)
	{
		if (whole_row(attrs) ||
			bms_is_member(i - FirstLowInvalidHeapAttributeNumber, attrs))
			needed = lappend_int(needed, i);
	}
	table_close(relation, NoLock);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = plain;
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->methods = &tscan_plan_methods;
	/* custom_exprs: the skip quals, then the vector quals */
	cscan->custom_exprs = list_concat(list_copy(skip), vector);
	cscan->custom_private = list_make3(makeInteger(list_length(skip)),
									   makeInteger(list_length(vector)),
									   needed);
	return &cscan->scan.plan;
}

/* ---- execution ---- */

typedef enum SkipKind
{
	SKIP_CMP,
	SKIP_ARRAY,
	SKIP_ISNULL,
	SKIP_NOTNULL,
	SKIP_AND,
	SKIP_OR
} SkipKind;

typedef struct SkipNode
{
	SkipKind	kind;
	int			attidx;
	int			strategy;
	bool		use_or;			/* SKIP_ARRAY: ANY rather than ALL */
	Oid			collation;
	FmgrInfo	order;			/* compare(column value, expr value) */
	ExprState  *expr;
	Oid			elemtype;		/* SKIP_ARRAY */
	/* the expression's value in this scan */
	Datum		value;
	bool		isnull;
	Datum	   *elems;
	bool	   *elemnulls;
	int			nelems;
	List	   *children;		/* SKIP_AND, SKIP_OR */
} SkipNode;

typedef struct VecQual
{
	VecKind		kind;
	int			strategy;
	int			attidx;
	int			attidx2;		/* VEC_COLCOL: the right-hand column */
	Oid			valtype;
	ExprState  *expr;
	/* the value in this scan */
	bool		isnull;
	int			run_strategy;	/* strategy to apply to ival/fval */
	int64		ival;
	float8		fval;
	Datum		dval;			/* VEC_NUMERIC */
#ifdef HAVE_INT128
	bool		scaled;			/* VEC_NUMERIC: nval/nscale are the value */
	int128		nval;
	int			nscale;
#endif
} VecQual;

/* Parallel TesseraScan/TesseraAgg: the workers' byte counters, then the scan. */
typedef struct TscanShared
{
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 bytes_decompressed;
	pg_atomic_uint64 delta_rows;
} TscanShared;

#define TSCAN_PSCAN(coordinate) \
	((ParallelTableScanDesc) ((char *) (coordinate) + MAXALIGN(sizeof(TscanShared))))

typedef struct TesseraScanState
{
	CustomScanState css;
	List	   *skip;			/* SkipNode, ANDed */
	VecQual    *vquals;
	int			nvquals;
	ExprState  *vector_recheck; /* the vector quals, for EvalPlanQual */
	List	   *skip_exprs;		/* for EXPLAIN */
	List	   *vector_exprs;
	List	   *needed_list;
	bool	   *needed;
	bool		values_ready;
	bool		filters_set;
	MemoryContext filter_cxt;
	bool	   *sel;
	int		   *idx;			/* rows still selected, once few are */
	int			sel_cap;
	uint64		rgs_read;
	uint64		rgs_skipped;
	uint64		rows_removed;
	/* bytes read and decompressed: this process's, and the workers' */
	TscanShared *shared;
	bool		is_worker;
	bool		bytes_final;
	uint64		bytes_read;
	uint64		bytes_decompressed;
	uint64		delta_rows;
	/* fast path: no plan qual, output columns are plain columns */
	bool		fast;
	int			nproj;
	int		   *proj_att;		/* [nproj] attribute index of each output */
} TesseraScanState;

static CustomExecMethods tscan_exec_methods;

static Node *
tscan_create_state(CustomScan *cscan)
{
	TesseraScanState *state = (TesseraScanState *) newNode(sizeof(TesseraScanState),
														  T_CustomScanState);

	state->css.methods = &tscan_exec_methods;
	return (Node *) state;
}

static SkipNode *
build_skip(Node *node, Index relid, Relation rel, PlanState *ps)
{
	SkipNode   *sn = palloc0(sizeof(SkipNode));

	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;
		Oid			opno,
					proc;
		Node	   *value;
		Var		   *var = normalize_opexpr(op, relid, &opno, &value);

		if (var == NULL || !skip_operator(opno, var, op->inputcollid, rel, &sn->strategy, &proc))
			elog(ERROR, "TesseraScan: unexpected row-group filter");
		sn->kind = SKIP_CMP;
		sn->attidx = var->varattno - 1;
		sn->collation = op->inputcollid;
		fmgr_info(proc, &sn->order);
		sn->expr = ExecInitExpr((Expr *) value, ps);
	}
	else if (IsA(node, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) node;
		Var		   *var = scan_var(linitial(op->args), relid);
		Oid			proc;

		if (var == NULL || !skip_operator(op->opno, var, op->inputcollid, rel, &sn->strategy, &proc))
			elog(ERROR, "TesseraScan: unexpected row-group filter");
		sn->kind = SKIP_ARRAY;
		sn->attidx = var->varattno - 1;
		sn->use_or = op->useOr;
		sn->collation = op->inputcollid;
		fmgr_info(proc, &sn->order);
		sn->expr = ExecInitExpr((Expr *) lsecond(op->args), ps);
		sn->elemtype = get_element_type(exprType(lsecond(op->args)));
	}
	else if (IsA(node, NullTest))
	{
		NullTest   *nt = (NullTest *) node;

		sn->kind = nt->nulltesttype == IS_NULL ? SKIP_ISNULL : SKIP_NOTNULL;
		sn->attidx = scan_var((Node *) nt->arg, relid)->varattno - 1;
	}
	else
	{
		BoolExpr   *b = castNode(BoolExpr, node);
		ListCell   *lc;

		sn->kind = b->boolop == AND_EXPR ? SKIP_AND : SKIP_OR;
		foreach(lc, b->args)
			sn->children = lappend(sn->children, build_skip(lfirst(lc), relid, rel, ps));
	}
	return sn;
}

/* Set up the row-group filters and vector quals of a TesseraScan or TesseraAgg. */
static void
init_filters(TesseraScanState *ts, List *skip_quals, List *vector_quals, Index relid,
			 Relation rel)
{
	PlanState  *ps = &ts->css.ss.ps;
	ListCell   *lc;

	ts->skip_exprs = skip_quals;
	foreach(lc, skip_quals)
		ts->skip = lappend(ts->skip, build_skip(lfirst(lc), relid, rel, ps));

	ts->vector_exprs = vector_quals;
	ts->vquals = palloc0(sizeof(VecQual) * Max(list_length(vector_quals), 1));
	foreach(lc, vector_quals)
	{
		VecQual    *vq = &ts->vquals[ts->nvquals++];
		Node	   *value;

		if (!vectorizable(lfirst(lc), relid, rel, &vq->kind, &vq->strategy, &vq->attidx, &value))
			elog(ERROR, "TesseraScan: unexpected vector qual");
		vq->valtype = exprType(value);
		if (vq->kind == VEC_COLCOL)
			vq->attidx2 = ((Var *) value)->varattno - 1;
		else
			vq->expr = ExecInitExpr((Expr *) value, ps);
	}
	ts->filter_cxt = AllocSetContextCreate(CurrentMemoryContext, "TesseraScan filter",
										   ALLOCSET_SMALL_SIZES);
#ifdef HAVE_INT128
	init_pow10_i128();
#endif
}

static void
tscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	int			nskip = intVal(linitial(cscan->custom_private));
	int			nvec = intVal(lsecond(cscan->custom_private));
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

	ts->needed_list = lthird(cscan->custom_private);
	ts->needed = palloc0(sizeof(bool) * Max(natts, 1));
	foreach(lc, ts->needed_list)
	{
		int			attnum = lfirst_int(lc);

		if (attnum >= 1 && attnum <= natts)
			ts->needed[attnum - 1] = true;
	}

	init_filters(ts, list_copy_head(cscan->custom_exprs, nskip),
				 list_copy_tail(cscan->custom_exprs, nskip), cscan->scan.scanrelid, rel);
	if (ts->nvquals != nvec)
		elog(ERROR, "TesseraScan: plan has %d vector quals, found %d", nvec, ts->nvquals);
	ts->vector_recheck = ExecInitQual(ts->vector_exprs, &node->ss.ps);
}

/* Evaluate the quals' expressions for this (re)scan. */
static void
eval_skip_values(TesseraScanState *ts, List *nodes, ExprContext *econtext)
{
	ListCell   *lc;

	foreach(lc, nodes)
	{
		SkipNode   *sn = lfirst(lc);

		if (sn->kind == SKIP_AND || sn->kind == SKIP_OR)
			eval_skip_values(ts, sn->children, econtext);
		else if (sn->expr != NULL)
		{
			sn->value = ExecEvalExprSwitchContext(sn->expr, econtext, &sn->isnull);
			if (sn->kind == SKIP_ARRAY && !sn->isnull)
			{
				ArrayType  *arr = DatumGetArrayTypeP(sn->value);
				int16		elmlen;
				bool		elmbyval;
				char		elmalign;

				get_typlenbyvalalign(sn->elemtype, &elmlen, &elmbyval, &elmalign);
				deconstruct_array(arr, sn->elemtype, elmlen, elmbyval, elmalign,
								  &sn->elems, &sn->elemnulls, &sn->nelems);
			}
		}
	}
}

/*
 * A date as the timestamp date_cmp_timestamp compares it as: dates past the
 * end of the timestamp range sort after every finite timestamp and before
 * infinity.  Non-decreasing over all dates.
 */
static inline int64
date_as_timestamp(Datum d)
{
	DateADT		date = DatumGetDateADT(d);

	if (DATE_IS_NOBEGIN(date))
		return DT_NOBEGIN;
	if (DATE_IS_NOEND(date))
		return DT_NOEND;
	if (date >= (TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE))
		return DT_NOEND - 1;
	/* no such date exists; keeps the mapping monotonic for the search below */
	if (date < (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE))
		return DT_NOBEGIN + 1;
	return (int64) date * USECS_PER_DAY;
}

/* The smallest date that maps above ts (or to ts or above, if !strict). */
static int64
first_date_above(Timestamp ts, bool strict)
{
	int64		lo = PG_INT32_MIN,
				hi = (int64) PG_INT32_MAX + 1;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int64		t = date_as_timestamp(DateADTGetDatum((DateADT) mid));

		if (strict ? t > ts : t >= ts)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * `date op timestamp` as a comparison of dates: as date_as_timestamp is
 * monotonic, the dates below a timestamp form a prefix.  Equality keeps
 * comparing timestamps.
 */
static void
date_ts_thresholds(VecQual *vq, Timestamp ts)
{
	switch (vq->strategy)
	{
		case BTLessStrategyNumber:
			vq->run_strategy = BTLessStrategyNumber;
			vq->ival = first_date_above(ts, false);
			break;
		case BTLessEqualStrategyNumber:
			vq->run_strategy = BTLessStrategyNumber;
			vq->ival = first_date_above(ts, true);
			break;
		case BTGreaterEqualStrategyNumber:
			vq->run_strategy = BTGreaterEqualStrategyNumber;
			vq->ival = first_date_above(ts, false);
			break;
		case BTGreaterStrategyNumber:
			vq->run_strategy = BTGreaterEqualStrategyNumber;
			vq->ival = first_date_above(ts, true);
			break;
		default:
			vq->ival = ts;
			break;
	}
}

static void eval_vecqual(VecQual *vq, ExprContext *econtext);

static void
eval_values(TesseraScanState *ts)
{
	ExprContext *econtext = ts->css.ss.ps.ps_ExprContext;
	MemoryContext old;

	/* values live until the next rescan */
	MemoryContextReset(ts->filter_cxt);
	old = MemoryContextSwitchTo(ts->filter_cxt);
	ResetExprContext(econtext);
	eval_skip_values(ts, ts->skip, econtext);
	for (int i = 0; i < ts->nvquals; i++)
		eval_vecqual(&ts->vquals[i], econtext);
	MemoryContextSwitchTo(old);
	ts->values_ready = true;
}

/* The value of a vector qual for this scan, in the current memory context. */
static void
eval_vecqual(VecQual *vq, ExprContext *econtext)
{
	if (vq->kind == VEC_COLCOL)
	{
		/* no value: the other column's */
		vq->run_strategy = vq->strategy;
		vq->isnull = false;
		return;
	}
	{
		Datum		d = ExecEvalExprSwitchContext(vq->expr, econtext, &vq->isnull);

		vq->run_strategy = vq->strategy;
		if (vq->isnull)
			return;
		if (vq->kind == VEC_DATE_TS)
		{
			date_ts_thresholds(vq, DatumGetTimestamp(d));
			return;
		}
		switch (vq->valtype)
		{
			case INT2OID:
				vq->ival = DatumGetInt16(d);
				break;
			case INT4OID:
			case DATEOID:
				vq->ival = DatumGetInt32(d);
				break;
			case INT8OID:
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
				vq->ival = DatumGetInt64(d);
				break;
			case FLOAT4OID:
				vq->fval = DatumGetFloat4(d);
				break;
			case FLOAT8OID:
				vq->fval = DatumGetFloat8(d);
				break;
#ifdef HAVE_INT128
			case NUMERICOID:
				vq->dval = datumCopy(d, false, -1);
				vq->scaled = TesseraNumericScaled(vq->dval, &vq->nval, &vq->nscale);
				break;
#endif
		}
	}
}

/* Could a row with a value in [min, max] satisfy `col strategy value`? */
static bool
range_may_match(SkipNode *sn, TesseraChunkSummary *cs, Datum value)
{
	int			c;

	switch (sn->strategy)
	{
		case BTLessStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value)) < 0;
		case BTLessEqualStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value)) <= 0;
		case BTEqualStrategyNumber:
			c = DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->min, value));
			if (c > 0)
				return false;
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) >= 0;
		case BTGreaterEqualStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) >= 0;
		case BTGreaterStrategyNumber:
			return DatumGetInt32(FunctionCall2Coll(&sn->order, sn->collation, cs->max, value)) > 0;
	}
	return true;
}

/* May some row of the row group satisfy the filter? */
static bool
skip_may_match(SkipNode *sn, TesseraReader *r, int stripe, int rg)
{
	TesseraChunkSummary cs;
	ListCell   *lc;

	switch (sn->kind)
	{
		case SKIP_AND:
			foreach(lc, sn->children)
			{
				if (!skip_may_match(lfirst(lc), r, stripe, rg))
					return false;
			}
			return true;
		case SKIP_OR:
			foreach(lc, sn->children)
			{
				if (skip_may_match(lfirst(lc), r, stripe, rg))
					return true;
			}
			return false;
		default:
			break;
	}

	TesseraReaderChunkSummary(r, stripe, rg, sn->attidx, &cs);
	switch (sn->kind)
	{
		case SKIP_ISNULL:
			return cs.nonnull < cs.rows;
		case SKIP_NOTNULL:
			return cs.nonnull > 0;
		case SKIP_CMP:
			/* comparisons are strict: NULLs never match */
			if (sn->isnull || cs.nonnull == 0)
				return false;
			return !cs.has_minmax || range_may_match(sn, &cs, sn->value);
		case SKIP_ARRAY:
			if (sn->isnull || cs.nonnull == 0)
				return false;
			if (!cs.has_minmax)
				return true;
			for (int i = 0; i < sn->nelems; i++)
			{
				bool		m = !sn->elemnulls[i] && range_may_match(sn, &cs, sn->elems[i]);

				if (sn->use_or && m)
					return true;
				if (!sn->use_or && !m)
					return false;
			}
			return !sn->use_or;
		default:
			return true;
	}
}

static bool
tscan_rg_filter(void *arg, TesseraReader *r, int stripe, int rg)
{
	TesseraScanState *ts = arg;
	MemoryContext tmp = ts->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory;
	MemoryContext old = MemoryContextSwitchTo(tmp);
	bool		may = true;
	ListCell   *lc;

	foreach(lc, ts->skip)
	{
		if (!skip_may_match(lfirst(lc), r, stripe, rg))
		{
			may = false;
			break;
		}
	}
	MemoryContextSwitchTo(old);
	if (may)
		ts->rgs_read++;
	else
	{
		ts->rgs_skipped++;
		if (ts->css.ss.ps.instrument)
			ts->css.ss.ps.instrument->ntuples2 += 1;
	}
	return may;
}

/*
 * sel[i] &= (values[i] strategy VAL): over every row, branch-free so that
 * it vectorizes, or over the rows still selected (idx) once few are.
 */
#define VEC_CMP_LOOP(CMP) \
	do { \
		if (idx == NULL) \
			for (int i = 0; i < n; i++) \
				sel[i] &= (!isnull[i]) & (CMP); \
		else \
			for (int j = 0; j < nidx; j++) \
			{ \
				int			i = idx[j]; \
				sel[i] = (!isnull[i]) & (CMP); \
			} \
	} while (0)

#define VEC_LOOP(GET, VAL, LT, LE, EQ) \
	do { \
		switch (strategy) \
		{ \
			case BTLessStrategyNumber: \
				VEC_CMP_LOOP(LT(GET(values[i]), VAL)); \
				break; \
			case BTLessEqualStrategyNumber: \
				VEC_CMP_LOOP(LE(GET(values[i]), VAL)); \
				break; \
			case BTEqualStrategyNumber: \
				VEC_CMP_LOOP(EQ(GET(values[i]), VAL)); \
				break; \
			case BTGreaterEqualStrategyNumber: \
				VEC_CMP_LOOP(LE(VAL, GET(values[i]))); \
				break; \
			case BTGreaterStrategyNumber: \
				VEC_CMP_LOOP(LT(VAL, GET(values[i]))); \
				break; \
		} \
	} while (0)

#define NUM_LT(a, b) ((a) < (b))
#define NUM_LE(a, b) ((a) <= (b))
#define NUM_EQ(a, b) ((a) == (b))

static inline int64
int_datum(Datum d, int16 typlen)
{
	return typlen == 2 ? (int64) DatumGetInt16(d) :
		typlen == 4 ? (int64) DatumGetInt32(d) : DatumGetInt64(d);
}

#ifdef HAVE_INT128
/*
 * `numeric column op value` over a batch.  A decimal-encoded chunk is
 * compared as integers at the chunk's scale: against the value rounded
 * down (fl) and up (ce) to that scale, which decide every strategy
 * exactly.  Other chunks, and values that do not fit, use numeric_cmp.
 */
static bool
numeric_bounds(VecQual *vq, int cmax, int128 *fl, int128 *ce, bool *exact)
{
	if (!vq->scaled || cmax < 0 || cmax >= (int) lengthof(pow10_i128) ||
		vq->nscale >= (int) lengthof(pow10_i128))
		return false;
	if (vq->nscale <= cmax)
	{
		*exact = true;
		if (__builtin_mul_overflow(vq->nval, pow10_i128[cmax - vq->nscale], fl))
			return false;
		*ce = *fl;
	}
	else
	{
		int128		p = pow10_i128[vq->nscale - cmax];
		int128		r = vq->nval % p;

		*fl = vq->nval / p - (r < 0 ? 1 : 0);
		*exact = r == 0;
		*ce = *exact ? *fl : *fl + 1;
	}
	return true;
}

static void
numeric_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	int128	   *v;
	int64	   *scales;
	bool	   *isnull;
	int			cmax;
	int128		fl = 0,
				ce = 0;
	bool		exact = false,
				fits = false;

	if (vq->scaled && TesseraBatchScaled(b, vq->attidx, &v, &scales, &isnull, &cmax))
		fits = numeric_bounds(vq, cmax, &fl, &ce, &exact);
	if (fits)
	{
		switch (vq->strategy)
		{
			case BTLessStrategyNumber:
				VEC_CMP_LOOP(v[i] < ce);
				break;
			case BTLessEqualStrategyNumber:
				VEC_CMP_LOOP(v[i] <= fl);
				break;
			case BTEqualStrategyNumber:
				VEC_CMP_LOOP(exact & (v[i] == fl));
				break;
			case BTGreaterEqualStrategyNumber:
				VEC_CMP_LOOP(v[i] >= ce);
				break;
			case BTGreaterStrategyNumber:
				VEC_CMP_LOOP(v[i] > fl);
				break;
		}
	}
	else
	{
		Datum	   *values;
		MemoryContext old = MemoryContextSwitchTo(b->reader->batch_cxt);

		TesseraBatchColumn(b, vq->attidx, &values, &isnull);
		for (int j = 0; j < (idx ? nidx : n); j++)
		{
			int			i = idx ? idx[j] : j;
			int			c;

			if (!sel[i])
				continue;
			if (isnull[i])
			{
				sel[i] = false;
				continue;
			}
			c = DatumGetInt32(DirectFunctionCall2(numeric_cmp, values[i], vq->dval));
			switch (vq->strategy)
			{
				case BTLessStrategyNumber:
					sel[i] = c < 0;
					break;
				case BTLessEqualStrategyNumber:
					sel[i] = c <= 0;
					break;
				case BTEqualStrategyNumber:
					sel[i] = c == 0;
					break;
				case BTGreaterEqualStrategyNumber:
					sel[i] = c >= 0;
					break;
				case BTGreaterStrategyNumber:
					sel[i] = c > 0;
					break;
			}
		}
		MemoryContextSwitchTo(old);
	}
}
#endif

/*
 * The rows i < n with sel[i], listed in rows[]; their count.  Eight flags
 * at a time, gathered into the bits of a byte (each flag is 0 or 1, so the
 * multiplication moves flag k to bit 56 + k without carries): the work is
 * per word and per selected row, not per row.
 */
static int
sel_rows(const bool *sel, int n, int *rows)
{
	int			m = 0,
				i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		w;
		uint32		bits;

		memcpy(&w, sel + i, sizeof(w));
		bits = (uint32) ((w * UINT64CONST(0x0102040810204080)) >> 56);
		while (bits != 0)
		{
			rows[m++] = i + pg_rightmost_one_pos32(bits);
			bits &= bits - 1;
		}
	}
	for (; i < n; i++)
	{
		rows[m] = i;
		m += sel[i];
	}
	return m;
}

/* How many of sel[0..n) are true (each is 0 or 1). */
static uint64
sel_count(const bool *sel, int n)
{
	uint64		count = 0;
	int			i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		w;

		memcpy(&w, sel + i, sizeof(w));
		count += pg_popcount64(w);
	}
	for (; i < n; i++)
		count += sel[i];
	return count;
}

#define RANGE_MIN	(-(int128) ((uint128) 1 << 126))
#define RANGE_MAX	((int128) ((uint128) 1 << 126))

/* Can vq be a bound on the stored integers of its column? */
static inline bool
range_qual(const VecQual *vq)
{
	switch (vq->kind)
	{
		case VEC_INT:
			return true;
		case VEC_DATE_TS:
			/* equality compares timestamps, the others date thresholds */
			return vq->strategy != BTEqualStrategyNumber;
		case VEC_NUMERIC:
			return vq->scaled;
		default:
			return false;
	}
}

/*
 * Narrow [*lo, *hi] by vq, on the stored integers of its column (numerics
 * at the chunk's scale cmax).  False if it cannot be expressed so.
 */
static bool
range_narrow(VecQual *vq, int cmax, int128 *lo, int128 *hi)
{
	int128		fl,
				ce;
	bool		exact;

	if (vq->kind == VEC_NUMERIC)
	{
		if (!numeric_bounds(vq, cmax, &fl, &ce, &exact))
			return false;
	}
	else
	{
		fl = ce = vq->ival;
		exact = true;
	}
	switch (vq->run_strategy)
	{
		case BTLessStrategyNumber:
			*hi = Min(*hi, ce - 1);
			break;
		case BTLessEqualStrategyNumber:
			*hi = Min(*hi, fl);
			break;
		case BTEqualStrategyNumber:
			if (!exact)
				*hi = RANGE_MIN;	/* no stored value equals it */
			*lo = Max(*lo, fl);
			*hi = Min(*hi, fl);
			break;
		case BTGreaterEqualStrategyNumber:
			*lo = Max(*lo, ce);
			break;
		case BTGreaterStrategyNumber:
			*lo = Max(*lo, fl + 1);
			break;
		default:
			return false;
	}
	return true;
}

/*
 * The quals on the column of vquals[q] that bound its stored integers,
 * from q on, applied together as one range compared on the encoded chunk
 * (TesseraBatchRangeFilter): `x >= a AND x < b` reads the column once and
 * decodes nothing.  Marks the quals applied in done[]; false if the chunk
 * needs the decoded column.
 */
static bool
range_apply(VecQual *vquals, int nvq, int q, bool *done, TesseraBatch *b, bool *sel, int n,
			const int *idx, int nidx)
{
	int			attidx = vquals[q].attidx;
	int			cmax = 0;
	int128		lo = RANGE_MIN,
				hi = RANGE_MAX;
	bool		member[64];

	if (nvq > (int) lengthof(member))
		return false;
	if (vquals[q].kind == VEC_NUMERIC && !TesseraBatchDecimalScale(b, attidx, &cmax))
		return false;
	for (int r = q; r < nvq; r++)
	{
		VecQual    *vq = &vquals[r];

		member[r] = !done[r] && !vq->isnull && vq->attidx == attidx && range_qual(vq) &&
			(vq->kind == VEC_NUMERIC) == (vquals[q].kind == VEC_NUMERIC) &&
			range_narrow(vq, cmax, &lo, &hi);
	}
	if (!member[q])
		return false;
	if (TesseraBatchRangeFilter(b, attidx, lo, hi, sel, n, idx, nidx) != TESSERA_FILTER_DONE)
		return false;
	for (int r = q; r < nvq; r++)
		done[r] |= member[r];
	return true;
}

/*
 * sel[i] = every qual of vquals holds for row i of the batch.  idxbuf:
 * room for a row number per row.
 */
static void
vec_apply(VecQual *vquals, int nvq, TesseraBatch *b, bool *sel, int n, int *idxbuf)
{
	int		   *idx = NULL;
	int			nidx = 0;
	bool		done[64] = {0};
	bool		applied = false;

	memset(sel, true, n);

	for (int q = 0; q < nvq; q++)
	{
		VecQual    *vq = &vquals[q];
		Datum	   *values;
		bool	   *isnull;
		int			strategy = vq->run_strategy;

		if (vq->isnull)
		{
			memset(sel, false, n);
			break;
		}
		if (q < (int) lengthof(done) && done[q])
			continue;

		/* the rows listed so far, less those the previous qual dropped */
		if (idx != NULL)
		{
			int			k = 0;

			for (int j = 0; j < nidx; j++)
			{
				idx[k] = idx[j];
				k += sel[idx[j]];
			}
			nidx = k;
		}

		/*
		 * A range compared on the packed chunk costs about what listing the
		 * rows left would (it runs over every row until they are listed), so
		 * it is tried first; only quals on decoded values list the rows.
		 */
		if (range_qual(vq) && q < (int) lengthof(done) &&
			range_apply(vquals, nvq, q, done, b, sel, n, idx, nidx))
		{
			applied = true;
			continue;
		}

		/* once few rows are left, later quals look at those rows only */
		if (applied && idx == NULL)
		{
			int			k = 0;

			/* a sample decides whether listing the rows pays */
			for (int i = 0; i < n; i += 16)
				k += sel[i];
			if (k * 16 * 4 < n)
			{
				idx = idxbuf;
				nidx = sel_rows(sel, n, idx);
			}
		}
		applied = true;

		if (vq->kind != VEC_NUMERIC)
			TesseraBatchColumn(b, vq->attidx, &values, &isnull);
		switch (vq->kind)
		{
			case VEC_INT:
				{
					int16		typlen = TupleDescAttr(b->reader->tupdesc, vq->attidx)->attlen;
					int64		v = vq->ival;

					if (typlen == 4)
						VEC_LOOP(DatumGetInt32, v, NUM_LT, NUM_LE, NUM_EQ);
					else if (typlen == 8)
						VEC_LOOP(DatumGetInt64, v, NUM_LT, NUM_LE, NUM_EQ);
					else
						VEC_LOOP(DatumGetInt16, v, NUM_LT, NUM_LE, NUM_EQ);
					break;
				}
			case VEC_FLOAT4:
				{
					float4		v = (float4) vq->fval;

					VEC_LOOP(DatumGetFloat4, v, float4_lt, float4_le, float4_eq);
					break;
				}
			case VEC_FLOAT8:
				{
					float8		v = vq->fval;

					VEC_LOOP(DatumGetFloat8, v, float8_lt, float8_le, float8_eq);
					break;
				}
			case VEC_DATE_TS:
				{
					int64		v = vq->ival;

					if (strategy == BTEqualStrategyNumber)
						VEC_LOOP(date_as_timestamp, v, NUM_LT, NUM_LE, NUM_EQ);
					else
						VEC_LOOP(DatumGetDateADT, v, NUM_LT, NUM_LE, NUM_EQ);
					break;
				}
			case VEC_COLCOL:
				{
					Datum	   *values2;
					bool	   *isnull2;
					int16		typlen = TupleDescAttr(b->reader->tupdesc, vq->attidx)->attlen;

					TesseraBatchColumn(b, vq->attidx2, &values2, &isnull2);
#define COLCOL_LOOP(GET) \
					switch (strategy) \
					{ \
						case BTLessStrategyNumber: \
							VEC_CMP_LOOP(!isnull2[i] & (GET(values[i]) < GET(values2[i]))); \
							break; \
						case BTLessEqualStrategyNumber: \
							VEC_CMP_LOOP(!isnull2[i] & (GET(values[i]) <= GET(values2[i]))); \
							break; \
						case BTEqualStrategyNumber: \
							VEC_CMP_LOOP(!isnull2[i] & (GET(values[i]) == GET(values2[i]))); \
							break; \
						case BTGreaterEqualStrategyNumber: \
							VEC_CMP_LOOP(!isnull2[i] & (GET(values[i]) >= GET(values2[i]))); \
							break; \
						case BTGreaterStrategyNumber: \
							VEC_CMP_LOOP(!isnull2[i] & (GET(values[i]) > GET(values2[i]))); \
							break; \
					}
					if (typlen == 2)
						COLCOL_LOOP(DatumGetInt16)
					else if (typlen == 4)
						COLCOL_LOOP(DatumGetInt32)
					else
						COLCOL_LOOP(DatumGetInt64)
#undef COLCOL_LOOP
					break;
				}
#ifdef HAVE_INT128
			case VEC_NUMERIC:
				numeric_filter(vq, b, sel, n, idx, nidx);
				break;
#endif
		}
	}

}

static const bool *
tscan_batch_filter(void *arg, TesseraBatch *b)
{
	TesseraScanState *ts = arg;
	bool	   *sel;
	int			n = b->nrows;
	uint64		kept = 0,
				live = 0;

	if (ts->nvquals == 0)
		return NULL;
	if (ts->sel_cap < b->chunk_rows)
	{
		if (ts->sel)
			pfree(ts->sel);
		if (ts->idx)
			pfree(ts->idx);
		ts->sel_cap = Max(b->chunk_rows, 1024);
		ts->sel = MemoryContextAlloc(ts->css.ss.ps.state->es_query_cxt, ts->sel_cap);
		ts->idx = MemoryContextAlloc(ts->css.ss.ps.state->es_query_cxt,
									 sizeof(int) * ts->sel_cap);
	}
	sel = ts->sel;
	vec_apply(ts->vquals, ts->nvquals, b, sel, n, ts->idx);

	if (b->deleted == NULL)
	{
		live = n;
		kept = sel_count(sel, n);
	}
	else
		for (int i = 0; i < n; i++)
		{
			live += !b->deleted[i];
			kept += sel[i] & !b->deleted[i];
		}
	ts->rows_removed += live - kept;
	/* few rows survive: decode their other columns value by value */
	b->sparse = kept * 32 < (uint64) n;
	if (ts->css.ss.ps.instrument)
		ts->css.ss.ps.instrument->nfiltered2 += live - kept;
	return sel;
}

static void
set_filters(TesseraScanState *ts)
{
	TableScanDesc scan = ts->css.ss.ss_currentScanDesc;

	TesseraScanSetColumns(scan, ts->needed);
	TesseraScanSetFilters(scan, ts->skip != NIL ? tscan_rg_filter : NULL,
						  ts->nvquals > 0 ? tscan_batch_filter : NULL, ts);
	ts->filters_set = true;
}

static TupleTableSlot *
tscan_next(ScanState *ss)
{
	TesseraScanState *ts = (TesseraScanState *) ss;
	TableScanDesc scan = ss->ss_currentScanDesc;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (scan == NULL)
	{
		scan = table_beginscan(ss->ss_currentRelation, ss->ps.state->es_snapshot, 0, NULL);
		ss->ss_currentScanDesc = scan;
		ts->filters_set = false;
	}
	if (!ts->filters_set)
		set_filters(ts);
	if (!ts->values_ready)
		eval_values(ts);

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
	TableScanDesc scan = ss->ss_currentScanDesc;
	TupleTableSlot *out = ss->ps.ps_ResultTupleSlot;
	TesseraBatch *b;
	int			row;

	if (scan == NULL)
	{
		scan = table_beginscan(ss->ss_currentRelation, ss->ps.state->es_snapshot, 0, NULL);
		ss->ss_currentScanDesc = scan;
		ts->filters_set = false;
	}
	if (!ts->filters_set)
		set_filters(ts);
	if (!ts->values_ready)
		eval_values(ts);

	ExecClearTuple(out);
	if (!TesseraScanNextRow(scan, ss->ps.state->es_direction, &b, &row))
		return out;
	for (int j = 0; j < ts->nproj; j++)
	{
		int			a = ts->proj_att[j];
		Datum	   *values = b->values[a];
		bool	   *isnull = b->isnull[a];

		if (unlikely(values == NULL))
		{
			if (b->sparse)
			{
				out->tts_values[j] = TesseraBatchValue(b, a, row, &out->tts_isnull[j]);
				continue;
			}
			TesseraBatchColumn(b, a, &values, &isnull);
		}
		out->tts_values[j] = values[row];
		out->tts_isnull[j] = isnull[row];
	}
	return ExecStoreVirtualTuple(out);
}

static TupleTableSlot *
tscan_exec(CustomScanState *node)
{
	TesseraScanState *ts = (TesseraScanState *) node;

	if (ts->fast && node->ss.ps.state->es_epq_active == NULL)
		return tscan_exec_fast(ts);
	return ExecScan(&node->ss, tscan_next, tscan_recheck);
}

static void
tscan_end(CustomScanState *node)
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

/* ---- parallel ---- */

static Size
tscan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return MAXALIGN(sizeof(TscanShared)) +
		table_parallelscan_estimate(node->ss.ss_currentRelation, node->ss.ps.state->es_snapshot);
}

static void
tscan_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	ParallelTableScanDesc pscan = TSCAN_PSCAN(coordinate);

	ts->shared = coordinate;
	pg_atomic_init_u64(&ts->shared->bytes_read, 0);
	pg_atomic_init_u64(&ts->shared->bytes_decompressed, 0);
	pg_atomic_init_u64(&ts->shared->delta_rows, 0);
	table_parallelscan_initialize(node->ss.ss_currentRelation, pscan,
								  node->ss.ps.state->es_snapshot);
	node->ss.ss_currentScanDesc = table_beginscan_parallel(node->ss.ss_currentRelation, pscan);
	ts->filters_set = false;
}

static void
tscan_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	table_parallelscan_reinitialize(node->ss.ss_currentRelation, TSCAN_PSCAN(coordinate));
}

static void
tscan_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
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
static void
tscan_shutdown(CustomScanState *node)
{
	TesseraScanState *ts = (TesseraScanState *) node;
	uint64		read = 0,
				decompressed = 0,
				delta = 0;

	if (ts->bytes_final)
		return;
	if (node->ss.ss_currentScanDesc)
		TesseraScanBytes(node->ss.ss_currentScanDesc, &read, &decompressed, &delta);
	if (ts->shared != NULL && ts->is_worker)
	{
		pg_atomic_fetch_add_u64(&ts->shared->bytes_read, read);
		pg_atomic_fetch_add_u64(&ts->shared->bytes_decompressed, decompressed);
		pg_atomic_fetch_add_u64(&ts->shared->delta_rows, delta);
	}
	else if (ts->shared != NULL)
	{
		read += pg_atomic_read_u64(&ts->shared->bytes_read);
		decompressed += pg_atomic_read_u64(&ts->shared->bytes_decompressed);
		delta += pg_atomic_read_u64(&ts->shared->delta_rows);
	}
	ts->bytes_read = read;
	ts->bytes_decompressed = decompressed;
	ts->delta_rows = delta;
	ts->bytes_final = true;
	ts->shared = NULL;
}

/* EXPLAIN (ANALYZE, VERBOSE): what the scan read and decompressed, rows from the delta. */
static void
tscan_explain_bytes(TesseraScanState *ts, ExplainState *es)
{
	if (!es->analyze || !es->verbose)
		return;
	if (!ts->bytes_final && ts->css.ss.ss_currentScanDesc)
		TesseraScanBytes(ts->css.ss.ss_currentScanDesc, &ts->bytes_read, &ts->bytes_decompressed,
						 &ts->delta_rows);
	ExplainPropertyInteger("Bytes Read", "kB", (int64) ((ts->bytes_read + 1023) / 1024), es);
	ExplainPropertyInteger("Bytes Decompressed", "kB",
						   (int64) ((ts->bytes_decompressed + 1023) / 1024), es);
	ExplainPropertyInteger("Delta Rows Read", NULL, (int64) ts->delta_rows, es);
}

/* ---- EXPLAIN ---- */

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
		Instrumentation *instr = node->ss.ps.instrument;

		if (ts->skip_exprs != NIL)
		{
			if (!node->ss.ps.plan->parallel_aware)
				ExplainPropertyUInteger("Row Groups Read", NULL, ts->rgs_read, es);
			ExplainPropertyFloat("Row Groups Skipped", NULL, instr->ntuples2, 0, es);
		}
		if (ts->vector_exprs != NIL)
			ExplainPropertyFloat("Rows Removed by Vector Filter", NULL, instr->nfiltered2, 0, es);
		tscan_explain_bytes(ts, es);
	}
}

/* ---- TesseraAgg ---- */

#ifdef HAVE_INT128

/*
 * TesseraAgg computes an aggregate query over one tessera table -- count,
 * sum, avg, min and max of integer, numeric, date, timestamp and float
 * columns, optionally grouped by one integer, date or timestamp column,
 * with quals the vector filter evaluates -- in loops over decoded column
 * vectors, one row group at a time, instead of forming a tuple per row and
 * calling transition functions.  The results are PostgreSQL's own: sums of
 * int2/int4 in int64 (as int2_sum/int4_sum), of int8 and numeric exactly in
 * 128 bits at the largest display scale seen (numerics that do not fit are
 * added as numerics), averages as numeric_div(sum, count) exactly as
 * int8_avg and numeric_avg compute them, NaN and infinities as numeric_sum
 * treats them, min/max in the btree order (NaN above all), NULL for empty
 * inputs.  Anything else keeps PostgreSQL's Agg.  Groups live in memory;
 * the path is only offered when the planner expects them to fit work_mem.
 */

bool		tessera_enable_custom_agg = true;

static create_upper_paths_hook_type prev_create_upper_paths = NULL;

typedef enum TAggKind
{
	TAGG_COUNT_STAR,
	TAGG_COUNT,
	TAGG_SUM,
	TAGG_AVG,
	TAGG_MIN,
	TAGG_MAX
} TAggKind;

/*
 * An aggregate's argument that is numeric arithmetic (+, -, *) over numeric
 * columns and constants, computed on scaled integers: the exact value and
 * display scale numeric_add/sub/mul would give.
 */
typedef enum VxKind
{
	VX_VAR,
	VX_CONST,
	VX_ADD,
	VX_SUB,
	VX_MUL
} VxKind;

typedef struct VExpr
{
	VxKind		kind;
	int			attidx;			/* VX_VAR */
	Datum		cdatum;			/* VX_CONST */
	int128		cval;			/* VX_CONST: cval * 10^-cscale */
	int			cscale;
	struct VExpr *l;
	struct VExpr *r;
	/* executor: result buffers, reused batch after batch */
	int			cap;
	int128	   *buf_v;
	int64	   *buf_dsc;
	bool	   *buf_null;
} VExpr;

/* A VExpr's value over a batch: v[i] * 10^-scale, display scale dsc[i]. */
typedef struct VxVal
{
	bool		scalar;			/* a constant: v[0], never NULL */
	int			scale;
	int			bits;			/* |v[i]| < 2^bits */
	int128	   *v;
	int64	   *dsc;			/* NULL: every row has display scale dsc_all */
	int64		dsc_all;
	bool	   *isnull;			/* NULL: none */
} VxVal;

typedef struct TAggSpec
{
	TAggKind	kind;
	int			attidx;			/* -1: count(*) or an expression */
	Oid			argtype;		/* base type of the argument */
	Oid			restype;
	VExpr	   *vx;				/* the argument, if not a plain column */
	struct VecQual *fq;			/* FILTER (WHERE ...), ANDed; NULL: none */
	int			nfq;
	/* min/max of other ordered types: through the btree comparison */
	bool		generic;
	FmgrInfo	cmp;
	Oid			collation;
	int16		typlen;
	bool		typbyval;
	int			same_as;		/* an earlier sum/avg of the same argument whose
								 * state this one reads, or -1 */
} TAggSpec;

/*
 * TesseraAgg runs alone (serial), or as a partial aggregate in each process
 * of a parallel scan under Gather -- one row per group: the keys and a
 * bytea of the aggregates' states -- below a finalizing TesseraAgg that
 * merges them.
 */
typedef enum TAggMode
{
	TAGG_SERIAL,
	TAGG_PARTIAL,
	TAGG_FINAL
} TAggMode;

typedef enum TAggKeyKind
{
	TAGG_KEY_INT,				/* integers, dates, timestamps: as int64 */
	TAGG_KEY_TEXT,				/* text, varchar: interned bytes */
	TAGG_KEY_BPCHAR				/* char(n): interned without trailing blanks */
} TAggKeyKind;

/* One aggregate's state in one group. */
typedef struct TAggState
{
	int64		count;
	int128		sum;			/* numeric: scaled by 10^scale */
	int			scale;
	int			dscale;			/* numeric: largest display scale added to sum */
	bool		have;
	int64		ibest;
	float8		fbest;
	int64		nan;			/* numeric specials */
	int64		pinf;
	int64		ninf;
	Numeric		extra;			/* numeric values that did not fit in sum */
	Datum		dbest;			/* min/max of other types: a copy in the groups' memory */
	/* floats: sum(float4) in float4, sum(float8); avg as float8_accum's Sx, Sxx */
	float4		f4sum;
	float8		fsx;
	float8		fsxx;
	Interval	isum;			/* sum/avg of intervals: interval_pl's sum */
} TAggState;


static bool
group_key_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

/*
 * The VExpr for expr, or NULL if it is not numeric arithmetic over the
 * relation's numeric columns and finite constants.
 */
static VExpr *
vx_build(Node *expr, Index relid, Relation rel)
{
	VExpr	   *vx = palloc0(sizeof(VExpr));

	if (IsA(expr, Var))
	{
		Var		   *var = (Var *) expr;

		if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
			getBaseType(var->vartype) != NUMERICOID ||
			TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
			return NULL;
		vx->kind = VX_VAR;
		vx->attidx = var->varattno - 1;
		return vx;
	}
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;

		if (c->consttype != NUMERICOID || c->constisnull ||
			!TesseraNumericScaled(c->constvalue, &vx->cval, &vx->cscale))
			return NULL;
		vx->kind = VX_CONST;
		vx->cdatum = c->constvalue;
		return vx;
	}
	if (IsA(expr, OpExpr) && list_length(((OpExpr *) expr)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) expr;

		switch (op->opfuncid)
		{
			case F_NUMERIC_ADD:
				vx->kind = VX_ADD;
				break;
			case F_NUMERIC_SUB:
				vx->kind = VX_SUB;
				break;
			case F_NUMERIC_MUL:
				vx->kind = VX_MUL;
				break;
			default:
				return NULL;
		}
		vx->l = vx_build(linitial(op->args), relid, rel);
		vx->r = vx_build(lsecond(op->args), relid, rel);
		return vx->l && vx->r ? vx : NULL;
	}
	return NULL;
}

/*
 * min/max of another type is computed with the type's default btree
 * comparison, which orders it as its min/max functions do (text_smaller,
 * numeric_smaller, ... compare with the same function).  Collatable types
 * only in deterministic collations.
 */
static bool
minmax_generic_ok(Oid typid, Oid collation)
{
	TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_CMP_PROC);

	if (!OidIsValid(tc->cmp_proc))
		return false;
	if (type_is_collatable(typid) &&
		(!OidIsValid(collation) || !get_collation_isdeterministic(collation)))
		return false;
	return true;
}

/* Which of our aggregates an Aggref is, or false. */
static bool
tagg_classify(Aggref *agg, Index relid, Relation rel, TAggKind *kind, int *attidx, Oid *argtype)
{
	char	   *name;
	Var		   *var = NULL;
	Oid			t = InvalidOid;

	if (agg->aggfilter != NULL)
	{
		ListCell   *lc;

		/* FILTER (WHERE ...): a conjunction the vector filter evaluates */
		foreach(lc, make_ands_implicit(agg->aggfilter))
		{
			VecKind		vkind;
			int			strategy,
						fattidx;
			Node	   *value;

			if (!vectorizable(lfirst(lc), relid, rel, &vkind, &strategy, &fattidx, &value))
				return false;
		}
	}
	if (agg->aggdistinct != NIL || agg->aggorder != NIL ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggvariadic ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(agg->aggfnoid);
	if (name == NULL)
		return false;
	if (agg->aggstar)
	{
		if (strcmp(name, "count") != 0 || agg->aggtype != INT8OID)
			return false;
		*kind = TAGG_COUNT_STAR;
		*attidx = -1;
		*argtype = InvalidOid;
		return true;
	}
	if (list_length(agg->args) != 1)
		return false;
	var = (Var *) ((TargetEntry *) linitial(agg->args))->expr;
	if (!IsA(var, Var))
	{
		/* sum/avg of numeric arithmetic */
		if (vx_build((Node *) var, relid, rel) == NULL || agg->aggtype != NUMERICOID ||
			(strcmp(name, "sum") != 0 && strcmp(name, "avg") != 0))
			return false;
		*kind = name[0] == 's' ? TAGG_SUM : TAGG_AVG;
		*attidx = -1;
		*argtype = NUMERICOID;
		return true;
	}
	if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
		TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
		return false;
	*attidx = var->varattno - 1;
	*argtype = t = getBaseType(var->vartype);

	if (strcmp(name, "count") == 0)
	{
		*kind = TAGG_COUNT;
		return agg->aggtype == INT8OID;
	}
	if (strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0)
	{
		*kind = name[0] == 's' ? TAGG_SUM : TAGG_AVG;
		if (t == INT2OID || t == INT4OID)
			return agg->aggtype == (*kind == TAGG_SUM ? INT8OID : NUMERICOID);
		if (t == INT8OID || t == NUMERICOID)
			return agg->aggtype == NUMERICOID;
		/* floats: summed in row order, as PostgreSQL's transition functions do */
		if (t == FLOAT4OID || t == FLOAT8OID)
			return agg->aggtype == (*kind == TAGG_AVG ? FLOAT8OID : t);
		if (t == INTERVALOID)
			return agg->aggtype == INTERVALOID;
		return false;
	}
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
	{
		*kind = name[1] == 'i' ? TAGG_MIN : TAGG_MAX;
		if (getBaseType(agg->aggtype) != t)
			return false;
		if (group_key_type(t) || t == FLOAT4OID || t == FLOAT8OID)
			return true;
		return minmax_generic_ok(t, agg->inputcollid);
	}
	return false;
}

typedef struct TAggFindContext
{
	List	   *aggs;
	List	   *group_vars;		/* the only columns allowed outside aggregates */
	bool		ok;
} TAggFindContext;

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
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		ListCell   *lc;

		foreach(lc, cxt->group_vars)
		{
			Var		   *gv = lfirst(lc);

			if (((Var *) node)->varno == gv->varno && ((Var *) node)->varattno == gv->varattno)
				return false;
		}
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc) ||
		IsA(node, WindowFunc) || IsA(node, SubLink) || IsA(node, SubPlan))
	{
		cxt->ok = false;
		return true;
	}
	return expression_tree_walker(node, tagg_find, cxt);
}

static CustomPathMethods tagg_path_methods;
static CustomScanMethods tagg_plan_methods;
static CustomExecMethods tagg_exec_methods;

/* How TesseraAgg keys groups on a column of this type, or false. */
static bool
group_key_kind(Oid typid, Oid collation, TAggKeyKind *kind)
{
	Oid			t = getBaseType(typid);

	if (group_key_type(t))
		*kind = TAGG_KEY_INT;
	else if (t == TEXTOID || t == VARCHAROID)
		*kind = TAGG_KEY_TEXT;
	else if (t == BPCHAROID)
		*kind = TAGG_KEY_BPCHAR;
	else
		return false;
	/* strings are grouped by their bytes: equality must be byte equality */
	if (*kind != TAGG_KEY_INT &&
		(!OidIsValid(collation) || !get_collation_isdeterministic(collation)))
		return false;
	return true;
}

/* The GROUP BY columns, if the query groups by columns we can key on. */
static bool
tagg_group_vars(PlannerInfo *root, Index relid, List **group_vars)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	*group_vars = NIL;
	if (parse->groupingSets != NIL)
		return false;
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Var		   *var = (Var *) get_sortgroupclause_expr(sgc, parse->targetList);
		TypeCacheEntry *tc;
		TAggKeyKind kind;

		if (!IsA(var, Var) || var->varno != relid || var->varlevelsup != 0 ||
			var->varattno <= 0 || !group_key_kind(var->vartype, var->varcollid, &kind) ||
			list_length(*group_vars) >= INDEX_MAX_KEYS)
			return false;
		tc = lookup_type_cache(getBaseType(var->vartype), TYPECACHE_EQ_OPR);
		if (sgc->eqop != tc->eq_opr)
			return false;
		*group_vars = lappend(*group_vars, var);
	}
	return true;
}

static bool
tagg_exec_param_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
		return true;
	return expression_tree_walker(node, tagg_exec_param_walker, context);
}

static bool
tagg_has_exec_param(List *rinfos)
{
	ListCell   *lc;

	foreach(lc, rinfos)
	{
		if (tagg_exec_param_walker((Node *) lfirst_node(RestrictInfo, lc)->clause, NULL))
			return true;
	}
	return false;
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
 * Final TesseraAgg <- Gather <- partial TesseraAgg (parallel-aware): the
 * same aggregation, with the decoding shared among the processes.
 */
static void
tagg_add_parallel_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
					   CustomPath *serial, TAggFindContext *cxt, int workers, double groups,
					   double rows_read, double pages_read)
{
	PathTarget *target = create_empty_pathtarget();
	CustomPath *partial = makeNode(CustomPath);
	CustomPath *final = makeNode(CustomPath);
	GatherPath *gather;
	ListCell   *lc;
	double		divisor = parallel_divisor(workers);
	double		partial_rows = groups * (workers + 1);
	Cost		run;

	foreach(lc, cxt->group_vars)
		add_column_to_pathtarget(target, lfirst(lc), 0);
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
	run = serial->path.startup_cost - seq_page_cost * pages_read;
	partial->path.startup_cost = seq_page_cost * pages_read + run / divisor;
	partial->path.total_cost = partial->path.startup_cost + cpu_tuple_cost * groups;
	partial->custom_private = list_make4(makeInteger(input_rel->relid), cxt->aggs,
										 cxt->group_vars, makeInteger(TAGG_PARTIAL));
	partial->methods = &tagg_path_methods;

	gather = create_gather_path(root, output_rel, &partial->path, target, NULL, &partial_rows);

	final->path.pathtype = T_CustomScan;
	final->path.parent = output_rel;
	final->path.pathtarget = output_rel->reltarget;
	final->path.parallel_safe = false;
	final->path.rows = groups;
	/* merging a row per group and process */
	final->path.startup_cost = gather->path.total_cost +
		partial_rows * list_length(cxt->aggs) * cpu_operator_cost;
	final->path.total_cost = final->path.startup_cost + cpu_tuple_cost * groups;
	if (!enable_seqscan)
	{
		final->path.startup_cost += disable_cost;
		final->path.total_cost += disable_cost;
	}
#ifdef CUSTOMPATH_SUPPORT_PROJECTION
	final->flags = CUSTOMPATH_SUPPORT_PROJECTION;
#endif
	final->custom_paths = list_make1(gather);
	final->custom_private = list_make4(makeInteger(input_rel->relid), cxt->aggs, cxt->group_vars,
									   makeInteger(TAGG_FINAL));
	final->methods = &tagg_path_methods;
	add_path(output_rel, &final->path);
}

static void
tessera_create_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
						   RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	RangeTblEntry *rte;
	Relation	relation;
	TAggFindContext cxt = {NIL, NIL, true};
	ListCell   *lc;
	CustomPath *cpath;
	double		rows_read,
				groups = 1,
				agg_work = 0;
	Cost		run_cost;
	TscanEstimate est;
	Bitmapset  *attrs = NULL;

	if (prev_create_upper_paths)
		prev_create_upper_paths(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG || !tessera_enable_custom_agg || !tessera_enable_custom_scan ||
		input_rel->reloptkind != RELOPT_BASEREL || input_rel->lateral_relids != NULL ||
		parse->havingQual != NULL || (!parse->hasAggs && parse->groupClause == NIL) ||
		parse->hasTargetSRFs ||
		parse->rowMarks != NIL || !tagg_group_vars(root, input_rel->relid, &cxt.group_vars))
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

	/* every qual must be a vector qual; every output an aggregate of ours */
	foreach(lc, input_rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		VecKind		kind;
		int			strategy,
					attidx;
		Node	   *value;

		if (!vectorizable((Node *) rinfo->clause, input_rel->relid, relation, &kind, &strategy,
						  &attidx, &value))
			cxt.ok = false;
		pull_varattnos((Node *) rinfo->clause, input_rel->relid, &attrs);
	}
	foreach(lc, output_rel->reltarget->exprs)
		(void) tagg_find(lfirst(lc), &cxt);
	pull_varattnos((Node *) cxt.group_vars, input_rel->relid, &attrs);
	foreach(lc, cxt.aggs)
	{
		Aggref	   *agg = lfirst(lc);
		TAggKind	kind;
		int			attidx;
		Oid			argtype;

		if (!tagg_classify(agg, input_rel->relid, relation, &kind, &attidx, &argtype))
		{
			cxt.ok = false;
			continue;
		}

		/*
		 * With no qual and no group, counts and min/max come from chunk
		 * metadata: nothing to decode.  Otherwise the argument's columns are
		 * decoded, and the work per row kept is a tenth of an operator per
		 * aggregate, more for exact numeric sums and per arithmetic operator.
		 */
		if (input_rel->baserestrictinfo != NIL || cxt.group_vars != NIL ||
			agg->aggfilter != NULL || kind == TAGG_SUM || kind == TAGG_AVG ||
			argtype == FLOAT4OID || argtype == FLOAT8OID)
		{
			pull_varattnos((Node *) agg, input_rel->relid, &attrs);
			agg_work += (argtype == NUMERICOID ? 0.3 : 0.1) +
				0.5 * (list_length(pull_var_clause((Node *) agg->args, 0)) - (attidx >= 0 ? 1 : 0)) +
				0.1 * list_length(make_ands_implicit((Expr *) agg->aggfilter));
		}
	}
	if (cxt.group_vars != NIL)
	{
		groups = estimate_num_groups(root, cxt.group_vars, input_rel->rows, NULL, NULL);
		/* the groups must fit in work_mem */
		if (groups * (list_length(cxt.aggs) * sizeof(TAggState) + 64) > work_mem * 1024.0)
			cxt.ok = false;
	}
	/* GROUP BY alone (distinct keys) is an aggregation with no aggregates */
	if (!cxt.ok || (cxt.aggs == NIL && cxt.group_vars == NIL))
	{
		table_close(relation, NoLock);
		return;
	}
	tscan_estimate(root, input_rel, relation, attrs, &est);
	table_close(relation, NoLock);

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.rows = groups;
	/*
	 * Decoding a value into a vector, a quarter of an operator (measured:
	 * about 1 ns per integer); a vector qual, a tenth per row; the work per
	 * row kept as above, and half an operator per group key.
	 */
	rows_read = input_rel->tuples * est.read_frac;
	run_cost = rows_read * (est.ncols * 0.25 + est.nvec * 0.1) * cpu_operator_cost +
		rows_read * est.vec_sel * (agg_work + 0.5 * list_length(cxt.group_vars)) *
		cpu_operator_cost;
	cpath->path.startup_cost = seq_page_cost * est.phys_pages * est.read_frac + run_cost;
	cpath->path.total_cost = cpath->path.startup_cost + cpu_tuple_cost * groups;
	if (!enable_seqscan)
	{
		/* it reads the table sequentially */
		cpath->path.startup_cost += disable_cost;
		cpath->path.total_cost += disable_cost;
	}
#ifdef CUSTOMPATH_SUPPORT_PROJECTION
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
#endif
	cpath->custom_private = list_make4(makeInteger(input_rel->relid), cxt.aggs, cxt.group_vars,
									   makeInteger(TAGG_SERIAL));
	cpath->methods = &tagg_path_methods;
	add_path(output_rel, &cpath->path);

	/*
	 * In parallel: a partial TesseraAgg in every process of a parallel scan,
	 * gathered, merged by a final one.  Quals referring to executor
	 * parameters stay serial: they travel in custom_private, where the
	 * parallel executor would not know to pass their values to workers.
	 */
	if (input_rel->consider_parallel && max_parallel_workers_per_gather > 0 &&
		cxt.aggs != NIL &&		/* the partial states ride in an Aggref */
		!tagg_has_exec_param(input_rel->baserestrictinfo) &&
		!tagg_exec_param_walker((Node *) cxt.aggs, NULL) &&
		run_cost > 10 * parallel_setup_cost)
	{
		int			workers = compute_parallel_worker(input_rel, input_rel->pages, -1,
													  max_parallel_workers_per_gather);

		if (workers > 0)
			tagg_add_parallel_path(root, input_rel, output_rel, cpath, &cxt, workers, groups,
								   est.read_frac * input_rel->tuples, est.phys_pages *
								   est.read_frac);
	}
}

static bool
tagg_collect_params(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		*params = list_append_unique(*params, copyObject(node));
		return false;
	}
	return expression_tree_walker(node, tagg_collect_params, params);
}

static Plan *
tagg_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Index		relid = intVal(linitial(best_path->custom_private));
	List	   *aggs = lsecond(best_path->custom_private);
	List	   *group_vars = lthird(best_path->custom_private);
	TAggMode	mode = intVal(lfourth(best_path->custom_private));
	List	   *group_atts = NIL;
	RelOptInfo *input_rel = find_base_rel(root, relid);
	RangeTblEntry *rte = planner_rt_fetch(relid, root);
	List	   *skip = NIL,
			   *vector = NIL,
			   *scan_tlist = NIL;
	ListCell   *lc;

	if (mode != TAGG_FINAL)
	{
		Relation	relation = table_open(rte->relid, NoLock);

		foreach(lc, extract_actual_clauses(input_rel->baserestrictinfo, false))
		{
			if (skippable(lfirst(lc), relid, relation))
				skip = lappend(skip, lfirst(lc));
			vector = lappend(vector, lfirst(lc));
		}
		table_close(relation, NoLock);
	}

	/* the scan tuple: the group keys, then the aggregates (or their states) */
	foreach(lc, group_vars)
	{
		Var		   *gv = lfirst(lc);

		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(gv),
														 list_length(scan_tlist) + 1,
														 NULL, false));
		group_atts = lappend_int(group_atts, gv->varattno - 1);
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
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = mode == TAGG_FINAL ? 0 : relid;
	cscan->flags = best_path->flags;
	cscan->methods = &tagg_plan_methods;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_plans = custom_plans;

	/*
	 * The executor parameters the quals and aggregates use, alone in
	 * custom_exprs: the planner derives a node's parameter dependencies from
	 * there, and without them a parent would not rescan this node when an
	 * outer value changes (a HashAggregate above would reuse its table).
	 */
	cscan->custom_exprs = NIL;
	(void) tagg_collect_params((Node *) list_make2(vector, aggs), &cscan->custom_exprs);

	/*
	 * The quals and aggregates the executor interprets itself: setrefs would
	 * rewrite custom_exprs against custom_scan_tlist, so they travel in
	 * custom_private with the range table index they were planned with.
	 */
	cscan->custom_private = list_make5(makeInteger(relid), skip, vector, copyObject(aggs),
									   group_atts);
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(mode));
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(rte->relid));
	return &cscan->scan.plan;
}

/* A GROUP BY column; strings are interned to dense ids. */
typedef struct TAggKey
{
	int			attidx;
	Oid			typid;			/* base type */
	Oid			collation;
	int16		typlen;
	TAggKeyKind kind;
	/* strings: id -> value, and a hash table of ids */
	Datum	   *strs;
	int			nstrs;
	int			strcap;
	int32	   *slots;
	uint32		nslots;
	/* per batch: ids of the values at these addresses (dictionary chunks) */
	Pointer		ptr_cache[256];
	int32		ptr_ids[256];
	/* per batch: a dictionary chunk's codes -> ids, and NULL flags */
	int32	   *dict_map;
	int			map_cap;
	bool	   *own_nulls;
	int			nulls_cap;
	/* per batch: the column's ids */
	int64	   *ids;
	int			ids_cap;
	bool	   *nulls;
} TAggKey;

typedef struct TesseraAggState
{
	TesseraScanState ts;		/* filters; first */
	TAggMode	mode;
	Index		plan_relid;		/* varno of the quals and aggregates */
	TAggSpec   *specs;
	int			nspecs;
	int			nkeys;			/* GROUP BY columns; 0: one group */
	TAggKey    *gkeys;			/* [nkeys] */
	/* groups */
	MemoryContext cxt;
	MemoryContext vx_cxt;		/* numerics of the fallback, reset per batch */
	MemoryContext buf_cxt;		/* buffers reused from batch to batch */
	/* per batch partial sums of one aggregate, per group */
	int128	   *bsum;
	int64	   *bcnt;
	int64	   *bdsc;
	int			bcap;
	/* FILTER: rows each aggregate keeps */
	bool	   *fsel;
	int		   *fidx;
	int32	   *fgidx;
	/* sparse batches: the rows an expression is computed for, their groups */
	int		   *srows;
	int32	   *sgidx;
	int			fcap;
	TAggState  *states;			/* [ngroups * nspecs] */
	int64	   *keys;			/* [ngroups * nkeys]: values or string ids */
	bool	   *keynull;		/* [ngroups * nkeys] */
	int			ngroups;
	int			cap;
	int			null_group;		/* -1: none yet */
	int32	   *slots;			/* open addressing: group index or -1 */
	uint32		nslots;
	int32	   *direct;			/* group of key direct_base + i, or -1: a cache */
	uint64		pcache_key[4096];	/* several keys: packed keys -> group */
	int32		pcache_g[4096];
	int64		direct_base;
	/* per batch */
	int32	   *gidx;
	bool	   *ok;
	int			row_cap;
	/* past hash_mem: groups spill, sorted by key, and are merged back */
	Tuplesortstate *spill;
	TupleDesc	spill_desc;
	TupleTableSlot *spill_slot;	/* the next spilled row, if spill_pending */
	bool		spill_pending;
	uint64		spilled_groups;
	/* output */
	bool		computed;
	int			next;
	uint64		metadata_answers;	/* chunk aggregates answered from summaries */
} TesseraAggState;

static Node *
tagg_create_state(CustomScan *cscan)
{
	TesseraAggState *state = (TesseraAggState *) newNode(sizeof(TesseraAggState),
														 T_CustomScanState);

	state->ts.css.methods = &tagg_exec_methods;
	return (Node *) state;
}

static void
tagg_begin(CustomScanState *node, EState *estate, int eflags)
{
	TesseraAggState *as = (TesseraAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *aggs = lfourth(cscan->custom_private);
	ListCell   *lc;
	ListCell   *lc2;

	as->mode = intVal(list_nth(cscan->custom_private, 5));
	if (as->mode == TAGG_FINAL)
	{
		/* no scan of our own: the relation only describes the columns */
		rel = table_open((Oid) intVal(list_nth(cscan->custom_private, 6)), NoLock);
		node->custom_ps = list_make1(ExecInitNode(linitial(cscan->custom_plans), estate, eflags));
	}
	as->plan_relid = intVal(linitial(cscan->custom_private));
	init_filters(&as->ts, lsecond(cscan->custom_private), lthird(cscan->custom_private),
				 as->plan_relid, rel);
	as->specs = palloc0(sizeof(TAggSpec) * list_length(aggs));
	foreach(lc, aggs)
	{
		Aggref	   *agg = lfirst(lc);
		TAggSpec   *sp = &as->specs[as->nspecs++];

		if (!tagg_classify(agg, as->plan_relid, rel, &sp->kind, &sp->attidx, &sp->argtype))
			elog(ERROR, "TesseraAgg: unexpected aggregate");
		sp->restype = agg->aggtype;
		if ((sp->kind == TAGG_MIN || sp->kind == TAGG_MAX) && !group_key_type(sp->argtype) &&
			sp->argtype != FLOAT4OID && sp->argtype != FLOAT8OID)
		{
			sp->generic = true;
			fmgr_info(lookup_type_cache(sp->argtype, TYPECACHE_CMP_PROC)->cmp_proc, &sp->cmp);
			sp->collation = agg->inputcollid;
			get_typlenbyval(sp->argtype, &sp->typlen, &sp->typbyval);
		}
		if (sp->attidx < 0 && !agg->aggstar)
			sp->vx = vx_build((Node *) ((TargetEntry *) linitial(agg->args))->expr,
							  as->plan_relid, rel);

		/*
		 * sum(x) and avg(x) of integers and numerics keep the same state (a
		 * count and an exact sum): a second one over the same argument reads
		 * the first's, as PostgreSQL shares transition states (TPC-H Q1 has
		 * two such pairs).
		 */
		sp->same_as = -1;
		if ((sp->kind == TAGG_SUM || sp->kind == TAGG_AVG) && agg->aggfilter == NULL &&
			sp->argtype != FLOAT4OID && sp->argtype != FLOAT8OID)	/* float states differ */
		{
			int			j = 0;

			foreach(lc2, aggs)
			{
				Aggref	   *prev = lfirst(lc2);

				if (j >= as->nspecs - 1)
					break;
				if ((as->specs[j].kind == TAGG_SUM || as->specs[j].kind == TAGG_AVG) &&
					as->specs[j].same_as < 0 && prev->aggfilter == NULL &&
					as->specs[j].argtype == sp->argtype && equal(prev->args, agg->args))
				{
					sp->same_as = j;
					break;
				}
				j++;
			}
		}
		if (agg->aggfilter != NULL)
		{
			List	   *conj = make_ands_implicit(agg->aggfilter);
			ListCell   *fc;

			sp->fq = palloc0(sizeof(VecQual) * list_length(conj));
			foreach(fc, conj)
			{
				VecQual    *vq = &sp->fq[sp->nfq++];
				Node	   *value;

				if (!vectorizable(lfirst(fc), as->plan_relid, rel, &vq->kind, &vq->strategy,
								  &vq->attidx, &value))
					elog(ERROR, "TesseraAgg: unexpected FILTER");
				vq->valtype = exprType(value);
				if (vq->kind == VEC_COLCOL)
					vq->attidx2 = ((Var *) value)->varattno - 1;
				else
					vq->expr = ExecInitExpr((Expr *) value, &node->ss.ps);
			}
		}
	}
	as->nkeys = list_length(list_nth(cscan->custom_private, 4));
	as->gkeys = palloc0(sizeof(TAggKey) * Max(as->nkeys, 1));
	foreach(lc, list_nth(cscan->custom_private, 4))
	{
		TAggKey    *key = &as->gkeys[foreach_current_index(lc)];
		Form_pg_attribute attr = TupleDescAttr(RelationGetDescr(rel), lfirst_int(lc));

		key->attidx = lfirst_int(lc);
		key->typid = getBaseType(attr->atttypid);
		key->collation = attr->attcollation;
		key->typlen = attr->attlen;
		if (!group_key_kind(attr->atttypid, attr->attcollation, &key->kind))
			elog(ERROR, "TesseraAgg: unexpected group key");
	}
	as->cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg groups",
									ALLOCSET_DEFAULT_SIZES);
	as->vx_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg expressions",
									   ALLOCSET_DEFAULT_SIZES);
	as->buf_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg buffers",
										ALLOCSET_DEFAULT_SIZES);
	init_pow10_i128();
	if (as->mode == TAGG_FINAL)
		table_close(rel, NoLock);
}

static void
tagg_shutdown(CustomScanState *node)
{
	if (((TesseraAggState *) node)->mode != TAGG_FINAL)
		tscan_shutdown(node);
}

static void
tagg_end_spill(TesseraAggState *as)
{
	if (as->spill != NULL)
	{
		tuplesort_end(as->spill);
		as->spill = NULL;
		as->spill_pending = false;
	}
}

static void
tagg_end(CustomScanState *node)
{
	tagg_end_spill((TesseraAggState *) node);
	if (((TesseraAggState *) node)->mode == TAGG_FINAL)
		ExecEndNode(linitial(node->custom_ps));
	tscan_end(node);
}

static void tagg_reset_groups(TesseraAggState *as, int cap);
static void tagg_group_keys(TesseraAggState *as, int g, Datum *values, bool *isnull);
static void tagg_check_memory(TesseraAggState *as);
static void tagg_finish_spill(TesseraAggState *as);
static void tagg_end_spill(TesseraAggState *as);
static Datum tagg_serialize(TesseraAggState *as, int g);

static void
tagg_reset(TesseraAggState *as)
{
	tagg_reset_groups(as, as->nkeys > 0 ? 256 : 1);
	as->computed = false;
	as->next = 0;
}

/* Forget every group; room for cap of them. */
static void
tagg_reset_groups(TesseraAggState *as, int cap)
{
	MemoryContextReset(as->cxt);
	as->cap = cap;
	as->states = MemoryContextAllocZero(as->cxt, sizeof(TAggState) * as->cap * Max(as->nspecs, 1));
	as->keys = MemoryContextAlloc(as->cxt, sizeof(int64) * as->cap * Max(as->nkeys, 1));
	as->keynull = MemoryContextAlloc(as->cxt, sizeof(bool) * as->cap * Max(as->nkeys, 1));
	as->ngroups = as->nkeys > 0 ? 0 : 1;
	as->null_group = -1;
	memset(as->pcache_g, 0xff, sizeof(as->pcache_g));
	as->nslots = 0;
	as->slots = NULL;
	as->direct = NULL;
	as->gidx = NULL;
	as->ok = NULL;
	as->row_cap = 0;
	for (int j = 0; j < as->nkeys; j++)
	{
		TAggKey    *key = &as->gkeys[j];

		key->strs = NULL;
		key->nstrs = key->strcap = 0;
		key->slots = NULL;
		key->nslots = 0;
		key->ids = NULL;
		key->ids_cap = 0;
		key->nulls = NULL;
		key->dict_map = NULL;
		key->map_cap = 0;
		key->own_nulls = NULL;
		key->nulls_cap = 0;
	}
}

#define TAGG_DIRECT 65536

static inline uint32
hash_key(int64 key)
{
	return (uint32) (((uint64) key * UINT64CONST(0x9E3779B97F4A7C15)) >> 32);
}

/* The hash of group g's keys, or of a row's (keys/nulls at stride 1). */
static inline uint32
hash_keys(const int64 *keys, const bool *nulls, int nkeys)
{
	uint64		h = 0;

	for (int j = 0; j < nkeys; j++)
		h = (h ^ (nulls[j] ? UINT64CONST(0x5bd1e995) : (uint64) keys[j])) *
			UINT64CONST(0x9E3779B97F4A7C15);
	return (uint32) (h >> 32);
}

static int
new_group(TesseraAggState *as, const int64 *keys, const bool *nulls)
{
	int			g = as->ngroups++;
	int			k = as->nkeys;

	if (g == as->cap)
	{
		int			newcap = as->cap * 2;

		as->states = repalloc_huge(as->states, sizeof(TAggState) * newcap * as->nspecs);
		memset(as->states + (Size) as->cap * as->nspecs, 0,
			   sizeof(TAggState) * (Size) (newcap - as->cap) * as->nspecs);
		as->keys = repalloc_huge(as->keys, sizeof(int64) * newcap * k);
		as->keynull = repalloc_huge(as->keynull, sizeof(bool) * newcap * k);
		as->cap = newcap;
	}
	memcpy(&as->keys[(Size) g * k], keys, sizeof(int64) * k);
	memcpy(&as->keynull[(Size) g * k], nulls, sizeof(bool) * k);
	return g;
}

static void
rehash(TesseraAggState *as, uint32 nslots)
{
	int			k = as->nkeys;

	if (as->slots)
		pfree(as->slots);
	as->nslots = nslots;
	as->slots = MemoryContextAlloc(as->cxt, sizeof(int32) * nslots);
	memset(as->slots, 0xff, sizeof(int32) * nslots);
	for (int g = 0; g < as->ngroups; g++)
	{
		uint32		h;

		if (k == 1 && as->keynull[g])
			continue;			/* the NULL group of one key is found without hashing */
		h = hash_keys(&as->keys[(Size) g * k], &as->keynull[(Size) g * k], k) & (nslots - 1);
		while (as->slots[h] >= 0)
			h = (h + 1) & (nslots - 1);
		as->slots[h] = g;
	}
}

/* The group of these keys, created if new. */
static inline int
find_group(TesseraAggState *as, const int64 *keys, const bool *nulls)
{
	int			k = as->nkeys;
	uint32		h;

	if (as->ngroups * 2 >= (int) as->nslots)
		rehash(as, Max(as->nslots * 2, 1024));
	h = hash_keys(keys, nulls, k) & (as->nslots - 1);
	for (;;)
	{
		int32		g = as->slots[h];

		if (g < 0)
		{
			g = new_group(as, keys, nulls);
			as->slots[h] = g;
			return g;
		}
		{
			const int64 *gk = &as->keys[(Size) g * k];
			const bool *gn = &as->keynull[(Size) g * k];
			int			j;

			for (j = 0; j < k; j++)
				if (gk[j] != keys[j] || gn[j] != nulls[j])
					break;
			if (j == k)
				return g;
		}
		h = (h + 1) & (as->nslots - 1);
	}
}

/* The bytes a string key is grouped by. */
static inline void
key_bytes(TAggKey *key, Datum d, const char **data, int *len)
{
	text	   *t = DatumGetTextPP(d);

	*data = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
	if (key->kind == TAGG_KEY_BPCHAR)
		while (*len > 0 && (*data)[*len - 1] == ' ')
			(*len)--;
}

/* The dense id of a string key's value, interned on first sight. */
static int32
intern_string(TesseraAggState *as, TAggKey *key, Datum d)
{
	const char *data;
	int			len;
	uint32		h;

	key_bytes(key, d, &data, &len);
	if (key->nstrs * 2 >= (int) key->nslots)
	{
		uint32		nslots = Max(key->nslots * 2, 256);

		key->slots = MemoryContextAlloc(as->cxt, sizeof(int32) * nslots);
		memset(key->slots, 0xff, sizeof(int32) * nslots);
		key->nslots = nslots;
		for (int i = 0; i < key->nstrs; i++)
		{
			const char *od;
			int			ol;

			key_bytes(key, key->strs[i], &od, &ol);
			h = hash_bytes((const unsigned char *) od, ol) & (nslots - 1);
			while (key->slots[h] >= 0)
				h = (h + 1) & (nslots - 1);
			key->slots[h] = i;
		}
	}
	h = hash_bytes((const unsigned char *) data, len) & (key->nslots - 1);
	for (;;)
	{
		int32		id = key->slots[h];
		const char *od;
		int			ol;

		if (id < 0)
			break;
		key_bytes(key, key->strs[id], &od, &ol);
		if (ol == len && memcmp(od, data, len) == 0)
			return id;
		h = (h + 1) & (key->nslots - 1);
	}
	/* new: keep a copy of the first value seen, as PostgreSQL's Agg does */
	if (key->nstrs == key->strcap)
	{
		key->strcap = Max(key->strcap * 2, 64);
		key->strs = key->strs == NULL ?
			MemoryContextAlloc(as->cxt, sizeof(Datum) * key->strcap) :
			repalloc(key->strs, sizeof(Datum) * key->strcap);
	}
	{
		MemoryContext old = MemoryContextSwitchTo(as->cxt);

		key->strs[key->nstrs] = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		MemoryContextSwitchTo(old);
	}
	key->slots[h] = key->nstrs;
	return key->nstrs++;
}

/* Each row's id for key column j of the batch: values or string ids. */
static void
key_ids(TesseraAggState *as, TAggKey *key, TesseraBatch *b, const bool *ok, int n)
{
	Datum	   *values;
	bool	   *isnull;

	if (key->kind != TAGG_KEY_INT)
	{
		int64	   *codes;
		Datum	   *entries;
		int			ndict;

		if (TesseraBatchDict(b, key->attidx, &codes, &entries, &ndict))
		{
			/*
			 * A dictionary chunk: each distinct value is interned once, on
			 * the first row that counts, and rows map through their codes.
			 */
			int32	   *map;
			bool	   *nulls;

			if (key->map_cap < ndict)
			{
				key->map_cap = Max(ndict, 256);
				key->dict_map = MemoryContextAlloc(as->cxt, sizeof(int32) * key->map_cap);
			}
			if (key->nulls_cap < n)
			{
				key->nulls_cap = Max(n, 1024);
				key->own_nulls = MemoryContextAlloc(as->cxt, key->nulls_cap);
			}
			map = key->dict_map;
			nulls = key->own_nulls;
			memset(map, 0xff, sizeof(int32) * ndict);
			for (int i = 0; i < n; i++)
			{
				int64		c = codes[i];

				nulls[i] = c < 0;
				if (c < 0 || (ok && !ok[i]))
				{
					key->ids[i] = 0;
					continue;
				}
				if (map[c] < 0)
					map[c] = intern_string(as, key, entries[c]);
				key->ids[i] = map[c];
			}
			key->nulls = nulls;
			return;
		}
	}
	TesseraBatchColumn(b, key->attidx, &values, &isnull);
	key->nulls = isnull;
	if (key->kind == TAGG_KEY_INT)
	{
		int64	   *ids = key->ids;

		/* one loop per width, so that each vectorizes */
		if (memchr(isnull, true, n) == NULL)
		{
			/* no NULLs (the usual case): no test per row */
			if (key->typlen == 2)
				for (int i = 0; i < n; i++)
					ids[i] = (int64) DatumGetInt16(values[i]);
			else if (key->typlen == 4)
				for (int i = 0; i < n; i++)
					ids[i] = (int64) DatumGetInt32(values[i]);
			else
				memcpy(ids, values, sizeof(int64) * n);
		}
		else if (key->typlen == 2)
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : (int64) DatumGetInt16(values[i]);
		else if (key->typlen == 4)
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : (int64) DatumGetInt32(values[i]);
		else
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : DatumGetInt64(values[i]);
		return;
	}
	/* dictionary chunks repeat the same addresses: look them up once */
	memset(key->ptr_cache, 0, sizeof(key->ptr_cache));
	for (int i = 0; i < n; i++)
	{
		Pointer		ptr;
		uint32		c;

		if (isnull[i] || (ok && !ok[i]))
		{
			key->ids[i] = 0;
			continue;
		}
		ptr = DatumGetPointer(values[i]);
		c = (uint32) (((uint64) (uintptr_t) ptr * UINT64CONST(0x9E3779B97F4A7C15)) >> 56);
		if (key->ptr_cache[c] != ptr)
		{
			key->ptr_cache[c] = ptr;
			key->ptr_ids[c] = intern_string(as, key, values[i]);
		}
		key->ids[i] = key->ptr_ids[c];
	}
}

/* A numeric as int128 * 10^-scale, through its decimal digits. */
static Numeric
scaled_numeric(int128 v, int scale)
{
	char		buf[96];
	char	   *p = buf + sizeof(buf) - 1;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;
	int			digits = 0;

	*p = '\0';
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
		digits++;
		if (digits == scale)
			*--p = '.';
	} while (u != 0 || digits < scale + 1);
	if (*p == '.')
		*--p = '0';
	if (neg)
		*--p = '-';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(p),
											   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

static void
add_extra(TAggState *st, Datum value, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Numeric		prev = st->extra;

	st->extra = prev == NULL ? DatumGetNumericCopy(value) :
		DatumGetNumeric(DirectFunctionCall2(numeric_add, NumericGetDatum(prev), value));
	if (prev != NULL)
		pfree(prev);
	MemoryContextSwitchTo(old);
}

/* Add one numeric to a sum kept exactly as int128 at the largest scale. */
static void
tagg_numeric_accum(TAggState *st, Datum value, MemoryContext cxt)
{
	int128		v;
	int			sc;

	st->count++;
	if (!TesseraNumericScaled(value, &v, &sc))
	{
		Numeric		num = DatumGetNumeric(value);

		if (numeric_is_nan(num))
			st->nan++;
		else if (numeric_is_inf(num))
		{
			if (DatumGetBool(DirectFunctionCall2(numeric_lt, value,
												 NumericGetDatum(int64_to_numeric(0)))))
				st->ninf++;
			else
				st->pinf++;
		}
		else
			add_extra(st, value, cxt);
		return;
	}
	st->dscale = Max(st->dscale, sc);
	if (sc > st->scale)
	{
		/* a value with more decimals: rescale the sum */
		int128		r = st->sum;

		for (int k = st->scale; k < sc; k++)
		{
			if (__builtin_mul_overflow(r, (int128) 10, &r))
			{
				/* the sum no longer fits at this scale: keep it as a numeric */
				add_extra(st, NumericGetDatum(scaled_numeric(st->sum, st->scale)), cxt);
				r = 0;
				break;
			}
		}
		st->sum = r;
		st->scale = sc;
	}
	for (int k = sc; k < st->scale; k++)
	{
		if (__builtin_mul_overflow(v, (int128) 10, &v))
		{
			add_extra(st, value, cxt);
			return;
		}
	}
	{
		int128		t;

		if (__builtin_add_overflow(st->sum, v, &t))
			add_extra(st, value, cxt);
		else
			st->sum = t;
	}
}

/*
 * Add count values whose sum is v * 10^-cmax, the largest display scale
 * among them dsc (v is then a multiple of 10^(cmax - dsc)).
 */
static void
tagg_scaled_fold(TAggState *st, int128 v, int64 count, int dsc, int cmax, MemoryContext cxt)
{
	int128		t;

	if (count == 0)
		return;
	st->count += count;
	if (cmax > st->scale)
	{
		if (__builtin_mul_overflow(st->sum, pow10_i128[cmax - st->scale], &t))
		{
			add_extra(st, NumericGetDatum(scaled_numeric(st->sum / pow10_i128[st->scale - st->dscale],
														 st->dscale)), cxt);
			t = 0;
		}
		st->sum = t;
		st->scale = cmax;
	}
	else if (cmax < st->scale)
	{
		if (__builtin_mul_overflow(v, pow10_i128[st->scale - cmax], &t))
		{
			add_extra(st, NumericGetDatum(scaled_numeric(v / pow10_i128[cmax - dsc], dsc)), cxt);
			return;
		}
		v = t;
	}
	if (__builtin_add_overflow(st->sum, v, &t))
	{
		/* v is at st->scale here: back to its own display scale */
		add_extra(st, NumericGetDatum(scaled_numeric(v / pow10_i128[st->scale - dsc], dsc)), cxt);
		return;
	}
	st->sum = t;
	if (dsc > st->dscale)
		st->dscale = dsc;
}

/* per-group partial sums of a batch with few groups: TAGG_LANES of them */
#define TAGG_LANES				4
#define TAGG_LANES_MAX_GROUPS	64

/* Room for per-group partial sums and counts of a batch (ng groups + 1). */
static void
tagg_reserve_partials(TesseraAggState *as, int ng)
{
	if (as->bcap < ng + 1)
	{
		as->bcap = Max(ng + 1, 64);
		as->bsum = MemoryContextAllocHuge(as->buf_cxt, sizeof(int128) * as->bcap);
		as->bcnt = MemoryContextAllocHuge(as->buf_cxt, sizeof(int64) * as->bcap);
		as->bdsc = MemoryContextAllocHuge(as->buf_cxt, sizeof(int64) * as->bcap);
	}
}

/*
 * Sum the counted rows' scaled values v[i] (scale `scale`, display scale
 * dsc[i], or dsc_all for every row if dsc is NULL) into aggregate k: in
 * per-group partial sums over the batch, folded into the groups once.
 */
static void
tagg_scaled_rows(TesseraAggState *as, int k, const int128 *v, const int64 *dsc, int64 dsc_all,
				 int bits, int scale, const bool *isnull, const bool *ok, const int32 *gidx, int n)
{
	int			ng = gidx ? as->ngroups : 1;

	if (ng > 64 && ng > n / 4)
	{
		/*
		 * More groups than a few per row (many groups, or a small batch: a
		 * delta stripe of a few rows): partial sums, cleared and folded for
		 * every group, would cost more than they save.
		 */
		for (int i = 0; i < n; i++)
		{
			int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);

			if (g < 0 || (isnull && isnull[i]))
				continue;
			tagg_scaled_fold(&as->states[(Size) g * as->nspecs + k], v[i], 1,
							 (int) (dsc ? dsc[i] : dsc_all), scale, as->cxt);
		}
		return;
	}
	tagg_reserve_partials(as, ng <= TAGG_LANES_MAX_GROUPS ? (ng + 1) * TAGG_LANES - 1 : ng);
	memset(as->bsum, 0, sizeof(int128) * (ng + 1));
	memset(as->bcnt, 0, sizeof(int64) * (ng + 1));
	for (int g = 0; g <= ng; g++)
		as->bdsc[g] = dsc_all;
	if (bits + 32 <= 126 && dsc == NULL && (ng + 1) * TAGG_LANES <= as->bcap)
	{
		/*
		 * n < 2^31 values below 2^bits cannot overflow: no checks, no
		 * branches.  Four sums per group, row i adding to lane i % 4:
		 * consecutive rows of one group (few groups, or sorted keys) would
		 * otherwise chain every addition through the same memory.
		 */
		int128	   *bsum = as->bsum;
		int64	   *bcnt = as->bcnt;

		memset(bsum, 0, sizeof(int128) * (ng + 1) * TAGG_LANES);
		memset(bcnt, 0, sizeof(int64) * (ng + 1) * TAGG_LANES);
		for (int i = 0; i < n; i++)
		{
			int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);
			bool		skip = g < 0 || (isnull && isnull[i]);
			int			slot = (skip ? ng : g) * TAGG_LANES + (i & (TAGG_LANES - 1));

			/* the extra group takes what does not count */
			bsum[slot] += v[i];
			bcnt[slot]++;
		}
		for (int g = 0; g < ng; g++)
		{
			int128		sum = 0;
			int64		cnt = 0;

			for (int l = 0; l < TAGG_LANES; l++)
			{
				sum += bsum[g * TAGG_LANES + l];
				cnt += bcnt[g * TAGG_LANES + l];
			}
			bsum[g] = sum;		/* g <= g * TAGG_LANES: read before written */
			bcnt[g] = cnt;
		}
	}
	else
	for (int i = 0; i < n; i++)
	{
		int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);
		int128		t;

		if (g < 0 || (isnull && isnull[i]))
			continue;
		if (unlikely(__builtin_add_overflow(as->bsum[g], v[i], &t)))
		{
			/* the partial sum is full: fold it and start again */
			tagg_scaled_fold(&as->states[(Size) g * as->nspecs + k], as->bsum[g], as->bcnt[g],
							 (int) as->bdsc[g], scale, as->cxt);
			t = v[i];
			as->bcnt[g] = 0;
			as->bdsc[g] = dsc_all;
		}
		as->bsum[g] = t;
		as->bcnt[g]++;
		if (dsc && dsc[i] > as->bdsc[g])
			as->bdsc[g] = dsc[i];
	}
	for (int g = 0; g < ng; g++)
		tagg_scaled_fold(&as->states[(Size) g * as->nspecs + k], as->bsum[g], as->bcnt[g],
						 (int) as->bdsc[g], scale, as->cxt);
}

/*
 * count(*) (spec k) per group over the batch's rows (gidx[i] < 0: not
 * counted): a histogram of the batch, then one addition per group.
 */
static void
tagg_count_groups(TesseraAggState *as, int k, const int32 *gidx, int n)
{
	int			ng = as->ngroups;
	/* few groups: interleaved counts, as in tagg_scaled_rows */
	int			lanes = ng <= TAGG_LANES_MAX_GROUPS ? TAGG_LANES : 1;
	int64	   *cnt;

	tagg_reserve_partials(as, (ng + 1) * lanes - 1);
	cnt = as->bcnt;
	memset(cnt, 0, sizeof(int64) * (ng + 1) * lanes);
	for (int i = 0; i < n; i++)
		cnt[(gidx[i] < 0 ? ng : gidx[i]) * lanes + (i & (lanes - 1))]++;
	for (int g = 0; g < ng; g++)
		for (int l = 0; l < lanes; l++)
			as->states[(Size) g * as->nspecs + k].count += cnt[g * lanes + l];
}

/*
 * A float into a sum or average state exactly as PostgreSQL's transition
 * functions take it, row after row: sum(float4) is float4pl (float4
 * arithmetic, the first value the initial state), sum(float8) float8pl,
 * avg(float4/float8) float4_accum/float8_accum (Youngs-Cramer N, Sx, Sxx,
 * whose overflow checks raise the same errors).  The order of the rows is
 * the scan's, as under PostgreSQL's Agg.
 */
static inline void
tagg_float_accum(TAggSpec *sp, TAggState *st, Datum d)
{
	float8		newval,
				oldN,
				N,
				Sx,
				Sxx;

	if (sp->kind == TAGG_SUM)
	{
		if (sp->argtype == FLOAT4OID)
			st->f4sum = st->count == 0 ? DatumGetFloat4(d) :
				float4_pl(st->f4sum, DatumGetFloat4(d));
		else
			st->fsx = st->count == 0 ? DatumGetFloat8(d) :
				float8_pl(st->fsx, DatumGetFloat8(d));
		st->count++;
		return;
	}

	/* float4_accum / float8_accum */
	newval = sp->argtype == FLOAT4OID ? (float8) DatumGetFloat4(d) : DatumGetFloat8(d);
	oldN = (float8) st->count;
	N = oldN + 1.0;
	Sx = st->fsx + newval;
	Sxx = st->fsxx;
	if (oldN > 0.0)
	{
		float8		tmp = newval * N - Sx;

		Sxx += tmp * tmp / (N * oldN);
		if (isinf(Sx) || isinf(Sxx))
		{
			if (!isinf(st->fsx) && !isinf(newval))
				float_overflow_error();
			Sxx = get_float8_nan();
		}
	}
	else if (isnan(newval) || isinf(newval))
		Sxx = get_float8_nan();
	st->count++;
	st->fsx = Sx;
	st->fsxx = Sxx;
}

/* interval_pl's sum: each field added with int4pl's / int8pl's overflow check. */
static inline void
tagg_interval_add(Interval *sum, const Interval *v)
{
	if (__builtin_add_overflow(sum->month, v->month, &sum->month) ||
		__builtin_add_overflow(sum->day, v->day, &sum->day) ||
		__builtin_add_overflow(sum->time, v->time, &sum->time))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("interval out of range")));
}

/*
 * An interval into a sum or average state, as interval_pl (sum, the first
 * value the initial state) and interval_accum (avg, from zero) take it.
 */
static inline void
tagg_interval_accum(TAggState *st, const Interval *v)
{
	if (st->count == 0)
		st->isum = *v;
	else
		tagg_interval_add(&st->isum, v);
	st->count++;
}

/* float8_combine / float4pl / float8pl of two float states (src into dst). */
static void
tagg_float_combine(TAggSpec *sp, TAggState *dst, const TAggState *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0)
	{
		dst->count = src->count;
		dst->f4sum = src->f4sum;
		dst->fsx = src->fsx;
		dst->fsxx = src->fsxx;
		return;
	}
	if (sp->kind == TAGG_SUM)
	{
		if (sp->argtype == FLOAT4OID)
			dst->f4sum = float4_pl(dst->f4sum, src->f4sum);
		else
			dst->fsx = float8_pl(dst->fsx, src->fsx);
	}
	else
	{
		float8		N1 = (float8) dst->count,
					N2 = (float8) src->count;
		float8		N = N1 + N2;
		float8		tmp = dst->fsx / N1 - src->fsx / N2;
		float8		Sxx = dst->fsxx + src->fsxx + N1 * N2 * tmp * tmp / N;

		dst->fsx = float8_pl(dst->fsx, src->fsx);
		if (unlikely(isinf(Sxx)) && !isinf(dst->fsxx) && !isinf(src->fsxx))
			float_overflow_error();
		dst->fsxx = Sxx;
	}
	dst->count += src->count;
}

#define TAGG_ROWS(BODY) \
	do { \
		for (int i = 0; i < n; i++) \
		{ \
			TAggState  *st; \
			if (isnull && isnull[i]) \
				continue; \
			if (gidx) \
			{ \
				if (gidx[i] < 0) \
					continue; \
				st = &as->states[(Size) gidx[i] * as->nspecs + k]; \
			} \
			else \
			{ \
				if (ok && !ok[i]) \
					continue; \
				st = &as->states[k]; \
			} \
			{ BODY; } \
		} \
	} while (0)

static inline int
bits128(uint128 u)
{
	uint64		hi = (uint64) (u >> 64),
				lo = (uint64) u;

	return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

static inline uint128
abs128(int128 x)
{
	return x < 0 ? -(uint128) x : (uint128) x;
}

/*
 * Evaluate vx over the batch on scaled integers.  False if some column is
 * not decimal-encoded or some value does not fit 128 bits (or 38 decimals
 * of scale): the caller then computes with numerics.  Magnitude bounds
 * choose loops without overflow checks where no overflow can happen.
 */
static void
vx_reserve(TesseraAggState *as, VExpr *vx, int n)
{
	if (vx->cap < n)
	{
		vx->cap = Max(n, 1024);
		vx->buf_v = MemoryContextAllocHuge(as->buf_cxt, sizeof(int128) * vx->cap);
		vx->buf_dsc = MemoryContextAllocHuge(as->buf_cxt, sizeof(int64) * vx->cap);
		vx->buf_null = MemoryContextAllocHuge(as->buf_cxt, vx->cap);
	}
}

/*
 * A column's values in rows[0..n) of the batch, gathered into vx's buffers
 * (few rows selected: only theirs are decoded).
 */
static bool
vx_gather(TesseraAggState *as, VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out)
{
	int			cmax;
	uint128		acc = 0;
	bool		anynull = false;
	int64		first = -1;
	bool		uniform = true;

	vx_reserve(as, vx, n);
	if (!TesseraBatchScaledGather(b, vx->attidx, rows, n, vx->buf_v, vx->buf_dsc, vx->buf_null,
								  &cmax))
		return false;
	for (int j = 0; j < n; j++)
	{
		acc |= abs128(vx->buf_v[j]);
		anynull |= vx->buf_null[j];
		if (!vx->buf_null[j])
		{
			if (first < 0)
				first = vx->buf_dsc[j];
			uniform &= vx->buf_dsc[j] == first;
		}
	}
	out->v = vx->buf_v;
	out->isnull = anynull ? vx->buf_null : NULL;
	out->scale = cmax;
	out->bits = bits128(acc);
	out->dsc = uniform ? NULL : vx->buf_dsc;
	out->dsc_all = uniform ? Max(first, 0) : 0;
	return true;
}

static bool
vx_eval(TesseraAggState *as, VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out)
{
	VxVal		l,
				r;
	int128		lm = 1,
				rm = 1;
	bool		overflow = false;
	int			m;

	memset(out, 0, sizeof(VxVal));
	switch (vx->kind)
	{
		case VX_VAR:
			{
				int			cmax;

				if (rows != NULL)
					return vx_gather(as, vx, b, rows, n, out);
				if (!TesseraBatchScaledInfo(b, vx->attidx, &out->v, &out->dsc, &out->isnull,
											&cmax, &out->bits, &out->dsc_all))
					return false;
				/* no NULLs (the usual case): no null flags to merge per row */
				if (memchr(out->isnull, true, n) == NULL)
					out->isnull = NULL;
				out->scale = cmax;
				if (out->dsc_all >= 0)
					out->dsc = NULL;
				else
					out->dsc_all = 0;
				return true;
			}
		case VX_CONST:
			out->scalar = true;
			out->scale = vx->cscale;
			out->v = &vx->cval;
			out->dsc_all = vx->cscale;
			out->bits = bits128(abs128(vx->cval));
			return true;
		default:
			break;
	}
	if (!vx_eval(as, vx->l, b, rows, n, &l) || !vx_eval(as, vx->r, b, rows, n, &r))
		return false;
	vx_reserve(as, vx, n);
	out->scalar = l.scalar && r.scalar;
	m = out->scalar ? 1 : n;
	out->v = vx->buf_v;
	if (vx->kind == VX_MUL)
	{
		out->scale = l.scale + r.scale;
		if (out->scale >= (int) lengthof(pow10_i128))
			return false;
		out->bits = l.bits + r.bits;
	}
	else
	{
		out->scale = Max(l.scale, r.scale);
		lm = pow10_i128[out->scale - l.scale];
		rm = pow10_i128[out->scale - r.scale];
		out->bits = Max(l.bits + bits128(lm), r.bits + bits128(rm)) + 1;
	}

	/* NULL if either side is */
	if (l.isnull && r.isnull)
	{
		out->isnull = vx->buf_null;
		for (int i = 0; i < m; i++)
			out->isnull[i] = l.isnull[i] | r.isnull[i];
	}
	else if (l.isnull || r.isnull)
		out->isnull = l.isnull ? l.isnull : r.isnull;

	/* display scales: numeric_mul adds them, numeric_add/sub take the larger */
	if (l.dsc == NULL && r.dsc == NULL)
		out->dsc_all = vx->kind == VX_MUL ? l.dsc_all + r.dsc_all : Max(l.dsc_all, r.dsc_all);
	else
	{
		out->dsc = vx->buf_dsc;
		for (int i = 0; i < m; i++)
		{
			int64		da = l.dsc ? l.dsc[i] : l.dsc_all,
						dc = r.dsc ? r.dsc[i] : r.dsc_all;

			out->dsc[i] = vx->kind == VX_MUL ? da + dc : Max(da, dc);
		}
	}

	/* the values: each side a vector or a constant */
#define VX_LOOP(OP) \
	do { \
		if (!l.scalar && !r.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[i], c = r.v[i]; OP; } \
		else if (!l.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[i], c = r.v[0]; OP; } \
		else if (!r.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[0], c = r.v[i]; OP; } \
		else \
			{ int i = 0; int128 a = l.v[0], c = r.v[0]; OP; } \
	} while (0)

	if (out->bits <= 126)
	{
		int128	   *v = out->v;

		switch (vx->kind)
		{
			case VX_MUL:
				/* operands of 63 bits or fewer: one widening 64-bit multiply */
				if (l.bits <= 63 && r.bits <= 63)
					VX_LOOP(v[i] = (int128) (int64) a * (int64) c);
				else
					VX_LOOP(v[i] = a * c);
				break;
			case VX_ADD:
				VX_LOOP(v[i] = a * lm + c * rm);
				break;
			default:
				VX_LOOP(v[i] = a * lm - c * rm);
				break;
		}
	}
	else
	{
		int128	   *v = out->v;
		bool	   *isnull = out->isnull;

		/* values of NULL rows are not looked at: they may be anything */
		switch (vx->kind)
		{
			case VX_MUL:
				VX_LOOP(if (!(isnull && isnull[i])) overflow |= __builtin_mul_overflow(a, c, &v[i]));
				break;
			default:
				VX_LOOP(if (!(isnull && isnull[i]))
						{
							overflow |= __builtin_mul_overflow(a, lm, &a);
							overflow |= __builtin_mul_overflow(c, rm, &c);
							if (vx->kind == VX_ADD)
								overflow |= __builtin_add_overflow(a, c, &v[i]);
							else
								overflow |= __builtin_sub_overflow(a, c, &v[i]);
						});
				break;
		}
		out->bits = 127;
	}
#undef VX_LOOP
	return !overflow;
}

/* vx of one row as a numeric (NULL if an input is NULL), as numeric.c computes it. */
static Datum
vx_datum(VExpr *vx, TesseraBatch *b, int row, bool *isnull)
{
	Datum		l,
				r;

	switch (vx->kind)
	{
		case VX_VAR:
			/* decodes just this value if the batch is sparse */
			return TesseraBatchValue(b, vx->attidx, row, isnull);
		case VX_CONST:
			*isnull = false;
			return vx->cdatum;
		default:
			break;
	}
	l = vx_datum(vx->l, b, row, isnull);
	if (*isnull)
		return (Datum) 0;
	r = vx_datum(vx->r, b, row, isnull);
	if (*isnull)
		return (Datum) 0;
	return DirectFunctionCall2(vx->kind == VX_ADD ? numeric_add :
							   vx->kind == VX_SUB ? numeric_sub : numeric_mul, l, r);
}

static void tagg_numeric_accum(TAggState *st, Datum value, MemoryContext cxt);
static void tagg_scaled_rows(TesseraAggState *as, int k, const int128 *v, const int64 *dsc,
							 int64 dsc_all, int bits, int scale, const bool *isnull,
							 const bool *ok, const int32 *gidx, int n);

/* sum/avg of an expression (spec k) over the batch's counted rows. */
static void
tagg_expr_batch(TesseraAggState *as, int k, TesseraBatch *b, const bool *ok, const int32 *gidx,
				int n)
{
	TAggSpec   *sp = &as->specs[k];
	MemoryContext old = MemoryContextSwitchTo(as->vx_cxt);
	VxVal		val;

	if (b->sparse)
	{
		/* few rows selected: decode and compute only theirs */
		int		   *rows = as->srows;
		int32	   *rgidx = gidx ? as->sgidx : NULL;
		int			m = 0;

		if (gidx != NULL)
			for (int i = 0; i < n; i++)
			{
				rows[m] = i;
				rgidx[m] = gidx[i];
				m += gidx[i] >= 0;
			}
		else if (ok != NULL)
			m = sel_rows(ok, n, rows);
		else
			for (int i = 0; i < n; i++)
				rows[m++] = i;
		if (vx_eval(as, sp->vx, b, rows, m, &val) && !val.scalar)
		{
			tagg_scaled_rows(as, k, val.v, val.dsc, val.dsc_all, val.bits, val.scale, val.isnull,
							 NULL, rgidx, m);
			goto done;
		}
	}
	if (!b->sparse && vx_eval(as, sp->vx, b, NULL, n, &val) && !val.scalar)
		tagg_scaled_rows(as, k, val.v, val.dsc, val.dsc_all, val.bits, val.scale, val.isnull, ok,
						 gidx, n);
	else
	{
		/* numerics, row by row, only for the rows that count */
		bool	   *isnull = NULL;

		TAGG_ROWS(bool rnull;
				  Datum d = vx_datum(sp->vx, b, i, &rnull);

				  if (!rnull)
					  tagg_numeric_accum(st, d, as->cxt));
	}
done:
	MemoryContextSwitchTo(old);
	MemoryContextReset(as->vx_cxt);
}

/*
 * min/max through the type's comparison.  Like text_smaller and friends,
 * a value equal to the one kept replaces it (equal is not always identical:
 * 1.0 and 1.00), except for char(n), whose functions keep the old one.
 */
static void
tagg_generic_accum(TesseraAggState *as, TAggSpec *sp, TAggState *st, Datum value)
{
	if (st->have)
	{
		int			c = DatumGetInt32(FunctionCall2Coll(&sp->cmp, sp->collation, value, st->dbest));

		/* bpchar_smaller/larger alone keep the old value on a tie */
		if (sp->kind == TAGG_MIN ? c > 0 : c < 0)
			return;
		if (c == 0 && sp->argtype == BPCHAROID)
			return;
		if (!sp->typbyval)
			pfree(DatumGetPointer(st->dbest));
	}
	{
		MemoryContext old = MemoryContextSwitchTo(as->cxt);

		st->dbest = datumCopy(value, sp->typbyval, sp->typlen);
		MemoryContextSwitchTo(old);
	}
	st->have = true;
}

/* Fold one batch into every aggregate. ok: rows to count (NULL: all n). */
static void
tagg_batch(TesseraAggState *as, TesseraBatch *b, const bool *ok, int n)
{
	int32	   *gidx = NULL;
	bool		whole;
	const bool *ok_all;
	const int32 *gidx_all;

	if (as->row_cap < n)
	{
		as->row_cap = Max(n, 1024);
		as->gidx = MemoryContextAlloc(as->cxt, sizeof(int32) * as->row_cap);
		as->ok = NULL;
	}
	if (as->fcap < n)
	{
		as->fcap = Max(n, 1024);
		as->fsel = MemoryContextAlloc(as->buf_cxt, as->fcap);
		as->fidx = MemoryContextAlloc(as->buf_cxt, sizeof(int) * as->fcap);
		as->fgidx = MemoryContextAlloc(as->buf_cxt, sizeof(int32) * as->fcap);
		as->srows = MemoryContextAlloc(as->buf_cxt, sizeof(int) * as->fcap);
		as->sgidx = MemoryContextAlloc(as->buf_cxt, sizeof(int32) * as->fcap);
	}
	if (as->nkeys > 0)
	{
		int			k = as->nkeys;
		int64		rowkeys[INDEX_MAX_KEYS];
		bool		rownulls[INDEX_MAX_KEYS];
		int			last = -1;
		int			first_slow;

		for (int j = 0; j < k; j++)
		{
			TAggKey    *key = &as->gkeys[j];

			if (key->ids == NULL || key->ids_cap < n)
			{
				key->ids_cap = Max(n, 1024);
				key->ids = MemoryContextAlloc(as->cxt, sizeof(int64) * key->ids_cap);
			}
			key_ids(as, key, b, ok, n);
		}
		gidx = as->gidx;
		first_slow = 0;
		if (k == 1 && ok == NULL && as->direct != NULL &&
			memchr(as->gkeys[0].nulls, true, n) == NULL)
		{
			/*
			 * One key, every row, no NULL, the group of each key already in
			 * the direct-mapped cache (after the first batches of a
			 * low-cardinality key): a tight loop; the general one takes
			 * over at the first row that misses.
			 */
			const int64 *ids = as->gkeys[0].ids;
			const int32 *direct = as->direct;
			int64		base = as->direct_base;

			for (; first_slow < n; first_slow++)
			{
				uint64		d = (uint64) (ids[first_slow] - base);

				if (d >= TAGG_DIRECT || direct[d] < 0)
					break;
				gidx[first_slow] = direct[d];
			}
		}
		for (int i = first_slow; i < n; i++)
		{
			if (ok && !ok[i])
			{
				gidx[i] = -1;
				continue;
			}
			if (k == 1)
			{
				int64		key = as->gkeys[0].ids[i];
				uint64		d = (uint64) (key - as->direct_base);

				if (as->gkeys[0].nulls[i])
				{
					if (as->null_group < 0)
					{
						rowkeys[0] = 0;
						rownulls[0] = true;
						as->null_group = new_group(as, rowkeys, rownulls);
					}
					gidx[i] = as->null_group;
					continue;
				}
				rownulls[0] = false;
				/* keys near the first one seen skip hashing */
				if (as->direct != NULL && d < TAGG_DIRECT)
				{
					if (as->direct[d] < 0)
						as->direct[d] = find_group(as, &key, rownulls);
					gidx[i] = as->direct[d];
				}
				else
				{
					gidx[i] = find_group(as, &key, rownulls);
					if (as->direct == NULL)
					{
						as->direct = MemoryContextAlloc(as->cxt, sizeof(int32) * TAGG_DIRECT);
						memset(as->direct, 0xff, sizeof(int32) * TAGG_DIRECT);
						as->direct_base = key - TAGG_DIRECT / 2;
					}
				}
				continue;
			}
			/*
			 * Several keys: when every key is a small non-negative id or
			 * value (strings always are), the keys pack losslessly into 64
			 * bits, and a direct-mapped cache of packed keys finds the group
			 * without hashing them one by one.
			 */
			{
				uint64		packed = 0;
				bool		packs = true;
				int			shift = 64 / k;

				for (int j = 0; j < k; j++)
				{
					int64		id = as->gkeys[j].ids[i];

					rownulls[j] = as->gkeys[j].nulls[i];
					rowkeys[j] = rownulls[j] ? 0 : id;
					if (rownulls[j] || id < 0 || (shift < 64 && (uint64) id >= (UINT64CONST(1) << (shift - 1))))
						packs = false;
					packed = (packed << shift) | (uint64) id;
				}
				if (packs)
				{
					uint32		c = (uint32) ((packed * UINT64CONST(0x9E3779B97F4A7C15)) >> 52);

					if (as->pcache_g[c] >= 0 && as->pcache_key[c] == packed)
						last = as->pcache_g[c];
					else
					{
						last = find_group(as, rowkeys, rownulls);
						as->pcache_key[c] = packed;
						as->pcache_g[c] = last;
					}
				}
				else
					last = find_group(as, rowkeys, rownulls);
				gidx[i] = last;
			}
		}
	}

	/*
	 * With one group and every stored row of the row group counted, counts
	 * and min/max come from the chunk summaries without decoding anything.
	 */
	whole = gidx == NULL && ok == NULL && n == b->chunk_rows;
	ok_all = ok;
	gidx_all = gidx;

	for (int k = 0; k < as->nspecs; k++)
	{
		TAggSpec   *sp = &as->specs[k];
		Datum	   *values;
		bool	   *isnull = NULL;
		int16		typlen;
		const bool *ok = ok_all;
		const int32 *gidx = gidx_all;
		bool		whole_spec = whole;

		if (sp->same_as >= 0)
			continue;			/* its state is another's */
		if (sp->nfq > 0)
		{
			/* FILTER: this aggregate counts only the rows it keeps */
			bool	   *fsel = as->fsel;

			vec_apply(sp->fq, sp->nfq, b, fsel, n, as->fidx);
			if (gidx_all != NULL)
			{
				int32	   *g2 = as->fgidx;

				for (int i = 0; i < n; i++)
					g2[i] = fsel[i] ? gidx_all[i] : -1;
				gidx = g2;
			}
			else
			{
				if (ok_all != NULL)
					for (int i = 0; i < n; i++)
						fsel[i] &= ok_all[i];
				ok = fsel;
			}
			whole_spec = false;
		}

		if (sp->kind == TAGG_COUNT_STAR)
		{
			if (whole_spec)
				as->states[k].count += n;
			else if (gidx != NULL && as->ngroups <= n / 4)
				tagg_count_groups(as, k, gidx, n);
			else
				TAGG_ROWS(st->count++);
			continue;
		}
		if (whole_spec && (sp->kind == TAGG_COUNT ||
					  ((sp->kind == TAGG_MIN || sp->kind == TAGG_MAX) && !sp->generic &&
					   sp->argtype != FLOAT4OID && sp->argtype != FLOAT8OID)))
		{
			TesseraChunkSummary cs;
			TAggState  *st = &as->states[k];

			TesseraReaderChunkSummary(b->reader, b->stripe, b->rg, sp->attidx, &cs);
			if (sp->kind == TAGG_COUNT)
			{
				st->count += cs.nonnull;
				as->metadata_answers++;
				continue;
			}
			if (cs.nonnull == 0)
			{
				as->metadata_answers++;
				continue;
			}
			if (cs.has_minmax)
			{
				int16		len = TupleDescAttr(b->reader->tupdesc, sp->attidx)->attlen;
				int64		v = int_datum(sp->kind == TAGG_MIN ? cs.min : cs.max, len);

				if (!st->have || (sp->kind == TAGG_MIN ? v < st->ibest : v > st->ibest))
				{
					st->ibest = v;
					st->have = true;
				}
				as->metadata_answers++;
				continue;
			}
		}
		if (sp->vx != NULL)
		{
			tagg_expr_batch(as, k, b, ok, gidx, n);
			continue;
		}
		typlen = TupleDescAttr(b->reader->tupdesc, sp->attidx)->attlen;
		if (whole_spec && (sp->kind == TAGG_SUM || sp->kind == TAGG_AVG) &&
			(sp->argtype == INT2OID || sp->argtype == INT4OID || sp->argtype == INT8OID))
		{
			/* constants, runs and steady steps sum without decoding */
			int128		sum;
			int64		count;

			if (TesseraBatchIntSum(b, sp->attidx, &sum, &count))
			{
				as->states[k].sum += sum;
				as->states[k].count += count;
				as->metadata_answers++;
				continue;
			}
		}
		if (sp->argtype != NUMERICOID || sp->generic)
			TesseraBatchColumn(b, sp->attidx, &values, &isnull);

		switch (sp->kind)
		{
			case TAGG_COUNT:
				if (sp->argtype == NUMERICOID)
					TesseraBatchColumn(b, sp->attidx, &values, &isnull);
				TAGG_ROWS(st->count++);
				break;
			case TAGG_SUM:
			case TAGG_AVG:
				if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
					TAGG_ROWS(tagg_float_accum(sp, st, values[i]));
				else if (sp->argtype == INTERVALOID)
					TAGG_ROWS(tagg_interval_accum(st, DatumGetIntervalP(values[i])));
				else if (sp->argtype == NUMERICOID)
				{
					int128	   *sv;
					int64	   *sc;
					int			cmax;

					int			bits;
					int64		dsc_all;

					if (TesseraBatchScaledInfo(b, sp->attidx, &sv, &sc, &isnull, &cmax, &bits,
											   &dsc_all))
						tagg_scaled_rows(as, k, sv, dsc_all >= 0 ? NULL : sc, Max(dsc_all, 0),
										 bits, cmax, isnull, ok, gidx, n);
					else
					{
						TesseraBatchColumn(b, sp->attidx, &values, &isnull);
						TAGG_ROWS(tagg_numeric_accum(st, values[i], as->cxt));
					}
				}
				else if (gidx == NULL && ok == NULL && typlen <= 4)
				{
					/* one group, every row: a branch-free loop the compiler vectorizes */
					int64		sum = 0,
								count = 0;

					if (memchr(isnull, true, n) == NULL)
					{
						/* no NULLs (the usual case): a plain sum */
						if (typlen == 2)
							for (int i = 0; i < n; i++)
								sum += (int16) values[i];
						else
							for (int i = 0; i < n; i++)
								sum += (int32) values[i];
						count = n;
					}
					else if (typlen == 2)
						for (int i = 0; i < n; i++)
						{
							sum += isnull[i] ? 0 : DatumGetInt16(values[i]);
							count += !isnull[i];
						}
					else
						for (int i = 0; i < n; i++)
						{
							sum += isnull[i] ? 0 : DatumGetInt32(values[i]);
							count += !isnull[i];
						}
					as->states[k].sum += sum;
					as->states[k].count += count;
				}
				else if (gidx == NULL && ok == NULL)
				{
					/* bigint, one group: 64-bit partial sums, widened when full */
					int128		total = 0;
					int64		acc = 0,
								count = 0;

					for (int i = 0; i < n; i++)
					{
						int64		v = isnull[i] ? 0 : DatumGetInt64(values[i]);
						int64		t;

						count += !isnull[i];
						if (unlikely(__builtin_add_overflow(acc, v, &t)))
						{
							total += acc;
							t = v;
						}
						acc = t;
					}
					as->states[k].sum += total + acc;
					as->states[k].count += count;
				}
				else if (typlen == 2)
					TAGG_ROWS(st->count++; st->sum += DatumGetInt16(values[i]));
				else if (typlen == 4)
					TAGG_ROWS(st->count++; st->sum += DatumGetInt32(values[i]));
				else
					TAGG_ROWS(st->count++; st->sum += DatumGetInt64(values[i]));
				break;
			case TAGG_MIN:
			case TAGG_MAX:
				{
					bool		want_min = sp->kind == TAGG_MIN;

					if (sp->generic)
					{
						TAGG_ROWS(tagg_generic_accum(as, sp, st, values[i]));
					}
					else if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
					{
						bool		f4 = sp->argtype == FLOAT4OID;

						TAGG_ROWS(float8 v = f4 ? (float8) DatumGetFloat4(values[i]) : DatumGetFloat8(values[i]);
								  if (!st->have || (want_min ? float8_lt(v, st->fbest) : float8_gt(v, st->fbest)))
								  {
									  st->fbest = v;
									  st->have = true;
								  });
					}
					else
					{
						TAGG_ROWS(int64 v = int_datum(values[i], typlen);
								  if (!st->have || (want_min ? v < st->ibest : v > st->ibest))
								  {
									  st->ibest = v;
									  st->have = true;
								  });
					}
					break;
				}
			default:
				break;
		}
	}
}

/* The numeric sum of a state, or NULL for NaN/infinite handled by caller. */
static Datum
numeric_state_sum(TAggState *st, TAggSpec *sp)
{
	Numeric		r;

	if (st->nan > 0 || (st->pinf > 0 && st->ninf > 0))
		return DirectFunctionCall3(numeric_in, CStringGetDatum("NaN"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	if (st->pinf > 0 || st->ninf > 0)
		return DirectFunctionCall3(numeric_in, CStringGetDatum(st->pinf ? "Infinity" : "-Infinity"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	if (sp->argtype == NUMERICOID)
	{
		/* exact: every value added is a multiple of 10^(scale - dscale) */
		r = scaled_numeric(st->sum / pow10_i128[st->scale - st->dscale], st->dscale);
	}
	else
		r = scaled_numeric(st->sum, 0);
	if (st->extra != NULL)
		return DirectFunctionCall2(numeric_add, NumericGetDatum(r), NumericGetDatum(st->extra));
	return NumericGetDatum(r);
}

static Datum
tagg_result(TAggSpec *sp, TAggState *st, bool *isnull)
{
	*isnull = false;
	switch (sp->kind)
	{
		case TAGG_COUNT_STAR:
		case TAGG_COUNT:
			return Int64GetDatum(st->count);
		case TAGG_SUM:
			if (st->count == 0)
				break;
			if (sp->restype == INT8OID)
				return Int64GetDatum((int64) st->sum);
			if (sp->argtype == FLOAT4OID)
				return Float4GetDatum(st->f4sum);
			if (sp->argtype == FLOAT8OID)
				return Float8GetDatum(st->fsx);
			if (sp->argtype == INTERVALOID)
			{
				Interval   *r = palloc(sizeof(Interval));

				*r = st->isum;
				return IntervalPGetDatum(r);
			}
			return numeric_state_sum(st, sp);
		case TAGG_AVG:
			if (st->count == 0)
				break;
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
				return Float8GetDatum(st->fsx / (float8) st->count);	/* float8_avg */
			if (sp->argtype == INTERVALOID)		/* interval_avg */
				return DirectFunctionCall2(interval_div, IntervalPGetDatum(&st->isum),
										   Float8GetDatum((double) st->count));
			return DirectFunctionCall2(numeric_div, numeric_state_sum(st, sp),
									   NumericGetDatum(int64_to_numeric(st->count)));
		case TAGG_MIN:
		case TAGG_MAX:
			if (!st->have)
				break;
			if (sp->generic)
				return st->dbest;
			switch (sp->argtype)
			{
				case FLOAT4OID:
					return Float4GetDatum((float4) st->fbest);
				case FLOAT8OID:
					return Float8GetDatum(st->fbest);
				case INT2OID:
					return Int16GetDatum((int16) st->ibest);
				case INT4OID:
				case DATEOID:
					return Int32GetDatum((int32) st->ibest);
				default:
					return Int64GetDatum(st->ibest);
			}
	}
	*isnull = true;
	return (Datum) 0;
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
		as->states[k].count += n;
	as->metadata_answers++;
	return false;
}

/* Is every aggregate count(*), with no GROUP BY, FILTER or qual? */
static bool
tagg_count_only(TesseraAggState *as)
{
	if (as->nkeys > 0 || as->ts.skip != NIL || as->ts.nvquals > 0 ||
		as->ts.css.ss.ps.qual != NULL)
		return false;
	for (int k = 0; k < as->nspecs; k++)
		if (as->specs[k].kind != TAGG_COUNT_STAR || as->specs[k].nfq > 0)
			return false;
	return as->nspecs > 0;
}

static void
tagg_compute(TesseraAggState *as)
{
	TesseraScanState *ts = &as->ts;
	ScanState  *ss = &as->ts.css.ss;
	TableScanDesc scan = ss->ss_currentScanDesc;
	TesseraBatch *b;
	const bool *sel;
	uint64		batches = 0;

	if (scan == NULL)
	{
		scan = table_beginscan(ss->ss_currentRelation, ss->ps.state->es_snapshot, 0, NULL);
		ss->ss_currentScanDesc = scan;
	}
	if (tagg_count_only(as))
		TesseraScanSetFilters(scan, tagg_count_rg_filter, NULL, as);
	else
		TesseraScanSetFilters(scan, ts->skip != NIL ? tscan_rg_filter : NULL,
							  ts->nvquals > 0 ? tscan_batch_filter : NULL, ts);
	eval_values(ts);
	{
		/* FILTER values, in the filter context eval_values just reset */
		MemoryContext old = MemoryContextSwitchTo(ts->filter_cxt);

		for (int k = 0; k < as->nspecs; k++)
			for (int q = 0; q < as->specs[k].nfq; q++)
				eval_vecqual(&as->specs[k].fq[q], ts->css.ss.ps.ps_ExprContext);
		MemoryContextSwitchTo(old);
	}
	tagg_reset(as);
	ts->rgs_read = 0;
	as->metadata_answers = 0;

	while (TesseraScanNextBatch(scan, &b, &sel))
	{
		const bool *ok = NULL;
		int			n = b->nrows;

		batches++;
		if (b->deleted == NULL)
			ok = sel;
		else
		{
			const bool *deleted = b->deleted;
			bool	   *mask;

			if (as->row_cap < n || as->ok == NULL)
			{
				as->row_cap = Max(Max(n, 1024), as->row_cap);
				as->gidx = MemoryContextAlloc(as->cxt, sizeof(int32) * as->row_cap);
				as->ok = MemoryContextAlloc(as->cxt, as->row_cap);
			}
			mask = as->ok;
			if (sel == NULL)
				for (int i = 0; i < n; i++)
					mask[i] = !deleted[i];
			else
				for (int i = 0; i < n; i++)
					mask[i] = sel[i] & !deleted[i];
			ok = mask;
		}
		tagg_batch(as, b, ok, n);
		tagg_check_memory(as);
	}
	tagg_finish_spill(as);
	/* row groups with visible rows actually read */
	ts->rgs_read = batches;
	as->computed = true;
}

/* Group g's keys as Datums of their columns. */
static void
tagg_group_keys(TesseraAggState *as, int g, Datum *values, bool *isnull)
{
	for (int j = 0; j < as->nkeys; j++)
	{
		TAggKey    *key = &as->gkeys[j];
		int64		v = as->keys[(Size) g * as->nkeys + j];

		isnull[j] = as->keynull[(Size) g * as->nkeys + j];
		if (isnull[j])
			values[j] = (Datum) 0;
		else if (key->kind != TAGG_KEY_INT)
			values[j] = key->strs[v];
		else
			values[j] = key->typlen == 2 ? Int16GetDatum((int16) v) :
				key->typlen == 4 ? Int32GetDatum((int32) v) : Int64GetDatum(v);
	}
}

/*
 * Group g's states as a bytea: per aggregate the state struct (its extra
 * pointer meaningless), then the length and bytes of its extra numeric.
 * Partial and final nodes run the same binary, so the layout is private.
 */
static Datum
tagg_serialize(TesseraAggState *as, int g)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	for (int k = 0; k < as->nspecs; k++)
	{
		TAggState  *st = &as->states[(Size) g * as->nspecs + k];
		int32		len = st->extra ? VARSIZE(st->extra) : 0;

		appendBinaryStringInfo(&buf, (char *) st, sizeof(TAggState));
		appendBinaryStringInfo(&buf, (char *) &len, sizeof(int32));
		if (len > 0)
			appendBinaryStringInfo(&buf, (char *) st->extra, len);
		if (as->specs[k].generic && st->have)
		{
			TAggSpec   *sp = &as->specs[k];

			len = sp->typbyval ? 0 : (int32) datumGetSize(st->dbest, false, sp->typlen);
			appendBinaryStringInfo(&buf, (char *) &len, sizeof(int32));
			if (len > 0)
				appendBinaryStringInfo(&buf, DatumGetPointer(st->dbest), len);
		}
	}
	SET_VARSIZE(buf.data, buf.len);
	return PointerGetDatum(buf.data);
}

/* Fold a partial state of spec sp into dst. */
static void
tagg_merge_state(TAggSpec *sp, TAggState *dst, const TAggState *src, Numeric extra,
				 MemoryContext cxt)
{
	switch (sp->kind)
	{
		case TAGG_COUNT_STAR:
		case TAGG_COUNT:
			dst->count += src->count;
			break;
		case TAGG_MIN:
		case TAGG_MAX:
			if (!src->have)
				break;
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
			{
				if (!dst->have || (sp->kind == TAGG_MIN ? float8_lt(src->fbest, dst->fbest) :
								   float8_gt(src->fbest, dst->fbest)))
					dst->fbest = src->fbest;
			}
			else if (!dst->have || (sp->kind == TAGG_MIN ? src->ibest < dst->ibest :
									src->ibest > dst->ibest))
				dst->ibest = src->ibest;
			dst->have = true;
			break;
		case TAGG_SUM:
		case TAGG_AVG:
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
			{
				tagg_float_combine(sp, dst, src);
				break;
			}
			if (sp->argtype == INTERVALOID)
			{
				/* interval_pl / interval_combine */
				if (src->count > 0 && dst->count == 0)
					dst->isum = src->isum;
				else if (src->count > 0)
					tagg_interval_add(&dst->isum, &src->isum);
				dst->count += src->count;
				break;
			}
			dst->nan += src->nan;
			dst->pinf += src->pinf;
			dst->ninf += src->ninf;
			if (extra != NULL)
				add_extra(dst, NumericGetDatum(extra), cxt);
			if (sp->argtype == NUMERICOID)
				tagg_scaled_fold(dst, src->sum, src->count, src->dscale, src->scale, cxt);
			else
			{
				dst->sum += src->sum;
				dst->count += src->count;
			}
			break;
	}
}

/* The group of a row of keys, created if new. */
static int
tagg_group_of(TesseraAggState *as, int64 *keys, bool *nulls)
{
	if (as->nkeys == 0)
		return 0;
	if (as->nkeys == 1 && nulls[0])
	{
		if (as->null_group < 0)
		{
			keys[0] = 0;
			as->null_group = new_group(as, keys, nulls);
		}
		return as->null_group;
	}
	return find_group(as, keys, nulls);
}

/* Merge a serialized row of states (tagg_serialize) into group g. */
static void
tagg_merge_row(TesseraAggState *as, int g, Datum statesd)
{
	bytea	   *states = DatumGetByteaPP(statesd);
	const char *p = VARDATA_ANY(states);
	const char *end = p + VARSIZE_ANY_EXHDR(states);

	for (int k = 0; k < as->nspecs; k++)
	{
		TAggState	src;
		int32		len;
		Numeric		extra = NULL;

		if (end - p < (ptrdiff_t) (sizeof(TAggState) + sizeof(int32)))
			elog(ERROR, "TesseraAgg: partial aggregate states truncated");
		memcpy(&src, p, sizeof(TAggState));
		memcpy(&len, p + sizeof(TAggState), sizeof(int32));
		p += sizeof(TAggState) + sizeof(int32);
		if (len < 0 || end - p < len)
			elog(ERROR, "TesseraAgg: partial aggregate states truncated");
		if (len > 0)
		{
			extra = palloc(len);
			memcpy(extra, p, len);
			p += len;
		}
		if (as->specs[k].generic && src.have)
		{
			if (end - p < (ptrdiff_t) sizeof(int32))
				elog(ERROR, "TesseraAgg: partial aggregate states truncated");
			memcpy(&len, p, sizeof(int32));
			p += sizeof(int32);
			if (len < 0 || end - p < len)
				elog(ERROR, "TesseraAgg: partial aggregate states truncated");
			if (len > 0)
			{
				char	   *copy = palloc(len);

				memcpy(copy, p, len);
				src.dbest = PointerGetDatum(copy);
				p += len;
			}
			/* by value: the struct carried it */
			tagg_generic_accum(as, &as->specs[k], &as->states[(Size) g * as->nspecs + k],
							   src.dbest);
			continue;
		}
		tagg_merge_state(&as->specs[k], &as->states[(Size) g * as->nspecs + k], &src,
						 extra, as->cxt);
	}
}

/*
 * Bounded memory: once the groups take more than hash_mem, they are
 * written to a sort by key as (keys, states) rows and the table starts
 * empty; at the end the sorted rows are merged group by group.  The
 * planner only picks TesseraAgg when it expects the groups to fit, so this
 * is the path for estimates that were wrong.
 */
static void
tagg_spill_groups(TesseraAggState *as)
{
	TupleTableSlot *slot;

	if (as->spill == NULL)
	{
		int			k = as->nkeys;
		AttrNumber *cols = palloc(sizeof(AttrNumber) * k);
		Oid		   *ops = palloc(sizeof(Oid) * k);
		Oid		   *colls = palloc(sizeof(Oid) * k);
		bool	   *nullsfirst = palloc0(sizeof(bool) * k);
		MemoryContext old = MemoryContextSwitchTo(as->ts.css.ss.ps.state->es_query_cxt);

		as->spill_desc = CreateTemplateTupleDesc(k + 1);
		for (int j = 0; j < k; j++)
		{
			TAggKey    *key = &as->gkeys[j];

			TupleDescInitEntry(as->spill_desc, j + 1, NULL, key->typid, -1, 0);
			TupleDescInitEntryCollation(as->spill_desc, j + 1, key->collation);
			cols[j] = j + 1;
			ops[j] = lookup_type_cache(key->typid, TYPECACHE_LT_OPR)->lt_opr;
			colls[j] = key->collation;
			if (!OidIsValid(ops[j]))
				elog(ERROR, "TesseraAgg: no ordering for type %u", key->typid);
		}
		TupleDescInitEntry(as->spill_desc, k + 1, NULL, BYTEAOID, -1, 0);
		as->spill_slot = MakeSingleTupleTableSlot(as->spill_desc, &TTSOpsMinimalTuple);
		as->spill = tuplesort_begin_heap(as->spill_desc, k, cols, ops, colls, nullsfirst,
										 work_mem, NULL, TUPLESORT_NONE);
		MemoryContextSwitchTo(old);
	}
	slot = MakeSingleTupleTableSlot(as->spill_desc, &TTSOpsVirtual);
	for (int g = 0; g < as->ngroups; g++)
	{
		MemoryContext old = MemoryContextSwitchTo(as->vx_cxt);

		ExecClearTuple(slot);
		tagg_group_keys(as, g, slot->tts_values, slot->tts_isnull);
		slot->tts_values[as->nkeys] = tagg_serialize(as, g);
		slot->tts_isnull[as->nkeys] = false;
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(as->spill, slot);
		MemoryContextSwitchTo(old);
		MemoryContextReset(as->vx_cxt);
	}
	ExecDropSingleTupleTableSlot(slot);
	as->spilled_groups += as->ngroups;
	tagg_reset_groups(as, 256);
}

static void
tagg_check_memory(TesseraAggState *as)
{
	if (as->nkeys > 0 && as->ngroups > 1 &&
		MemoryContextMemAllocated(as->cxt, true) > get_hash_memory_limit())
		tagg_spill_groups(as);
}

/* After the input: if anything spilled, the rest follows and the merge starts. */
static void
tagg_finish_spill(TesseraAggState *as)
{
	if (as->spill == NULL)
		return;
	tagg_spill_groups(as);
	tuplesort_performsort(as->spill);
	as->spill_pending = tuplesort_gettupleslot(as->spill, true, false, as->spill_slot, NULL);
}

/*
 * The next group of the sorted spill: the rows with equal keys merged into
 * group 0 of an emptied table.  False when none is left.
 */
static bool
tagg_next_spilled_group(TesseraAggState *as)
{
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	bool		first = true;

	if (!as->spill_pending)
		return false;
	tagg_reset_groups(as, 1);
	while (as->spill_pending)
	{
		TupleTableSlot *in = as->spill_slot;
		int			g;

		slot_getallattrs(in);
		for (int j = 0; j < as->nkeys; j++)
		{
			TAggKey    *key = &as->gkeys[j];

			nulls[j] = in->tts_isnull[j];
			keys[j] = nulls[j] ? 0 :
				key->kind == TAGG_KEY_INT ? int_datum(in->tts_values[j], key->typlen) :
				intern_string(as, key, in->tts_values[j]);
		}
		if (!first)
		{
			bool		same = true;

			for (int j = 0; j < as->nkeys; j++)
				same &= as->keynull[j] == nulls[j] && as->keys[j] == keys[j];
			if (!same)
				break;			/* the next group's first row stays pending */
		}
		g = tagg_group_of(as, keys, nulls);
		tagg_merge_row(as, g, in->tts_values[as->nkeys]);
		first = false;
		as->spill_pending = tuplesort_gettupleslot(as->spill, true, false, as->spill_slot, NULL);
	}
	return true;
}

/* Final: merge the partial nodes' rows, each a group's keys and states. */
static void
tagg_merge_input(TesseraAggState *as)
{
	PlanState  *child = linitial(as->ts.css.custom_ps);
	ExprContext *econtext = as->ts.css.ss.ps.ps_ExprContext;
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	uint64		nrows = 0;

	tagg_reset(as);
	for (;;)
	{
		TupleTableSlot *in = ExecProcNode(child);
		MemoryContext old;
		int			g;

		if (TupIsNull(in))
			break;
		ResetExprContext(econtext);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		slot_getallattrs(in);
		for (int j = 0; j < as->nkeys; j++)
		{
			TAggKey    *key = &as->gkeys[j];

			nulls[j] = in->tts_isnull[j];
			keys[j] = nulls[j] ? 0 :
				key->kind == TAGG_KEY_INT ? int_datum(in->tts_values[j], key->typlen) :
				intern_string(as, key, in->tts_values[j]);
		}
		g = tagg_group_of(as, keys, nulls);
		if (in->tts_isnull[as->nkeys])
			elog(ERROR, "TesseraAgg: partial aggregate states missing");
		tagg_merge_row(as, g, in->tts_values[as->nkeys]);
		MemoryContextSwitchTo(old);
		if ((++nrows & 255) == 0)
			tagg_check_memory(as);
	}
	tagg_finish_spill(as);
	as->computed = true;
}

static TupleTableSlot *
tagg_exec(CustomScanState *node)
{
	TesseraAggState *as = (TesseraAggState *) node;
	ScanState  *ss = &node->ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ExprContext *econtext = ss->ps.ps_ExprContext;
	int			g;
	int			col = 0;

	if (!as->computed)
	{
		if (as->mode == TAGG_FINAL)
			tagg_merge_input(as);
		else
			tagg_compute(as);
	}
	if (as->spill != NULL)
	{
		if (!tagg_next_spilled_group(as))
			return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
		g = 0;
	}
	else if (as->next >= as->ngroups)
		return ExecClearTuple(ss->ps.ps_ResultTupleSlot);
	else
		g = as->next++;

	ResetExprContext(econtext);
	ExecClearTuple(slot);
	tagg_group_keys(as, g, slot->tts_values, slot->tts_isnull);
	col = as->nkeys;
	if (as->mode == TAGG_PARTIAL)
	{
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		slot->tts_values[col] = tagg_serialize(as, g);
		slot->tts_isnull[col] = false;
		MemoryContextSwitchTo(old);
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		for (int k = 0; k < as->nspecs; k++)
		{
			int			from = as->specs[k].same_as >= 0 ? as->specs[k].same_as : k;

			slot->tts_values[col + k] = tagg_result(&as->specs[k],
													&as->states[(Size) g * as->nspecs + from],
													&slot->tts_isnull[col + k]);
		}
		MemoryContextSwitchTo(old);
	}
	ExecStoreVirtualTuple(slot);

	if (ss->ps.ps_ProjInfo == NULL)
		return slot;
	econtext->ecxt_scantuple = slot;
	return ExecProject(ss->ps.ps_ProjInfo);
}

static void
tagg_rescan(CustomScanState *node)
{
	TesseraAggState *as = (TesseraAggState *) node;

	if (node->ss.ss_currentScanDesc)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	if (as->mode == TAGG_FINAL && ((PlanState *) linitial(node->custom_ps))->chgParam == NULL)
		ExecReScan(linitial(node->custom_ps));
	as->computed = false;
	as->next = 0;
	tagg_end_spill(as);
}

static void
tagg_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	TesseraAggState *as = (TesseraAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List	   *aggs = NIL;
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, cscan->custom_scan_tlist)
	{
		Node	   *expr = (Node *) lfirst_node(TargetEntry, lc)->expr;
		char	   *text = deparse_expression(expr, context, es->verbose, false);

		if (IsA(expr, Aggref))
			aggs = lappend(aggs, text);
		else
			keys = lappend(keys, text);
	}
	if (as->mode == TAGG_PARTIAL)
	{
		/* the scan tuple holds their states: show the aggregates themselves */
		List	   *plan_aggs = copyObject(lfourth(cscan->custom_private));

		ChangeVarNodes((Node *) plan_aggs, as->plan_relid, cscan->scan.scanrelid, 0);
		aggs = NIL;
		foreach(lc, plan_aggs)
			aggs = lappend(aggs, deparse_expression(lfirst(lc), context, es->verbose, false));
	}
	if (keys != NIL)
		ExplainPropertyList("Group Key", keys, es);
	if (aggs != NIL)
		ExplainPropertyList("Aggregates", aggs, es);
	if (as->mode != TAGG_SERIAL)
		ExplainPropertyText("Phase", as->mode == TAGG_PARTIAL ? "Partial" : "Finalize", es);

	/* the quals carry the planning-time varno: show them as the scan's */
	foreach(lc, list_make2(as->ts.skip_exprs, as->ts.vector_exprs))
	{
		List	   *quals = copyObject(lfirst(lc));

		if (quals == NIL)
			continue;
		ChangeVarNodes((Node *) quals, as->plan_relid, cscan->scan.scanrelid, 0);
		ExplainPropertyText(lfirst(lc) == as->ts.skip_exprs ? "Row Group Filter" : "Vector Filter",
							deparse_expression((Node *) make_ands_explicit(quals), context,
											   es->verbose, false), es);
	}
	if (es->analyze && node->ss.ps.instrument)
	{
		if (as->nkeys > 0 && as->spilled_groups == 0)
			ExplainPropertyInteger("Groups", NULL, as->ngroups, es);
		if (as->spilled_groups > 0)
			ExplainPropertyUInteger("Groups Spilled", NULL, as->spilled_groups, es);
		/* partial nodes' own counters are the leader's share only */
		if (as->mode == TAGG_SERIAL)
		{
			ExplainPropertyUInteger("Chunks Answered from Metadata", NULL, as->metadata_answers, es);
			ExplainPropertyUInteger("Row Groups Read", NULL, as->ts.rgs_read, es);
		}
		if (as->ts.skip_exprs != NIL)
			ExplainPropertyFloat("Row Groups Skipped", NULL, node->ss.ps.instrument->ntuples2, 0, es);
		if (as->ts.vector_exprs != NIL)
			ExplainPropertyFloat("Rows Removed by Vector Filter", NULL,
								 node->ss.ps.instrument->nfiltered2, 0, es);
		if (as->mode != TAGG_FINAL)
			tscan_explain_bytes(&as->ts, es);
	}
}

#endif							/* HAVE_INT128 */

/* ---- registration ---- */

void
TesseraInitCustomScan(void)
{
	tscan_path_methods.CustomName = "TesseraScan";
	tscan_path_methods.PlanCustomPath = tscan_plan_path;

	tscan_plan_methods.CustomName = "TesseraScan";
	tscan_plan_methods.CreateCustomScanState = tscan_create_state;
	RegisterCustomScanMethods(&tscan_plan_methods);

	tscan_exec_methods.CustomName = "TesseraScan";
	tscan_exec_methods.BeginCustomScan = tscan_begin;
	tscan_exec_methods.ExecCustomScan = tscan_exec;
	tscan_exec_methods.EndCustomScan = tscan_end;
	tscan_exec_methods.ReScanCustomScan = tscan_rescan;
	tscan_exec_methods.EstimateDSMCustomScan = tscan_estimate_dsm;
	tscan_exec_methods.InitializeDSMCustomScan = tscan_init_dsm;
	tscan_exec_methods.ReInitializeDSMCustomScan = tscan_reinit_dsm;
	tscan_exec_methods.InitializeWorkerCustomScan = tscan_init_worker;
	tscan_exec_methods.ShutdownCustomScan = tscan_shutdown;
	tscan_exec_methods.ExplainCustomScan = tscan_explain;

	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = tessera_set_rel_pathlist;

#ifdef HAVE_INT128
	tagg_path_methods.CustomName = "TesseraAgg";
	tagg_path_methods.PlanCustomPath = tagg_plan_path;
	tagg_plan_methods.CustomName = "TesseraAgg";
	tagg_plan_methods.CreateCustomScanState = tagg_create_state;
	RegisterCustomScanMethods(&tagg_plan_methods);
	tagg_exec_methods.CustomName = "TesseraAgg";
	tagg_exec_methods.BeginCustomScan = tagg_begin;
	tagg_exec_methods.ExecCustomScan = tagg_exec;
	tagg_exec_methods.EndCustomScan = tagg_end;
	tagg_exec_methods.ReScanCustomScan = tagg_rescan;
	/* the partial node shares its scan like TesseraScan */
	tagg_exec_methods.EstimateDSMCustomScan = tscan_estimate_dsm;
	tagg_exec_methods.InitializeDSMCustomScan = tscan_init_dsm;
	tagg_exec_methods.ReInitializeDSMCustomScan = tscan_reinit_dsm;
	tagg_exec_methods.InitializeWorkerCustomScan = tscan_init_worker;
	tagg_exec_methods.ShutdownCustomScan = tagg_shutdown;
	tagg_exec_methods.ExplainCustomScan = tagg_explain;

	prev_create_upper_paths = create_upper_paths_hook;
	create_upper_paths_hook = tessera_create_upper_paths;
#endif
}
