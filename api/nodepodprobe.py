"""NodePodProbe (apps.kruise.io/v1alpha1, cluster-scoped): the probes kruise-daemon runs on one node.

Written by the PodProbeMarker controller (spec) and kruise-daemon (status); no webhook validates it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kruise.api.common import KruiseModel, KruiseObject, Schemaless, Time
from kruise.api.crdgen import CRDInfo, CRDVersion


class ContainerProbe(KruiseModel):
    name: str
    container_name: str
    probe: Schemaless = Field(default_factory=dict)


class PodProbe(KruiseModel):
    name: str
    namespace: str
    uid: str
    ip: str = Field(alias="IP")
    probes: list[ContainerProbe] | None = None


class NodePodProbeSpec(KruiseModel):
    pod_probes: list[PodProbe] | None = None


class ContainerProbeState(KruiseModel):
    name: str
    state: str
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    message: str | None = None


class PodProbeStatus(KruiseModel):
    name: str
    namespace: str
    uid: str
    probe_states: list[ContainerProbeState] | None = None


class NodePodProbeStatus(KruiseModel):
    pod_probe_statuses: list[PodProbeStatus] | None = None


class NodePodProbe(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["NodePodProbe"] | None = None
    spec: NodePodProbeSpec = Field(default_factory=NodePodProbeSpec)
    status: NodePodProbeStatus | None = None


CRD = CRDInfo(
    group="apps.kruise.io",
    kind="NodePodProbe",
    plural="nodepodprobes",
    scope="Cluster",
    versions=(CRDVersion(name="v1alpha1", model=NodePodProbe),),
)
