#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the repository's fixtures and
# ../shared/corpus (when present), plus a few hand-written LSP messages.
# Idempotent: files are named by their content's hash, so running it again
# adds nothing twice and keeps what the fuzzer has found since.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(cd .. && pwd)"
SHARED="${GPULINT_SHARED_CORPUS:-$ROOT/../shared/corpus}"
CORPUS="${FUZZ_CORPUS:-$PWD/corpus}"
TARGETS=(yaml_lint dockerfile shell fix lsp lsp_lifecycle reports kustomize)
for t in "${TARGETS[@]}"; do mkdir -p "$CORPUS/$t"; done

# put TARGET PREFIX FILE: FILE's bytes after PREFIX (a kind byte, or none).
put() {
  local target=$1 prefix=$2 file=$3 tmp
  tmp="$(mktemp)"
  { printf '%s' "$prefix"; cat "$file"; } >"$tmp"
  mv "$tmp" "$CORPUS/$target/$(sha1sum <"$tmp" | cut -c1-40)"
}

# The kind byte of fuzz_targets/common.rs KINDS for a file, or nothing.
kind_of() {
  local path=${1%.fixed} name
  name=$(basename "$path")
  case "$path" in
    *.diff | *.snap) return ;;
    *Dockerfile* | *Containerfile* | *dockerfile*) echo d ;;
    */.github/workflows/*.yml | */.github/workflows/*.yaml | *..github__workflows__*) echo w ;;
    *.yaml | *.yml)
      if grep -q '^apiVersion' "$1"; then echo k; else echo c; fi ;;
    *.sh | *.bash) echo s ;;
    *.sbatch | *.slurm) echo b ;;
    *.mk | */Makefile) echo m ;;
    *.md) echo r ;;
    *) [ "$name" = Makefile ] && echo m ;;
  esac
  return 0
}

sources() {
  find "$ROOT/fixtures" -type f
  [ -d "$SHARED" ] && find "$SHARED" -type f ! -name '*.tsv'
  return 0
}

count=0
while IFS= read -r file; do
  kind=$(kind_of "$file")
  [ -n "$kind" ] || continue
  [ "$(stat -c %s "$file")" -le 65536 ] || continue
  case $kind in
    c | k | w) put yaml_lint "" "$file" ;;
    d) put dockerfile "" "$file" ;;
    s | b | m | r) put shell "" "$file" ;;
  esac
  put fix "$kind" "$file"
  put lsp "$kind" "$file"
  count=$((count + 1))
done < <(sources)

# Hand-written LSP streams: framed (F) and raw JSON (J), a malformed one too.
lsp_seed() { printf '%s' "$1" >"$CORPUS/lsp/$(printf '%s' "$1" | sha1sum | cut -c1-40)"; }
frame() { printf 'Content-Length: %d\r\n\r\n%s' "${#1}" "$1"; }
open='{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///nonexistent-gpulint-fuzz/compose.yaml","languageId":"yaml","version":1,"text":"services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - capabilities: [gpu]\n"}}}'
change='{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///nonexistent-gpulint-fuzz/compose.yaml","version":2},"contentChanges":[{"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"text":"shm_size: 64m\n    image"}]}}'
action='{"jsonrpc":"2.0","id":7,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///nonexistent-gpulint-fuzz/compose.yaml"},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[]}}}'
hover='{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nonexistent-gpulint-fuzz/compose.yaml"},"position":{"line":1,"character":3}}}'
lsp_seed "F$(frame "$open")$(frame "$action")$(frame "$change")$(frame "$hover")$(frame "$action")"
lsp_seed "J$open$change$action$hover"
lsp_seed "J$open{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"textDocument/hover\",\"params\":{\"bogus\":1}}"
lsp_seed "F$(frame "$open")Content-Length: 5\r\n\r\n{\"a\":"

