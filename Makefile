# libtfrec: one non-recursive Makefile, everything built under $(BUILD)/.
#
#   make            libraries (static + shared, one per part) and tools
#   make WITH_IMAGE=0 WITH_BIGTABLE=0 WITH_STORAGE=0
#                   leave those parts out, with the tools, tests and
#                   benchmarks that need them (default: build every part)
#   make test       install missing build dependencies, build, run every test
#   make check      build, run the unit tests and the fast integration and
#                   Python tests (tests/fast.list), for the edit loop
#   make asan-test  unit tests under AddressSanitizer + UBSan (build-asan/)
#   make tsan-test  the threaded unit tests under ThreadSanitizer (build-tsan/)
#   make fuzz       libFuzzer targets (tests/fuzz/) built with clang into
#                   build-fuzz/, each run FUZZ_SECONDS (30), FUZZ_JOBS (1) at
#                   a time; fails on a finding
#   make bench      benchmarks (print ratios against peers)
#   make demo       the end-to-end pipeline on generated sample data
#   make install    PREFIX=/usr/local DESTDIR= (every part built, with its .pc;
#                   the tools with their man pages and bash completions)
#   make uninstall  PREFIX=... DESTDIR=...: remove what `make install` put there
#   make python-wheel
#                   a wheel of the Python package with the shared libraries
#                   inside (build/dist/), for pip install into a venv
#   make deps       install the Debian packages the build and tests need
#                   (the lists in deps/: build.txt, test.txt, runtime.txt)
#   make V=1        print every command line (the default prints one short
#                   line per step: `CC lib/record/reader.o`)
#   make WERROR=1   warnings are errors (CI; not the default, so that a newer
#                   compiler's new warnings do not break users' builds)
#
# Modules add files under lib/<module>/, tools/<name>/, tests/unit/test_*.c,
# bench/*.c and proto/**.proto; the globs below pick them up. A new module
# (directory under lib/) must be given to a part in the table below.

VERSION   := $(shell sed -n 's/^#define TFREC_VERSION_STRING "\(.*\)"/\1/p' include/tfrec/version.h)
# Soname policy: lib<part>.so.<major> (libtfrec.so.1). Within a major version
# the libraries only grow: functions keep their signature and meaning, new
# ones go in a new version node inheriting TFREC_1.0, public structs grow at
# their end (struct_size). A change that breaks a built program raises the
# major version, hence the soname. The file is lib<part>.so.<VERSION>.
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
BUILD     ?= build
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
MANDIR    ?= $(PREFIX)/share/man
# bash-completion loads completions/<command> from the share/ directories of
# XDG_DATA_DIRS (/usr/local/share and /usr/share by default).
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
# Where Debian's python3 looks: /usr/lib/python3/dist-packages for /usr,
# <prefix>/lib/python3.X/dist-packages otherwise. Either way three levels
# below LIBDIR, where python/tfrec/_lib.py looks for libtfrec.so.
PYVER     := $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHON_SITEDIR ?= $(if $(filter /usr,$(PREFIX)),$(LIBDIR)/python3/dist-packages,$(LIBDIR)/python$(PYVER)/dist-packages)
CC        ?= cc
CXX       ?= c++
NM        ?= nm
OBJCOPY   ?= objcopy
PROTOC_C  ?= protoc-c

# ------------------------------------------------------------------ parts
# The library is split into parts, each a static and a shared library with
# its own pkg-config file, so that a program links the dependencies of what
# it uses and nothing else (a record reader pulls in neither gRPC nor
# libjpeg):
#
#   part            modules (lib/<m>/)                   protos         needs
#   tfrec           crc32c io fs record example util dataset  tensorflow/    zlib, libprotobuf-c (+ libisal when present)
#   tfrec-image     image imagenet tar                   -              tfrec, libjpeg, libpng
#   tfrec-gcp       gauth (Google credentials, tokens)   -              tfrec, libcurl, libcrypto (token signing)
#   tfrec-bigtable  bigtable                             google/        tfrec-gcp, tfrec, libprotobuf-c, grpc
#   tfrec-storage   storage (gs://)                      -              tfrec-gcp, tfrec, libcurl
#
# tfrec-gcp is a shared part, not an archive linked into both users: the
# token cache is process-wide state, and one copy of it per .so would fetch
# a token per part. It is built when either of its users is.
WITH_IMAGE    ?= 1
WITH_BIGTABLE ?= 1
WITH_STORAGE  ?= 1
ALL_PARTS := tfrec tfrec-image tfrec-gcp tfrec-bigtable tfrec-storage
WITH_GCP  := $(if $(filter 1,$(WITH_BIGTABLE) $(WITH_STORAGE)),1,0)
PARTS     := tfrec $(if $(filter 1,$(WITH_IMAGE)),tfrec-image) $(if $(filter 1,$(WITH_GCP)),tfrec-gcp) $(if $(filter 1,$(WITH_BIGTABLE)),tfrec-bigtable) $(if $(filter 1,$(WITH_STORAGE)),tfrec-storage)

