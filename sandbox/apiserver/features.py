"""What the emulated kube-apiserver does differently by the version it reports (`ApiServer.git_version`).

The emulator serves 1.36's API; the reported version changes only where a client's code path
depends on it. Today that is in-place pod resize (KEP 1287, InPlacePodVerticalScaling):

- 1.32 and later: `pods/resize` is served and a plain pod update may not touch resources
  (podresize.py, validation.py);
- 1.27 to 1.31, taken with the feature gate on (it was alpha, off by default, and every cluster
  that resizes in place turned it on): there is no `pods/resize` (404, as for any unknown
  subresource) and a plain pod update may change the regular containers' cpu/memory requests and
  limits and their resizePolicy, as long as the QoS class stays;
- before 1.27: neither;
- 1.33 only: `pods/resize` refuses a memory limit decrease unless memory's resizePolicy is
  RestartContainer (kubernetes#130183); 1.34 lifted it again (kubernetes#133012: the kubelet then makes a
  best-effort usage check instead).

A gitVersion that does not read as "v<major>.<minor>..." counts as the newest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MAJOR_MINOR = re.compile(r"v?(\d+)\.(\d+)")


@dataclass(frozen=True)
class ApiFeatures:
    """resize_subresource: `pods/resize` is served (1.32+). resources_in_pod_update: a plain pod update
    may change containers' cpu/memory and resizePolicy (1.27–1.31 with InPlacePodVerticalScaling).
    memory_decrease_needs_restart: `pods/resize` refuses a lower memory limit unless memory's
    resizePolicy is RestartContainer (1.33 only)."""

    resize_subresource: bool
    resources_in_pod_update: bool
    memory_decrease_needs_restart: bool = False


NEWEST = ApiFeatures(resize_subresource=True, resources_in_pod_update=False)


def server_minor(git_version: str) -> tuple[int, int] | None:
    """(major, minor) of a gitVersion ("v1.31.4-gke.1200" -> (1, 31)); None when it does not read."""
    match = _MAJOR_MINOR.match(git_version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def features_for(git_version: str) -> ApiFeatures:
    """The version-dependent behaviour of an apiserver that reports `git_version`."""
    version = server_minor(git_version)
    if version == (1, 33):
        return ApiFeatures(
            resize_subresource=True, resources_in_pod_update=False, memory_decrease_needs_restart=True
        )
    if version is None or version >= (1, 32):
        return NEWEST
    return ApiFeatures(resize_subresource=False, resources_in_pod_update=version >= (1, 27))
