#!/usr/bin/env bash
# Installs gpulint for the GitHub Action (action.yml at the repository root).
#
#   install.sh key   prints the cache key of this action's gpulint to $GITHUB_OUTPUT
#   install.sh       installs it, unless the cache step restored it already:
#                    the release asset for GPULINT_VERSION (or the action's own
#                    tag; `v0` is the newest v0.x.y release), checksum
#                    verified, else a cargo build of the action's own source.
#                    Puts it on $GITHUB_PATH.
#
# Inputs come as environment variables, as the runner passes them:
#   GPULINT_VERSION        a release tag (v1.2.3), `source` to always build, or empty
#   GPULINT_DOWNLOAD_BASE  where release assets live (a mirror for runners
#                          without access to github.com); default: GitHub releases
set -euo pipefail

action_path=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: run this from action.yml}
version=${GPULINT_VERSION:-}
ref=${GITHUB_ACTION_REF:-}
download_base=${GPULINT_DOWNLOAD_BASE:-https://github.com/gpulint/gpulint/releases/download}
cache_root=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}/gpulint

# The release to look for: the version asked for, else the tag the workflow
# pinned the action to (`uses: gpulint/gpulint@v1.2.3`). A major or minor
# tag (`@v0`, `@v0.3`) means the newest release of that line: the release
# workflow moves it to each new release, so the action's own source is that
# release, and its Cargo.toml says which. Only a pinned tag may fall back to
# building, because only then is the action's source that release.
may_build=true
if [ -z "$version" ] && [[ $ref =~ ^v[0-9]+(\.[0-9]+)?$ ]]; then
  own=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_path/Cargo.toml" | head -1)
  if [[ v$own == "$ref".* ]]; then
    version=v$own
  elif [ "${1:-}" != key ]; then
    echo "gpulint: the action's source at $ref is version ${own:-unknown}, not a $ref.x release; building it"
  fi
elif [ -z "$version" ] && [[ $ref =~ ^v[0-9] ]]; then
  version=$ref
elif [ -n "$version" ] && [ "$version" != source ] && [ "$version" != "$ref" ]; then
  may_build=false
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  Darwin-x86_64) target=x86_64-apple-darwin ;;
  *) target="" ;;
esac

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

# A build is identified by its sources, so a cache entry never outlives them.
source_key() {
  (
    cd "$action_path"
    find Cargo.toml Cargo.lock src crates rules -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256 | cut -c1-16
  )
}

key() {
  if [ -n "$version" ] && [ "$version" != source ] && [ -n "$target" ]; then
    echo "release-$version-$target"
  else
    echo "source-$(source_key)-$(uname -s)-$(uname -m)"
  fi
}

# Downloads and verifies the release asset into $1/bin; fails quietly when
# the release has no asset for this platform.
download() {
  local dir=$1 archive="gpulint-$target.tar.gz" scratch
  scratch=$(mktemp -d)
  if ! curl -fsSL --retry 2 -o "$scratch/$archive" "$download_base/$version/$archive" \
    || ! curl -fsSL --retry 2 -o "$scratch/$archive.sha256" "$download_base/$version/$archive.sha256"; then
    echo "gpulint: no release asset $archive for $version"
    rm -rf "$scratch"
    return 1
  fi
  (cd "$scratch" && echo "$(cut -d' ' -f1 "$archive.sha256")  $archive" | sha256 -c --status) || {
    echo "::error title=gpulint action::$archive from $download_base/$version does not match its .sha256"
    rm -rf "$scratch"
    exit 1
  }
  mkdir -p "$dir/bin"
  tar -xzf "$scratch/$archive" -C "$dir/bin" gpulint
  rm -rf "$scratch"
}

build() {
  local dir=$1
  if ! command -v cargo >/dev/null; then
    echo "::error title=gpulint action::no release asset to download and no cargo to build gpulint; add a Rust toolchain step (dtolnay/rust-toolchain) or pin a released version"
    exit 1
  fi
  echo "gpulint: building from $action_path with $(cargo --version)"
  cargo install --locked --quiet --path "$action_path" --root "$dir" --bin gpulint
}

build_key=$(key)
dir="$cache_root/$build_key"
if [ "${1:-}" = key ]; then
  echo "key=gpulint-$build_key" >>"${GITHUB_OUTPUT:-/dev/stdout}"
  echo "dir=$dir" >>"${GITHUB_OUTPUT:-/dev/stdout}"
  exit 0
fi

if [ -x "$dir/bin/gpulint" ]; then
  echo "gpulint: using the cached build in $dir"
elif [ -n "$version" ] && [ "$version" != source ] && [ -n "$target" ] && download "$dir"; then
  echo "gpulint: installed release $version ($target)"
elif [ "$may_build" = true ]; then
  build "$dir"
else
  echo "::error title=gpulint action::cannot install gpulint $version: its release has no asset for ${target:-$(uname -s)-$(uname -m)}, and this action's source is not that version (pin the action to @$version to build it)"
  exit 1
fi
echo "$dir/bin" >>"${GITHUB_PATH:-/dev/null}"
echo "path=$dir/bin/gpulint" >>"${GITHUB_OUTPUT:-/dev/stdout}"
"$dir/bin/gpulint" --version
