"""kubectl against the emulator + live kruise-webhook: UnitedDeployment template rules are enforced."""

from __future__ import annotations

import pytest

from tests.integration.webhook.conftest import REPO, Kubectl

UD = """
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: sample}}}}
  template:
    statefulSetTemplate:
      metadata: {{labels: {{app: sample}}}}
      spec:
        serviceName: {service}
{extra}        template:
          metadata: {{labels: {{app: sample}}}}
          spec: {{containers: [{{name: nginx, image: nginx:alpine}}]}}
  topology:
    subsets:
    - {{name: subset-a}}
"""


@pytest.fixture
async def ud_crd(emulator) -> None:
    """The UnitedDeployment CRD; requested before `live_webhook` so it is there when the webhook starts."""
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl("apply", "-f", str(REPO / "crds" / "apps.kruise.io_uniteddeployments.yaml"))
    await kubectl(
        "wait", "--for=condition=Established", "crd/uniteddeployments.apps.kruise.io", "--timeout=30s"
    )


def _manifest(name: str, service: str = "sample", extra: str = "") -> str:
    return UD.format(name=name, service=service, extra=extra)


async def test_kubectl_apply_refuses_bad_templates_naming_the_field(ud_crd, live_webhook):
    kubectl = live_webhook.kubectl
    bad = _manifest("bad", extra="        replicas: 3\n")
    code, _, err = await kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert code != 0
    assert 'admission webhook "vuniteddeployment.kb.io" denied the request' in err
    assert (
        "spec.template.statefulSetTemplate.spec.replicas: Invalid value: 3: "
        "replicas in statefulSetTemplate will not be used" in err
    )
    await kubectl("apply", "-f", "-", stdin=_manifest("good"))
    code, _, err = await kubectl("apply", "-f", "-", stdin=_manifest("good", service="other"), check=False)
    assert code != 0
    assert (
        "spec.template.statefulSetTemplate.spec: Forbidden: updates to statefulsetTemplate spec for fields "
        "other than 'template', and 'updateStrategy' are forbidden" in err
    )
    # the pod template may change
    await kubectl("apply", "-f", "-", stdin=_manifest("good").replace("nginx:alpine", "nginx:1.27"))
