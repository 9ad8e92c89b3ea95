/*-------------------------------------------------------------------------
 *
 * nodes.h
 *	  The run-time states of tessera's custom scan nodes and what their
 *	  files share: the row-group and vector filters (filters.c), which both
 *	  nodes run, and TesseraScan's parallel and EXPLAIN parts, which
 *	  TesseraAgg's partial node reuses.  Private to src/executor.
 *
 * IDENTIFICATION
 *	  src/executor/nodes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_EXECUTOR_NODES_H
#define TESSERA_EXECUTOR_NODES_H

#include "access/relscan.h"
#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "port/atomics.h"
#include "utils/dsa.h"

#include "tessera/plan.h"
#include "tessera/reader.h"
#include "tessera/vector.h"

/* A row-group filter at run time: the description's fields and the value in this scan. */
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

/* Parallel TesseraScan/TesseraAgg: the workers' byte counters, then the scan. */
typedef struct TscanShared
{
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 bytes_decompressed;
	pg_atomic_uint64 delta_rows;
	pg_atomic_uint64 frames_cached;
	dsa_pointer star;			/* a star join's TesseraStarShared, or invalid */
	/* a sliced TesseraAgg: the next slice to take */
	pg_atomic_uint32 next_slice;
	/* ... of count(DISTINCT)s alone, sliced by their values: the counts so far */
	pg_atomic_uint32 slices_finished;
	pg_atomic_uint64 slice_counts[TAGG_SLICE_COUNTS];
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
	/* and a star join's keys, checked against the fact key's chunk summary */
	TesseraRowGroupFilter rg_prune;
	void	   *rg_prune_arg;
	/* bytes read and decompressed: this process's, and the workers' */
	TscanShared *shared;
	bool		is_worker;
	bool		bytes_final;
	TesseraScanCounts counts;
	/* fast path: no plan qual, output columns are plain columns */
	bool		fast;
	int			nproj;
	int		   *proj_att;		/* [nproj] attribute index of each output */
} TesseraScanState;

/* Expressions TesseraAgg computes per row (computed.c) */
typedef struct TesseraComputed
{
	int			n;
	ExprState **states;
	int		  **atts;			/* [j]: the columns expression j reads, -1 ended */
	int16	   *typlen;
	bool	   *typbyval;
	int		   *mode;			/* how each is computed (computed.c) */
	int		   *proj_col;		/* its column in the projection, or -1 */
	Datum	  **values;			/* [j][row] for the current batch */
	bool	  **nulls;
	int			cap;
	void	  **memos;			/* [j]: results of the values seen, or NULL */
	uint32	   *memo_tries;		/* [j]: lookups and hits of the memo's first */
	uint32	   *memo_hits;		/* COMP_MEMO_PROBE values (few hits: no memo) */
	struct IntArith **int_arith;	/* [j]: integer arithmetic computed as vectors */
	int64	  **ivalues;		/* [j][row]: extract()'s results as integers, or NULL */
	int		   *ts_field;		/* [j]: extract()'s field (computed.c) */
	bool	   *ts_is_date;
	int64	   *ts_unit;		/* [j]: date_trunc()'s unit in microseconds */
	Datum	   *small;			/* numerics 0..366, made once */
	Datum		pinf;			/* numeric infinities */
	Datum		ninf;
	bool		any_int_arith;
	bool	   *deferred;		/* [j]: left out of TesseraComputedBatch, computed
								 * by TesseraComputedDeferred (a carried key's) */
	bool		any_deferred;
	int		   *rows;			/* [cap]: the counted rows of the batch */
	TupleTableSlot *slot;		/* a row of the relation, as the expressions read it */
	int			natts_rel;		/* the relation's columns; those after them are
								 * extra columns (a star join's dimensions) */
	Datum	  **ext_values;		/* [k][row]: extra column k for the current batch */
	bool	  **ext_nulls;
	int		   *proj_atts;		/* the columns the projection reads, -1 ended */
	ProjectionInfo *proj;		/* the row-by-row ones at once, or NULL */
	ExprContext *econtext;		/* where they run; its per-tuple memory holds
								 * their results until the next batch */
	MemoryContext memo_cxt;
} TesseraComputed;

extern void TesseraComputedInit(TesseraComputed *c, List *exprs, Index relid, PlanState *ps,
								TupleDesc rowdesc, int natts_rel, EState *estate);
