"""NodeImage planning without I/O: `cleanup` (spec pruning, status timeouts) and `modes` (the same pruning
for a v1alpha1 reader that keeps v1beta1 pull secret modes).
"""
