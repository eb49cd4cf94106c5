//! Generated compose cases for tests/it/engine.rs: every spelling of
//! `shm_size`, every IPC mode, /dev/shm mounts in each form, tmpfs,
//! interpolation defaults, anchors and merges, ulimits, GPU reservations,
//! and override pairs with `!reset` and `!override`. Deterministic: the
//! same cases every run.
//!
//! Cases are packed many services to a project, so Compose loads and
//! creates them in one call; a project Compose refuses is split into one
//! project per case by the caller, so one refused spelling costs only
//! itself.

use super::oracle::Case;
use std::path::Path;

/// One service under test, with the donor services it needs.
pub struct Generated {
    /// The service body, indented for `services.<name>:`.
    pub body: String,
    /// The body in `compose.override.yaml`, for override pairs.
    pub override_body: Option<String>,
    /// A donor service this one joins (`ipc: service:donor`): its body.
    pub donor: Option<String>,
}

fn case(body: &str) -> Generated {
    Generated {
        body: body.to_string(),
        override_body: None,
        donor: None,
    }
}

/// `shm_size` as YAML writes it: plain scalars (ints in every base, with
/// underscores and signs; floats), quoted strings with every unit and
/// spacing, variables with defaults.
const SHM_SPELLINGS: &[&str] = &[
    "1073741824",
    "0",
    "16",
    "-1",
    "+1073741824",
    "0x40000000",
    "0x10",
    "0o1000",
    "017",
    "1_000",
    "1_073_741_824",
    "0b1000000000",
    "1e9",
    "1.5",
    "2.0",
    ".5",
    "1E3",
    "1g",
    "8g",
    "2gb",
    "1GiB",
    "1Gb",
    "512m",
    "512M",
    "512mb",
    "512MiB",
    "65536k",
    "65536kb",
    "100b",
    "100B",
    "1t",
    "'1g'",
    "\"1g\"",
    "\"1 g\"",
    "\"2 GB\"",
    "\"1  g\"",
    "\"1.5g\"",
    "\"1.5 GiB\"",
    "\"0.5g\"",
    "\".5g\"",
    "\"1.g\"",
    "\"+1g\"",
    "\"1g \"",
    "\" 1g\"",
    "\"10%\"",
    "\"1gig\"",
    "\"1.5.5g\"",
    "\"1e3\"",
    "\"0x10\"",
    "\"1_000\"",
    "\"1073741824\"",
    "\"-1\"",
    "\"0\"",
    "\"\"",
    "\"1kib\"",
    "\"3 m\"",
    "\"${SHM_SIZE:-2g}\"",
    "\"${SHM_SIZE-3g}\"",
    "${SHM_SIZE:-4g}",
    "\"${SHM_SIZE:-${OTHER:-5g}}\"",
    "\"${SHM_SIZE:-1024}\"",
    "\"${SHM_SIZE:-1.5g}\"",
    "\"$${SHM}\"",
    "1g # a comment",
    "!!str 1g",
    "!!int 4096",
    "!!float 4096",
];

/// IPC modes alone and beside a size.
const IPC_MODES: &[&str] = &["private", "shareable", "host", "none", "\"\"", "PRIVATE"];

/// /dev/shm mounts: `volumes:` short and long forms, `tmpfs:` forms.
const SHM_MOUNTS: &[&str] = &[
    "volumes: [\"/dev/shm:/dev/shm\"]",
    "volumes: [\"/dev/shm\"]",
    "volumes: [\"shmvol:/dev/shm\"]",
    "volumes: [\"./shm:/dev/shm\"]",
    "volumes: [{type: bind, source: /dev/shm, target: /dev/shm}]",
    "volumes: [{type: volume, target: /dev/shm}]",
    "volumes: [{type: volume, source: shmvol, target: /dev/shm}]",
    "volumes: [{type: tmpfs, target: /dev/shm}]",
    "volumes: [{type: tmpfs, target: /dev/shm, tmpfs: {size: 1073741824}}]",
    "volumes: [{type: tmpfs, target: /dev/shm, tmpfs: {size: \"2g\"}}]",
    "volumes: [{type: tmpfs, target: /dev/shm, tmpfs: {size: 300m}}]",
    "tmpfs: /dev/shm",
    "tmpfs: /dev/shm:size=300m",
    "tmpfs: [\"/dev/shm:size=1g,mode=1777\"]",
    "tmpfs: [\"/dev/shm:size=1073741824\"]",
    "tmpfs: [\"/tmp\", \"/dev/shm:size=64k\"]",
    "tmpfs: [\"/dev/shm:mode=1777\"]",
    // The kernel parses a tmpfs size= option: these fail to mount.
    "tmpfs: /dev/shm:size=1gb",
    "tmpfs: [\"/dev/shm:size=1GiB\"]",
    "tmpfs: /dev/shm:size=1.5g",
    "tmpfs: /dev/shm:size=0x40000000",
    // A share of the host's memory, and 0: no limit at all.
    "tmpfs: /dev/shm:size=50%",
    "tmpfs: [\"/dev/shm:size=5%,mode=1777\"]",
    "tmpfs: /dev/shm:size=0",
];

