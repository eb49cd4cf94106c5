#!/usr/bin/env python3
"""Vendors the schemas of the custom resources gpulint reads pods from, as
each project ships them in its CustomResourceDefinition.

    python3 scripts/vendor_crd_schemas.py MIRRORS

MIRRORS holds a bare clone of each repository below, at `OWNER+NAME/repo`
(what the tool library's `fetch` makes). Each CRD's served versions
become kinds (`ray.io/v1/RayCluster`) in crates/gpulint-schema/schemas/
crd-GROUP.json, one document per API group, each with a copy of the API's
ObjectMeta (a CR's `metadata`) from kubernetes-strict.json: gpulint reads
a group's document only when it meets a resource of that group.

The API server judges a custom resource by its CRD's structural schema,
and `kubectl apply` asks it to refuse unknown fields (`--validate=strict`,
the default): the schema is reduced to what decides that, as the built-in
kinds' is (scripts/vendor_kubernetes_schema.py):

- `type`, `properties`, `items`, `additionalProperties`, `required` and
  `enum` are kept; every type also admits null, which the API server
  prunes before it validates;
- an object with `properties` and without
  `x-kubernetes-preserve-unknown-fields` admits no other field;
- `x-kubernetes-int-or-string` is an integer or a string;
- `x-kubernetes-embedded-resource` admits `apiVersion`, `kind` and
  `metadata` beside its properties;
- what a reading of the schema cannot decide the same way the server does
  is dropped: formats, patterns, bounds, CEL rules
  (`x-kubernetes-validations`), `allOf`/`anyOf`/`oneOf`/`not`;
- `status` admits anything (the server ignores it on apply when the
  status subresource is on).

Subtrees that occur more than once (the pod template each replica spec
inlines) are written once under `definitions` and referred to.
"""

import hashlib
import json
import pathlib
import subprocess
import sys

import yaml

