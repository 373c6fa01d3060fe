"""FakeRuntime semantics: images, sandbox and container state machines, and container events."""

import asyncio
import itertools
import re

import pytest

from kruise.sandbox.cri import (
    CAUSE_CRI,
    CAUSE_KUBELET,
    AlreadyExistsError,
    ContainerEventType,
    ContainerState,
    ExecResult,
    FailedPreconditionError,
    FakeRuntime,
    ImagePullError,
    InvalidArgumentError,
    LinuxResources,
    NotFoundError,
    SandboxState,
)

HEX64 = re.compile(r"[0-9a-f]{64}")
# A pull delay of 60 simulated seconds at speed 6000 lasts 10 ms of real time.
FAST = 6000.0


def ticking_clock():
    """Strictly increasing nanosecond timestamps, so ordering assertions never tie."""
    counter = itertools.count(1_700_000_000_000_000_000, 1_000)
    return lambda: next(counter)


@pytest.fixture
def runtime() -> FakeRuntime:
    return FakeRuntime("node-a", speed=FAST, clock=ticking_clock())


async def running_container(
    runtime: FakeRuntime, name: str = "app", image: str = "nginx:1.25"
) -> tuple[str, str]:
    await runtime.pull_image(image)
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1")
    container_id = runtime.create_container(sandbox_id, name, image)
    runtime.start_container(container_id)
    return sandbox_id, container_id


# ------------------------------------------------------------------ images


async def test_pull_returns_the_image_id_and_lists_normalized_names(runtime: FakeRuntime) -> None:
    image_id = await runtime.pull_image("nginx:1.25")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", image_id)
    (image,) = runtime.list_images()
    assert image.id == image_id
    assert image.repo_tags == ("docker.io/library/nginx:1.25",)
    assert re.fullmatch(r"docker\.io/library/nginx@sha256:[0-9a-f]{64}", image.repo_digests[0])
    assert image.size > 0
    assert image.names == [*image.repo_digests, *image.repo_tags]


async def test_image_lookups_accept_every_name_of_the_image(runtime: FakeRuntime) -> None:
    image_id = await runtime.pull_image("busybox")
    image = runtime.image_status("busybox")
    assert image is not None
    for name in [
        "busybox",
        "busybox:latest",
        "docker.io/library/busybox:latest",
        image_id,
        image.repo_digests[0],
    ]:
        assert runtime.has_image(name), name
        assert runtime.image_ref(name) == image_id
    assert runtime.image_status("busybox:other") is None
    assert runtime.list_images("busybox:other") == []


async def test_same_reference_gets_the_same_id_on_every_node() -> None:
    first, second = FakeRuntime("a"), FakeRuntime("b")
    assert await first.pull_image("nginx") == await second.pull_image("docker.io/library/nginx:latest")


async def test_pulling_by_repo_digest_finds_the_tagged_image(runtime: FakeRuntime) -> None:
    image_id = await runtime.pull_image("nginx:1.25")
    (digest_name,) = runtime.list_images()[0].repo_digests
    assert await runtime.pull_image(digest_name) == image_id
    assert len(runtime.list_images()) == 1


async def test_pull_waits_for_the_scaled_delay_before_the_image_appears() -> None:
    runtime = FakeRuntime("n", speed=FAST, pull_delay=60.0)
    pull = asyncio.ensure_future(runtime.pull_image("redis:7"))
    await asyncio.sleep(0)
    assert not pull.done()
    assert not runtime.has_image("redis:7")
    await asyncio.wait_for(pull, timeout=5)
    assert runtime.has_image("redis:7")


async def test_concurrent_pulls_of_one_reference_share_one_download() -> None:
    calls: list[str] = []

    def delay(reference: str) -> float:
        calls.append(reference)
        return 60.0

    runtime = FakeRuntime("n", speed=FAST, pull_delay=delay)
    ids = await asyncio.wait_for(
        asyncio.gather(*(runtime.pull_image("redis:7") for _ in range(5))), timeout=5
    )
    assert len(set(ids)) == 1
    assert calls == ["docker.io/library/redis:7"]