const ULIMITS: &[&str] = &[
    "ulimits: {memlock: -1}",
    "ulimits: {memlock: {soft: -1, hard: -1}}",
    "ulimits: {memlock: 67108864}",
    "ulimits: {memlock: {soft: 1048576, hard: 8388608}}",
    "ulimits: {stack: 67108864}",
    "ulimits: {memlock: -1, stack: 67108864}",
    "ulimits: {nofile: {soft: 1024, hard: 4096}}",
    "ulimits: {memlock: \"${MEMLOCK:--1}\"}",
    "ulimits: \"memlock=-1\"",
    "ulimits: [memlock]",
];

const GPUS: &[&str] = &[
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 0, capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: [\"0\", \"3\"], capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{capabilities: [compute, utility]}]}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: \"${NGPU:-4}\", capabilities: [gpu]}]}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}, {driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
    // Written wrong, each refused by compose-spec.json (PROJ001): not a
    // list of objects, a key it does not list, not a mapping.
    "deploy: {resources: {reservations: {devices: {capabilities: [gpu]}}}}",
    "deploy: {resources: {reservations: {devices: [gpu]}}}",
    "deploy: {resources: {reservations: {devices: all}}}",
    "deploy: {resources: {reservations: {devices: }}}",
    "deploy: {resources: {reservations: {devices: \"${NGPU:-all}\"}}}",
    "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu], gpus: 1}]}}}",
    "deploy: {resources: {reservations: {cpus: 1, gpu_count: 1}}}",
    "deploy: {resources: {reservations: [{devices: [{capabilities: [gpu]}]}]}}",
    "deploy: {resources: }",
    "deploy: {resourcez: {reservations: {devices: [{capabilities: [gpu]}]}}}",
    "deploy: {x-gpu: 1, resources: {x-note: 2, reservations: {x-why: 3, devices: [{capabilities: [gpu], x-id: 4}]}}}",
    "runtime: nvidia\n    environment: {NVIDIA_VISIBLE_DEVICES: all}",
    "runtime: nvidia\n    environment: [\"NVIDIA_VISIBLE_DEVICES=0,1\"]",
];

/// Every generated case, deterministic.
pub fn cases() -> Vec<Generated> {
    let mut out = Vec::new();
    // Every size spelling, alone and with each IPC mode that keeps it.
    for size in SHM_SPELLINGS {
        out.push(case(&format!("shm_size: {size}")));
        for ipc in ["shareable", "private", "host"] {
            out.push(case(&format!("shm_size: {size}\n    ipc: {ipc}")));
        }
    }
    // Every IPC mode alone, with a size, and with each mount.
    for ipc in IPC_MODES {
        out.push(case(&format!("ipc: {ipc}")));
        out.push(case(&format!("ipc: {ipc}\n    shm_size: 2g")));
        for mount in SHM_MOUNTS {
            out.push(case(&format!("ipc: {ipc}\n    {mount}")));
        }
    }
    // Mounts alone and beside a size.
    for mount in SHM_MOUNTS {
        out.push(case(mount));
        out.push(case(&format!("{mount}\n    shm_size: 2g")));
    }
    // Joining a donor's IPC namespace: the donor decides /dev/shm.
    for donor in [
        "ipc: shareable",
        "ipc: shareable\n    shm_size: 3g",
        "ipc: shareable\n    tmpfs: /dev/shm:size=700m",
        "ipc: host",
        "shm_size: 1g",
    ] {
        for joiner in ["ipc: service:donor", "ipc: service:donor\n    shm_size: 5g"] {
            out.push(Generated {
                body: joiner.to_string(),
                override_body: None,
                donor: Some(donor.to_string()),
            });
        }
    }
    // Ulimits and GPUs, alone and with the settings that matter beside them.
    for ulimits in ULIMITS {
        out.push(case(ulimits));
        out.push(case(&format!("{ulimits}\n    shm_size: 8g")));
    }
    for gpus in GPUS {
        out.push(case(gpus));
        out.push(case(&format!(
            "{gpus}\n    shm_size: 8g\n    ipc: shareable"
        )));
        out.push(case(&format!("{gpus}\n    ipc: host")));
    }
    // Anchors and merge keys (the anchor is defined in the same service
    // body so that a case stands alone).
    for size in ["2g", "\"4gb\"", "1073741824", "1e9"] {
        out.push(case(&format!("<<: {{shm_size: {size}, ipc: shareable}}")));
        out.push(case(&format!(
            "<<: [{{shm_size: {size}}}, {{ipc: host}}]\n    environment: {{A: b}}"
        )));
        out.push(case(&format!("<<: {{shm_size: {size}}}\n    shm_size: 6g")));
    }
    // Override pairs: the base, then what compose.override.yaml says.
    let pairs: &[(&str, &str)] = &[
        ("shm_size: 1g", "shm_size: 8g"),
        ("shm_size: 8g", "ipc: host"),
        ("ipc: host", "shm_size: 2g"),
        ("ipc: host", "ipc: private"),
        ("ipc: host", "ipc: !reset null"),
        ("shm_size: 8g", "shm_size: !reset null"),
        ("shm_size: 8g", "shm_size: !reset"),
        ("shm_size: 8g\n    ipc: host", "ipc: !reset null"),
        ("tmpfs: /dev/shm:size=1g", "tmpfs: !reset []"),
        (
            "tmpfs: /dev/shm:size=1g",
            "tmpfs: !override [\"/dev/shm:size=2g\"]",
        ),
        ("tmpfs: /dev/shm:size=1g", "tmpfs: [\"/tmp\"]"),
        ("volumes: [\"/dev/shm:/dev/shm\"]", "volumes: !reset []"),
        ("volumes: [\"/dev/shm:/dev/shm\"]", "shm_size: 4g"),
        ("shm_size: 1g", "volumes: [\"/dev/shm:/dev/shm\"]"),
        ("ulimits: {memlock: -1}", "shm_size: 2g"),
        ("ulimits: {memlock: -1}", "ulimits: !reset {}"),
        (
            "ulimits: {memlock: -1, stack: 67108864}",
            "ulimits: {stack: 1048576}",
        ),
        (
            "ulimits: {memlock: -1}",
            "ulimits: !override {stack: 1048576}",
        ),
        (
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
            "shm_size: 8g",
        ),
        (
            "shm_size: 8g",
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 4, capabilities: [gpu]}]}}}",
        ),
        (
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
            "deploy: {resources: {reservations: {devices: !reset []}}}",
        ),
        ("shm_size: \"${SHM:-1g}\"", "shm_size: \"${SHM:-3g}\""),
        ("shm_size: 1g", "shm_size: 1e9"),
        ("shm_size: 2g", "shm_size: 0"),
    ];
    for (base, over) in pairs {
        out.push(Generated {
            body: base.to_string(),
            override_body: Some(over.to_string()),
            donor: None,
        });
    }
    out
}

