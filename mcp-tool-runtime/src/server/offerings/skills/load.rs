//! Loading a folder of skills: each directory below it holding a `SKILL.md` is a skill, named
//! by its directory, described by the YAML frontmatter of its `SKILL.md`. Every file is read
//! once at start, through one `cap-std` handle on the folder (nothing outside it can be
//! reached, symbolic links are refused), to make the manifest (`sha256:` digest and size of
//! each file) that `skills/list` promises; `resources/read` reads the file again through the
//! same handle and serves it only if it still matches.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::Dir;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::ResourceContents;
use crate::tool::ToolError;

/// How long a skill file's contents stay fresh in a client's cache: they are fixed at start
/// (a file changed on disk is refused, not served).
pub(crate) const FILE_TTL: std::time::Duration = std::time::Duration::from_secs(300);
/// The file every skill has at its root.
pub(crate) const SKILL_MD: &str = "SKILL.md";
/// The MIME type of a directory in `resources/directory/read`.
pub(crate) const DIRECTORY_MIME: &str = "inode/directory";
/// Files of one skill beyond which it is refused (the extension's limit for servers).
const MAX_FILES: usize = 512;
/// Bytes of one skill beyond which it is refused (16 MiB, the extension's limit).
const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Folders nested deeper than this inside a skill are refused.
const MAX_DEPTH: usize = 16;
/// The longest description the Agent Skills format allows.
const MAX_DESCRIPTION: usize = 1024;

/// The skills of a folder, loaded at start.
pub(crate) struct Skills {
    root: Arc<Dir>,
    /// In name order.
    pub(crate) skills: Vec<Skill>,
    /// Every file of every skill, by URI.
    files: HashMap<String, SkillFile>,
    /// The children of every directory (a skill's root and its folders), by URI.
    pub(crate) directories: HashMap<String, Vec<Child>>,
}

/// One skill, as `skills/list` and `skills/get` show it.
#[derive(Debug, Serialize)]
pub(crate) struct Skill {
    /// The URI of its `SKILL.md`.
    pub(crate) uri: String,
    /// The frontmatter of its `SKILL.md`, as written.
    pub(crate) frontmatter: Map<String, Value>,
    /// Every file of the skill, its `SKILL.md` included.
    pub(crate) resources: Vec<ManifestEntry>,
}

/// A file in a skill's manifest.
#[derive(Debug, Serialize)]
pub(crate) struct ManifestEntry {
    pub(crate) uri: String,
    pub(crate) digest: String,
    pub(crate) size: u64,
}

/// An entry of a directory (`resources/directory/read`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Child {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) mime_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
}

/// A folder of a skill (relative to the skill) and its entries: a name, and a size for a file
/// (`None` for a folder).
type Folder = (PathBuf, Vec<(String, Option<u64>)>);

/// Where a file is and what it must still be when read.
struct SkillFile {
    path: PathBuf,
    digest: String,
    size: u64,
    mime_type: &'static str,
}

impl Skills {
    /// Loads the skills of `folder`; every problem found is reported, one sentence each.
    pub(crate) fn load(folder: &Path) -> Result<Skills, Vec<String>> {
        let shown = folder.display();
        let root = Dir::open_ambient_dir(folder, cap_std::ambient_authority())
            .map_err(|e| vec![format!("skills folder `{shown}`: {e}")])?;
        let mut skills = Skills {
            root: Arc::new(root),
            skills: Vec::new(),
            files: HashMap::new(),
            directories: HashMap::new(),
        };
        let mut names = Vec::new();
        let entries = skills
            .root
            .entries()
            .map_err(|e| vec![format!("skills folder `{shown}`: {e}")])?;
        for entry in entries {
            let entry = entry.map_err(|e| vec![format!("skills folder `{shown}`: {e}")])?;
            let Ok(name) = entry.file_name().into_string() else {
                return Err(vec![format!(
                    "skills folder `{shown}`: a name is not UTF-8: {:?}",
                    entry.file_name()
                )]);
            };
            let kind = entry.file_type();
            if name.starts_with('.') {
                continue;
            }
            if kind.as_ref().is_ok_and(|t| t.is_symlink()) {
                return Err(vec![format!(
                    "skills folder `{shown}`: `{name}` is a symbolic link; skills are directories inside the folder"
                )]);
            }
            // Loose files beside the skills (a README) are not skills.
            if kind.is_ok_and(|t| t.is_dir()) {
                names.push(name);
            }
        }
        names.sort();
        let mut problems = Vec::new();
        for name in names {
            if let Err(why) = skills.add(&name) {
                problems.push(format!("skill `{name}` in `{shown}`: {why}"));
            }
        }
        if problems.is_empty() {
            Ok(skills)
        } else {
            Err(problems)
        }
    }