# ISA-L speeds up GZIP/ZLIB and is used when present (see README).
HAVE_ISAL := $(shell pkg-config --exists libisal 2>/dev/null && echo 1)
ISAL_DEF  := $(if $(HAVE_ISAL),-DTFREC_HAVE_ISAL=1)

tfrec_MODULES          := crc32c io fs record example util dataset
tfrec_PROTOS           := tensorflow
tfrec_PKGS             := zlib libprotobuf-c $(if $(HAVE_ISAL),libisal)
tfrec-image_MODULES    := image imagenet tar
tfrec-image_REQUIRES   := tfrec
tfrec-image_PKGS       := libjpeg libpng
tfrec-gcp_MODULES      := gauth
tfrec-gcp_REQUIRES     := tfrec
tfrec-gcp_PKGS         := libcurl libcrypto
tfrec-bigtable_MODULES := bigtable
tfrec-bigtable_PROTOS  := google
tfrec-bigtable_REQUIRES:= tfrec-gcp tfrec
tfrec-bigtable_PKGS    := libprotobuf-c grpc
tfrec-storage_MODULES  := storage
tfrec-storage_REQUIRES := tfrec-gcp tfrec
tfrec-storage_PKGS     := libcurl

# Programs belong to the part of the module they exercise: a unit test
# tests/unit/test_<module>[_what].c, a benchmark bench/<module>[_what].c, and
# a tool as listed here. Anything else belongs to the core.
TOOL_PART_imagenet2tfrec := tfrec-image
TOOL_PART_tfrec2bt       := tfrec-bigtable
TOOL_PART_bt2tfrec       := tfrec-bigtable
# Libraries a tool needs beyond its part: imagenet2tfrec downloads the
# ImageNet tarballs itself (libcurl; MD5 through libcrypto).
TOOL_LIBS_imagenet2tfrec := $(shell pkg-config --libs libcurl libcrypto 2>/dev/null)
# Parts every tool also uses when they are built: with tfrec-storage each
# path a tool takes may be gs:// (tools/common/files.h; the tools' objects
# get -DTFREC_CLI_HAVE_STORAGE); without it the tools refuse gs:// by name.
# The shared tools/common code calls them, hence one list for all tools.
TOOLS_OPTIONAL_PARTS := tfrec-storage

# part_of(module): the part holding a module (tfrec for a non-module name),
# and the part of a tool, a unit test (test_<module>_...) and a benchmark.
part_of    = $(firstword $(foreach p,$(ALL_PARTS),$(if $(filter $(1),$($(p)_MODULES)),$(p))) tfrec)
tool_part  = $(or $(TOOL_PART_$(1)),tfrec)
tool_parts = $(call tool_part,$(1)) $(filter-out $(call tool_part,$(1)),$(call built,$(TOOLS_OPTIONAL_PARTS)))
test_part  = $(call part_of,$(word 2,$(subst _, ,$(1))))
bench_part = $(call part_of,$(word 1,$(subst _, ,$(1))))
# closure(part): the part and the parts it requires, in link order.
closure  = $(1) $(foreach r,$($(1)_REQUIRES),$(call closure,$(r)))
archives = $(foreach q,$(1),$(foreach p,$(call closure,$(q)),$(BUILD)/lib$(p).a))
libs_of  = $(foreach q,$(1),$(foreach p,$(call closure,$(q)),$($(p)_LIBS))) -pthread -lm
built    = $(filter $(PARTS),$(1))

