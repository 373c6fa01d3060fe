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
    """The probe's name: <PodProbeMarker name>#<probe name>."""
    container_name: str
    """The container the probe runs against."""
    probe: Schemaless = Field(default_factory=dict)
    """The probe itself (a core Probe: exec, tcpSocket or httpGet, with its timings)."""


class PodProbe(KruiseModel):
    name: str
    """Name of the pod."""
    namespace: str
    """Namespace of the pod."""
    uid: str
    """UID of the pod, so a recreated pod of the same name is not mixed up."""
    ip: str = Field(alias="IP")
    """IP of the pod, the address tcpSocket and httpGet probes connect to."""
    probes: list[ContainerProbe] | None = None
    """The probes to run on the pod's containers."""


class NodePodProbeSpec(KruiseModel):
    pod_probes: list[PodProbe] | None = None
    """The pods on this node with custom probes, written by the PodProbeMarker controller."""


class ContainerProbeState(KruiseModel):
    name: str
    """The probe's name: <PodProbeMarker name>#<probe name>."""
    state: str
    """Result of the latest run: Succeeded, Failed or Unknown."""
    last_probe_time: Time | None = None
    """When the probe last ran."""
    last_transition_time: Time | None = None
    """When the state last changed from one value to another."""
    message: str | None = None
    """Output of the probe when it succeeded, its error when it failed."""


class PodProbeStatus(KruiseModel):
    name: str
    """Name of the pod."""
    namespace: str
    """Namespace of the pod."""
    uid: str
    """UID of the pod."""
    probe_states: list[ContainerProbeState] | None = None
    """Result of each of the pod's probes."""


class NodePodProbeStatus(KruiseModel):
    pod_probe_statuses: list[PodProbeStatus] | None = None
    """Probe results per pod, written by kruise-daemon."""


class NodePodProbe(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["NodePodProbe"] | None = None
    spec: NodePodProbeSpec = Field(default_factory=NodePodProbeSpec)
    """The probes kruise-daemon on this node should run."""
    status: NodePodProbeStatus | None = None
    """The probes' latest results, written by kruise-daemon."""


CRD = CRDInfo(
    group="apps.kruise.io",
    kind="NodePodProbe",
    plural="nodepodprobes",
    description="NodePodProbe lists the custom probes kruise-daemon runs on one node (named after it) and "
    "their results; PodProbeMarker's controller writes it, users do not.",
    scope="Cluster",
    versions=(CRDVersion(name="v1alpha1", model=NodePodProbe),),
)
