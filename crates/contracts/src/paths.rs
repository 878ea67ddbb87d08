//! The pure path rules: normalization of a caller's path, and the sensitive-file test.
//!
//! ```
//! use shiftwork_contracts::paths::{normalize, sensitive, PathReason};
//! assert_eq!(normalize("./src//lib.rs", "/w", "/w").unwrap(), "src/lib.rs");
//! assert_eq!(normalize("/w/src/lib.rs", "/w", "/w").unwrap(), "src/lib.rs");
//! assert_eq!(normalize("src/../README.md", "/w", "/w"), Err(PathReason::PathEscape));
//! assert_eq!(sensitive(".git/config"), Some(".git"));
//! assert_eq!(sensitive("certs/server.PEM"), Some("*.pem"));
//! assert_eq!(sensitive(".env.example"), None);
//! ```

use serde::Serialize;

use crate::limits::MAX_PATH_BYTES;

/// Why a path (or a list of paths) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PathReason {
    /// More than 32 paths.
    TooMany,
    /// Empty, NUL, nothing left, or longer than 512 bytes.
    InvalidPath,
    /// Outside the root, or a `..` component.
    PathEscape,
    /// The same normalized path twice.
    Duplicate,
    /// A sensitive name.
    SensitiveFile,
    /// Not found (a dangling link or a missing directory included).
    FileMissing,
    /// Permission denied.
    Unreadable,
    /// Resolves outside the root.
    SymlinkEscape,
    /// Not a regular file.
    NotAFile,
    /// Above 1 GiB, alone or with the earlier paths of the list.
    TooLarge,
}

impl PathReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PathReason::TooMany => "TOO_MANY",
            PathReason::InvalidPath => "INVALID_PATH",
            PathReason::PathEscape => "PATH_ESCAPE",
            PathReason::Duplicate => "DUPLICATE",
            PathReason::SensitiveFile => "SENSITIVE_FILE",
            PathReason::FileMissing => "FILE_MISSING",
            PathReason::Unreadable => "UNREADABLE",
            PathReason::SymlinkEscape => "SYMLINK_ESCAPE",
            PathReason::NotAFile => "NOT_A_FILE",
            PathReason::TooLarge => "TOO_LARGE",
        }
    }
}

fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty() && *c != ".").collect()
}

/// Normalizes a caller's pointer or artifact path lexically. `root_as_written` and
/// `canonical_root` are the two forms an absolute path may start with.
pub fn normalize(path: &str, root_as_written: &str, canonical_root: &str) -> Result<String, PathReason> {
    if path.is_empty() || path.contains('\0') {
        return Err(PathReason::InvalidPath);
    }
    #[cfg(windows)]
    let owned = path.replace('\\', "/");
    #[cfg(windows)]
    let path = owned.as_str();
    let parts = components(path);
    let relative: Vec<&str> = if path.starts_with('/') {
        let inside = |root: &str| {
            let root_parts = components(root);
            (parts.len() > root_parts.len() && parts[..root_parts.len()] == root_parts[..])
                .then(|| parts[root_parts.len()..].to_vec())
        };
        match inside(root_as_written).or_else(|| inside(canonical_root)) {
            Some(rest) => rest,
            None => return Err(PathReason::PathEscape),
        }
    } else {
        parts
    };
    if relative.contains(&"..") {
        return Err(PathReason::PathEscape);
    }
    if relative.is_empty() {
        return Err(PathReason::InvalidPath);
    }
    #[cfg(windows)]
    if relative.iter().any(|c| c.contains(':')) {
        return Err(PathReason::InvalidPath);
    }
    let joined = relative.join("/");
    if joined.len() > MAX_PATH_BYTES {
        return Err(PathReason::InvalidPath);
    }
    Ok(joined)
}

/// Sensitive directory names, matched against every component of a path (and of a workspace root).
/// `legacy_credentials` is gcloud's directory of per-account keys.
pub const SENSITIVE_DIRECTORIES: [&str; 7] = [
    ".git",
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".password-store",
    "legacy_credentials",
];

/// Sensitive file names, matched against the last component, in order (`*` is any run of characters):
/// key and certificate files, then the credential files people have: environment files
/// under any name a copy or a backup gives them (`.env-old`, `prod.env`, `prod.env.bak`,
/// `env.backup`), gcloud's token databases, rclone's configuration and the Yarn configuration that
/// holds registry tokens.
const FILE_PATTERNS: [&str; 50] = [
    ".env",
    ".env.*",
    ".envrc",
    ".env*",
    "*.env",
    "*.env.*",
    "env.backup",
    "env.bak",
    "env.old",
    "env.orig",
    "env.save",
    "credentials.db",
    "access_tokens.db",
    "rclone.conf",
    ".yarnrc.yml",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "credentials",
    "*credentials*.json",
    "client_secret*.json",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.toml",
    ".vault-token",
    ".s3cfg",
    ".boto",
    ".my.cnf",
    ".terraformrc",
    "*_history",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.backup",
    "*.tfvars",
];

