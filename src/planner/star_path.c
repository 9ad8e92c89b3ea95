/*-------------------------------------------------------------------------
 *
 * star_path.c
 *	  Star joins for TesseraAgg: recognizing an aggregation over a join of
 *	  one tessera table with dimension relations it can probe itself, and
 *	  rewriting the dimensions' columns as extra columns of the table's row.
 *
 * NOTES
 *	  Taken: inner joins (no SpecialJoinInfo but semi and anti joins of
 *	  one relation; or one left join of two relations: star_left_find),
 *	  where the tessera table F joins each dimension by
 *	  exactly one equivalence class holding a column of F and a column of
 *	  the dimension (or two classes: a composite key of two 32-bit
 *	  columns), of integer or date type (the executor compares the keys as
 *	  64-bit values), the dimension's columns being the key of a unique,
 *	  immediate, non-partial index: each F row then matches at most one
 *	  dimension row, so the join only drops rows, never multiplies them.
 *	  A dimension is one relation, or several joined to each other but not
 *	  through F (a snowflake: supplier and its nation): one of them holds
 *	  the key, and each other one joins those before it on its own unique
 *	  key, so a row of the first still matches at most one row of their
 *	  join, which is read by the join's own plan.  An equivalence between
 *	  two dimensions makes them one, which then joins F twice: not taken.
 *	  Other join clauses between dimensions, or between a dimension and F,
 *	  filter the joined rows (star->filters).  Then joining every
 *	  dimension to F on its key, and filtering, is the whole join.  Each
 *	  dimension is read by its own cheapest plan, with its own quals.
 *	  Everything else stays PostgreSQL's plan.

 *	  The aggregation's group keys and arguments may read D's columns:
 *	  they are rewritten into Vars of F numbered after F's attributes
 *	  ("extra columns"), which the classifier takes as computed
 *	  expressions and the executor fills from the matched dimension rows
 *	  (executor/star.c).
 *
 * IDENTIFICATION
 *	  src/planner/star_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/plan.h"
#include "tessera/tessera.h"
#include "planner.h"

/* the most repeats of a key a counted dimension may have (star_dimensions) */
#define STAR_COUNT_MAX_REPEAT 32

/* A plain column of a base relation of the join, or NULL. */
static Var *
star_member_var(EquivalenceMember *em)
{
	Var		   *var = (Var *) em->em_expr;

	if (!IsA(var, Var) || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	return var;
}

/* Is a key of this type compared by the executor as the class's equality does? */
static bool
star_key_type_ok(Oid type, List *opfamilies)
{
	Oid			family = TesseraStarKeyFamily(type);

	return OidIsValid(family) && list_member_oid(opfamilies, family);
}

/*
 * Is var (of dim) the only key column of a unique index of dim?  Or, dim
 * a subquery, are its rows distinct on that column (its GROUP BY or
 * DISTINCT: TPC-H q18's `IN (SELECT l_orderkey … GROUP BY l_orderkey
 * HAVING …)`, which PostgreSQL makes an inner join for that reason)?
 */
static bool
star_unique_key(RelOptInfo *dim, Var *var, List *opfamilies)
{
	ListCell   *lc;

	if (dim->rtekind == RTE_SUBQUERY && dim->subroot != NULL &&
		query_supports_distinctness(dim->subroot->parse))
	{
		foreach(lc, opfamilies)
		{
			Oid			opno = get_opfamily_member(lfirst_oid(lc), var->vartype, var->vartype,
												   BTEqualStrategyNumber);

			if (OidIsValid(opno) &&
				query_is_distinct_for(dim->subroot->parse, list_make1_int(var->varattno),
									  list_make1_oid(opno)))
				return true;
		}
		return false;
	}

	foreach(lc, dim->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);

		if (index->unique && index->immediate && index->nkeycolumns == 1 &&
			(index->indpred == NIL || index->predOK) &&
			index->indexkeys[0] == var->varattno &&
			list_member_oid(opfamilies, index->opfamily[0]))
			return true;
	}
	return false;
}

static int
star_dim_cmp(const ListCell *a, const ListCell *b)
{
	double		ka = TesseraStarDimKept(lfirst(a));
	double		kb = TesseraStarDimKept(lfirst(b));

	return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/*
 * Is clause `fact.col = rel.col` (either way round) with an integer or date
 * equality, or with negated, `fact.col <> rel.col`, the negator of one?
 * Fills *fvar and *dvar.
 */
static bool
star_var_clause(RestrictInfo *rinfo, Index fact, Index rel, bool negated, Var **fvar,
				Var **dvar)
{
	OpExpr	   *op = (OpExpr *) rinfo->clause;
	Var		   *l,
			   *r;
	Oid			family;
	Oid			eq;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2 || rinfo->pseudoconstant)
		return false;
	l = linitial(op->args);
	r = lsecond(op->args);
	if (!IsA(l, Var) || !IsA(r, Var) || l->varlevelsup != 0 || r->varlevelsup != 0 ||
		l->varattno <= 0 || r->varattno <= 0)
		return false;
	if (l->varno == rel && r->varno == fact)
	{
		Var		   *t = l;

		l = r;
		r = t;
	}
	if (l->varno != fact || r->varno != rel)
		return false;
	family = TesseraStarKeyFamily(l->vartype);
	eq = negated ? get_negator(op->opno) : op->opno;
	if (!OidIsValid(family) || family != TesseraStarKeyFamily(r->vartype) || !OidIsValid(eq) ||
		get_op_opfamily_strategy(eq, family) != BTEqualStrategyNumber)
		return false;
	*fvar = l;
	*dvar = r;
	return true;
}

