# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: origin origin-numerics demo test accuracy ablation bench bench-paths bench-labels bench-hints bench-native bench-env bench-tui bench-render bench-lint bench-timing corpus corpus-check sysdeps venv dev clean signatures-doc calibration wordmodel lineflag none-check rounds facts-recall bench-advice bench-numerics env-doc

$(VENV)/.base: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e .
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PIP) install -e '.[dev]'
	# torch is optional; the CPU wheel lies on this disk (an unpinned torch would pull a CUDA build).
	$(PIP) install torch==2.13.0 || echo "torch 2.13.0 not installable here: torch-specific tests will skip"
	# triton (pinned to the version the corpus logs were produced with) lets the tests regenerate a
	# Triton compile error for real; optional like torch.
	$(PIP) install triton==3.9.0 || echo "triton 3.9.0 not installable here: Triton regeneration tests will skip"
	# dask + distributed (the `cluster` extra) so the loopback cluster tests run; optional like torch.
	$(PIP) install -e '.[cluster]' || echo "dask/distributed not installable here: the cluster tests will skip"
	touch $@

venv: $(VENV)/.base
dev: $(VENV)/.dev

# tmux (TUI end-to-end test) and ripgrep (benchmark baseline), where this machine can install them.
sysdeps:
	@missing=""; for t in tmux rg; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  pkgs=$$(echo $$missing | sed 's/\brg\b/ripgrep/'); \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs >/dev/null) \
	    || echo "could not install$$missing: the tests that need them will skip"; \
	fi

demo: $(VENV)/.base
	$(VENV)/bin/diagnose classify corpus/logs

test: $(VENV)/.dev sysdeps
	$(VENV)/bin/pytest

accuracy: $(VENV)/.base
	$(PY) -m bench.accuracy

# confidence bucket vs observed accuracy over the before-records of fresh rounds of real logs, as recorded
# (refit: python -m bench.calibration --write, on the last bench.calibration.WINDOW rounds)
calibration: $(VENV)/.base
	$(PY) -m bench.calibration

# the learned word model (signatures/wordmodel.py): leave-one-round-out estimate; --write rebuilds it
wordmodel: $(VENV)/.base
	$(PY) -m bench.wordmodel --cv

# the learned failure-line detector (signatures/lineflag.py): held out by round; --write rebuilds it
lineflag: $(VENV)/.base
	$(PY) -m bench.lineflag --cv

# 'none' precision on every labelled set, and the none/unknown rule measured with no failure signature
none-check: $(VENV)/.base
	$(PY) -m bench.none_check

# facts recall per kind of fact: the fresh rounds' annotations and the dev set's (tests/fixtures/facts)
facts-recall: $(VENV)/.base
	$(PY) -m bench.facts_recall --misses

# accuracy, origin, root line, facts recall and misses of the fresh rounds (g21 on)
rounds: $(VENV)/.base
	$(PY) -m bench.rounds score $(patsubst tests/fixtures/issues/before-%.tsv,%,$(wildcard tests/fixtures/issues/before-*.tsv))

# origin and root-line accuracy over every labelled round (g1 on) and the corpus's origins
origin: $(VENV)/.base
	$(PY) -m bench.rounds origin

# the float32-comparison origin rule on real torch.testing messages of rounding and of logic bugs (needs torch)
origin-numerics: $(VENV)/.base
	$(PY) -m bench.origin_numerics

ablation: $(VENV)/.base
	$(PY) -m bench.fallback_ablation
	$(PY) -m bench.support_ablation

bench: $(VENV)/.base sysdeps
	$(PY) -m bench.throughput

# CPU per MB and per log of each path (explained, unexplained, clean) on the perf corpus's first 2000 logs
bench-paths: $(VENV)/.base
	$(PY) -m bench.path_speed

# the generic-hint expressions' share of the joint database, and whether gating them by literals pays
bench-labels: $(VENV)/.base
	$(PY) -m bench.perf_labels

bench-hints: $(VENV)/.base
	$(PY) -m bench.hint_cost

# the joint database's raw scan: the hyperscan wheel against Debian's libhyperscan from C (would a native core pay?)
bench-native: $(VENV)/.base
	@[ -f /usr/include/hs/hs.h ] || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libhyperscan-dev >/dev/null) || \
	  echo "could not install libhyperscan-dev: bench-native will skip"
	$(PY) -m bench.native_scan

bench-env: $(VENV)/.dev
	$(PY) -m bench.env_speed

bench-tui: $(VENV)/.dev
	$(PY) -m bench.tui_speed

bench-render: $(VENV)/.base
	$(PY) -m bench.render_speed

bench-lint: $(VENV)/.base
	$(PY) -m bench.lint_speed --files 1000 --runs 3
bench-timing: $(VENV)/.dev
	$(PY) -m bench.timing_speed
bench-advice: $(VENV)/.base
	$(PY) -m bench.advice_overhead
# 16M elements against a bare numpy load+allclose process, and peak memory at 1G elements
# (writes ~8.2 GiB of arrays under bench/_data/ once; `$(PY) -m bench.numerics_speed --skip-1g` skips them)
bench-numerics: $(VENV)/.base
	$(PY) -m bench.numerics_speed

corpus: $(VENV)/.dev
	$(PIP) install -e '.[corpus]'
	$(PY) -m corpus.generate

corpus-check: $(VENV)/.dev
	$(PIP) install -e '.[corpus]'
	$(PY) -m corpus.generate --check

signatures-doc: $(VENV)/.base
	$(VENV)/bin/diagnose signatures doc > docs/signatures.md

env-doc: $(VENV)/.base
	$(PY) -c "from diagnose.env.registry import checks_markdown; print(checks_markdown(), end='')" > docs/env-checks.md

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
