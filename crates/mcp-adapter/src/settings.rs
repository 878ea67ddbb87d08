//! Configuration: the flags each tool group declares and their environment equivalents (MC-3).

use std::collections::BTreeMap;

/// One configuration setting a group declares: a command-line flag and, optionally, the environment
/// variable used when the flag is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The flag, with its dashes (`--worklog-dir`).
    pub flag: &'static str,
    /// The environment variable read when the flag is absent.
    pub env: Option<&'static str>,
    /// Whether the flag takes a value (`--flag VALUE` or `--flag=VALUE`) or is a switch.
    pub takes_value: bool,
    /// One line for `--help`.
    pub help: &'static str,
}

/// Settings as given on the command line, with the environment read once at start-up (MC-3, WL-13).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    flags: BTreeMap<&'static str, String>,
    env: BTreeMap<String, String>,
}

impl Settings {
    /// Settings from explicit flag values and an environment snapshot.
    pub fn new(
        flags: impl IntoIterator<Item = (&'static str, String)>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        Settings {
            flags: flags.into_iter().collect(),
            env: env.into_iter().collect(),
        }
    }

    /// Settings from flag values and the process environment.
    pub fn from_process(flags: impl IntoIterator<Item = (&'static str, String)>) -> Self {
        Self::new(
            flags,
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// Sets or replaces a flag's value (the demo and tests use this).
    pub fn set_flag(&mut self, setting: &Setting, value: impl Into<String>) {
        self.flags.insert(setting.flag, value.into());
    }

    /// The value of a setting: the flag when it was given, else its environment variable. A flag that
    /// is present wins even when blank; a blank value (empty or whitespace only) counts as unset.
    pub fn value(&self, setting: &Setting) -> Option<&str> {
        let raw = match self.flags.get(setting.flag) {
            Some(v) => Some(v.as_str()),
            None => setting
                .env
                .and_then(|name| self.env.get(name))
                .map(String::as_str),
        };
        raw.filter(|v| !v.trim().is_empty())
    }

    /// The value given on the command line for `setting`'s flag (even when blank), ignoring the
    /// environment.
    pub fn flag(&self, setting: &Setting) -> Option<&str> {
        self.flags.get(setting.flag).map(String::as_str)
    }

    /// Whether a switch is on: the flag was given, or its variable is `1` or `true` (any case).
    pub fn switch(&self, setting: &Setting) -> bool {
        if self.flags.contains_key(setting.flag) {
            return true;
        }
        setting
            .env
            .and_then(|name| self.env.get(name))
            .is_some_and(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
    }

    /// An environment variable as read at start-up (blank counts as unset).
    pub fn env(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}
