# dbt-spark-streams: `make demo` and `make test` work on a fresh machine with Python 3.11 and Java 17.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
JARS   := .jars

# After `make jars`, every target starts Spark from the local jars instead of Maven Central.
ifneq ($(wildcard $(JARS)/*.jar),)
export SPARK_STREAMS_JARS_DIR := $(abspath $(JARS))
endif

.PHONY: install jars demo demo-store test lint docs wheel peer unit warm measure functional integration test-store test-store-long test-thrift test-thrift-ci matrix matrix-ci test-versions fuzz mutate soak chaos bench bench-time-travel bench-views bench-history bench-mv bench-cdc bench-files bench-appends bench-many bench-curve bench-curve-same-d bench-store bench-methods clean

# uv (pinned in constraints/default.txt, a dev dependency in setup.cfg) installs the rest: about
# half of pip's minute, again in each virtualenv of make matrix. Like pip with --no-compile, it
# leaves compiling a module to the run that imports it.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# (a .venv made before uv gets it here)
$(BIN)/uv: | $(BIN)/python
	$(BIN)/pip install --quiet -c constraints/default.txt uv

$(STAMP): setup.cfg pyproject.toml constraints/default.txt | $(BIN)/uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints/default.txt \
	    -e '.[dev,connect,thrift,docs]'
	touch $@

install: $(STAMP)

# Fallback when Spark cannot resolve the Delta jars itself: copy them with Maven (the build of
# Delta for the installed PySpark's line, as session/versions.py chooses).
jars: install
	mvn --quiet -f scripts/delta-jars.pom.xml dependency:copy-dependencies \
	    -Ddelta.artifact=$$($(BIN)/python -c 'from dbt.adapters.spark_streams.versions \
	        import default_delta_package as d; print(d().split(":")[1])') \
	    -DincludeScope=runtime -DexcludeArtifactIds=scala-library \
	    -DoutputDirectory=$(abspath $(JARS))
	@echo "Delta jars are in $(JARS)/; set jars_dir: $(abspath $(JARS)) in your profile"

demo: install
	PATH=$(abspath $(BIN)):$$PATH bash scripts/demo.sh

# The same demo with every table on an object store (S3Proxy) and the catalog in PostgreSQL,
# both started for it and stopped after (the profile's `store` target).
demo-store: install
	rm -rf build/demo-store integration_project/metastore-store
	DBT_TARGET=store PATH=$(abspath $(BIN)):$$PATH $(BIN)/python scripts/with_stores.py \
	    build/demo-store -- bash scripts/demo.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy dbt/adapters bench

# The documentation site (docs/, mkdocs.yml) into site/: every internal link and anchor must
# resolve (--strict).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The package as a user installs it: the built wheel (not `pip install -e .`) in a fresh virtual
# environment, then `dbt debug` on a copy of the integration project, which starts Spark with
# Delta from the installed adapter. make integration runs it.
WHEEL_DIR := build/wheel-check
wheel: install
	rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)
	$(BIN)/pip wheel --quiet --no-deps -w $(WHEEL_DIR)/dist .
	$(PYTHON) -m venv $(WHEEL_DIR)/venv
	$(BIN)/uv pip install --quiet --python $(WHEEL_DIR)/venv/bin/python \
	    -c constraints/default.txt $(WHEEL_DIR)/dist/*.whl
	cp -r integration_project $(WHEEL_DIR)/project
	rm -rf $(WHEEL_DIR)/project/target $(WHEEL_DIR)/project/logs \
	    $(WHEEL_DIR)/project/spark-warehouse $(WHEEL_DIR)/project/metastore
	cd $(WHEEL_DIR)/project && DBT_PROFILES_DIR=$$PWD $(abspath $(WHEEL_DIR))/venv/bin/dbt debug
	$(WHEEL_DIR)/venv/bin/python -c "import dbt.adapters.spark_streams as a; \
	    assert '$(abspath $(WHEEL_DIR))/venv' in a.__file__, a.__file__; print('adapter from', a.__file__)"

# dbt-spark's own functional tests (from its source distribution on PyPI, by the installed
# version) against this adapter's session, with the tests dbt-spark skips for its session
# profile skipped (scripts/peer_suite.py). About 3 minutes; make matrix runs it on dbt-core 1.12.
peer: install
	$(BIN)/python scripts/peer_suite.py

unit: install
	$(BIN)/pytest tests/unit

# The first start on a new machine resolves the Delta jars and trains the CDS archive; this
# pays for both once, before the test workers start (scripts/warm_start.py), and does nothing
# on a machine that has them.
warm: install
	$(BIN)/python scripts/warm_start.py

# Two pytest-xdist workers, each module or test class on one of them (each worker starts its
# own Spark session, catalog and warehouse); the longest modules go first (tests/conftest.py).
# Two, not three, on two cores: a third worker's JVM only added its own JIT and collector work
# (the tests took 1,227 s against 1,399 s with three).
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder

# The functional tests make test-store runs on the object store, as they are (the history's
# runs there with in-commit timestamps, so it is not one of them). .ci/run's make test sets
# STORE_ONLY=1 and leaves them to make test-store: one CI run runs each once.
F := tests/functional/streams
STORE_FUNCTIONAL := $(F)/test_seed_examples.py $(F)/test_changes.py $(F)/test_view_streams.py \
    $(F)/test_dbt_edges.py::TestRetryCloneAndRestore $(F)/test_dbt_edges.py::TestConsumerGone \
    $(F)/test_system_time.py::TestSystemTime $(F)/test_apply_cdc.py

# The contract's tests: stream behaviour on an embedded session, dbt in-process. The
# differential fuzz of streams against a model in Python (its longest module, close to three
# minutes for a few derandomized examples) runs in make fuzz, with its explicit examples and
# forty random ones: its minutes in CI went to the compatibility matrix. So do the view
# streams' and the history's differential tests (75 and 88 s of explicit examples): the view
# streams' and the history's own tests stay.
FUZZ_ONLY := $(F)/test_fuzz.py $(F)/test_view_fuzz.py
functional: warm
	$(BIN)/pytest $(XDIST) --durations=15 tests/functional \
	    $(addprefix --ignore=,$(FUZZ_ONLY)) \
	    --deselect $(F)/test_history.py::TestHistoryUnderRandomCommits \
	    $(if $(STORE_ONLY),$(addprefix --deselect ,$(STORE_FUNCTIONAL)))

# The lint, the docs' build and the unit tests run beside the functional tests, not before them:
# alone they keep one of the two cores busy for about a minute while the other waits. Their
# output comes as one block each (output-sync); the functional tests' progress stays live. Any
# failure fails `test`.
test: install
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint docs unit & checks=$$!; \
	$(MAKE) --no-print-directory functional; tests=$$?; \
	wait $$checks; checks=$$?; \
	exit $$(( tests || checks ))

# The integration tier, which .ci/run runs after make test: dbt's own adapter suites on this
# adapter, the builds killed at each step of the commit protocol, and the integration project
# over a Spark Connect cluster (tests/integration/), then the wheel as a user installs it (make
# wheel). dbt-spark's own tests run in make matrix, on dbt-core 1.12. Two dbt processes on one
# consumer run in make test-store (an object store and PostgreSQL, as production runs them);
# the same on the local file system with a Derby network server, in make fuzz (three rounds).
CONCURRENCY := tests/integration/test_crash_safety.py::test_two_builds_of_one_consumer_at_once
integration: warm
	$(BIN)/pytest $(XDIST) --durations=10 tests/integration --deselect $(CONCURRENCY)
	@$(MAKE) --no-print-directory wheel

# Streams with every table on an object store and the catalog in PostgreSQL, both started by
# scripts/with_stores.py (S3Proxy from Maven Central, PostgreSQL from Debian's packages) and
# stopped after: tests/store/ (where tables and catalog entries land, the store's conditional
# PUT, one build of a consumer at a time, refusals, two dbt processes at once) and the
# functional modules of each stream kind and dbt command, and apply_cdc's rounds with its
# tombstones and kept events (docs/guides/object-storage.md; the history's sources there keep
# in-commit timestamps, S3's Last-Modified having whole seconds). STORE_ROUNDS=20 runs the
# two-processes test's rounds twenty times; STORE_TESTS names other modules to run there (the
# Debezium files of test_apply_cdc_debezium.py land on the store too).
STORE_TESTS ?= tests/store $(STORE_FUNCTIONAL) $(F)/test_history.py::TestHistory
test-store: warm
	rm -rf build/stores
	$(BIN)/python scripts/with_stores.py build/stores -- \
	    $(BIN)/pytest $(XDIST) --durations=10 $(STORE_TESTS)

# Streams over dbt-spark's `thrift` method: a Spark Thrift Server (the one PySpark ships) with a
# PostgreSQL metastore, both started by scripts/with_thrift.py and stopped after; each test
# process's own session shares the server's warehouse and catalog to set sources up and check.
THRIFT_TESTS ?= tests/thrift $(F)/test_seed_examples.py $(F)/test_changes.py $(F)/test_view_streams.py \
    $(F)/test_file_streams.py $(F)/test_history.py::TestHistory $(F)/test_threads.py \
    $(F)/test_column_types.py $(F)/test_schema_change.py
test-thrift: warm
	rm -rf build/thrift
	$(BIN)/python scripts/with_thrift.py build/thrift -- \
	    $(BIN)/pytest $(XDIST) --durations=10 $(THRIFT_TESTS)

# The compatibility project over `thrift` (every strategy, table, view and insert-only streams,
# changes(), history, a dbt unit test, `--threads 4`, dbt killed after its commits and the
# recovery, the server killed the moment a MERGE commits and the build after its restart,
# show_streams; scripts/compat_run.py), in .venv. .ci/run runs it in make matrix, in the
# combination of the oldest dbt-core and the newest Spark. The rest of `make test-thrift` does
# not fit CI's 60 minutes.
test-thrift-ci: warm
	rm -rf build/thrift-ci
	$(BIN)/python scripts/with_thrift.py build/thrift-ci -- \
	    $(BIN)/python scripts/compat_run.py build/thrift-ci/compat --thrift

# The compatibility matrix: dbt-core 1.11 (the oldest) and 1.12 (the newest) with each Spark
# line a Delta release supports, each combination in a virtualenv kept per machine
# (constraints/dbt-<line>.txt with constraints/spark-<line>.txt): the compatibility project
# (tests/compat/project) built, killed after a commit and recovered, over Spark Connect with
# the oldest dbt-core (over `thrift` with the newest Spark, as make test-thrift-ci), and
# dbt-spark's own tests with the newest of both (scripts/matrix.py).
# Prints each combination's result and minutes, and writes the table of
# docs/reference/dbt-compatibility.md. .ci/run runs make matrix-ci: the four combinations that
# run more than the project on the embedded session (over Connect, over `thrift`, dbt-spark's
# tests), which take each Spark line and each dbt-core line; dbt-core 1.12 with Spark 4.0 and
# 4.1 run here only.
matrix: install
	$(BIN)/python scripts/matrix.py

matrix-ci: install
	$(BIN)/python scripts/matrix.py --ci

# Deeper than the matrix, at the ends of the ranges: the unit tests and the functional core in
# each combination of VERSION_SETS, in a virtualenv of its own under build/versions.
VERSION_SETS ?= dbt-1.11+spark-4.0 dbt-1.11+spark-4.1 dbt-1.12+spark-4.2
VERSION_TESTS ?= tests/unit $(F)/test_seed_examples.py $(F)/test_changes.py \
    $(F)/test_view_streams.py $(F)/test_file_streams.py $(F)/test_history.py::TestHistory \
    $(F)/test_column_types.py $(F)/test_schema_change.py $(F)/test_threads.py
test-versions: | $(BIN)/uv
	@for set in $(VERSION_SETS); do \
	    venv=build/versions/$$set; dbt=$${set%%+*}; spark=$${set##*+}; \
	    constraints="-c constraints/$$dbt.txt -c constraints/$$spark.txt"; \
	    echo "== $$set: $$(cat constraints/$$dbt.txt constraints/$$spark.txt | grep -v '^#' | tr '\n' ' ')"; \
	    test -x $$venv/bin/python || $(PYTHON) -m venv $$venv || exit 1; \
	    $(BIN)/uv pip install --quiet --python $$venv/bin/python $$constraints \
	        -e '.[dev,connect,thrift]' && \
	    $$venv/bin/python scripts/warm_start.py && \
	    $$venv/bin/pytest $(XDIST) --durations=5 $(VERSION_TESTS) || exit 1; \
	done

# The long runs on the object store: builds killed at each step of the commit protocol, and 20
# rounds of two processes at once (about half an hour).
test-store-long: warm
	rm -rf build/stores-long
	STORE_LONG=1 STORE_ROUNDS=20 $(BIN)/python scripts/with_stores.py build/stores-long -- \
	    $(BIN)/pytest --durations=10 tests/store/test_crash_on_store.py \
	    tests/store/test_two_processes.py

# The functional and integration tests, measured per module (tests/measure/): seconds,
# CPU-seconds, Spark statements and dbt invocations, into build/measure/measure.md (the table in
# docs/development/ comes from it). MEASURE_TESTS="tests/functional" measures one tier.
MEASURE_TESTS ?= tests/functional tests/integration
measure: warm
	rm -rf build/measure
	$(BIN)/python -m pytest $(XDIST) -p tests.measure.plugin --measure build/measure \
	    $(MEASURE_TESTS)

# The long versions of the reliability tests: 40 random fuzz examples (make test runs 3 fixed
# ones), 3 rounds of concurrent builds (make test runs 1) and 8 rounds of ten stream models
# built with --threads 4 from a random seed (make test runs 1 from a fixed one); the view
# streams' property (40 examples) and 6 random examples of 4 view stream builds (make test:
# one fixed example of 2); 10 random histories of builds (make test: one fixed); 20 drawn event
# sets for apply_cdc's SQL (make test: 2).
# The threads test's seed: random unless given (`make fuzz THREADS_SEED=7` replays a run). Not
# the shell's $$RANDOM: make runs recipes with /bin/sh, which on Debian and Ubuntu is dash,
# where it is empty (and the test failed to start). Set once, so the echo names the seed used.
ifndef THREADS_SEED
THREADS_SEED := $(shell od -An -N2 -tu2 /dev/urandom | tr -d ' ')
endif
fuzz: install
	@echo "make fuzz: THREADS_SEED=$(THREADS_SEED)"
	HYPOTHESIS_PROFILE=fuzz CONCURRENCY_ROUNDS=3 THREADS_ROUNDS=8 THREADS_SEED=$(THREADS_SEED) \
	    VIEW_FUZZ_ROUNDS=4 VIEW_FUZZ_EXAMPLES=6 HISTORY_FUZZ_EXAMPLES=10 MV_FUZZ_EXAMPLES=6 \
	    CDC_EXAMPLES=20 \
	    $(BIN)/pytest tests/functional/streams/test_fuzz.py tests/functional/streams/test_changes_property.py \
	    tests/functional/streams/test_mv_fuzz.py tests/functional/streams/test_apply_cdc_property.py \
	    tests/functional/streams/test_view_changes.py tests/functional/streams/test_view_fuzz.py \
	    tests/functional/streams/test_history.py \
	    tests/functional/streams/test_threads.py $(CONCURRENCY)

# Mutation testing of the dbt-free engine (dbt/adapters/spark_streams/streams/) by the unit
# tests, about half an hour; prints killed / survived / untested mutants per module and writes
# each survivor with its reason to docs/journal/mutation-survivors.md. Not part of make test.
# `.venv/bin/mutmut browse` shows each mutant.
mutate: install
	$(BIN)/pip install --quiet -e '.[mutate]'
	rm -rf mutants
	$(BIN)/mutmut run > mutants.log 2>&1 || (tail -20 mutants.log; exit 1)
	$(BIN)/mutmut results --all true 2>/dev/null | $(BIN)/python scripts/mutation_report.py
	$(BIN)/mutmut results 2>/dev/null | $(BIN)/python scripts/mutation_survivors.py \
	    > docs/journal/mutation-survivors.md
	@echo "Each surviving mutant and why: docs/journal/mutation-survivors.md"

# Random changes and builds (threads 4, failed and killed builds among them) with every target
# checked after each recovery; a little over an hour for the default 2,000 steps. A failure then
# shrinks its history for up to --shrink-minutes (60) and saves it for --replay. Not part of make
# test. SOAK_ARGS="--seed 7 --steps 200" for a short one.
soak: install
	$(BIN)/python -m tests.soak.soak $(SOAK_ARGS)

# Faults of a real cluster in the middle of builds (tests/chaos/chaos.py): workers, the Spark
# Connect server, the dbt process, the metastore and the warehouse's disk fail, 200 times in at
# most 85 minutes, and after each recovery nothing is lost or doubled. Needs root: the
# warehouse is a tmpfs it fills. CHAOS_ARGS="--seed 7 --injections 20" for a short run;
# CHAOS_ARGS=--stores keeps the tables on S3Proxy (behind a proxy that throttles and stalls on
# demand) and the metastore in PostgreSQL, and kills and restarts those.
chaos: install
	$(BIN)/python -m tests.chaos.chaos $(CHAOS_ARGS)

# Not part of make test: minutes to hours. BENCH_ARGS="--sizes 20000 --reps 1" for a quick look.
bench: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.run $(BENCH_ARGS)

# make bench's four methods at N = 1M and 20M, D = 0.01% and 0.1% (and 1M's D's at 20M), 3
# repetitions: the curve at a size where rebuilds hurt, in bench/curve/ (about two hours).
# The curves run on the JVM's own JIT (bench/project/profiles.yml, target full_jit).
bench-curve: install
	$(BIN)/pip install --quiet -e '.[bench]'
	DBT_TARGET=full_jit $(BIN)/python -m bench.run --sizes 1000000 20000000 --deltas 0.0001 0.001 \
	    --out bench/curve $(BENCH_ARGS)

# The curve's scaling at the same absolute D's at 1M and 20M (2,000 and 20,000 rows: 0.01% and
# 0.1% of 20M), 3 repetitions, about an hour.
bench-curve-same-d: install
	$(BIN)/pip install --quiet -e '.[bench]'
	DBT_TARGET=full_jit $(BIN)/python -m bench.run --sizes 1000000 20000000 --changes 2000 20000 \
	    --out bench/curve-same-d $(BENCH_ARGS)

# for_system_time against Delta's TIMESTAMP AS OF (1M rows, 100 commits): bench/time_travel.md.
bench-time-travel: install
	$(BIN)/python -m bench.time_travel $(BENCH_ARGS)

# A stream on a view joining orders (N) and customers (N / 10) against a rebuild and a
# hand-written floor, N = 1M and 5M: bench/views.md.
bench-views: install
	$(BIN)/python -m bench.views $(BENCH_ARGS)

# The history strategy against apply_changes on the same change, N = 1M and 5M:
# bench/history.md.
bench-history: install
	$(BIN)/python -m bench.history $(BENCH_ARGS)

# Materialized views' refreshes against recomputing their queries as tables, side by side:
# sums, extremes (MIN/MAX) and customers LEFT JOIN orders; bench/mv.md.
bench-mv: install
	$(BIN)/python -m bench.mv $(BENCH_ARGS)

# apply_cdc (SCD type 1) against the hand-written floor (a window's newest event per key, then
# one MERGE), side by side; bench/cdc.md.
bench-cdc: install
	$(BIN)/python -m bench.cdc $(BENCH_ARGS)

# An insert-only stream on a folder of 1,000 Parquet files against reading the new ones by hand:
bench-files: install
	$(BIN)/python -m bench.files $(BENCH_ARGS)

# A mirror on insert-only batches (an INSERT, not a MERGE) against the floor MERGE:
bench-appends: install
	$(BIN)/python -m bench.appends $(BENCH_ARGS)

# One dbt run of 20 stream models on 20 sources of 1M rows against the sum of their floors:
# bench/many.md.
bench-many: install
	$(BIN)/python -m bench.many $(BENCH_ARGS)

# What a build asks of an object store, in requests (S3Proxy's request log): a table stream's
# build and an empty one against the floor, an insert-only stream on 1,000 and 10,000 objects:
# bench/requests.md.
bench-store: install
	$(BIN)/python -m bench.requests $(BENCH_ARGS)

# The same runs over dbt-spark's thrift method and over Spark Connect, against local servers.
bench-methods: warm
	$(BIN)/python -m bench.methods $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(JARS) site dist build integration_project/target integration_project/logs \
	       integration_project/spark-warehouse integration_project/metastore
