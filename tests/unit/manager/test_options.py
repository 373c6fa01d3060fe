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
