"""The kubelet's container hash (``io.kubernetes.container.hash``), as kruise-manager recomputes it.

kruise-daemon reports the hash the kubelet labelled each running container with (runtime-containers-meta
``plainHash``); when every container's report names the container the pod status shows and carries the
hash of the container's current spec, the kubelet has started the spec that is in the pod now. Upstream
(``checkAllContainersHashConsistent`` with ``plainHash``) takes that as a finished in-place update, which is
the only way to see one finish when the new image is a second tag of the old image: the imageID does not
move and the status may name the image's other tag. The kubelet that wrote the hash may be a real one, so
the value is the kubelet's to the bit (1.31+: ``pickFieldsToHash`` keeps ``name`` and ``image``, encoded
as Go's ``json.Marshal`` of that map, rendered by ``hashutil.DeepHashObject`` and hashed with FNV-1a 32).
Before 1.31 the kubelet hashed the whole container as Go encodes ``v1.Container``; that form is not
recomputed here, so a pod on such a node finishes by its images alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.control.common.revision import fnv1a_32, go_json, spew_bytes


def kubelet_container_hash(container: Mapping[str, Any]) -> int:
    """``kubecontainer.HashContainer`` of kubelet 1.31+."""
    picked = {"name": str(container.get("name") or ""), "image": str(container.get("image") or "")}
    return fnv1a_32(spew_bytes(go_json(picked)))
