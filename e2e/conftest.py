"""e2e fixtures: a cluster reached only through real processes and real kubectl.

By default a ``kruise sandbox up`` subprocess is started once per session and its kubeconfig
used. When ``KUBECONFIG`` is set, the tests run against that cluster instead (a real one), and
tests that need the sandbox's specifics (its node count, reaching a webhook on 127.0.0.1)
skip themselves.

The kruise processes a test starts inherit `KRUISE_CACHE_GUARD=1` (kruise.kube.projection): a controller
or handler reading a field its cache projection drops raises there instead of silently seeing it
missing, so an e2e scenario that exercises such a read fails (and says which path) rather than passing
on a wrong decision.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import E2E_NODES, READY_TIMEOUT, Cluster, SandboxProcess, ready_kubeconfig

os.environ.setdefault("KRUISE_CACHE_GUARD", "1")


def host_process_sandbox(
    tmp_path_factory: pytest.TempPathFactory, name: str, *extra: str
) -> Iterator[Cluster]:
    """`kruise sandbox up --host-processes` with 3 nodes at speed 20, its kruise processes logging into
    a folder of its own (workers' sandboxes would otherwise share the default one), so a failing test can
    show them (`pytest_runtest_makereport` below)."""
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up`; KUBECONFIG points at another cluster")
    workdir = tmp_path_factory.mktemp(name)
    log_dir = workdir / "logs"
    sandbox = SandboxProcess.start(
        "--nodes", "3", "--speed", "20", "--kubeconfig", str(workdir / "kubeconfig"),
        "--host-processes", "--log-dir", str(log_dir), *extra,
    )  # fmt: skip
    try:
        kubeconfig = ready_kubeconfig(sandbox.wait_for("ready", 120))
        yield Cluster(kubeconfig, is_sandbox=True, nodes=3, log_dir=log_dir)
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output


LOG_TAIL_LINES = 60


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[pytest.TestReport]:
    """A failed test on a host-process sandbox reports the tail of kruise-manager's and kruise-webhook's
    logs: what the controllers did (or why they did nothing) is otherwise gone with the CI machine."""
    report = yield
    if report.failed and call.when == "call":
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, Cluster) and value.log_dir is not None:
                for process in ("kruise-manager", "kruise-webhook"):
                    report.sections.append(
                        (
                            f"{process} log (last {LOG_TAIL_LINES} lines)",
                            log_tail(value.log_dir / f"{process}.log"),
                        )
                    )
    return report


def log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(line[:400] for line in lines[-LOG_TAIL_LINES:])


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    external = os.environ.get("KUBECONFIG")
    if external:
        yield Cluster(Path(external), is_sandbox=False, nodes=None)
        return
    kubeconfig = tmp_path_factory.mktemp("sandbox") / "kubeconfig"
    sandbox = SandboxProcess.start(
        # Bare cluster: tests start the kruise processes they exercise themselves.
        "--nodes",
        str(E2E_NODES),
        "--speed",
        "20",
        "--kubeconfig",
        str(kubeconfig),
        "--no-kruise",
        # the fault suite drops watches and compacts history through /debug/faults/* (test-only)
        "--fault-endpoints",
    )
    try:
        ready_kubeconfig(sandbox.wait_for("ready", READY_TIMEOUT))
        yield Cluster(kubeconfig, is_sandbox=True, nodes=E2E_NODES)
    finally:
        sandbox.terminate()


@pytest.fixture
def sandbox_only(cluster: Cluster) -> Cluster:
    if not cluster.is_sandbox:
        pytest.skip("needs the sandbox (KUBECONFIG points at another cluster)")
    return cluster


@pytest.fixture(scope="session")
def kruise_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`kruise sandbox up --host-processes` with kruise-py on it (kruise-webhook, kruise-manager and a
    kruise-daemon per node as real host processes), shared by the tests that exercise kruise end to
    end. It stays on host processes rather than the default Helm install because the kind suites
    were written and timed against it and have not been re-run on the Helm path yet; e2e/helm and
    test_sandbox_e2e's demo cover that path. Needs the sandbox: skipped (visibly) when KUBECONFIG
    points at another cluster, where kruise would be installed with Helm instead."""
    yield from host_process_sandbox(tmp_path_factory, "kruise-sandbox")


@pytest.fixture(scope="session")
def kruise_sandbox_2_0(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`kruise_sandbox` on the 2.0 API set (`--api-set 2.0`): upstream master's CRDs, fifteen kinds also
    served at v1beta1 (kubectl's preferred version), each crossing converted by kruise-webhook."""
    yield from host_process_sandbox(tmp_path_factory, "kruise-sandbox-2.0", "--api-set", "2.0")


# Gates off by default upstream that some kinds' controllers need (the defaults stay as they are).
OPT_IN_GATES = (
    "ResourceDistributionGate=true,ImagePullJobGate=true,InPlaceWorkloadVerticalScaling=true,"
    "StatefulSetAutoResizePVCGate=true"
)


@pytest.fixture(scope="session")
def kruise_sandbox_gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`kruise_sandbox` with ``--feature-gates`` opting into the alpha/beta gates of
    ResourceDistribution, ImagePullJob/ImageListPullJob, in-place resource resize
    (InPlaceWorkloadVerticalScaling) and Advanced StatefulSet claim resize (StatefulSetAutoResizePVCGate;
    it only changes Advanced StatefulSets, which no other test on this cluster creates), passed to
    every kruise process the way a user runs
    `kruise sandbox up --feature-gates ...`."""
    yield from host_process_sandbox(tmp_path_factory, "kruise-sandbox-gated", "--feature-gates", OPT_IN_GATES)


# what upstream's e2e CI applies around installing kruise (e2e/upstream_setup/*.yaml say which step)
UPSTREAM_E2E_SETUP = Path(__file__).resolve().parent / "upstream_setup"
# as upstream's kruise-manager flag (EnableExternalCerts off: the webhook makes its own certificate)
UPSTREAM_E2E_GATES = "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false"


@pytest.fixture(scope="session")
def kruise_sandbox_all_gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The sandbox the translations of upstream's e2e suite (docs/upstream-e2e.md) run on: kruise-py
    with the feature gates upstream's e2e deployment sets (`config/manager/manager.yaml`). One sandbox
    for every translated suite (e2e/cloneset, e2e/sidecarset, e2e/daemonset, ...), so a CI run starts
    it once. Some cases depend on an alpha gate without saying so: "sidecarSet patch pod metadata"
    (SidecarSetPatchPodMetadataDefaultsAllowed), "CloneSet regard preparing-update pod as update when
    scaling" (PreparingUpdateAsUpdate), "pre-download for new image" (PreDownloadImageForInPlaceUpdate).
    Upstream's `InvalidImage` registry fails every pull (`--fail-image`), as an unreachable registry
    does on kind. As upstream's CI, kruise starts on a cluster that already has kruise-configuration's
    WorkloadSpread whitelist (test/kruise-e2e-config.yaml) and the TFJob CRD (`--apply
    e2e/upstream_setup`). Each case works in its own namespace, as upstream's framework gives every
    `It` one."""
    yield from host_process_sandbox(
        tmp_path_factory,
        "kruise-sandbox-all-gates",
        "--feature-gates",
        UPSTREAM_E2E_GATES,
        "--fail-image",
        "invalid.registry.k8s.io/*",
        "--apply",
        str(UPSTREAM_E2E_SETUP),
    )
