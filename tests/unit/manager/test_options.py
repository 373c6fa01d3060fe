"""kruise-manager flags: upstream names and defaults, and errors that name the flag."""

from __future__ import annotations

import pytest

from kruise.api import features
from kruise.manager.options import Address, parse_args


def test_defaults_match_upstream() -> None:
    options = parse_args([], env={})
    assert options.leader_election and options.leader_election_id == "kruise-manager"
    assert options.leader_election_namespace == "kruise-system"
    assert (options.lease_duration, options.renew_deadline, options.retry_period) == (15.0, 10.0, 2.0)
    assert options.metrics_addr == Address("0.0.0.0", 8080)
    assert options.health_probe_addr == Address("0.0.0.0", 8000)
    assert (options.qps, options.burst) == (30.0, 50)
    assert options.controller_enabled("cloneset")


def test_pod_namespace_env_is_the_default_namespace() -> None:
    options = parse_args([], env={"POD_NAMESPACE": "kruise"})
    assert options.namespace == "kruise" and options.leader_election_namespace == "kruise"


def test_flags_are_parsed() -> None:
    options = parse_args(
        [
            "--metrics-addr", "127.0.0.1:9090", "--health-probe-addr", ":9000",
            "--feature-gates", "ImagePullJobGate=true", "--controller-workers", "cloneset=5,x=1",
            "--controllers", "*,-sidecarset", "--enable-leader-election", "false",
        ],
        env={},
    )  # fmt: skip
    assert options.metrics_addr == Address("127.0.0.1", 9090)
    assert options.health_probe_addr == Address("0.0.0.0", 9000)
    assert options.feature_gates.enabled(features.IMAGE_PULL_JOB_GATE)
    assert options.workers == {"cloneset": 5, "x": 1}
    assert options.controller_enabled("cloneset") and not options.controller_enabled("sidecarset")
    assert not options.leader_election


def test_controllers_list_without_star_enables_only_named() -> None:
    options = parse_args(["--controllers", "cloneset"], env={})
    assert options.controller_enabled("cloneset") and not options.controller_enabled("other")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--metrics-addr", "nope"], "--metrics-addr: invalid address"),
        (["--health-probe-addr", ":99999"], "--health-probe-addr: invalid address"),
        (["--feature-gates", "Typo=true"], "--feature-gates: unrecognized feature gate: Typo"),
        (["--controller-workers", "cloneset=0"], "--controller-workers: invalid entry"),
        (["--leader-election-lease-duration", "5"], "leaseDuration: must be greater than renewDeadline"),
        (["--rest-config-qps", "0"], "--rest-config-qps"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(argv, env={})
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30.0), ("1m30s", 90.0), ("500ms", 0.5), ("0", 0.0)])
def test_nodeimage_creation_delay_takes_go_durations(text, seconds):
    assert parse_args(["--nodeimage-creation-delay", text], env={}).nodeimage_creation_delay == seconds


def test_nodeimage_creation_delay_rejects_bare_numbers(capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--nodeimage-creation-delay", "30"], env={})
    assert exit_.value.code == 2
    assert "--nodeimage-creation-delay" in capsys.readouterr().err


def test_assign_bcj_pods_by_scheduler_defaults_to_true() -> None:
    assert parse_args([], env={}).assign_bcj_pods_by_scheduler is True


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--assign-bcj-pods-by-scheduler"], True),
        (["--assign-bcj-pods-by-scheduler=false"], False),
        (["--assign-bcj-pods-by-scheduler=0"], False),
        (["--assign-bcj-pods-by-scheduler=F"], False),
        (["--assign-bcj-pods-by-scheduler=True"], True),
        (["--assign-bcj-pods-by-scheduler=1"], True),
    ],
)
def test_assign_bcj_pods_by_scheduler_takes_go_booleans(argv, expected) -> None:
    assert parse_args(argv, env={}).assign_bcj_pods_by_scheduler is expected


def test_assign_bcj_pods_by_scheduler_rejects_other_words(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--assign-bcj-pods-by-scheduler=no"], env={})
    assert exit_.value.code == 2
    assert '--assign-bcj-pods-by-scheduler: invalid boolean "no"' in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["true", "false"])