    /// Adds the skill in directory `name`.
    fn add(&mut self, name: &str) -> Result<(), String> {
        check_name(name)?;
        let mut found = Vec::new();
        let mut folders: Vec<Folder> = vec![(PathBuf::new(), Vec::new())];
        walk(
            &self.root,
            Path::new(name),
            PathBuf::new(),
            0,
            &mut found,
            &mut folders,
        )?;
        if !found.iter().any(|(path, _)| path == Path::new(SKILL_MD)) {
            return Err(format!("the directory has no `{SKILL_MD}`"));
        }
        if found.len() > MAX_FILES {
            return Err(format!(
                "{} files, more than the {MAX_FILES} a skill may have",
                found.len()
            ));
        }
        let base = format!("skill://{name}");
        let mut manifest = Vec::new();
        let mut total = 0u64;
        let mut frontmatter = None;
        for (path, bytes) in &found {
            total += bytes.len() as u64;
            let uri = format!("{base}/{}", encode_path(path));
            if path == Path::new(SKILL_MD) {
                frontmatter = Some(parse_frontmatter(bytes, name)?);
            }
            let file = SkillFile {
                path: Path::new(name).join(path),
                digest: digest(bytes),
                size: bytes.len() as u64,
                mime_type: mime_type(path),
            };
            manifest.push(ManifestEntry {
                uri: uri.clone(),
                digest: file.digest.clone(),
                size: file.size,
            });
            self.files.insert(uri, file);
        }
        if total > MAX_BYTES {
            return Err(format!(
                "{total} bytes, more than the {MAX_BYTES} (16 MiB) a skill may have"
            ));
        }
        for (folder, children) in folders {
            let uri = if folder.as_os_str().is_empty() {
                base.clone()
            } else {
                format!("{base}/{}", encode_path(&folder))
            };
            let children = children
                .into_iter()
                .map(|(child, size): (String, Option<u64>)| Child {
                    uri: format!("{uri}/{}", encode_segment(&child)),
                    mime_type: match size {
                        Some(_) => mime_type(Path::new(&child)),
                        None => DIRECTORY_MIME,
                    },
                    name: child,
                    size,
                })
                .collect();
            self.directories.insert(uri, children);
        }
        manifest.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.skills.push(Skill {
            uri: format!("{base}/{SKILL_MD}"),
            frontmatter: frontmatter.unwrap_or_default(),
            resources: manifest,
        });
        Ok(())
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.uri == uri)
    }

    /// Whether `uri` is a file of a skill.
    pub(crate) fn has_file(&self, uri: &str) -> bool {
        self.files.contains_key(uri)
    }

    /// Reads the file at `uri` again, through the folder's handle, and gives its contents
    /// if it is still the file the manifest describes.
    pub(crate) async fn read(
        self: Arc<Self>,
        uri: String,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let Some(file) = self.files.get(&uri) else {
            return Err(ToolError::new(
                "NOT_FOUND",
                format!("`{uri}` is no file of a skill"),
            ));
        };
        let (root, path, size) = (self.root.clone(), file.path.clone(), file.size);
        // Bounded: a file swapped for something that blocks its reader (a FIFO opened
        // between the check and the open) fails the read instead of holding it.
        let read = tokio::task::spawn_blocking(move || read_regular(&root, &path, size));
        let changed = || {
            ToolError::new(
                "SKILL_CHANGED",
                format!(
                    "`{uri}` changed on disk since the server started; restart it to serve the new version"
                ),
            )
        };
        let bytes = match tokio::time::timeout(READ_LIMIT, read).await {
            Err(_) => {
                return Err(ToolError::new(
                    "READ_FAILED",
                    format!(
                        "`{uri}` could not be read within {} s",
                        READ_LIMIT.as_secs()
                    ),
                ));
            }
            Ok(Err(e)) => return Err(ToolError::new("READ_FAILED", e.to_string())),
            Ok(Ok(Err(ReadError::Io(e)))) => {
                return Err(ToolError::new("READ_FAILED", format!("`{uri}`: {e}")));
            }
            Ok(Ok(Err(ReadError::NotRegular | ReadError::TooLarge))) => return Err(changed()),
            Ok(Ok(Ok(bytes))) => bytes,
        };
        if bytes.len() as u64 != file.size || digest(&bytes) != file.digest {
            return Err(ToolError::new(
                "SKILL_CHANGED",
                format!(
                    "`{uri}` changed on disk since the server started; restart it to serve the new version"
                ),
            ));
        }
        let textual = file.mime_type.starts_with("text/")
            || matches!(file.mime_type, "application/json" | "application/yaml");
        let contents = match String::from_utf8(bytes) {
            Ok(text) if textual => ResourceContents::text(uri, file.mime_type, text),
            Ok(text) => ResourceContents::blob(uri, file.mime_type, text.into_bytes()),
            Err(e) => ResourceContents::blob(uri, file.mime_type, e.into_bytes()),
        };
        Ok(vec![contents])
    }
}

