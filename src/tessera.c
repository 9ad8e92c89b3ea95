/*-------------------------------------------------------------------------
 *
 * tessera.c
 *	  Module initialization: GUCs, storage parameters, callbacks, hooks.
 *
 * NOTES
 *	  tessera works when loaded on demand (the access method handler loads
 *	  the library), but storage parameters such as tessera_compression are
 *	  only recognized by backends that have loaded it, so production setups
 *	  (and pg_restore -j) should list it in shared_preload_libraries.
 *
 * IDENTIFICATION
 *	  src/tessera.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/inval.h"

#include "tessera/cache.h"
#include "tessera/catalog.h"
#include "tessera/encoder.h"
#include "tessera/files.h"
#include "tessera/hooks.h"
#include "tessera/maintenance.h"
#include "tessera/options.h"
#include "tessera/shared_cache.h"
#include "tessera/plan.h"
#include "tessera/rowstate.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"
#include "tessera/xlog.h"

PG_MODULE_MAGIC;

/* the message levels compaction can be logged at (as log_min_messages) */
static const struct config_enum_entry log_level_entries[] = {
	{"debug5", DEBUG5, false},
	{"debug4", DEBUG4, false},
	{"debug3", DEBUG3, false},
	{"debug2", DEBUG2, false},
	{"debug1", DEBUG1, false},
	{"info", INFO, false},
	{"notice", NOTICE, false},
	{"warning", WARNING, false},
	{"log", LOG, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/*
 * Each background compaction is a worker process taking one of
 * max_worker_processes' slots (which parallel queries and logical
 * replication need too): a setting that starts one every few writes would
 * let any writer crowd them out, so it is a superuser's setting and never
 * below TESSERA_MIN_AUTOCOMPACT_STRIPES.
 */
static bool
check_autocompact_stripes(int *newval, void **extra, GucSource source)
{
	if (*newval != 0 && *newval < TESSERA_MIN_AUTOCOMPACT_STRIPES)
	{
		GUC_check_errdetail("tessera.autocompact_stripes must be 0 (off) or at least %d.",
							TESSERA_MIN_AUTOCOMPACT_STRIPES);
		return false;
	}
	return true;
}

static void
tessera_relcache_callback(Datum arg, Oid relid)
{
	TesseraForgetRelationCaches(relid);
}

/*
 * Module load: settings, hooks, custom nodes, shared memory.  long: one
 * definition per setting, each with its descriptions.
 */
void
_PG_init(void)
{
	TesseraSetAmRoutine(TesseraTableAmRoutine());

	DefineCustomEnumVariable("tessera.compression",
							 "Compression codec for new tessera stripes.",
							 "Used by tables that do not set tessera_compression.",
							 &tessera_compression, TESSERA_CODEC_AUTO, TesseraCodecEntries,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.compression_level",
							"Compression level for new tessera stripes (zstd).",
							"Used by tables that do not set tessera_compression_level.",
							&tessera_compression_level, TESSERA_DEFAULT_COMPRESSION_LEVEL,
							TESSERA_MIN_COMPRESSION_LEVEL, TESSERA_MAX_COMPRESSION_LEVEL,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.stripe_row_limit",
							"Maximum number of rows per tessera stripe.",
							"Used by tables that do not set tessera_stripe_row_limit.",
							&tessera_stripe_row_limit, 150000,
							TESSERA_MIN_STRIPE_ROWS, TESSERA_MAX_STRIPE_ROWS,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.row_group_row_limit",
							"Maximum number of rows per tessera row group.",
							"Used by tables that do not set tessera_row_group_row_limit.",
							&tessera_row_group_row_limit, 10000,
							TESSERA_MIN_ROW_GROUP_ROWS, TESSERA_MAX_ROW_GROUP_ROWS,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.delta_row_limit",
							"Writes of at most this many rows go to the table's delta.",
							"A transaction's rows are written at commit (or before a scan of the table "
							"by the same transaction); if there are at most this many, they are stored "
							"in the stripe catalog instead of pages of their own, until compaction "
							"merges them into a stripe.  0 turns the delta off.  Used by tables that do "
							"not set tessera_delta_row_limit.",
							&tessera_delta_row_limit, 1000, 0, TESSERA_MAX_DELTA_ROWS,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.autocompact_stripes",
							"Start background compaction of a table about every this many small writes.",
							"A transaction whose delta stripe gets a stripe number that is a multiple of "
							"this value starts a background worker after it commits, which moves the "
							"table's delta into stripes.  0 leaves compaction to VACUUM and "
							"tessera.compact().",
							&tessera_autocompact_stripes, 1000, 0, INT_MAX,
							PGC_SUSET, 0, check_autocompact_stripes, NULL, NULL);
	DefineCustomEnumVariable("tessera.compaction_log_level",
							 "Message level of the server log line for each background compaction.",
							 NULL, &tessera_compaction_log_level, LOG, log_level_entries,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tessera.encoder_worker",
							 "Encode bulk loads' row groups in a background worker.",
							 "From a load's second full row group on, a background worker encodes and "
							 "compresses each row group while the backend reads the next one; it takes "
							 "a max_worker_processes slot for the rest of the transaction.  Without a "
							 "free slot the backend encodes alone.",
							 &tessera_encoder_worker, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.debug_encoder_exit_after",
							"Testing: the encoder worker exits after this many columns.",
							"The backend then encodes what the worker did not.  0: never.",
							&tessera_debug_encoder_exit_after, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.debug_copy_batch_rows",
							"Testing: rows in a batch of COPY's fields converted by a worker.",
							"0: the default (65536, or 8 MB of text).",
							&tessera_debug_copy_batch_rows, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("tessera.fetch_cache_size",
							"Memory each backend may use to cache decompressed chunks for single-row fetches.",
							"Capped at 1 GB: every backend may fill its own cache.",
							&tessera_fetch_cache_size, 64, 1, TESSERA_MAX_FETCH_CACHE_MB,
							PGC_USERSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomRealVariable("tessera.vacuum_fold_fraction",
							 "Fraction of a stripe's rows that must be deleted for everyone before VACUUM rewrites it without them.",
							 "VACUUM rewrites such a stripe with the dead rows' values left out and lists them in the stripe, "
							 "so that their row states and pages can be given back.  1 turns rewriting off.",
							 &tessera_vacuum_fold_fraction, 0.1, 0.0, 1.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	CacheRegisterRelcacheCallback(tessera_relcache_callback, (Datum) 0);
	TesseraRegisterReloptions();
	TesseraRegisterXactCallbacks();
	TesseraRegisterMaintenance();
	DefineCustomBoolVariable("tessera.enable_custom_scan",
							 "Lets the planner use TesseraScan for tessera tables.",
							 "TesseraScan reads only the columns a query uses, skips row groups by their min/max values and filters rows on column vectors.",
							 &tessera_enable_custom_scan, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_custom_agg",
							 "Lets the planner use TesseraAgg for aggregates over a tessera table.",
							 "TesseraAgg computes count, sum, avg, min and max on column vectors.",
							 &tessera_enable_custom_agg, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_sliced_agg",
							 "Lets the planner run TesseraAgg sliced across parallel processes.",
							 "Each process reads the whole table and finishes the groups whose keys hash into its slice; chosen over the partial plan where there are many groups.",
							 &tessera_enable_sliced_agg, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("tessera.topn_sketch_rows",
							"The rows a top-N of counts over many groups must expect to read to sketch its counts first.",
							"GROUP BY ... ORDER BY count(*) DESC LIMIT n over 131,072 groups or more counts its rows into a sketch, then groups only the rows of groups that can be in the answer. 0 turns that off.",
							&tessera_topn_sketch_rows, 1000000, 0, INT_MAX, PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_topn",
							 "Lets the planner use TesseraTopN for ORDER BY ... LIMIT over a tessera table.",
							 "TesseraTopN reads the sort keys of every row and the other columns of the winning rows only.",
							 &tessera_enable_topn, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.limit_workers_to_cores",
							 "Plans tessera's parallel scans, aggregations, joins and top-N with at most as many workers as the machine has CPU cores beside the leader's.",
							 "Decoding columns in memory is bound by the CPU: more processes than cores only share them.",
							 &tessera_limit_workers_to_cores, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_star_join",
							 "Lets TesseraAgg join dimension tables to a tessera table itself.",
							 "An aggregation over inner joins of one tessera table with relations joined on their unique integer or date keys probes the dimensions' rows from column vectors.",
							 &tessera_enable_star_join, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_simd",
							 "Lets tessera's executor use AVX2 loops where the CPU has them.",
							 "A star join probes eight keys at a time; off: one at a time, as on CPUs without AVX2 (the answers are the same).",
							 &tessera_enable_simd, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("tessera.enable_join",
							 "Lets TesseraJoin join dimension tables to a tessera table and hand up the joined rows.",
							 "An inner join of one tessera table with relations joined on their unique integer or date keys probes the dimensions' rows with the table's key column vectors and forms only the rows that join; tessera.enable_star_join off turns it off too.",
							 &tessera_enable_join, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);

	TesseraInstallHooks();
	TesseraRegisterScanNode();
	TesseraRegisterAggNode();
	TesseraRegisterTopNNode();
	TesseraRegisterJoinNode();
	TesseraInstallScanPaths();
	TesseraInstallAggPaths();
	TesseraInstallDistinctPlanning();
	TesseraRegisterParquetSource();
	TesseraInstallTopNPaths();
	TesseraInstallJoinPaths();
	TesseraRegisterRmgr(TesseraLogicalDecode);
	TesseraSharedCacheDefineGuc();

	/* after every setting is defined: a placeholder left now is a typo */
	MarkGUCPrefixReserved("tessera");

	if (process_shared_preload_libraries_in_progress)
	{
		TesseraSpeculativeShmemInit();
		TesseraSharedCacheShmemInit();
	}
}
