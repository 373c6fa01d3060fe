"""Resource-type resolution, `TYPE/NAME` forms, and kubectl's flag grammar."""

from __future__ import annotations

import argparse

import pytest

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.connection import ConfigError, ConnectionOptions
from kruise.cli.kubectl_kruise.parser import (
    build_parser,
    normalize_argv,
    parse_bool,
    parse_dry_run,
    parse_duration,
)


@pytest.mark.parametrize(
    ("name", "workload"),
    [
        ("cloneset", kinds.CLONESET),
        ("clonesets", kinds.CLONESET),
        ("clone", kinds.CLONESET),
        ("CloneSet", kinds.CLONESET),
        ("clonesets.apps.kruise.io", kinds.CLONESET),
        ("cloneset.v1alpha1.apps.kruise.io", kinds.CLONESET),
        ("asts", kinds.ADVANCED_STATEFULSET),
        ("statefulsets.apps.kruise.io", kinds.ADVANCED_STATEFULSET),
        ("statefulset.v1beta1.apps.kruise.io", kinds.ADVANCED_STATEFULSET),
        ("sts", kinds.STATEFULSET),
        ("statefulset", kinds.STATEFULSET),
        ("statefulsets.apps", kinds.STATEFULSET),
        ("daemon", kinds.ADVANCED_DAEMONSET),
        ("ads", kinds.ADVANCED_DAEMONSET),
        ("daemonsets.apps.kruise.io", kinds.ADVANCED_DAEMONSET),
        ("ds", kinds.DAEMONSET),
        ("daemonset", kinds.DAEMONSET),
        ("deploy", kinds.DEPLOYMENT),
        ("deployments.apps", kinds.DEPLOYMENT),
    ],
)
def test_resolve_type(name, workload):
    assert kinds.resolve_type(name) is workload


def test_unknown_type_uses_kubectl_wording():
    with pytest.raises(kinds.ResolveError, match='the server doesn\'t have a resource type "widget"'):
        kinds.resolve_type("widget")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["cloneset/a"], [(kinds.CLONESET, "a")]),
        (["cloneset/a", "asts/b"], [(kinds.CLONESET, "a"), (kinds.ADVANCED_STATEFULSET, "b")]),
        (["cloneset", "a", "b"], [(kinds.CLONESET, "a"), (kinds.CLONESET, "b")]),
    ],
)
def test_parse_targets(args, expected):
    assert [(t.workload, t.name) for t in kinds.parse_targets(args)] == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "required resource not specified"),
        (["cloneset"], r"resource\(s\) were provided, but no name was specified"),
        (["cloneset/"], "must have a single resource and name"),
        (["cloneset", "cloneset/a"], "no need to specify a resource type as a separate argument"),
    ],
)
def test_parse_targets_errors(args, message):
    with pytest.raises(kinds.ResolveError, match=message):
        kinds.parse_targets(args)


def test_display_names_match_kubectl_name_printer():
    assert kinds.CLONESET.display("x") == "cloneset.apps.kruise.io/x"
    assert kinds.ADVANCED_STATEFULSET.display("x") == "statefulset.apps.kruise.io/x"
    assert kinds.DEPLOYMENT.display("x") == "deployment.apps/x"
    assert kinds.ADVANCED_DAEMONSET.resource == "daemonsets.apps.kruise.io"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("90s", 90.0), ("2m", 120.0), ("1h30m", 5400.0), ("1.5s", 1.5), ("250ms", 0.25)],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["10", "1d", "s", "-1s"])
def test_parse_duration_rejects(text):
    with pytest.raises(argparse.ArgumentTypeError, match="invalid duration"):
        parse_duration(text)


def test_parse_bool_and_dry_run():
    assert parse_bool("false") is False and parse_bool("T") is True
    with pytest.raises(argparse.ArgumentTypeError, match="invalid syntax"):
        parse_bool("yes")
    assert parse_dry_run("server") == "server" and parse_dry_run("unchanged") == "client"
    with pytest.raises(argparse.ArgumentTypeError, match='Must be "none", "server", or "client"'):
        parse_dry_run("all")


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(normalize_argv(argv))


