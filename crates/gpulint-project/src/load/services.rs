//! Reading the merged model's services: `extends`, `env_file`s and built
//! images.

use super::*;

impl Loading<'_> {
    /// Resolves `extends` for every service of one file's model (compose-go
    /// `ApplyExtends`): the base (in this file, or another one `file:`
    /// names) is resolved first, this file's `!reset`s applied to it, then
    /// the service merged over it. Returns the model and each service's
    /// definitions.
    pub(super) fn apply_extends(
        &mut self,
        file: &FileContext,
        cfg: &Arc<Node>,
        env: &Environment,
        resets: &[Vec<String>],
        role: Role,
    ) -> (Arc<Node>, HashMap<String, Vec<Definition>>) {
        let mut definitions = HashMap::new();
        let Some(services) = cfg.entry("services") else {
            return (cfg.clone(), definitions);
        };
        if !services.value.is_mapping() {
            // `services:` with nothing under it too (compose-go's
            // `ApplyExtends`: services must be a mapping).
            self.refuse(
                "`services` must be a mapping (Compose refuses `services:` with no service under it)",
                Place::Node(services.value.src),
                RefusalKind::Config,
            );
            return (cfg.clone(), definitions);
        }
        let scope = Scope {
            file: file.clone(),
            services: services.value.clone(),
            resets: resets.to_vec(),
        };
        let mut resolved: HashMap<String, Resolved> = HashMap::new();
        let mut entries = Vec::new();
        for entry in services.value.entries() {
            let result = self.resolve_service(
                &scope,
                &entry.key,
                env,
                role,
                &mut resolved,
                &mut Vec::new(),
            );
            match result {
                Some(done) => {
                    definitions.insert(entry.key.clone(), done.definitions.clone());
                    entries.push(Entry {
                        value: done.node.clone(),
                        ..entry.clone()
                    });
                }
                None => {
                    definitions.insert(
                        entry.key.clone(),
                        vec![Definition {
                            key: entry.key_src,
                            map: entry.value.src,
                            role,
                        }],
                    );
                    entries.push(entry.clone());
                }
            }
        }
        let services = Arc::new(services.value.with_kind(Kind::Mapping(entries)));
        let root = Arc::new(
            cfg.with_kind(Kind::Mapping(
                cfg.entries()
                    .iter()
                    .map(|e| {
                        if e.key == "services" {
                            Entry {
                                value: services.clone(),
                                ..e.clone()
                            }
                        } else {
                            e.clone()
                        }
                    })
                    .collect(),
            )),
        );
        (root, definitions)
    }

    /// One service with its `extends` resolved (`None` when it has no
    /// usable definition: not a mapping). A base that cannot be found,
    /// or a cycle, is refused at the `extends` key, and the service is
    /// kept as written.
    pub(super) fn resolve_service(
        &mut self,
        scope: &Scope,
        name: &str,
        env: &Environment,
        role: Role,
        resolved: &mut HashMap<String, Resolved>,
        chain: &mut Vec<(PathBuf, String)>,
    ) -> Option<Resolved> {
        if let Some(done) = resolved.get(name) {
            return Some(done.clone());
        }
        let entry = scope.services.entry(name)?.clone();
        let own = Definition {
            key: entry.key_src,
            map: entry.value.src,
            role,
        };
        if !entry.value.is_mapping() {
            return None;
        }
        let Some(extends) = entry.value.entry("extends").cloned() else {
            let done = Resolved {
                depth: 0,
                node: entry.value.clone(),
                definitions: vec![own],
            };
            return remember(resolved, name, done);
        };
        let as_written = || Resolved {
            depth: 0,
            node: without_key(&entry.value, "extends"),
            definitions: vec![own.clone()],
        };
        let kept = |this: &mut Self, message: String, kind: RefusalKind| {
            this.refusals.push(Refusal {
                message,
                at: Place::Node(extends.key_src),
                kind,
                service: Some(name.to_string()),
            });
            as_written()
        };
        let (base_name, base_file) = extends_target(&extends.value);
        let Some(base_name) = base_name else {
            let done = kept(
                self,
                format!("extends.{name}.service is required"),
                RefusalKind::Config,
            );
            return remember(resolved, name, done);
        };
        let link = (crate::vfs::normalize(&scope.file.path), name.to_string());
        if let Some(message) = chain_refusal(chain, &link, name) {
            return Some(kept(self, message, RefusalKind::Config));
        }
        chain.push(link);
        let base = match self.resolve_base(
            scope,
            &base_name,
            base_file.as_deref(),
            env,
            role,
            resolved,
            chain,
            extends.key_src,
        ) {
            BaseLookup::Found(base) => base,
            BaseLookup::Missing(message) => {
                chain.pop();
                let done = kept(self, message, RefusalKind::Config);
                return remember(resolved, name, done);
            }
            BaseLookup::Unreadable => {
                chain.pop();
                let done = as_written();
                if let Some(last) = self.refusals.last_mut() {
                    last.service.get_or_insert_with(|| name.to_string());
                }
                return remember(resolved, name, done);
            }
        };
        chain.pop();
        let Some(base) = base else {
            let done = as_written();
            return remember(resolved, name, done);
        };
        let depth = base.depth + 1;
        let (node, definitions) = self.merge_over_base(scope, name, &entry.value, base, &own);
        if depth > limits::MAX_EXTENDS_DEPTH {
            let done = kept(self, too_deep(), RefusalKind::Config);
            return remember(resolved, name, done);
        }
        let done = Resolved {
            node,
            definitions,
            depth,
        };
        remember(resolved, name, done)
    }

    /// The base service `extends` names, resolved in this file or in the
    /// file `file:` names. `Missing` carries the refusal's message.
    #[allow(clippy::too_many_arguments)]
    fn resolve_base(
        &mut self,
        scope: &Scope,
        base_name: &str,
        base_file: Option<&str>,
        env: &Environment,
        role: Role,
        resolved: &mut HashMap<String, Resolved>,
        chain: &mut Vec<(PathBuf, String)>,
        extends_key: Src,
    ) -> BaseLookup {
        let Some(file) = base_file else {
            if scope.services.entry(base_name).is_none() {
                return missing_base(base_name, &file_name(&scope.file.path));
            }
            return BaseLookup::Found(
                self.resolve_service(scope, base_name, env, role, resolved, chain),
            );
        };
        let path = scope.file.base_dir.join(file);
        let other_role = match scope.file.role {
            FileRole::Included => FileRole::Included,
            _ => FileRole::Extended,
        };
        let base_dir = crate::discover::dir_of(&path);
        let Some(other) = self.open(&path, other_role, &base_dir, Some(Place::Node(extends_key)))
        else {
            return BaseLookup::Unreadable;
        };
        // The extended file: interpolated with the same variables; its own
        // `include` and validation are not processed.
        let docs = self.documents(&other, env);
        let mut base_model = None;
        for doc in docs {
            let (stripped, resets) = take_resets(&doc);
            // compose-go loads it as a file of its own (`loadYamlFile`): its
            // sequences made unique and put in the canonical form before the
            // service that extends it is merged over them, so a `gpus: all`
            // there is a list that a later list is appended to (and a string
            // cannot override).
            base_model = Some((canonical(&enforce_unicity(&stripped)), resets));
        }
        match base_model.and_then(|(doc, resets)| {
            let services = doc.get("services")?.clone();
            Some((services, resets))
        }) {
            Some((services, resets)) if services.get(base_name).is_some() => {
                let other_scope = Scope {
                    file: other.clone(),
                    services,
                    resets,
                };
                let other_role = if other_role == FileRole::Included {
                    Role::Included
                } else {
                    Role::Extended
                };
                let mut other_resolved = HashMap::new();
                BaseLookup::Found(self.resolve_service(
                    &other_scope,
                    base_name,
                    env,
                    other_role,
                    &mut other_resolved,
                    chain,
                ))
            }
            _ => missing_base(base_name, file),
        }
    }

    /// The service merged over its resolved base, after this file's
    /// `!reset`s of the service are applied to the base copy; the base's
    /// project definitions become extended ones.
    fn merge_over_base(
        &mut self,
        scope: &Scope,
        name: &str,
        value: &Arc<Node>,
        base: Resolved,
        own: &Definition,
    ) -> (Arc<Node>, Vec<Definition>) {
        // This file's resets of the service apply to the base copy.
        let own_resets: Vec<Vec<String>> = scope
            .resets
            .iter()
            .filter(|p| p.len() > 2 && p[0] == "services" && p[1] == name)
            .map(|p| p[2..].to_vec())
            .collect();
        let source = apply_resets(&base.node, &own_resets);
        let service = without_key(value, "extends");
        let mut path = vec!["services".to_string(), "x".to_string()];
        let merged = match &source.kind {
            Kind::Mapping(_) => crate::merge::merge_mappings(&source, &service, &mut path),
            _ => merge(&source, &service, &mut path),
        };
        let node = match merged {
            Ok(node) => node,
            Err(error) => {
                self.refuse(
                    format!("Compose cannot extend `{name}`: {}", error.message),
                    Place::Node(error.node.src),
                    RefusalKind::Config,
                );
                service
            }
        };
        let mut definitions = base.definitions;
        for d in &mut definitions {
            if d.role == Role::Project {
                d.role = Role::Extended;
            }
        }
        definitions.push(own.clone());
        (node, definitions)
    }

    /// The services of the merged model, read with their environment,
    /// definitions and built images.
    pub(super) fn services(&mut self, model: &Model, env: &Environment) -> Vec<Service> {
        let Some(root) = &model.root else {
            return Vec::new();
        };
        let Some(services) = root.get("services") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in services.entries() {
            // A service with nothing under it, or not a mapping: the
            // schema refuses it (`services.x must be a mapping`).
            if !entry.value.is_mapping() {
                continue;
            }
            let definitions = model
                .definitions
                .get(&entry.key)
                .cloned()
                .unwrap_or_else(|| {
                    vec![Definition {
                        key: entry.key_src,
                        map: entry.value.src,
                        role: Role::Project,
                    }]
                });
            let from_env_files = self.env_file_vars(&entry.key, &entry.value, env);
            let env_lookup = |name: &str| env.value(name).map(str::to_string);
            let mut service = Service::read(
                &entry.key,
                &entry.value,
                definitions.clone(),
                0,
                Reading {
                    env: &env_lookup,
                    from_env_files,
                    named_volumes: root.get("volumes").map(|v| &**v),
                },
            );
            let home = home_definition(&service, &definitions);
            service.key = definitions[home].key;
            service.map = definitions[home].map;
            service.resets = model.resets.get(&entry.key).cloned().unwrap_or_default();
            if let Some(build) = &service.build {
                service.built_image = self.built_image(build, &entry.value).map(Arc::new);
            }
            out.push(service);
        }
        crate::model::compose::settle_build_evidence(&mut out);
        // A refusal about one service is what its container gets.
        for refusal in &self.refusals {
            if let Some(name) = &refusal.service
                && let Some(service) = out.iter_mut().find(|s| s.name == *name)
            {
                service
                    .refused
                    .get_or_insert_with(|| refusal.message.clone());
            }
        }
        out
    }

    /// A required `env_file` that is not a file here. Something that is
    /// there but is no file (a device, a FIFO) is refused without being
    /// read or waited on. A directory is a mistake in the config wherever
    /// it is checked out: Compose cannot read it.
    fn refuse_unreadable_env_file(&mut self, name: &str, path: &str, full: &Path, at: Src) {
        let (why, kind) = if self.ws.files.is_dir(full) {
            (
                format!("read {}: is a directory", full.display()),
                RefusalKind::Config,
            )
        } else if self.ws.files.canonicalize(full).is_some() {
            (
                format!("{path} cannot be read here (not a regular file)"),
                RefusalKind::MissingFile,
            )
        } else {
            (format!("{path} is missing"), RefusalKind::MissingFile)
        };
        self.refusals.push(Refusal {
            message: format!("`env_file`: {why} (Compose refuses the project)"),
            at: Place::Node(at),
            kind,
            service: Some(name.to_string()),
        });
    }

    /// The variables a service's `env_file`s set, each reported at its
    /// entry. A required one that is missing makes Compose refuse the
    /// service (the file is not in this checkout).
    pub(super) fn env_file_vars(
        &mut self,
        name: &str,
        service: &Node,
        env: &Environment,
    ) -> Vec<ComposeEnv> {
        let Some(entries) = service.get("env_file") else {
            return Vec::new();
        };
        let items: Vec<Arc<Node>> = match &entries.kind {
            Kind::Sequence(items) => items.clone(),
            _ if entries.is_null() => Vec::new(),
            _ => vec![entries.clone()],
        };
        let mut vars: Vec<ComposeEnv> = Vec::new();
        for item in items {
            let (path, required) = match &item.kind {
                Kind::Mapping(_) => (
                    item.get("path").and_then(|p| p.str().map(str::to_string)),
                    item.get("required").and_then(|r| r.str()) != Some("false"),
                ),
                _ => (item.str().map(str::to_string), true),
            };
            let Some(path) = path else { continue };
            let base = self.files[item.src.file as usize].base_dir.clone();
            let full = base.join(&path);
            if !self.ws.files.is_file(&full) {
                if required {
                    self.refuse_unreadable_env_file(name, &path, &full, item.src);
                }
                continue;
            }
            let Some(file) = self.open(&full, FileRole::Env, &base, Some(Place::Node(item.src)))
            else {
                // There and unreadable (required or not, Compose refuses):
                // the service's container is refused.
                if let Some(last) = self.refusals.last_mut()
                    && last.at == Place::Node(item.src)
                {
                    last.service.get_or_insert_with(|| name.to_string());
                }
                continue;
            };
            // Each env file is read on its own, its `${VAR}` looked up in
            // the project's variables.
            let source = self.files[file.index as usize].source.clone();
            let read = match env.parse_file(&full, &source.text) {
                Ok(read) => read,
                Err(error) => {
                    self.refusals.push(Refusal {
                        message: format!(
                            "Compose cannot read {}: {}",
                            full.display(),
                            error.message
                        ),
                        at: Place::Text {
                            file: file.index,
                            range: error.range,
                        },
                        kind: RefusalKind::Config,
                        service: Some(name.to_string()),
                    });
                    continue;
                }
            };
            for (var_name, var) in read {
                vars.retain(|v| v.name != var_name);
                vars.push(ComposeEnv {
                    name: var_name.clone(),
                    value: match &var.value {
                        crate::env::Value::Known(v) => Some(v.clone()),
                        crate::env::Value::Unknown(_) => None,
                    },
                    at: item.src,
                    key: None,
                    from_file: Some((file.index, var.range)),
                });
            }
        }
        vars
    }

    /// The image a service's `build:` produces, when its Dockerfile can be
    /// read: the context relative to the file that writes it, the
    /// Dockerfile relative to the context (or `dockerfile_inline`).
    pub(super) fn built_image(
        &mut self,
        build: &crate::model::compose::BuildSpec,
        service: &Node,
    ) -> Option<BuiltImage> {
        if let Some(inline) = &build.dockerfile_inline {
            return BuiltImage::from_dockerfile(
                None,
                &inline.value,
                build.target.as_deref(),
                &build.args,
            );
        }
        let (context, base) = match &build.context {
            Some(context) => (
                context.value.clone(),
                self.files[context.node.file as usize].base_dir.clone(),
            ),
            None => (
                ".".to_string(),
                self.files[service.src.file as usize].base_dir.clone(),
            ),
        };
        // Remote contexts (git URLs, tarballs) are not read.
        if context.contains("://")
            || context.starts_with("git@")
            || context.starts_with("github.com/")
        {
            return None;
        }
        let dockerfile = crate::vfs::normalize(
            &base
                .join(&context)
                .join(build.dockerfile.as_deref().unwrap_or("Dockerfile")),
        );
        let text = self.ws.files.read(&dockerfile).ok()?;
        let model = self.ws.dockerfile(&text.source);
        BuiltImage::from_model(
            Some(text.source),
            &model,
            build.target.as_deref(),
            &build.args,
        )
    }
}

