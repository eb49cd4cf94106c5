"""gpulint's build backend: maturin's, refusing in one line without Rust.

pip builds gpulint from source when no wheel fits: `pip install .` in a
checkout, or the sdist on a platform with no wheel. Without a Rust
toolchain, maturin then downloads one into a cache directory, which takes
minutes online and ends in a long traceback offline. This backend says
instead, in one line, what a source build needs and how to avoid one.
Every hook is maturin's (imported only once cargo is found).
"""

import os
import shutil
import sys

# Cargo.toml's `rust-version` (tests/it/integrations.rs keeps them the same).
RUST_VERSION = "1.88"

NEEDS_RUST = (
    f"gpulint: building gpulint from source needs Rust {RUST_VERSION} or newer, "
    "with cargo on the PATH (https://rustup.rs)"
)


def _maturin():
    if not (os.environ.get("CARGO") or shutil.which("cargo")):
        sys.exit(NEEDS_RUST)
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings=None):
    return _maturin().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _maturin().get_requires_for_build_sdist(config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _maturin().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _maturin().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _maturin().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _maturin().build_sdist(sdist_directory, config_settings)
