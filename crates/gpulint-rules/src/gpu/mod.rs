//! GPU requests and reservations: how many GPUs a container gets, and what runs on them.

pub(crate) mod gpu001_count_and_device_ids;
pub(crate) mod gpu002_device_reservation_without_capabilities;
pub(crate) mod gpu003_capabilities_without_gpu;
pub(crate) mod gpu004_parallel_size_above_gpus;
pub(crate) mod gpu005_legacy_nvidia_runtime;
pub(crate) mod gpu006_training_without_gpu_reservation;
pub(crate) mod gpu011_gpu_resource_in_deploy_resources;
pub(crate) mod gpu012_gpus_value_refused;
pub(crate) mod gpu013_option_word_taken_as_image;
