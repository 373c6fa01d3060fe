"""SidecarSet injection into pods at creation, as the pod mutating webhook does it.

Pure functions over plain dicts (SidecarSets as stored, pods as admitted): the webhook feeds them
from its informer caches, and nothing here does I/O. The SidecarSet controller (in-place sidecar
upgrades of running pods) is a separate concern and does not live here.
"""

# no planned phase: the webhook and the controller call injection and update rules directly
__all__: list[str] = []
