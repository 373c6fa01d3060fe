"""How a Kruise kind's defaulter and validator are called: declared beside the kind, not guessed.

The kinds' rules live in `kruise.api.<kind>` with signatures that differ (a validator that compares
with the old object, a defaulter that takes the pod-template gates or adds a finalizer). Each kind's
entry in `kruise.api.registry` declares what its hooks accept, so a caller (kruise-webhook's admission
adapters, the tests' example corpus) never inspects signatures; a unit test checks each declaration
against the function it names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kruise.api.validation import FieldError

INJECT_TEMPLATE_DEFAULTS = "inject_template_defaults"
HOST_NETWORK_HOST_PORTS = "host_network_host_ports"
ADD_PROTECTION = "add_protection"
TEMPLATE_OPTIONS = frozenset({INJECT_TEMPLATE_DEFAULTS, HOST_NETWORK_HOST_PORTS})
"""The keywords of a defaulter of a kind with a pod template (gates TemplateNoDefaults and
DefaultHostNetworkHostPortsInPodTemplates)."""


@dataclass(frozen=True)
class Hooks:
    """One kind's declaration. A kind upstream neither defaults nor validates at admission has an
    empty one (NodePodProbe); a validator taking more than the object and ``old`` (SidecarSet's
    neighbours, WorkloadSpread's whitelist) is called by that kind's own webhook concern."""

    set_defaults: Callable[..., None] | None = None
    validate: Callable[..., list[FieldError]] | None = None
    validate_takes_old: bool = False
    """The validator takes keyword ``old`` (the object before an UPDATE)."""
    default_options: frozenset[str] = frozenset()
    """Keywords a caller passes the defaulter (of INJECT_TEMPLATE_DEFAULTS, HOST_NETWORK_HOST_PORTS,
    ADD_PROTECTION)."""
    version: str | None = None
    """The version the hooks are written for; None when they take every served version (Advanced
    StatefulSet reads v1alpha1 through its v1beta1 form)."""
