//! `install <host>`: writes this server into the MCP configuration of a host (Claude Desktop,
//! Claude Code, Cursor, VS Code) as a stdio server: the binary's absolute path, the server's
//! arguments and environment. The entry is merged into the file (see `merge`): every other
//! byte of it is kept, an entry of the same name is replaced, the file as it was is kept
//! beside it (`FILE.bak`), and the new file replaces it at once (a temporary file renamed).
//! Installs at once take turns on a lock file beside it (`.FILE.lock`).

mod disk;
mod merge;

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::ser::SerializeMap;

use self::disk::{lock, read, write};
use super::{cli_error, write_out};

/// The MCP hosts `install` writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Host {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
}

impl Host {
    const ALL: [Host; 4] = [
        Host::ClaudeDesktop,
        Host::ClaudeCode,
        Host::Cursor,
        Host::VsCode,
    ];

    /// The host's name on the command line.
    fn id(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
        }
    }

    /// The host's name for people.
    fn label(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "Claude Desktop",
            Host::ClaudeCode => "Claude Code",
            Host::Cursor => "Cursor",
            Host::VsCode => "VS Code",
        }
    }

    /// The top-level key of the file that holds the servers.
    fn servers_key(self) -> &'static str {
        match self {
            Host::VsCode => "servers",
            _ => "mcpServers",
        }
    }

    /// The entry's `type`, for the hosts whose files name it.
    fn entry_type(self) -> Option<&'static str> {
        match self {
            Host::ClaudeCode | Host::VsCode => Some("stdio"),
            Host::ClaudeDesktop | Host::Cursor => None,
        }
    }

    /// What makes the host read the new entry.
    fn reload_hint(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "restart Claude Desktop to start it",
            Host::ClaudeCode => "new Claude Code sessions start it (`claude mcp list` shows it)",
            Host::Cursor => "restart Cursor (or reload its MCP servers) to start it",
            Host::VsCode => "VS Code starts it (the command `MCP: List Servers` shows it)",
        }
    }

    /// The host's configuration file, and what is missing if the host seems not installed.
    fn locate(self) -> Result<(PathBuf, Option<String>), String> {
        let home = std::env::home_dir()
            .filter(|h| !h.as_os_str().is_empty())
            .ok_or("no home folder: HOME is not set")?;
        let folder = match self {
            Host::ClaudeDesktop => app_config(&home).join("Claude"),
            Host::ClaudeCode => {
                let file = home.join(".claude.json");
                let folder = home.join(".claude");
                let missing = (!file.is_file() && !folder.is_dir()).then(|| {
                    format!(
                        "neither `{}` nor the folder `{}` exists",
                        file.display(),
                        folder.display()
                    )
                });
                return Ok((file, missing));
            }
            Host::Cursor => home.join(".cursor"),
            Host::VsCode => app_config(&home).join("Code").join("User"),
        };
        let file = folder.join(match self {
            Host::ClaudeDesktop => "claude_desktop_config.json",
            _ => "mcp.json",
        });
        let missing =
            (!folder.is_dir()).then(|| format!("the folder `{}` does not exist", folder.display()));
        Ok((file, missing))
    }
}

/// The folder applications keep their settings in: `~/Library/Application Support` on macOS,
/// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (default `~/.config`) elsewhere.
fn app_config(home: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        return home.join("Library").join("Application Support");
    }
    let (variable, default) = if cfg!(windows) {
        ("APPDATA", home.join("AppData").join("Roaming"))
    } else {
        ("XDG_CONFIG_HOME", home.join(".config"))
    };
    // The XDG specification ignores a relative path.
    std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or(default)
}

/// What `install` was asked for.
pub(super) struct InstallOptions {
    host: Host,
    /// The entry's name (default: the server's).
    name: Option<String>,
    /// The server's environment, in the order given.
    env: Vec<(String, String)>,
    /// The server's arguments (after `--`).
    args: Vec<String>,
    dry_run: bool,
}

fn hosts() -> String {
    let ids: Vec<&str> = Host::ALL.iter().map(|h| h.id()).collect();
    ids.join(", ")
}