/// The longest a skill file's read may take at `resources/read`.
const READ_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Why a skill file was not read.
#[derive(Debug)]
enum ReadError {
    /// It is no regular file (a FIFO, a device, a folder, a link).
    NotRegular,
    /// It holds more than the bytes allowed.
    TooLarge,
    Io(std::io::Error),
}

/// The bytes of the regular file at `path`, at most `limit` of them: its kind and size are
/// checked before it is opened (no FIFO is opened, no sparse gigabyte read) and again on the
/// opened handle, and no more than `limit + 1` bytes are read whatever it then holds.
fn read_regular(root: &Dir, path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read as _;
    let before = root.symlink_metadata(path).map_err(ReadError::Io)?;
    if !before.is_file() {
        return Err(ReadError::NotRegular);
    }
    if before.len() > limit {
        return Err(ReadError::TooLarge);
    }
    let file = root.open(path).map_err(ReadError::Io)?;
    let opened = file.metadata().map_err(ReadError::Io)?;
    if !opened.is_file() {
        return Err(ReadError::NotRegular);
    }
    if opened.len() > limit {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Collects the files below `dir/at` (paths relative to the skill) with their bytes, and the
/// children of each folder; hidden entries are left out, links and special files refused.
fn walk(
    root: &Dir,
    dir: &Path,
    at: PathBuf,
    depth: usize,
    found: &mut Vec<(PathBuf, Vec<u8>)>,
    folders: &mut Vec<Folder>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "`{}` is nested more than {MAX_DEPTH} folders deep",
            at.display()
        ));
    }
    let here = dir.join(&at);
    let io = |e: std::io::Error| format!("`{}`: {e}", here.display());
    let mut entries = Vec::new();
    for entry in root.read_dir(&here).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| format!("a name in `{}` is not UTF-8: {n:?}", here.display()))?;
        if !name.starts_with('.') {
            entries.push((name, entry.file_type().map_err(io)?));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mine = folders.len() - 1;
    for (name, kind) in entries {
        let path = at.join(&name);
        if kind.is_symlink() {
            return Err(format!(
                "`{}` is a symbolic link; a skill serves regular files only",
                path.display()
            ));
        } else if kind.is_dir() {
            folders[mine].1.push((name, None));
            folders.push((path.clone(), Vec::new()));
            walk(root, dir, path, depth + 1, found, folders)?;
        } else if kind.is_file() {
            let bytes = match read_regular(root, &dir.join(&path), MAX_BYTES) {
                Ok(bytes) => bytes,
                Err(ReadError::Io(e)) => return Err(io(e)),
                Err(ReadError::NotRegular) => {
                    return Err(format!(
                        "`{}` is not a regular file or folder",
                        path.display()
                    ));
                }
                Err(ReadError::TooLarge) => {
                    return Err(format!(
                        "`{}` holds more than the {MAX_BYTES} bytes (16 MiB) a skill may have",
                        path.display()
                    ));
                }
            };
            folders[mine].1.push((name, Some(bytes.len() as u64)));
            found.push((path, bytes));
        } else {
            return Err(format!(
                "`{}` is not a regular file or folder",
                path.display()
            ));
        }
        if found.len() > MAX_FILES {
            return Err(format!("more than the {MAX_FILES} files a skill may have"));
        }
    }
    Ok(())
}

/// The Agent Skills naming rule: 1-64 lowercase letters, digits and hyphens, no hyphen at
/// either end or twice in a row.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a valid skill name: use 1-64 lowercase letters, digits and single hyphens inside (like `pdf-processing`)"
        ))
    }
}

/// The YAML frontmatter of a `SKILL.md`, which must name the skill as its directory does and
/// describe it.
fn parse_frontmatter(bytes: &[u8], dir: &str) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("`{SKILL_MD}` is not UTF-8"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| format!("`{SKILL_MD}` does not begin with a `---` frontmatter block"))?;
    let end = body
        .match_indices("\n---")
        .map(|(i, _)| i)
        .find(|&i| {
            let rest = &body[i + 4..];
            rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n")
        })
        .ok_or_else(|| format!("`{SKILL_MD}`'s frontmatter has no closing `---` line"))?;
    let yaml = &body[..end];
    let value: Value = yaml_serde::from_str(yaml)
        .map_err(|e| format!("`{SKILL_MD}`'s frontmatter is not valid YAML: {e}"))?;
    let Value::Object(map) = value else {
        return Err(format!(
            "`{SKILL_MD}`'s frontmatter is not a mapping of fields"
        ));
    };
    match map.get("name") {
        Some(Value::String(name)) if name == dir => {}
        Some(Value::String(name)) => {
            return Err(format!(
                "`{SKILL_MD}` names the skill `{name}`, but its directory is `{dir}`: they must be the same"
            ));
        }
        _ => return Err(format!("`{SKILL_MD}`'s frontmatter has no `name`")),
    }
    match map.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() && d.chars().count() <= MAX_DESCRIPTION => {}
        Some(Value::String(d)) if !d.trim().is_empty() => {
            return Err(format!(
                "`{SKILL_MD}`'s `description` is longer than {MAX_DESCRIPTION} characters"
            ));
        }
        _ => {
            return Err(format!(
                "`{SKILL_MD}`'s frontmatter has no `description` (what the skill does and when to use it)"
            ));
        }
    }
    Ok(map)
}