/// Writes `cases` as one project in `dir`: service `c<i>` for case `i`,
/// its donor as `c<i>donor`.
pub fn write_project(dir: &Path, cases: &[(usize, &Generated)]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut base = String::from("services:\n");
    let mut over = String::from("services:\n");
    let mut has_override = false;
    for (i, g) in cases {
        let body = g
            .body
            .replace("service:donor", &format!("service:c{i}donor"));
        base.push_str(&format!(
            "  c{i}:\n    image: gpulint-generated\n    {body}\n"
        ));
        if let Some(donor) = &g.donor {
            base.push_str(&format!(
                "  c{i}donor:\n    image: gpulint-generated\n    {donor}\n"
            ));
        }
        if let Some(o) = &g.override_body {
            has_override = true;
            over.push_str(&format!("  c{i}:\n    {o}\n"));
        }
    }
    // The named volume some mounts use.
    base.push_str("volumes:\n  shmvol: {}\n");
    std::fs::write(dir.join("compose.yaml"), base).unwrap();
    if has_override {
        std::fs::write(dir.join("compose.override.yaml"), over).unwrap();
    }
}

/// The generated cases packed `per` to a project under `root`.
pub fn projects(root: &Path, generated: &[Generated], per: usize) -> Vec<Case> {
    let numbered: Vec<usize> = (0..generated.len()).collect();
    numbered
        .chunks(per)
        .map(|members| batch(root, generated, members))
        .collect()
}

/// `members` in one project under `root`; a single case is not a batch.
pub fn batch(root: &Path, generated: &[Generated], members: &[usize]) -> Case {
    let name = format!("c{}-{}", members[0], members[members.len() - 1]);
    let dir = root.join(&name);
    let cases: Vec<(usize, &Generated)> = members.iter().map(|&i| (i, &generated[i])).collect();
    write_project(&dir, &cases);
    let label = match members {
        [i] => format!(
            "generated c{i} ({})",
            generated[*i].body.lines().next().unwrap_or("")
        ),
        _ => format!("generated {name}"),
    };
    let mut case = Case::project(&label, &dir);
    case.members = members.to_vec();
    case.batch = members.len() > 1;
    case
}

/// A refused batch in two halves.
pub fn halves(root: &Path, generated: &[Generated], refused: &Case) -> Vec<Case> {
    refused.halves(|members| batch(root, generated, members))
}

/// The body of every case a disagreement names (`c123`), for the report.
pub fn explain(generated: &[Generated], text: &str) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let Some(i) = word.strip_prefix('c').and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let Some(g) = generated.get(i) else { continue };
        if seen.insert(i) {
            out.push_str(&format!("  c{i}: {}", g.body.replace('\n', " ")));
            if let Some(o) = &g.override_body {
                out.push_str(&format!(" | override: {}", o.replace('\n', " ")));
            }
            if let Some(d) = &g.donor {
                out.push_str(&format!(" | donor: {}", d.replace('\n', " ")));
            }
            out.push('\n');
        }
    }
    out
}