/*
 * The semi and anti joins' dimensions whose join clause is a join clause
 * of its own (joininfo) rather than in an equivalence class: exactly one
 * `fact.col = rel.col` for each (or the class's), and besides it at most
 * one `fact.col2 <> rel.col2` (TPC-H q21's EXISTS and NOT EXISTS of
 * another supplier's line of the order: the set then keeps, per key, one
 * value of rel.col2 and whether there are others); every clause in fact's
 * joininfo is one of them.
 */
static bool
star_special_dims(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *fact, TesseraStarPlan *star)
{
	Relids		special = bms_union(star->semi, star->anti);
	List	   *consumed = NIL;
	ListCell   *lc;
	int			rti = -1;

	while ((rti = bms_next_member(special, rti)) >= 0)
	{
		RelOptInfo *rel = find_base_rel(root, rti);
		TesseraStarDimPlan *dim = NULL;
		RestrictInfo *key_rinfo = NULL,
				   *ne_rinfo = NULL;
		Var		   *fvar = NULL,
				   *dvar = NULL,
				   *ne_fvar = NULL,
				   *ne_dvar = NULL;

		/* (a semi join through a class, found already) */
		foreach(lc, star->dims)
		{
			if (((TesseraStarDimPlan *) lfirst(lc))->key_rel == rel)
				dim = lfirst(lc);
		}
		foreach(lc, rel->joininfo)
		{
			RestrictInfo *rinfo = lfirst(lc);
			Var		   *f,
					   *d;

			if (dim == NULL && key_rinfo == NULL &&
				star_var_clause(rinfo, fact->relid, rti, false, &f, &d))
			{
				key_rinfo = rinfo;
				fvar = f;
				dvar = d;
			}
			else if (ne_rinfo == NULL && star_var_clause(rinfo, fact->relid, rti, true, &f, &d))
			{
				ne_rinfo = rinfo;
				ne_fvar = f;
				ne_dvar = d;
			}
			else
				return false;
		}
		if (dim == NULL)
		{
			if (key_rinfo == NULL)
				return false;
			consumed = lappend(consumed, key_rinfo);
			dim = palloc0(sizeof(TesseraStarDimPlan));
			dim->kind = bms_is_member(rti, star->anti) ? STAR_ANTI : STAR_SEMI;
			dim->rel = rel;
			dim->key_rel = rel;
			dim->relids = bms_make_singleton(rti);
			dim->fact_key = fvar;
			dim->dim_key = dvar;
			star->dims = lappend(star->dims, dim);
		}
		if (ne_rinfo != NULL)
		{
			if (dim->fact_key2 != NULL)
				return false;
			consumed = lappend(consumed, ne_rinfo);
			dim->ne_fact = ne_fvar;
			dim->ne_dim = ne_dvar;
			dim->ne_clause = ne_rinfo->clause;
		}
	}
	/* the others are filters on the joined rows, found with the groups */
	foreach(lc, fact->joininfo)
	{
		RestrictInfo *rinfo = lfirst(lc);

		/* (a part of the query's join: clauses to the rest apply above it) */
		if (star->part && !bms_is_subset(rinfo->required_relids, joinrel->relids))
			continue;
		if (!list_member_ptr(consumed, rinfo) && !list_member_ptr(star->filters, rinfo))
			return false;
	}
	return true;
}

/* Is a key of this type one half of a composite key (32 bits)? */
static bool
star_key_narrow(Oid type)
{
	return type == INT2OID || type == INT4OID || type == DATEOID;
}

/*
 * Is (var, var2) the key of a unique index of rel (var2 NULL: var alone)?
 * opfamilies and opfamilies2 are their classes' families.
 */
static bool
star_unique_key2(RelOptInfo *rel, Var *var, List *opfamilies, Var *var2, List *opfamilies2)
{
	ListCell   *lc;

	if (var2 == NULL)
		return star_unique_key(rel, var, opfamilies);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);
		bool		ok = true;

		if (!index->unique || !index->immediate || index->nkeycolumns != 2 ||
			(index->indpred != NIL && !index->predOK))
			continue;
		/* each column once, in either order, compared in its class's family */
		for (int c = 0; c < 2; c++)
		{
			Var		   *v = index->indexkeys[c] == var->varattno ? var :
				index->indexkeys[c] == var2->varattno ? var2 : NULL;

			ok &= v != NULL &&
				list_member_oid(v == var ? opfamilies : opfamilies2, index->opfamily[c]);
		}
		if (ok && index->indexkeys[0] != index->indexkeys[1])
			return true;
	}
	return false;
}

/* A class's members in the join (not children's, not constants). */
static bool
star_member_in(EquivalenceMember *em, Relids relids)
{
	return !em->em_is_const && !em->em_is_child && bms_is_subset(em->em_relids, relids);
}

static Relids star_group_of(List *groups, int rti);
static bool star_clause_filters(PlannerInfo *root, RelOptInfo *joinrel, Index fact,
								TesseraStarPlan *star, List *groups);

