/*-------------------------------------------------------------------------
 *
 * xlog.h
 *	  tessera's WAL resource manager (storage/xlog.c).
 *
 * IDENTIFICATION
 *	  include/tessera/xlog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_XLOG_H
#define TESSERA_XLOG_H

#include "utils/relcache.h"

extern void TesseraRegisterRmgr(void);
extern void TesseraLogConflictHorizon(Relation rel, TransactionId horizon);
extern void TesseraForgetLayoutEverywhere(Relation rel);

#endif							/* TESSERA_XLOG_H */
