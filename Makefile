# Two entry points a newcomer needs: `make sandbox` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install sandbox test lint format crds bench clean image image-rootfs image-lock

$(STAMP): pyproject.toml setup.py helm/install-helm.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	bash helm/install-helm.sh $(BIN)
	touch $(STAMP)

install: $(STAMP)

sandbox: install
	$(BIN)/kruise sandbox up --demo

test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=30

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

crds: install
	$(BIN)/kruise crds generate

# kruise-py's image root file system without Docker (root, Debian; docs/image.md)
image-rootfs: install
	$(BIN)/python docker/rootfs.py build

# ... packed as an OCI image, pushed to REGISTRY (host:port; default: a local docker-registry)
image: install
	$(BIN)/python docker/image.py $(if $(REGISTRY),--registry $(REGISTRY))

image-lock: install
	$(BIN)/python docker/rootfs.py lock

bench: install
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
