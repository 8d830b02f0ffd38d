# libtfrec: one non-recursive Makefile, everything built under $(BUILD)/.
#
#   make            library (static + shared) and tools
#   make test       install missing build dependencies, build, run every test
#   make asan-test  unit tests under AddressSanitizer + UBSan (build-asan/)
#   make bench      benchmarks (print ratios against peers)
#   make demo       the end-to-end pipeline on generated sample data
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install the Debian packages the build and tests need
#
# Modules add files under lib/<module>/, tools/<name>/, tests/unit/test_*.c,
# bench/*.c and proto/**.proto; the globs below pick them up.

VERSION   := $(shell sed -n 's/^#define TFREC_VERSION_STRING "\(.*\)"/\1/p' include/tfrec/version.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
BUILD     ?= build
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
# Where Debian's python3 looks: /usr/lib/python3/dist-packages for /usr,
# <prefix>/lib/python3.X/dist-packages otherwise. Either way three levels
# below LIBDIR, where python/tfrec/_lib.py looks for libtfrec.so.
PYVER     := $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHON_SITEDIR ?= $(if $(filter /usr,$(PREFIX)),$(LIBDIR)/python3/dist-packages,$(LIBDIR)/python$(PYVER)/dist-packages)
CC        ?= cc
CXX       ?= c++
PROTOC_C  ?= protoc-c

PKGS := zlib libprotobuf-c grpc libcurl libjpeg libpng
# ISA-L speeds up GZIP/ZLIB and is used when present (see README).
HAVE_ISAL := $(shell pkg-config --exists libisal 2>/dev/null && echo 1)
ifeq ($(HAVE_ISAL),1)
PKGS += libisal
ISAL_DEF := -DTFREC_HAVE_ISAL=1
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT      ?= -O2 -g
WARN     := -Wall -Wextra
CPPFLAGS += -D_GNU_SOURCE -DTFREC_VERSION_STRING='"$(VERSION)"' $(ISAL_DEF) \
            -Iinclude -Ilib -I$(BUILD)/gen $(PKG_CFLAGS)
CFLAGS   += -std=c11 $(WARN) $(OPT) -fPIC -fvisibility=hidden -pthread
LDFLAGS  += -Wl,--as-needed
LDLIBS   += $(PKG_LIBS) -pthread -lm

ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS   += $(SAN_FLAGS)
LDFLAGS  += $(SAN_FLAGS)
endif

# ------------------------------------------------------------------ sources
PROTOS     := $(shell find proto -name '*.proto' | sort)
PB_C       := $(PROTOS:proto/%.proto=$(BUILD)/gen/%.pb-c.c)
PB_H       := $(PB_C:.c=.h)
LIB_SRCS   := $(sort $(wildcard lib/*/*.c))
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(PB_C:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)
TOOLS      := $(filter-out common,$(notdir $(wildcard tools/*)))
TOOLS      := $(foreach t,$(TOOLS),$(if $(wildcard tools/$(t)/*.c),$(t)))
COMMON_OBJS:= $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/common/*.c))
TOOL_BINS  := $(TOOLS:%=$(BUILD)/bin/%)
TEST_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS  := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%) $(BUILD)/tests/test_cxx_headers \
              $(BUILD)/tests/tfrec2bt-testing
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

STATIC_LIB := $(BUILD)/libtfrec.a
SHARED_LIB := $(BUILD)/libtfrec.so.$(VERSION)

.PHONY: all lib tools tests benches test check unit asan-test bench demo install deps ensure-deps clean
all: lib tools

lib: $(STATIC_LIB) $(SHARED_LIB) $(BUILD)/tfrec.pc
tools: $(TOOL_BINS)
tests: $(TEST_BINS)
benches: $(BENCH_BINS)

# ------------------------------------------------------------------ codegen
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h &: proto/%.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) -Iproto --c_out=$(BUILD)/gen $<
# Generated sources and objects only named by pattern rules are
# intermediates to make; keep it from deleting them (which would rebuild
# them on every run).
.SECONDARY:

# ------------------------------------------------------------------ compile
$(BUILD)/obj/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -Wno-missing-braces -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS) lib/libtfrec.map
	$(CC) -shared -Wl,-soname,libtfrec.so.$(SOVERSION) -Wl,--version-script=lib/libtfrec.map \
	    $(LDFLAGS) -o $@ $(LIB_OBJS) $(LDLIBS)
	ln -sf libtfrec.so.$(VERSION) $(BUILD)/libtfrec.so.$(SOVERSION)
	ln -sf libtfrec.so.$(SOVERSION) $(BUILD)/libtfrec.so

PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@VERSION@|$(VERSION)|; s|@PKGS@|$(PKGS)|'
$(BUILD)/tfrec.pc: tfrec.pc.in Makefile
	$(PC_SUBST) $< > $@

# Every tool links the static library so it runs without installation.
.SECONDEXPANSION:
$(BUILD)/bin/%: $$(addprefix $(BUILD)/obj/,$$(addsuffix .o,$$(basename $$(wildcard tools/$$*/*.c)))) $(COMMON_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/unit/harness.o $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The tools' flag parser is tested on its own, linked with tools/common.
$(BUILD)/tests/test_flags: $(BUILD)/obj/tests/unit/test_flags.o $(BUILD)/obj/tests/unit/harness.o \
                           $(COMMON_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# tfrec2bt with its test machinery (fault injection through the writer's
# internal status hook, read from TFREC2BT_INJECT_RETRY): compiled only into
# this copy, which the integration tests use; bin/tfrec2bt has none of it.
T2B_TESTING_OBJS := $(patsubst %.c,$(BUILD)/obj-testing/%.o,$(wildcard tools/tfrec2bt/*.c))
$(BUILD)/obj-testing/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DTFREC_TESTING $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/tfrec2bt-testing: $(T2B_TESTING_OBJS) $(COMMON_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The public headers must compile as C++ too.
$(BUILD)/tests/test_cxx_headers: tests/unit/cxx_headers.cpp $(BUILD)/obj/tests/unit/harness.o $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 -Wall -Wextra -pedantic $(OPT) $(SAN_FLAGS) -Iinclude -Itests/unit -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ------------------------------------------------------------------ run
# `test` and `demo` first make sure the Debian packages are there, then
# re-enter make so the pkg-config results above are computed afresh.
# install-deps.sh asks dpkg about every package it knows (including the test
# tools: Go for the emulator fallback, Python modules) and returns at once
# when all are there.
ensure-deps:
	@scripts/install-deps.sh

test: ensure-deps
	@$(MAKE) --no-print-directory check

check: all tests
	@tests/run.sh $(BUILD)

unit: tests
	@tests/run.sh --unit-only $(BUILD)

# Unit and integration tests (tools against the emulator too) with every
# binary instrumented. Distinct exit codes keep a sanitizer report from
# passing for an expected failure exit of a tool.
SAN_ENV := ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0 \
           UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1
asan-test:
	@$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1 OPT='-O1 -g' all tests
	@$(SAN_ENV) TFREC_EXTRA_CFLAGS='-fsanitize=address,undefined' \
	    tests/run.sh --no-python build-asan

bench: ensure-deps
	@$(MAKE) --no-print-directory all benches
	@bench/run.sh $(BUILD)

demo: ensure-deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

deps:
	scripts/install-deps.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/include/tfrec $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/tfrec/*.h $(DESTDIR)$(PREFIX)/include/tfrec/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtfrec.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtfrec.so.$(SOVERSION)
	ln -sf libtfrec.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtfrec.so
	$(PC_SUBST) tfrec.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/tfrec.pc  # PREFIX of this install
	$(if $(TOOL_BINS),install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/)
	@if [ -d python/tfrec ]; then \
	    install -d $(DESTDIR)$(PYTHON_SITEDIR)/tfrec && \
	    install -m 644 python/tfrec/*.py $(DESTDIR)$(PYTHON_SITEDIR)/tfrec/; fi

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj $(BUILD)/obj-testing -name '*.d' 2>/dev/null)