extern bool TesseraComputedDefer(TesseraComputed *c, int j);
extern void TesseraComputedDeferred(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n,
									MemoryContext bufcxt);

/* A star join's dimension at run time (star.c) */
typedef struct TesseraStarDim
{
	PlanState  *child;			/* the dimension's plan */
	int			kind;			/* StarDimKind */
	int			fact_att;		/* the fact table's key column */
	Oid			fact_type;
	int			key_pos;		/* the key's column in the child's rows */
	Oid			key_type;
	int			fact_att2;		/* a composite key's second column, or -1 */
	Oid			fact_type2;
	int			key_pos2;
	Oid			key_type2;
	/* a semi or anti join's `fact.col <> dim.col`, or ne_pos -1 */
	int			ne_fact_att;
	Oid			ne_fact_type;
	int			ne_pos;
	Oid			ne_type;
	int64	   *ne_first;		/* [row: a distinct key] one of its values */
	bool	   *ne_multi;		/* ... and whether it has others */
	int			ncols;			/* child columns gathered: */
	int		   *cols;			/* their positions in the child's rows */
	int		   *ext;			/* the extra columns they become */
	int16	   *collen;			/* their types' lengths */
	bool	   *colbyval;
	/* the rows read, and the table of their keys */
	int			nrows;
	Datum	  **values;			/* [col][row] */
	bool	  **nulls;
	char	  **vbase;			/* [col]: attached from shared memory, a
								 * by-reference column's values are offsets
								 * from this; or NULL (all NULL: built here) */
	int64		min;
	int64		max;
	int32	   *direct;			/* [key - min] -> row or -1; or NULL */
	uint64	   *present;		/* with direct: a bit per key that has a row */
	struct starhash_hash *hash; /* else key -> row */
	uint64	   *bits;			/* with hash: a bit per key of a small range, or NULL */
	bool	   *matched;		/* a left join's: [row] some row of the table joined it */
} TesseraStarDim;

typedef struct TesseraStar
{
	int			ndims;			/* 0: no star join */
	TesseraStarDim *dims;
	int			next;			/* extra columns */
	int			natts;			/* the fact table's columns */
	bool		built;
	MemoryContext cxt;			/* the dimensions' rows and tables */
	int32	   *match;			/* [dim * cap + row] matched dimension row */
	int		   *rows;			/* the rows still counted, once few are */
	int			cap;
	const int  *listed;			/* after a probe: rows, if it listed them; else NULL */
	int			nlisted;		/* ... how many */
	Datum	   *gkeys;			/* [cap] listed rows' keys, read together */
	bool	   *gnulls;
	Datum	   *gkeys2;			/* ... of a composite key's second column */
	bool	   *gnulls2;
	uint64		rows_removed;	/* fact rows without a match */
	struct TesseraStarShared *shared;	/* a parallel plan's tables, built once */
	dsa_area   *area;			/* ... in the query's DSA */
	bool		counting;		/* a dimension is counted (STAR_COUNT): */
	int64	   *weight;			/* [row] the rows it joins, 0 if not counted */
	int64		max_weight;		/* ... the most of the batch's */
	List	   *filters;		/* clauses across dimensions, on the joined row */
	/* while a dimension is read: built ones on the same fact column (star.c) */
	int			npre;
	int		   *pre;
	bool	   *pre_second;		/* [i]: pre[i] filters on the second key column */
	/* a left join (one dimension): its rows without a match, as groups */
	bool		left;
	int			left_next;		/* the next row to look at */
	int			nleft_keys;
	int		   *left_keys;		/* [GROUP BY column] its extra column */
	int		   *left_aggs;		/* [aggregate] StarLeftAgg */
} TesseraStar;

extern TupleDesc TesseraStarInit(TesseraStar *st, List *desc, List *children, TupleDesc reldesc);
extern void TesseraStarProbe(TesseraStar *st, TesseraBatch *b, bool *ok, int n,
							 TesseraComputed *c, MemoryContext bufcxt);
extern bool TesseraStarRescan(TesseraStar *st, PlanState *parent);
extern void TesseraStarBuild(TesseraStar *st);
extern bool TesseraStarRowGroupMayMatch(void *arg, TesseraReader *r, int stripe, int rg);
extern bool TesseraStarDimHasKey(TesseraStarDim *dim, Datum value, Oid type);
extern void TesseraStarDimFilter(TesseraStarDim *dim, TesseraBatch *b, int att, Oid type,
								 bool *ok, int n);

