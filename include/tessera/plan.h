/*-------------------------------------------------------------------------
 *
 * plan.h
 *	  What tessera's planner hands its executor: the layout of the custom
 *	  nodes' custom_private lists, and of the descriptions of the quals,
 *	  aggregates and group keys it classified.
 *
 * NOTES
 *	  The planner decides once what each qual and aggregate is (planner/
 *	  classify.c); the executor builds its run-time structures from these
 *	  descriptions and never classifies again.  Everything here is made of
 *	  plain nodes (Lists, Integers, Consts), which copyObject and the
 *	  serialization of plans to parallel workers handle.  A description
 *	  names expressions by their position in the qual it describes (the
 *	  argument holding the value), so the expressions themselves stay where
 *	  setrefs and the nested-loop parameter substitution fix them up.
 *
 * IDENTIFICATION
 *	  include/tessera/plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_PLAN_H
#define TESSERA_PLAN_H

#include "nodes/extensible.h"
#include "nodes/pg_list.h"
#include "nodes/value.h"

/* GUCs (planner/scan_path.c, planner/agg_path.c, planner/topn_path.c) */
extern bool tessera_enable_custom_scan;
extern bool tessera_enable_custom_agg;
extern bool tessera_enable_sliced_agg;
extern int	tessera_topn_sketch_rows;
extern bool tessera_enable_topn;
extern bool tessera_limit_workers_to_cores;
extern bool tessera_enable_star_join;
extern bool tessera_enable_join;
extern bool tessera_enable_simd;

/* _PG_init: the planner's paths (planner/scan_path.c, planner/agg_path.c) */
extern void TesseraInstallScanPaths(void);
extern void TesseraInstallAggPaths(void);
extern void TesseraInstallDistinctPlanning(void);
extern void TesseraInstallTopNPaths(void);
extern void TesseraInstallJoinPaths(void);

/* the nodes' methods (executor/scan_node.c, executor/agg_node.c) */
extern const CustomScanMethods TesseraScanPlanMethods;
extern const CustomScanMethods TesseraAggPlanMethods;
extern const CustomScanMethods TesseraTopNPlanMethods;
extern const CustomScanMethods TesseraJoinPlanMethods;
extern void TesseraRegisterScanNode(void);
extern void TesseraRegisterAggNode(void);
extern void TesseraRegisterTopNNode(void);
extern void TesseraRegisterJoinNode(void);

/*
 * Batches from outside tessera's stripes: a foreign table whose rows a
 * source reads as column vectors into an external reader
 * (TesseraReaderExternal).  TesseraAgg aggregates over it as over a tessera
 * table, serially or sharing the source's work among parallel processes.
 * files/parquet_fdw.c registers the one for Parquet and Arrow files at
 * _PG_init; planner and executor only see this interface.
 */
struct PlannerInfo;
struct RelOptInfo;
struct TesseraReader;
struct ExplainState;
typedef struct RelationData *TesseraSourceRel;

typedef struct TesseraBatchSource
{
	/* planner: are rel's rows (a foreign table) this source's? */
	bool		(*accepts) (TesseraSourceRel rel);
	/* planner: what begin needs to read columns attnums (List of int) */
	List	   *(*plan) (struct PlannerInfo *root, struct RelOptInfo *rel, List *attnums);
	/* executor: a scan state whose batches load into *reader */
	void	   *(*begin) (TesseraSourceRel rel, List *plan, struct TesseraReader **reader);
	/* load the next batch into the reader; false at the end */
	bool		(*next) (void *state);
	void		(*rescan) (void *state);
	void		(*end) (void *state);
	/* parallel: the shared state, set up by the leader, joined by all */
	Size		shared_size;
	void		(*init_shared) (void *shared);
	void		(*attach) (void *state, void *shared);
	void		(*explain) (void *state, List *plan, struct ExplainState *es);
} TesseraBatchSource;

extern PGDLLIMPORT const TesseraBatchSource *tessera_batch_source;

/*
 * A row-group filter: a tree of comparisons that chunk min/max and null
 * counts decide.  Described by a List: the SKIP_DESC_* fields as Integers,
 * then one description per child (AND/OR).
 */
typedef enum SkipKind
{
	SKIP_CMP,					/* col op value */
	SKIP_ARRAY,					/* col op ANY/ALL (array) */
	SKIP_ISNULL,
	SKIP_NOTNULL,
	SKIP_AND,
	SKIP_OR
} SkipKind;

