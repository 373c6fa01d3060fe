"""kruise-daemon's runtime-containers-meta reporter (and the restarts it asks for)."""

# no planned phase: the controller calls `report`'s predicates and builders container by container,
# reading env hashes through the CRI in between
__all__: list[str] = []
