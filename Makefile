# tessera: columnar table access method for PostgreSQL

MODULE_big = tessera

# one line per file, lowest layer first (scripts/check-layout.py)
OBJS = \
	src/catalog/am.o \
	src/catalog/catalog.o \
	src/catalog/options.o \
	src/storage/page.o \
	src/storage/rowstate.o \
	src/storage/visibility.o \
	src/storage/xlog.o \
	src/encoding/checksum.o \
	src/encoding/checksum_avx2.o \
	src/encoding/codec.o \
	src/encoding/frame.o \
	src/encoding/bitpack.o \
	src/encoding/intcodec.o \
	src/encoding/decimal.o \
	src/encoding/stats.o \
	src/encoding/packed.o \
	src/encoding/chunk.o \
	src/encoding/access.o \
	src/reader/reader.o \
	src/reader/directory.o \
	src/reader/cache.o \
	src/reader/dircache.o \
	src/reader/shared_cache.o \
	src/writer/encoder.o \
	src/writer/stripe_dir.o \
	src/writer/rowgroup.o \
	src/writer/writer.o \
	src/maintenance/compact.o \
	src/maintenance/reclaim.o \
	src/maintenance/schedule.o \
	src/maintenance/worker.o \
	src/tableam/slot.o \
	src/tableam/scan.o \
	src/tableam/fetch.o \
	src/tableam/logical.o \
	src/tableam/modify.o \
	src/tableam/speculative.o \
	src/tableam/ddl.o \
	src/tableam/index.o \
	src/tableam/vacuum.o \
	src/tableam/handler.o \
	src/vector/filter.o \
	src/vector/selection.o \
	src/vector/strmatch.o \
	src/vector/expr.o \
	src/vector/aggtrans.o \
	src/vector/groups.o \
	src/vector/group_keys.o \
	src/vector/slices.o \
	src/vector/spill.o \
	src/vector/memory.o \
	src/executor/filters.o \
	src/executor/scan_node.o \
	src/executor/agg_methods.o \
	src/executor/agg_topn.o \
	src/executor/agg_heavy.o \
	src/executor/agg_fold.o \
	src/executor/agg_node.o \
	src/executor/computed.o \
	src/executor/star.o \
	src/executor/star_build.o \
	src/executor/star_probe_avx2.o \
	src/executor/star_shared.o \
	src/executor/topn_node.o \
	src/executor/join_node.o \
	src/planner/classify.o \
	src/planner/cost.o \
	src/planner/scan_path.o \
	src/planner/agg_path.o \
	src/planner/distinct.o \
	src/planner/agg_plan.o \
	src/planner/topn_path.o \
	src/planner/star_path.o \
	src/planner/star_plan.o \
	src/planner/join_path.o \
	src/files/parquet_types.o \
	src/files/parquet_columns.o \
	src/files/parquet_copy.o \
	src/files/parquet_fdw.o \
	src/utility/copy_text.o \
	src/utility/hooks.o \
	src/debug/inspect.o \
	src/debug/verify.o \
	src/tessera.o

# make installcheck (after make install, against a running server that
# preloads tessera): the regression, isolation and TAP suites.
# scripts/test.sh runs them too, with heap twins of the isolation specs.
REGRESS = $(shell sed -n 's/^test: *//p' $(srcdir)/test/schedule)
REGRESS_OPTS = --inputdir=$(srcdir)/test
ISOLATION = $(basename $(notdir $(wildcard $(srcdir)/test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=$(srcdir)/test/isolation
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
TEST_MODULES = $(wildcard $(srcdir)/test/modules/*/)

EXTENSION = tessera
DATA = sql/tessera--0.1.sql sql/tessera--0.2.sql sql/tessera--0.3.sql sql/tessera--0.4.sql \
	sql/tessera--0.1--0.2.sql sql/tessera--0.2--0.3.sql sql/tessera--0.3--0.4.sql
PGFILEDESC = "tessera - columnar table access method"

PG_CPPFLAGS = -I$(srcdir)/include
# Loops over column vectors (sums, filters) vectorize only with GCC's full
# cost model; -O2 in GCC 12 uses a "very cheap" one that skips them.
VECTORIZE_CFLAGS = $(shell $(CC) -fvect-cost-model=dynamic -x c -c -o /dev/null /dev/null \
	>/dev/null 2>&1 && echo -fvect-cost-model=dynamic)
PG_CFLAGS = -Wall -Wmissing-prototypes -Werror=implicit-function-declaration -MMD -MP \
	$(VECTORIZE_CFLAGS)
# XXH3 for AVX2 CPUs (src/encoding/checksum.c picks it at run time); the
# JIT's bitcode of the file needs the flag too
AVX2_CFLAGS = $(shell $(CC) -mavx2 -x c -c -o /dev/null /dev/null >/dev/null 2>&1 && echo -mavx2)
src/encoding/checksum_avx2.o: CFLAGS += $(AVX2_CFLAGS)
src/encoding/checksum_avx2.bc: BITCODE_CFLAGS += $(AVX2_CFLAGS)
# a star join's probe for AVX2 CPUs (src/executor/star.c picks it at run time)
src/executor/star_probe_avx2.o: CFLAGS += $(AVX2_CFLAGS)
src/executor/star_probe_avx2.bc: BITCODE_CFLAGS += $(AVX2_CFLAGS)
# the Parquet file layer (rust/): a static library built by cargo, with
# the system libraries Rust's standard library needs; its zstd is the
# system's libzstd (ZSTD_SYS_USE_PKG_CONFIG), not a second copy
PARQUET_LIB = rust/target/release/libtessera_parquet.a
SHLIB_LINK = -Wl,--exclude-libs,ALL -Wl,--gc-sections $(PARQUET_LIB) -lzstd -llz4 -lgcc_s -lutil -lrt -lpthread -lm -ldl

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# cargo where it is installed; elsewhere (the Debian roots of other
# PostgreSQL versions) the library scripts/common.sh built and copied in
$(PARQUET_LIB): rust/Cargo.toml rust/Cargo.lock rust/src/lib.rs
	@if command -v cargo >/dev/null 2>&1; then \
		(cd rust && ZSTD_SYS_USE_PKG_CONFIG=1 cargo build --release --locked --quiet) && touch $@; \
	elif [ -f $@ ]; then touch $@; \
	else echo "cargo is needed to build $@ (https://rustup.rs)" >&2; exit 1; fi

$(shlib): $(PARQUET_LIB)

# rebuild objects when a header they include changes (in CFLAGS, not
# CPPFLAGS: the JIT bitcode compile would overwrite the .d with its own
# target, and the .o would then never be rebuilt)
-include $(OBJS:.o=.d)
EXTRA_CLEAN += $(OBJS:.o=.d) rust/target

# modules a TAP test loads (another extension's hooks beside ours); the
# test skips itself when they are not installed
.PHONY: install-test-modules
install-test-modules:
	for m in $(TEST_MODULES); do $(MAKE) -C $$m PG_CONFIG=$(PG_CONFIG) install || exit 1; done
