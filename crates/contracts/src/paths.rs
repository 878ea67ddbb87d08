//! The pure path rules: normalization of a caller's path, the sensitive-file test by name, and the
//! private-key test by content.
//!
//! A list of names is never complete, so a name is judged with the forms a copy or a backup gives it
//! (`id_rsa.bak`, `id_rsa~`, `.pgpass.old`, `.id_rsa.swp`), and the first bytes of a file are judged
//! too ([`private_key_in`]): a private key is refused whatever it is called.
//!
//! ```
//! use shiftwork_contracts::paths::{normalize, private_key_in, sensitive, PathReason};
//! assert_eq!(normalize("./src//lib.rs", "/w", "/w").unwrap(), "src/lib.rs");
//! assert_eq!(normalize("/w/src/lib.rs", "/w", "/w").unwrap(), "src/lib.rs");
//! assert_eq!(normalize("src/../README.md", "/w", "/w"), Err(PathReason::PathEscape));
//! assert_eq!(sensitive(".git/config"), Some(".git"));
//! assert_eq!(sensitive("certs/server.PEM"), Some("*.pem"));
//! assert_eq!(sensitive(".env.example"), None);
//! assert_eq!(sensitive("backup/id_rsa.bak"), Some("id_rsa"));
//! assert_eq!(private_key_in(b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n"), Some("OpenSSH private key"));
//! assert_eq!(private_key_in(b"fn main() {}\n"), None);
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
    /// A sensitive name, or a file whose first bytes are a private key.
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
/// `env.backup`), gcloud's token databases, rclone's configuration (and its older place,
/// `~/.rclone.conf`) and the Yarn configuration that holds registry tokens, security-key SSH keys
/// (`id_ed25519_sk`), host keys, GnuPG's secret keyring and exported private keys, service-account
/// keys, kubeconfig files, Docker's old credential file and wallets. Every name is also matched in the
/// forms a copy or a backup gives it (see [`sensitive`]).
const FILE_PATTERNS: [&str; 68] = [
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
    ".rclone.conf",
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
    ".dockercfg",
    "kubeconfig",
    "kubeconfig.yaml",
    "kubeconfig.yml",
    "kubeconfig-*",
    "kubeconfig_*",
    "*.kubeconfig",
    "*service-account*.json",
    "*service_account*.json",
    "wallet.dat",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "id_xmss",
    "ssh_host_*key",
    "secring.*",
    "*private*.asc",
    "*secret*.asc",
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

/// The first sensitive pattern (in the order of the lists above) that `path` (a `/`-separated
/// relative path) matches, or `None`. Matching is ASCII case-insensitive.
///
/// The path is matched as it is first; then, when none matched, with its last component (and each
/// directory, for the directory names) in the forms a copy or a backup gives a name, taken off one
/// after another: `id_rsa.bak`, `id_rsa~`, `id_rsa.orig`, `.pgpass.old`,
/// `.netrc~`, `.git-credentials.bak`, vim's `.id_rsa.swp`, Emacs's `#id_rsa#`, a file manager's
/// `id_rsa copy` or `id_rsa (1)`. The pattern reported is the one the name without them matches
/// (`id_rsa.bak` matches `id_rsa`).
pub fn sensitive(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let parts = components(&lower);
    let (last, directories) = parts.split_last()?;
    if let Some(hit) = by_name(&parts) {
        return Some(hit);
    }
    for dir in directories {
        for base in undecorated(dir) {
            if let Some(hit) = SENSITIVE_DIRECTORIES.iter().find(|d| **d == base) {
                return Some(hit);
            }
        }
    }
    undecorated(last).iter().find_map(|base| {
        let mut named: Vec<&str> = directories.to_vec();
        named.push(base);
        by_name(&named)
    })
}

/// [`sensitive`] for the components as they are.
fn by_name(parts: &[&str]) -> Option<&'static str> {
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

/// What a copy or a backup appends to a name, after a `.`, `-`, `_` or space (`id_rsa.bak`,
/// `.netrc-old`, `id_rsa copy`): editors' backups and swap files, package managers' kept copies,
/// and the words people use.
const BACKUP_WORDS: [&str; 27] = [
    "bak",
    "backup",
    "bk",
    "old",
    "orig",
    "original",
    "save",
    "saved",
    "sav",
    "swp",
    "swo",
    "swx",
    "tmp",
    "temp",
    "prev",
    "previous",
    "copy",
    "new",
    "dist",
    "dpkg-old",
    "dpkg-dist",
    "dpkg-new",
    "rpmsave",
    "rpmnew",
    "rpmorig",
    "ucf-old",
    "ucf-dist",
];

/// The names `name` (lower case) may be a copy or a backup of: each form taken off one at a time, in
/// the order they come off (at most eight). Forms: a trailing `~` (`id_rsa~`, GNU's `id_rsa.~1~`);
/// a separator and a word of [`BACKUP_WORDS`] or a number (`id_rsa.bak`, `id_rsa-old`, `id_rsa.1`,
/// `id_rsa copy 2`); a number in parentheses (`id_rsa (1)`); `copy of ` in front; Emacs's `#…#` and
/// `.#…`; and for a swap file the dot vim puts in front (`.id_rsa.swp`).
fn undecorated(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = name.to_owned();
    while out.len() < 8 {
        let Some(next) = strip_once(&current) else {
            break;
        };
        if next.is_empty() || next == current {
            break;
        }
        out.push(next.clone());
        current = next;
    }
    out
}

/// One form off `name`, or `None` when it carries none.
fn strip_once(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_suffix('~') {
        // GNU's numbered backups: `name.~3~`.
        if let Some((base, n)) = rest.rsplit_once(".~")
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(base.to_owned());
        }
        return Some(rest.to_owned());
    }
    if let Some(inner) = name.strip_prefix('#').and_then(|n| n.strip_suffix('#')) {
        return Some(inner.to_owned());
    }
    if let Some(rest) = name.strip_prefix(".#") {
        return Some(rest.to_owned());
    }
    if let Some(rest) = name.strip_prefix("copy of ") {
        return Some(rest.to_owned());
    }
    // ` (1)`, `(2)`.
    if let Some(rest) = name.strip_suffix(')')
        && let Some((base, n)) = rest.rsplit_once('(')
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(base.trim_end().to_owned());
    }
    // A word with a dash inside (`dpkg-old`) comes off whole.
    if let Some(base) = BACKUP_WORDS
        .iter()
        .filter(|w| w.contains('-'))
        .find_map(|w| name.strip_suffix(w).and_then(|b| b.strip_suffix('.')))
        .filter(|b| !b.is_empty())
    {
        return Some(base.to_owned());
    }
    let cut = name.rfind(['.', '-', '_', ' '])?;
    let (base, word) = (&name[..cut], &name[cut + 1..]);
    if base.is_empty() {
        return None;
    }
    let numbered = !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
    if numbered {
        // `id_rsa.1`, and a file manager's `id_rsa copy 2`.
        return Some(base.strip_suffix(" copy").unwrap_or(base).to_owned());
    }
    if BACKUP_WORDS.contains(&word) {
        let base = base.strip_suffix(" -").unwrap_or(base).trim_end();
        // vim's swap file of `id_rsa` is `.id_rsa.swp`.
        if matches!(word, "swp" | "swo" | "swx")
            && let Some(unhidden) = base.strip_prefix('.')
            && !unhidden.starts_with('.')
            && by_name(&[unhidden]).is_some()
            && by_name(&[base]).is_none()
        {
            return Some(unhidden.to_owned());
        }
        return Some(base.to_owned());
    }
    None
}