# (repository, the release it is or follows, commit, path of a CRD file)
SOURCES = [
    ("kubeflow/training-operator", "v1.9.0", "6f74c7f6b2ed6c27aabd82d0a316b23f0646059c", f"manifests/base/crds/kubeflow.org_{name}.yaml")
    for name in ["pytorchjobs", "tfjobs", "mpijobs", "xgboostjobs", "paddlejobs", "jaxjobs"]
] + [
    ("ray-project/kuberay", "v1.7.0-rc.0+", "feeaf72facab4881ba2b179248bb67315634e229", f"ray-operator/config/crd/bases/ray.io_{name}.yaml")
    for name in ["rayclusters", "rayjobs", "rayservices"]
] + [
    ("kubernetes-sigs/jobset", "v0.13.0-devel", "08dfbdfd682714a9ab929633eca8dc95315187e7", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
    ("kubernetes-sigs/lws", "v0.10.0+", "060ab4da17eea1f0865fcbd3236bb1075e2cea32", "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"),
] + [
    ("kserve/kserve", "v0.20.0-rc0+", "aaac4e294dae2c7b1aa1886447793f3aa1c30912", f"config/crd/full/serving.kserve.io_{name}.yaml")
    for name in ["inferenceservices", "servingruntimes", "clusterservingruntimes"]
] + [
    ("volcano-sh/volcano", "v1.16.0-alpha.1+", "ed72c7c815a9fd547a787134676f73d42e9d049c", "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml"),
] + [
    ("kubeflow/mpi-operator", "master (caa3c47f)", "caa3c47fc42eb762635f78045ec0fcd1a89eb038", "manifests/base/kubeflow.org_mpijobs.yaml"),
    ("kubeflow/notebooks", "notebooks-v1 (177b0986)", "177b098656264a36af71ea27d098c2ad14999eec", "components/notebook-controller/config/crd/bases/kubeflow.org_notebooks.yaml"),
] + [
    ("kubeflow/trainer", "v2.3.0+", "8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3", f"manifests/base/crds/trainer.kubeflow.org_{name}.yaml")
    for name in ["trainjobs", "trainingruntimes", "clustertrainingruntimes"]
]

OBJECT_META = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
KEPT = {"type", "properties", "items", "additionalProperties", "required", "enum"}
OUT_DIR = pathlib.Path(__file__).resolve().parent.parent / "crates/gpulint-schema/schemas"


def nullable(kind):
    return [kind, "null"] if kind != "null" else "null"


def convert(schema):
    """One node of an openAPIV3Schema, reduced (see the module's doc)."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("x-kubernetes-int-or-string"):
        return {"oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]}
    out = {}
    for key in KEPT & schema.keys():
        value = schema[key]
        if key == "type":
            out["type"] = nullable(value)
        elif key == "properties":
            out["properties"] = {name: convert(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = value if isinstance(value, bool) else convert(value)
        elif key == "enum":
            out["enum"] = list(value) + ([None] if None not in value else [])
        else:
            out[key] = value
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    if schema.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": ["string", "null"]})
        props.setdefault("kind", {"type": ["string", "null"]})
        props.setdefault("metadata", {"type": ["object", "null"]})
    if preserve:
        out.pop("additionalProperties", None)
        if "type" not in out:
            return {}
    elif "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def root(schema):
    out = convert(schema)
    props = out.setdefault("properties", {})
    props["metadata"] = {"$ref": OBJECT_META}
    props["status"] = {}
    props.setdefault("apiVersion", {"type": ["string", "null"]})
    props.setdefault("kind", {"type": ["string", "null"]})
    out.pop("required", None)
    return out


def share(definitions):
    """Writes each schema that occurs more than once (and is not tiny)
    once, under a name made of its digest. Only schemas are shared: a
    `properties` mapping is walked, never replaced."""
    counts = {}

    def count(schema):
        if not isinstance(schema, dict):
            return
        for key, value in schema.items():
            if key == "properties":
                for sub in value.values():
                    count(sub)
            elif key in ("items", "additionalProperties"):
                count(value)
            elif key == "oneOf":
                for sub in value:
                    count(sub)
        text = json.dumps(schema, sort_keys=True)
        if len(text) > 400:
            counts[text] = counts.get(text, 0) + 1

    for schema in definitions.values():
        count(schema)
    shared = {}

    def replace(schema, top):
        if not isinstance(schema, dict):
            return schema
        text = json.dumps(schema, sort_keys=True)
        if not top and counts.get(text, 0) > 1:
            name = "crd-shared:" + hashlib.sha256(text.encode()).hexdigest()[:16]
            if name not in shared:
                shared[name] = None
                shared[name] = replace(schema, True)
            return {"$ref": f"#/definitions/{name}"}
        out = {}
        for key, value in schema.items():
            if key == "properties":
                out[key] = {name: replace(sub, False) for name, sub in value.items()}
            elif key in ("items", "additionalProperties"):
                out[key] = replace(value, False)
            elif key == "oneOf":
                out[key] = [replace(sub, False) for sub in value]
            else:
                out[key] = value
        return out

    out = {name: replace(schema, True) for name, schema in definitions.items()}
    out.update(shared)
    return out


def main(mirrors):
    by_group = {}
    for repository, release, commit, path in SOURCES:
        clone = pathlib.Path(mirrors) / repository.replace("/", "+") / "repo"
        text = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
        ).stdout
        crd = yaml.safe_load(text)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        kinds, definitions, origins, sources = by_group.setdefault(group, ({}, {}, {}, []))
        for version in crd["spec"]["versions"]:
            if not version.get("served", True):
                continue
            schema = version.get("schema", {}).get("openAPIV3Schema")
            if not schema:
                continue
            name = f"crd:{group}.{version['name']}.{kind}"
            definitions[name] = root(schema)
            kinds[f"{group}/{version['name']}/{kind}"] = f"#/definitions/{name}"
            origins[f"{group}/{version['name']}/{kind}"] = f"{repository} {release}"
        sources.append(f"{repository}@{commit[:12]}:{path}")
    builtin = json.loads((OUT_DIR / "kubernetes-strict.json").read_text())["definitions"]
    for old in OUT_DIR.glob("crd-*.json"):
        old.unlink()
    for group, (kinds, definitions, origins, sources) in sorted(by_group.items()):
        # A CR's `metadata` is the API's ObjectMeta: its definition and
        # those it reaches, copied from the built-in kinds' document, so
        # that each document stands alone (gpulint reads one only for a
        # CR of its group).
        wanted = [OBJECT_META.rsplit("/", 1)[1]]
        while wanted:
            name = wanted.pop()
            if name in definitions:
                continue
            definitions[name] = builtin[name]
            text = json.dumps(builtin[name])
            for ref in text.split('"$ref": "#/definitions/')[1:]:
                wanted.append(ref.split('"', 1)[0])
        document = {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$comment": "Generated by scripts/vendor_crd_schemas.py from " + ", ".join(sources),
            "kinds": kinds,
            "origins": origins,
            "definitions": share(definitions),
        }
        out = OUT_DIR / f"crd-{group}.json"
        out.write_text(json.dumps(document, indent=None, separators=(",", ":"), sort_keys=True) + "\n")
        print(f"{group}: {len(kinds)} kinds, {len(document['definitions'])} definitions, {out.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1])
