//! `gpulint.toml`: rule selection, severities, per-path ignores and thresholds.
//!
//! The nearest `gpulint.toml` above a file applies to it (or the one given
//! with `--config`). Globs are relative to the directory holding the config.

use crate::diagnostic::Severity;
use crate::model::size::{SizeValue, parse_compose_size};
use crate::rules::{RULES, RuleCode, RuleSettings, all_meta};
use crate::vfs::glob_set;
use globset::GlobSet;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) const CONFIG_FILE_NAME: &str = "gpulint.toml";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ConfigFile {
    select: Option<Vec<String>>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    severity: BTreeMap<String, Severity>,
    #[serde(default)]
    per_file_ignores: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    shm: ShmConfig,
    #[serde(default)]
    compose: ComposeConfig,
    #[serde(default)]
    scripts: ScriptsConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ScriptsConfig {
    /// Look for `docker run` lines in the code blocks of walked Markdown files.
    #[serde(default)]
    markdown: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ComposeConfig {
    /// Files merged like `docker compose -f a -f b`, relative to the config.
    #[serde(default)]
    projects: Vec<Vec<String>>,
    /// Globs of compose files another tool merges with its own base.
    #[serde(default)]
    fragments: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ShmConfig {
    min_size: Option<String>,
    min_size_multi_gpu: Option<String>,
    dataloader_workers: Option<u64>,
    fix_size: Option<String>,
}

/// A configuration ready to use.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from; `None` for the built-in defaults.
    pub path: Option<PathBuf>,
    /// Directory globs are relative to.
    pub root: PathBuf,
    /// Indexed like [`RULES`].
    enabled: Vec<bool>,
    severity: BTreeMap<RuleCode, Severity>,
    include: GlobSet,
    exclude: Gitignore,
    per_file_ignores: Vec<(GlobSet, Vec<String>)>,
    pub rule_settings: RuleSettings,
    /// `[compose] projects`: sets of compose files merged in this order
    /// (paths joined to `root`, canonical where the file exists).
    pub compose_projects: Vec<Vec<PathBuf>>,
    /// `[scripts] markdown`: walked Markdown files are linted too (named
    /// ones always are).
    pub lint_markdown: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a selector (`ALL`, a code, or a code prefix such as `SHM`) matches a code.
fn selector_matches(selector: &str, code: RuleCode) -> bool {
    selector.eq_ignore_ascii_case("ALL")
        || code.as_str().starts_with(&selector.to_ascii_uppercase())
}

pub fn validate_selector(selector: &str) -> Result<(), String> {
    if RULES.iter().any(|r| selector_matches(selector, r.code)) {
        Ok(())
    } else {
        Err(format!(
            "`{selector}` matches no rule code or prefix (see `gpulint rule --all`)"
        ))
    }
}

/// `exclude` patterns read as `.gitignore` lines relative to the config's
/// directory, as ruff reads them: a bare name (`vendor`) matches a file or
/// directory at any depth, a pattern with a `/` (`vendor/**`, `/build`) is
/// anchored there, and `!` re-includes.
fn exclude_patterns(root: &Path, patterns: &[String]) -> Result<Gitignore, String> {
    let mut builder = GitignoreBuilder::new(root);
    for p in patterns {
        builder
            .add_line(None, p)
            .map_err(|e| format!("exclude: bad pattern `{p}`: {e}"))?;
    }
    builder.build().map_err(|e| format!("exclude: {e}"))
}

fn size_setting(value: &Option<String>, key: &str, default: u64) -> Result<u64, String> {
    match value {
        None => Ok(default),
        Some(text) => match parse_compose_size(text) {
            SizeValue::Bytes { bytes, .. } if bytes > 0 => Ok(bytes),
            _ => Err(format!(
                "[shm] {key} = \"{text}\" is not a size such as \"2gb\""
            )),
        },
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::from_file(ConfigFile::default(), None, PathBuf::from("."))
            .expect("defaults are valid")
    }
}

/// A config file's path as its errors name it: relative to the working
/// directory when it lies under it. Configurations are found by absolute
/// path (each directory's ancestors), which made every error name
/// `/home/me/project/gpulint.toml` for the `gpulint.toml` beside the user.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            let cwd = crate::vfs::normalize(&cwd);
            crate::vfs::normalize(path)
                .strip_prefix(&cwd)
                .ok()
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| p.display().to_string())
        })
        .unwrap_or_else(|| path.display().to_string())
}