/// What the first bytes of a file are when they are a private key, whatever the file is called; the
/// label is reported as the sensitive pattern. `head` is the file's first
/// [`crate::limits::SECRET_HEAD_BYTES`] (or all of it). Recognised:
///
/// - a PEM block whose label names a private key, on a line of its own anywhere in the head
///   (`-----BEGIN PRIVATE KEY-----`, `RSA`, `EC`, `DSA`, `ENCRYPTED`, …; OpenSSH's; a PGP private key
///   block; the SSH.com form `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`);
/// - a PuTTY key file (`PuTTY-User-Key-File-`);
/// - a JSON object with a `"private_key"` member (a cloud service account's key) or a JSON Web Key
///   with its private part (`"kty"` and `"d"`);
/// - an age secret key line (`AGE-SECRET-KEY-1`), a kubeconfig's `client-key-data:`, GnuPG's private
///   key files (`(private-key`, `(protected-private-key`), and a binary OpenPGP secret-key packet
///   (what `secring.gpg` and `gpg --export-secret-keys` hold).
///
/// ```
/// use shiftwork_contracts::paths::private_key_in;
/// assert_eq!(private_key_in(b"{\"type\": \"service_account\", \"private_key\": \"...\"}"), Some("service account key"));
/// assert_eq!(private_key_in(b"-----BEGIN CERTIFICATE-----\n"), None);
/// ```
pub fn private_key_in(head: &[u8]) -> Option<&'static str> {
    let head = &head[..head.len().min(crate::limits::SECRET_HEAD_BYTES)];
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..];
    if let Some(kind) = openpgp_secret_packet(text) {
        return Some(kind);
    }
    if text.starts_with(b"PuTTY-User-Key-File-") {
        return Some("PuTTY private key");
    }
    if text.starts_with(b"{") {
        if json_member(text, b"private_key") {
            return Some("service account key");
        }
        if json_member(text, b"kty") && json_member(text, b"d") {
            return Some("JSON Web Key private key");
        }
    }
    for line in text.split(|b| *b == b'\n') {
        let start = line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(line.len());
        let line = &line[start..];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(kind) = pem_private_key(line) {
            return Some(kind);
        }
        if line.starts_with(b"AGE-SECRET-KEY-1") {
            return Some("age secret key");
        }
        if line.starts_with(b"client-key-data:") {
            return Some("kubeconfig client key");
        }
        if line.starts_with(b"(private-key")
            || line.starts_with(b"(protected-private-key")
            || line.starts_with(b"Key: (private-key")
            || line.starts_with(b"Key: (protected-private-key")
        {
            return Some("GnuPG private key");
        }
    }
    None
}

