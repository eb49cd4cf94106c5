//! GPU requests and reservations: how many GPUs a container gets, and what runs on them.

pub mod gpu001_count_and_device_ids;
pub mod gpu002_device_reservation_without_capabilities;
pub mod gpu003_capabilities_without_gpu;
pub mod gpu004_parallel_size_above_gpus;
pub mod gpu005_legacy_nvidia_runtime;
pub mod gpu006_training_without_gpu_reservation;
pub mod gpu011_gpu_resource_in_deploy_resources;
pub mod gpu012_gpus_value_refused;
pub mod gpu013_option_word_taken_as_image;
