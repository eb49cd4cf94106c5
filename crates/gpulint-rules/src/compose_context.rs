//! What a compose rule sees: one project, its merged services and their
//! containers, and how it builds fixes in the project's files.

use super::RuleSettings;
use crate::diagnostic::At;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::compose::{ComposeEnv, Definition, Role, Service, Spanned, Src};
use crate::model::container::{ContainerRuntime, Containers};
use crate::project::Project;
use crate::syntax::yaml::{NodeId, Value, Yaml};
use crate::syntax::yaml_edit::{KeyOrder, NewNode, YamlEditor};
use crate::text::TextRange;
use std::rc::Rc;
use std::sync::Arc;

/// What a compose rule sees: one compose project, its merged services and
/// their containers, every file it read (findings and fixes go where a
/// value is written), and the rule settings.
pub struct ComposeContext<'a> {
    pub project: &'a Project,
    pub settings: &'a RuleSettings,
    /// What each service gets at run time: the model `gpulint inspect`
    /// prints, which the rules judge.
    pub containers: Containers,
    /// Format-preserving editors, one per project file that is YAML.
    editors: Vec<Option<YamlEditor<'a>>>,
    /// What the fixes' alias checks have learned, per file.
    aliases: Vec<AliasChecks>,
}

/// For one site in one file, the (service, definition) pairs reaching each
/// node there.
type SiteIndex = foldhash::HashMap<NodeId, Vec<(usize, usize)>>;

/// Memoized checks for one file's fixes. Many services merging one
/// anchor all get the same fix into it; resolving the whole file once per
/// finding made a file of n such services take n² time.
#[derive(Default)]
pub(crate) struct AliasChecks {
    /// The spans (`props_start..end`) of anchored nodes some alias reads.
    aliased: std::cell::OnceCell<Vec<(u32, u32)>>,
    /// What each distinct set of edits changes (`model::resolved::paths_changed_by`).
    #[allow(clippy::type_complexity)]
    answers: std::cell::RefCell<foldhash::HashMap<String, Option<Result<Vec<ModelPath>, String>>>>,
    /// Who reaches a site's node, by (site, node, the paths a fix changes).
    reaching: std::cell::RefCell<foldhash::HashMap<(String, NodeId, String), Rc<Reach>>>,
    /// For each site (`shm_size`, `deploy.resources`), which services reach
    /// each node there: built once per site by locating the site in every
    /// service, so a finding asks a map instead of every service.
    sites: std::cell::RefCell<foldhash::HashMap<String, Rc<SiteIndex>>>,
    /// What each (set of edits, shared `may_change`) leaves undeclared.
    undeclared: std::cell::RefCell<foldhash::HashMap<(String, usize), Option<String>>>,
}

/// The services whose setting at a site (`shm_size`) is one node, directly
/// or through merges and anchors, and the paths a fix there may change.
pub(crate) struct Reach {
    /// Indexes into the project's services, in order.
    services: Vec<usize>,
    names: foldhash::HashSet<String>,
    /// The `changes` of a fix at the site, for every service in `services`.
    paths: Arc<[ModelPath]>,
}

