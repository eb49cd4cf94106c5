"""Python jsonschema's verdict on dev container configurations, one JSON
line per file, for tests/it/devcontainer.rs:

    python devcontainer_schema_judge.py SCHEMA SETTINGS_JSON FILE...

SCHEMA is devContainer.base.schema.json; SETTINGS_JSON maps each top-level
setting to the JSON pointers of the definitions that give it. Each line is
{"file", "whole": the whole schema's verdict, "refused": [settings]}, or
{"file", "unreadable": why}. A setting is refused when no definition of it
accepts its value, read by the policy gpulint's DEV001 documents: missing
required properties are not asked for, and a number or a boolean where
only a string is allowed is judged as the text JavaScript writes of it.
The validator is jsonschema's draft 2019-09 one, without `required`.
"""

import json
import re
import sys

from jsonschema import validators


def strip_jsonc(text):
    """JSON with comments and trailing commas, as plain JSON."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def without_required():
    """Draft 2019-09 that asks for no required property."""

    def no_required(validator, required, instance, schema):
        return iter(())

    return validators.extend(validators.Draft201909Validator, validators={"required": no_required})


def all_errors(errors):
    for error in errors:
        yield error
        yield from all_errors(error.context or [])


def js_text(value):
    """JavaScript's String() of a number or a boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def accepts(validator, value, most_coerced=64):
    """Whether the definition accepts the value, a number or a boolean where
    only a string is allowed judged as its text (DEV001's reading)."""
    value = json.loads(json.dumps(value))
    for _ in range(most_coerced + 1):
        errors = list(all_errors(validator.iter_errors(value)))
        if not errors:
            return True
        textual = [
            list(e.absolute_path)
            for e in errors
            if e.validator == "type"
            and e.validator_value in ("string", ["string"])
            and isinstance(e.instance, (bool, int, float))
        ]
        if not textual:
            return False
        for path in textual:
            if not path:
                value = js_text(value)
                continue
            node = value
            for step in path[:-1]:
                node = node[step]
            if isinstance(node[path[-1]], (bool, int, float)):
                node[path[-1]] = js_text(node[path[-1]])
    return False


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    settings = json.loads(sys.argv[2])
    whole = validators.Draft201909Validator(schema)
    lenient = without_required()
    per_setting = {
        name: [lenient({"$ref": "#" + pointer, "definitions": schema["definitions"], "$schema": schema["$schema"]}) for pointer in pointers]
        for name, pointers in settings.items()
    }
    for name in sys.argv[3:]:
        try:
            with open(name, encoding="utf-8") as f:
                config = json.loads(strip_jsonc(f.read()))
        except (ValueError, OSError) as e:
            print(json.dumps({"file": name, "unreadable": str(e)}))
            continue
        if not isinstance(config, dict):
            print(json.dumps({"file": name, "unreadable": "not an object"}))
            continue
        refused = [
            key
            for key, value in config.items()
            if key in per_setting and not any(accepts(v, value) for v in per_setting[key])
        ]
        print(json.dumps({"file": name, "whole": whole.is_valid(config), "refused": refused}))


if __name__ == "__main__":
    main()
