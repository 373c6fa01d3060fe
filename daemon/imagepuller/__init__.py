"""kruise-daemon's image puller for NodeImages."""

# no planned phase: the puller keeps each tag's state (`status.TagState`) as its pulls run
__all__: list[str] = []