@pytest.mark.parametrize(
    ("patterns", "image", "fails"),
    [
        ({"nginx:bad"}, "nginx:bad", True),
        ({"docker.io/library/nginx:bad"}, "nginx:bad", True),
        ({"*:bad"}, "nginx:bad", True),
        ({"*:bad"}, "nginx:good", False),
        ({"quay.io/*"}, "quay.io/x/y:1", True),
        (set(), "nginx", False),
    ],
)
async def test_configured_pull_failures(patterns: set[str], image: str, fails: bool) -> None:
    runtime = FakeRuntime("n", fail_images=patterns)
    if fails:
        with pytest.raises(ImagePullError, match=r'failed to pull and unpack image ".*": .*not found'):
            await runtime.pull_image(image)
        assert not runtime.has_image(image)
    else:
        await runtime.pull_image(image)
        assert runtime.has_image(image)


async def test_pull_failure_predicate_and_recovery() -> None:
    runtime = FakeRuntime("n", fail_image_if=lambda ref: ref.endswith(":broken"))
    with pytest.raises(ImagePullError) as caught:
        await runtime.pull_image("app:broken")
    assert caught.value.code == "NOT_FOUND"
    runtime.fail_image_if = None
    await runtime.pull_image("app:broken")
    assert runtime.has_image("app:broken")


async def test_invalid_reference_is_an_invalid_argument(runtime: FakeRuntime) -> None:
    with pytest.raises(InvalidArgumentError, match='failed to parse image reference "Bad:Ref"'):
        await runtime.pull_image("Bad:Ref")


async def test_remove_image_is_idempotent(runtime: FakeRuntime) -> None:
    await runtime.pull_image("nginx")
    runtime.remove_image("nginx")
    runtime.remove_image("nginx")
    assert runtime.list_images() == []
    with pytest.raises(NotFoundError):
        runtime.image_ref("nginx")


async def test_waiters_learn_of_image_changes(runtime: FakeRuntime) -> None:
    start = runtime.images.generation
    waiter = asyncio.ensure_future(runtime.wait_images_changed(start))
    await asyncio.sleep(0)
    assert not waiter.done()
    await runtime.pull_image("nginx")
    after_pull = await asyncio.wait_for(waiter, timeout=5)
    assert after_pull > start
    await runtime.pull_image("nginx")  # already present: nothing changes
    assert runtime.images.generation == after_pull
    runtime.remove_image("nginx")
    assert await asyncio.wait_for(runtime.wait_images_changed(after_pull), timeout=5) > after_pull


def test_pull_settings_can_change_at_run_time(runtime: FakeRuntime) -> None:
    runtime.speed = 2.0
    runtime.pull_delay = 5.0
    assert (runtime.images.speed, runtime.images.pull_delay) == (2.0, 5.0)
    with pytest.raises(ValueError, match="speed: must be > 0"):
        runtime.speed = -1


def test_preload_makes_images_present_without_delay() -> None:
    runtime = FakeRuntime("n", pull_delay=3600)
    (image_id,) = runtime.preload("registry.k8s.io/pause:3.10")
    assert runtime.image_ref("registry.k8s.io/pause:3.10") == image_id


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed: must be > 0"):
        FakeRuntime("n", speed=0)


# ---------------------------------------------------------------- sandboxes


def test_sandbox_gets_kubelet_labels_and_is_ready(runtime: FakeRuntime) -> None:
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1", labels={"app": "web"}, ip="10.0.0.5")
    assert HEX64.fullmatch(sandbox_id)
    sandbox = runtime.pod_sandbox(sandbox_id)
    assert sandbox.state == SandboxState.READY
    assert sandbox.labels == {
        "app": "web",
        "io.kubernetes.pod.name": "web-0",
        "io.kubernetes.pod.namespace": "default",
        "io.kubernetes.pod.uid": "uid-1",
    }
    assert sandbox.ip == "10.0.0.5"


