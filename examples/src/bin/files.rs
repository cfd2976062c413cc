//! `files`: tools over one folder only, started as `files --root <dir> --password <pw>`.
//!
//! `read_file` and `list_dir` are always on; `login {password}` enables the hidden
//! `write_file` and `delete_file` for that session (seed 003's "Authenticated" example);
//! `reindex` reports progress in 10 steps about 100 ms apart and stops promptly when
//! cancelled; it runs as a task when the client can take one. A path outside the root (absolute, with `..`, or through a symbolic link that
//! leads out) is refused with `isError`.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use mcp_tool::prelude::*;

use mcp_tool::extract::{CancellationToken, Elicitation, Logger, Peer, Progress};

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

/// The files service: a root folder and the password that unlocks writing.
struct Files {
    root: PathBuf,
    password: String,
}

fn refused(why: impl Into<String>) -> ToolError {
    ToolError::new("PATH_REFUSED", why.into())
        .suggestion("give a path relative to the root folder, without `..`")
}

impl Files {
    /// The path of `rel` under the root, refusing anything that leads outside it: absolute
    /// paths, `..`, and symbolic links (in the folders or at the end) whose target is outside
    /// the root or missing. A link at the end is kept as a link (so deleting it deletes the
    /// link); reading or writing through it reaches its checked target.
    fn resolve(&self, rel: &str) -> Result<PathBuf, ToolError> {
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
        let (Some(parent), Some(name)) = (clean.parent(), clean.file_name()) else {
            return Ok(self.root.clone());
        };
        // The folders on the way must really be inside the root (links included).
        let parent = self.root.join(parent).canonicalize().map_err(|_| {
            ToolError::new("NOT_FOUND", format!("`{rel}`: the folder does not exist"))
        })?;
        if !parent.starts_with(&self.root) {
            return Err(refused(format!("`{rel}` leads outside the root folder")));
        }
        let path = parent.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            // Where the link leads; for a link to nothing (yet), where its target would be.
            let target = path.canonicalize().ok().or_else(|| {
                let to = parent.join(std::fs::read_link(&path).ok()?);
                Some(to.parent()?.canonicalize().ok()?.join(to.file_name()?))
            });
            if !target.is_some_and(|t| t.starts_with(&self.root)) {
                return Err(refused(format!(
                    "`{rel}` is a link that leads outside the root folder"
                )));
            }
        }
        Ok(path)
    }

    /// What a directory entry is, following links that stay inside the root.
    async fn describe(&self, entry: &tokio::fs::DirEntry) -> std::io::Result<Entry> {
        let mut meta = entry.metadata().await?;
        let mut kind = "file";
        if meta.file_type().is_symlink() {
            match tokio::fs::canonicalize(entry.path()).await {
                Ok(target) if target.starts_with(&self.root) => {
                    meta = tokio::fs::metadata(&target).await?
                }
                _ => kind = "link",
            }
        }
        if meta.is_dir() {
            kind = "dir";
        }
        Ok(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind: kind.to_owned(),
            size: meta.is_file().then_some(meta.len()),
        })
    }
}

#[tools]
impl Files {
    /// Read a text file under the root folder.
    #[tool(read_only, idempotent, open_world = false)]
    async fn read_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
    ) -> Result<String, ToolError> {
        let real = self.resolve(&path)?;
        tokio::fs::read_to_string(&real)
            .await
            .map_err(|e| ToolError::new("READ_FAILED", format!("`{path}`: {e}")))
    }

    /// List a directory under the root folder (the root itself by default).
    #[tool(read_only, idempotent, open_world = false)]
    async fn list_dir(
        &self,
        #[arg(description = "Directory relative to the root folder")] path: Option<String>,
    ) -> Result<Json<Listing>, ToolError> {
        let rel = path.unwrap_or_else(|| ".".to_owned());
        let real = self.resolve(&rel)?;
        let mut dir = tokio::fs::read_dir(&real)
            .await
            .map_err(|e| ToolError::new("LIST_FAILED", format!("`{rel}`: {e}")))?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.next_entry().await? {
            entries.push(self.describe(&entry).await?);
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Json(Listing { path: rel, entries }))
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
        let real = self.resolve(&path)?;
        tokio::fs::write(&real, content.as_bytes())
            .await
            .map_err(|e| ToolError::new("WRITE_FAILED", format!("`{path}`: {e}")))?;
        Ok(format!("wrote {} bytes to {path}", content.len()))
    }

    /// Delete a file under the root folder (after `login`).
    #[tool(hidden, destructive, idempotent, open_world = false)]
    async fn delete_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
        peer: Peer,
    ) -> Result<String, ToolError> {
        let real = self.resolve(&path)?;
        if real == self.root {
            return Err(refused("the root folder itself cannot be deleted"));
        }
        if tokio::fs::symlink_metadata(&real)
            .await
            .is_ok_and(|m| m.is_dir())
        {
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
        tokio::fs::remove_file(&real)
            .await
            .map_err(|e| ToolError::new("DELETE_FAILED", format!("`{path}`: {e}")))?;
        Ok(format!("deleted {path}"))
    }

    /// Summarize a text file with the client's model (sampling).
    #[tool(read_only, open_world = false)]
    async fn summarize_file(
        &self,
        #[arg(description = "Path relative to the root folder")] path: String,
        ctx: Ctx,
    ) -> Result<String, ToolError> {
        let text = self.read_file(path).await?;
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
                files = std::fs::read_dir(&self.root).map_or(0, Iterator::count);
            }
            progress.report(f64::from(step), 10.0, &format!("step {step} of 10"));
        }
        debug_assert!(!cancel.is_cancelled());
        log.info("reindex finished");
        format!("indexed {files} entries")
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: files --root <dir> --password <password> [list | schema | call <tool> [json]]"
    );
    std::process::exit(2)
}

fn main() -> mcp_tool::Result<()> {
    let mut args = std::env::args();
    let mut rest = vec![args.next().unwrap_or_else(|| "files".to_owned())];
    let (mut root, mut password) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = Some(args.next().unwrap_or_else(|| usage())),
            "--password" => password = Some(args.next().unwrap_or_else(|| usage())),
            _ => rest.push(arg),
        }
    }
    let (Some(root), Some(password)) = (root, password) else {
        usage()
    };
    let root = match Path::new(&root).canonicalize() {
        Ok(r) if r.is_dir() => r,
        _ => {
            eprintln!("error: --root `{root}` is not a folder");
            std::process::exit(2)
        }
    };
    Server::new("files", env!("CARGO_PKG_VERSION"))
        .service(Files { root, password })
        .run_with_args(rest)
}
