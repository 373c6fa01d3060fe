"""PodProbeMarker planning without I/O: `probes` (NodePodProbe entries, results to pods) and `serverless`
(pods on virtual-kubelet nodes).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