/// The labels [`private_key_in`] reports (a refusal by content, not by name).
pub const PRIVATE_KEY_CONTENTS: [&str; 10] = [
    "PEM private key",
    "OpenSSH private key",
    "PGP private key block",
    "SSH2 private key",
    "PuTTY private key",
    "service account key",
    "JSON Web Key private key",
    "age secret key",
    "kubeconfig client key",
    "GnuPG private key",
];

/// The OpenPGP secret-key packet as a binary key file starts: the packet tag 5 (old or new header
/// format), then a key version 3 to 6 and, for 4 to 6, a public-key algorithm OpenPGP defines.
fn openpgp_secret_packet(bytes: &[u8]) -> Option<&'static str> {
    let first = *bytes.first()?;
    let header = match first {
        // Old format, tag 5: the length takes 1, 2 or 4 bytes (type 0, 1, 2) or is indeterminate.
        0x94..=0x97 => [2, 3, 5, 1][usize::from(first & 3)],
        // New format, tag 5.
        0xc5 => match *bytes.get(1)? {
            0..=191 => 2,
            192..=223 => 3,
            255 => 6,
            _ => return None,
        },
        _ => return None,
    };
    let version = *bytes.get(header)?;
    let algorithm = match version {
        3 => return Some("PGP private key block"),
        4..=6 => *bytes.get(header + 5)?,
        _ => return None,
    };
    matches!(algorithm, 1..=3 | 16..=22 | 25..=28).then_some("PGP private key block")
}

/// A PEM (or SSH.com) armor line that begins a private key.
fn pem_private_key(line: &[u8]) -> Option<&'static str> {
    let inner = if let Some(rest) = line.strip_prefix(b"-----BEGIN ") {
        rest.strip_suffix(b"-----")?
    } else if let Some(rest) = line.strip_prefix(b"---- BEGIN ") {
        rest.strip_suffix(b" ----")?
    } else {
        return None;
    };
    if inner.len() > 64 || !inner.windows(11).any(|w| w == b"PRIVATE KEY") {
        return None;
    }
    Some(match inner {
        b"OPENSSH PRIVATE KEY" => "OpenSSH private key",
        b"PGP PRIVATE KEY BLOCK" => "PGP private key block",
        _ if inner.starts_with(b"SSH2 ") => "SSH2 private key",
        _ => "PEM private key",
    })
}

