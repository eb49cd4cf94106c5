#!/usr/bin/env bash
# Runs gpulint for the GitHub Action (action.yml at the repository root).
# The log shows the human report (or the diff in diff mode); annotations are
# printed as workflow commands at the end; findings go to the job summary.
#
# Inputs come as environment variables, as the runner passes them:
#   INPUT_PATHS        files or directories, separated by whitespace (default .)
#   INPUT_ARGS         more `gpulint check` arguments, separated by whitespace
#   INPUT_MODE         check, fix (apply safe fixes) or diff (print them)
#   INPUT_FAIL_ON      info, warning, error or never (see `--fail-on`)
#   INPUT_ANNOTATIONS  true or false
#   INPUT_SARIF_FILE   where to write a SARIF report, or empty
set -uo pipefail

fail() {
  echo "::error title=gpulint action::$1"
  exit 2
}

read -r -d '' -a paths <<<"${INPUT_PATHS:-.}" || true
read -r -d '' -a extra <<<"${INPUT_ARGS:-}" || true
[ ${#paths[@]} -gt 0 ] || paths=(.)

args=(check --fail-on "${INPUT_FAIL_ON:-info}")
case "${INPUT_MODE:-check}" in
  check) ;;
  fix) args+=(--fix) ;;
  diff) args+=(--diff) ;;
  *) fail "mode must be check, fix or diff, not '${INPUT_MODE}'" ;;
esac
case "${INPUT_ANNOTATIONS:-true}" in
  true | false) ;;
  *) fail "annotations must be true or false, not '${INPUT_ANNOTATIONS}'" ;;
esac

scratch=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpulint.XXXXXX")
args+=(--output-file "github:$scratch/annotations" --output-file "concise:$scratch/findings")
if [ -n "${INPUT_SARIF_FILE:-}" ]; then
  args+=(--output-file "sarif:$INPUT_SARIF_FILE")
fi

# Nothing gpulint prints may act as a workflow command: it quotes names,
# values and paths from the checked files (escaped, but the runner also
# reads a legacy `##[command]` anywhere in a line) and a diff holds their
# lines verbatim. The runner stops processing commands until a token no
# file can know.
token="gpulint-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$token"
gpulint "${args[@]}" "${extra[@]}" -- "${paths[@]}"
status=$?
echo "::$token::"

if [ "${INPUT_ANNOTATIONS:-true}" = true ] && [ -s "$scratch/annotations" ]; then
  cat "$scratch/annotations"
fi
findings=0
if [ -f "$scratch/findings" ]; then
  findings=$(wc -l <"$scratch/findings" | tr -d ' ')
fi
{
  echo "exit-code=$status"
  echo "findings=$findings"
  echo "sarif-file=${INPUT_SARIF_FILE:-}"
} >>"${GITHUB_OUTPUT:-/dev/null}"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    if [ "$findings" -eq 0 ]; then
      echo "### gpulint: no findings"
    else
      echo "### gpulint: $findings finding$([ "$findings" -eq 1 ] || echo s)"
      echo '```'
      cat "$scratch/findings"
      echo '```'
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi
rm -rf "$scratch"
exit "$status"