/// Where the base service of an `extends` was found.
enum BaseLookup {
    /// Resolved (`None` when the base has no usable definition).
    Found(Option<Resolved>),
    /// Not there: Compose refuses with this message.
    Missing(String),
    /// The file `file:` names could not be read (already refused).
    Unreadable,
}

/// No service `base_name` in `file`: Compose refuses the `extends`.
fn missing_base(base_name: &str, file: &str) -> BaseLookup {
    BaseLookup::Missing(format!(
        "`extends`: no service `{base_name}` in {file} (Compose refuses it: service \"{base_name}\" not found)"
    ))
}

/// What `extends` names: the base service and, when another file holds
/// it, that file (`None` where the key does not say).
fn extends_target(extends: &Node) -> (Option<String>, Option<String>) {
    match &extends.kind {
        Kind::Scalar { .. } => (extends.str().map(str::to_string), None),
        Kind::Mapping(_) => (
            extends
                .get("service")
                .and_then(|s| s.str().map(str::to_string)),
            extends
                .get("file")
                .and_then(|f| f.str().map(str::to_string)),
        ),
        Kind::Sequence(_) => (None, None),
    }
}

/// The refusal for following `link` once more along `chain`: a cycle
/// (Compose refuses it) or a chain past gpulint's depth limit.
fn chain_refusal(
    chain: &[(PathBuf, String)],
    link: &(PathBuf, String),
    name: &str,
) -> Option<String> {
    if chain.contains(link) {
        let names: Vec<&str> = chain.iter().map(|(_, n)| n.as_str()).collect();
        return Some(format!(
            "`extends` makes a cycle: {} -> {name} (Compose refuses it: circular reference)",
            names.join(" -> ")
        ));
    }
    (chain.len() >= limits::MAX_EXTENDS_DEPTH).then(too_deep)
}

/// The refusal of an `extends` chain past gpulint's depth limit.
fn too_deep() -> String {
    format!(
        "`extends` chain deeper than {} services (gpulint's limit)",
        limits::MAX_EXTENDS_DEPTH
    )
}

/// Records `done` as the resolved form of service `name` and returns it.
fn remember(
    resolved: &mut HashMap<String, Resolved>,
    name: &str,
    done: Resolved,
) -> Option<Resolved> {
    resolved.insert(name.to_string(), done.clone());
    Some(done)
}