/// Group C: the last components (as many as the pattern has), each matched like group B. `age/keys.txt`
/// is where sops and age keep their private keys; the Maven and Gradle files hold repository
/// passwords and signing keys; `containers/auth.json` and `.composer/auth.json` hold registry tokens.
const TOOL_CONFIGS: [&str; 10] = [
    ".kube/config",
    ".docker/config.json",
    ".cargo/credentials*",
    ".config/gh/hosts.yml",
    "age/keys.txt",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    "containers/auth.json",
    ".composer/auth.json",
];

/// The templates the environment-file patterns (`.env.*`, `.env*`, `*.env.*`) do not match: a name
/// that ends with one of these suffixes (`.env.example`, `prod.env.sample`).
const ENV_EXAMPLES: [&str; 3] = [".example", ".sample", ".template"];

/// The first sensitive pattern (in the order of the two lists above) that `path` (a `/`-separated relative path)
/// matches, or `None`. Matching is ASCII case-insensitive.
pub fn sensitive(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let parts = components(&lower);
    let last = parts.last().copied()?;
    if let Some(dir) = SENSITIVE_DIRECTORIES.iter().find(|d| parts.contains(d)) {
        return Some(dir);
    }
    for pattern in &FILE_PATTERNS {
        let hit = if matches!(*pattern, ".env.*" | ".env*" | "*.env.*") {
            glob(pattern, last) && !ENV_EXAMPLES.iter().any(|e| last.ends_with(e))
        } else {
            glob(pattern, last)
        };
        if hit {
            return Some(pattern);
        }
    }
    TOOL_CONFIGS.into_iter().find(|pattern| {
        let wanted: Vec<&str> = pattern.split('/').collect();
        parts.len() >= wanted.len()
            && parts[parts.len() - wanted.len()..]
                .iter()
                .zip(&wanted)
                .all(|(part, want)| glob(want, part))
    })
}

