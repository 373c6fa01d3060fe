"""kruise.cli: the ``kruise`` command line (sandbox, crds, ...)."""
