"""A cluster's data plane for any apiserver: nodes, scheduler, kubelets on fake CRI runtimes,
and the Job/Deployment/ReplicaSet controllers Kruise relies on (see docs/sandbox.md)."""

from kruise.sandbox.simulator.processes import ProcessImage
from kruise.sandbox.simulator.simulator import CONTROLLERS, Simulator
from kruise.sandbox.simulator.timing import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION, Timing

__all__ = [
    "CONTROLLERS",
    "EXIT_CODE_ANNOTATION",
    "RUN_SECONDS_ANNOTATION",
    "ProcessImage",
    "Simulator",
    "Timing",
]