/* Merge the groups that link's relations are in into one. */
static List *
star_merge_groups(List *groups, Relids link)
{
	Relids		merged = NULL;
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, groups)
	{
		Relids		g = lfirst(lc);

		if (bms_overlap(g, link))
			merged = bms_add_members(merged, g);
		else
			out = lappend(out, g);
	}
	return merged != NULL ? lappend(out, merged) : out;
}

/*
 * The dimensions' relations, grouped: relations joined to each other not
 * through fact (a class without a member of fact, or a join clause of
 * their own) are one dimension, read by their join's plan.  NIL if such a
 * join involves a semi or anti join's relation, or a clause joins fact
 * other than through a class.
 */
static List *
star_groups(PlannerInfo *root, RelOptInfo *joinrel, Index fact, TesseraStarPlan *star,
			bool *ok)
{
	Relids		special = bms_union(star->semi, star->anti);
	List	   *groups = NIL;
	ListCell   *lc;
	int			rti = -1;

	*ok = false;
	while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
		if (rti != (int) fact && !bms_is_member(rti, star->joins))
			groups = lappend(groups, bms_make_singleton(rti));
	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		Relids		rels = NULL;
		ListCell   *mc;

		if (ec->ec_has_const || list_length(ec->ec_members) < 2)
			continue;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);

			if (star_member_in(em, joinrel->relids))
				rels = bms_add_members(rels, em->em_relids);
		}
		if (bms_num_members(rels) < 2 || bms_is_member(fact, rels))
			continue;
		if (bms_overlap(rels, special))
			return NIL;
		groups = star_merge_groups(groups, rels);
	}
	if (!star_clause_filters(root, joinrel, fact, star, groups))
		return NIL;
	*ok = true;
	return groups;
}

/*
 * The join clauses of the dimensions' relations: within a group, its
 * join's plan applies them; across groups or with fact, they filter the
 * joined rows (star->filters).  False if one cannot.
 */
static bool
star_clause_filters(PlannerInfo *root, RelOptInfo *joinrel, Index fact, TesseraStarPlan *star,
					List *groups)
{
	Relids		special = bms_union(star->semi, star->anti);
	ListCell   *lc;
	int			rti = -1;

	while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
	{
		RelOptInfo *rel;

		if (rti == (int) fact || bms_is_member(rti, star->joins) || bms_is_member(rti, special))
			continue;
		rel = find_base_rel(root, rti);
		foreach(lc, rel->joininfo)
		{
			RestrictInfo *rinfo = lfirst(lc);
			Relids		rels = bms_intersect(rinfo->required_relids, joinrel->relids);

			/* (a part of the query's join: clauses to the rest apply above it) */
			if (star->part && !bms_is_subset(rinfo->required_relids, joinrel->relids))
				continue;
			if (bms_overlap(rels, special) || bms_overlap(rels, star->joins) ||
				!bms_is_subset(rinfo->required_relids, joinrel->relids))
				return false;
			if (!bms_is_member(fact, rels) && bms_is_subset(rels, star_group_of(groups, rti)))
				continue;
			/*
			 * (a subplan: TesseraJoin's plan qual runs it per joined row, as
			 * PostgreSQL's join filter would; TesseraAgg does not)
			 */
			if (rinfo->pseudoconstant || contain_volatile_functions((Node *) rinfo->clause) ||
				(contain_subplans((Node *) rinfo->clause) && !star->part) ||
				TesseraHasExecParam((Node *) rinfo->clause, NULL))
				return false;
			star->filters = list_append_unique_ptr(star->filters, rinfo);
		}
	}
	return true;
}

/* Add relation rti to the group holding relation member. */
static void
star_group_add(List *groups, int member, int rti)
{
	ListCell   *lc;

	foreach(lc, groups)
	{
		if (bms_is_member(member, lfirst(lc)))
			lfirst(lc) = bms_add_member(lfirst(lc), rti);
	}
}

/*
 * `a = b` for two members of class ec (plain columns of integer or date
 * type), as a filter; NULL if the class's families have no such operator.
 */
static RestrictInfo *
star_class_filter(PlannerInfo *root, EquivalenceClass *ec, Var *a, Var *b)
{
	ListCell   *lc;

	if (!OidIsValid(TesseraStarKeyFamily(a->vartype)) || !OidIsValid(TesseraStarKeyFamily(b->vartype)))
		return NULL;
	foreach(lc, ec->ec_opfamilies)
	{
		Oid			opno = get_opfamily_member(lfirst_oid(lc), a->vartype, b->vartype,
											   BTEqualStrategyNumber);
		Expr	   *clause;

		if (!OidIsValid(opno))
			continue;
		clause = make_opclause(opno, BOOLOID, false, (Expr *) copyObject(a),
							   (Expr *) copyObject(b), InvalidOid, ec->ec_collation);
		set_opfuncid((OpExpr *) clause);
		return make_simple_restrictinfo(root, clause);
	}
	return NULL;
}

/*
 * A class joining fact otherwise than by a key (a column of another type,
 * an expression: TPC-H q02's `ps_supplycost = (SELECT min(...) ...)`, a
 * class of partsupp's column and a subplan of part's), in a join that is
 * a part of the query's: equalities of fact's member with each other
 * member in joinrel, as filters on the joined rows, with the operator
 * PostgreSQL's join clause would take from the class's families.  False
 * if one has none.
 */
