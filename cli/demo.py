"""The CloneSet tour `kruise sandbox up --demo` runs once kruise-py is up: seed 002's first CloneSet,
renamed `demo-cloneset` so that a newcomer who then types the seed's own `cs-demo` example meets no leftover.

It types what the tutorial types — apply the CloneSet, watch three pods come up, switch to
`InPlaceIfPossible` with a new image — and shows the point of the exercise: the same pod names
and IPs afterwards, with the restart count gone up by one.
"""

from __future__ import annotations

import json
from pathlib import Path

from kruise.sandbox.up import Echo, kubectl

CLONESET_DEMO = """\
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: demo-cloneset
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels:
      app: demo-cloneset
  template:
    metadata:
      labels:
        app: demo-cloneset
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 80
"""

IN_PLACE_UPDATE = {
    "spec": {
        "updateStrategy": {"type": "InPlaceIfPossible"},
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.7.9",
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"containerPort": 80}],
                    }
                ]
            }
        },
    }
}


async def _wait_rolled_out(kubeconfig: Path, echo: Echo, replicas: int) -> None:
    """Wait until the controller saw the latest spec and every pod is updated and ready."""
    generation = await kubectl(
        kubeconfig, "get", "cloneset", "demo-cloneset", "-o", "jsonpath={.metadata.generation}"
    )
    for condition in (
        f"jsonpath={{.status.observedGeneration}}={generation.strip()}",
        f"jsonpath={{.status.updatedReadyReplicas}}={replicas}",
        f"jsonpath={{.status.readyReplicas}}={replicas}",
    ):
        await kubectl(
            kubeconfig, "wait", "cloneset/demo-cloneset", f"--for={condition}", "--timeout=120s", echo=echo
        )


async def kruise_system_tour(kubeconfig: Path, echo: Echo) -> None:
    """kruise-py as the chart installed it: its pods in kruise-system and a webhook's real log."""
    echo("--- kruise-py itself: helm install kruise helm/kruise, pods in kruise-system ---")
    await kubectl(kubeconfig, "get", "pods", "-n", "kruise-system", "-o", "wide", echo=echo)
    webhooks = await kubectl(
        kubeconfig,
        "get",
        "pods",
        "-n",
        "kruise-system",
        "-l",
        "control-plane=webhook",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    )
    first = webhooks.split()[0]
    await kubectl(kubeconfig, "logs", "-n", "kruise-system", first, "--tail=3", echo=echo)


async def cloneset_tour(kubeconfig: Path, echo: Echo) -> None:
    echo("--- CloneSet: pods managed directly, updated in place ---")
    await kubectl(kubeconfig, "apply", "-f", "-", stdin=CLONESET_DEMO, echo=echo)
    await _wait_rolled_out(kubeconfig, echo, 3)
    await kubectl(kubeconfig, "get", "cloneset", "demo-cloneset", echo=echo)
    await kubectl(kubeconfig, "get", "pods", "-l", "app=demo-cloneset", "-o", "wide", echo=echo)
    echo("--- switch to InPlaceIfPossible and a new image ---")
    await kubectl(
        kubeconfig,
        "patch",
        # the patch is in the tutorial's v1alpha1 shape; plain `cloneset` is kubectl's preferred v1beta1,
        # where the in-place switch is updateStrategy.rollingUpdate.podUpdatePolicy
        "clonesets.v1alpha1.apps.kruise.io",
        "demo-cloneset",
        "--type=merge",
        "-p",
        json.dumps(IN_PLACE_UPDATE),
        echo=echo,
    )
    await _wait_rolled_out(kubeconfig, echo, 3)
    await kubectl(kubeconfig, "get", "pods", "-l", "app=demo-cloneset", "-o", "wide", echo=echo)
    await kubectl(
        kubeconfig,
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=demo-cloneset",
        "--sort-by=.lastTimestamp",
        echo=echo,
    )
    echo("same pod names and IPs, RESTARTS 1: each nginx container was updated in place")
