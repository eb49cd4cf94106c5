//! Importing `include:`d projects, as compose-go's `loader/include.go` does.

use super::*;

impl Loading<'_> {
    /// Imports what `include:` names into a file's model (compose-go's
    /// `ApplyInclude`): each entry is loaded as a project of its own, with
    /// the including project's variables over its own `env_file`s (or its
    /// directory's `.env`), and its services, volumes, networks, secrets
    /// and configs brought in.
    pub(super) fn include(
        &mut self,
        entry: &Entry,
        env: &Environment,
        working_dir: &Path,
        included: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Model {
        let mut model = Model::default();
        let items: Vec<Arc<Node>> = match &entry.value.kind {
            Kind::Sequence(items) => items.clone(),
            // `include:` with nothing under it includes nothing.
            _ if entry.value.is_null() => return model,
            _ => {
                self.refuse(
                    "`include` must be a list",
                    Place::Node(entry.value.src),
                    RefusalKind::Config,
                );
                return model;
            }
        };
        if depth >= limits::MAX_INCLUDE_DEPTH {
            self.refuse(
                format!(
                    "`include` nests deeper than {} files (gpulint's limit)",
                    limits::MAX_INCLUDE_DEPTH
                ),
                Place::Node(entry.value.src),
                RefusalKind::Config,
            );
            return model;
        }
        for item in items {
            let Some((paths, project_directory, env_files)) = self.include_entry(&item) else {
                continue;
            };
            let Some(first) = paths
                .first()
                .and_then(|p| p.str())
                .map(|p| working_dir.join(p))
            else {
                continue;
            };
            let project_dir = match &project_directory {
                None => crate::discover::dir_of(&first),
                Some(dir) => working_dir.join(dir),
            };
            if self.refuse_include_cycle(included, &first, item.src) {
                continue;
            }
            let own = self.include_env(&item, &env_files, working_dir, &project_dir, env);
            let mut included_env = env.clone();
            included_env.merge_under(&own);
            let key = format!(
                "{:?}|{}|{}",
                paths
                    .iter()
                    .map(|p| p.str().unwrap_or(""))
                    .collect::<Vec<_>>(),
                crate::vfs::normalize(&project_dir).display(),
                included_env.fingerprint()
            );
            let loaded = match self.included.get(&key) {
                // An include diamond: the same project is read once.
                Some(done) => done.clone(),
                None => {
                    let sub = self.load_included(
                        &paths,
                        working_dir,
                        &project_dir,
                        &included_env,
                        included,
                        depth,
                    );
                    self.included.insert(key, sub.clone());
                    sub
                }
            };
            // Entries of one `include:` import into each other too.
            let mut definitions = HashMap::new();
            let current = model
                .root
                .clone()
                .unwrap_or_else(|| empty_mapping(item.src));
            let root = self.import_at(&loaded, &current, &mut definitions, item.src);
            model.root = Some(root);
            for (name, defs) in loaded.definitions {
                model.definitions.entry(name).or_insert(defs);
            }
            for (name, found) in loaded.resets {
                model.resets.entry(name).or_default().extend(found);
            }
        }
        model
    }

    /// Refuses an include of `first` that one of the files including it
    /// already is (Compose: include cycle detected); true when refused.
    fn refuse_include_cycle(&mut self, included: &[PathBuf], first: &Path, at: Src) -> bool {
        if !included.contains(&crate::vfs::normalize(first)) {
            return false;
        }
        let chain: Vec<String> = included
            .iter()
            .map(PathBuf::as_path)
            .chain(std::iter::once(first))
            .map(|p| p.display().to_string())
            .collect();
        self.refuse(
            format!("include cycle detected: {}", chain.join(" includes ")),
            Place::Node(at),
            RefusalKind::Config,
        );
        true
    }

    /// One `include:` entry's paths, `project_directory` and `env_file`s
    /// (`None` when it includes nothing, refused if it is malformed).
    fn include_entry(&mut self, item: &Arc<Node>) -> Option<IncludeEntry> {
        match &item.kind {
            Kind::Scalar { .. } => Some((vec![item.clone()], None, Vec::new())),
            Kind::Mapping(_) => {
                // compose-go includes each of an entry's paths, and
                // an entry without one includes nothing (the schema is
                // applied after `include:` is taken out of the model).
                let path = item.get("path")?;
                let list = |node: &Arc<Node>| -> Vec<Arc<Node>> {
                    match &node.kind {
                        Kind::Sequence(items) => items.clone(),
                        _ => vec![node.clone()],
                    }
                };
                Some((
                    list(path),
                    item.get("project_directory")
                        .and_then(|d| d.str().map(str::to_string)),
                    item.get("env_file").map(list).unwrap_or_default(),
                ))
            }
            Kind::Sequence(_) => {
                self.refuse(
                    "an `include` entry is a path or a mapping",
                    Place::Node(item.src),
                    RefusalKind::Config,
                );
                None
            }
        }
    }

    /// The included project's own variables: its `env_file`s, or the
    /// `.env` of its project directory, each read over the including
    /// project's variables (which win).
    fn include_env(
        &mut self,
        item: &Arc<Node>,
        env_files: &[Arc<Node>],
        working_dir: &Path,
        project_dir: &Path,
        env: &Environment,
    ) -> Environment {
        let mut own = Environment::default();
        let env_paths: Vec<(PathBuf, Src)> = if env_files.is_empty() {
            let dotenv = project_dir.join(".env");
            if self.ws.files.is_file(&dotenv) {
                vec![(dotenv, item.src)]
            } else {
                Vec::new()
            }
        } else {
            env_files
                .iter()
                .filter_map(|f| Some((working_dir.join(f.str()?), f.src)))
                .collect()
        };
        for (path, at) in env_paths {
            // An include's `env_file` that is not there refuses the
            // project (compose-go stats it): a mistake in the config.
            if !self.ws.files.is_file(&path) {
                self.refuse(
                    format!(
                        "`include`: env_file {} cannot be read (Compose refuses the project: no such file)",
                        path.display()
                    ),
                    Place::Node(at),
                    RefusalKind::Config,
                );
                continue;
            }
            if let Some(file) = self.open(&path, FileRole::Env, project_dir, Some(Place::Node(at)))
            {
                let source = self.files[file.index as usize].source.clone();
                // Read over the including project's variables (which
                // its `${...}` see first), later files of the list
                // winning.
                let mut lookup = env.clone();
                lookup.merge_under(&own);
                let before = lookup.clone();
                match lookup.read_file_over(&file.path, &source.text) {
                    Ok(()) => {
                        for (name, var) in lookup.iter() {
                            if before.get(name) != Some(var) {
                                own.set(name, var.clone());
                            }
                        }
                    }
                    Err(EnvError { message, range, .. }) => self.refuse(
                        format!("Compose cannot read {}: {message}", file.path.display()),
                        Place::Text {
                            file: file.index,
                            range,
                        },
                        RefusalKind::Config,
                    ),
                }
            }
        }
        own
    }

    /// The files of one `include:` entry, merged as a project of their
    /// own with the included project's variables.
    fn load_included(
        &mut self,
        paths: &[Arc<Node>],
        working_dir: &Path,
        project_dir: &Path,
        included_env: &Environment,
        included: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Model {
        let mut sub = Model::default();
        for path in paths {
            let Some(name) = path.str() else { continue };
            let full = working_dir.join(name);
            let Some(file) = self.open(
                &full,
                FileRole::Included,
                project_dir,
                Some(Place::Node(path.src)),
            ) else {
                continue;
            };
            self.merge_file(
                &file,
                included_env,
                project_dir,
                &mut sub,
                included,
                depth + 1,
            );
        }
        sub
    }

    /// compose-go's `importResources`: each service, volume, network,
    /// secret and config of `imported` is added to `target`; one `target`
    /// already has, and differently, is a conflict refused at `at`.
    pub(super) fn import_at(
        &mut self,
        imported: &Model,
        target: &Arc<Node>,
        definitions: &mut HashMap<String, Vec<Definition>>,
        at: Src,
    ) -> Arc<Node> {
        let Some(source) = &imported.root else {
            return target.clone();
        };
        let mut entries = target.entries().to_vec();
        for section in [
            "services", "volumes", "networks", "secrets", "configs", "models",
        ] {
            let Some(from) = source.entry(section) else {
                continue;
            };
            let position = entries.iter().position(|e| e.key == section);
            let mut to: Vec<Entry> = position
                .map(|i| entries[i].value.entries().to_vec())
                .unwrap_or_default();
            for resource in from.value.entries() {
                match to.iter().find(|e| e.key == resource.key) {
                    Some(existing) if !same_value(&existing.value, &resource.value) => {
                        let conflict = Refusal {
                            message: format!(
                                "{section}.{} conflicts with imported resource",
                                resource.key
                            ),
                            at: Place::Node(existing.key_src),
                            kind: RefusalKind::Config,
                            service: (section == "services").then(|| resource.key.clone()),
                        };
                        if !self.refusals.contains(&conflict) {
                            self.refusals.push(conflict);
                        }
                        let _ = at;
                    }
                    Some(_) => {}
                    None => {
                        to.push(resource.clone());
                        if section == "services"
                            && let Some(defs) = imported.definitions.get(&resource.key)
                        {
                            definitions.insert(resource.key.clone(), defs.clone());
                        }
                    }
                }
            }
            let kind = Kind::Mapping(to);
            let value = Arc::new(Node {
                keys: KeyIndex::of(&kind),
                kind,
                tag: None,
                src: from.value.src,
                entry_key: None,
            });
            match position {
                Some(i) => {
                    entries[i] = Entry {
                        value,
                        ..entries[i].clone()
                    }
                }
                None => entries.push(Entry {
                    key: section.to_string(),
                    key_src: from.key_src,
                    value,
                }),
            }
        }
        Arc::new(target.with_kind(Kind::Mapping(entries)))
    }
}

/// An `include:` entry: its paths, `project_directory` and `env_file`s.
type IncludeEntry = (Vec<Arc<Node>>, Option<String>, Vec<Arc<Node>>);