# The lifecycle target reads each byte as one message (fuzz_targets/lifecycle.rs):
# the kept regression orders, and the ordinary session.
for file in "$ROOT"/tests/fuzz_regressions/lsp_lifecycle/*; do
  [ -f "$file" ] && put lsp_lifecycle "" "$file"
done
lifecycle_seed() { printf "$1" >"$CORPUS/lsp_lifecycle/$(printf "$1" | sha1sum | cut -c1-40)"; }
lifecycle_seed '\x00\x02\x05\x08\x09\x06\x08\x07\x03\x04'
lifecycle_seed '\x00\x03\x02\x05\x03\x04'

# The reports target (fuzz_targets/report_checks.rs): path NUL .env NUL
# service names (0x01 between) NUL service lines; hostile names and values.
reports_seed() { printf "$1" >"$CORPUS/reports/$(printf "$1" | sha1sum | cut -c1-40)"; }
reports_seed 'compose.yaml\0S=8g\nN=4\nHF_TOKEN=hf_0123456789abcdefghijklmn\n\0trainer'
reports_seed '::error::x/compose.yaml\0IFACE="eth0\\n::add-mask::secret value"\nDEBUG=ghp_0123456789abcdefABCDEF0123\n\0a\n::warning::b\001\342\200\256rtl\001 ::x'
reports_seed 'd\351/compose-\351.yaml\0S="8 gb"\nIMAGE=registry.example.com/team/private-image:2024\n\0t\0image: ${IMAGE}\ngpus: all\nshm_size: ${S}\ncommand: torchrun --nproc_per_node=8 train.py'
reports_seed ' ::notice::odd.yml\0export MEMLOCK=not-a-number-at-all\nIPC=service:other thing\n\0%%0A::error::x\0gpus: all\nipc: ${IPC}\nulimits:\n  memlock: ${MEMLOCK}'
reports_seed 'compose.yaml\0COMPOSE_PROFILES=gpu,::x\nS=${T:-eight gigabytes}\n\0t\0profiles: [gpu]\ngpus: all\nshm_size: ${S}'

# The kustomize target (fuzz_targets/overlay_checks.rs): an overlay, its
# patches and its base as one text, each file after a `==> NAME` line.
kustomize_seed() { printf "$1" >"$CORPUS/kustomize/$(printf "$1" | sha1sum | cut -c1-40)"; }
base='==> base/kustomization.yaml\nresources: [deploy.yaml]\n==> base/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer, labels: {app: t}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n        command: [torchrun, --nproc_per_node=8, train.py]\n        env: [{name: NCCL_DEBUG, value: INFO}]\n'
kustomize_seed "resources: [../base]\nnamePrefix: p-\nnamespace: ml\nimages: [{name: nvcr.io/nvidia/pytorch, newTag: x}]\npatches:\n- path: gpu.yaml\n==> overlay/gpu.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        resources: {limits: {nvidia.com/gpu: 8}}\n      volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 64Mi}}]\n$base"
kustomize_seed "resources: [../base]\npatches:\n- target: {kind: Deployment, name: \"t.*\"}\n  patch: |-\n    - op: add\n      path: /spec/template/spec/hostIPC\n      value: true\n    - op: copy\n      from: /spec/template/spec/containers/0\n      path: /spec/template/spec/containers/-\nreplacements:\n- source: {kind: Deployment, name: trainer, fieldPath: metadata.name}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [\"spec.template.spec.containers.[name=main].env.[name=X].value\"]\n    options: {create: true}\n$base"
kustomize_seed "resources: [../base]\ncomponents: [../c]\n==> c/kustomization.yaml\nkind: Component\npatchesStrategicMerge:\n- |-\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: trainer}\n  spec: {template: {spec: {containers: [{name: main, \$patch: delete}]}}}\n$base"

for t in "${TARGETS[@]}"; do
  echo "seeded $t: $(find "$CORPUS/$t" -type f | wc -l) inputs"
done
echo "from $count fixture and corpus files"
