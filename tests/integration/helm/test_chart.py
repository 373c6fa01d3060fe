"""The Helm chart rendered by a real helm binary (installed into the venv by `make install`):
lint, the objects and flags each process gets, values that change them, and RBAC for what each
process reads and writes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kruise.manager.options import parse_args

CHART = Path(__file__).resolve().parents[3] / "helm" / "kruise"
HELM = Path(sys.executable).parent / "helm"
if not HELM.exists() and shutil.which("helm"):
    HELM = Path(shutil.which("helm"))

pytestmark = pytest.mark.skipif(
    not HELM.exists(), reason="no helm binary (helm/install-helm.sh found none for this machine)"
)


def render(*sets: str, crds: bool = False) -> list[dict]:
    argv = [str(HELM), "template", "kr", str(CHART), "--namespace", "kruise-system"]
    if crds:
        argv.append("--include-crds")
    for value in sets:
        argv += ["--set", value]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def args_of(workload: dict) -> list[str]:
    return workload["spec"]["template"]["spec"]["containers"][0]["args"]


def test_lint_passes():
    result = subprocess.run([str(HELM), "lint", str(CHART)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_default_objects():
    docs = render()
    deployments = by_kind(docs, "Deployment")
    assert set(deployments) == {"kruise-controller-manager", "kruise-webhook"}
    assert deployments["kruise-controller-manager"]["spec"]["replicas"] == 2
    manager_args = args_of(deployments["kruise-controller-manager"])
    assert "--enable-leader-election=true" in manager_args and "--metrics-addr=:8080" in manager_args
    assert "--health-probe-addr=:8000" in manager_args
    webhook = deployments["kruise-webhook"]["spec"]["template"]["spec"]["containers"][0]
    assert webhook["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 9876, "scheme": "HTTPS"}
    service = by_kind(docs, "Service")["kruise-webhook-service"]
    assert service["spec"]["ports"] == [{"port": 443, "targetPort": 9876}]
    daemon = by_kind(docs, "DaemonSet")["kruise-daemon"]
    spec = daemon["spec"]["template"]["spec"]
    assert spec["hostNetwork"] is True
    env = spec["containers"][0]["env"][0]
    assert env == {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
    assert spec["volumes"][0]["hostPath"]["path"] == "/var/run"
    assert by_kind(docs, "Namespace")["kruise-system"]["metadata"]["labels"]["control-plane"] == "openkruise"
    # upstream chart's default gates, passed to every program
    for workload in (*deployments.values(), daemon):
        assert "--feature-gates=ImagePullJobGate=true" in args_of(workload)


def notes(*argv: str) -> str:
    """The release notes `helm install` prints (a client-side dry run: no cluster)."""
    cmd = [str(HELM), "install", "kr", str(CHART), "--dry-run=client", *argv]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return out.split("NOTES:", 1)[1]


UPSTREAM_ONLY = "have no effect in kruise-py"


def test_notes_name_upstream_values_kruise_py_ignores():
    assert UPSTREAM_ONLY not in notes()
    assert "Feature gates: ImagePullJobGate=true" in notes()
    text = notes(
        "--set", "manager.image.repository=openkruise/kruise-manager", "--set", "manager.hostNetwork=true",
        "--set", "daemon.credentialProvider.enable=true", "--set", "enableKubeCacheMutationDetector=true",
        "--set", "manager.pprofAddr=localhost:8090", "--set-json", 'installation.roleListGroups=["apps"]',
    )  # fmt: skip
    assert UPSTREAM_ONLY in text
    named = [line.strip()[2:].split(" ", 1)[0] for line in text.splitlines() if line.strip().startswith("- ")]
    assert named == [
        "manager.image",
        "manager.hostNetwork",
        "daemon.credentialProvider",
        "enableKubeCacheMutationDetector",
        "installation.roleListGroups",
    ]  # pprofAddr at upstream's default draws nothing


def test_notes_for_upstream_values_file_name_only_manager_image(tmp_path):
    upstream_defaults = {
        "installation": {"namespace": "kruise-system", "roleListGroups": ["*"]},
        "featureGates": "ImagePullJobGate=true",
        "enableKubeCacheMutationDetector": False,
        "manager": {"image": {"repository": "openkruise/kruise-manager", "tag": "v1.8.3"},
                    "pprofAddr": "localhost:8090", "hostNetwork": False},
        "daemon": {"enablePprof": True, "pprofAddr": "localhost:10222",
                   "credentialProvider": {"enable": False, "configmap": "credential-provider-config"}},
        "helmHooks": {"image": {"repository": "openkruise/kruise-helm-hook", "tag": "v0.1.0"}},
    }  # fmt: skip
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(upstream_defaults))
    text = notes("-f", str(values))
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("- ")] == [
        "- manager.image (kruise-py runs every program from image.repository/image.tag)"
    ]


def test_values_reach_every_process():
    docs = render(
        "featureGates=ImagePullJobGate=true",
        "manager.replicas=3",
        "daemon.socketFile=containerd/containerd.sock",
    )
    for workload in [*by_kind(docs, "Deployment").values(), *by_kind(docs, "DaemonSet").values()]:
        assert "--feature-gates=ImagePullJobGate=true" in args_of(workload)
    assert by_kind(docs, "Deployment")["kruise-controller-manager"]["spec"]["replicas"] == 3
    assert "--socket-file=containerd/containerd.sock" in args_of(by_kind(docs, "DaemonSet")["kruise-daemon"])
    assert not by_kind(render("daemon.enabled=false"), "DaemonSet")


def test_crds_are_the_generated_ones():
    docs = render(crds=True)
    crds = by_kind(docs, "CustomResourceDefinition")
    generated = {
        p.stem.split("_", 1)[1] + "." + p.stem.split("_", 1)[0]
        for p in (CHART.parents[1] / "crds").glob("*.yaml")
    }
    assert set(crds) == generated


def test_webhook_configurations_are_the_defined_ones_with_the_values_timeout():
    from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration

    docs = render("installation.namespace=kruise-x", "webhookConfiguration.timeoutSeconds=10")
    target = ClientTarget(namespace="kruise-x")
    for kind, build in (
        ("MutatingWebhookConfiguration", mutating_configuration),
        ("ValidatingWebhookConfiguration", validating_configuration),
    ):
        [rendered] = by_kind(docs, kind).values()
        expected = build(target, None, timeout=10)
        assert rendered["metadata"]["name"] == expected["metadata"]["name"]
        assert rendered["webhooks"] == expected["webhooks"]
        assert all(hook["timeoutSeconds"] == 10 for hook in rendered["webhooks"])
    [default] = by_kind(render(), "ValidatingWebhookConfiguration").values()
    assert {hook["timeoutSeconds"] for hook in default["webhooks"]} == {30}


def test_pod_webhooks_are_left_out_when_the_pod_webhook_gate_is_off():
    """As upstream's chart: `featureGates` containing PodWebhook=false drops mpod, vpod and
    vpodeviction (failurePolicy Fail with nothing serving them would refuse every pod write)."""
    pod_hooks = {"mpod.kb.io", "vpod.kb.io", "vpodeviction.kb.io"}
    for gates, present in (("", True), ("PodWebhook=false,ImagePullJobGate=true", False)):
        docs = render(f"featureGates={gates.replace(',', chr(92) + ',')}")
        names = {
            hook["name"]
            for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
            for config in by_kind(docs, kind).values()
            for hook in config["webhooks"]
        }
        assert (pod_hooks <= names) is present
        assert "vcloneset.kb.io" in names and "mcloneset.kb.io" in names


def rules(docs: list[dict], name: str) -> list[dict]:
    return by_kind(docs, "ClusterRole")[name]["rules"]


def allows(role_rules: list[dict], group: str, resource: str, verb: str) -> bool:
    return any(
        (group in r["apiGroups"])
        and (resource in r["resources"] or "*" in r["resources"])
        and verb in r["verbs"]
        for r in role_rules
    )


@pytest.mark.parametrize(
    ("role", "group", "resource", "verb"),
    [
        ("kruise-manager-role", "apps.kruise.io", "clonesets", "update"),
        ("kruise-manager-role", "", "pods", "create"),
        ("kruise-manager-role", "", "pods/status", "update"),
        ("kruise-manager-role", "apps", "controllerrevisions", "create"),
        ("kruise-manager-role", "", "events", "create"),
        ("kruise-manager-role", "batch", "jobs", "create"),  # AdvancedCronJob children
        ("kruise-manager-role", "batch", "jobs", "delete"),
        ("kruise-manager-role", "", "secrets", "create"),  # ResourceDistribution copies
        ("kruise-manager-role", "", "secrets", "delete"),
        ("kruise-manager-role", "apps", "deployments", "create"),  # UnitedDeployment children
        ("kruise-manager-role", "apps", "statefulsets", "update"),
        ("kruise-manager-role", "storage.k8s.io", "storageclasses", "watch"),  # claim resize gate
        ("kruise-manager-role", "apiextensions.k8s.io", "customresourcedefinitions", "list"),  # WS whitelist
        ("kruise-manager-role", "apiextensions.k8s.io", "customresourcedefinitions", "watch"),  # migration
        ("kruise-manager-role", "apiextensions.k8s.io", "customresourcedefinitions/status", "update"),
        ("kruise-webhook-role", "policy.kruise.io", "podunavailablebudgets/status", "update"),
        ("kruise-webhook-role", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "patch"),
        ("kruise-webhook-role", "", "namespaces", "list"),
        ("kruise-webhook-role", "apps.kruise.io", "podprobemarkers", "watch"),  # serverless probes gate
        ("kruise-manager-role", "", "pods", "patch"),  # serverless pods marked by PodProbeMarker
        ("kruise-manager-role", "", "nodes", "watch"),
        ("kruise-daemon-role", "apps.kruise.io", "nodeimages/status", "patch"),
        ("kruise-daemon-role", "apps.kruise.io", "containerrecreaterequests/status", "update"),
        ("kruise-daemon-role", "", "pods/status", "patch"),  # runtime-containers-meta
        ("kruise-daemon-role", "apiextensions.k8s.io", "customresourcedefinitions", "list"),  # wire
    ],
)
def test_rbac_covers_what_each_process_does(role, group, resource, verb):
    assert allows(rules(render(), role), group, resource, verb)


def test_upstream_manager_webhook_port_key_sets_the_webhook_port():
    docs = render("manager.webhook.port=9443")
    (deployment,) = [
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "kruise-webhook"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--port=9443" in container["args"]
    assert container["readinessProbe"]["httpGet"]["port"] == 9443
    (service,) = [
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "kruise-webhook-service"
    ]
    assert service["spec"]["ports"] == [{"port": 443, "targetPort": 9443}]


def test_upstream_manager_keys_reach_the_manager_flags_and_pod():
    default = by_kind(render(), "Deployment")["kruise-controller-manager"]
    assert "--sync-period=0" in args_of(default) and "--logging-format=json" in args_of(default)
    assert "--webhook-service-name=kruise-webhook-service" in args_of(default)
    assert "--cache-sync-timeout=2m" in args_of(default)
    assert "affinity" not in default["spec"]["template"]["spec"]
    affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["infra"]}]}]}}  # fmt: skip
    docs = render(
        "manager.resyncPeriod=10m",
        "manager.cacheSyncTimeout=5m",
        "manager.loggingFormat=console",
        "manager.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key=pool",
        "manager.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].operator=In",
        "manager.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values[0]=infra",
    )
    manager = by_kind(docs, "Deployment")["kruise-controller-manager"]
    assert "--sync-period=10m" in args_of(manager) and "--logging-format=console" in args_of(manager)
    assert manager["spec"]["template"]["spec"]["affinity"] == {"nodeAffinity": affinity}
    # the rendered flags parse: the key does something in kruise-manager
    options = parse_args(
        [a for a in args_of(manager) if a.startswith(("--sync-period", "--logging-format", "--cache-sync"))],
        env={},
    )
    assert options.sync_period == 600.0 and options.logging_format == "console"
    assert options.cache_sync_timeout == 300.0


def test_upstream_daemon_and_service_account_keys():
    daemon = by_kind(render(), "DaemonSet")["kruise-daemon"]["spec"]["template"]["spec"]
    term = daemon["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "type", "operator": "NotIn", "values": ["virtual-kubelet"]}
    ]
    assert [e["name"] for e in daemon["containers"][0]["env"]] == ["NODE_NAME"]
    docs = render(
        "daemon.extraEnvs[0].name=HTTPS_PROXY",
        "daemon.extraEnvs[0].value=http://proxy:3128",
        "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/kruise",
        "daemon.affinity=null",
    )
    daemon = by_kind(docs, "DaemonSet")["kruise-daemon"]["spec"]["template"]["spec"]
    assert daemon["containers"][0]["env"][1] == {"name": "HTTPS_PROXY", "value": "http://proxy:3128"}
    assert "affinity" not in daemon
    accounts = by_kind(docs, "ServiceAccount")
    assert set(accounts) == {"kruise-manager", "kruise-webhook", "kruise-daemon"}
    for account in accounts.values():
        assert account["metadata"]["annotations"] == {
            "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/kruise"
        }
    assert all("annotations" not in a["metadata"] for a in by_kind(render(), "ServiceAccount").values())


INJECT = {"cert-manager.io/inject-ca-from": "kruise-system/kruise-webhook-cert"}
EXTERNAL = (
    "featureGates=EnableExternalCerts=true",
    "externalCerts.annotations.cert-manager\\.io/inject-ca-from=kruise-system/kruise-webhook-cert",
)


def conversion_crds() -> set[str]:
    """The CRDs in crds/ whose conversion kruise-webhook serves (the ones a CA injector must fill in)."""
    names = set()
    for path in (CHART.parents[1] / "crds").glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            names.add(crd["metadata"]["name"])
    return names


def secret_verbs(docs: list[dict]) -> set[str]:
    [rule] = by_kind(docs, "Role")["kruise-webhook-secrets-role"]["rules"]
    assert rule["resources"] == ["secrets"]
    return set(rule["verbs"])


def test_the_daemon_reads_secrets_only_in_kruise_daemon_config():
    docs = render()
    assert not allows(rules(docs, "kruise-daemon-role"), "", "secrets", "get")
    role = by_kind(docs, "Role")["kruise-daemon-secret-role"]
    assert role["metadata"]["namespace"] == "kruise-daemon-config"
    assert allows(role["rules"], "", "secrets", "get")
    binding = by_kind(docs, "RoleBinding")["kruise-daemon-secret-rolebinding"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kruise-daemon", "namespace": "kruise-system"}
    ]
    assert "kruise-daemon-config" in by_kind(docs, "Namespace")


def test_default_render_has_no_external_certs_objects():
    docs = render()
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        [config] = by_kind(docs, kind).values()
        assert config["metadata"]["annotations"] == {"template": ""}
    assert not by_kind(docs, "CustomResourceDefinition")  # CRDs come from crds/ only
    assert not by_kind(docs, "Secret")  # kruise-webhook creates kruise-webhook-certs itself
    assert secret_verbs(docs) >= {"create", "update", "patch"}
    webhook_role = rules(docs, "kruise-webhook-role")
    assert allows(webhook_role, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch")
    assert allows(webhook_role, "apiextensions.k8s.io", "customresourcedefinitions", "update")


def test_external_certs_annotations_reach_configurations_and_conversion_crds():
    docs = render(*EXTERNAL)
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        [config] = by_kind(docs, kind).values()
        assert config["metadata"]["annotations"] == {"template": "", **INJECT}
    crds = by_kind(docs, "CustomResourceDefinition")
    assert set(crds) == conversion_crds() and "statefulsets.apps.kruise.io" in crds
    assert "nodepodprobes.apps.kruise.io" not in crds  # no conversion webhook: nothing to inject
    for name, crd in crds.items():
        generated = yaml.safe_load((CHART.parents[1] / "crds" / f"{crd['spec']['group']}_"
                                    f"{crd['spec']['names']['plural']}.yaml").read_text())  # fmt: skip
        assert crd["metadata"]["annotations"] == {**INJECT, "helm.sh/resource-policy": "keep"}, name
        assert crd["spec"] == generated["spec"], name  # the same CRD as crds/, only annotated
    # the Secret is the issuer's: not rendered; kruise-webhook writes none of Secret, configurations, CRDs
    assert not by_kind(docs, "Secret")
    assert secret_verbs(docs) == {"get", "list", "watch"}
    webhook_role = rules(docs, "kruise-webhook-role")
    for resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        assert allows(webhook_role, "admissionregistration.k8s.io", resource, "watch")
        for verb in ("create", "update", "patch"):
            assert not allows(webhook_role, "admissionregistration.k8s.io", resource, verb)
    assert allows(webhook_role, "apiextensions.k8s.io", "customresourcedefinitions", "watch")
    for verb in ("update", "patch"):
        assert not allows(webhook_role, "apiextensions.k8s.io", "customresourcedefinitions", verb)


def test_conversion_crds_follow_the_release_namespace():
    docs = render("installation.namespace=kruise-x", EXTERNAL[1])
    for crd in by_kind(docs, "CustomResourceDefinition").values():
        service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert service == {"name": "kruise-webhook-service", "namespace": "kruise-x", "path": "/convert"}


@pytest.mark.parametrize(
    ("gates", "external"),
    [
        ("EnableExternalCerts=true", True),
        ("AllAlpha=true", True),  # an alpha gate
        ("ImagePullJobGate=true,EnableExternalCerts=True", True),
        ("EnableExternalCerts=1", True),
        ("", False),
        ("EnableExternalCerts=false", False),
        ("AllAlpha=true,EnableExternalCerts=false", False),  # its own entry wins, as in the process
        ("AllBeta=true", False),
        ("ImagePullJobGate=true", False),
    ],
)
def test_external_certs_gate_is_read_as_the_process_reads_it(gates, external):
    from kruise.api.features import ENABLE_EXTERNAL_CERTS, FeatureGates, parse

    assert FeatureGates(parse(gates), env={}).enabled(ENABLE_EXTERNAL_CERTS) is external
    docs = render(f"featureGates={gates.replace(',', chr(92) + ',')}")
    assert ("create" not in secret_verbs(docs)) is external


def test_api_set_default_is_1_9():
    docs = render()
    assert "--api-set=1.9" in args_of(by_kind(docs, "Deployment")["kruise-webhook"])
    [validating] = by_kind(docs, "ValidatingWebhookConfiguration").values()
    [cloneset] = [h for h in validating["webhooks"] if h["name"] == "vcloneset.kb.io"]
    assert cloneset["rules"][0]["apiVersions"] == ["v1alpha1"]


def test_api_set_2_0_renders_master_crds_rules_and_flag(tmp_path):
    from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration

    values = tmp_path / "values.yaml"
    values.write_text("apiSet: 2.0\n")  # unquoted: a YAML number, read as "2.0"
    for docs in (render("apiSet=2.0"), render_with_values(values)):
        assert "--api-set=2.0" in args_of(by_kind(docs, "Deployment")["kruise-webhook"])
        crds = by_kind(docs, "CustomResourceDefinition")
        master = CHART.parents[1] / "crds-2.0"
        assert len(crds) == len(list(master.glob("*.yaml"))) == 18
        for name, crd in crds.items():
            plural, group = name.split(".", 1)
            generated = yaml.safe_load((master / f"{group}_{plural}.yaml").read_text())
            assert crd["spec"] == generated["spec"], name
            assert crd["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}, name
        assert [v["name"] for v in crds["clonesets.apps.kruise.io"]["spec"]["versions"]] == [
            "v1alpha1",
            "v1beta1",
        ]
        target = ClientTarget(namespace="kruise-system")
        for kind, build in (
            ("MutatingWebhookConfiguration", mutating_configuration),
            ("ValidatingWebhookConfiguration", validating_configuration),
        ):
            [config] = by_kind(docs, kind).values()
            assert config["webhooks"] == build(target, None, api_set="2.0")["webhooks"]


def test_api_set_2_0_with_external_certs_annotates_only_conversion_crds():
    crds = by_kind(render("apiSet=2.0", *EXTERNAL), "CustomResourceDefinition")
    assert crds["nodepodprobes.apps.kruise.io"]["metadata"]["annotations"] == {
        "helm.sh/resource-policy": "keep"
    }
    assert crds["clonesets.apps.kruise.io"]["metadata"]["annotations"] == {
        **INJECT,
        "helm.sh/resource-policy": "keep",
    }


def test_an_unknown_api_set_fails_naming_the_value():
    argv = [str(HELM), "template", "kr", str(CHART), "--set", "apiSet=1.8"]
    result = subprocess.run(argv, capture_output=True, text=True)
    assert result.returncode != 0
    assert 'apiSet: Unsupported value: "1.8": supported values: "1.9", "2.0"' in result.stderr


def render_with_values(values: Path) -> list[dict]:
    argv = [str(HELM), "template", "kr", str(CHART), "--namespace", "kruise-system", "-f", str(values)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]