/* star_probe_avx2.c */
extern const bool TesseraStarHaveAVX2;
extern void TesseraStarProbe32AVX2(const Datum *keys, const bool *keynull, bool *ok, int32 *match,
								   int n8, int32 min, uint32 span, const uint64 *present,
								   const int32 *direct, bool anti);

/* star_shared.c: a parallel plan's dimension tables, each built once */

/* a hashed dimension's table as arrays (simplehash's entries and sizes) */
typedef struct StarHashArrays
{
	void	   *data;			/* NULL: no hash table */
	Size		bytes;
	uint64		size;
	uint32		members;
	uint32		sizemask;
	uint32		grow;
} StarHashArrays;

extern dsa_pointer TesseraStarInitShared(TesseraStar *st, dsa_area *area);
extern void TesseraStarAttachShared(TesseraStar *st, dsa_area *area, dsa_pointer p);
extern void TesseraStarReInitShared(TesseraStar *st);
extern bool TesseraStarClaimDim(TesseraStar *st, int d);
extern bool TesseraStarPublishDim(TesseraStar *st, int d, const StarHashArrays *h);
extern void TesseraStarDimDone(TesseraStar *st, int d, bool ok);
extern bool TesseraStarWaitDim(TesseraStar *st, int d);
extern void TesseraStarAttachDim(TesseraStar *st, int d, StarHashArrays *h);
extern bool TesseraStarNextUnmatched(TesseraStar *st, Datum *values, bool *isnull);
extern void TesseraComputedBatch(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n,
								 const int *listed, int nlisted, MemoryContext bufcxt);
extern void TesseraComputedRescan(TesseraComputed *c);

/* The passes of a top-N of counts that sketches them first (agg_heavy.c) */
typedef enum TAggHeavyPhase
{
	TAGG_HEAVY_OFF,				/* every row grouped */
	TAGG_HEAVY_SKETCH,			/* first pass: rows counted into the sketch */
	TAGG_HEAVY_FILTER			/* second: the rows of cells that count enough grouped */
} TAggHeavyPhase;