typedef enum SkipDescField
{
	SKIP_DESC_KIND,
	SKIP_DESC_ATTIDX,
	SKIP_DESC_STRATEGY,			/* btree strategy, column on the left */
	SKIP_DESC_ORDERPROC,		/* compare(column value, value) */
	SKIP_DESC_COLLATION,
	SKIP_DESC_USE_OR,			/* SKIP_ARRAY: ANY rather than ALL */
	SKIP_DESC_ELEMTYPE,			/* SKIP_ARRAY */
	SKIP_DESC_VALUE_ARG,		/* argument of the qual holding the value */
	SKIP_DESC_NFIELDS			/* children follow */
} SkipDescField;

/*
 * A vector qual: `col op value` (or `col op col`) evaluated over decoded
 * column vectors.  Described by a List of Integers.
 */
typedef enum VecKind
{
	VEC_INT,					/* integers, date, timestamps: compared as int64 */
	VEC_FLOAT4,
	VEC_FLOAT8,
	VEC_DATE_TS,				/* date column, timestamp value */
	VEC_COLCOL,					/* two integer-like columns of one type */
	VEC_NUMERIC,				/* compared as scaled integers */
	VEC_STRING,					/* text, varchar, char(n) against a value:
								 * strategy is a VecStringOp */
	VEC_IN,						/* col IN (array) (strategy 1) or NOT IN
								 * (strategy 0) of integer-like or string
								 * columns */
	VEC_BOOL					/* AND (strategy 1) or OR (0) of vector quals,
								 * whose descriptions follow the fields */
} VecKind;

/* `<>`: the negation of the btree family's equality, in VEC_DESC_STRATEGY */
#define TESSERA_NE_STRATEGY		6

/* What a VEC_STRING qual does; all but VSTR_CALL have a byte-wise fast path */
typedef enum VecStringOp
{
	VSTR_EQ,					/* = in a deterministic collation */
	VSTR_NE,					/* <> in a deterministic collation */
	VSTR_LIKE,					/* LIKE: with a constant pattern, maybe matched bytewise */
	VSTR_NOT_LIKE,
	VSTR_ILIKE,					/* ILIKE: ASCII values matched bytewise, lowered */
	VSTR_NOT_ILIKE,
	VSTR_CALL					/* anything else allowed: the operator's function */
} VecStringOp;

typedef enum VecDescField
{
	VEC_DESC_KIND,
	VEC_DESC_STRATEGY,
	VEC_DESC_ATTIDX,
	VEC_DESC_ATTIDX2,			/* VEC_COLCOL: the right-hand column */
	VEC_DESC_VALTYPE,
	VEC_DESC_VALUE_ARG,			/* argument of the OpExpr holding the value */
	VEC_DESC_FUNCID,			/* VEC_STRING: the operator's function */
	VEC_DESC_COLLATION,			/* VEC_STRING: its input collation */
	VEC_DESC_NFIELDS,
	/* VEC_IN of strings, optional: the list is matched by the value's first
	 * this many characters (`substring(col FROM 1 FOR n) IN (...)`), of the
	 * value without its trailing blanks if VEC_DESC_TRIM (char(n)) */
	VEC_DESC_PREFIX = VEC_DESC_NFIELDS,
	VEC_DESC_TRIM
} VecDescField;

/* TesseraScan's custom_private; custom_exprs holds the skip quals, then the vector quals. */
typedef enum TscanPrivate
{
	TSCAN_PRIVATE_NEEDED,		/* attnums the slot decodes */
	TSCAN_PRIVATE_SKIP,			/* a skip description per skip qual */
	TSCAN_PRIVATE_VECTOR,		/* a vector description per vector qual */
	TSCAN_PRIVATE_NFIELDS
} TscanPrivate;

/* An aggregate TesseraAgg computes */
typedef enum TAggKind
{
	TAGG_COUNT_STAR,
	TAGG_COUNT,
	TAGG_SUM,
	TAGG_AVG,
	TAGG_MIN,
	TAGG_MAX,
	TAGG_COUNT_DISTINCT			/* count(DISTINCT col): the groups are keyed on
								 * col too, and rolled up (agg_node.c) */
} TAggKind;

