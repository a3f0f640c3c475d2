# mugen: plain Makefile. `make` builds build/mugen and build/libmugen.a; `make test` runs the
# unit tests and the program suite, then both again under ASan+UBSan; `make bench`
# builds and runs the CPU benchmarks. WERROR=1 turns warnings into errors (CI).
CC      ?= cc
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) -Iinclude -fPIC
LDLIBS  := -lcjson -lm -ldl -lpthread
B       ?= build

LIB_SRC := $(wildcard src/base/*.c src/ir/*.c src/eval/*.c src/verify/*.c src/opt/*.c \
           src/lower/*.c src/codegen/*.c src/codegen/cuda/*.c src/codegen/c/*.c src/runtime/*.c src/search/*.c src/tune/*.c src/*.c)
# Device code embedded at build time (tools/embed.sh): the C target's lib.h and the CUDA
# pieces in src/codegen/cuda/lib/, each an array cg_c_lib, cg_cuda_<piece> in $(B)/gen/.
EMBED_CUH := $(wildcard src/codegen/cuda/lib/*.cuh)
EMBED_C := $(EMBED_CUH:src/codegen/cuda/lib/%.cuh=$(B)/gen/cuda_%.c) $(B)/gen/c_lib.c $(B)/gen/ir_scalar.c
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o) $(EMBED_C:%.c=%.o)
HDRS    := $(wildcard include/*.h src/*/*.h src/ir/ops.def)
TEST_SRC := $(wildcard tests/unit/*.c)

.PHONY: all test test-unit test-programs test-gpu gpu-carry bench bench-cpu bench-search clean deps \
        fuzz-build fuzz-short mpi pylib
all: deps $(B)/mugen $(B)/unit $(B)/rt-faults $(B)/run-faults $(B)/run-random $(B)/run-program

$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/gen/cuda_%.c: src/codegen/cuda/lib/%.cuh tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh cg_cuda_$* $< >$@.tmp && mv $@.tmp $@

$(B)/gen/c_lib.c: src/codegen/c/lib.h tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh cg_c_lib $< >$@.tmp && mv $@.tmp $@

$(B)/gen/ir_scalar.c: src/ir/scalar.h tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh cg_ir_scalar $< >$@.tmp && mv $@.tmp $@

$(B)/gen/%.o: $(B)/gen/%.c
	$(CC) $(CFLAGS) -c $< -o $@

.SECONDARY: $(EMBED_C)

$(B)/libmugen.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The shared library the Python package binds (python/, docs/python.md): `make pylib`
# -> build/libmugen.so, from the same (position-independent) objects as libmugen.a.
$(B)/libmugen.so: $(LIB_OBJ)
	$(CC) -shared $(CFLAGS) $^ $(LDLIBS) -o $@

pylib: $(B)/libmugen.so

$(B)/mugen: $(B)/cli/mugen.o $(B)/cli/search.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/unit: $(TEST_SRC:%.c=$(B)/%.o) $(B)/libmugen.a | $(B)/fake-cuda.so
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# A stand-in libcuda beside the unit runner: the library API's CUDA path without a GPU
# (tests/fakecuda/fake_cuda.h).
$(B)/fake-cuda.so: tests/fakecuda/fake_cuda.c tests/fakecuda/fake_cuda.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared $< -lpthread -o $@

$(B)/bench/eval.o $(B)/bench/verify.o $(B)/bench/ragged/prelude.o: CFLAGS += -Isrc
$(B)/bench-verify: $(B)/bench/verify.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/bench-eval: $(B)/bench/eval.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/bench-prelude: $(B)/bench/ragged/prelude.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/bench/selector/bench_select.o: CFLAGS += -Isrc
$(B)/bench-select: $(B)/bench/selector/bench_select.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(TEST_SRC:%.c=$(B)/%.o): CFLAGS += -Isrc

$(B)/tests/gpu/rt_faults.o: CFLAGS += -Isrc
$(B)/rt-faults: $(B)/tests/gpu/rt_faults.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/run-faults: $(B)/tests/gpu/run_faults.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(B)/run-random: $(B)/tests/gpu/run_random.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# The library API's example (examples/c): only include/mugen.h and libmugen.a; libcuda is
# loaded at run time, so it builds without CUDA (docs/runtime.md).
$(B)/run-program: $(B)/examples/c/run_program.o $(B)/libmugen.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# GPU checks: run through the device tool (docs/codegen.md); the binaries are built here and
# carried with libcjson in .carry/lib. `make gpu-carry` prepares that folder.
gpu-carry: $(B)/mugen $(B)/rt-faults $(B)/run-faults $(B)/run-random $(B)/run-program $(B)/libmugen.so
	mkdir -p .carry/lib .carry/bin && cp $(B)/mugen $(B)/rt-faults $(B)/run-faults $(B)/run-random $(B)/run-program .carry/bin/ && cp $(B)/libmugen.so .carry/lib/ && cp -L $$(ldconfig -p | sed -n 's/.*libcjson.so.1 .*=> //p' | head -1) .carry/lib/
	if [ -d ../shared/data/lengths ]; then mkdir -p .carry/lengths && cp ../shared/data/lengths/*.txt .carry/lengths/; fi

test-gpu: $(B)/mugen $(B)/rt-faults $(B)/run-faults $(B)/run-random $(B)/run-program
	sh tools/gpu_check.sh $(B)

deps:
	@sh tools/deps.sh

SAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Everything on the CPU: unit tests and the program suite, on this build and under
# AddressSanitizer + UBSan (build/asan). Ends with "N passed, N failed".
test: deps
	$(MAKE) $(B)/mugen $(B)/unit $(B)/run-faults $(B)/run-random $(B)/run-program
	$(MAKE) B=build/asan OPT="$(SAN)" build/asan/mugen build/asan/unit
	$(MAKE) $(B)/libmugen.so
	-$(MAKE) fuzz-build
	-$(MAKE) mpi
	sh tests/run_all.sh $(B) build/asan

# The search over many processes (docs/search.md, "Ranks"): build/mpi/mugen, built with mpicc
# (Debian: libopenmpi-dev openmpi-bin); `mpirun -n 4 build/mpi/mugen search ...`.
mpi:
	@command -v mpicc >/dev/null 2>&1 || { echo "mugen: make mpi needs mpicc (Debian: apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 1; }
	$(MAKE) B=build/mpi CC=mpicc OPT="$(OPT) -DMG_MPI" build/mpi/mugen

test-unit: $(B)/unit
	MUGEN_CHECK=1 $(B)/unit

test-programs: $(B)/mugen
	MUGEN_CHECK=1 sh tests/programs/run.sh $(B)/mugen $(QUICK)

# The GPU benchmark (issue #6; needs a GPU: run it through the device tool, docs/benchmarks.md)
bench: $(B)/mugen
	sh bench/bench.sh $(B)

bench-cpu: $(B)/bench-eval $(B)/bench-verify $(B)/bench-prelude $(B)/bench-select
	$(B)/bench-eval examples/rmsnorm_linear_b8.mu
	$(B)/bench-verify
	$(B)/bench-prelude ../shared/data/lengths

clean:
	rm -rf build

# The search on each benchmark, pruning on and off (docs/search.md); long: TIME_LIMIT per run.
bench-search: $(B)/mugen
	sh bench/search.sh $(B)/mugen $(or $(TIME_LIMIT),600)

# Fuzzing the two front ends (.mu text and JSON) with libFuzzer, under ASan + UBSan
# (tests/fuzz/README.md). Needs clang and its fuzzer runtime (Debian: clang libclang-rt-dev,
# which tools/deps.sh installs); fuzz-build says so when they are missing. fuzz-short replays
# the corpus tests/fuzz/corpus and fuzzes each format FUZZ_SECONDS (30) seconds; make test
# runs it (tests/run_all.sh).
FUZZ_CC  ?= clang
FUZZ_OPT := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer -Wno-unknown-attributes
FUZZ_OBJ = $(patsubst %.c,$(B)/%.o,$(wildcard src/base/*.c src/ir/*.c src/eval/*.c))

fuzz-build:
	@sh tests/fuzz/need_libfuzzer.sh $(FUZZ_CC)
	$(MAKE) B=build/fuzz CC=$(FUZZ_CC) OPT="$(FUZZ_OPT)" build/fuzz/fuzz_text build/fuzz/fuzz_json

$(B)/tests/fuzz/%.o: CFLAGS += -Isrc
$(B)/tests/fuzz/fuzz_text.o $(B)/tests/fuzz/fuzz_json.o: tests/fuzz/fuzz_common.h
$(B)/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(FUZZ_OBJ)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $^ -lcjson -lm -o $@

fuzz-short: fuzz-build
	sh tests/fuzz/run.sh build/fuzz $(or $(FUZZ_SECONDS),30)
