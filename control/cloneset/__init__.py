"""CloneSet rollout arithmetic and plans (pure; the controller in kruise.manager performs the I/O)."""