static bool
star_class_filters(PlannerInfo *root, RelOptInfo *joinrel, Index fact, EquivalenceClass *ec,
				   TesseraStarPlan *star)
{
	Expr	   *fexpr = NULL;
	ListCell   *lc;

	foreach(lc, ec->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);

		if (fexpr == NULL && bms_equal(em->em_relids, bms_make_singleton(fact)))
			fexpr = em->em_expr;
	}
	if (fexpr == NULL || contain_subplans((Node *) fexpr))
		return false;
	foreach(lc, ec->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);
		Oid			opno = InvalidOid;
		ListCell   *fc;
		Expr	   *clause;

		if (!star_member_in(em, joinrel->relids) || bms_is_member(fact, em->em_relids))
			continue;
		foreach(fc, ec->ec_opfamilies)
		{
			if (!OidIsValid(opno))
				opno = get_opfamily_member(lfirst_oid(fc), exprType((Node *) fexpr),
										   exprType((Node *) em->em_expr), BTEqualStrategyNumber);
		}
		if (!OidIsValid(opno))
			return false;
		clause = make_opclause(opno, BOOLOID, false, (Expr *) copyObject(fexpr),
							   (Expr *) copyObject(em->em_expr), InvalidOid, ec->ec_collation);
		set_opfuncid((OpExpr *) clause);
		star->filters = lappend(star->filters, make_simple_restrictinfo(root, clause));
	}
	return true;
}

/*
 * The dimensions' relations grouped from the keys of fact, a second try
 * when star_groups puts two of them in one group (TPC-H q05: customer's
 * and supplier's nation keys are one class, which makes lineitem's
 * orders and supplier one group joined twice).  Each relation holding a
 * column of a class of fact roots a group; a relation joins the group of
 * one it is reached from by a class on its own unique key (the first
 * found); a class without a member of fact that still spans two groups
 * becomes a filter on the joined rows, an equality between a member of
 * each (the groups' own plans apply the class within each).
 */
static List *
star_groups_rooted(PlannerInfo *root, RelOptInfo *joinrel, Index fact, TesseraStarPlan *star,
				   bool *ok)
{
	Relids		special = bms_union(star->semi, star->anti);
	Relids		placed = NULL;
	Relids		all = NULL;
	List	   *groups = NIL;
	bool		progress = true;
	ListCell   *lc;
	int			rti = -1;

	*ok = false;
	while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
		if (rti != (int) fact && !bms_is_member(rti, star->joins))
			all = bms_add_member(all, rti);
	/* the roots: fact's classes' relations, and each semi or anti join's */
	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		ListCell   *mc;
		bool		of_fact = false;

		foreach(mc, ec->ec_members)
			of_fact |= star_member_in(lfirst(mc), joinrel->relids) &&
				bms_is_member(fact, ((EquivalenceMember *) lfirst(mc))->em_relids);
		if (!of_fact || ec->ec_has_const)
			continue;
		foreach(mc, ec->ec_members)
		{
			Var		   *v = star_member_var(lfirst(mc));

			if (v != NULL && star_member_in(lfirst(mc), joinrel->relids) && v->varno != fact &&
				!bms_is_member(v->varno, placed))
			{
				groups = lappend(groups, bms_make_singleton(v->varno));
				placed = bms_add_member(placed, v->varno);
			}
		}
	}
	rti = -1;
	while ((rti = bms_next_member(special, rti)) >= 0)
		if (!bms_is_member(rti, placed))
		{
			groups = lappend(groups, bms_make_singleton(rti));
			placed = bms_add_member(placed, rti);
		}
	/* the others, each reached on its unique key from a relation placed */
	while (progress && !bms_equal(placed, all))
	{
		progress = false;
		foreach(lc, root->eq_classes)
		{
			EquivalenceClass *ec = lfirst(lc);
			ListCell   *mc;

			if (ec->ec_has_const || ec->ec_has_volatile || ec->ec_broken)
				continue;
			foreach(mc, ec->ec_members)
			{
				Var		   *v = star_member_var(lfirst(mc));
				ListCell   *oc;

				if (v == NULL || !star_member_in(lfirst(mc), joinrel->relids) ||
					v->varno == fact || bms_is_member(v->varno, placed) ||
					!star_unique_key(find_base_rel(root, v->varno), v, ec->ec_opfamilies))
					continue;
				foreach(oc, ec->ec_members)
				{
					Var		   *o = star_member_var(lfirst(oc));

					if (o != NULL && star_member_in(lfirst(oc), joinrel->relids) &&
						o->varno != fact && bms_is_member(o->varno, placed) &&
						!bms_is_member(o->varno, special))
					{
						star_group_add(groups, o->varno, v->varno);
						placed = bms_add_member(placed, v->varno);
						progress = true;
						break;
					}
				}
			}
		}
	}
	if (!bms_equal(placed, all))
		return NIL;
	/* classes spanning groups: filters */
	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		Var		   *first = NULL;
		ListCell   *mc;
		Relids		covered = NULL;

		bool		of_fact = false;

		foreach(mc, ec->ec_members)
			of_fact |= star_member_in(lfirst(mc), joinrel->relids) &&
				bms_is_member(fact, ((EquivalenceMember *) lfirst(mc))->em_relids);
		/* (fact's classes are its keys: each dimension probed on its value) */
		if (ec->ec_has_const || list_length(ec->ec_members) < 2 || of_fact)
			continue;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Var		   *v = star_member_var(em);
			Relids		g;

			if (!star_member_in(em, joinrel->relids))
				continue;
			if (v == NULL || bms_overlap(em->em_relids, special) || ec->ec_has_volatile)
				return NIL;
			g = star_group_of(groups, v->varno);
			if (first == NULL)
				first = v;
			else if (!bms_overlap(g, covered))
			{
				RestrictInfo *rinfo = star_class_filter(root, ec, first, v);

				if (rinfo == NULL)
					return NIL;
				star->filters = lappend(star->filters, rinfo);
			}
			covered = bms_add_members(covered, g);
		}
	}
	if (!star_clause_filters(root, joinrel, fact, star, groups))
		return NIL;
	*ok = true;
	return groups;
}

