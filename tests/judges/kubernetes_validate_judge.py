"""kubernetes-validate's verdict on each object of the kinds gpulint has
the API's schema for, one JSON line per object, in file order.

Run with the Python that has kubernetes-validate installed:

    python kubernetes_validate_judge.py VERSION KINDS_JSON FILE...

KINDS_JSON is a JSON list of "apiVersion/kind". With `--crd CRD_KINDS_JSON
PATTERN` before the files, the custom resources of CRD_KINDS_JSON are judged
by Python jsonschema (draft 7) on gpulint's vendored schemas (the files
PATTERN globs, one per API group), instead of by kubernetes-validate. Each line is
{"file", "ordinal" (among such objects of the file), "valid", "path"}, or
{"file", "unreadable": why} for a file PyYAML cannot read. The items of a
List (any kind ending in `List` with `items`) are judged as objects. The verdict is
kubernetes_validate.utils.validate(resource, VERSION, strict=True): what
`kubernetes-validate --strict` decides, with the error's path as a list.
"""

import glob
import json
import sys

import jsonschema
from kubernetes_validate import utils


def crd_validators(pattern, crd_kinds):
    """A validator per custom resource kind, from gpulint's vendored
    documents (one per API group, `crd-GROUP.json`)."""
    validators = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            document = json.load(f)
        for kind, reference in document["kinds"].items():
            if kind in crd_kinds:
                schema = {"definitions": document["definitions"], "allOf": [{"$ref": reference}]}
                validators[kind] = jsonschema.Draft7Validator(schema)
    missing = set(crd_kinds) - validators.keys()
    if missing:
        raise SystemExit(f"no vendored schema for {sorted(missing)}")
    return validators


def main():
    version, kinds = sys.argv[1], set(json.loads(sys.argv[2]))
    # `--crd CRD_KINDS_JSON PATTERN`: custom resources, judged by Python
    # jsonschema on gpulint's vendored CRD schemas (PATTERN globs them).
    crds = {}
    names = sys.argv[3:]
    if names[:1] == ["--crd"]:
        crds = crd_validators(names[2], json.loads(names[1]))
        names = names[3:]
    for name in names:
        try:
            resources = utils.resources_from_file(name)
        except SystemExit as e:
            print(json.dumps({"file": name, "unreadable": str(e)}))
            continue
        ordinal = 0
        # kubectl applies a List's items as objects of their own.
        objects = []
        for resource in resources:
            kind = resource.get("kind") if isinstance(resource, dict) else None
            items = resource.get("items") if isinstance(kind, str) else None
            if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
                objects.extend(items)
            else:
                objects.append(resource)
        for resource in objects:
            if not isinstance(resource, dict):
                continue
            api_version, kind = resource.get("apiVersion"), resource.get("kind")
            if not isinstance(api_version, str) or not isinstance(kind, str):
                continue
            if f"{api_version}/{kind}" not in kinds:
                continue
            validator = crds.get(f"{api_version}/{kind}")
            line = {"file": name, "ordinal": ordinal, "valid": True, "path": None, "custom": validator is not None}
            if validator is not None:
                errors = list(validator.iter_errors(resource))
                if errors:
                    e = jsonschema.exceptions.best_match(errors)
                    line.update(valid=False, path=[str(p) for p in e.absolute_path], message=e.message)
            else:
                try:
                    utils.validate(resource, version, strict=True)
                except utils.ValidationError as e:
                    line.update(valid=False, path=[str(p) for p in e.path], message=e.message)
            print(json.dumps(line))
            ordinal += 1


if __name__ == "__main__":
    main()
