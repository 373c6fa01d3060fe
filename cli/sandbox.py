"""``kruise sandbox``: a local Kubernetes (API emulator + simulated nodes) for trying kruise-py."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from kruise.cli.sandbox_image import KruiseImage

REPO_ROOT = Path(__file__).resolve().parent.parent
"""Where crds/ and crds-2.0/ live (the sandbox applies the chosen set's files, as `kubectl apply -f`)."""

HELM_TIMEOUT = 120.0  # seconds for the chart's workloads to become available
HELM_TIMEOUT_REAL = 300.0  # ... on real nodes: every node pulls and unpacks the image first

app = typer.Typer(no_args_is_help=True, help="A local Kubernetes stand-in for tests and newcomers.")


@app.command()
def up(
    nodes: int = typer.Option(3, "--nodes", min=0, help="Simulated nodes (0: API emulator only)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="API port on 127.0.0.1 (0: any free port)."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="Where to write the kubeconfig."),
    speed: float = typer.Option(1.0, "--speed", min=0.001, help="Speed factor for every simulated duration."),
    demo: bool = typer.Option(False, "--demo", help="Run a short scripted tour with real kubectl."),
    no_kruise: bool = typer.Option(False, "--no-kruise", help="Bare Kubernetes: do not start kruise-py."),
    feature_gates: str = typer.Option(
        "", "--feature-gates", help="Passed to kruise-py, e.g. A=true,B=false."
    ),
    api_set: str = typer.Option(
        "1.9",
        "--api-set",
        help='Kruise API served: "1.9" (OpenKruise 1.9.0\'s versions) or "2.0" (upstream master\'s; '
        "fifteen kinds also at v1beta1). See docs/api.md.",
    ),
    host_processes: bool = typer.Option(
        False,
        "--host-processes",
        help="Run kruise-webhook, kruise-manager and one kruise-daemon per node as host processes "
        "(logs in --log-dir) instead of installing the Helm chart.",
    ),
    via_helm: bool = typer.Option(
        False, "--via-helm", hidden=True, help="The default now: kept so older scripts still run."
    ),
    address_slot: int | None = typer.Option(
        None,
        "--address-slot",
        min=0,
        help="Loopback slot k for pod IPs 127.(244-k).0.0/16 and node IPs 127.18.k.0/24 "
        "(default: the first one no other sandbox on this machine uses).",
    ),
    runtime: str = typer.Option(
        "fake",
        "--runtime",
        help="Node runtime: fake (in-memory, no root) or containerd (a real containerd, runc and CNI "
        "bridge per node; root and Debian's containerd runc containernetworking-plugins docker-registry "
        "busybox-static). With containerd, kruise-py runs as host processes unless --kruise-image.",
    ),
    kruise_image: Path | None = typer.Option(
        None,
        "--kruise-image",
        help="With --runtime containerd: kruise-py's image as `make image` writes it (the OCI layout "
        "build/image/oci or the archive build/image/kruise-py.oci.tar), pushed to the sandbox's registry "
        "as kruise-py:<its tag> and installed with the Helm chart: kruise-system's pods run it as real "
        "containers.",
    ),
    pod_subnet: str = typer.Option(
        "198.18.0.0/16",
        "--pod-subnet",
        help="With --runtime containerd: the pods' subnet on the sandbox's bridge (a /24 per node); "
        "refused if this machine already routes any of it.",
    ),
    fail_image: list[str] = typer.Option(
        [],
        "--fail-image",
        help="Glob pattern (repeatable) of image references whose pull fails on every simulated node, "
        "as from an unreachable registry, e.g. 'invalid.registry.k8s.io/*'.",
    ),
    slow_image: list[str] = typer.Option(
        [],
        "--slow-image",
        help="GLOB=SECONDS (repeatable): pulls of matching image references take SECONDS on every "
        "simulated node (sandbox time, divided by --speed; the first matching pattern wins; others pull "
        "at once), e.g. 'registry.example/slow/*=200' to have a pull still running when a fault hits.",
    ),
    log_dir: Path = typer.Option(
        Path(tempfile.gettempdir()) / "kruise-sandbox-logs",
        "--log-dir",
        help="With --host-processes: where kruise-webhook, kruise-manager and each kruise-daemon "
        "write <name>.log.",
    ),
    kube_api_qps: float = typer.Option(
        0.0,
        "--kube-api-qps",
        min=0.0,
        help="Limit each built-in workload controller (Deployment, ReplicaSet, Job, DaemonSet, StatefulSet) "
        "to this many API requests per second, as kube-controller-manager's flag of that name (real "
        "default 20); 0: unlimited (the sandbox's default).",
    ),
    kube_api_burst: int = typer.Option(30, "--kube-api-burst", min=1, help="Burst of --kube-api-qps."),
    apply: list[Path] = typer.Option(
        [],
        "--apply",
        help="A file or directory of manifests (repeatable) applied with `kubectl apply -f` once the cluster "
        "is up and before kruise-py starts (CRDs among them waited for until Established), e.g. the "
        "kruise-configuration ConfigMap kruise reads when it starts.",
    ),
    fault_endpoints: bool = typer.Option(
        False,
        "--fault-endpoints",
        help="Test-only: serve the API emulator's fault hooks to the admin token at POST "
        "/debug/faults/drop-watches[?compact=true], /debug/faults/compact-watch-history and "
        "/debug/faults/fail-next?count=N&status=S (the e2e fault suite uses them).",
    ),
) -> None:
    """Start the sandbox in the foreground; Ctrl-C or SIGTERM stops it.

    By default kruise-py is installed with its Helm chart (``helm install kruise helm/kruise``):
    its pods run in kruise-system, each container a real process, and ``kubectl logs -n
    kruise-system <pod>`` shows its output.
    """
    from kruise.api.apisets import APISetError
    from kruise.api.apisets import parse as parse_api_set
    from kruise.api.crdfiles import SET_DIRS
    from kruise.api.features import FeatureGateError, parse
    from kruise.cli.demo import cloneset_tour, kruise_system_tour
    from kruise.cli.helm_release import HelmRelease, kruise_process_images
    from kruise.cli.stack import kruise_components
    from kruise.sandbox.up import UpOptions, run_up

    try:
        parse(feature_gates)
    except FeatureGateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--feature-gates") from exc
    try:
        api_set = parse_api_set(api_set, field="--api-set")
    except APISetError as exc:
        raise typer.BadParameter(str(exc), param_hint="--api-set") from exc

    from kruise.sandbox.cri.slow_pulls import parse_slow_image

    try:
        slow_images = tuple(parse_slow_image(value) for value in slow_image)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--slow-image") from exc

    missing = [str(path) for path in apply if not path.exists()]
    if missing:
        raise typer.BadParameter(f"no such file or directory: {', '.join(missing)}", param_hint="--apply")

    if runtime not in ("fake", "containerd"):
        raise typer.BadParameter(f"must be fake or containerd, got {runtime!r}", param_hint="--runtime")
    image = None
    if kruise_image is not None:
        image = _kruise_image(kruise_image, runtime=runtime, host_processes=host_processes, nodes=nodes)
    if runtime == "containerd":
        from kruise.sandbox.realnode.prereqs import PrerequisitesMissing, check

        try:  # before anything starts: a real node never half-starts
            check()
        except PrerequisitesMissing as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        if via_helm and image is None:
            raise typer.BadParameter(
                "--runtime containerd runs kruise-py as host processes without --kruise-image; "
                "it excludes --via-helm",
                param_hint="--via-helm",
            )
        # kruise-py's own containers need its built image on the real nodes; without one it runs on the host
        host_processes = image is None

    if via_helm and host_processes:
        raise typer.BadParameter(
            "--via-helm and --host-processes exclude each other", param_hint="--via-helm"
        )

    def echo(line: str) -> None:
        typer.echo(line)

    helm_install = not (no_kruise or host_processes)
    if helm_install and nodes == 0:
        # The chart's pods need a node to run on; an API-only sandbox keeps kruise-py on the host.
        echo("--nodes 0: no node for kruise-system's pods; kruise-py runs as host processes")
        helm_install = False

    with tempfile.TemporaryDirectory(prefix="kruise-sandbox-") as workdir:  # webhook certs; gone on exit
        components: list = [] if image is None else [image]
        if helm_install:
            release = HelmRelease(
                feature_gates=feature_gates,
                api_set=api_set,
                image_tag=image.tag if image is not None else "",
                # real containers pull the image on every node first
                timeout=HELM_TIMEOUT_REAL if image is not None else HELM_TIMEOUT,
            )
            components.append(release)
        elif not no_kruise:
            components += kruise_components(
                Path(workdir), feature_gates=feature_gates, nodes=nodes, log_dir=log_dir, api_set=api_set
            )
        tours = [] if no_kruise else [kruise_system_tour, cloneset_tour] if helm_install else [cloneset_tour]
        options = UpOptions(
            nodes=nodes,
            port=port,
            kubeconfig=kubeconfig,
            speed=speed,
            demo=demo,
            components=components,
            tours=tours,
            # always: a later `helm install kruise helm/kruise` (e.g. after --no-kruise) runs for real
            process_images=kruise_process_images(),
            install_crds=not helm_install,
            address_slot=address_slot,
            crd_dir=REPO_ROOT / SET_DIRS[api_set],
            runtime=runtime,
            pod_subnet=pod_subnet,
            fail_images=tuple(fail_image),
            slow_images=slow_images,
            kube_api_qps=kube_api_qps or None,
            kube_api_burst=kube_api_burst,
            fault_endpoints=fault_endpoints,
            manifests=tuple(apply),
        )
        try:
            asyncio.run(run_up(options, echo))
        except (OSError, RuntimeError, ValueError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc


def _kruise_image(path: Path, *, runtime: str, host_processes: bool, nodes: int) -> KruiseImage:
    """The ``--kruise-image`` layout, read and checked before anything starts (errors name the flag)."""
    from kruise.cli.sandbox_image import KruiseImage
    from kruise.sandbox.realnode.ocilayout import LayoutError

    if nodes == 0:
        raise typer.BadParameter(
            "needs nodes to run the image on (--nodes >= 1)", param_hint="--kruise-image"
        )

    if runtime != "containerd":
        raise typer.BadParameter(
            "needs --runtime containerd (the fake runtime runs kruise-py's containers as host processes)",
            param_hint="--kruise-image",
        )
    if host_processes:
        raise typer.BadParameter(
            "installs kruise-py from its image with the chart; it excludes --host-processes",
            param_hint="--kruise-image",
        )
    try:
        return KruiseImage.from_path(path)
    except (LayoutError, OSError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--kruise-image") from exc
