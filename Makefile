# The README's commands. `make test` does every set-up step on a fresh machine.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint install

test: lint
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check app integrations migrations tests
	$(BIN)/ruff format --check app integrations migrations tests
	$(BIN)/mypy

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)
