"""kruise.api: the OpenKruise API surface as data — models, well-known keys, defaults, validation.

Everything above this layer names labels, annotations and fields through here, so that the
wire contract with existing OpenKruise YAML lives in exactly one place.
"""
