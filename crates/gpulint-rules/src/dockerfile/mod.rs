//! Images: GPU base images, wheels and the environment an image bakes in.

pub(crate) mod df000_syntax_error;
pub(crate) mod df001_gpu_base_image_unpinned;
pub(crate) mod df003_torch_wheel_accelerator_mismatch;
pub(crate) mod df004_legacy_runtime_without_visible_devices;
pub(crate) mod df005_cuda_visible_devices_in_image;
pub(crate) mod df007_driver_capabilities_without_compute;
