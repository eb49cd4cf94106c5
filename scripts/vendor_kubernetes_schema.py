#!/usr/bin/env python3
"""Vendors the Kubernetes JSON schemas gpulint validates manifests against.

Source: the `v<VERSION>-local-strict` schemas that kubernetes-validate
ships (generated from the Kubernetes OpenAPI document; strict means no
property the API does not define, as `kubectl apply --validate=strict`,
kubectl's default, refuses). Only the kinds gpulint reads pods from are
kept, with the definitions they reach, and only the keywords that decide
a verdict: descriptions, `x-kubernetes-*` annotations and `format` (which
kubernetes-validate does not assert) are dropped, and draft 2020-12's
`$defs` become draft-07's `definitions`, which mean the same for the
keywords left (`type`, `enum`, `properties`, `additionalProperties`,
`items`, `required`, `oneOf`, and `$ref` with no siblings).

    pip install kubernetes-validate==1.37.0
    python3 scripts/vendor_kubernetes_schema.py 1.37.0
"""

import json
import pathlib
import sys

import kubernetes_validate

# (file stem in kubernetes-validate, apiVersion, kind)
KINDS = [
    ("pod-v1", "v1", "Pod"),
    ("podtemplate-v1", "v1", "PodTemplate"),
    ("replicationcontroller-v1", "v1", "ReplicationController"),
    ("deployment-apps-v1", "apps/v1", "Deployment"),
    ("statefulset-apps-v1", "apps/v1", "StatefulSet"),
    ("daemonset-apps-v1", "apps/v1", "DaemonSet"),
    ("replicaset-apps-v1", "apps/v1", "ReplicaSet"),
    ("job-batch-v1", "batch/v1", "Job"),
    ("cronjob-batch-v1", "batch/v1", "CronJob"),
]

DROPPED = {"description", "format", "$schema", "$id"}


def reduce(schema, reached):
    if isinstance(schema, list):
        return [reduce(item, reached) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "$ref":
            name = value.rsplit("/", 1)[1]
            reached.append(name)
            return {"$ref": "#/definitions/" + name}
        if key in ("properties", "patternProperties"):
            out[key] = {k: reduce(v, reached) for k, v in value.items()}
        else:
            out[key] = reduce(value, reached)
    return out


def main():
    version = sys.argv[1]
    root = pathlib.Path(kubernetes_validate.__file__).parent
    folder = root / "kubernetes-json-schema" / f"v{version}-local-strict"
    all_defs = json.loads((folder / "_definitions.json").read_text())["$defs"]
    definitions = {}
    kinds = {}
    pending = []
    for stem, api_version, kind in KINDS:
        name = "kind:" + api_version.replace("/", ".") + "." + kind
        kinds[f"{api_version}/{kind}"] = "#/definitions/" + name
        definitions[name] = reduce(json.loads((folder / f"{stem}.json").read_text()), pending)
    while pending:
        name = pending.pop()
        if name not in definitions:
            definitions[name] = reduce(all_defs[name], pending)
    out = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"Kubernetes v{version} (kubernetes-validate {kubernetes_validate.__version__}, "
        "local-strict), reduced by scripts/vendor_kubernetes_schema.py",
        "kinds": kinds,
        "definitions": dict(sorted(definitions.items())),
    }
    target = pathlib.Path(__file__).parent.parent / "crates/gpulint-schema/schemas/kubernetes-strict.json"
    target.write_text(json.dumps(out, indent=None, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"{target}: {len(definitions)} definitions, {target.stat().st_size} bytes")


if __name__ == "__main__":
    main()