/// Reads `install`'s arguments (after the word `install`).
pub(super) fn parse(args: &[String]) -> Result<InstallOptions, String> {
    let mut host = None;
    let mut name = None;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut server_args = Vec::new();
    let mut dry_run = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let value = args.get(i + 1).filter(|v| *v != "--");
        match arg {
            "--" => {
                server_args = args[i + 1..].to_vec();
                break;
            }
            "--dry-run" => dry_run = true,
            "--name" => match value.filter(|v| !v.is_empty()) {
                Some(v) if v.chars().any(char::is_control) || v.chars().count() > 100 => {
                    return Err(format!(
                        "`--name {v:?}`: an entry's name is at most 100 characters, none of them a control character"
                    ));
                }
                Some(v) => {
                    name = Some(v.clone());
                    i += 1;
                }
                None => return Err("`--name` needs the entry's name".into()),
            },
            "--env" => {
                let Some(v) = value else {
                    return Err("`--env` needs KEY=VALUE (or KEY, to copy it from here)".into());
                };
                let (key, val) = match v.split_once('=') {
                    Some((key, val)) => (key.to_owned(), val.to_owned()),
                    None => {
                        let val = std::env::var(v).map_err(|_| {
                            format!("`--env {v}`: {v} is not set here (write {v}=VALUE)")
                        })?;
                        (v.clone(), val)
                    }
                };
                if key.is_empty() || key.contains('\0') || val.contains('\0') {
                    return Err(format!("`--env`: `{key}` is not a variable's name"));
                }
                env.retain(|(k, _)| *k != key);
                env.push((key, val));
                i += 1;
            }
            flag if flag.starts_with('-') && flag.len() > 1 => {
                return Err(format!(
                    "unknown option `{flag}` of `install` (the server's own go after `--`)"
                ));
            }
            word if host.is_none() => {
                let found = Host::ALL.into_iter().find(|h| h.id() == word);
                host = Some(found.ok_or_else(|| {
                    format!("unknown host `{word}`: `install` knows {}", hosts())
                })?);
            }
            word => {
                return Err(format!(
                    "`install` takes one host (`{word}` is another word; the server's arguments go after `--`)"
                ));
            }
        }
        i += 1;
    }
    let host = host.ok_or_else(|| format!("`install` needs a host: {}", hosts()))?;
    Ok(InstallOptions {
        host,
        name,
        env,
        args: server_args,
        dry_run,
    })
}

/// The absolute path of this binary, symbolic links resolved: what a host launches.
pub(super) fn server_binary() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    // Windows' canonical paths are `\\?\C:\…`, which not every host takes.
    let exe = if cfg!(windows) {
        exe
    } else {
        fs::canonicalize(&exe).map_err(|e| format!("cannot resolve `{}`: {e}", exe.display()))?
    };
    exe.into_os_string().into_string().map_err(|p| {
        format!(
            "the binary's path is not UTF-8: {}",
            PathBuf::from(p).display()
        )
    })
}

/// The server's entry in a host's file: `{"type"?, "command", "args", "env"?}`.
#[derive(Serialize)]
struct Entry<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: &'a str,
    args: &'a [String],
    #[serde(skip_serializing_if = "Env::is_empty")]
    env: Env<'a>,
}

/// The entry's environment as a JSON object in the order given; `masked` writes `***` for
/// the values of variables whose names look secret.
struct Env<'a> {
    vars: &'a [(String, String)],
    masked: bool,
}

impl Env<'_> {
    fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

impl Serialize for Env<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.vars.len()))?;
        for (key, value) in self.vars {
            let value = if self.masked && looks_secret(key) {
                "***"
            } else {
                value
            };
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Whether a variable's name says its value is a secret, not to be printed.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "KEY",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Runs `install`; returns the exit status.
pub(super) fn install(server_name: &str, bin: &str, options: &InstallOptions) -> i32 {
    match run(server_name, options) {
        Ok(report) => match write_out(&report) {
            Ok(()) => 0,
            Err(_) => 1,
        },
        Err(message) => cli_error(bin, &message),
    }
}

/// Does the work; returns what to print, or why nothing was written.
fn run(server_name: &str, options: &InstallOptions) -> Result<String, String> {
    let host = options.host;
    let name = options.name.as_deref().unwrap_or(server_name);
    let command = server_binary()?;
    let (file, missing) = host.locate()?;
    if let Some(missing) = missing {
        return Err(format!(
            "{} does not seem to be installed here ({missing}); nothing written (the entry would go to `{}`)",
            host.label(),
            file.display()
        ));
    }
    let entry = |masked| Entry {
        kind: host.entry_type(),
        command: &command,
        args: &options.args,
        env: Env {
            vars: &options.env,
            masked,
        },
    };
    // The file itself when it is a symbolic link's target: the link stays.
    let target = match fs::symlink_metadata(&file) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(&file)
            .map_err(|e| format!("cannot resolve the link `{}`: {e}", file.display()))?,
        _ => file.clone(),
    };
    let shown = serde_json::to_string_pretty(&entry(true)).map_err(|e| e.to_string())?;
    // Installs at once take turns: each holds the lock beside the file around its read,
    // merge and write, so that none writes over an entry another has just added. The host
    // does not take the lock: its own writes are caught by the comparison before the rename.
    let _lock = if options.dry_run {
        None
    } else {
        Some(lock(&target)?)
    };
    // The host may rewrite its file meanwhile (Claude Code does, often): the new text is
    // written only if the file is still what it was read as, else it is merged again.
    for _ in 0..5 {
        let before = read(&target)?;
        let merged = merge::merge(
            before.as_deref().unwrap_or(""),
            host.servers_key(),
            name,
            &entry(false),
        )
        .map_err(|e| format!("`{}`: {e}; left untouched", target.display()))?;
        let backup = before.as_ref().map(|_| backup_path(&target));
        let report = summary(
            host,
            name,
            &file,
            &target,
            &merged,
            backup.as_deref(),
            options,
        );
        if options.dry_run {
            return Ok(format!("{report}{shown}\n"));
        }
        match write(&target, before.as_deref(), &merged.text, backup.as_deref()) {
            Ok(true) => {
                return Ok(format!("{report}{shown}\n{}.\n", host.reload_hint()));
            }
            Ok(false) => continue,
            Err(e) => return Err(format!("cannot write `{}`: {e}", target.display())),
        }
    }
    Err(format!(
        "`{}` kept changing while being written (is {} rewriting it?); try again",
        target.display(),
        host.label()
    ))
}

