//! Configuration: the flags each tool group declares and their environment equivalents; a flag
//! given on the command line wins over its variable.

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

/// Settings as given on the command line, with the environment read once at start-up.
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

    /// Whether a switch is on: the flag was given, or its variable is on (`1`, `true`, `yes`, `on`, any
    /// case). A variable that is neither on nor off counts as off here; [`Settings::check_switches`]
    /// refuses it at start-up.
    pub fn switch(&self, setting: &Setting) -> bool {
        if self.flags.contains_key(setting.flag) {
            return true;
        }
        self.switch_variable(setting).is_ok_and(|on| on == Some(true))
    }

    /// Refuses a switch of `settings` whose environment variable is set (not blank) to anything but
    /// `1/true/yes/on` or `0/false/no/off` (any case): the error names the variable and the value.
    /// A flag given on the command line is not judged by its variable.
    ///
    /// ```
    /// use shiftwork_mcp::settings::{Setting, Settings};
    ///
    /// const QUIET: Setting = Setting { flag: "--quiet", env: Some("QUIET"), takes_value: false, help: "" };
    /// let env = |v: &str| Settings::new(Vec::new(), vec![(String::from("QUIET"), v.to_owned())]);
    /// assert!(env(" Yes ").switch(&QUIET) && !env("off").switch(&QUIET) && !env("").switch(&QUIET));
    /// assert_eq!(
    ///     env("maybe").check_switches(&[QUIET]).unwrap_err(),
    ///     "QUIET must be one of 1, true, yes, on (on) or 0, false, no, off (off), any case; got 'maybe'"
    /// );
    /// ```
    pub fn check_switches(&self, settings: &[Setting]) -> Result<(), String> {
        for setting in settings.iter().filter(|s| !s.takes_value) {
            if self.flags.contains_key(setting.flag) {
                continue;
            }
            self.switch_variable(setting)?;
        }
        Ok(())
    }

    /// The switch's variable: `None` when unset or blank, else on or off; the error names it.
    fn switch_variable(&self, setting: &Setting) -> Result<Option<bool>, String> {
        let Some(name) = setting.env else {
            return Ok(None);
        };
        let Some(value) = self.env(name) else {
            return Ok(None);
        };
        let word = value.trim();
        let is = |words: [&str; 4]| words.iter().any(|w| word.eq_ignore_ascii_case(w));
        if is(["1", "true", "yes", "on"]) {
            Ok(Some(true))
        } else if is(["0", "false", "no", "off"]) {
            Ok(Some(false))
        } else {
            Err(format!(
                "{name} must be one of 1, true, yes, on (on) or 0, false, no, off (off), any case; got '{}'",
                shiftwork_seams::echo::clip(value, 100)
            ))
        }
    }

    /// An environment variable as read at start-up (blank counts as unset).
    pub fn env(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

/// Reads a file an option or argument names (a certificate, a key, a token file, a key set, a plan,
/// `call @FILE`) as the stores read theirs: opened without blocking (a FIFO never holds start-up),
/// refused unless it is a regular file (`/dev/zero`, a socket, a directory), and read to at most
/// `limit` bytes, so memory never depends on what the path leads to. The error is the reason, for a
/// sentence that names the file: `it is larger than <limit> bytes`, `Not a regular file`, or the
/// operating system's text.
///
/// ```
/// use shiftwork_mcp::settings::read_named_file;
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("cert.pem");
/// std::fs::write(&file, b"12345").unwrap();
/// assert_eq!(read_named_file(&file, 5).unwrap(), b"12345");
/// assert_eq!(read_named_file(&file, 4).unwrap_err(), "it is larger than 4 bytes");
/// assert_eq!(read_named_file(std::path::Path::new("/dev/zero"), 4).unwrap_err(), "Not a regular file");
/// assert_eq!(read_named_file(dir.path(), 4).unwrap_err(), "Is a directory");
/// ```
pub fn read_named_file(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, String> {
    use shiftwork_seams::Fs as _;
    shiftwork_seams::OsFs.read_limited(path, limit).map_err(|e| {
        if shiftwork_seams::is_file_too_large(&e) {
            format!("it is larger than {limit} bytes")
        } else {
            shiftwork_seams::os_reason(&e)
        }
    })
}