def test_sandbox_name_and_attempt_are_reserved_once(runtime: FakeRuntime) -> None:
    runtime.run_pod_sandbox("web-0", "default", "uid-1")
    with pytest.raises(AlreadyExistsError, match='failed to reserve sandbox name "web-0_default_uid-1_0"'):
        runtime.run_pod_sandbox("web-0", "default", "uid-1")
    runtime.run_pod_sandbox("web-0", "default", "uid-1", attempt=1)


def test_sandbox_requires_name_and_namespace(runtime: FakeRuntime) -> None:
    with pytest.raises(InvalidArgumentError, match=r"metadata\.name"):
        runtime.run_pod_sandbox("", "default", "uid")
    with pytest.raises(InvalidArgumentError, match=r"metadata\.namespace"):
        runtime.run_pod_sandbox("p", "", "uid")


async def test_stop_sandbox_kills_its_containers_and_blocks_new_ones(runtime: FakeRuntime) -> None:
    sandbox_id, container_id = await running_container(runtime)
    runtime.stop_pod_sandbox(sandbox_id)
    runtime.stop_pod_sandbox(sandbox_id)
    assert runtime.pod_sandbox(sandbox_id).state == SandboxState.NOTREADY
    container = runtime.container(container_id)
    assert (container.state, container.exit_code, container.reason) == (ContainerState.EXITED, 137, "Error")
    with pytest.raises(FailedPreconditionError, match="is not running"):
        runtime.create_container(sandbox_id, "late", "nginx:1.25")


async def test_remove_sandbox_removes_its_containers_and_is_idempotent(runtime: FakeRuntime) -> None:
    sandbox_id, container_id = await running_container(runtime)
    runtime.remove_pod_sandbox(sandbox_id)
    runtime.remove_pod_sandbox(sandbox_id)
    assert runtime.list_pod_sandboxes() == []
    with pytest.raises(NotFoundError, match=f'find container "{container_id}"'):
        runtime.container(container_id)


def test_list_sandboxes_filters(runtime: FakeRuntime) -> None:
    a = runtime.run_pod_sandbox("a", "ns", "ua", labels={"app": "x"})
    b = runtime.run_pod_sandbox("b", "ns", "ub", labels={"app": "y"})
    runtime.stop_pod_sandbox(b)
    assert [s.id for s in runtime.list_pod_sandboxes()] == [a, b]
    assert [s.id for s in runtime.list_pod_sandboxes(state=SandboxState.READY)] == [a]
    assert [s.id for s in runtime.list_pod_sandboxes(labels={"app": "y"})] == [b]
    assert [s.id for s in runtime.list_pod_sandboxes(id=b[:12])] == [b]
    assert runtime.list_pod_sandboxes(id="f" * 64) == []


def test_unknown_sandbox_is_not_found(runtime: FakeRuntime) -> None:
    with pytest.raises(NotFoundError, match='an error occurred when try to find sandbox "nope": not found'):
        runtime.stop_pod_sandbox("nope")


# --------------------------------------------------------------- containers


