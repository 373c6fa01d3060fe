"""kruise-daemon's PodProbeMarker prober."""

# no planned phase: each probe worker counts its own outcomes (`outcomes.Threshold`) and the prober
# builds the NodePodProbe status from them
__all__: list[str] = []