/*
 * Does each row of the dimension's key relation join at most one row of
 * the others?  True when they can be reached from it one at a time, each
 * by a class that equates its unique key with a column of those reached
 * before: a tree of many-to-one joins.  (Other clauses only filter.)
 */
static bool
star_group_many_to_one(PlannerInfo *root, TesseraStarDimPlan *dim)
{
	Relids		done = bms_make_singleton(dim->key_rel->relid);
	bool		progress = true;

	while (progress && !bms_equal(done, dim->relids))
	{
		ListCell   *lc;

		progress = false;
		foreach(lc, root->eq_classes)
		{
			EquivalenceClass *ec = lfirst(lc);
			bool		linked = false;
			ListCell   *mc;

			if (ec->ec_has_const || ec->ec_has_volatile || ec->ec_broken)
				continue;
			foreach(mc, ec->ec_members)
			{
				EquivalenceMember *em = lfirst(mc);

				linked |= star_member_in(em, done);
			}
			if (!linked)
				continue;
			foreach(mc, ec->ec_members)
			{
				EquivalenceMember *em = lfirst(mc);
				Var		   *v = star_member_var(em);

				if (v == NULL || !star_member_in(em, dim->relids) ||
					bms_is_member(v->varno, done))
					continue;
				if (star_unique_key(find_base_rel(root, v->varno), v, ec->ec_opfamilies))
				{
					done = bms_add_member(done, v->varno);
					progress = true;
				}
			}
		}
	}
	return bms_equal(done, dim->relids);
}

/* The group holding relation rti. */
static Relids
star_group_of(List *groups, int rti)
{
	ListCell   *lc;

	foreach(lc, groups)
	{
		if (bms_is_member(rti, lfirst(lc)))
			return lfirst(lc);
	}
	return NULL;
}

/*
 * Add to star->dims the dimension that fact's class ec reaches through
 * dimension column dvar (or give an existing one its second key column);
 * false if the join cannot be probed so.
 */
static bool
star_add_key(PlannerInfo *root, TesseraStarPlan *star, List *groups, EquivalenceClass *ec,
			 Var *fvar, Var *dvar)
{
	Relids		group = star_group_of(groups, dvar->varno);
	TesseraStarDimPlan *dim;
	ListCell   *dc;

	if (group == NULL || !star_key_type_ok(dvar->vartype, ec->ec_opfamilies))
		return false;
	foreach(dc, star->dims)
	{
		dim = lfirst(dc);
		if (!bms_equal(dim->relids, group))
			continue;
		/*
		 * A second class: a composite key of one relation, both halves 32
		 * bits wide (the executor packs them into one 64-bit key).
		 */
		if (dim->key_rel->relid != dvar->varno || dim->ec == ec || dim->ec2 != NULL ||
			dim->kind != STAR_INNER || !star_key_narrow(dim->dim_key->vartype) ||
			!star_key_narrow(dim->fact_key->vartype) || !star_key_narrow(dvar->vartype) ||
			!star_key_narrow(fvar->vartype))
			return false;
		dim->ec2 = ec;
		dim->fact_key2 = fvar;
		dim->dim_key2 = dvar;
		return true;
	}
	if (bms_is_member(dvar->varno, star->anti))
		return false;
	dim = palloc0(sizeof(TesseraStarDimPlan));
	dim->relids = group;
	dim->key_rel = find_base_rel(root, dvar->varno);
	dim->ec = ec;
	dim->fact_key = fvar;
	dim->dim_key = dvar;
	/* a semi join's keys are a set: an inner join's must be unique (checked later) */
	dim->kind = bms_is_member(dvar->varno, star->semi) ? STAR_SEMI : STAR_INNER;
	star->dims = lappend(star->dims, dim);
	return true;
}

/*
 * The most rows of the dimension's key relation one value of its key may
 * have, as its statistics tell: the most common value's share of its rows,
 * or its rows per distinct value if more.  Without statistics, all its
 * rows.
 */
