/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  What the planner's files share: the classifier (classify.c) and the
 *	  cost estimate of a scan (cost.c).  Private to src/planner.
 *
 * IDENTIFICATION
 *	  src/planner/planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_PLANNER_PRIVATE_H
#define TESSERA_PLANNER_PRIVATE_H

#include "access/sysattr.h"
#include "nodes/pathnodes.h"
#include "nodes/primnodes.h"
#include "utils/relcache.h"

/* classify.c */
extern Var *TesseraScanVar(Node *node, Index relid);
extern bool TesseraIntLikeType(Oid t);
extern List *TesseraSkipDescribe(Node *qual, Index relid, Relation rel);
extern List *TesseraVecDescribe(Node *qual, Index relid, Relation rel);
extern void TesseraDescribeVectorQuals(List *quals, Index relid, Relation rel, List **skip,
									   List **skip_descs, List **vector, List **vector_descs,
									   List **rest);
extern List *TesseraAggDescribe(Aggref *agg, Index relid, Relation rel, List **computed);
extern List *TesseraKeyDescribe(Node *expr, int attidx);
extern bool TesseraComputable(Node *expr, Index relid);
extern bool TesseraHasExecParam(Node *node, void *context);
extern bool TesseraRowQual(RestrictInfo *rinfo, Index relid);
extern bool TesseraOrderQuals(PlannerInfo *root, List **quals);
extern int	TesseraComputedColumn(List **computed, Node *expr);

/* agg_path.c */
extern bool TesseraCollectParams(Node *node, List **params);

/* agg_plan.c */
extern List *TesseraAggMemoPlan(PlannerInfo *root, Index relid, List *skip, List *vector,
								List *row_quals, List *row_aggs, List *computed);
extern void TesseraAggMemoCost(PlannerInfo *root, Index relid, List *vector, int nspecs,
							   CustomPath *path);
extern List *TesseraAggTopNPlan(PlannerInfo *root, List *aggs, List *group_vars);
extern int	TesseraAggGroupLimit(PlannerInfo *root, List *group_vars, Var *distinct_var);
extern void TesseraAggGroupLimitCost(PlannerInfo *root, List *group_vars, Var *distinct_var,
									 double groups, Cost spill_cost, Path *path);

/* scan_path.c */
extern Cost TesseraScanPathVectors(PlannerInfo *root, Path *path);

/* star_path.c: a star join TesseraAgg probes itself */
typedef struct TesseraStarDimPlan
{
	int			kind;			/* StarDimKind */
	Relids		relids;			/* its relations: one, or a join of several */
	RelOptInfo *key_rel;		/* the one of them holding the key */
	RelOptInfo *rel;			/* key_rel, or the join of relids */
	EquivalenceClass *ec;		/* the class joining it to the fact table */
	Var		   *fact_key;
	Var		   *dim_key;		/* unique in rel */
	EquivalenceClass *ec2;		/* a composite key's second class, or NULL */
	Var		   *fact_key2;
	Var		   *dim_key2;		/* (fact_key, fact_key2) = (dim_key, dim_key2) */
	Path	   *path;			/* how it is read */
	Var		   *ne_fact;		/* a semi or anti join's `fact.col <> rel.col`, */
	Var		   *ne_dim;			/* or NULLs */
	Expr	   *ne_clause;
	List	   *computed;		/* expressions of its columns the filters read,
								 * computed for each of its rows after rel's
								 * target (star_find_computed) */
} TesseraStarDimPlan;

typedef struct TesseraStarPlan
{
	Index		fact;			/* the tessera table */
	int			natts;			/* its attributes; extra columns follow */
	List	   *dims;			/* TesseraStarDimPlan */
	List	   *ext;			/* the dimension Vars read, in extra column order */
	Relids		semi;			/* right-hand relations of semi joins */
	Relids		anti;			/* ... and of anti joins */
	Relids		joins;			/* those joins' own indexes in relids (16+) */
	List	   *filters;		/* RestrictInfos across dimensions (or with the
								 * table), checked on the joined rows */
	bool		filters_parallel_safe;
	bool		left;			/* one dimension, joined LEFT to the table */
	bool		part;			/* the join is a part of the query's, an inner
								 * join of its relations; clauses to other
								 * relations are applied above it */
} TesseraStarPlan;

extern Oid	TesseraStarKeyFamily(Oid type);
extern double TesseraStarDimKept(const TesseraStarDimPlan *dim);
extern void TesseraStarFindComputed(PlannerInfo *root, TesseraStarPlan *star);
extern Node *TesseraStarStripComputed(Node *node, List *computed);
extern bool TesseraStarFind(PlannerInfo *root, RelOptInfo *joinrel, TesseraStarPlan *star,
							bool inner_only);
extern Cost TesseraStarDimBuildCost(PlannerInfo *root, Path *path, int kind);
extern Cost TesseraStarParallelBuildCost(PlannerInfo *root, TesseraStarPlan *star, List *paths,
										 Cost build_cost, double divisor);
extern bool TesseraStarCost(PlannerInfo *root, TesseraStarPlan *star, double probe_rows,
							double join_rows, Cost *cost, Cost *build_cost);
extern bool TesseraStarParallelSafe(PlannerInfo *root, TesseraStarPlan *star, List **paths);
extern double TesseraStarRows(TesseraStarPlan *star, double probe_rows);
extern Node *TesseraStarRewrite(TesseraStarPlan *star, Node *expr);
extern bool TesseraStarExtra(TesseraStarPlan *star, AttrNumber attno);
extern bool TesseraStarDescribe(TesseraStarPlan *star, List **desc, List **clauses);

/* cost.c: what a scan of the relation costs, apart from parallelism */
typedef struct TscanEstimate
{
	double		read_frac;		/* share of row groups expected to be read */
	int			ncols;			/* columns decoded */
	double		decode_ops;		/* operators to decode one row's columns */
	BlockNumber phys_pages;		/* the relation's real size */
	double		vec_sel;		/* selectivity of the vector quals */
	int			nvec;
	List	   *other_quals;	/* RestrictInfos left to the plan qual */
} TscanEstimate;

extern void TesseraScanEstimate(PlannerInfo *root, RelOptInfo *rel, Relation relation,
								Bitmapset *attrs, TscanEstimate *est);
extern double TesseraReadFraction(PlannerInfo *root, RelOptInfo *rel, Relation relation,
								  List *rinfos, int varRelid);
extern double TesseraParallelDivisor(int workers);
extern int	TesseraCoreWorkers(RelOptInfo *rel);
extern double TesseraEstimateGroups(PlannerInfo *root, List *keys, double rows);
extern double TesseraColumnCorrelation(Oid relid, AttrNumber attnum);
extern AttrNumber TesseraSingleColumn(Node *clause, Index relid);

/* Does a set of pull_varattnos attributes hold the whole-row reference? */
static inline bool
TesseraWholeRow(Bitmapset *attrs)
{
	return bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
}

#endif							/* TESSERA_PLANNER_PRIVATE_H */