/// `sha256:` and the 64 lowercase hex digits of the bytes' SHA-256.
fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

/// The MIME type of a file, from its extension.
fn mime_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("js" | "mjs") => "text/javascript",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("rs") => "text/x-rust",
        Some("xml") => "text/xml",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// A relative path as URI path segments, each percent-encoded.
fn encode_path(path: &Path) -> String {
    path.components()
        .map(|c| encode_segment(&c.as_os_str().to_string_lossy()))
        .collect::<Vec<_>>()
        .join("/")
}

/// One URI path segment: unreserved characters and sub-delimiters as they are, the rest
/// percent-encoded (RFC 3986).
fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skills folder with one skill `calc` (its `SKILL.md` and `notes.txt`).
    fn folder(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-tool-skills-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("calc")).unwrap();
        std::fs::write(
            dir.join("calc").join(SKILL_MD),
            "---\nname: calc\ndescription: Do sums\n---\n# Calc\n",
        )
        .unwrap();
        std::fs::write(dir.join("calc").join("notes.txt"), "notes").unwrap();
        dir
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_file_swapped_for_a_fifo_or_a_sparse_gigabyte_is_refused_unread() {
        let dir = folder("swap");
        let skills = Arc::new(Skills::load(&dir).unwrap());
        let notes = dir.join("calc").join("notes.txt");
        let uri = "skill://calc/notes.txt".to_owned();
        assert!(skills.clone().read(uri.clone()).await.is_ok());
        // A FIFO nobody writes to: opening it for reading would wait for ever.
        std::fs::remove_file(&notes).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&notes).status();
        if made.is_ok_and(|s| s.success()) {
            let e = skills.clone().read(uri.clone()).await.unwrap_err();
            assert_eq!(e.code(), Some("SKILL_CHANGED"), "{}", e.message());
            std::fs::remove_file(&notes).unwrap();
        }
        // A sparse gigabyte: refused by its size, before a byte is read.
        let file = std::fs::File::create(&notes).unwrap();
        file.set_len(1 << 30).unwrap();
        let e = skills.clone().read(uri).await.unwrap_err();
        assert_eq!(e.code(), Some("SKILL_CHANGED"), "{}", e.message());
        // At start, such a file is refused by name.
        let problems = Skills::load(&dir).err().unwrap().join("\n");
        assert!(
            problems.contains("notes.txt") && problems.contains("16 MiB"),
            "{problems}"
        );
        std::fs::remove_file(&notes).unwrap();
        if std::process::Command::new("mkfifo")
            .arg(&notes)
            .status()
            .is_ok_and(|s| s.success())
        {
            let problems = Skills::load(&dir).err().unwrap().join("\n");
            assert!(problems.contains("not a regular file"), "{problems}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_follow_the_agent_skills_rule() {
        for good in ["a", "pdf-processing", "v2", &"x".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "Pdf", "a_b", "a.b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frontmatter_is_kept_as_written() {
        let md = b"---\nname: calc\ndescription: Do sums\nmetadata:\n  author: me\nallowed-tools: [add]\n---\n# Calc\n";
        let map = parse_frontmatter(md, "calc").unwrap();
        assert_eq!(
            Value::Object(map),
            serde_json::json!({"name": "calc", "description": "Do sums",
                "metadata": {"author": "me"}, "allowed-tools": ["add"]})
        );
    }

    #[test]
    fn frontmatter_problems_are_named() {
        let cases: [(&[u8], &str); 5] = [
            (b"# no frontmatter", "does not begin"),
            (b"---\nname: calc\n", "no closing"),
            (
                b"---\nname: other\ndescription: x\n---\n",
                "directory is `calc`",
            ),
            (b"---\nname: calc\n---\n", "no `description`"),
            (b"---\n[1, 2]\n---\n", "not a mapping"),
        ];
        for (md, why) in cases {
            let e = parse_frontmatter(md, "calc").unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(encode_segment("a b%.md"), "a%20b%25.md");
        assert_eq!(encode_path(Path::new("refs/é.md")), "refs/%C3%A9.md");
    }
}
