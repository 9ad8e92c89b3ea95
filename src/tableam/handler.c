/*-------------------------------------------------------------------------
 *
 * handler.c
 *	  The tessera table access method routine.
 *
 * NOTES
 *	  This file only wires callbacks, in tableam.h order; they live in
 *	  scan.c, fetch.c, modify.c, index.c, vacuum.c and ddl.c of this
 *	  directory.  _PG_init registers the routine with catalog/am.c, which
 *	  answers "is this a tessera table?" for every layer.
 *
 * IDENTIFICATION
 *	  src/tableam/handler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "commands/defrem.h"
#include "fmgr.h"

#include "tessera/tableam.h"
#include "tessera/tessera.h"

static const TableAmRoutine tessera_methods = {
	.type = T_TableAmRoutine,

	/* slots */
	.slot_callbacks = tessera_slot_callbacks,

	/* scans */
	.scan_begin = tessera_scan_begin,
	.scan_end = tessera_scan_end,
	.scan_rescan = tessera_scan_rescan,
	.scan_getnextslot = tessera_scan_getnextslot,
	.scan_set_tidrange = tessera_scan_set_tidrange,
	.scan_getnextslot_tidrange = tessera_scan_getnextslot_tidrange,

	/* parallel scans */
	.parallelscan_estimate = tessera_parallelscan_estimate,
	.parallelscan_initialize = tessera_parallelscan_initialize,
	.parallelscan_reinitialize = tessera_parallelscan_reinitialize,

	/* index fetches */
	.index_fetch_begin = tessera_index_fetch_begin,
	.index_fetch_reset = tessera_index_fetch_reset,
	.index_fetch_end = tessera_index_fetch_end,
	.index_fetch_tuple = tessera_index_fetch_tuple,

	/* non-modifying operations on individual tuples */
	.tuple_fetch_row_version = tessera_tuple_fetch_row_version,
	.tuple_tid_valid = tessera_tuple_tid_valid,
	.tuple_get_latest_tid = tessera_tuple_get_latest_tid,
	.tuple_satisfies_snapshot = tessera_tuple_satisfies_snapshot,
	.index_delete_tuples = tessera_index_delete_tuples,

	/* manipulations of physical tuples */
	.tuple_insert = tessera_tuple_insert,
	.tuple_insert_speculative = tessera_tuple_insert_speculative,
	.tuple_complete_speculative = tessera_tuple_complete_speculative,
	.multi_insert = tessera_multi_insert,
	.tuple_delete = tessera_tuple_delete,
	.tuple_update = tessera_tuple_update,
	.tuple_lock = tessera_tuple_lock,
	.finish_bulk_insert = tessera_finish_bulk_insert,

	/* DDL */
	.TESSERA_AM_SET_NEW_STORAGE = tessera_relation_set_new_filenode,
	.relation_nontransactional_truncate = tessera_relation_nontransactional_truncate,
	.relation_copy_data = tessera_relation_copy_data,
	.relation_copy_for_cluster = tessera_relation_copy_for_cluster,
	.relation_vacuum = tessera_relation_vacuum,
	.scan_analyze_next_block = tessera_scan_analyze_next_block,
	.scan_analyze_next_tuple = tessera_scan_analyze_next_tuple,
	.index_build_range_scan = tessera_index_build_range_scan,
	.index_validate_scan = tessera_index_validate_scan,

	/* miscellaneous */
	.relation_size = tessera_relation_size,
	.relation_needs_toast_table = tessera_relation_needs_toast_table,
	.relation_toast_am = NULL,
	.relation_fetch_toast_slice = NULL,

	/* planner */
	.relation_estimate_size = tessera_relation_estimate_size,

	/* executor */
#if !TESSERA_BITMAP_AM_ITERATES
	.scan_bitmap_next_block = tessera_scan_bitmap_next_block,
#endif
	.scan_bitmap_next_tuple = tessera_scan_bitmap_next_tuple,
	.scan_sample_next_block = tessera_scan_sample_next_block,
	.scan_sample_next_tuple = tessera_scan_sample_next_tuple
};

PG_FUNCTION_INFO_V1(tessera_tableam_handler);

Datum
tessera_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&tessera_methods);
}

const TableAmRoutine *
TesseraTableAmRoutine(void)
{
	return &tessera_methods;
}
