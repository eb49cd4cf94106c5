"""kubernetes-validate's verdict on each object of the kinds gpulint has
the API's schema for, one JSON line per object, in file order.

Run with the Python that has kubernetes-validate installed:

    python kubernetes_validate_judge.py VERSION KINDS_JSON FILE...

KINDS_JSON is a JSON list of "apiVersion/kind". Each line is
{"file", "ordinal" (among such objects of the file), "valid", "path"}, or
{"file", "unreadable": why} for a file PyYAML cannot read. The items of a
List (any kind ending in `List` with `items`) are judged as objects. The verdict is
kubernetes_validate.utils.validate(resource, VERSION, strict=True): what
`kubernetes-validate --strict` decides, with the error's path as a list.
"""

import json
import sys

from kubernetes_validate import utils


def main():
    version, kinds = sys.argv[1], set(json.loads(sys.argv[2]))
    for name in sys.argv[3:]:
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
            line = {"file": name, "ordinal": ordinal, "valid": True, "path": None}
            try:
                utils.validate(resource, version, strict=True)
            except utils.ValidationError as e:
                line.update(valid=False, path=[str(p) for p in e.path], message=e.message)
            print(json.dumps(line))
            ordinal += 1


if __name__ == "__main__":
    main()
