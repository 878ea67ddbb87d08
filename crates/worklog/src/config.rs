//! Configuration: the log directory and the optional file-name pattern.

use std::path::{Path, PathBuf};

use crate::core::is_ws;

/// Where the log lives and which names count. Built by [`Config::builder`] from the values the
/// embedder read (the adapter reads `--worklog-dir`/`WORKLOG_DIR` and
/// `--worklog-pattern`/`WORKLOG_FILE_PATTERN`); this crate reads no environment.
///
/// ```
/// use std::path::PathBuf;
/// use shiftwork_worklog::Config;
/// let config = Config::builder().dir("/notes").pattern(r"\.md$").build();
/// assert_eq!(config.dir, Some(PathBuf::from("/notes")));
/// assert_eq!(config.pattern.as_deref(), Some(r"\.md$"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The log directory; `None` makes every call answer `no_dir`.
    pub dir: Option<PathBuf>,
    /// The file-name pattern (Rust `regex` syntax, matched anywhere in the name); `None` admits every
    /// candidate. It is compiled on first use, and an invalid one is reported by each call.
    pub pattern: Option<String>,
}

impl Config {
    /// What is wrong with the pattern, in the regular-expression library's own words (one line), or
    /// `None` when there is no pattern or it compiles. For the operator who set it (a command line's
    /// warning); the tools answer the fixed sentence of [`crate::WorklogError::Pattern`].
    ///
    /// ```
    /// use shiftwork_worklog::Config;
    /// let bad = Config::builder().dir("/logs").pattern("(a").build();
    /// assert_eq!(bad.pattern_problem().as_deref(), Some("unclosed group"));
    /// assert_eq!(Config::builder().dir("/logs").pattern(r"\.md$").build().pattern_problem(), None);
    /// ```
    pub fn pattern_problem(&self) -> Option<String> {
        let source = self.pattern.as_deref()?;
        let error = regex::Regex::new(source).err()?;
        // The library's text shows the pattern with a caret, then `error: <what>`: the last line says it.
        let text = error.to_string();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        Some(last.trim().trim_start_matches("error:").trim().to_owned())
    }

    /// A configuration to build: no directory (every call answers `no_dir`), no pattern, no home.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// Builds a configuration from raw values.
    #[deprecated(
        since = "0.2.0",
        note = "use `Config::builder()` with `.dir(…)`, `.pattern(…)` and `.home(…)`"
    )]
    pub fn from_values(dir: Option<&str>, pattern: Option<&str>, home: Option<&str>) -> Config {
        let mut builder = Config::builder();
        builder.dir = dir.map(PathBuf::from);
        builder.pattern = pattern.map(str::to_owned);
        builder.home = home.map(PathBuf::from);
        builder.build()
    }
}

/// The values a [`Config`] is built from, as the embedder read them ([`Config::builder`]). A blank
/// value (empty or whitespace only) is unset; the directory is used as given, except that a leading
/// `~` that is the whole value or is followed by `/` is replaced by the home directory when one is
/// given and not blank. `~user` is never expanded.
///
/// ```
/// use std::path::PathBuf;
/// use shiftwork_worklog::Config;
/// let c = Config::builder().dir("~/notes").pattern(" ").home("/home/me").build();
/// assert_eq!(c.dir, Some(PathBuf::from("/home/me/notes")));
/// assert_eq!(c.pattern, None);
/// assert_eq!(Config::builder().dir("~").build().dir, Some(PathBuf::from("~")));
/// assert_eq!(Config::builder().dir("\t").build().dir, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    dir: Option<PathBuf>,
    pattern: Option<String>,
    home: Option<PathBuf>,
}

impl ConfigBuilder {
    /// The log directory.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> ConfigBuilder {
        self.dir = Some(dir.into());
        self
    }

    /// The file-name pattern (Rust `regex` syntax, matched anywhere in the name).
    pub fn pattern(mut self, pattern: impl Into<String>) -> ConfigBuilder {
        self.pattern = Some(pattern.into());
        self
    }

    /// The home directory a leading `~` of the directory stands for.
    pub fn home(mut self, home: impl Into<PathBuf>) -> ConfigBuilder {
        self.home = Some(home.into());
        self
    }

    /// The configuration.
    pub fn build(self) -> Config {
        let home = self.home.filter(|h| !is_blank_path(h));
        Config {
            dir: self
                .dir
                .filter(|d| !is_blank_path(d))
                .map(|d| expand_home(d, home.as_deref())),
            pattern: self.pattern.filter(|p| !is_blank(p)),
        }
    }
}

fn is_blank(value: &str) -> bool {
    value.chars().all(is_ws)
}

/// Whether a path is blank text (a path that is not UTF-8 is not blank).
fn is_blank_path(path: &Path) -> bool {
    path.to_str().is_some_and(is_blank)
}

fn expand_home(dir: PathBuf, home: Option<&Path>) -> PathBuf {
    let (Some(home), Some(text)) = (home, dir.to_str()) else {
        return dir;
    };
    match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let mut expanded = home.as_os_str().to_owned();
            expanded.push(rest);
            PathBuf::from(expanded)
        }
        _ => dir,
    }
}