async def test_container_lifecycle_records_state_and_timestamps(runtime: FakeRuntime) -> None:
    await runtime.pull_image("nginx:1.25")
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1")
    container_id = runtime.create_container(sandbox_id, "app", "nginx:1.25", attempt=2, labels={"x": "1"})
    assert HEX64.fullmatch(container_id)
    created = runtime.container(container_id)
    assert created.state == ContainerState.CREATED
    assert (created.started_at, created.finished_at) == (0, 0)
    assert created.labels == {
        "x": "1",
        "io.kubernetes.pod.name": "web-0",
        "io.kubernetes.pod.namespace": "default",
        "io.kubernetes.pod.uid": "uid-1",
        "io.kubernetes.container.name": "app",
    }
    assert created.image_tag == "docker.io/library/nginx:1.25"
    assert created.image_id == runtime.image_ref("nginx:1.25")
    assert created.image_ref.startswith("docker.io/library/nginx@sha256:")

    runtime.start_container(container_id)
    started = runtime.container(container_id)
    assert started.state == ContainerState.RUNNING
    assert started.started_at > started.created_at

    runtime.stop_container(container_id, timeout=30, exit_code=0)
    stopped = runtime.container(container_id)
    assert (stopped.state, stopped.exit_code, stopped.reason) == (ContainerState.EXITED, 0, "Completed")
    assert stopped.finished_at > stopped.started_at

    runtime.remove_container(container_id)
    runtime.remove_container(container_id)
    assert runtime.list_containers() == []