/*
 * variance, var_pop, var_samp, stddev, stddev_pop, stddev_samp of floats:
 * float8_accum's N, Sx and Sxx, the state avg of floats keeps, finished as
 * float8_var_pop and its siblings finish it
 */
typedef enum TAggVarForm
{
	TAGG_VAR_NONE,
	TAGG_VAR_POP,
	TAGG_VAR_SAMP,
	TAGG_STDDEV_POP,
	TAGG_STDDEV_SAMP
} TAggVarForm;

/*
 * An aggregate's argument that is numeric arithmetic (+, -, *) over numeric
 * columns and constants: a tree of Lists [kind, attidx, Const, l, r].
 */
typedef enum VxKind
{
	VX_VAR,
	VX_CONST,
	VX_ADD,
	VX_SUB,
	VX_MUL,
	VX_INTVAR					/* an integer column cast to numeric */
} VxKind;

typedef enum VxDescField
{
	VX_DESC_KIND,
	VX_DESC_ATTIDX,				/* VX_VAR */
	VX_DESC_CONST,				/* VX_CONST: the Const; VX_INTVAR: the type's length */
	VX_DESC_LEFT,				/* operators: the operands' descriptions */
	VX_DESC_RIGHT,
	VX_DESC_NFIELDS
} VxDescField;

/* An aggregate, described by a List */
typedef enum AggDescField
{
	AGG_DESC_KIND,
	AGG_DESC_ATTIDX,			/* -1: count(*) or an expression */
	AGG_DESC_ARGTYPE,			/* base type of the argument */
	AGG_DESC_RESTYPE,
	AGG_DESC_GENERIC,			/* min/max through the type's btree comparison */
	AGG_DESC_SAME_AS,			/* an earlier sum/avg whose state this one shares, or -1 */
	AGG_DESC_VX,				/* argument arithmetic's description, or NIL */
	AGG_DESC_FILTER,			/* FILTER: a vector description per conjunct */
	AGG_DESC_OFFSET,			/* sum/avg(x + c): c as an int8 Const (the state is
								 * x's, the result adds c * count), or NULL */
	AGG_DESC_OFFSET_TYPE,		/* and the type of x + c (its overflow bounds) */
	AGG_DESC_VAR_FORM,			/* avg of floats finished as a variance or
								 * standard deviation (TAggVarForm) */
	AGG_DESC_NFIELDS
} AggDescField;

/*
 * A group key or aggregate argument TesseraAgg computes per row from the
 * relation's columns (an expression): its "column" number in key and
 * aggregate descriptions is TAGG_COMPUTED_ATTIDX + its position in
 * TAGG_PRIVATE_COMPUTED.
 */
#define TAGG_COMPUTED_ATTIDX	10000
#define TAGG_COMPUTED_MAX_COLUMNS	32	/* columns one such expression may read */

/* How TesseraAgg keys groups on a column */
typedef enum TAggKeyKind
{
	TAGG_KEY_INT,				/* integers, dates, timestamps: as int64 */
	TAGG_KEY_NUMINT,			/* numerics that are always integers (extract's
								 * integer fields): as int64, infinities at its
								 * ends */
	TAGG_KEY_TEXT,				/* text, varchar, numeric(p, s): interned bytes */
	TAGG_KEY_BPCHAR				/* char(n): interned without trailing blanks */
} TAggKeyKind;

typedef enum KeyDescField
{
	KEY_DESC_ATTIDX,
	KEY_DESC_TYPID,				/* base type */
	KEY_DESC_COLLATION,
	KEY_DESC_TYPLEN,
	KEY_DESC_KIND,
	KEY_DESC_NFIELDS
} KeyDescField;

/*
 * TesseraAgg runs alone (serial), or as a partial aggregate in each process
 * of a parallel scan under Gather -- one row per group: the keys and a
 * bytea of the aggregates' states -- below a finalizing TesseraAgg that
 * merges them.  A serial node may also run sliced under Gather
 * (TAGG_PRIVATE_SLICES): every process reads the whole table and finishes
 * the groups whose keys hash into its slice, which no other process has.
 */
typedef enum TAggMode
{
	TAGG_SERIAL,
	TAGG_PARTIAL,
	TAGG_FINAL
} TAggMode;

/* count(DISTINCT)s a sliced TesseraAgg with no GROUP BY adds up across slices, at most */
#define TAGG_SLICE_COUNTS	8