ALL_MODULES := $(sort $(patsubst lib/%/,%,$(dir $(wildcard lib/*/*.c))))
ORPHANS     := $(filter-out $(foreach p,$(ALL_PARTS),$($(p)_MODULES)),$(ALL_MODULES))
$(if $(ORPHANS),$(error lib/$(firstword $(ORPHANS)) belongs to no part: add it to a *_MODULES list in the Makefile))
ORPHAN_PROTOS := $(filter-out $(foreach p,$(ALL_PARTS),$($(p)_PROTOS)),$(notdir $(wildcard proto/*)))
$(if $(ORPHAN_PROTOS),$(error proto/$(firstword $(ORPHAN_PROTOS)) belongs to no part: add it to a *_PROTOS list in the Makefile))

# Per built part: sources, generated protobuf-c code, objects, the public
# headers it installs (include/tfrec/<module>.h; the core gets the rest) and
# the pkg-config flags of its dependencies.
define part_vars
$(1)_SRCS    := $$(sort $$(foreach m,$$($(1)_MODULES),$$(wildcard lib/$$(m)/*.c)))
$(1)_PROTO   := $$(sort $$(foreach d,$$($(1)_PROTOS),$$(shell find proto/$$(d) -name '*.proto')))
$(1)_PB_C    := $$($(1)_PROTO:proto/%.proto=$(BUILD)/gen/%.pb-c.c)
$(1)_OBJS    := $$($(1)_SRCS:%.c=$(BUILD)/obj/%.o) $$($(1)_PB_C:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)
$(1)_CFLAGS  := $$(shell pkg-config --cflags $$($(1)_PKGS) 2>/dev/null)
$(1)_LIBS    := $$(shell pkg-config --libs $$($(1)_PKGS) 2>/dev/null)
endef
$(foreach p,$(PARTS),$(eval $(call part_vars,$(p))))
OPTIONAL_PARTS := $(filter-out tfrec,$(ALL_PARTS))
$(foreach p,$(OPTIONAL_PARTS),$(eval $(p)_HEADERS := $(foreach m,$($(p)_MODULES),$(wildcard include/tfrec/$(m).h include/tfrec/$(m)_*.h))))
tfrec_HEADERS := $(filter-out $(foreach p,$(OPTIONAL_PARTS),$($(p)_HEADERS)),$(wildcard include/tfrec/*.h))

OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ifeq ($(WERROR),1)
WARN     += -Werror
endif
# The code that ships (library, tools) also gets -Wconversion (implicit
# narrowing and sign changes); tests and benchmarks do not.
$(BUILD)/obj/lib/%.o $(BUILD)/obj/tools/%.o $(BUILD)/obj-testing/tools/%.o: WARN += -Wconversion
CPPFLAGS += -D_GNU_SOURCE -DTFREC_VERSION_STRING='"$(VERSION)"' $(ISAL_DEF) \
            -Iinclude -Ilib -I$(BUILD)/gen $(foreach p,$(PARTS),$($(p)_CFLAGS))
CFLAGS   += -std=c11 $(WARN) $(OPT) -fPIC -fvisibility=hidden -pthread
LDFLAGS  += -Wl,--as-needed

ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS   += $(SAN_FLAGS)
LDFLAGS  += $(SAN_FLAGS)
endif
# ThreadSanitizer builds (make tsan-test sets SANITIZE=thread).
ifeq ($(SANITIZE),thread)
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
CFLAGS   += $(SAN_FLAGS)
LDFLAGS  += $(SAN_FLAGS)
endif
# Fuzzing builds (make fuzz sets FUZZ=1 and CC=clang): every object carries
# libFuzzer's coverage hooks; the fuzz programs link libFuzzer's main.
ifeq ($(FUZZ),1)
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=undefined
CFLAGS   += $(SAN_FLAGS)
LDFLAGS  += -fsanitize=address,undefined
endif

# ------------------------------------------------------------------ output
# Quiet by default: each step prints what it makes (`CC lib/record/reader.o`,
# `AR build/libtfrec.a`, `LD build/bin/tfrec`); V=1 prints the commands
# instead. $(call say,WHAT,TARGET) is a recipe line of its own; $(Q) prefixes
# the commands.
# make -s prints nothing at all.
V ?= 0
ifeq ($(V),1)
Q   :=
say  =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q   := @
say  =
else
Q   := @
say  = @printf '%-7s %s\n' '$(1)' '$(patsubst $(BUILD)/obj/%,%,$(2))'
endif

# ------------------------------------------------------------------ programs
PB_C       := $(foreach p,$(PARTS),$($(p)_PB_C))
PB_H       := $(PB_C:.c=.h)
TOOLS      := $(filter-out common,$(notdir $(wildcard tools/*)))
TOOLS      := $(foreach t,$(TOOLS),$(if $(wildcard tools/$(t)/*.c),$(if $(call built,$(call tool_part,$(t))),$(t))))
TOOL_BINS  := $(TOOLS:%=$(BUILD)/bin/%)
# Test builds of tools (fault injection), see below.
TEST_TOOLS     := $(filter tfrec2bt,$(TOOLS))
TEST_TOOL_BINS := $(TEST_TOOLS:%=$(BUILD)/test-bin/%)
# Test programs tests/tools/<module>_<what>.c: drivers of internals that the
# Python and integration tests run, built with -DTFREC_TESTING into
# test-bin/ and belonging to their module's part.
TEST_PROGS     := $(patsubst tests/tools/%.c,%,$(sort $(wildcard tests/tools/*.c)))
TEST_PROGS     := $(foreach t,$(TEST_PROGS),$(if $(call built,$(call bench_part,$(t))),$(t)))
TEST_TOOL_BINS += $(TEST_PROGS:%=$(BUILD)/test-bin/%)
# Code shared by the tools, as an archive: a program takes only what it calls.
TOOLS_LIB  := $(BUILD)/tools/libcommon.a
TOOLS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/common/*.c))
TESTS      := $(patsubst tests/unit/%.c,%,$(sort $(wildcard tests/unit/test_*.c)))
TESTS      := $(foreach t,$(TESTS),$(if $(call built,$(call test_part,$(t))),$(t)))
# Tests of API-wide contracts cover every part, so they need all of them.
ALL_PART_TESTS := test_abi test_api
TESTS      := $(if $(filter-out $(PARTS),$(ALL_PARTS)),$(filter-out $(ALL_PART_TESTS),$(TESTS)),$(TESTS))
TEST_BINS  := $(TESTS:%=$(BUILD)/tests/%) $(BUILD)/tests/test_cxx_headers
# libFuzzer targets tests/fuzz/fuzz_<module>[_what].c, one per parser,
# belong to their module's part like unit tests.
FUZZERS    := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZERS    := $(foreach f,$(FUZZERS),$(if $(call built,$(call test_part,$(f))),$(f)))
FUZZ_BINS  := $(FUZZERS:%=$(BUILD)/fuzz/%)
BENCHES    := $(patsubst bench/%.c,%,$(sort $(wildcard bench/*.c)))
BENCHES    := $(foreach b,$(BENCHES),$(if $(call built,$(call bench_part,$(b))),$(b)))
BENCH_BINS := $(BENCHES:%=$(BUILD)/bench/%)

.PHONY: all lib tools helpdocs tests benches fuzzers fuzz test test-all check unit asan-test tsan-test bench demo install uninstall python-wheel deps ensure-deps clean FORCE
all: lib tools helpdocs

lib: $(foreach p,$(PARTS),$(BUILD)/lib$(p).a $(BUILD)/lib$(p).so.$(VERSION) $(BUILD)/$(p).pc) $(BUILD)/parts
tools: $(TOOL_BINS)
# Man pages and bash completions, generated from each tool's --helpfull.
MAN_PAGES   := $(TOOLS:%=$(BUILD)/man/%.1)
COMPLETIONS := $(TOOLS:%=$(BUILD)/completions/%)
helpdocs: $(MAN_PAGES) $(COMPLETIONS)
tests: $(TEST_BINS) $(TEST_TOOL_BINS)
benches: $(BENCH_BINS)
fuzzers: $(FUZZ_BINS)

# The parts this build holds, for tests/run.sh (rewritten only on change).
$(BUILD)/parts: FORCE
	@mkdir -p $(@D)
	@echo '$(strip $(PARTS))' | cmp -s - $@ || echo '$(strip $(PARTS))' > $@

# ------------------------------------------------------------------ codegen
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h &: proto/%.proto
	@mkdir -p $(BUILD)/gen
	$(call say,PROTOC,$<)
	$(Q)$(PROTOC_C) -Iproto --c_out=$(BUILD)/gen $<
# Generated sources and objects only named by pattern rules are
# intermediates to make; keep it from deleting them (which would rebuild
# them on every run).
.SECONDARY:

# ------------------------------------------------------------------ compile
# protobuf-c names the generated symbols after the proto package
# (tensorflow__example__pack, google__rpc__status__descriptor), outside the
# tfrec_ namespace: in a static link they could clash with the user's own
# copy of the same protos. They get a tfrec_ prefix at the symbol level:
# `nm` of the generated objects gives the list, and objcopy --redefine-syms
# applies it to every object compiled here (the generated ones, the library's,
# and the tests' and benchmarks' that call generated code directly). Source
# stays as protoc-c writes it, and the list is exact; a preprocessor rename
# would need the names before compiling and a forced include everywhere.
PB_SYMS := $(BUILD)/pb-rename.syms

$(BUILD)/obj/pb-raw/%.o: $(BUILD)/gen/%.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -Wno-missing-braces -MMD -MP -c $< -o $@

$(PB_SYMS): $(PB_C:$(BUILD)/gen/%.c=$(BUILD)/obj/pb-raw/%.o)
	$(call say,GEN,$@)
	$(Q)$(NM) -g --defined-only $^ | awk 'NF == 3 && $$3 !~ /^tfrec_/ {print $$3, "tfrec_" $$3}' | sort -u > $@

$(BUILD)/obj/gen/%.o: $(BUILD)/obj/pb-raw/%.o $(PB_SYMS)
	@mkdir -p $(dir $@)
	$(Q)$(OBJCOPY) --redefine-syms=$(PB_SYMS) $< $@

$(BUILD)/obj/%.o: %.c $(PB_SYMS) | $(PB_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
	$(Q)$(OBJCOPY) --redefine-syms=$(PB_SYMS) $@

# ------------------------------------------------------------------ libraries
# Each part: lib<part>.a, lib<part>.so.<VERSION> linked against the parts it
# requires (-z defs: every symbol resolved at build time), and <part>.pc.
# A shared library exports what include/tfrec/ declares, in the version node
# TFREC_1.0 (lib/libtfrec.map). Besides, libtfrec.so exports the internals
# the other parts call (error reporting: one per-thread message for all
# parts), those declared with TFREC_PRIVATE_API in lib/ (see
# lib/util/private_api.h), in a node TFREC_PRIVATE_<VERSION>: no
# compatibility promise, and a part from another build refuses to load
# instead of misbehaving. An internal function newly used by a part fails
# that part's link (-z defs) until it is marked so.
comma := ,
# A part finds the parts it requires next to itself ($ORIGIN), wherever it
# is loaded from (a build tree, a Python program dlopen()ing it by path).
pc_subst = sed -e 's|@PREFIX@|$(PREFIX)|g; s|@LIBDIR@|$(LIBDIR)|g; s|@VERSION@|$(VERSION)|g; s|@PKGS@|$($(1)_PKGS)|g'
# libtfrec-gcp.so exports its internals to the parts that require it the
# same way (its TFREC_PRIVATE_API functions; the node lists every part's).
map_of   = $(if $(filter tfrec tfrec-gcp,$(1)),$(BUILD)/libtfrec.map,lib/libtfrec.map)

define part_rules
$(BUILD)/lib$(1).a: $$($(1)_OBJS)
	@rm -f $$@
	$$(call say,AR,$$@)
	$$(Q)$$(AR) rcs $$@ $$^

$(BUILD)/lib$(1).so.$(VERSION): $$($(1)_OBJS) $(call map_of,$(1)) $$(foreach r,$$($(1)_REQUIRES),$(BUILD)/lib$$(r).so.$(VERSION))
	$$(call say,LD,$$@)
	$$(Q)$$(CC) -shared -Wl,-soname,lib$(1).so.$(SOVERSION) -Wl,--version-script=$(call map_of,$(1)) -Wl,-z,defs $$(if $$($(1)_REQUIRES),-Wl$$(comma)-rpath$$(comma)'$$$$ORIGIN') \
	    $$(LDFLAGS) -o $$@ $$(filter %.o %.so.$(VERSION),$$^) $$($(1)_LIBS) -pthread -lm
	$$(Q)ln -sf lib$(1).so.$(VERSION) $(BUILD)/lib$(1).so.$(SOVERSION)
	$$(Q)ln -sf lib$(1).so.$(SOVERSION) $(BUILD)/lib$(1).so

$(BUILD)/$(1).pc: $(1).pc.in Makefile
	$$(call say,GEN,$$@)
	$$(Q)$$(call pc_subst,$(1)) $$< > $$@
endef
$(foreach p,$(PARTS),$(eval $(call part_rules,$(p))))

PRIVATE_HDRS := $(shell grep -rl --include='*.h' 'TFREC_PRIVATE_API.*tfrec_' lib)
$(BUILD)/libtfrec.map: lib/libtfrec.map $(PRIVATE_HDRS) include/tfrec/version.h
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q){ echo 'TFREC_PRIVATE_$(VERSION) {'; echo '  global:'; \
	  grep -hoE 'TFREC_PRIVATE_API[^(]*tfrec_[A-Za-z0-9_]+ *\(' $(PRIVATE_HDRS) /dev/null | \
	    grep -oE 'tfrec_[A-Za-z0-9_]+ *\($$' | tr -d ' (' | sort -u | sed 's/.*/    &;/'; \
	  echo '};'; cat lib/libtfrec.map; } > $@

$(TOOLS_LIB): $(TOOLS_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)$(AR) rcs $@ $^

# ------------------------------------------------------------------ programs
# Tools, tests and benchmarks link the static libraries of their parts (and
# of the parts those require), so they run without installation and carry
# only those parts' dependencies. $+ keeps a repeated archive (libtfrec.a
# after each part that needs it) where $^ would keep only the first.
define program
$(1): $(2) $(TOOLS_LIB) $$(call archives,$(3))
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$+ $$(call libs_of,$(3)) $$(TOOL_LIBS_$$(notdir $$@))
endef
upper = $(shell echo '$(1)' | tr a-z A-Z)
ifneq ($(call built,$(TOOLS_OPTIONAL_PARTS)),)
$(BUILD)/obj/tools/%.o $(BUILD)/obj-testing/tools/%.o: CPPFLAGS += \
    $(foreach p,$(call built,$(TOOLS_OPTIONAL_PARTS)),-DTFREC_CLI_HAVE_$(call upper,$(patsubst tfrec-%,%,$(p))))
endif
$(foreach t,$(TOOLS),$(eval $(call program,$(BUILD)/bin/$(t),$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/$(t)/*.c)),$(call tool_parts,$(t)))))
$(foreach t,$(filter-out $(ALL_PART_TESTS),$(TESTS)),$(eval $(call program,$(BUILD)/tests/$(t),$(BUILD)/obj/tests/unit/$(t).o $(BUILD)/obj/tests/unit/harness.o,$(call test_part,$(t)))))
$(foreach b,$(BENCHES),$(eval $(call program,$(BUILD)/bench/$(b),$(BUILD)/obj/bench/$(b).o,$(call bench_part,$(b)))))

$(BUILD)/tests/test_api: $(BUILD)/obj/tests/unit/test_api.o $(BUILD)/obj/tests/unit/harness.o $(foreach p,$(OPTIONAL_PARTS),$(call archives,$(p)))
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $+ $(foreach p,$(OPTIONAL_PARTS),$(call libs_of,$(p)))

# The ABI test is a program of its own, linked against the shared core
# library as an application built against an older release would be.
# It covers every part's structs, so it is built only when all parts are.
$(BUILD)/tests/test_abi: $(BUILD)/obj/tests/unit/test_abi.o $(BUILD)/obj/tests/unit/harness.o $(foreach p,$(ALL_PARTS),$(BUILD)/lib$(p).so.$(VERSION))
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(BUILD) $(ALL_PARTS:%=-l%) -ldl -Wl,-rpath,'$$ORIGIN/..'

# Test builds of tools (-DTFREC_TESTING compiles in the fault injection the
# integration tests use), kept out of bin/ and never installed.
$(BUILD)/obj-testing/%.o: %.c $(PB_SYMS) | $(PB_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -DTFREC_TESTING $(CFLAGS) -MMD -MP -c $< -o $@
	$(Q)$(OBJCOPY) --redefine-syms=$(PB_SYMS) $@
$(foreach t,$(TEST_TOOLS),$(eval $(call program,$(BUILD)/test-bin/$(t),$(patsubst %.c,$(BUILD)/obj-testing/%.o,$(wildcard tools/$(t)/*.c)),$(call tool_parts,$(t)))))
$(foreach t,$(TEST_PROGS),$(eval $(call program,$(BUILD)/test-bin/$(t),$(BUILD)/obj-testing/tests/tools/$(t).o,$(call bench_part,$(t)))))

# libFuzzer targets (built by `make fuzz` with clang and FUZZ=1).
define fuzzer
$(BUILD)/fuzz/$(1): $(BUILD)/obj/tests/fuzz/$(1).o $$(call archives,$(2))
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(CFLAGS) $$(LDFLAGS) -fsanitize=fuzzer -o $$@ $$^ $$(call libs_of,$(2))
endef
$(foreach f,$(FUZZERS),$(eval $(call fuzzer,$(f),$(call test_part,$(f)))))

# The public headers must compile as C++ too.
$(BUILD)/tests/test_cxx_headers: tests/unit/cxx_headers.cpp $(BUILD)/obj/tests/unit/harness.o $(BUILD)/libtfrec.a
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)
	$(Q)$(CXX) -std=c++11 -Wall -Wextra -pedantic $(OPT) $(SAN_FLAGS) -Iinclude -Itests/unit -o $@ $^ $(call libs_of,tfrec)

# ------------------------------------------------------------------ help
# A tool's man page and bash completion come from its own --helpfull
# (scripts/helpdoc.sh), so they cannot drift from the flags it accepts.
$(BUILD)/man/%.1: $(BUILD)/bin/% scripts/helpdoc.sh
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)scripts/helpdoc.sh man $< $(VERSION) > $@.tmp && mv $@.tmp $@
$(BUILD)/completions/%: $(BUILD)/bin/% scripts/helpdoc.sh
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)scripts/helpdoc.sh completion $< > $@.tmp && mv $@.tmp $@

# ------------------------------------------------------------------ run
# `test` and `demo` first make sure the Debian packages are there, then
# re-enter make so the pkg-config results above are computed afresh.
# install-deps.sh asks dpkg about every package it knows (including the test
# tools: Go for the emulator fallback, Python modules) and returns at once
# when all are there.
ensure-deps:
	@scripts/install-deps.sh

test: ensure-deps
	@$(MAKE) --no-print-directory test-all

# Unit test programs, integration scripts and Python files run TEST_JOBS
# at a time (tests/run.sh --jobs): one per core by default.
TEST_JOBS ?= $(shell nproc)

# Every test (what `make test` runs once the dependencies are there).
test-all: all tests
	@tests/run.sh --jobs=$(TEST_JOBS) $(BUILD)

# The edit loop: unit tests, then the integration scripts and Python test
# files named in tests/fast.list (chosen by measured time, see
# docs/testing.md). `make test` stays the full suite.
check: all tests
	@tests/run.sh --fast --jobs=$(TEST_JOBS) $(BUILD)

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
	    tests/run.sh --no-python --jobs=$(TEST_JOBS) build-asan

# ThreadSanitizer over the unit tests whose code runs threads: Bigtable
# parallel read streams and the writer's completion thread, dataset reader
# threads (and the image stage they run), converter workers, the CRC32C
# dispatch's once-only choice, the file system registry, storage's parallel
# ranged reads. tests/unit/tsan.supp
# holds the suppressions, each with its reason. A report exits 66.
# test_bigtable_pollers is left out: its many-connection cases run against
# deadlines that TSan's slowdown exceeds (DEADLINE_EXCEEDED, no race
# reported; docs/testing.md).
TSAN_TESTS := test_bigtable_reader test_bigtable_writer \
              test_crc32c test_dataset test_fs test_image_decode test_imagenet test_imagenet_tasks \
              test_storage_http test_storage_parts
TSAN_BUILD ?= build-tsan
tsan-test:
	@$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) SANITIZE=thread OPT='-O1 -g' \
	    $(TSAN_BUILD)/parts $(addprefix $(TSAN_BUILD)/tests/,$(filter $(TSAN_TESTS),$(TESTS)))
	@TSAN_OPTIONS="suppressions=$(CURDIR)/tests/unit/tsan.supp halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
	    tests/run.sh --unit-only --only "$(filter $(TSAN_TESTS),$(TESTS))" $(TSAN_BUILD)

# libFuzzer on every parser: clang builds the library and the targets with
# ASan + UBSan into FUZZ_BUILD, then each target runs FUZZ_SECONDS from its
# generated seeds and its corpus (kept there between runs). Resource bombs
# count as findings (FUZZ_RSS_MB, FUZZ_TIMEOUT seconds per input).
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_RSS_MB  ?= 2048
FUZZ_TIMEOUT ?= 10
FUZZ_JOBS    ?= 1
fuzz:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) FUZZ=1 OPT='-O1 -g' fuzzers
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RSS_MB=$(FUZZ_RSS_MB) FUZZ_TIMEOUT=$(FUZZ_TIMEOUT) FUZZ_JOBS=$(FUZZ_JOBS) \
	    tests/fuzz/run.sh $(FUZZ_BUILD)

bench: ensure-deps
	@$(MAKE) --no-print-directory all benches
	@bench/run.sh $(BUILD)

# The demo prints its own steps; the build's output goes to a log, shown
# only when the build fails.
demo: ensure-deps
	@mkdir -p $(BUILD)
	@echo "demo: building the library and tools (log: $(BUILD)/demo-build.log)"
	@$(MAKE) --no-print-directory all >$(BUILD)/demo-build.log 2>&1 || \
	    { tail -40 $(BUILD)/demo-build.log; echo "demo: the build failed (make V=1 for the commands)"; exit 1; }
	@scripts/demo.sh $(BUILD)

deps:
	scripts/install-deps.sh

# Every built part: its headers (tfrec-gcp has none: its API is internal),
# both libraries, the soname links and its .pc (naming the PREFIX of this
# install); then the tools and the Python package.
define install_part
$(if $($(1)_HEADERS),install -m 644 $($(1)_HEADERS) $(DESTDIR)$(PREFIX)/include/tfrec/)
install -m 644 $(BUILD)/lib$(1).a $(DESTDIR)$(LIBDIR)/
install -m 755 $(BUILD)/lib$(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/
ln -sf lib$(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/lib$(1).so.$(SOVERSION)
ln -sf lib$(1).so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/lib$(1).so
$(call pc_subst,$(1)) $(1).pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$(1).pc

endef
# The tools link their parts statically (see "programs" above): they need
# no libtfrec*.so at run time, so they start from any PREFIX without
# LD_LIBRARY_PATH or an rpath; a part's .so finds the parts it requires
# beside itself ($ORIGIN).
install: all
	install -d $(DESTDIR)$(PREFIX)/include/tfrec $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin
	$(foreach p,$(PARTS),$(call install_part,$(p)))
	$(if $(TOOL_BINS),install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/)
	$(if $(TOOL_BINS),install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASH_COMPLETION_DIR))
	$(if $(TOOL_BINS),install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(TOOL_BINS),install -m 644 $(COMPLETIONS) $(DESTDIR)$(BASH_COMPLETION_DIR)/)
	@if [ -d python/tfrec ]; then \
	    install -d $(DESTDIR)$(PYTHON_SITEDIR)/tfrec && \
	    install -m 644 python/tfrec/*.py python/tfrec/*.pyi python/tfrec/py.typed \
	        $(DESTDIR)$(PYTHON_SITEDIR)/tfrec/; fi

# Everything any configuration installs (all parts, all tools), so that an
# uninstall run with other WITH_* switches still removes it all; then the
# directories that are the project's own, when empty.
ALL_TOOLS := $(filter-out common,$(notdir $(wildcard tools/*)))
INSTALLED_FILES = \
    $(addprefix $(PREFIX)/include/tfrec/,$(notdir $(wildcard include/tfrec/*.h))) \
    $(foreach p,$(ALL_PARTS),$(addprefix $(LIBDIR)/lib$(p),.a .so .so.$(SOVERSION) .so.$(VERSION)) \
        $(LIBDIR)/pkgconfig/$(p).pc) \
    $(foreach t,$(ALL_TOOLS),$(PREFIX)/bin/$(t) $(MANDIR)/man1/$(t).1 $(BASH_COMPLETION_DIR)/$(t)) \
    $(addprefix $(PYTHON_SITEDIR)/tfrec/,$(notdir $(wildcard python/tfrec/*.py python/tfrec/*.pyi)) \
        py.typed)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	rm -rf $(DESTDIR)$(PYTHON_SITEDIR)/tfrec/__pycache__
	-rmdir $(DESTDIR)$(PREFIX)/include/tfrec $(DESTDIR)$(PYTHON_SITEDIR)/tfrec 2>/dev/null

# The Python package with the shared libraries of every built part copied
# inside (tfrec/_lib.py finds them there first), as a wheel in
# $(BUILD)/dist/: `pip install $(BUILD)/dist/tfrec-*.whl` into a venv needs
# no make install, TFREC_LIBRARY or LD_LIBRARY_PATH. Built offline with
# Debian's python3-setuptools and python3-wheel; the wheel is tagged for
# this Python and platform, since it holds this machine's binaries.
WHEEL_SRC := $(BUILD)/python-wheel
python-wheel: lib
	rm -rf $(WHEEL_SRC) $(BUILD)/dist
	mkdir -p $(WHEEL_SRC) $(BUILD)/dist
	cp -r python/setup.py python/tfrec $(WHEEL_SRC)/
	rm -rf $(WHEEL_SRC)/tfrec/__pycache__ $(WHEEL_SRC)/tfrec/libtfrec*.so*
	$(foreach p,$(PARTS),cp $(BUILD)/lib$(p).so.$(VERSION) $(WHEEL_SRC)/tfrec/lib$(p).so.$(SOVERSION) &&) true
	cd $(WHEEL_SRC) && PIP_DISABLE_PIP_VERSION_CHECK=1 /usr/bin/python3 -m pip wheel --no-index \
	    --no-build-isolation --no-deps -q -w $(abspath $(BUILD)/dist) .
	@ls $(BUILD)/dist/*.whl

clean:
	rm -rf build build-asan build-core build-fuzz build-tsan $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/obj-testing -name '*.d' 2>/dev/null)
