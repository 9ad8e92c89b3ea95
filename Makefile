# tessera: columnar table access method for PostgreSQL

MODULE_big = tessera
OBJS = \
	src/tessera.o \
	src/tableam/handler.o \
	src/tableam/scan.o \
	src/tableam/fetch.o \
	src/tableam/modify.o \
	src/tableam/speculative.o \
	src/tableam/ddl.o \
	src/tableam/index.o \
	src/tableam/vacuum.o \
	src/tableam/compact.o \
	src/tableam/reclaim.o \
	src/storage/page.o \
	src/storage/rowstate.o \
	src/tableam/visibility.o \
	src/catalog/catalog.o \
	src/catalog/options.o \
	src/encoding/codec.o \
	src/encoding/intcodec.o \
	src/encoding/decimal.o \
	src/encoding/chunk.o \
	src/writer/writer.o \
	src/reader/reader.o \
	src/reader/cache.o \
	src/executor/slot.o \
	src/executor/customscan.o \
	src/utility/hooks.o \
	src/debug/inspect.o \
	src/debug/verify.o

EXTENSION = tessera
DATA = sql/tessera--0.1.sql
PGFILEDESC = "tessera - columnar table access method"

PG_CPPFLAGS = -I$(srcdir)/include
# Loops over column vectors (sums, filters) vectorize only with GCC's full
# cost model; -O2 in GCC 12 uses a "very cheap" one that skips them.
VECTORIZE_CFLAGS = $(shell $(CC) -fvect-cost-model=dynamic -x c -c -o /dev/null /dev/null \
	>/dev/null 2>&1 && echo -fvect-cost-model=dynamic)
PG_CFLAGS = -Wall -Wmissing-prototypes -Werror=implicit-function-declaration -MMD -MP \
	$(VECTORIZE_CFLAGS)
SHLIB_LINK = -lzstd -llz4

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# rebuild objects when a header they include changes (in CFLAGS, not
# CPPFLAGS: the JIT bitcode compile would overwrite the .d with its own
# target, and the .o would then never be rebuilt)
-include $(OBJS:.o=.d)
EXTRA_CLEAN += $(OBJS:.o=.d)