/*
 * TesseraAgg's custom_private.  Its quals and aggregates travel here, not
 * in custom_exprs: setrefs would rewrite custom_exprs against the node's
 * custom_scan_tlist.  custom_exprs holds only the executor parameters they
 * use, so that the planner knows when to rescan the node.
 */
/*
 * A top-N of counts sketches them first (executor/agg_heavy.c) only where
 * the statistics let a group hold this many rows (agg_plan.c)
 */
#define TAGG_HEAVY_ROWS 64

typedef enum TaggPrivate
{
	TAGG_PRIVATE_RELID,			/* range table index the quals were planned with */
	TAGG_PRIVATE_MODE,			/* TAggMode */
	TAGG_PRIVATE_SKIP_QUALS,	/* row-group filters (quals) */
	TAGG_PRIVATE_SKIP,			/* and their descriptions */
	TAGG_PRIVATE_VECTOR_QUALS,	/* vector quals */
	TAGG_PRIVATE_VECTOR,		/* and their descriptions */
	TAGG_PRIVATE_AGGS,			/* the Aggrefs (for EXPLAIN and FILTER values) */
	TAGG_PRIVATE_SPECS,			/* an aggregate description per Aggref */
	TAGG_PRIVATE_KEYS,			/* a key description per GROUP BY column, then
								 * the DISTINCT column's if any */
	TAGG_PRIVATE_NDISTINCT,		/* 1: the last key is count(DISTINCT)'s column */
	TAGG_PRIVATE_GROUPS,		/* the groups the planner expects (hash table size) */
	TAGG_PRIVATE_COMPUTED,		/* expressions computed per row (group keys, arguments) */
	TAGG_PRIVATE_STAR,			/* a star join: [dimensions, extra columns], or NIL */
	TAGG_PRIVATE_STAR_CLAUSES,	/* its join clauses (for EXPLAIN) */
	TAGG_PRIVATE_SOURCE,		/* a batch source's plan (TesseraBatchSource), or NIL */
	TAGG_PRIVATE_ROW_QUALS,		/* quals evaluated row by row: [one AND], or NIL */
	TAGG_PRIVATE_MEMO,			/* a correlated subquery's memo (TAggMemoField), or NIL */
	TAGG_PRIVATE_TOPN,			/* ORDER BY a count LIMIT: [rows kept, spec,
								 * descending, heavy groups possible], or NIL */
	TAGG_PRIVATE_CARRIED,		/* the last this many keys are carried: functions
								 * of the others, not grouped on (TesseraGroupsCarry) */
	TAGG_PRIVATE_SLICES,		/* > 1: sliced, each process grouping the rows
								 * whose keys hash into the slices it takes */
	TAGG_PRIVATE_GROUP_LIMIT,	/* > 0: a LIMIT with no ORDER BY needs no more
								 * groups than this (TesseraGroups.limit) */
	TAGG_PRIVATE_NFIELDS
} TaggPrivate;

/*
 * A plain aggregate run once per outer row of a correlated subquery,
 * `SELECT agg(…) FROM t WHERE t.k = outer.k AND …`: after its runs have
 * read the table once over, it computes the aggregates grouped by those
 * columns in one pass and answers the later runs from the groups.
 */
typedef enum TAggMemoField
{
	TAGG_MEMO_VECTOR,			/* positions of the `column = parameter` quals
								 * among the vector quals */
	TAGG_MEMO_SKIP,				/* ... among the row-group filters */
	TAGG_MEMO_PARAMS,			/* the parameters, one per key */
	TAGG_MEMO_KEYS,				/* a key description per column */
	TAGG_MEMO_GROUPS,			/* the groups expected (Integer) */
	TAGG_MEMO_NFIELDS
} TAggMemoField;

/*
 * A star join of TesseraAgg: dimension relations joined to the table by
 * `table.fk = dim.key`, dim.key unique, each read by a plan of its own
 * (custom_plans, in this order).  The dimension columns the aggregation
 * reads are "extra columns" of the table's row, numbered after its own
 * attributes in the computed expressions (executor/star.c).
 */
