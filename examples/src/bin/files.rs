//! `files`: tools over one folder only, started as `files --root <dir> --password <pw>`.
//!
//! `read_file` and `list_dir` are always on; `login {password}` enables the hidden
//! `write_file` and `delete_file` for that session (seed 003's "Authenticated" example);
//! `reindex` reports progress in 10 steps about 100 ms apart and stops promptly when
//! cancelled; it runs as a task when the client can take one.
//!
//! Every file operation goes through one directory handle on the root (`cap-std`): paths are
//! resolved beneath it by the kernel (`openat2` with `RESOLVE_BENEATH` on Linux), so no path —
//! absolute, with `..`, or through symbolic links however chained, dangling or swapped while
//! the call runs — reaches outside the root. A path that tries is refused with `isError`.
//!
//! It also serves Agent Skills on using those tools by the skills extension: the folders of
//! `examples/skills` (or of `--skills <dir>`), each a `SKILL.md` and the files it refers to.
//!
//! Beside the tools, defined the same way: the prompt `review_file {path, focus?}` (the file's
//! text and what to look at) and the resource template `files://{name}` (a text file at the
//! top of the root); both complete a name from the root's entries.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use mcp_tool::prelude::*;

use mcp_tool::extract::{CancellationToken, Elicitation, Logger, Peer, Progress};
use mcp_tool::prompt::PromptMessage;

/// The largest file `read_file` returns (and `summarize_file` sends to the model).
const MAX_READ: u64 = 4 << 20;

/// One entry of a directory listing.
#[derive(Serialize, JsonSchema)]
struct Entry {
    /// The entry's name.
    name: String,
    /// `file`, `dir`, or `link` (a symbolic link that leads outside the root or nowhere).
    kind: String,
    /// The size in bytes (files only).
    size: Option<u64>,
}

/// A directory listing.
#[derive(Serialize, JsonSchema)]
struct Listing {
    /// The listed directory, relative to the root.
    path: String,
    /// Its entries, sorted by name.
    entries: Vec<Entry>,
}

/// The answer to "delete this file?".
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Delete the file?
    confirm: bool,
}

/// The files service: a handle on the root folder and the password that unlocks writing.
struct Files {
    root: Arc<Dir>,
    password: String,
}

fn refused(why: impl Into<String>) -> ToolError {
    ToolError::new("PATH_REFUSED", why.into())
        .suggestion("give a path relative to the root folder, without `..`")
}

/// A path relative to the root, as written: absolute paths and `..` are refused before the
/// file system is asked anything.
fn relative(rel: &str) -> Result<PathBuf, ToolError> {
    let mut clean = PathBuf::new();
    for part in Path::new(rel).components() {
        match part {
            Component::Normal(name) => clean.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err(refused(format!("`{rel}` goes up with `..`"))),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refused(format!("`{rel}` is an absolute path")));
            }
        }
    }
    if clean.as_os_str().is_empty() {
        clean.push(".");
    }
    Ok(clean)
}

/// A file-system error as a tool error: an escape through links is refused, a missing file is
/// `NOT_FOUND`, anything else is `code`.
fn fs_error(code: &'static str, rel: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        // cap-std's word for a path that tried to leave the root (and the kernel's EXDEV).
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::CrossesDevices
            if e.to_string().contains("outside") || e.raw_os_error() == Some(18) =>
        {
            refused(format!("`{rel}` leads outside the root folder"))
        }
        std::io::ErrorKind::NotFound => {
            ToolError::new("NOT_FOUND", format!("`{rel}`: no such file or folder"))
        }
        _ => ToolError::new(code, format!("`{rel}`: {e}")),
    }
}

/// `O_NONBLOCK`: opening a FIFO for reading must not wait for a writer.
#[cfg(any(target_os = "linux", target_os = "android"))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const O_NONBLOCK: i32 = 0x0004;

impl Files {
    /// Runs `op` on the root handle on the blocking pool.
    async fn on_root<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Dir) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || op(&root))
            .await
            .map_err(|e| ToolError::new("INTERNAL", format!("the file operation failed: {e}")))?
    }

    /// The text of a regular file under the root, at most [`MAX_READ`] bytes.
    async fn read_text(&self, rel: String) -> Result<String, ToolError> {
        let path = relative(&rel)?;
        self.on_root(move |root| {
            let mut options = OpenOptions::new();
            options.read(true).custom_flags(O_NONBLOCK);
            let file = root
                .open_with(&path, &options)
                .map_err(|e| fs_error("READ_FAILED", &rel, &e))?;
            let meta = file
                .metadata()
                .map_err(|e| fs_error("READ_FAILED", &rel, &e))?;
            if !meta.is_file() {
                return Err(ToolError::new(
                    "READ_FAILED",
                    format!("`{rel}` is not a regular file"),
                ));
            }
            if meta.len() > MAX_READ {
                return Err(ToolError::new(
                    "TOO_LARGE",
                    format!(
                        "`{rel}` has {} bytes; at most {MAX_READ} are read",
                        meta.len()
                    ),
                ));
            }
            let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
            file.take(MAX_READ + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| fs_error("READ_FAILED", &rel, &e))?;
            String::from_utf8(bytes)
                .map_err(|_| ToolError::new("READ_FAILED", format!("`{rel}` is not UTF-8 text")))
        })
        .await
    }
}