/// Glob match where `*` stands for any run of characters (possibly empty).
fn glob(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_norm(input: &str, expected: Result<&str, PathReason>) {
        assert_eq!(
            normalize(input, "/w/./", "/real/w"),
            expected.map(str::to_owned),
            "{input}"
        );
    }

    #[test]
    fn ct31_normalization_table() {
        check_norm("./src//lib.rs", Ok("src/lib.rs"));
        check_norm("src/./a/", Ok("src/a"));
        check_norm("/w/src/lib.rs", Ok("src/lib.rs"));
        check_norm("/real/w/a", Ok("a"));
        check_norm("/w", Err(PathReason::PathEscape));
        check_norm("/wx/a", Err(PathReason::PathEscape));
        check_norm("/etc/passwd", Err(PathReason::PathEscape));
        check_norm("../etc/passwd", Err(PathReason::PathEscape));
        check_norm("src/../README.md", Err(PathReason::PathEscape));
        check_norm("", Err(PathReason::InvalidPath));
        check_norm("a\0b", Err(PathReason::InvalidPath));
        check_norm("./", Err(PathReason::InvalidPath));
        check_norm(".", Err(PathReason::InvalidPath));
        check_norm(&"a".repeat(513), Err(PathReason::InvalidPath));
        check_norm(&"a".repeat(512), Ok(&"a".repeat(512)));
    }

    fn check_sensitive(path: &str, expected: Option<&str>) {
        assert_eq!(sensitive(path), expected, "{path}");
    }

    #[test]
    fn ct32_sensitive_patterns_in_table_order() {
        check_sensitive(".env", Some(".env"));
        check_sensitive("sub/.ENV", Some(".env"));
        check_sensitive(".env.local", Some(".env.*"));
        check_sensitive(".env.example", None);
        check_sensitive(".env.sample", None);
        check_sensitive(".env.template", None);
        check_sensitive(".envrc", Some(".envrc"));
        check_sensitive(".git/config", Some(".git"));
        check_sensitive("a/.ssh/known_hosts", Some(".ssh"));
        check_sensitive(".git", Some(".git"));
        check_sensitive("aws/credentials", Some("credentials"));
        check_sensitive("gcp-credentials-prod.json", Some("*credentials*.json"));
        check_sensitive("client_secret_123.json", Some("client_secret*.json"));
        check_sensitive("keys/id_ed25519", Some("id_ed25519"));
        check_sensitive("id_ed25519.pub", None);
        check_sensitive("tls/server.Pem", Some("*.pem"));
        check_sensitive("main.tfstate.backup", Some("*.tfstate.backup"));
        check_sensitive("prod.tfvars", Some("*.tfvars"));
        check_sensitive("home/.kube/config", Some(".kube/config"));
        check_sensitive(".docker/config.json", Some(".docker/config.json"));
        check_sensitive("docker/config.json", None);
        check_sensitive("src/lib.rs", None);
        check_sensitive("secrets.yaml", Some("secrets.yaml"));
        // The first matching pattern of the table wins: group A before group B.
        check_sensitive(".git/id_rsa", Some(".git"));
    }

    /// The credential files people actually have are sensitive (issue 12 item 2).
    #[test]
    fn issue12_credential_files_people_have_are_sensitive() {
        for (path, pattern) in [
            (".cargo/credentials", Some("credentials")),
            (".cargo/credentials.toml", Some(".cargo/credentials*")),
            ("home/.cargo/Credentials.TOML", Some(".cargo/credentials*")),
            (".config/gh/hosts.yml", Some(".config/gh/hosts.yml")),
            ("gh/hosts.yml", None),
            (".vault-token", Some(".vault-token")),
            (".s3cfg", Some(".s3cfg")),
            (".boto", Some(".boto")),
            (".my.cnf", Some(".my.cnf")),
            (".netrc", Some(".netrc")),
            (".pgpass", Some(".pgpass")),
            (".terraformrc", Some(".terraformrc")),
            (".bash_history", Some("*_history")),
            ("x/.zsh_history", Some("*_history")),
            (".python_history", Some("*_history")),
            ("history", None),
            (".docker/config.json", Some(".docker/config.json")),
            (".kube/config", Some(".kube/config")),
            (".aws/credentials", Some(".aws")),
            (".ssh/id_ed25519", Some(".ssh")),
            (".ssh/known_hosts", Some(".ssh")),
            (".gnupg/pubring.kbx", Some(".gnupg")),
            ("src/cargo/credentials.rs", None),
        ] {
            check_sensitive(path, pattern);
        }
    }

    /// The credential files the deny list missed (issue 27 item 14) — sops and age keys, gcloud's token
    /// databases and per-account keys, rclone's configuration, environment files copied or backed up
    /// under another name — and their peers, each with the pattern that names it; the templates and
    /// source files beside them stay allowed.
    #[test]
    fn issue27_credential_names_the_deny_list_missed_are_sensitive() {
        for (path, pattern) in [
            (".config/sops/age/keys.txt", Some("age/keys.txt")),
            (
                "Library/Application Support/sops/age/keys.txt",
                Some("age/keys.txt"),
            ),
            ("notes/keys.txt", None),
            (".config/gcloud/credentials.db", Some("credentials.db")),
            (".config/gcloud/access_tokens.db", Some("access_tokens.db")),
            (
                ".config/gcloud/legacy_credentials/me@example.com/adc.json",
                Some("legacy_credentials"),
            ),
            (
                ".config/gcloud/application_default_credentials.json",
                Some("*credentials*.json"),
            ),
            (".config/rclone/rclone.conf", Some("rclone.conf")),
            ("env.backup", Some("env.backup")),
            ("deploy/env.bak", Some("env.bak")),
            ("env.old", Some("env.old")),
            ("env.orig", Some("env.orig")),
            ("env.save", Some("env.save")),
            (".env.bak", Some(".env.*")),
            (".env-old", Some(".env*")),
            (".env_backup", Some(".env*")),
            (".env~", Some(".env*")),
            ("prod.env", Some("*.env")),
            ("docker/app.env", Some("*.env")),
            ("prod.env.bak", Some("*.env.*")),
            ("app.env.local", Some("*.env.*")),
            ("prod.env.example", None),
            (".env.example", None),
            (".env-template", Some(".env*")),
            ("src/env.rs", None),
            ("src/environment.ts", None),
            ("env", None),
            (".yarnrc.yml", Some(".yarnrc.yml")),
            (".m2/settings.xml", Some(".m2/settings.xml")),
            (".m2/settings-security.xml", Some(".m2/settings-security.xml")),
            ("settings.xml", None),
            (".gradle/gradle.properties", Some(".gradle/gradle.properties")),
            ("gradle.properties", None),
            (".config/containers/auth.json", Some("containers/auth.json")),
            (".composer/auth.json", Some(".composer/auth.json")),
            // The peers that were already there stay.
            (".netrc", Some(".netrc")),
            (".pgpass", Some(".pgpass")),
            (".git-credentials", Some(".git-credentials")),
            (".docker/config.json", Some(".docker/config.json")),
            (".kube/config", Some(".kube/config")),
            (".aws/credentials", Some(".aws")),
        ] {
            check_sensitive(path, pattern);
        }
    }

    #[test]
    fn glob_matches_runs() {
        assert!(glob("*.pem", ".pem"));
        assert!(glob("*credentials*.json", "credentials.json"));
        assert!(!glob("*.pem", "pem"));
        assert!(glob("a*b*c", "aXbYbc"));
    }
}