impl Config {
    /// Reads and validates a config file from disk.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_through(&crate::vfs::Disk, path)
    }

    /// Reads and validates a config file through `system` (an editor's
    /// unsaved buffer of it, for the language server).
    pub(crate) fn load_through(
        system: &dyn crate::vfs::System,
        path: &Path,
    ) -> Result<Config, ConfigError> {
        // The disk's reader refuses a FIFO instead of waiting on it forever.
        let (text, _) = system
            .read(path)
            .map_err(|(e, _)| ConfigError(format!("{}: {}", shown(path), e.message)))?;
        let file: ConfigFile = toml::from_str(&text).map_err(|e| {
            let location = e
                .span()
                .map(|s| {
                    let index = crate::text::LineIndex::new(&text);
                    let lc = index.line_col(s.start, &text);
                    format!(":{}:{}", lc.line, lc.column)
                })
                .unwrap_or_default();
            ConfigError(format!("{}{location}: {}", shown(path), e.message()))
        })?;
        let root = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let root = system.canonicalize(&root).unwrap_or(root);
        Config::from_file(file, Some(path.to_path_buf()), root)
            .map_err(|e| ConfigError(format!("{}: {e}", shown(path))))
    }

    fn from_file(file: ConfigFile, path: Option<PathBuf>, root: PathBuf) -> Result<Config, String> {
        let select = file.select.unwrap_or_else(|| vec!["ALL".to_string()]);
        for s in select.iter().chain(&file.ignore) {
            validate_selector(s)?;
        }
        let mut severity = BTreeMap::new();
        for (code, sev) in file.severity {
            let Ok(code) = code.parse::<RuleCode>() else {
                return Err(format!("[severity] names unknown rule `{code}`"));
            };
            severity.insert(code, sev);
        }
        let mut per_file_ignores = Vec::new();
        for (pattern, codes) in &file.per_file_ignores {
            for c in codes {
                validate_selector(c)?;
            }
            per_file_ignores.push((
                glob_set(std::slice::from_ref(pattern), "per-file-ignores")?,
                codes.clone(),
            ));
        }
        let defaults = RuleSettings::default();
        let rule_settings = RuleSettings {
            min_shm: size_setting(&file.shm.min_size, "min-size", defaults.min_shm)?,
            min_shm_multi_gpu: match &file.shm.min_size_multi_gpu {
                Some(_) => Some(size_setting(
                    &file.shm.min_size_multi_gpu,
                    "min-size-multi-gpu",
                    0,
                )?),
                None => defaults.min_shm_multi_gpu,
            },
            dataloader_workers: file
                .shm
                .dataloader_workers
                .unwrap_or(defaults.dataloader_workers),
            fix_shm_size: match &file.shm.fix_size {
                Some(s) => {
                    size_setting(&Some(s.clone()), "fix-size", 0)?;
                    s.clone()
                }
                None => defaults.fix_shm_size,
            },
            compose_fragments: match file.compose.fragments.is_empty() {
                true => None,
                false => {
                    glob_set(&file.compose.fragments, "[compose] fragments")?;
                    Some(crate::rules::settings::ComposeFragments {
                        root: root.clone(),
                        patterns: file.compose.fragments.clone(),
                    })
                }
            },
        };
        // The size fixes write must satisfy the checks, or a fix would trade
        // one finding for another.
        let fix_bytes = size_setting(&Some(rule_settings.fix_shm_size.clone()), "fix-size", 0)?;
        let needed = rule_settings
            .min_shm
            .max(rule_settings.min_shm_multi_gpu.unwrap_or(0));
        if fix_bytes < needed {
            return Err(format!(
                "[shm] fix-size = \"{}\" is below the {} that min-size / min-size-multi-gpu require; fixes would still be reported",
                rule_settings.fix_shm_size,
                crate::model::size::HumanBytes(needed)
            ));
        }
        let compose_projects = file
            .compose
            .projects
            .iter()
            .map(|set| {
                set.iter()
                    .map(|f| {
                        let joined = root.join(f);
                        std::fs::canonicalize(&joined).unwrap_or(joined)
                    })
                    .collect()
            })
            .collect();
        let exclude = exclude_patterns(&root, &file.exclude)?;
        let mut config = Config {
            path,
            root,
            enabled: Vec::new(),
            severity,
            include: glob_set(&file.include, "include")?,
            exclude,
            per_file_ignores,
            rule_settings,
            compose_projects,
            lint_markdown: file.scripts.markdown,
        };
        config.set_selection(&select, &file.ignore);
        Ok(config)
    }

    /// Applies `select` then `ignore` (the more specific selector wins, as in
    /// ruff). `ALL` selects every rule except the opt-in ones.
    pub fn set_selection(&mut self, select: &[String], ignore: &[String]) {
        self.enabled = RULES
            .iter()
            .zip(all_meta())
            .map(|(r, meta)| {
                let best = |list: &[String]| {
                    list.iter()
                        .filter(|s| selector_matches(s, r.code))
                        // Opt-in rules are selected by their code or a prefix only.
                        .filter(|s| !(meta.opt_in && s.eq_ignore_ascii_case("ALL")))
                        .map(|s| {
                            if s.eq_ignore_ascii_case("ALL") {
                                0
                            } else {
                                s.len()
                            }
                        })
                        .max()
                };
                match (best(select), best(ignore)) {
                    (Some(s), Some(i)) => s > i,
                    (Some(_), None) => true,
                    _ => false,
                }
            })
            .collect();
    }

    pub fn is_enabled(&self, code: RuleCode) -> bool {
        self.enabled[code.index()]
    }

    /// Whether each rule is enabled, in [`RULES`] order.
    pub fn enabled(&self) -> &[bool] {
        &self.enabled
    }

    pub fn severity_override(&self, code: RuleCode) -> Option<Severity> {
        self.severity.get(&code).copied()
    }

    /// `path` relative to the config's directory, for glob matching. The
    /// root is canonical; the path is made absolute lexically first and only
    /// canonicalized (a syscall) when that does not reach the root.
    fn relative(&self, path: &Path) -> PathBuf {
        crate::vfs::relative_to(&self.root, path)
    }

    /// Whether a discovered (not explicitly named) file is excluded.
    pub(crate) fn is_excluded(&self, path: &Path) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        let relative = self.relative(path);
        // A file outside the config's directory is not its to exclude.
        !relative.has_root()
            && self
                .exclude
                .matched_path_or_any_parents(&relative, false)
                .is_ignore()
    }

    /// Extra files to lint as compose files.
    pub(crate) fn is_included(&self, path: &Path) -> bool {
        !self.include.is_empty() && self.include.is_match(self.relative(path))
    }

    /// Whether `per-file-ignores` switches `code` off for `path`.
    pub(crate) fn is_ignored_for(&self, path: &Path, code: RuleCode) -> bool {
        if self.per_file_ignores.is_empty() {
            return false;
        }
        let rel = self.relative(path);
        self.per_file_ignores.iter().any(|(globs, codes)| {
            globs.is_match(&rel) && codes.iter().any(|c| selector_matches(c, code))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<Config, String> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| e.to_string())?;
        Config::from_file(file, None, PathBuf::from("/repo"))
    }

    #[test]
    fn select_ignore_and_prefixes() {
        let c = config("select = [\"SHM\"]\nignore = [\"SHM002\"]\n").unwrap();
        assert!(c.is_enabled(RuleCode::SHM001));
        assert!(!c.is_enabled(RuleCode::SHM002));
        assert!(!c.is_enabled(RuleCode::GPU001));
        let c = config("ignore = [\"SHM\"]\nselect = [\"ALL\", \"SHM003\"]\n").unwrap();
        assert!(
            c.is_enabled(RuleCode::SHM003)
                && !c.is_enabled(RuleCode::SHM001)
                && c.is_enabled(RuleCode::GPU001)
        );
    }

    #[test]
    fn opt_in_rules_need_their_code_or_prefix() {
        assert!(!Config::default().is_enabled(RuleCode::K8S006));
        assert!(Config::default().is_enabled(RuleCode::K8S004));
        let c = config("select = [\"ALL\", \"K8S006\"]\n").unwrap();
        assert!(c.is_enabled(RuleCode::K8S006) && c.is_enabled(RuleCode::K8S004));
        let c = config("select = [\"K8S\"]\n").unwrap();
        assert!(c.is_enabled(RuleCode::K8S006) && !c.is_enabled(RuleCode::SHM001));
    }

    #[test]
    fn bad_configs_are_errors() {
        assert!(
            config("select = [\"XYZ\"]")
                .unwrap_err()
                .contains("matches no rule")
        );
        assert!(
            config("[shm]\nmin-size = \"lots\"")
                .unwrap_err()
                .contains("min-size")
        );
        assert!(config("unknown-key = 1").is_err());
        assert!(
            config("[shm]\nfix-size = \"256mb\"")
                .unwrap_err()
                .contains("fix-size")
        );
        // 2^63 bytes and more: negative once Compose reads them.
        for size in ["17179869184gb", "8589934592gb"] {
            let error = config(&format!("[shm]\nfix-size = \"{size}\"")).unwrap_err();
            assert!(
                error.contains("fix-size") && error.contains(size),
                "{error}"
            );
        }
        assert!(
            config("[severity]\nNOPE001 = \"error\"")
                .unwrap_err()
                .contains("unknown rule")
        );
    }

    #[test]
    fn exclude_matches_like_gitignore() {
        let c = config(
            "exclude = [\"vendor\", \"/build\", \"gen/**\", \"*.tmp.yml\", \"!keep.tmp.yml\"]\n",
        )
        .unwrap();
        let excluded = |p: &str| c.is_excluded(Path::new(p));
        // A bare name, at any depth, and everything under it.
        assert!(excluded("/repo/vendor/compose.yml"));
        assert!(excluded("/repo/a/b/vendor/x/compose.yml"));
        assert!(!excluded("/repo/vendors/compose.yml"));
        // A leading or inner `/` anchors to the config's directory.
        assert!(excluded("/repo/build/compose.yml"));
        assert!(!excluded("/repo/a/build/compose.yml"));
        assert!(excluded("/repo/gen/deep/compose.yml"));
        assert!(!excluded("/repo/a/gen/compose.yml"));
        assert!(excluded("/repo/a/x.tmp.yml"));
        assert!(!excluded("/repo/a/keep.tmp.yml"));
        // Outside the config's directory nothing is excluded.
        assert!(!excluded("/elsewhere/vendor/compose.yml"));
    }

    #[test]
    fn per_file_ignores_and_thresholds() {
        let c =
            config("[per-file-ignores]\n\"legacy/**\" = [\"SHM\"]\n[shm]\nmin-size = \"1gb\"\n")
                .unwrap();
        assert!(c.is_ignored_for(Path::new("/repo/legacy/a/compose.yml"), RuleCode::SHM001));
        assert!(!c.is_ignored_for(Path::new("/repo/new/compose.yml"), RuleCode::SHM001));
        assert_eq!(c.rule_settings.min_shm, crate::model::size::GIB);
        assert_eq!(c.rule_settings.dataloader_workers, 8);
        // The old keys keep working beside the new one.
        let c = config("[shm]\nmin-size-multi-gpu = \"4gb\"\ndataloader-workers = 2\n").unwrap();
        assert_eq!(
            c.rule_settings.min_shm_multi_gpu,
            Some(4 * crate::model::size::GIB)
        );
        assert_eq!(c.rule_settings.shm_policy().workers, 2);
    }
}
