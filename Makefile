# Mailroom: every day-to-day command is one `make` target, and each installs what it needs.
# From a fresh clone, `make run` and `make test` are all it takes (Node 20+ and a C++ toolchain
# for better-sqlite3). `make help` lists the targets.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

BIN   := node_modules/.bin
STAMP := node_modules/.installed

.PHONY: help run test gen check-gen lint lint-openapi lint-ts typecheck docs mock fuzz bench \
        bootstrap migrate mariadb checks ci deps test-mariadb build

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  make %-13s %s\n", $$1, $$2 }'

# --- dependencies ---------------------------------------------------------------------------
# Reinstall (npm ci) when node_modules is missing or package-lock.json is newer than the last
# install. npm's own record of the last install (node_modules/.package-lock.json) counts too, so
# a tree that `npm install`/`npm ci` already brought up to date is not rebuilt again (a clean
# install recompiles better-sqlite3: ~80 s).
# A git worktree that borrows the main checkout's node_modules through a symlink must not run
# `npm ci` through it: that would wipe the tree the main checkout is using.
$(STAMP): package-lock.json
	@if [ -L node_modules ]; then \
	  echo "node_modules is a symlink (a borrowed tree): not reinstalling; run npm ci where it lives" 1>&2; \
	elif [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then \
	  echo "node_modules is up to date with package-lock.json" 1>&2; \
	else \
	  echo "npm ci (node_modules missing or older than package-lock.json)..." 1>&2; \
	  npm ci --no-audit --no-fund 1>&2; \
	fi
	@touch $@

deps: $(STAMP) ## Install npm dependencies if needed (npm ci)

# --- the SDK and CLI packages -----------------------------------------------------------------
# sdk/dist and cli/dist are what `npx mailroom` and the CLI's subprocess tests run, and what the
# CLI's types resolve against; rebuilt when their sources or the generated contract types change.
SDK_DIST := sdk/dist/index.js
CLI_DIST := cli/dist/bin.js

$(SDK_DIST): $(STAMP) $(shell find sdk/src -name '*.ts' 2>/dev/null) sdk/tsconfig.json sdk/scripts/build.mjs generated/v1.d.ts
	npm run --silent build -w sdk

$(CLI_DIST): $(SDK_DIST) $(shell find cli/src -name '*.ts' 2>/dev/null) cli/tsconfig.json
	npm run --silent build -w cli

# The dashboard is built by Vite into dashboard/dist, which the server serves at `/`.
DASHBOARD_DIST := dashboard/dist/index.html

$(DASHBOARD_DIST): $(SDK_DIST) $(shell find dashboard/src dashboard/public -type f 2>/dev/null) dashboard/index.html dashboard/vite.config.ts dashboard/tsconfig.json
	npm run --silent build -w @mailroom/dashboard

build: $(CLI_DIST) $(DASHBOARD_DIST) ## Build the SDK (sdk/dist), the CLI (cli/dist) and the dashboard (dashboard/dist)

# --- the two commands a fresh clone needs ------------------------------------------------------
run: $(STAMP) $(CLI_DIST) $(DASHBOARD_DIST) ## Serve on http://127.0.0.1:3000 with embedded SQLite under ./data
	bin/mailroom-server serve

test: $(STAMP) $(CLI_DIST) $(DASHBOARD_DIST) ## Run every vitest project (MariaDB too when TEST_MYSQL_URL is set)
	@if [ -n "$${TEST_MYSQL_URL:-}" ]; then echo "test: SQLite + MariaDB ($${TEST_MYSQL_URL%%://*}://…@$${TEST_MYSQL_URL#*@})"; \
	 else echo "test: SQLite only (set TEST_MYSQL_URL, e.g. via 'make mariadb', to include MariaDB)"; fi
	$(BIN)/vitest run

# --- contract ---------------------------------------------------------------------------------
# `npm run gen` is openapi-typescript with its flags from package.json; it reads redocly.yaml,
# which names the spec and the output file. check-gen runs exactly the same command.
gen: $(STAMP) ## Regenerate generated/v1.d.ts from openapi/v1.yaml
	npm run --silent gen

check-gen: $(STAMP) ## Fail if generated/v1.d.ts has drifted from openapi/v1.yaml
	scripts/check-gen.sh

lint: lint-openapi lint-ts ## Redocly lint of the contract (zero warnings) + eslint

lint-openapi: $(STAMP)
	scripts/lint-openapi.sh openapi/v1.yaml

lint-ts: $(STAMP)
	$(BIN)/eslint .

typecheck: $(STAMP) $(SDK_DIST) ## tsc --noEmit: the server and tests, the SDK (browser libs, no Node types), the CLI, the dashboard
	$(BIN)/tsc --noEmit
	$(BIN)/tsc --noEmit -p sdk
	$(BIN)/tsc --noEmit -p cli
	$(BIN)/tsc --noEmit -p dashboard

docs: $(STAMP) ## Build the HTML API reference into build/reference.html
	@mkdir -p build
	$(BIN)/redocly build-docs openapi/v1.yaml --inlineBundle -o build/reference.html

mock: $(STAMP) ## Prism mock of the contract on http://127.0.0.1:4010
	$(BIN)/prism mock openapi/v1.yaml -h 127.0.0.1 -p 4010

fuzz: $(STAMP) ## Schemathesis against a throwaway server (installs .venv)
	scripts/fuzz.sh $(FUZZ_ARGS)

# --- operations -------------------------------------------------------------------------------
bench: $(STAMP) ## Benchmarks: accept rate (bench/accept.ts), delivery rate (bench/delivery.ts), webhooks (bench/webhooks.ts), template sends (bench/templates.ts), metrics queries (bench/metrics.ts), SMTP submission (bench/submission.ts)
	$(BIN)/tsx bench/accept.ts
	$(BIN)/tsx bench/delivery.ts
	$(BIN)/tsx bench/webhooks.ts
	$(BIN)/tsx bench/templates.ts
	$(BIN)/tsx bench/metrics.ts
	$(BIN)/tsx bench/submission.ts

bootstrap: $(STAMP) ## Create a workspace; print its sandbox and live keys once (ARGS="--workspace NAME --json")
	@bin/mailroom-server bootstrap $(ARGS)

migrate: $(STAMP) ## Apply database migrations (DATABASE_URL); ARGS=--unlock frees a stale migration lock
	bin/mailroom-server migrate $(ARGS)

mariadb: ## Install/start a local MariaDB for tests; prints TEST_MYSQL_URL=…
	scripts/mariadb.sh

# --- CI ---------------------------------------------------------------------------------------
# .ci/run runs `make checks`, then the README's own test command, `make test`, last (with
# TEST_MYSQL_URL exported, so on SQLite and MariaDB), so a CI log ends with vitest's totals.
# Every check runs even when an earlier one fails (one run shows all problems: a type error does
# not hide the fuzz results); each one's output is also kept in build/ci/<step>.log.
CHECK_STEPS := check-gen lint typecheck fuzz

checks: $(STAMP) ## check-gen, lint, typecheck and fuzz, each run even if an earlier one failed
	@mkdir -p build/ci; failed=""; \
	for step in $(CHECK_STEPS); do \
	  printf '\n==> make %s\n' "$$step"; \
	  $(MAKE) "$$step" 2>&1 | tee "build/ci/$$step.log" || failed="$$failed $$step"; \
	done; \
	grep -hE '^ *[0-9]+ generated, ' build/ci/fuzz.log | sed 's/^ */fuzz: /' || true; \
	if [ -n "$$failed" ]; then echo "checks: FAILED:$$failed"; exit 1; fi; \
	echo "checks: all passed ($(CHECK_STEPS))"

ci: $(STAMP) ## What .ci/run runs: make checks, then make test on SQLite + MariaDB
	@failed=0; $(MAKE) checks || failed=1; $(MAKE) test-mariadb; exit $$failed

test-mariadb: $(STAMP) ## make test with MariaDB (starts it via scripts/mariadb.sh unless TEST_MYSQL_URL is set)
	@url="$${TEST_MYSQL_URL:-}"; \
	 if [ -z "$$url" ]; then url="$$(scripts/mariadb.sh | tail -n 1)"; url="$${url#TEST_MYSQL_URL=}"; fi; \
	 TEST_MYSQL_URL="$$url" $(MAKE) test
