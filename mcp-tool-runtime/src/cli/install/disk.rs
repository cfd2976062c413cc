//! The configuration file on disk: read within a bound, written through a temporary file
//! renamed over it if it is still what was read, under a lock other installs take too.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How long an install waits for another one writing the same file.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// An exclusive lock on `.NAME.lock` beside `file` (created for this, and left there: a lock
/// file removed while another install waits on it would let a third take a new one at
/// once), held until the returned file is dropped; waited for at most [`LOCK_WAIT`].
pub(super) fn lock_file(file: &Path) -> Result<fs::File, String> {
    let folder = file.parent().unwrap_or(Path::new("."));
    let mut name = std::ffi::OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(".lock");
    let path = folder.join(name);
    let failed = |e: io::Error| format!("cannot lock `{}`: {e}; nothing written", path.display());
    // Only a host that is installed gets here: its folder is missing no more than a level.
    fs::create_dir_all(folder).map_err(failed)?;
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let lock = options.open(&path).map_err(failed)?;
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "`{}` is being written by another install (it holds `{}`) for over {} s; nothing written, try again",
                    file.display(),
                    path.display(),
                    LOCK_WAIT.as_secs()
                ));
            }
            Err(fs::TryLockError::Error(e)) => return Err(failed(e)),
        }
    }
}

/// The largest configuration file read: far beyond any host's (a large `~/.claude.json` is a
/// few tens of MiB), so that a wrong path cannot take the memory.
const MAX_CONFIG_BYTES: u64 = 256 << 20;

/// The bytes of a configuration file, `None` when there is none; a file that is not a
/// regular file (a folder, a FIFO that would block, a device) or is over
/// [`MAX_CONFIG_BYTES`] is an error, and is not read.
fn read_bytes(file: &Path) -> io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let opened = match fs::metadata(file) {
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is not a regular file",
            ));
        }
        Ok(meta) if meta.len() > MAX_CONFIG_BYTES => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("it is over {} MiB", MAX_CONFIG_BYTES >> 20),
            ));
        }
        Ok(_) => fs::File::open(file),
        Err(e) => Err(e),
    };
    let mut bytes = Vec::new();
    match opened {
        Ok(f) => {
            f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
            if bytes.len() as u64 > MAX_CONFIG_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("it is over {} MiB", MAX_CONFIG_BYTES >> 20),
                ));
            }
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The file's text, `None` when there is none.
pub(super) fn read(file: &Path) -> Result<Option<String>, String> {
    let bytes = read_bytes(file)
        .map_err(|e| format!("cannot read `{}`: {e}; left untouched", file.display()))?;
    bytes
        .map(|bytes| {
            String::from_utf8(bytes).map_err(|e| {
                format!(
                    "`{}` is not UTF-8 text ({e}); left untouched",
                    file.display()
                )
            })
        })
        .transpose()
}

/// Writes `text` to `file` if the file still holds `before` (returns `false` if it changed),
/// `before` first kept at `backup`. Each write goes to a temporary file in the same folder,
/// renamed over the old one, with the old one's permissions.
pub(super) fn write(
    file: &Path,
    before: Option<&str>,
    text: &str,
    backup: Option<&Path>,
) -> io::Result<bool> {
    let folder = file.parent().unwrap_or(Path::new("."));
    let permissions = fs::metadata(file).ok().map(|m| m.permissions());
    if let (Some(before), Some(backup)) = (before, backup) {
        replace(folder, backup, before, permissions.clone())?;
    } else {
        // Only a host that is installed gets here: its folder is missing no more than a
        // level or so (VS Code's `User` before its first setting).
        fs::create_dir_all(folder)?;
    }
    let temporary = temporary_file(folder, file, text, permissions)?;
    let now = match read_bytes(file) {
        Ok(bytes) => bytes,
        Err(e) => {
            let _ = fs::remove_file(&temporary);
            return Err(e);
        }
    };
    if now.as_deref() != before.map(str::as_bytes) {
        let _ = fs::remove_file(&temporary);
        return Ok(false);
    }
    fs::rename(&temporary, file).inspect_err(|_| {
        let _ = fs::remove_file(&temporary);
    })?;
    Ok(true)
}

/// Replaces `file` with `text` at once.
fn replace(
    folder: &Path,
    file: &Path,
    text: &str,
    permissions: Option<fs::Permissions>,
) -> io::Result<()> {
    let temporary = temporary_file(folder, file, text, permissions)?;
    fs::rename(&temporary, file).inspect_err(|_| {
        let _ = fs::remove_file(&temporary);
    })
}

/// `text` in a new file `.NAME.PID.tmp` beside `file`, flushed to disk; with `permissions`,
/// else readable by its owner only (the environment may hold secrets).
fn temporary_file(
    folder: &Path,
    file: &Path,
    text: &str,
    permissions: Option<fs::Permissions>,
) -> io::Result<PathBuf> {
    let mut name = std::ffi::OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(format!(".{}.tmp", std::process::id()));
    let path = folder.join(name);
    let _ = fs::remove_file(&path);
    match write_new(&path, text, permissions) {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Creates the file `path` with `text`, flushed to disk.
fn write_new(path: &Path, text: &str, permissions: Option<fs::Permissions>) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(path)?;
    out.write_all(text.as_bytes())?;
    if let Some(permissions) = permissions {
        out.set_permissions(permissions)?;
    }
    out.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_or_a_file_over_the_bound_is_refused_unread() {
        let dir =
            std::env::temp_dir().join(format!("mcp-tool-install-read-{}", std::process::id()));
        fs::create_dir_all(dir.join("folder.json")).unwrap();
        let e = read(&dir.join("folder.json")).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        // Sparse: its length is over the bound, its blocks nothing.
        let huge = dir.join("huge.json");
        fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_CONFIG_BYTES + 1)
            .unwrap();
        let e = read(&huge).unwrap_err();
        assert!(
            e.contains("over 256 MiB") && e.contains("left untouched"),
            "{e}"
        );
        assert_eq!(read(&dir.join("absent.json")), Ok(None));
        let _ = fs::remove_dir_all(&dir);
    }
}