typedef enum StarDimField
{
	STAR_DIM_FACT_ATTIDX,		/* the table's key column */
	STAR_DIM_FACT_TYPE,
	STAR_DIM_KEY_POS,			/* the key's position in the dimension plan's rows */
	STAR_DIM_KEY_TYPE,
	STAR_DIM_KIND,				/* StarDimKind */
	STAR_DIM_FACT_ATTIDX2,		/* a composite key's second column, or -1 */
	STAR_DIM_FACT_TYPE2,
	STAR_DIM_KEY_POS2,
	STAR_DIM_KEY_TYPE2,
	STAR_DIM_NE_FACT_ATTIDX,	/* a semi or anti join's `<>` column of the table, or -1 */
	STAR_DIM_NE_FACT_TYPE,
	STAR_DIM_NE_POS,			/* ... and of the dimension plan's rows */
	STAR_DIM_NE_TYPE,
	STAR_DIM_NFIELDS
} StarDimField;

/*
 * How a dimension joins: an inner join on its unique key, or a semi or
 * anti join (EXISTS, NOT EXISTS) on any key, whose rows are only a set of
 * keys; or a left join from the dimension (the table is the nullable
 * side) on the dimension's unique key, its rows without a match emitted
 * as groups of their own (star.c); or an inner join on a key that is not
 * unique, none of whose columns the aggregation reads: a count of rows per
 * key, each row of the table counted that many times (STAR_COUNT).
 */
typedef enum StarDimKind
{
	STAR_INNER,
	STAR_SEMI,
	STAR_ANTI,
	STAR_LEFT,
	STAR_COUNT
} StarDimKind;

/*
 * A left join's groups of dimension rows without a match: per GROUP BY
 * column, its extra column; per aggregate, what it is over the one
 * null-extended row (StarLeftAgg).  The fourth element of the star join's
 * description.
 */
typedef enum StarLeftAgg
{
	STAR_LEFT_NULL,				/* sum, avg, min, max of the table's columns */
	STAR_LEFT_ZERO,				/* count(x), count(DISTINCT x) */
	STAR_LEFT_ONE				/* count(*) */
} StarLeftAgg;

typedef enum StarExtField
{
	STAR_EXT_DIM,				/* the dimension it comes from */
	STAR_EXT_POS,				/* its position in that dimension plan's rows */
	STAR_EXT_TYPE,
	STAR_EXT_TYPMOD,
	STAR_EXT_COLLATION,
	STAR_EXT_NFIELDS
} StarExtField;

/*
 * TesseraJoin: a star join of a tessera table (scanrelid) handing up the
 * joined rows.  The scan tuple (custom_scan_tlist) holds columns of the
 * table and of the dimensions; custom_plans are the dimensions' plans.
 */
typedef enum TjoinPrivate
{
	TJOIN_PRIVATE_RELID,		/* the table's index as planned */
	TJOIN_PRIVATE_SKIP_QUALS,	/* the table's quals that skip row groups */
	TJOIN_PRIVATE_SKIP,			/* ... their descriptions */
	TJOIN_PRIVATE_VECTOR_QUALS, /* its vector quals */
	TJOIN_PRIVATE_VECTOR,		/* ... their descriptions */
	TJOIN_PRIVATE_STAR,			/* the star join (StarDimField, StarExtField) */
	TJOIN_PRIVATE_STAR_CLAUSES, /* its key clauses, for EXPLAIN */
	TJOIN_PRIVATE_SOURCES,		/* per scan tuple column: the table's attribute
								 * index, or its number + an extra column */
	TJOIN_PRIVATE_NEEDED,		/* attnums of the table decoded */
	TJOIN_PRIVATE_NFIELDS
} TjoinPrivate;

/*
 * TesseraTopN: the top rows of one table by columns, read whole only for
 * the winners.  custom_exprs holds the skip quals, then the vector quals.
 */
#define TOPN_MAX_ROWS	10000	/* LIMIT + OFFSET it takes */

typedef enum TopNPrivate
{
	TOPN_PRIVATE_SKIP,			/* a skip description per skip qual */
	TOPN_PRIVATE_VECTOR,		/* a vector description per vector qual */
	TOPN_PRIVATE_KEYS,			/* per sort key [attidx, sortop, collation, nulls_first,
								 * descending] */
	TOPN_PRIVATE_BOUND,			/* rows to find */
	TOPN_PRIVATE_NFIELDS
} TopNPrivate;

/* field f of a description */
static inline int
desc_int(List *desc, int f)
{
	return intVal(list_nth(desc, f));
}

#endif							/* TESSERA_PLAN_H */
