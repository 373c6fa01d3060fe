"""PodProbeMarker planning without I/O: `probes` (NodePodProbe entries, results to pods) and `serverless`
(pods on virtual-kubelet nodes).
"""