/// What a directory entry is, following links that stay inside the root.
fn describe(root: &Dir, dir: &Path, entry: &cap_std::fs::DirEntry) -> std::io::Result<Entry> {
    let name = entry.file_name();
    let mut meta = entry.metadata()?;
    let mut kind = "file";
    if entry.file_type()?.is_symlink() {
        match root.metadata(dir.join(&name)) {
            Ok(target) => meta = target,
            Err(_) => kind = "link",
        }
    }
    if kind != "link" && meta.is_dir() {
        kind = "dir";
    }
    Ok(Entry {
        name: name.to_string_lossy().into_owned(),
        kind: kind.to_owned(),
        size: (kind == "file" && meta.is_file()).then_some(meta.len()),
    })
}

#[tools]
impl Files {
    /// Read a text file under the root folder.
    #[tool(read_only, idempotent, open_world = false)]
    async fn read_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
    ) -> Result<String, ToolError> {
        self.read_text(path).await
    }

    /// List a directory under the root folder (the root itself by default).
    #[tool(read_only, idempotent, open_world = false)]
    async fn list_dir(
        &self,
        #[arg(description = "Directory relative to the root folder")] path: Option<String>,
    ) -> Result<Json<Listing>, ToolError> {
        let rel = path.unwrap_or_else(|| ".".to_owned());
        let dir = relative(&rel)?;
        let shown = rel.clone();
        let mut entries = self
            .on_root(move |root| {
                let listing = root
                    .read_dir(&dir)
                    .map_err(|e| fs_error("LIST_FAILED", &rel, &e))?;
                let mut entries = Vec::new();
                for entry in listing {
                    let entry = entry.map_err(|e| fs_error("LIST_FAILED", &rel, &e))?;
                    entries.push(
                        describe(root, &dir, &entry)
                            .map_err(|e| fs_error("LIST_FAILED", &rel, &e))?,
                    );
                }
                Ok(entries)
            })
            .await?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Json(Listing {
            path: shown,
            entries,
        }))
    }

    /// Log in with the server's password to enable `write_file` and `delete_file` for this session.
    #[tool(idempotent, open_world = false)]
    async fn login(
        &self,
        #[arg(description = "The server's password")] password: String,
    ) -> Result<ToolResult, ToolError> {
        if password == self.password {
            Ok(
                ToolResult::text("Authenticated: write_file and delete_file are enabled")
                    .enable_tools(["write_file", "delete_file"]),
            )
        } else {
            Err(ToolError::new("BAD_PASSWORD", "the password is wrong")
                .suggestion("ask the operator for the password"))
        }
    }

    /// Write a text file under the root folder (after `login`).
    #[tool(hidden, destructive, idempotent, open_world = false)]
    async fn write_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
        #[arg(description = "The file's new content")] content: String,
    ) -> Result<String, ToolError> {
        let rel = relative(&path)?;
        let shown = path.clone();
        let bytes = content.len();
        self.on_root(move |root| {
            root.write(&rel, content.as_bytes())
                .map_err(|e| fs_error("WRITE_FAILED", &path, &e))
        })
        .await?;
        Ok(format!("wrote {bytes} bytes to {shown}"))
    }

    /// Delete a file under the root folder (after `login`).
    #[tool(hidden, destructive, idempotent, open_world = false)]
    async fn delete_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
        peer: Peer,
    ) -> Result<String, ToolError> {
        let rel = relative(&path)?;
        if rel == Path::new(".") {
            return Err(refused("the root folder itself cannot be deleted"));
        }
        let (check, shown) = (rel.clone(), path.clone());
        let is_dir = self
            .on_root(move |root| {
                let meta = root
                    .symlink_metadata(&check)
                    .map_err(|e| fs_error("DELETE_FAILED", &shown, &e))?;
                // A link that leads outside (or nowhere outside) is not the root's to delete.
                if meta.file_type().is_symlink()
                    && let Err(e) = root.metadata(&check)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    return Err(fs_error("DELETE_FAILED", &shown, &e));
                }
                Ok(meta.is_dir())
            })
            .await?;
        if is_dir {
            return Err(ToolError::new(
                "DELETE_FAILED",
                format!("`{path}` is a folder; only files are deleted"),
            ));
        }
        // Ask the user first when the client can show a form.
        if peer.client().has_capability("elicitation") {
            match peer.elicit::<Confirm>(format!("Delete `{path}`?")).await? {
                Elicitation::Accept(Confirm { confirm: true }) => {}
                _ => return Ok(format!("{path} was not deleted")),
            }
        }
        let shown = path.clone();
        // A link is removed itself, never what it points at.
        self.on_root(move |root| {
            root.remove_file(&rel)
                .map_err(|e| fs_error("DELETE_FAILED", &shown, &e))
        })
        .await?;
        Ok(format!("deleted {path}"))
    }

    /// Summarize a text file with the client's model (sampling).
    #[tool(read_only, open_world = false)]
    async fn summarize_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
        ctx: Ctx,
    ) -> Result<String, ToolError> {
        let text = self.read_text(path).await?;
        ctx.sample_text(
            format!("Summarize this file in one sentence:\n\n{text}"),
            200,
        )
        .await
    }

    /// Rebuild the search index of the root folder, reporting progress in 10 steps (runs as a
    /// task when the client can take one).
    #[tool(read_only, idempotent, open_world = false, task = "optional")]
    async fn reindex(&self, progress: Progress, log: Logger, cancel: CancellationToken) -> String {
        log.info("reindex started");
        let mut files = 0_usize;
        for step in 1..=10_u32 {
            // Dropping this future (cancellation) stops here, at the next await.
            tokio::time::sleep(Duration::from_millis(100)).await;
            if step == 1 {
                files = self
                    .on_root(|root| Ok(root.entries().map_or(0, Iterator::count)))
                    .await
                    .unwrap_or(0);
            }
            progress.report(f64::from(step), 10.0, &format!("step {step} of 10"));
        }
        debug_assert!(!cancel.is_cancelled());
        log.info("reindex finished");
        format!("indexed {files} entries")
    }

    /// Review a text file under the root folder: its text, and what to look at.
    #[prompt(title = "Review a file")]
    async fn review_file(
        &self,
        #[arg(
            description = "Path relative to the root folder",
            complete = Self::complete_name
        )]
        path: String,
        #[arg(description = "What to look at (anything worth improving, by default)")]
        focus: Option<String>,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        let text = self.read_text(path.clone()).await?;
        let focus = focus.unwrap_or_else(|| "anything worth improving".to_owned());
        Ok(vec![
            PromptMessage::user(format!("Review `{path}`, looking at {focus}.")),
            PromptMessage::user(text),
        ])
    }

    /// A text file at the top of the root folder, by name.
    #[resource_template("files://{name}", title = "File", mime_type = "text/plain")]
    async fn file(
        &self,
        #[arg(complete = Self::complete_name)] name: String,
    ) -> Result<String, ToolError> {
        self.read_text(name).await
    }

    /// The names at the top of the root folder that start with what was typed, sorted.
    fn complete_name(&self, typed: &str) -> Vec<String> {
        let Ok(entries) = self.root.entries() else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(typed))
            .collect();
        names.sort();
        names
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: files --root <dir> --password <password> [--skills <dir>] [list | schema | call <tool> [json]]"
    );
    std::process::exit(2)
}

fn main() -> mcp_tool::Result<()> {
    let mut args = std::env::args();
    let mut rest = vec![args.next().unwrap_or_else(|| "files".to_owned())];
    let (mut root, mut password) = (None, None);
    let mut skills = concat!(env!("CARGO_MANIFEST_DIR"), "/skills").to_owned();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = Some(args.next().unwrap_or_else(|| usage())),
            "--password" => password = Some(args.next().unwrap_or_else(|| usage())),
            "--skills" => skills = args.next().unwrap_or_else(|| usage()),
            _ => rest.push(arg),
        }
    }
    let (Some(root), Some(password)) = (root, password) else {
        usage()
    };
    let root = match Dir::open_ambient_dir(&root, cap_std::ambient_authority()) {
        Ok(dir) => Arc::new(dir),
        Err(e) => {
            eprintln!("error: --root `{root}` is not a folder: {e}");
            std::process::exit(2)
        }
    };
    let server = Server::new("files", env!("CARGO_PKG_VERSION")).service(Files { root, password });
    #[cfg(feature = "skills")]
    let server = server.skills(skills);
    #[cfg(not(feature = "skills"))]
    let _ = skills;
    server.run_with_args(rest)
}
