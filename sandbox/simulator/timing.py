"""Simulated durations and the one speed factor that scales them all.

Every duration the simulator waits out (a Job pod's run time, an init container's run, a
readiness probe's initial delay, the time a container takes to exit after SIGTERM, a grace
period) is given in "cluster seconds" and divided by ``speed``: tests run at speed 50-200 so
whole rollouts take well under a second, a demo runs at 1.
"""

from __future__ import annotations

from dataclasses import dataclass

RUN_SECONDS_ANNOTATION = "sandbox.kruise.io/run-seconds"
EXIT_CODE_ANNOTATION = "sandbox.kruise.io/exit-code"


@dataclass
class Timing:
    """Durations in cluster seconds.

    Attributes:
        speed: divides every duration (> 0).
        run_seconds: how long a container of a restartPolicy Never/OnFailure pod runs before it
            exits; a pod overrides it with the ``sandbox.kruise.io/run-seconds`` annotation.
        init_seconds: how long a regular init container runs before it completes (exit 0).
        termination_seconds: how long a container takes to exit after SIGTERM; the kubelet
            waits ``min(grace period, termination_seconds)`` before it finishes a deletion.
        image_pull_backoff_seconds: wait before retrying a failed image pull.
        heartbeat_seconds: node status and Lease renewal interval (real time, not scaled).
        resize_seconds: how long the runtime takes to apply an in-place pod resize; the pod shows
            ``PodResizeInProgress`` meanwhile.
        volume_resize_seconds: how long the storage backend takes to expand a claim's volume (the
            claim shows ``ControllerResizeInProgress`` meanwhile).
        filesystem_resize_seconds: how long the kubelet takes to grow a mounted volume's file system
            (``NodeResizeInProgress``).
    """

    speed: float = 1.0
    run_seconds: float = 5.0
    init_seconds: float = 1.0
    termination_seconds: float = 1.0
    image_pull_backoff_seconds: float = 10.0
    heartbeat_seconds: float = 10.0
    resize_seconds: float = 1.0
    volume_resize_seconds: float = 2.0
    filesystem_resize_seconds: float = 1.0

    def __post_init__(self) -> None:
        if self.speed <= 0:
            raise ValueError(f"speed: must be > 0, got {self.speed}")

    def scaled(self, seconds: float) -> float:
        return max(seconds, 0.0) / self.speed


def pod_run_seconds(pod: dict, default: float) -> float:
    """The run time for a pod's containers: the annotation if valid, else ``default``."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(RUN_SECONDS_ANNOTATION)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value >= 0 else default


def annotated_exit_code(pod: dict) -> int | None:
    """The pod's ``sandbox.kruise.io/exit-code`` if it is an integer, else None."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(EXIT_CODE_ANNOTATION)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def pod_exit_code(pod: dict) -> int:
    """The exit code a pod's finishing containers report: the annotation if an integer, else 0."""
    annotated = annotated_exit_code(pod)
    return 0 if annotated is None else annotated
