"""kruise-manager reads the apiserver's version once at start, before building any controller, and the
in-place writers follow it (upstream NewRegistry + ShouldUpdateResourceByResize): against the emulator's
default 1.36 resizes go through `pods/resize`, against one reporting a 1.31 managed-cluster version they
ride the pod object write."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.client import Client, ServerVersion
from kruise.manager.app import Manager
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.controllers import cloneset
from kruise.manager.options import parse_args
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.sandbox.apiserver.server import GIT_VERSION
from tests.kit import until


def options(emulator):
    argv = [
        "--kubeconfig", str(emulator.kubeconfig), "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--enable-leader-election", "false",
        "--feature-gates", "InPlaceWorkloadVerticalScaling=true",
    ]  # fmt: skip
    return parse_args(argv, env={})


def observed(seen: list[tuple[ServerVersion | None, bool]]) -> ControllerSetup:
    """CloneSet's own SETUP, noting what the context said when the manager built it."""

    def build(ctx: ManagerContext):
        seen.append((ctx.server_version, ctx.resize_subresource))
        return cloneset.SETUP.build(ctx)

    return ControllerSetup(cloneset.SETUP.name, build, kinds=cloneset.SETUP.kinds)


async def run_until_built(emulator, seen) -> InPlaceWriter:
    """Run a manager until it built its controllers (no CRDs needed: the caches need not sync); the CloneSet
    reconciler's in-place writer."""
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    manager = Manager(client, options(emulator), [observed(seen)])
    running = asyncio.create_task(manager.run())
    try:
        await until(lambda: manager.controllers, 15.0)
        reconciler = manager.controllers[0]._reconcile.__self__  # type: ignore[attr-defined]
        return reconciler.updater.inplace
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await manager.stop()
        await client.close()


@pytest.mark.parametrize(
    ("git_version", "major", "minor", "through_resize"),
    [
        (GIT_VERSION, "1", "36", True),
        ("v1.32+gke.1", "1", "32+", True),
        ("v1.31.4-gke.1200", "1", "31", False),
    ],
)
async def test_the_manager_reads_the_version_before_building_controllers(
    emulator, git_version, major, minor, through_resize
):
    emulator.server.git_version = git_version
    seen: list[tuple[ServerVersion | None, bool]] = []
    writer = await run_until_built(emulator, seen)
    assert seen == [(ServerVersion(git_version, major, minor), through_resize)]
    assert writer.vertical_scaling
    assert writer.resize_subresource is through_resize


async def test_the_controller_fixture_sees_the_emulators_version(kruise_cluster):
    assert kruise_cluster.context.server_version == ServerVersion(GIT_VERSION, "1", "36")
    assert kruise_cluster.context.resize_subresource


@pytest.fixture
def feature_gates():
    return FeatureGates({"InPlaceWorkloadVerticalScaling": True}, env={})


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP]


@pytest.fixture
def simulator_nodes():
    return 1