def test_assign_bcj_pods_by_scheduler_reaches_the_broadcastjob_reconciler(flag) -> None:
    """Flag → Options → the manager's context → the reconciler's ``by_scheduler``."""
    from kruise.manager.app import Manager
    from kruise.manager.controllers import broadcastjob

    options = parse_args([f"--assign-bcj-pods-by-scheduler={flag}", "--enable-leader-election=false"], env={})
    manager = Manager(_UnusedClient(), options, setups=[broadcastjob.SETUP])  # type: ignore[arg-type]
    controller = broadcastjob.SETUP.build(manager.context)
    assert controller._reconcile.__self__.by_scheduler is (flag == "true")  # type: ignore[attr-defined]


class _UnusedClient:
    """Building the manager and a controller wires informers but sends no request."""


@pytest.mark.parametrize(
    ("flag", "seconds"),
    [("0", 0.0), ("30", 30.0), ("1.5", 1.5), ("30s", 30.0), ("10m", 600.0), ("1h30m", 5400.0)],
)
def test_sync_period_takes_go_durations_and_seconds(flag, seconds):
    assert parse_args([f"--sync-period={flag}"], env={}).sync_period == seconds


@pytest.mark.parametrize("flag", ["-5", "ten", "10x"])
def test_bad_sync_period_names_the_flag(flag, capsys):
    with pytest.raises(SystemExit):
        parse_args([f"--sync-period={flag}"], env={})
    assert "--sync-period" in capsys.readouterr().err


def test_webhook_service_name_defaults_to_not_waiting():
    assert parse_args([], env={}).webhook_service_name == ""
    assert parse_args(["--webhook-service-name=svc"], env={}).webhook_service_name == "svc"


def test_expectation_timeout_is_upstreams_flag_with_its_5m_default():
    assert parse_args([], env={}).expectation_timeout == 300.0
    assert parse_args(["--expectation-timeout=3s"], env={}).expectation_timeout == 3.0


@pytest.mark.parametrize("flag", ["0", "10", "soon"])
def test_bad_expectation_timeout_names_the_flag(flag, capsys):
    with pytest.raises(SystemExit):
        parse_args([f"--expectation-timeout={flag}"], env={})
    assert "--expectation-timeout" in capsys.readouterr().err


def test_expectation_timeout_reaches_the_controllers_expectations():
    """Flag → Options → the manager's context → the CloneSet reconciler's expectations."""
    from kruise.manager.app import Manager
    from kruise.manager.controllers import cloneset

    options = parse_args(["--expectation-timeout=3s", "--enable-leader-election=false"], env={})
    manager = Manager(_UnusedClient(), options, setups=[cloneset.SETUP])  # type: ignore[arg-type]
    reconciler = cloneset.SETUP.build(manager.context)._reconcile.__self__  # type: ignore[attr-defined]
    assert reconciler.scale_expectations.timeout == 3.0
    assert reconciler.rv_expectations.timeout == 3.0


@pytest.mark.parametrize(("flag", "seconds"), [(None, 120.0), ("300", 300.0), ("5m", 300.0), ("90s", 90.0)])
def test_cache_sync_timeout_takes_seconds_or_a_duration(flag, seconds):
    argv = [] if flag is None else [f"--cache-sync-timeout={flag}"]
    assert parse_args(argv, env={}).cache_sync_timeout == seconds


@pytest.mark.parametrize("flag", ["0", "-1", "soon"])
def test_bad_cache_sync_timeout_names_the_flag(flag, capsys):
    with pytest.raises(SystemExit):
        parse_args([f"--cache-sync-timeout={flag}"], env={})
    assert "--cache-sync-timeout" in capsys.readouterr().err


async def test_the_leader_waits_for_its_caches_as_long_as_the_flag_says():
    """Flag → Options → the leader's cache-sync wait; caches that never sync end it naming the flag."""
    from kruise.manager.app import Manager
    from kruise.manager.controllers import cloneset

    options = parse_args(["--cache-sync-timeout=7m", "--enable-leader-election=false"], env={})
    manager = Manager(_UnusedClient(), options, setups=[cloneset.SETUP])  # type: ignore[arg-type]
    manager._built = True  # no informer is started: the wait below is the factory's, replaced
    waited: list[float | None] = []

    async def never_synced(timeout: float | None = None) -> bool:
        waited.append(timeout)
        return False

    manager.context.informers.wait_for_cache_sync = never_synced  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match=r"within 420s \(--cache-sync-timeout\)"):
        await manager._lead()
    assert waited == [420.0]
    assert not manager.leading