typedef struct TesseraAggState
{
	TesseraScanState ts;		/* filters; first */
	TAggMode	mode;
	TAggSpec   *specs;
	int			nspecs;
	bool		offset_checks;	/* some sum(x + c) may overflow (agg_node.c) */
	TesseraGroups groups;
	MemoryContext cxt;			/* the groups */
	MemoryContext vx_cxt;		/* numerics of the fallback, reset per batch */
	MemoryContext buf_cxt;		/* buffers reused from batch to batch */
	TesseraPartials partials;	/* per batch partial sums of one aggregate, per group */
	/* FILTER: rows each aggregate keeps */
	bool	   *fsel;
	int		   *fidx;
	int32	   *fgidx;
	/* sparse batches: the rows an expression is computed for, their groups */
	int		   *srows;
	int32	   *sgidx;
	Datum	   *svalues;		/* ... a column's values read singly for them */
	bool	   *snulls;
	int		   *lrows;			/* ... the counted rows, when few (tagg_batch) */
	const int  *listed;			/* during tagg_batch: lrows, or NULL (many rows) */
	int			nlisted;
	const int  *superset;		/* this batch's rows a star join listed: every
								 * counted row is among them; or NULL */
	int			nsuperset;
	int			fcap;
	bool	   *ok;				/* per batch: counted rows */
	bool	   *again;			/* ... those counted once more (STAR_COUNT) */
	int			ok_cap;
	TesseraSpill spill;
	/*
	 * count(DISTINCT col): groups keys its column too (the last key); once
	 * every row is in, they are rolled up into outer, keyed on the GROUP BY
	 * columns, each inner group counting once where col is not NULL.
	 */
	bool		distinct;
	int			est_groups;		/* the planner's estimate, to size the hash table */
	int			group_limit;	/* TAGG_PRIVATE_GROUP_LIMIT: the groups' limit, 0: none */
	TesseraComputed comp;		/* expressions computed per row (TAGG_COMPUTED_ATTIDX + j) */
	TesseraStar star;			/* dimensions joined to the table, if any */
	TesseraComputed star_filters;	/* its filters on the joined rows */
	TesseraComputed row_quals;	/* quals with no vector form, on counted rows */
	uint64		rows_removed_by_quals;
	TesseraGroups outer;
	MemoryContext outer_cxt;
	/*
	 * The groups the aggregates' states are folded into: groups, or (serial,
	 * count(DISTINCT) beside other aggregates) outer, row by row, so that
	 * the groups keyed on the distinct column too carry no states.
	 */
	TesseraGroups *fold;
	/* a foreign table's batches (TesseraBatchSource), instead of a table scan */
	const TesseraBatchSource *source;
	List	   *source_plan;
	void	   *source_state;
	TesseraReader *source_reader;
	/*
	 * A correlated subquery's memo (TAGG_PRIVATE_MEMO): the aggregates
	 * grouped by the columns its parameters are compared with, computed
	 * once its runs have read the table once over; later runs look up
	 * their group (memo_group; -1: no row matched, the empty group).
	 */
	List	   *memo;
	TesseraGroups memo_groups;
	MemoryContext memo_cxt;
	ExprState **memo_params;
	bool		memo_built;
	bool		memo_failed;	/* past hash_mem: the runs scan as before */
	bool		memo_building;
	bool		memo_answer;	/* this run answers from the memo */
	bool		memo_strings;	/* some key is a string */
	int			memo_group;
	uint64		memo_rgs;		/* row groups read by the runs before */
	uint64		memo_rgs_table; /* row groups a run read or skipped */
	uint64		memo_lookups;
	/*
	 * The runs' key memo_domain_key is always a key of this dimension of a
	 * star join above (TesseraAggMemoDomain): the memo holds those keys'
	 * groups only, and a run whose key is not one of them scans.
	 */
	struct TesseraStarDim *memo_domain;
	int			memo_domain_key;
	Oid			memo_domain_type;	/* its parameter's type */
	/* ORDER BY a count LIMIT (TAGG_PRIVATE_TOPN): groups worse than the bound are left out */
	int			topn_rows;		/* 0: not planned */
	int			topn_spec;
	int			topn_state;		/* the spec whose state holds its count */
	bool		topn_desc;
	bool		topn_heavy;		/* a group may hold many rows (TAGG_HEAVY_ROWS) */
	bool		topn_active;
	struct binaryheap *topn_heap;	/* spilled groups: the best keys so far */
	int64		topn_bound;
	uint64		topn_left_out;
	/*
	 * ... by count(*) DESC over many groups: a first pass counts rows per
	 * cell of a sketch of the keys' hashes, the second groups only the rows
	 * of cells that count enough (agg_heavy.c)
	 */
	TAggHeavyPhase heavy_phase;
	uint16	   *sketch;			/* counts per cell, saturating */
	uint32		sketch_mask;	/* cells - 1 */
	uint64		sketch_rows;	/* rows counted into it */
	uint64		sketch_cells;	/* ... cells they made non-zero */
	bool		heavy_restart;	/* the first pass was given up: read afresh */
	int			heavy_min;		/* the rows of cells counting this many are grouped */
	int			heavy_result;	/* for EXPLAIN: the threshold, -1 no heavy
								 * groups, -2 too few, -3 few groups: every
								 * row grouped */
	int			heavy_est;		/* est_groups, while the passes size the table down */
	bool	   *heavy_keep;		/* per batch: the rows kept */
	int			heavy_cap;
	/*
	 * Sliced (TAGG_PRIVATE_SLICES > 1, under Gather): each process reads the
	 * whole table and groups the rows whose keys hash into the slice it took,
	 * then the next slice no process has taken, and so on (agg_methods.c).
	 */
	int			nslices;
	int			slice;			/* the slice being grouped */
	int			local_slice;	/* no shared memory: the next slice, here */
	int			slices_done;	/* for EXPLAIN ANALYZE */
	bool	   *slice_mask;		/* per batch: the counted rows of the slice */
	int			slice_cap;
	bool	   *carry_mask;		/* per batch: each new group's first row */
	int			carry_cap;
	int			slice_rows;		/* ... how many */
	int			slice_nkeys;	/* the first keys of groups the slices hash */
	/*
	 * count(DISTINCT)s alone, no GROUP BY: sliced by the distinct values,
	 * each slice's counts are added up (shared, or here without shared
	 * memory); the process that finishes the last slice emits the sums.
	 */
	bool		slice_sum;
	bool		slice_emitter;
	uint32		local_finished;
	int64		local_counts[TAGG_SLICE_COUNTS];
	/* output */
	bool		computed;
	bool		groups_done;	/* every group emitted (a left join's rows without a match next) */
	int			next;
	uint64		metadata_answers;	/* chunk aggregates answered from summaries */
} TesseraAggState;