/// `FILE.bak`, beside `file`.
fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    file.with_file_name(name)
}

/// What was (or, in a dry run, would be) done.
fn summary(
    host: Host,
    name: &str,
    file: &Path,
    target: &Path,
    merged: &merge::Merged,
    backup: Option<&Path>,
    options: &InstallOptions,
) -> String {
    let dry = options.dry_run;
    let mut out = String::new();
    if dry {
        out.push_str("dry run: nothing is written\n");
    }
    out.push_str(&format!(
        "{} `{name}` in {}: {}\n",
        if dry { "would install" } else { "installed" },
        host.label(),
        file.display()
    ));
    if target != file {
        out.push_str(&format!("  (a link to {})\n", target.display()));
    }
    let others = match merged.others {
        0 => String::new(),
        1 => " beside 1 other server".to_owned(),
        n => format!(" beside {n} other servers"),
    };
    out.push_str(&match (merged.replaced, backup.is_some(), dry) {
        (true, _, false) => format!("  replaced the existing entry `{name}`{others}\n"),
        (true, _, true) => format!("  would replace the existing entry `{name}`{others}\n"),
        (false, true, false) => format!("  added a new entry{others}\n"),
        (false, true, true) => format!("  would add a new entry{others}\n"),
        (false, false, false) => "  created the file\n".to_owned(),
        (false, false, true) => "  would create the file\n".to_owned(),
    });
    if let Some(backup) = backup {
        out.push_str(&format!(
            "  {} {} (an older backup there is replaced)\n",
            if dry {
                "a backup of the file would go to"
            } else {
                "backup of the file as it was:"
            },
            backup.display()
        ));
    }
    out.push_str(&format!(
        "the entry (values of secret-looking variables shown as ***):\n{}: ",
        serde_json::to_string(name).unwrap_or_default()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_command_line_names_a_host_and_the_servers_arguments_follow_two_dashes() {
        let o = parse(&args(&[
            "cursor",
            "--name",
            "mine",
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--env",
            "A=2",
            "--dry-run",
            "--",
            "--http",
            "127.0.0.1:9000",
            "--name",
        ]))
        .expect("parsed");
        assert_eq!(o.host, Host::Cursor);
        assert_eq!(o.name.as_deref(), Some("mine"));
        let env: Vec<(&str, &str)> = o.env.iter().map(|(k, v)| (&**k, &**v)).collect();
        assert_eq!(env, [("B", "x=y"), ("A", "2")]);
        assert_eq!(o.args, ["--http", "127.0.0.1:9000", "--name"]);
        assert!(o.dry_run);

        for (line, error) in [
            (&["nowhere"][..], "unknown host `nowhere`"),
            (&[], "`install` needs a host"),
            (&["vscode", "--http"], "unknown option `--http`"),
            (&["vscode", "cursor"], "takes one host"),
            (&["vscode", "--env", "=1"], "is not a variable's name"),
            (&["vscode", "--name"], "`--name` needs"),
            (&["vscode", "--name", "a\nb"], "control character"),
            (&["vscode", "--env", "--"], "`--env` needs"),
        ] {
            let e = parse(&args(line)).err().unwrap_or_default();
            assert!(e.contains(error), "{line:?}: {e}");
        }
    }

    #[test]
    fn the_entry_is_written_in_the_hosts_shape_with_secrets_masked_when_shown() {
        let vars = [
            ("API_TOKEN".to_owned(), "t0ps3cret".to_owned()),
            ("MODE".to_owned(), "fast".to_owned()),
        ];
        let command_args = args(&["--x"]);
        let entry = |host: Host, vars, masked| Entry {
            kind: host.entry_type(),
            command: "/bin/calc",
            args: &command_args,
            env: Env { vars, masked },
        };
        let json = |e: &Entry<'_>| serde_json::to_string(e).expect("JSON");
        assert_eq!(
            json(&entry(Host::VsCode, &vars, false)),
            r#"{"type":"stdio","command":"/bin/calc","args":["--x"],"env":{"API_TOKEN":"t0ps3cret","MODE":"fast"}}"#
        );
        assert_eq!(
            json(&entry(Host::Cursor, &vars, true)),
            r#"{"command":"/bin/calc","args":["--x"],"env":{"API_TOKEN":"***","MODE":"fast"}}"#
        );
        assert_eq!(
            json(&entry(Host::ClaudeDesktop, &[], false)),
            r#"{"command":"/bin/calc","args":["--x"]}"#
        );
        assert!(looks_secret("github_pat_key") && looks_secret("DB_PASSWORD"));
        assert!(!looks_secret("RUST_LOG"));
    }
}