/// True when `text` holds `"name"` followed by optional whitespace and a colon (a JSON member of
/// that name at any depth).
fn json_member(text: &[u8], name: &[u8]) -> bool {
    let mut quoted = Vec::with_capacity(name.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(name);
    quoted.push(b'"');
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&text[from..], &quoted) {
        let after = from + at + quoted.len();
        let rest = &text[after..];
        let skip = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        if rest.get(skip) == Some(&b':') {
            return true;
        }
        from = after;
    }
    false
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

    /// Secrets by name are a list that is never complete (issue 34 item 12): the names the third
    /// hostile round found accepted, and every credential name in the forms a copy or a backup gives
    /// it, are sensitive, each reported with the pattern the name without them matches; the public
    /// halves, source files and ordinary backups beside them stay allowed.
    #[test]
    fn issue34_item12_secret_names_and_their_backup_forms_are_sensitive() {
        for (path, pattern) in [
            ("id_ed25519_sk", Some("id_ed25519_sk")),
            ("id_ecdsa_sk", Some("id_ecdsa_sk")),
            ("id_rsa.bak", Some("id_rsa")),
            ("id_rsa~", Some("id_rsa")),
            ("etc/ssh/ssh_host_ed25519_key", Some("ssh_host_*key")),
            ("ssh_host_key", Some("ssh_host_*key")),
            ("private.asc", Some("*private*.asc")),
            ("secring.gpg", Some("secring.*")),
            ("service-account.json", Some("*service-account*.json")),
            ("kubeconfig", Some("kubeconfig")),
            (".git-credentials.bak", Some(".git-credentials")),
            (".pgpass.old", Some(".pgpass")),
            (".netrc~", Some(".netrc")),
            (".dockercfg", Some(".dockercfg")),
            ("wallet.dat", Some("wallet.dat")),
            (".rclone.conf", Some(".rclone.conf")),
            // The backup forms, on every kind of name.
            ("id_rsa.orig", Some("id_rsa")),
            ("id_rsa.save", Some("id_rsa")),
            (".id_rsa.swp", Some("id_rsa")),
            (".netrc.swp", Some(".netrc")),
            ("#id_rsa#", Some("id_rsa")),
            (".#id_rsa", Some("id_rsa")),
            ("id_rsa.~2~", Some("id_rsa")),
            ("id_rsa copy", Some("id_rsa")),
            ("id_rsa copy 2", Some("id_rsa")),
            ("id_rsa - Copy (2)", Some("id_rsa")),
            ("Copy of id_rsa", Some("id_rsa")),
            ("id_rsa (1)", Some("id_rsa")),
            ("id_rsa.1", Some("id_rsa")),
            ("id_rsa.bak.old", Some("id_rsa")),
            ("id_rsa-old", Some("id_rsa")),
            ("credentials.orig", Some("credentials")),
            (".npmrc.save", Some(".npmrc")),
            (".pypirc.tmp", Some(".pypirc")),
            ("server.key.bak", Some("*.key")),
            ("home/.kube/config.bak", Some(".kube/config")),
            (".docker/config.json~", Some(".docker/config.json")),
            (".ssh.bak/known_hosts", Some(".ssh")),
            ("kubeconfig.dpkg-old", Some("kubeconfig")),
            (".htpasswd.rpmsave", Some(".htpasswd")),
            ("secrets.yaml.backup", Some("secrets.yaml")),
            ("prod.kubeconfig", Some("*.kubeconfig")),
            ("kubeconfig-staging", Some("kubeconfig-*")),
            // Allowed: public halves, sources, ordinary files and their backups.
            ("id_rsa.pub", None),
            ("id_rsa.pub.bak", None),
            ("ssh_host_ed25519_key.pub", None),
            ("kubeconfig.go", None),
            ("src/credentials.rs", None),
            ("notes.old", None),
            ("README.md.bak", None),
            ("public.asc", None),
            ("pubring.gpg", None),
            ("src/backup.rs", None),
            ("~", None),
            ("#", None),
            (".bak", None),
        ] {
            check_sensitive(path, pattern);
        }
    }

    fn check_key(head: &[u8], expected: Option<&str>) {
        assert_eq!(
            private_key_in(head),
            expected,
            "{}",
            String::from_utf8_lossy(&head[..head.len().min(80)])
        );
        if let Some(kind) = expected {
            assert!(PRIVATE_KEY_CONTENTS.contains(&kind), "{kind} is listed");
        }
    }

    /// Secrets by content (issue 34 item 12): a file whose first bytes are a private key is one, in
    /// every form the tools write; a certificate, a public key, a source file that quotes a PEM
    /// header inside a line, and a JSON file that only names a key id are not.
    #[test]
    fn issue34_item12_private_keys_are_known_by_their_first_bytes() {
        let pem = |label: &str| {
            format!("-----BEGIN {label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END {label}-----\n")
        };
        for (label, kind) in [
            ("PRIVATE KEY", "PEM private key"),
            ("RSA PRIVATE KEY", "PEM private key"),
            ("EC PRIVATE KEY", "PEM private key"),
            ("DSA PRIVATE KEY", "PEM private key"),
            ("ENCRYPTED PRIVATE KEY", "PEM private key"),
            ("OPENSSH PRIVATE KEY", "OpenSSH private key"),
            ("PGP PRIVATE KEY BLOCK", "PGP private key block"),
        ] {
            check_key(pem(label).as_bytes(), Some(kind));
            // After a byte-order mark, blank lines, a certificate or a YAML key.
            let bundle = format!("\u{feff}\n\n{}{}", pem("CERTIFICATE"), pem(label));
            check_key(bundle.as_bytes(), Some(kind));
            let yaml = format!("tls:\n  key: |\n    {}", pem(label).replace('\n', "\r\n    "));
            check_key(yaml.as_bytes(), Some(kind));
        }
        check_key(
            b"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"x\"\n",
            Some("SSH2 private key"),
        );
        check_key(
            b"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
            Some("PuTTY private key"),
        );
        check_key(
            br#"{
  "type": "service_account",
  "project_id": "p",
  "private_key_id": "abc",
  "private_key" : "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
}"#,
            Some("service account key"),
        );
        check_key(
            br#"{"kty":"EC","crv":"P-256","x":"f83","y":"x_F","d":"jpsQ"}"#,
            Some("JSON Web Key private key"),
        );
        check_key(
            b"# created: 2026-01-01T00:00:00Z\n# public key: age1ql3z\nAGE-SECRET-KEY-1QQQ\n",
            Some("age secret key"),
        );
        check_key(
            b"apiVersion: v1\nusers:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTg==\n",
            Some("kubeconfig client key"),
        );
        check_key(
            b"Created: 20260101T000000\nKey: (protected-private-key (ecc (curve Ed25519)))\n",
            Some("GnuPG private key"),
        );
        check_key(b"(private-key (rsa (n #00#)))", Some("GnuPG private key"));
        // Binary OpenPGP secret keys: old and new packet headers, version 4, EdDSA and RSA.
        check_key(
            &[0x95, 0x01, 0xd8, 4, 0x5f, 0, 0, 0, 1, 0x08],
            Some("PGP private key block"),
        );
        check_key(
            &[0x94, 0x58, 4, 0x5f, 0, 0, 0, 22, 9],
            Some("PGP private key block"),
        );
        check_key(
            &[0xc5, 0x58, 4, 0x5f, 0, 0, 0, 22, 9],
            Some("PGP private key block"),
        );
        // Not private keys.
        for head in [
            pem("CERTIFICATE"),
            pem("PUBLIC KEY"),
            pem("PGP PUBLIC KEY BLOCK"),
            String::from("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA me@host\n"),
            String::from("let key = \"-----BEGIN RSA PRIVATE KEY-----\\n...\";\n"),
            String::from("// -----BEGIN PRIVATE KEY----- is what a key starts with\n"),
            String::from(r#"{"private_key_id": "abc", "type": "service_account"}"#),
            String::from(r#"{"kty":"EC","crv":"P-256","x":"f83","y":"x_F"}"#),
            String::from("fn main() {}\n"),
            String::new(),
        ] {
            check_key(head.as_bytes(), None);
        }
        check_key(&[0x95, 0x01, 0xd8, 9, 0, 0, 0, 0, 1], None);
        check_key(&[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], None);
        // Only the head counts: a key past it is not looked for.
        let late = format!(
            "{}{}",
            "x".repeat(crate::limits::SECRET_HEAD_BYTES),
            pem("PRIVATE KEY")
        );
        check_key(late.as_bytes(), None);
    }

    #[test]
    fn glob_matches_runs() {
        assert!(glob("*.pem", ".pem"));
        assert!(glob("*credentials*.json", "credentials.json"));
        assert!(!glob("*.pem", "pem"));
        assert!(glob("a*b*c", "aXbYbc"));
    }
}