/* filters.c */
extern void TesseraFiltersInit(TesseraScanState *ts, List *skip_quals, List *skip_descs,
							   List *vector_quals, List *vector_descs);
extern void TesseraFiltersEval(TesseraScanState *ts);
extern bool TesseraRowGroupMayMatch(void *arg, TesseraReader *r, int stripe, int rg);
extern const bool *TesseraFilterBatch(void *arg, TesseraBatch *b);
extern void TesseraFiltersStart(TesseraScanState *ts);
extern void TesseraExplainFilterCounts(PlanState *ps, bool skip, bool vector, ExplainState *es);

/* scan_node.c: parallel and EXPLAIN parts TesseraAgg's partial node shares */
extern Size TesseraScanEstimateDSM(CustomScanState *node, ParallelContext *pcxt);
extern void TesseraScanInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void TesseraScanReInitDSM(CustomScanState *node, ParallelContext *pcxt,
								 void *coordinate);
extern void TesseraScanInitWorker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void TesseraScanInitShared(TesseraScanState *ts, void *coordinate);
extern void TesseraScanShutdown(CustomScanState *node);
extern void TesseraScanEnd(CustomScanState *node);
extern void TesseraScanExplainBytes(TesseraScanState *ts, ExplainState *es);

/* agg_heavy.c */
extern bool TesseraAggHeavyStart(TesseraAggState *as);
extern const bool *TesseraAggHeavyRows(TesseraAggState *as, TesseraBatch *b, const bool *ok,
									   int n);
extern bool TesseraAggHeavyNext(TesseraAggState *as);

/* agg_methods.c */
extern void TesseraAggBatch(TesseraAggState *as, TesseraBatch *b, const bool *ok, int n);
extern void TesseraAggExplain(CustomScanState *node, List *ancestors, ExplainState *es);
extern Size TesseraAggEstimateDSM(CustomScanState *node, ParallelContext *pcxt);
extern void TesseraAggInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void TesseraAggReInitDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void TesseraAggInitWorker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void TesseraAggTopNBound(TesseraAggState *as, TesseraGroups *g);
extern void TesseraAggInitSpec(TesseraAggState *as, TAggSpec *sp, List *desc, Aggref *agg);
extern bool TesseraAggTakeSlice(TesseraAggState *as);
extern void TesseraAggMemoDomain(PlanState *ps, int paramid, TesseraStarDim *dim, Oid type);
extern void TesseraAggSliceCounted(TesseraAggState *as);
extern bool TesseraAggTopNStream(TesseraAggState *as, TesseraGroups *g, int group);

/* Does the top-N of groups leave this group out? */
static inline bool
TesseraAggTopNLeavesOut(TesseraAggState *as, TesseraGroups *g, int group)
{
	int64		count;

	if (!as->topn_active)
		return false;
	if (as->topn_heap != NULL)
		return TesseraAggTopNStream(as, g, group);
	count = TesseraGroupState(g, group, as->topn_state)->count;
	if (as->topn_desc ? count >= as->topn_bound : count <= as->topn_bound)
		return false;
	as->topn_left_out++;
	return true;
}
extern TesseraScanState *TesseraScanVectorSource(PlanState *ps);
extern TableScanDesc TesseraScanStart(TesseraScanState *ts);

/*
 * Column a of a batch's row: from the decoded column, decoding it first,
 * or the one value alone when few rows of the batch are read (sparse).
 */
static inline Datum
TesseraBatchDatum(TesseraBatch *b, int a, int row, bool *isnull)
{
	Datum	   *values = b->values[a];
	bool	   *nulls = b->isnull[a];

	if (unlikely(values == NULL))
	{
		if (b->sparse)
			return TesseraBatchValue(b, a, row, isnull);
		TesseraBatchColumn(b, a, &values, &nulls);
	}
	*isnull = nulls[row];
	return values[row];
}
extern bool TesseraScanNodeBatch(TesseraScanState *ts, TesseraBatch **b, const bool **sel);

#endif							/* TESSERA_EXECUTOR_NODES_H */