static double
star_key_max_repeat(PlannerInfo *root, TesseraStarDimPlan *dim)
{
	VariableStatData vardata;
	AttStatsSlot sslot;
	double		rows = Max(dim->key_rel->tuples, 1);
	double		most = 0;
	double		ndistinct;
	bool		isdefault;

	examine_variable(root, (Node *) dim->dim_key, 0, &vardata);
	ndistinct = get_variable_numdistinct(&vardata, &isdefault);
	if (HeapTupleIsValid(vardata.statsTuple) &&
		get_attstatsslot(&sslot, vardata.statsTuple, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		for (int i = 0; i < sslot.nnumbers; i++)
			most = Max(most, sslot.numbers[i]);
		free_attstatsslot(&sslot);
	}
	ReleaseVariableStats(vardata);
	if (isdefault)
		return rows;
	return Max(most * rows, rows / Max(ndistinct, 1));
}

/*
 * Find the dimensions of fact in the join: the groups of other relations
 * (star_groups), each joined to fact by one equivalence class, or two on a
 * composite key, through columns of one of its relations whose values are
 * unique in the group's join.  With count_ok, a relation joined on a key
 * that is not unique is a dimension too (STAR_COUNT), where its statistics
 * say no value of the key repeats more than STAR_COUNT_MAX_REPEAT times:
 * each row of fact then counts once per row it joins, which TesseraAgg
 * does by folding a batch again for the rows that join more (a pass per
 * repeat), so the repeats must be few.  False if the join is not a star
 * around fact.
 */
static bool
star_dimensions(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *fact, TesseraStarPlan *star,
				bool rooted, bool count_ok)
{
	ListCell   *lc;
	int			rti;
	bool		ok;
	List	   *groups = rooted ? star_groups_rooted(root, joinrel, fact->relid, star, &ok) :
		star_groups(root, joinrel, fact->relid, star, &ok);

	if (!ok)
		return false;
	star->dims = NIL;
	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		Var		   *fvar = NULL;
		Bitmapset  *rels = NULL;
		ListCell   *mc;
		bool		any_expr;

		/* (a sort or group key's class has one member: no join) */
		if (ec->ec_has_const || list_length(ec->ec_members) < 2)
			continue;
		if (ec->ec_broken)
			return false;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);

			/* (members of child relations do not concern the join) */
			if (!star_member_in(em, joinrel->relids))
				continue;
			/* an expression of two relations' columns, or volatile: a join of its own */
			if (bms_num_members(em->em_relids) != 1 || ec->ec_has_volatile)
				return false;
			rels = bms_add_members(rels, em->em_relids);
			if (fvar == NULL && bms_is_member(fact->relid, em->em_relids))
				fvar = star_member_var(em);
		}
		/* not a join, or a dimension's own (star_groups) */
		if (bms_num_members(rels) < 2 || !bms_is_member(fact->relid, rels))
			continue;
		/*
		 * a join class of fact: it must go through a plain column of fact to
		 * plain columns of the others, or (a part of the query's join) it
		 * filters the joined rows (`f.x = (SELECT … d.col …)`)
		 */
		any_expr = false;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);

			if (star_member_in(em, joinrel->relids) &&
				!bms_is_member(fact->relid, em->em_relids) && star_member_var(em) == NULL)
				any_expr = true;
		}
		if (fvar == NULL || fvar->varno != fact->relid || any_expr ||
			!star_key_type_ok(fvar->vartype, ec->ec_opfamilies))
		{
			if (!star->part || !star_class_filters(root, joinrel, fact->relid, ec, star))
				return false;
			continue;
		}
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Var		   *dvar;

			if (!star_member_in(em, joinrel->relids) ||
				bms_is_member(fact->relid, em->em_relids))
				continue;
			dvar = star_member_var(em);
			if (dvar == NULL || !star_add_key(root, star, groups, ec, fvar, dvar))
				return false;
		}
	}

	/* semi and anti joins whose clause is not in a class (anti joins' never are) */
	if (!star_special_dims(root, joinrel, fact, star))
		return false;

	/* every other relation is in a dimension, with a plan of its own */
	rti = -1;
	while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
	{
		bool		found = rti == (int) fact->relid || bms_is_member(rti, star->joins);

		foreach(lc, star->dims)
			found |= bms_is_member(rti, ((TesseraStarDimPlan *) lfirst(lc))->relids);
		if (!found)
			return false;
	}
	foreach(lc, star->dims)
	{
		TesseraStarDimPlan *dim = lfirst(lc);
		Path	   *path;
		ListCell   *fc;

		if (dim->kind == STAR_INNER &&
			!star_unique_key2(dim->key_rel, dim->dim_key, dim->ec->ec_opfamilies,
							  dim->dim_key2, dim->ec2 ? dim->ec2->ec_opfamilies : NIL))
		{
			/* not unique: a relation of its own, counted (TesseraAgg only) */
			if (!count_ok || bms_membership(dim->relids) != BMS_SINGLETON ||
				star_key_max_repeat(root, dim) > STAR_COUNT_MAX_REPEAT)
				return false;
			dim->kind = STAR_COUNT;
		}
		if (dim->kind == STAR_INNER && !star_group_many_to_one(root, dim))
			return false;
		if (dim->rel == NULL)
			dim->rel = bms_membership(dim->relids) == BMS_SINGLETON ? dim->key_rel :
				find_join_rel(root, dim->relids);
		path = dim->rel != NULL ? dim->rel->cheapest_total_path : NULL;
		if (path == NULL || path->param_info != NULL)
			return false;
		/* its join clauses to other relations: the filters alone */
		foreach(fc, dim->kind == STAR_INNER || dim->kind == STAR_COUNT ? dim->rel->joininfo : NIL)
		{
			RestrictInfo *rinfo = lfirst(fc);

			if (!list_member_ptr(star->filters, rinfo) &&
				!(star->part && !bms_is_subset(rinfo->required_relids, joinrel->relids)))
				return false;
		}
		dim->path = path;
	}
	/* probed in this order: the dimension whose quals keep the fewest of its rows first */
	list_sort(star->dims, star_dim_cmp);
	return star->dims != NIL;
}

