"""WorkloadSpread rules shared by the pod webhook (subset choice and injection on CREATE, deletion
bookkeeping) and the controller (status recomputed from pods, deletion cost for scale-in order)."""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