async def test_state_machine_rejects_invalid_transitions(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    with pytest.raises(FailedPreconditionError, match="container is in CONTAINER_RUNNING state"):
        runtime.start_container(container_id)
    runtime.stop_container(container_id, exit_code=1)
    runtime.stop_container(container_id)  # a second stop is a no-op
    assert runtime.container(container_id).reason == "Error"
    with pytest.raises(FailedPreconditionError, match="container is in CONTAINER_EXITED state"):
        runtime.start_container(container_id)
    with pytest.raises(InvalidArgumentError, match="timeout: must be >= 0"):
        runtime.stop_container(container_id, timeout=-1)


async def test_update_container_resources_only_on_a_live_container(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    assert runtime.container(container_id).resources == LinuxResources()
    resized = LinuxResources(cpu_period=100_000, cpu_quota=50_000, cpu_shares=102, memory_limit_in_bytes=128)
    runtime.update_container_resources(container_id, resized)
    assert runtime.container(container_id).resources == resized
    runtime.stop_container(container_id)
    with pytest.raises(FailedPreconditionError, match="is in CONTAINER_EXITED state"):
        runtime.update_container_resources(container_id, LinuxResources())
    with pytest.raises(NotFoundError):
        runtime.update_container_resources("0" * 64, resized)


async def test_create_needs_the_image_and_a_unique_name_attempt(runtime: FakeRuntime) -> None:
    sandbox_id = runtime.run_pod_sandbox("p", "ns", "u")
    with pytest.raises(NotFoundError, match=r'failed to resolve image "nginx:1\.25": not found'):
        runtime.create_container(sandbox_id, "app", "nginx:1.25")
    await runtime.pull_image("nginx:1.25")
    runtime.create_container(sandbox_id, "app", "nginx:1.25")
    with pytest.raises(AlreadyExistsError, match='failed to reserve container name "app_p_ns_u_0"'):
        runtime.create_container(sandbox_id, "app", "nginx:1.25")
    runtime.create_container(sandbox_id, "app", "nginx:1.25", attempt=1)
    with pytest.raises(InvalidArgumentError, match=r"metadata\.name"):
        runtime.create_container(sandbox_id, "", "nginx:1.25")
    with pytest.raises(NotFoundError, match="find sandbox"):
        runtime.create_container("missing", "app", "nginx:1.25")


async def test_ids_resolve_by_unique_prefix(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    assert runtime.container(container_id[:13]).id == container_id
    with pytest.raises(NotFoundError):
        runtime.container("")


async def test_list_containers_filters(runtime: FakeRuntime) -> None:
    await runtime.pull_image("nginx:1.25")
    first = runtime.run_pod_sandbox("a", "ns", "ua")
    second = runtime.run_pod_sandbox("b", "ns", "ub")
    app = runtime.create_container(first, "app", "nginx:1.25")
    side = runtime.create_container(first, "sidecar", "nginx:1.25")
    other = runtime.create_container(second, "app", "nginx:1.25")
    runtime.start_container(app)

    def ids(**filters) -> list[str]:
        return [c.id for c in runtime.list_containers(**filters)]

    assert ids() == [app, side, other]
    assert ids(sandbox_id=first) == [app, side]
    assert ids(sandbox_id=first[:10]) == [app, side]
    assert ids(state=ContainerState.RUNNING) == [app]
    assert ids(labels={"io.kubernetes.container.name": "app"}) == [app, other]
    assert ids(labels={"io.kubernetes.pod.name": "b", "io.kubernetes.container.name": "app"}) == [other]
    assert ids(id=side[:8]) == [side]
    assert ids(id=side, state=ContainerState.RUNNING) == []


async def test_exec_sync_uses_the_handler_and_needs_a_running_container(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    assert runtime.exec_sync(container_id, ["true"]) == ExecResult(exit_code=0)
    runtime.exec_handler = lambda container, cmd: ExecResult(exit_code=3, stdout=" ".join(cmd).encode())
    assert runtime.exec_sync(container_id, ["cat", "/ready"]) == ExecResult(exit_code=3, stdout=b"cat /ready")
    with pytest.raises(InvalidArgumentError, match="cmd"):
        runtime.exec_sync(container_id, [])
    runtime.stop_container(container_id)
    with pytest.raises(FailedPreconditionError, match="CONTAINER_EXITED"):
        runtime.exec_sync(container_id, ["true"])


async def test_records_are_snapshots(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    before = runtime.container(container_id)
    runtime.stop_container(container_id)
    assert before.state == ContainerState.RUNNING
    assert runtime.container(container_id).state == ContainerState.EXITED


# ------------------------------------------------------------------- events


async def test_events_report_each_transition_with_its_cause(runtime: FakeRuntime) -> None:
    with runtime.subscribe() as events:
        _, container_id = await running_container(runtime)
        runtime.stop_container(container_id, cause=CAUSE_CRI)
        runtime.remove_container(container_id)
        seen = [events.get_nowait() for _ in range(events.pending())]
    assert [(e.type, e.cause) for e in seen] == [
        (ContainerEventType.CREATED, CAUSE_KUBELET),
        (ContainerEventType.STARTED, CAUSE_KUBELET),
        (ContainerEventType.STOPPED, CAUSE_CRI),
        (ContainerEventType.DELETED, CAUSE_KUBELET),
    ]
    assert {e.container.id for e in seen} == {container_id}
    assert seen[2].container.state == ContainerState.EXITED
    assert [e.at for e in seen] == sorted(e.at for e in seen)


async def test_removing_a_running_container_reports_stop_then_delete(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    with runtime.subscribe() as events:
        runtime.remove_container(container_id, cause=CAUSE_CRI)
        kinds = [events.get_nowait().type for _ in range(events.pending())]
    assert kinds == [ContainerEventType.STOPPED, ContainerEventType.DELETED]


async def test_every_subscriber_gets_every_event_and_close_ends_iteration(runtime: FakeRuntime) -> None:
    first, second = runtime.subscribe(), runtime.subscribe()
    _, container_id = await running_container(runtime)
    second.close()
    runtime.stop_container(container_id)
    first.close()
    received = [event.type async for event in first]
    assert received == [ContainerEventType.CREATED, ContainerEventType.STARTED, ContainerEventType.STOPPED]
    assert [event.type async for event in second] == [ContainerEventType.CREATED, ContainerEventType.STARTED]
    with pytest.raises(EOFError):
        await first.get()


async def test_a_waiting_subscriber_wakes_on_the_next_event(runtime: FakeRuntime) -> None:
    _, container_id = await running_container(runtime)
    with runtime.subscribe() as events:
        waiter = asyncio.ensure_future(events.get())
        await asyncio.sleep(0)
        assert not waiter.done()
        runtime.stop_container(container_id, cause=CAUSE_CRI)
        event = await asyncio.wait_for(waiter, timeout=5)
    assert (event.type, event.cause, event.container.id) == (
        ContainerEventType.STOPPED,
        CAUSE_CRI,
        container_id,
    )
