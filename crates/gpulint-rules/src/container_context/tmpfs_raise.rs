//! Raising a /dev/shm that a tmpfs mount or a pod's size limit decides.

use super::*;

/// Raises the size of the /dev/shm tmpfs written at `at` to `size` (the
/// fix size): the `size=` option of a `tmpfs:` entry, or `tmpfs.size` of a
/// long-form volume. Written in the spelling the kernel's tmpfs reads for
/// the option (`size=8g`: the engine hands it to mount(2), which refuses
/// `8gb`).
pub(super) fn compose_tmpfs_raise(
    cx: &ComposeContext,
    service: &Service,
    at: &At,
    size: &str,
) -> Option<Fix> {
    let SizeValue::Bytes { bytes, .. } = parse_compose_size(size) else {
        return None;
    };
    let size = tmpfs_size_spelling(bytes);
    let mount = service
        .shm_mounts
        .iter()
        .find(|m| matches!(m.value, ShmMount::Tmpfs(Some(_))) && &cx.range(m.node) == at)?;
    if cx.source(mount.node).contains('$') {
        return None;
    }
    let title = format!("Raise the /dev/shm tmpfs to {size}");
    let yaml = cx.yaml(mount.node.file);
    let editor = cx.editor(mount.node.file);
    if let Some(text) = yaml.str(mount.node.node) {
        let raised = with_tmpfs_size(text, &size)?;
        let edit = editor.replace(
            mount.node.node,
            editor.scalar_like(mount.node.node, &raised),
        );
        cx.edit_fix(
            service,
            mount.node,
            &["tmpfs"],
            vec![edit],
            &[&["tmpfs"]],
            title,
            Applicability::Unsafe,
        )
    } else {
        let entry = yaml.get_path(mount.node.node, &["tmpfs", "size"])?;
        let edit = editor.replace(entry.value, editor.scalar_like(entry.value, &size));
        cx.edit_fix(
            service,
            mount.node,
            &["volumes"],
            vec![edit],
            &[&["volumes"]],
            title,
            Applicability::Unsafe,
        )
    }
}

/// A tmpfs at /dev/shm on a command line (`--tmpfs /dev/shm:size=1g`,
/// `--mount type=tmpfs,...,tmpfs-size=...`) raised to `size`. A `--tmpfs`
/// size in the spelling the kernel reads (`size=8g`, not `8gb`); a
/// `--mount` one in the fix size's own spelling, since the Docker CLI reads
/// `tmpfs-size` with go-units, as it reads `--shm-size`.
pub(super) fn run_tmpfs_raise(
    cx: &ScriptContext,
    site: &RunSite,
    size: &str,
    bytes: u64,
) -> Option<SizedShm> {
    let mount = site.run.dev_shm_mount()?;
    let SizeValue::Bytes { bytes: raised, .. } = parse_compose_size(size) else {
        return None;
    };
    let raised = tmpfs_size_spelling(raised);
    let suggested = match mount.name.as_str() {
        "--tmpfs" => format!("`size={raised}`"),
        _ => format!("`tmpfs-size={size}`"),
    };
    let raise = mount.value.as_deref().and_then(|value| {
        let (new_value, title) = match mount.name.as_str() {
            "--tmpfs" => (with_tmpfs_size(value, &raised)?, raised.as_str()),
            _ => (with_mount_tmpfs_size(value, size)?, size),
        };
        cx.set_option_value(
            site,
            mount,
            &new_value,
            format!("Raise the /dev/shm tmpfs to {title}"),
            Applicability::Unsafe,
        )
    });
    Some(SizedShm {
        at: mount.range.into(),
        bytes,
        suggested,
        label: format!("`{}` caps /dev/shm", mount.name),
        raise,
    })
}

/// The `sizeLimit` of the memory emptyDir a pod's container mounts at
/// /dev/shm, raised to `need`. The volume serves every container that
/// mounts it, so the largest need among its GPU containers decides: only
/// that container (the last of equals) answers, and the finding is made
/// once. A milli quantity (`512m`) is K8S008's finding.
pub(super) fn pod_size_limit_raise(
    cx: &KubeContext,
    pod: &Pod,
    container: &Container,
    need: &ShmNeed,
) -> Option<SizedShm> {
    let ShmSource::Mounted {
        volume: Some(volume),
        ..
    } = pod.spec.shm_of(container)
    else {
        return None;
    };
    let VolumeSource::EmptyDir {
        memory: true,
        size_limit: Some((_, value, QuantityValue::Parsed(quantity))),
        ..
    } = &volume.source
    else {
        return None;
    };
    if quantity.suffix.is_milli() {
        return None;
    }
    let policy = cx.settings.shm_policy();
    let (decides, _) = pod
        .spec
        .shm_mounters(volume)
        .filter_map(|c| {
            let model = cx.container(c).filter(|m| m.gpu_workload)?;
            Some((c, shm_need(model, &policy)))
        })
        .max_by_key(|(_, need)| need.bytes)?;
    if !std::ptr::eq(decides, container) {
        return None;
    }
    let index = pod
        .spec
        .volumes
        .iter()
        .position(|v| std::ptr::eq(v, volume))?;
    let size = bytes_to_quantity(need.bytes);
    let path = pod.volume_path(index).child("emptyDir").child("sizeLimit");
    Some(SizedShm {
        at: cx.range(*value).into(),
        bytes: quantity.bytes_ceil(),
        suggested: format!("`{size}`"),
        label: "the emptyDir's `sizeLimit` caps /dev/shm".to_string(),
        raise: cx.fix(
            format!("Raise `sizeLimit` to {size}"),
            Applicability::Unsafe,
            [Some(cx.replace(*value, path, &size))],
        ),
    })
}

/// A `--mount` value with its `tmpfs-size=` set to `size`; `None` without one.
pub(super) fn with_mount_tmpfs_size(value: &str, size: &str) -> Option<String> {
    let mut found = false;
    let parts: Vec<String> = value
        .split(',')
        .map(|part| match part.strip_prefix("tmpfs-size=") {
            Some(_) => {
                found = true;
                format!("tmpfs-size={size}")
            }
            None => part.to_string(),
        })
        .collect();
    found.then(|| parts.join(","))
}

/// A service's `shm_size` written as 0 (which leaves the default).
pub(super) fn zero_shm_size_node(service: &Service) -> Option<crate::model::compose::Src> {
    service
        .shm_size
        .as_ref()
        .filter(|s| matches!(s.value, SizeValue::Bytes { bytes: 0, .. }))
        .map(|s| s.node)
}