impl<'a> ComposeContext<'a> {
    pub fn new(project: &'a Project, settings: &'a RuleSettings) -> ComposeContext<'a> {
        let editors = project
            .files
            .iter()
            .map(|f| f.yaml().map(|yaml| YamlEditor::new(yaml, &f.source.text)))
            .collect();
        let range = |src: Src| project.range(src);
        ComposeContext {
            project,
            settings,
            containers: Containers::new(crate::model::adapters::compose_runtimes(
                &project.services,
                &range,
                &|file| project.file_name(file),
            )),
            editors,
            aliases: project
                .files
                .iter()
                .map(|_| AliasChecks::default())
                .collect(),
        }
    }

    /// What `service` gets at run time.
    pub fn container(&self, service: &Service) -> &ContainerRuntime {
        self.containers
            .get(&service.name)
            .expect("every service is a container of the model")
    }

    pub fn services(&self) -> &'a [Service] {
        &self.project.services
    }

    /// The syntax of the file a node is in.
    pub fn yaml(&self, file: u32) -> &'a Yaml {
        self.project
            .file(file)
            .yaml()
            .expect("nodes are only in files that parse")
    }

    /// The editor of the file a node is in.
    pub fn editor(&self, file: u32) -> &YamlEditor<'a> {
        self.editors[file as usize]
            .as_ref()
            .expect("nodes are only in files that parse")
    }

    /// The file a node is in.
    pub(crate) fn source_file(&self, file: u32) -> &'a Arc<crate::text::SourceFile> {
        &self.project.file(file).source
    }

    /// Where a node is written.
    pub fn range(&self, src: Src) -> At {
        At {
            range: self.project.range(src),
            file: Some(self.source_file(src.file).clone()),
        }
    }

    /// The source text of a node.
    pub fn source(&self, src: Src) -> &'a str {
        &self.source_file(src.file).text[self.project.range(src).as_range()]
    }

    /// The span of `key: value` for an entry.
    pub(crate) fn entry_range(&self, key: Src, value: Src) -> At {
        let mut at = self.range(value);
        if key.file == value.file {
            at.range = self.project.range(key).cover(at.range);
        }
        at
    }

    /// The span of a setting as written: `key: value`, or just the value
    /// when it has no key (a list item).
    pub(crate) fn setting_range<T>(&self, setting: &Spanned<T>) -> At {
        self.entry_range(setting.key.unwrap_or(setting.node), setting.node)
    }

    /// The span of an environment variable as written: the whole
    /// `KEY: value` entry or `KEY=value` item, or the `env_file` entry
    /// that brings it.
    pub(crate) fn env_range(&self, var: &ComposeEnv) -> At {
        match var.key {
            Some(key) => self.entry_range(key, var.at),
            None => self.range(var.at),
        }
    }

    /// The definition of `service` in file `file` (its last there).
    pub(crate) fn definition_in(&self, service: &Service, file: u32) -> Option<&'a Definition> {
        let service = self.project.service(&service.name)?;
        service
            .definitions
            .iter()
            .rev()
            .find(|d| d.map.file == file)
    }

    /// Whether `node` is written in a service that `service` `extends`,
    /// not in one of its own definitions. Editing it there would change
    /// the base too, and the service's own mapping has nothing to edit:
    /// a fix writes the value in the service itself instead, which
    /// Compose's `extends` merge lets win over the base's.
    ///
    /// Only where the service's own mapping is in the same file: a fix
    /// edits the file its finding is reported in.
    pub(crate) fn is_extended_from_base(&self, service: &Service, node: Src) -> bool {
        if service.map.file != node.file {
            return false;
        }
        let at = self.project.range(node);
        service
            .definitions
            .iter()
            .filter(|d| d.map.file == node.file)
            .map(|d| (d, self.project.range(d.map)))
            .filter(|(_, map)| map.start <= at.start && at.end <= map.end)
            // The innermost: a base's mapping never encloses the service's.
            .min_by_key(|(_, map)| map.len())
            .is_some_and(|(d, _)| d.role == Role::Extended)
    }

    /// Where the setting that decides a container's /dev/shm is written.
    pub(crate) fn decided_at(&self, shm: &crate::model::container::Shm) -> Option<At> {
        Some(At {
            range: shm.at?,
            file: Some(self.source_file(shm.at_file).clone()),
        })
    }

    /// The node an alias names (the node itself otherwise), in its file.
    pub fn resolve(&self, src: Src) -> Src {
        Src {
            file: src.file,
            node: self.yaml(src.file).resolve(src.node),
        }
    }

    /// The name a definition gives the service (a base it extends may
    /// have another).
    pub(crate) fn name_in(&self, definition: &Definition) -> &'a str {
        self.yaml(definition.key.file)
            .str(definition.key.node)
            .unwrap_or_default()
    }

    /// The YAML document of `file` that holds `node`.
    fn document_of(&self, src: Src) -> usize {
        let yaml = self.yaml(src.file);
        yaml.documents
            .iter()
            .rposition(|d| d.root.is_some_and(|r| r <= src.node))
            .unwrap_or(0)
    }
}