/* Is the column declared NOT NULL? */
static bool
star_not_null(Oid relid, AttrNumber attno)
{
	Relation	relation = table_open(relid, NoLock);
	bool		notnull = TupleDescAttr(RelationGetDescr(relation), attno - 1)->attnotnull;

	table_close(relation, NoLock);
	return notnull;
}

/*
 * A left join of two relations, D LEFT JOIN F ON F.fk = D.key, F a tessera
 * table and D.key a unique, non-null key of D: F probes D as an inner
 * dimension would, and the rows of D no row of F matched are the
 * null-extended rows (executor/star.c).  Taken when the ON clause is that
 * equality alone (a condition of F alone is F's qual; any other makes it
 * not ours), and nothing else is joined.
 */
static bool
star_left_find(PlannerInfo *root, RelOptInfo *joinrel, SpecialJoinInfo *sjinfo,
			   TesseraStarPlan *star)
{
	Relids		rels = bms_del_member(bms_copy(joinrel->relids), TesseraSpecialJoinRelid(sjinfo));
	RelOptInfo *drel,
			   *frel;
	RangeTblEntry *drte,
			   *frte;
	RestrictInfo *rinfo;
	List	   *args;
	Var		   *fkey = NULL,
			   *dkey = NULL;
	Relation	relation;
	bool		tessera;
	TesseraStarDimPlan *dim;

	if (bms_membership(sjinfo->min_lefthand) != BMS_SINGLETON ||
		bms_membership(sjinfo->min_righthand) != BMS_SINGLETON ||
		!bms_equal(sjinfo->min_lefthand, sjinfo->syn_lefthand) ||
		!bms_equal(sjinfo->min_righthand, sjinfo->syn_righthand) ||
		!bms_equal(rels, bms_union(sjinfo->min_lefthand, sjinfo->min_righthand)))
		return false;
	drel = find_base_rel(root, bms_singleton_member(sjinfo->min_lefthand));
	frel = find_base_rel(root, bms_singleton_member(sjinfo->min_righthand));
	drte = planner_rt_fetch(drel->relid, root);
	frte = planner_rt_fetch(frel->relid, root);
	if (drel->reloptkind != RELOPT_BASEREL || frel->reloptkind != RELOPT_BASEREL ||
		drel->lateral_relids != NULL || frel->lateral_relids != NULL ||
		drte->rtekind != RTE_RELATION || frte->rtekind != RTE_RELATION ||
		frte->relkind != RELKIND_RELATION || frte->tablesample != NULL || frte->inh ||
		drte->inh)
		return false;
	relation = table_open(frte->relid, NoLock);
	tessera = IsTesseraRelation(relation);
	star->natts = RelationGetNumberOfAttributes(relation);
	table_close(relation, NoLock);
	if (!tessera)
		return false;

	/* the ON clause: F.fk = D.key, each relation's only join clause */
	if (list_length(frel->joininfo) != 1 || list_length(drel->joininfo) != 1 ||
		linitial(frel->joininfo) != linitial(drel->joininfo))
		return false;
	rinfo = linitial(frel->joininfo);
	if (rinfo->is_pushed_down || rinfo->pseudoconstant || rinfo->mergeopfamilies == NIL ||
		!is_opclause(rinfo->clause) || list_length(((OpExpr *) rinfo->clause)->args) != 2)
		return false;
	args = ((OpExpr *) rinfo->clause)->args;
	for (int i = 0; i < 2; i++)
	{
		Var		   *var = list_nth(args, i);

		if (!IsA(var, Var) || var->varlevelsup != 0 || var->varattno <= 0)
			return false;
		if (var->varno == frel->relid)
			fkey = var;
		else if (var->varno == drel->relid)
			dkey = var;
	}
	if (fkey == NULL || dkey == NULL ||
		!star_key_type_ok(fkey->vartype, rinfo->mergeopfamilies) ||
		!star_key_type_ok(dkey->vartype, rinfo->mergeopfamilies) ||
		!star_unique_key(drel, dkey, rinfo->mergeopfamilies) ||
		!star_not_null(drte->relid, dkey->varattno) ||
		drel->cheapest_total_path == NULL || drel->cheapest_total_path->param_info != NULL)
		return false;

	dim = palloc0(sizeof(TesseraStarDimPlan));
	dim->kind = STAR_LEFT;
	dim->relids = bms_make_singleton(drel->relid);
	dim->key_rel = drel;
	dim->rel = drel;
	dim->fact_key = fkey;
	dim->dim_key = dkey;
	dim->path = drel->cheapest_total_path;
	star->fact = frel->relid;
	star->dims = list_make1(dim);
	star->left = true;
	/* (each process would see only its own matches: serial) */
	star->filters_parallel_safe = false;
	return true;
}

