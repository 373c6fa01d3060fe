"""Map the top-level folders onto the ``kruise`` import root.

The repository keeps one folder per layer (``api/``, ``kube/`` ...) while code imports
``kruise.api``, ``kruise.kube`` ...; setuptools' ``package_dir`` does the mapping, and the
package list is discovered here so that a new subpackage needs no edit to this file.
"""

import os
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
LAYERS = ["api", "kube", "control", "manager", "webhook", "daemon", "sandbox", "cli"]
# The production image (docker/Dockerfile) is built without the sandbox: a Kubernetes stand-in has no
# place next to the real one, and nothing outside tests and `kruise sandbox` imports it.
if os.environ.get("KRUISE_NO_SANDBOX") == "1":
    LAYERS.remove("sandbox")


def discover() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for layer in LAYERS:
        package_dir[f"kruise.{layer}"] = layer
        for init in sorted((ROOT / layer).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / layer)
            parts = [] if str(rel) == "." else list(rel.parts)
            packages.append(".".join(["kruise", layer, *parts]))
    return packages, package_dir


packages, package_dir = discover()

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        **({"kruise.sandbox": ["**/*.proto", "**/*.pyi"]} if "sandbox" in LAYERS else {}),
        "kruise.daemon": ["**/*.proto"],
        "kruise.cli": ["**/*.yaml"],
    },
    include_package_data=True,
)
