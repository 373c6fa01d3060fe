"""The pod-readiness controller: gives every pod carrying the `KruisePodReady` gate its condition.

kruise-webhook adds the `KruisePodReady` readiness gate to pods at creation; the kubelet counts a
pod Ready only when every gated condition is True, so someone must set it True first. Kruise's
lifecycle hooks (and PodUnavailableBudget) later flip it False by adding not-ready keys
(`kruise.control.common.podreadiness`); this controller only creates it, never overwrites it.

`controller.py` wires the pod informer and the workqueue; `reconciler.py` holds the per-pod logic.
"""

from kruise.manager.cachefields import POD_META
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.podreadiness.controller import NAME, build

SETUP = ControllerSetup(NAME, build, pod_fields=(*POD_META, "spec.readinessGates", "status.conditions"))
