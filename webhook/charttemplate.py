"""The Helm chart's webhook configurations, generated from ``configurations`` (their one definition).

The chart creates ``kruise-mutating-webhook-configuration`` and ``kruise-validating-webhook-configuration``
itself, as upstream's chart does (the pod webhooks only while the ``featureGates`` value does not
say ``PodWebhook=false``), so ``helm uninstall`` removes them; kruise-webhook then only fills
in each webhook's ``clientConfig`` (caBundle) and drops the entries it does not serve (see
``certsecret.ConfigurationPatcher``), keeping the chart's failurePolicy, selectors and timeout.
Each carries the ``externalCerts.annotations`` value (as upstream's chart) and upstream's empty
``template`` annotation: kruise-webhook stores the webhooks it first saw there and rebuilds from it,
and Helm resetting it to "" on every upgrade is what lets a changed value
(``webhookConfiguration.timeoutSeconds``) reach the live configurations.

A Kruise kind's rule lists the versions of the API set the ``apiSet`` value selects: a rule whose
versions differ between the sets renders both lists behind ``include "kruise.apiSet"``.

The template is a generated file committed to the chart (``TEMPLATE``); ``drift()`` says whether it
still matches the definitions and ``python -m kruise.webhook.charttemplate`` rewrites it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from kruise.api.apisets import API_SET_1_9, API_SET_2_0
from kruise.webhook import paths
from kruise.webhook.certsecret import TEMPLATE_ANNOTATION
from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration

TEMPLATE = (
    Path(__file__).resolve().parent.parent / "helm" / "kruise" / "templates" / "webhookconfiguration.yaml"
)
_NAMESPACE = "KRUISE-NAMESPACE-PLACEHOLDER"
_TIMEOUT = 987654321
_HEADER = "# Generated from kruise.webhook.configurations (python -m kruise.webhook.charttemplate).\n"


# Upstream's chart leaves the pod webhooks out when the values turn the PodWebhook gate off: with
# failurePolicy Fail and no handler behind them, every pod CREATE would be refused until kruise-webhook
# dropped them.
_POD_PATHS = (paths.POD_MUTATE, paths.POD_VALIDATE)
_POD_GATE_OPEN = '{{- if not (contains "PodWebhook=false" .Values.featureGates) }}\n'
_POD_GATE_CLOSE = "{{- end }}\n"


# Upstream's `externalCerts.annotations` value, copied onto both configurations so an outside CA injector
# (cert-manager's inject-ca-from) fills in the caBundles kruise-webhook only checks under EnableExternalCerts.
_EXTERNAL_CERTS_ANNOTATIONS = (
    '{{- with include "kruise.externalCertsAnnotations" . }}{{ . | nindent 4 }}{{- end }}\n'
)


_VERSIONS = "KRUISE-VERSIONS-PLACEHOLDER-"


def _versions_by_set(kind: str, hooks: list[dict], hooks_2_0: list[dict]) -> dict[str, str]:
    """Put a placeholder in each rule whose versions differ in the 2.0 set; placeholder -> template text."""
    swaps = {}
    for i, (hook, other) in enumerate(zip(hooks, hooks_2_0, strict=True)):
        assert hook["name"] == other["name"], (hook["name"], other["name"])
        rule, other_rule = hook["rules"][0], other["rules"][0]
        if rule["apiVersions"] != other_rule["apiVersions"]:
            placeholder = f"{_VERSIONS}{kind}-{i}"
            swaps[placeholder] = (
                f'{{{{ if eq (include "kruise.apiSet" $) "{API_SET_2_0}" }}}}'
                f"[{', '.join(other_rule['apiVersions'])}]{{{{ else }}}}"
                f"[{', '.join(rule['apiVersions'])}]{{{{ end }}}}"
            )
            rule["apiVersions"] = placeholder
    return swaps


def _webhooks(hooks: list[dict]) -> str:
    """The `webhooks:` list, one item at a time (no YAML anchors between entries), with each run of
    pod webhooks wrapped in the PodWebhook condition."""
    out = ["webhooks:\n"]
    gated = False
    for hook in hooks:
        pod = hook["clientConfig"]["service"]["path"] in _POD_PATHS
        if pod != gated:
            out.append(_POD_GATE_OPEN if pod else _POD_GATE_CLOSE)
            gated = pod
        out.append(yaml.safe_dump([hook], sort_keys=False, width=1000))
    if gated:
        out.append(_POD_GATE_CLOSE)
    return "".join(out)


def render() -> str:
    """Both configurations as a Helm template: the namespace and timeout come from the values."""
    target = ClientTarget(namespace=_NAMESPACE)
    docs = []
    swaps: dict[str, str] = {}
    for build in (mutating_configuration, validating_configuration):
        config = build(target, None, timeout=_TIMEOUT, api_set=API_SET_1_9)
        config_2_0 = build(target, None, timeout=_TIMEOUT, api_set=API_SET_2_0)
        swaps |= _versions_by_set(config["kind"], config["webhooks"], config_2_0["webhooks"])
        head = (
            f"apiVersion: {config['apiVersion']}\n"
            f"kind: {config['kind']}\n"
            "metadata:\n"
            f"  name: {config['metadata']['name']}\n"
            '  labels: {{- include "kruise.labels" . | nindent 4 }}\n'
            "  annotations:\n"
            f'    {TEMPLATE_ANNOTATION}: ""\n'
            f"{_EXTERNAL_CERTS_ANNOTATIONS}"
        )
        docs.append(head + _webhooks(config["webhooks"]))
    text = _HEADER + "---\n".join(docs)
    for placeholder, versions in swaps.items():
        text = text.replace(f"{placeholder}\n", f"{versions}\n")
    text = text.replace(_NAMESPACE, "{{ .Values.installation.namespace }}")
    return text.replace(str(_TIMEOUT), "{{ .Values.webhookConfiguration.timeoutSeconds }}")


def drift(path: Path = TEMPLATE) -> bool:
    """Whether the committed template differs from what the definitions render."""
    return not path.exists() or path.read_text() != render()


def main() -> None:
    TEMPLATE.write_text(render())
    sys.stdout.write(f"{TEMPLATE}\n")


if __name__ == "__main__":
    main()
