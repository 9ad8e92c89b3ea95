/*-------------------------------------------------------------------------
 *
 * distinct.c
 *	  SELECT DISTINCT over a tessera table, planned as the GROUP BY it is.
 *
 * NOTES
 *	  `SELECT DISTINCT a, b FROM t` with no aggregate, GROUP BY, HAVING,
 *	  window function, set-returning function or DISTINCT ON returns the
 *	  rows `SELECT a, b FROM t GROUP BY a, b` returns: one row per set of
 *	  values equal by the same equality operators (the clauses are the same
 *	  SortGroupClauses), in no defined order.  PostgreSQL plans the first as
 *	  a Unique or a HashAggregate over rows the scan forms, which TesseraAgg
 *	  never sees (it is offered at UPPERREL_GROUP_AGG); so the planner hook
 *	  gives such a query its DISTINCT as its GROUP BY before planning, and
 *	  PostgreSQL's grouping and TesseraAgg compete for it as for any GROUP
 *	  BY (`SELECT DISTINCT category` of the realistic 10M table: 389 ->
 *	  17 ms; `count(*)` of `SELECT DISTINCT user_id`: 3.5 -> 0.27 s).
 *
 *	  Only where the one relation of the query's FROM is a tessera table,
 *	  and no target is volatile: elsewhere PostgreSQL's plan is left as it
 *	  was.  And only where no qual of an enclosing query can be pushed into
 *	  the query: PostgreSQL pushes a qual whose equality differs from the
 *	  grouping's (another collation, a record's image equality `*=`) below
 *	  a GROUP BY, where it keeps one above a DISTINCT (PostgreSQL 18's
 *	  regress suite: `SELECT * FROM (SELECT DISTINCT x FROM t) s WHERE x =
 *	  'abc' COLLATE case_sensitive` over a case-insensitive x).  So the
 *	  top-level query, and subqueries in FROM (views included) whose every
 *	  enclosing query has no WHERE, join or HAVING qual; not CTEs (one
 *	  inlined into its reference takes the referencing query's quals), not
 *	  subqueries in expressions (EXISTS drops a DISTINCT it could not drop
 *	  from a GROUP BY).
 *
 * IDENTIFICATION
 *	  src/planner/distinct.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#include "tessera/catalog.h"
#include "tessera/plan.h"

static planner_hook_type prev_planner = NULL;

/* Is q's FROM one tessera table? */
static bool
from_one_tessera_table(Query *q)
{
	RangeTblRef *ref;
	RangeTblEntry *rte;
	Relation	rel;
	bool		ours;

	if (q->jointree == NULL || list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef))
		return false;
	ref = linitial(q->jointree->fromlist);
	rte = rt_fetch(ref->rtindex, q->rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION)
		return false;
	/* (parse analysis locked it) */
	rel = table_open(rte->relid, NoLock);
	ours = IsTesseraRelation(rel);
	table_close(rel, NoLock);
	return ours;
}

/* Does q have a qual that could be pushed into a subquery of its FROM? */
static bool
has_quals(Query *q)
{
	ListCell   *lc;

	if (q->jointree == NULL)
		return false;
	if (q->jointree->quals != NULL || q->havingQual != NULL)
		return true;
	foreach(lc, q->jointree->fromlist)
		if (!IsA(lfirst(lc), RangeTblRef))
			return true;		/* a JoinExpr: its ON, or an outer join's rules */
	return false;
}

/*
 * Give q its DISTINCT as GROUP BY where it is one, and the subqueries in
 * its FROM theirs; quals_above: an enclosing query has quals (which
 * PostgreSQL may push into q).
 */
static void
distinct_as_group_by(Query *q, bool quals_above)
{
	ListCell   *lc;

	check_stack_depth();
	if (!quals_above && q->commandType == CMD_SELECT && q->distinctClause != NIL &&
		!q->hasDistinctOn && q->groupClause == NIL && q->groupingSets == NIL &&
		q->havingQual == NULL && !q->hasAggs && !q->hasWindowFuncs && !q->hasTargetSRFs &&
		q->rowMarks == NIL && q->setOperations == NULL &&
		!contain_volatile_functions((Node *) q->targetList) && from_one_tessera_table(q))
	{
		q->groupClause = q->distinctClause;
		q->distinctClause = NIL;
	}
	quals_above |= has_quals(q);
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY && rte->subquery != NULL)
			distinct_as_group_by(rte->subquery, quals_above);
	}
}

static PlannedStmt *
tessera_planner(Query *parse, const char *query_string, int cursorOptions,
				ParamListInfo boundParams)
{
	/* (the planner scribbles on the query anyway: its caller passes a copy) */
	if (tessera_enable_custom_agg && tessera_enable_custom_scan)
		distinct_as_group_by(parse, false);
	if (prev_planner)
		return prev_planner(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

/* _PG_init: plan SELECT DISTINCT over tessera tables as GROUP BY. */
void
TesseraInstallDistinctPlanning(void)
{
	prev_planner = planner_hook;
	planner_hook = tessera_planner;
}
