"""The outcome line both workloads end with, which tests/it/runtime.rs reads."""

import json
import sys


def failures_of(reports, ranks):
    """The failed ranks' reports; a rank that died without one is a failure too."""
    failures = [r for r in reports if r["failure"]]
    if len(reports) < ranks and not failures:
        failures = [{"failure": "rank-died", "message": "a rank died without a report"}]
    return failures


def finish(failures, **details):
    """Prints the first failure as a user would see it, then `RESULT {json}`, and
    exits 0 when nothing failed."""
    result = {
        "passed": not failures,
        "failure": failures[0]["failure"] if failures else None,
        "message": failures[0]["message"] if failures else None,
        **details,
    }
    if failures:
        print(failures[0]["message"], file=sys.stderr)
    print("RESULT " + json.dumps(result))
    sys.exit(0 if result["passed"] else 1)
