/*-------------------------------------------------------------------------
 *
 * hooks.h
 *	  tessera's hooks into utility statements, object access and executor
 *	  start (utility/hooks.c).
 *
 * IDENTIFICATION
 *	  include/tessera/hooks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_HOOKS_H
#define TESSERA_HOOKS_H

extern void TesseraInstallHooks(void);

#endif							/* TESSERA_HOOKS_H */
