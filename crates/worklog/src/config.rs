//! Configuration: the log directory and the optional file-name pattern.

use std::path::PathBuf;

use crate::core::is_ws;

/// Where the log lives and which names count. Built by [`Config::from_values`] from the values the
/// embedder read (the adapter reads `--worklog-dir`/`WORKLOG_DIR` and
/// `--worklog-pattern`/`WORKLOG_FILE_PATTERN`); this crate reads no environment.
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
    /// let bad = Config::from_values(Some("/logs"), Some("(a"), None);
    /// assert_eq!(bad.pattern_problem().as_deref(), Some("unclosed group"));
    /// assert_eq!(Config::from_values(Some("/logs"), Some("\\.md$"), None).pattern_problem(), None);
    /// ```
    pub fn pattern_problem(&self) -> Option<String> {
        let source = self.pattern.as_deref()?;
        let error = regex::Regex::new(source).err()?;
        // The library's text shows the pattern with a caret, then `error: <what>`: the last line says it.
        let text = error.to_string();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        Some(last.trim().trim_start_matches("error:").trim().to_owned())
    }

    /// Builds a configuration from raw values: a blank value (empty or whitespace only) is unset; a
    /// directory is used as given, except that a leading `~` that is the whole value or is followed by `/` is replaced by
    /// `home` when that is given and not blank. `~user` is never expanded.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use shiftwork_worklog::Config;
    /// let c = Config::from_values(Some("~/notes"), Some(" "), Some("/home/me"));
    /// assert_eq!(c.dir, Some(PathBuf::from("/home/me/notes")));
    /// assert_eq!(c.pattern, None);
    /// assert_eq!(Config::from_values(Some("~"), None, None).dir, Some(PathBuf::from("~")));
    /// assert_eq!(Config::from_values(Some("\t"), None, None).dir, None);
    /// ```
    pub fn from_values(dir: Option<&str>, pattern: Option<&str>, home: Option<&str>) -> Config {
        let home = home.filter(|h| !is_blank(h));
        Config {
            dir: dir
                .filter(|d| !is_blank(d))
                .map(|d| PathBuf::from(expand_home(d, home))),
            pattern: pattern.filter(|p| !is_blank(p)).map(str::to_owned),
        }
    }
}

fn is_blank(value: &str) -> bool {
    value.chars().all(is_ws)
}

fn expand_home(dir: &str, home: Option<&str>) -> String {
    match (home, dir.strip_prefix('~')) {
        (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => dir.to_owned(),
    }
}