/*
 * TesseraStarFind
 *		Is joinrel a star join around a tessera table TesseraAgg (or
 *		TesseraJoin) can probe itself?  Fills star (the fact table's relid
 *		and its dimensions).
 */
bool
TesseraStarFind(PlannerInfo *root, RelOptInfo *joinrel, TesseraStarPlan *star, bool inner_only)
{
	int			rti = -1;
	RelOptInfo *best = NULL;

	ListCell   *lc;

	memset(star, 0, sizeof(TesseraStarPlan));
	star->part = inner_only;
	if (joinrel->reloptkind != RELOPT_JOINREL ||
		root->placeholder_list != NIL || joinrel->lateral_relids != NULL ||
		root->hasLateralRTEs)
		return false;
	/*
	 * no outer joins but one left join of two; semi and anti joins (EXISTS)
	 * of one relation.  (inner_only: the caller made sure joinrel is an inner
	 * join of its relations, whatever joins come above it.)
	 */
	foreach(lc, inner_only ? NIL : root->join_info_list)
	{
		SpecialJoinInfo *sjinfo = lfirst(lc);

		if (sjinfo->jointype == JOIN_LEFT && list_length(root->join_info_list) == 1)
			return star_left_find(root, joinrel, sjinfo, star);

		if ((sjinfo->jointype != JOIN_SEMI && sjinfo->jointype != JOIN_ANTI) ||
			bms_membership(sjinfo->min_righthand) != BMS_SINGLETON ||
			!bms_equal(sjinfo->min_righthand, sjinfo->syn_righthand))
			return false;
		if (sjinfo->jointype == JOIN_SEMI)
			star->semi = bms_add_members(star->semi, sjinfo->min_righthand);
		else
			star->anti = bms_add_members(star->anti, sjinfo->min_righthand);
		/* (16 and later: the join's own index among the join's relids) */
		if (TesseraSpecialJoinRelid(sjinfo) != 0)
			star->joins = bms_add_member(star->joins, TesseraSpecialJoinRelid(sjinfo));
	}
	/*
	 * base relations of this query level only; the fact table: the largest
	 * tessera table (or file table)
	 */
	while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
	{
		RelOptInfo *rel = rti < root->simple_rel_array_size ? root->simple_rel_array[rti] : NULL;
		RangeTblEntry *rte;
		Relation	relation;

		if (bms_is_member(rti, star->joins))
			continue;
		if (rel == NULL || rel->reloptkind != RELOPT_BASEREL || rel->lateral_relids != NULL)
			return false;
		rte = planner_rt_fetch(rti, root);
		if (rte->rtekind != RTE_RELATION ||
			(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_FOREIGN_TABLE) ||
			rte->tablesample != NULL || rte->inh)
			continue;
		if (bms_is_member(rti, star->semi) || bms_is_member(rti, star->anti))
			continue;
		/* a tessera table, or a file table TesseraAgg reads through its batch source */
		relation = table_open(rte->relid, NoLock);
		/* (of two as large, the one whose quals keep more rows: a self-join's) */
		if ((rte->relkind == RELKIND_RELATION ? IsTesseraRelation(relation) :
			 tessera_batch_source != NULL && tessera_batch_source->accepts(relation)) &&
			(best == NULL || rel->tuples > best->tuples ||
			 (rel->tuples == best->tuples && rel->rows > best->rows)))
			best = rel;
		table_close(relation, NoLock);
	}
	if (best == NULL)
		return false;
	/*
	 * every semi or anti join's left-hand side is the table alone; or, a
	 * semi join whose clauses are all in classes (its relation has no other
	 * join clause), relations inner-joined to it (TPC-H q18's `o_orderkey
	 * IN (SELECT l_orderkey …)` beside `o_orderkey = l_orderkey`): the
	 * class holds a column of the table too, which is then the set's key
	 * (star_special_dims makes sure), and a row of the table joins a row
	 * of those relations only where their columns are equal
	 */
	foreach(lc, inner_only ? NIL : root->join_info_list)
	{
		SpecialJoinInfo *sjinfo = lfirst(lc);

		if (!bms_equal(sjinfo->min_lefthand, best->relids) &&
			(sjinfo->jointype != JOIN_SEMI ||
			 find_base_rel(root, bms_singleton_member(sjinfo->min_righthand))->joininfo != NIL ||
			 !bms_is_subset(sjinfo->min_lefthand, joinrel->relids) ||
			 bms_overlap(sjinfo->min_lefthand, bms_union(star->semi, star->anti))))
			return false;
	}
	star->fact = best->relid;
	star->filters = NIL;
	{
		RangeTblEntry *rte = planner_rt_fetch(best->relid, root);
		Relation	relation = table_open(rte->relid, NoLock);

		star->natts = RelationGetNumberOfAttributes(relation);
		table_close(relation, NoLock);
	}
	if (!star_dimensions(root, joinrel, best, star, false, !inner_only))
	{
		/* a second try, grouping from fact's keys */
		star->dims = NIL;
		star->filters = NIL;
		if (!star_dimensions(root, joinrel, best, star, true, !inner_only))
			return false;
	}
	if (!TesseraOrderQuals(root, &star->filters))
		return false;
	star->filters_parallel_safe =
		is_parallel_safe(root, (Node *) extract_actual_clauses(star->filters, false));
	TesseraStarFindComputed(root, star);
	return true;
}