/// Building fixes. A fix edits one file: the one its finding is in. When
/// an edit lands in an anchor (the service is an alias, or the setting
/// comes from a `<<` merge) the title says so, and an anchor other
/// services share makes the fix unsafe, since it changes them too; so does
/// an edit in a file other projects may read (an extended base, an
/// included file).
impl<'a> ComposeContext<'a> {
    /// Builds a fix's edits in two steps: `first`, then whatever `then` makes
    /// of the re-parsed text, given the editor and the service's mapping
    /// there (in the home file). For fixes whose second edit depends on the
    /// first (remove a key, then insert where the remaining keys say).
    /// Returns both edits in the original text's offsets, so unchanged text
    /// keeps its identity, or one merged edit when the second touches the
    /// first's output.
    pub(crate) fn chain_edits(
        &self,
        service: &Service,
        file: u32,
        first: Edit,
        then: impl FnOnce(&YamlEditor, NodeId) -> Option<Edit>,
    ) -> Option<Vec<Edit>> {
        let definition = self.definition_in(service, file)?;
        let text = &self.source_file(file).text;
        let step1 = crate::fix::apply_edits(text, std::slice::from_ref(&first));
        let yaml1 = Yaml::parse(&step1).ok()?;
        let root1 = yaml1
            .documents
            .get(self.document_of(definition.map))?
            .root?;
        let editor1 = YamlEditor::new(&yaml1, &step1);
        let service1 = editor1
            .locate(root1, &["services", self.name_in(definition)])?
            .node;
        let second = then(&editor1, service1)?;
        let (written_start, written_end) = (
            first.range.start,
            first.range.start + first.content.len() as u32,
        );
        let shift = |p: u32| p + (first.range.end - first.range.start) - first.content.len() as u32;
        let (s, e) = (second.range.start, second.range.end);
        if e < written_start || (e == written_start && !first.content.is_empty()) {
            return Some(vec![second, first]);
        }
        if s >= written_end {
            let moved = Edit {
                range: TextRange {
                    start: shift(s),
                    end: shift(e),
                },
                content: second.content,
            };
            return Some(vec![first, moved]);
        }
        let step2 = crate::fix::apply_edits(&step1, &[second]);
        Some(vec![crate::syntax::yaml_edit::combine(text, &step2)])
    }

    /// The merged model's path of a setting of `service`.
    pub(crate) fn service_path(&self, service: &Service, relative: &[&str]) -> ModelPath {
        ModelPath::new(
            ["services", service.name.as_str()]
                .into_iter()
                .chain(relative.iter().copied()),
        )
    }

    /// A fix that creates `path` (and missing parents) under the service's
    /// home definition. `None` when a later definition removes `path` again
    /// (`!reset`): the fix would be undone.
    pub fn insert_fix(
        &self,
        service: &Service,
        path: &[&str],
        leaf: NewNode,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        self.insert_fix_in(service, service.map.file, path, leaf, title, applicability)
    }

    /// [`Self::insert_fix`] in the service's definition in `file`.
    pub(crate) fn insert_fix_in(
        &self,
        service: &Service,
        file: u32,
        path: &[&str],
        leaf: NewNode,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        if service.reset_of(&path.join(".")).is_some() {
            return None;
        }
        let definition = self.definition_in(service, file)?;
        let plan = self
            .editor(file)
            .insert_path(definition.map.node, path, leaf, KeyOrder::ComposeService)
            .ok()?;
        let site: Vec<&str> = plan.target_path.iter().map(String::as_str).collect();
        Some(self.finish_fix(
            service,
            definition,
            title.into(),
            applicability,
            vec![plan.edit],
            &[path],
            plan.through_anchor,
            &site,
            plan.target,
        ))
    }

    /// A fix whose edits change the node at `site` (relative to the
    /// service's definition in the file `at` is in, which the edits are
    /// in); `changes` are the relative paths it means to change.
    #[allow(clippy::too_many_arguments)]
    pub fn edit_fix(
        &self,
        service: &Service,
        at: Src,
        site: &[&str],
        edits: Vec<Edit>,
        changes: &[&[&str]],
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        let definition = self.definition_in(service, at.file)?;
        let located = self.editor(at.file).locate(definition.map.node, site)?;
        Some(self.finish_fix(
            service,
            definition,
            title.into(),
            applicability,
            edits,
            changes,
            located.through_anchor,
            site,
            located.node,
        ))
    }