def test_globals_before_and_after_the_subcommand():
    before = parse("-n", "ns1", "--context", "c1", "rollout", "status", "cloneset/a")
    assert (before.namespace, before.context, before.resources) == ("ns1", "c1", ["cloneset/a"])
    after = parse("rollout", "status", "cloneset/a", "-n", "ns2", "--kubeconfig", "/k")
    assert (after.namespace, after.kubeconfig) == ("ns2", "/k")
    both = parse("-n", "ns1", "rollout", "pause", "cloneset/a")
    assert both.namespace == "ns1"


def test_status_flags():
    args = parse("rollout", "status", "-w", "cloneset/a", "--timeout=1m", "--revision=2")
    assert (args.watch, args.timeout, args.revision, args.resources) == (True, 60.0, 2, ["cloneset/a"])
    assert parse("rollout", "status", "cloneset/a", "--watch=false").watch is False


def test_undo_and_scaledown_flags():
    args = parse("rollout", "undo", "--dry-run", "cloneset/a", "--to-revision=3")
    assert (args.dry_run, args.to_revision, args.resources) == ("client", 3, ["cloneset/a"])
    scale = parse("scaledown", "cloneset/a", "--pods", "p1,p2")
    assert (scale.command, scale.pods) == ("scaledown", "p1,p2")


KUBECONFIG = """
apiVersion: v1
kind: Config
current-context: one
contexts:
- name: one
  context: {cluster: c, user: u, namespace: team-a}
- name: two
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
"""


def test_namespace_comes_from_flag_then_context_then_default(tmp_path, monkeypatch):
    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    assert ConnectionOptions(str(path)).resolve_namespace() == "team-a"
    assert ConnectionOptions(str(path), context="two").resolve_namespace() == "default"
    assert ConnectionOptions(str(path), namespace="x").resolve_namespace() == "x"
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert ConnectionOptions().resolve_namespace() == "team-a"
    with pytest.raises(ConfigError, match="context was not found for specified context: three"):
        ConnectionOptions(str(path), context="three").resolve_namespace()


def test_usage_errors_exit_1_the_kubectl_way(capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse("rollout", "status", "cloneset/a", "--watch=maybe")
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith('error: argument -w/--watch: strconv.ParseBool: parsing "maybe": invalid syntax\n')
    assert "See 'kubectl-kruise rollout status --help' for usage." in err


def test_in_a_pod_without_kubeconfig_the_service_account_namespace_is_used(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    namespace_file = tmp_path / "namespace"
    namespace_file.write_text("kruise-system\n")
    options = ConnectionOptions()
    assert options.in_cluster()
    assert options.resolve_namespace(str(namespace_file)) == "kruise-system"
    assert options.resolve_namespace(str(tmp_path / "missing")) == "default"
    assert ConnectionOptions(namespace="x").resolve_namespace(str(namespace_file)) == "x"
    assert not ConnectionOptions(kubeconfig=str(tmp_path / "k")).in_cluster()
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert not options.in_cluster()


def test_missing_kubeconfig_is_refused_with_kubectls_words(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=f"stat {missing}: no such file or directory"):
        ConnectionOptions(str(missing)).resolve_namespace()
    with pytest.raises(ConfigError, match="no configuration has been provided"):
        ConnectionOptions(namespace="x").resolve_namespace()
    monkeypatch.setenv("KUBECONFIG", f"{missing}:{tmp_path / 'also-missing'}")
    with pytest.raises(ConfigError, match="no configuration has been provided"):
        ConnectionOptions().resolve_namespace()


def test_request_timeout_is_a_global_duration():
    assert parse("--request-timeout=5s", "rollout", "pause", "cloneset/a").request_timeout == 5.0
    assert parse("rollout", "pause", "cloneset/a", "--request-timeout", "1m").request_timeout == 60.0
    assert parse("rollout", "pause", "cloneset/a").request_timeout == 0.0
