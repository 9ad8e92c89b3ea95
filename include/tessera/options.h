/*-------------------------------------------------------------------------
 *
 * options.h
 *	  Per-table write options of tessera tables, their limits, and the
 *	  tessera.* settings they default to (catalog/options.c).
 *
 * IDENTIFICATION
 *	  include/tessera/options.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_OPTIONS_H
#define TESSERA_OPTIONS_H

#include "nodes/pg_list.h"
#include "utils/guc.h"

/* Limits of the per-table options and their GUC defaults. */
#define TESSERA_MIN_COMPRESSION_LEVEL	1
#define TESSERA_MAX_COMPRESSION_LEVEL	19
/*
 * zstd level 1: frames are 4-16 KB, too short for higher levels' larger
 * match search to find more; level 3 made a COPY of random values and md5
 * text 15% slower for a 2% smaller table (DESIGN.md).
 */
#define TESSERA_DEFAULT_COMPRESSION_LEVEL 1
#define TESSERA_MIN_STRIPE_ROWS			1
#define TESSERA_MAX_STRIPE_ROWS			10000000
#define TESSERA_MIN_ROW_GROUP_ROWS		1
#define TESSERA_MAX_ROW_GROUP_ROWS		1000000
#define TESSERA_MAX_DELTA_ROWS			100000

/* the settings an unset option follows */
extern int	tessera_compression;
extern int	tessera_compression_level;
extern int	tessera_stripe_row_limit;
extern int	tessera_row_group_row_limit;
extern int	tessera_delta_row_limit;

/* the codecs' names, for tessera.compression (NULL-terminated) */
extern const struct config_enum_entry TesseraCodecEntries[];

/* Effective write options of a relation. */
typedef struct TesseraOptions
{
	int			compression;	/* TesseraCodec */
	int			compression_level;
	int			stripe_row_limit;
	int			row_group_row_limit;
	int			delta_row_limit;
} TesseraOptions;

extern void TesseraRegisterReloptions(void);
extern void TesseraGetOptions(Oid relid, TesseraOptions *opts);
extern List *TesseraExtractOptions(List **options);
extern bool TesseraRelOptionsPresent(Datum reloptions);
extern Datum TesseraStripRelOptions(Datum reloptions);
extern Datum TesseraOnlyRelOptions(Datum reloptions);
extern Datum TesseraApplyOptions(Datum current, List *defs, bool isReset);
extern void TesseraSetRelOptions(Oid relid, Datum tessera_options);
extern Datum TesseraGetRelOptions(Oid relid);
extern const char *TesseraCodecName(int codec);
extern int	TesseraCodecFromName(const char *name);

/*
 * Options of a table that CREATE TABLE AS is creating: its rows are written
 * with them before they are stored in pg_class.  Begin when the statement
 * starts, bind once the new relation is known, end when it is done.
 */
extern void TesseraBeginPendingOptions(Datum options);
extern bool TesseraPendingOptionsUnbound(void);
extern void TesseraBindPendingOptions(Oid relid);
extern void TesseraEndPendingOptions(void);

#endif							/* TESSERA_OPTIONS_H */