    /// The `others` services besides `service` that `reach` holds, as a
    /// title names them: the first few, then how many more.
    fn list_others(&self, reach: &Reach, service: &Service, others: usize) -> String {
        /// Services named in a title; the rest are counted.
        const NAMED: usize = 3;
        let mut names: Vec<String> = reach
            .services
            .iter()
            .map(|&i| &self.services()[i])
            .filter(|s| s.name != service.name)
            .take(NAMED)
            .map(|s| format!("`{}`", s.name))
            .collect();
        if others > NAMED {
            names.push(format!("{} more", others - NAMED));
        }
        match names.len() {
            0 | 1 => names.concat(),
            n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_fix(
        &self,
        service: &Service,
        definition: &Definition,
        mut title: String,
        mut applicability: Applicability,
        edits: Vec<Edit>,
        changes: &[&[&str]],
        through_anchor: Option<String>,
        site: &[&str],
        site_node: NodeId,
    ) -> Fix {
        let file = definition.map.file;
        // Other services reach the edited node through the same anchor, or
        // merge the edited mapping into their own. Every fix of the many
        // services merging one anchor edits the same node: which services
        // reach it, and the paths they may change, are worked out once per
        // node and shared, so a fan of n services costs O(n), not O(n²).
        let reach = self.reach(file, site, site_node, changes);
        let own = reach.names.contains(service.name.as_str());
        let others = reach.services.len() - usize::from(own);
        let listed = self.list_others(&reach, service, others);
        match (&through_anchor, others == 0) {
            (Some(anchor), true) => title.push_str(&format!(" (in anchor `{anchor}`)")),
            (Some(anchor), false) => title.push_str(&format!(
                " (in anchor `{anchor}`, which also changes {listed})"
            )),
            (None, false) => title.push_str(&format!(
                " (also changes {listed}, which merge{} this service)",
                if others == 1 { "s" } else { "" }
            )),
            (None, true) => {}
        }
        if others > 0 {
            applicability = applicability.min(Applicability::Unsafe);
        }
        // A file this project extends or includes may be another project's
        // too: changing it there changes that project.
        if definition.role != Role::Project {
            let shown = self
                .source_file(file)
                .path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let how = if definition.role == Role::Extended {
                "extends"
            } else {
                "includes"
            };
            title.push_str(&format!(
                " (in `{shown}`, which this project {how}: other projects may read it too)"
            ));
            applicability = applicability.min(Applicability::Unsafe);
        }
        // Paths in the edited file, where the definition may name the
        // service otherwise (a base it extends).
        let name = self.name_in(definition);
        let own_paths: Vec<ModelPath> = changes
            .iter()
            .map(|c| ModelPath::new(["services", name].into_iter().chain(c.iter().copied())))
            .collect();
        let document = self.document_of(definition.map);
        let mut fix = Fix::new(title, applicability, edits, own_paths).in_document(document);
        if others > 0 {
            fix.may_change = reach.paths.clone();
        }
        // An alias elsewhere may read the anchored node the fix edits
        // (`mem_limit: *sz` reading `shm_size: &sz 1gb`), and would change
        // with it; verification would refuse such a fix, so it is only shown.
        if self.edits_reach_aliased_anchor(file, &fix.edits)
            && let Some(reader) = self.undeclared_change(file, &fix, own)
        {
            fix.applicability = Applicability::DisplayOnly;
            fix.title
                .push_str(&format!(" (not applied automatically: {reader})"));
        } else if self.refused_as_written(service) {
            // Compose refuses the service as written (PROJ001): what it
            // would run is unknown, and a fix that merges into the refused
            // value (a `devices` mapping, `resources: []`) may not load
            // either. The fix waits for the refusal to be fixed.
            fix.applicability = Applicability::DisplayOnly;
            fix.title.push_str(
                " (not applied automatically: Compose refuses this service as written, see PROJ001)",
            );
        }
        fix
    }

    /// Whether Compose refuses `service` for a mistake in its config (not a
    /// missing file, not a variable the shell may set, not one a rule with
    /// its own fix reports).
    fn refused_as_written(&self, service: &Service) -> bool {
        self.project.refused_by_schema.contains(&service.name)
            || self.project.refusals.iter().any(|r| {
                r.kind == crate::project::RefusalKind::Config
                    && r.service.as_deref() == Some(service.name.as_str())
            })
    }

    /// Whether an edit falls in or at the edge of an anchored node that some
    /// alias reads: the only way a fix can change more than where it writes.
    fn edits_reach_aliased_anchor(&self, file: u32, edits: &[Edit]) -> bool {
        let aliased = self.aliases[file as usize].aliased.get_or_init(|| {
            let yaml = self.yaml(file);
            let mut spans: Vec<(u32, u32)> = yaml
                .nodes
                .iter()
                .filter_map(|n| match n.value {
                    Value::Alias(Some(target)) => {
                        let anchored = yaml.node(target);
                        Some((anchored.props_start, anchored.range.end))
                    }
                    _ => None,
                })
                .collect();
            spans.sort_unstable();
            spans.dedup();
            spans
        });
        aliased.iter().any(|&(start, end)| {
            edits
                .iter()
                .any(|e| e.range.start <= end && e.range.end >= start)
        })
    }

    /// Which services reach `node` at `site` in `file`, worked out once per
    /// node.
    fn reach(&self, file: u32, site: &[&str], node: NodeId, changes: &[&[&str]]) -> Rc<Reach> {
        let changes_key = changes
            .iter()
            .map(|c| c.join("."))
            .collect::<Vec<_>>()
            .join(",");
        let key = (site.join("."), node, changes_key);
        let mut memo = self.aliases[file as usize].reaching.borrow_mut();
        memo.entry(key)
            .or_insert_with(|| {
                // Each service with a definition in this file whose setting
                // at the site is this node, and its name there.
                let reaching = self
                    .site_index(file, site)
                    .get(&self.yaml(file).resolve(node))
                    .cloned()
                    .unwrap_or_default();
                let services: Vec<usize> = reaching.iter().map(|&(i, _)| i).collect();
                let names_here: Vec<&str> = reaching
                    .iter()
                    .map(|&(i, d)| self.name_in(&self.services()[i].definitions[d]))
                    .collect();
                let names = services
                    .iter()
                    .map(|&i| self.services()[i].name.clone())
                    .collect();
                let paths = names_here
                    .iter()
                    .flat_map(|name| changes.iter().map(move |c| (name, c)))
                    .map(|(name, c)| {
                        ModelPath::new(["services", name].into_iter().chain(c.iter().copied()))
                    })
                    .collect();
                Rc::new(Reach {
                    services,
                    names,
                    paths,
                })
            })
            .clone()
    }

    /// Which services reach each node at `site` in `file`, as (service
    /// index, index of its definition in `file`): those whose `site` there
    /// is that node or merges it in. Built once per (file, site) by locating
    /// the site in every service, so a finding asks a map instead of every
    /// service; services are listed in project order.
    fn site_index(&self, file: u32, site: &[&str]) -> Rc<SiteIndex> {
        let mut sites = self.aliases[file as usize].sites.borrow_mut();
        sites
            .entry(site.join("."))
            .or_insert_with(|| {
                let yaml = self.yaml(file);
                let editor = self.editor(file);
                let mut index = SiteIndex::default();
                for (i, service) in self.services().iter().enumerate() {
                    let Some((d, located)) =
                        service.definitions.iter().enumerate().find_map(|(d, def)| {
                            (def.map.file == file)
                                .then(|| editor.locate(def.map.node, site))
                                .flatten()
                                .map(|l| (d, l))
                        })
                    else {
                        continue;
                    };
                    for node in yaml.merged_into(located.node) {
                        index.entry(node).or_default().push((i, d));
                    }
                }
                Rc::new(index)
            })
            .clone()
    }

    /// `model::resolved::undeclared_among`, with what the edits change worked
    /// out once per distinct set of edits.
    fn undeclared_change(&self, file: u32, fix: &Fix, may_change_has_own: bool) -> Option<String> {
        let mut edits_key = String::new();
        for e in &fix.edits {
            edits_key.push_str(&format!(
                "{}:{}:{:?};",
                e.range.start, e.range.end, e.content
            ));
        }
        let checks = &self.aliases[file as usize];
        let mut answers = checks.answers.borrow_mut();
        let text = &self.source_file(file).text;
        let changed = answers.entry(edits_key.clone()).or_insert_with(|| {
            crate::model::resolved::paths_changed_by(text, fix.document, &fix.edits)
        });
        // The fixes of a fan share their edits and their `may_change`, which
        // holds their own `changes` too (`may_change_has_own`): one answer
        // serves them all.
        if !may_change_has_own || fix.may_change.is_empty() {
            return crate::model::resolved::undeclared_among(changed.as_ref()?, fix);
        }
        let key = (edits_key, fix.may_change.as_ptr() as usize);
        checks
            .undeclared
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| crate::model::resolved::undeclared_among(changed.as_ref()?, fix))
            .clone()
    }
}
