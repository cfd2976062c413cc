//! `install <host>` and `inspect`, run as a person runs them: the `calc` example binary with
//! HOME and XDG_CONFIG_HOME in a temporary folder (APPDATA unset), for each host (Claude
//! Desktop, Claude Code, Cursor, VS Code): a new file, a file whose other servers and keys
//! must stay byte for byte, a broken file refused and left untouched, a dry run, a host that
//! is not installed, and a second install of the same name. And `inspect` drives the real MCP
//! Inspector (the copy `bash interop/setup.sh` installs in `interop/node_modules`, at the
//! version `interop/package.json` pins), npm kept offline so npx must take that copy.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use mcp_tool_tests::{TempDir, example_bin, interop_dir, wait_bounded};
use serde_json::{Value, json};

/// Generous: `install` takes milliseconds, the Inspector a few seconds.
const LIMIT: Duration = Duration::from_secs(120);

/// What a run of the binary gave.
struct Run {
    status: ExitStatus,
    out: String,
    err: String,
}

impl Run {
    fn succeeded(self) -> Run {
        assert!(
            self.status.success(),
            "{}\n--- stdout:\n{}\n--- stderr:\n{}",
            self.status,
            self.out,
            self.err
        );
        self
    }

    /// Stdout says all of `words`.
    fn says(&self, words: &[&str]) {
        for word in words {
            assert!(self.out.contains(word), "{}", self.out);
        }
    }

    /// A command-line error (status 2) whose message says all of `words`.
    fn refused(self, words: &[&str]) -> Run {
        assert_eq!(self.status.code(), Some(2), "{}\n{}", self.out, self.err);
        for word in words {
            assert!(self.err.contains(word), "no `{word}` in:\n{}", self.err);
        }
        self
    }
}

fn run_command(command: &mut Command) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let (status, out, err) = wait_bounded(&mut child, LIMIT).expect("it ends");
    Run { status, out, err }
}

fn calc() -> &'static str {
    example_bin("calc")
}

/// The absolute path an entry must name: the binary, links resolved.
fn calc_path() -> String {
    std::fs::canonicalize(calc())
        .expect("calc exists")
        .to_str()
        .expect("a UTF-8 path")
        .to_owned()
}

/// A home folder for one test, and one host.
struct Home {
    dir: TempDir,
    host: &'static str,
}

impl Home {
    /// An empty home; with the host's folder when `installed`.
    fn new(host: &'static str, installed: bool) -> Home {
        let home = Home {
            dir: TempDir::new(&format!("install-{host}")),
            host,
        };
        if installed {
            std::fs::create_dir_all(home.folder()).expect("the host's folder");
        }
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where applications keep their settings, as the binary finds it with this home.
    fn config(&self) -> PathBuf {
        if cfg!(target_os = "macos") {
            self.path().join("Library").join("Application Support")
        } else {
            self.path().join("xdg-config")
        }
    }

    /// The folder whose presence says the host is installed.
    fn folder(&self) -> PathBuf {
        match self.host {
            "claude-desktop" => self.config().join("Claude"),
            "claude-code" => self.path().join(".claude"),
            "cursor" => self.path().join(".cursor"),
            "vscode" => self.config().join("Code").join("User"),
            other => panic!("no host {other}"),
        }
    }

    /// The host's configuration file.
    fn file(&self) -> PathBuf {
        match self.host {
            "claude-desktop" => self.folder().join("claude_desktop_config.json"),
            "claude-code" => self.path().join(".claude.json"),
            _ => self.folder().join("mcp.json"),
        }
    }

    fn backup(&self) -> PathBuf {
        let mut name = self.file().file_name().expect("a name").to_owned();
        name.push(".bak");
        self.file().with_file_name(name)
    }

    /// The file's top-level key of servers.
    fn key(&self) -> &'static str {
        if self.host == "vscode" {
            "servers"
        } else {
            "mcpServers"
        }
    }

    /// Runs `calc` with `args`, this home and nothing of the machine's configuration.
    fn run(&self, args: &[&str]) -> Run {
        run_command(
            Command::new(calc())
                .args(args)
                .env("HOME", self.path())
                .env("XDG_CONFIG_HOME", self.config())
                .env_remove("APPDATA"),
        )
    }

    /// The entry this host must get for `args` and `env`.
    fn expected(&self, args: &[&str], env: Value) -> Value {
        let mut entry = json!({ "command": calc_path(), "args": args });
        if matches!(self.host, "claude-code" | "vscode") {
            entry["type"] = json!("stdio");
        }
        if env.as_object().is_some_and(|e| !e.is_empty()) {
            entry["env"] = env;
        }
        entry
    }

    fn read(&self) -> String {
        std::fs::read_to_string(self.file()).expect("the configuration file")
    }

    fn write(&self, text: &str) {
        std::fs::write(self.file(), text).expect("written");
    }

    /// The names in the folder of the file: no temporary file may be left there.
    fn assert_no_leftovers(&self) {
        let folder = self.file().parent().expect("a folder").to_owned();
        for entry in std::fs::read_dir(&folder).expect("the folder") {
            let name = entry.expect("an entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                !name.ends_with(".tmp"),
                "{name} left in {}",
                folder.display()
            );
        }
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

fn a_new_file(host: &'static str) {
    let home = Home::new(host, true);
    assert!(!home.file().exists());
    let run = home
        .run(&[
            "install",
            host,
            "--env",
            "API_TOKEN=t0p-s3cret",
            "--env",
            "MODE=fast",
            "--",
            "--task-store",
            "memory",
        ])
        .succeeded();
    let file = home.file().display().to_string();
    assert!(run.out.contains(&file), "{}", run.out);
    assert!(run.out.contains("created the file"), "{}", run.out);
    // The secret is in the file, never on the screen.
    assert!(!run.out.contains("t0p-s3cret"), "{}", run.out);
    assert!(run.out.contains(r#""API_TOKEN": "***""#), "{}", run.out);
    assert!(run.out.contains(r#""MODE": "fast""#), "{}", run.out);
    let config = json_of(&home.read());
    let expected = home.expected(
        &["--task-store", "memory"],
        json!({ "API_TOKEN": "t0p-s3cret", "MODE": "fast" }),
    );
    assert_eq!(config, json!({ home.key(): { "calc": expected } }));
    assert!(!home.backup().exists(), "a backup of no file");
    home.assert_no_leftovers();

    // What the host will launch works: the entry's command, arguments and environment.
    let entry = &config[home.key()]["calc"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string"))
        .collect();
    let listed = run_command(
        Command::new(entry["command"].as_str().expect("command"))
            .args(args)
            .arg("list")
            .env("MODE", entry["env"]["MODE"].as_str().expect("MODE")),
    )
    .succeeded();
    assert!(
        listed.out.contains("multiply") && listed.out.contains("divide"),
        "{}",
        listed.out
    );
}

/// A file as hosts and people leave them: other keys (`~/.claude.json` has many), other
/// servers, formatting a rewrite would not keep (numbers, escapes, spacing).
fn crowded(key: &str) -> String {
    format!(
        r#"{{
  "numStartups": 42,
  "projects": {{
    "/home/someone/project": {{ "allowedTools": [], "history": [{{"display": "h\u00e9 ✓"}}] }}
  }},
  "{key}": {{
    "other": {{
      "command": "npx",
      "args": ["-y", "@scope/server"],
      "env": {{"GITHUB_TOKEN": "keep-me"}}
    }},
    "remote": {{"type": "http", "url": "http://127.0.0.1:9/mcp", "weight": 1.50e3}}
  }},
  "zeta": [1, 2.0,   3e2],
  "oauthAccount": {{"emailAddress": "someone@example.com"}}
}}
"#
    )
}

/// What was inserted into `before` to make `after`, checking that nothing else changed.
fn insertion(before: &str, after: &str) -> String {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let added = a.len().checked_sub(b.len()).expect("the file grew");
    let inserted = &a[prefix..prefix + added];
    assert_eq!(
        [&b[..prefix], inserted, &b[prefix..]].concat(),
        a,
        "more than one insertion changed the file:\n{before}\n--- became:\n{after}"
    );
    String::from_utf8(inserted.to_vec()).expect("UTF-8")
}

fn other_servers_and_keys_are_kept(host: &'static str) {
    // Claude Code found through its file alone (no `~/.claude` folder).
    let home = Home::new(host, host != "claude-code");
    let before = crowded(home.key());
    home.write(&before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(home.file(), private).expect("chmod");
    }
    let run = home
        .run(&["install", host, "--name", "my-calc", "--env", "MODE=x"])
        .succeeded();
    run.says(&[
        "added a new entry beside 2 other servers",
        &home.backup().display().to_string(),
    ]);
    let after = home.read();
    // Every byte of the file stays; the entry is added after the last server, indented as
    // they are.
    let added = insertion(&before, &after);
    assert!(
        added.starts_with(",\n    \"my-calc\": {\n      \""),
        "{added:?}"
    );
    let config = json_of(&after);
    assert_eq!(
        config[home.key()]["my-calc"],
        home.expected(&[], json!({ "MODE": "x" }))
    );
    assert_eq!(config, {
        let mut old = json_of(&before);
        old[home.key()]["my-calc"] = config[home.key()]["my-calc"].clone();
        old
    });
    assert_eq!(
        std::fs::read_to_string(home.backup()).expect("a backup"),
        before
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.file())
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the file's permissions changed");
    }
    home.assert_no_leftovers();
}

fn a_broken_file_is_refused_and_left_untouched(host: &'static str) {
    let home = Home::new(host, true);
    let key = home.key();
    let file = home.file().display().to_string();
    for (text, says) in [
        (
            format!("{{\n  \"{key}\": {{\n    \"a\": {{\"command\": \"a\"}},\n  }}\n}}\n"),
            vec!["not valid JSON", "line 4 column 3"],
        ),
        (
            format!("{{\"{key}\": [\"a\"]}}"),
            vec!["is not a JSON object but an array"],
        ),
        ("[1, 2]".to_owned(), vec!["not a JSON object but an array"]),
        ("{\"a\": 1".to_owned(), vec!["not valid JSON", "line 1"]),
    ] {
        home.write(&text);
        let mut words = says.clone();
        words.extend([file.as_str(), "left untouched"]);
        home.run(&["install", host]).refused(&words);
        assert_eq!(home.read(), text, "the file changed");
        assert!(!home.backup().exists(), "a backup was written");
        home.assert_no_leftovers();
    }
}

fn a_dry_run_changes_nothing(host: &'static str) {
    let home = Home::new(host, true);
    let file = home.file().display().to_string();
    let run = home
        .run(&[
            "install",
            host,
            "--dry-run",
            "--env",
            "SECRET_KEY=hush-hush",
            "--",
            "--task-store",
            "memory",
        ])
        .succeeded();
    for says in [
        "dry run",
        "would create the file",
        &file,
        "\"SECRET_KEY\": \"***\"",
    ] {
        assert!(run.out.contains(says), "no `{says}` in:\n{}", run.out);
    }
    assert!(!run.out.contains("hush-hush"), "{}", run.out);
    assert!(!home.file().exists(), "a dry run wrote the file");
    let left: Vec<_> = std::fs::read_dir(home.folder())
        .expect("the folder")
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let before = crowded(home.key());
    home.write(&before);
    let run = home.run(&["install", host, "--dry-run"]).succeeded();
    for says in [
        "dry run",
        "would add a new entry beside 2 other servers",
        &file,
    ] {
        assert!(run.out.contains(says), "no `{says}` in:\n{}", run.out);
    }
    assert!(
        run.out.contains(&calc_path()),
        "the entry is shown: {}",
        run.out
    );
    assert_eq!(home.read(), before, "a dry run changed the file");
    assert!(!home.backup().exists(), "a dry run wrote a backup");
    home.assert_no_leftovers();
}

fn a_host_not_installed_gets_nothing(host: &'static str) {
    let home = Home::new(host, false);
    let file = home.file().display().to_string();
    for args in [&["install", host][..], &["install", host, "--dry-run"]] {
        home.run(args)
            .refused(&["does not seem to be installed", "nothing written", &file]);
    }
    let left: Vec<_> = std::fs::read_dir(home.path()).expect("home").collect();
    assert!(
        left.is_empty(),
        "written in a home without the host: {left:?}"
    );
}

fn a_second_install_replaces_the_entry_and_keeps_a_backup(host: &'static str) {
    let home = Home::new(host, true);
    home.run(&["install", host, "--", "--task-store", "memory"])
        .succeeded();
    let first = home.read();
    let run = home
        .run(&["install", host, "--env", "MODE=second"])
        .succeeded();
    run.says(&[
        "replaced the existing entry `calc`",
        &home.backup().display().to_string(),
    ]);
    let after = home.read();
    assert_eq!(after.matches("\"calc\"").count(), 1, "{after}");
    assert_eq!(
        json_of(&after),
        json!({ home.key(): { "calc": home.expected(&[], json!({ "MODE": "second" })) } })
    );
    assert_eq!(
        std::fs::read_to_string(home.backup()).expect("a backup"),
        first
    );
    home.assert_no_leftovers();
}

/// One module a host, with one `#[test]` a check, each calling the check of that name.
macro_rules! hosts {
    ($($module:ident: $host:literal),* $(,)?) => {$(
        mod $module {
            hosts!(@checks $host:
                a_new_file,
                other_servers_and_keys_are_kept,
                a_broken_file_is_refused_and_left_untouched,
                a_dry_run_changes_nothing,
                a_host_not_installed_gets_nothing,
                a_second_install_replaces_the_entry_and_keeps_a_backup,
            );
        }
    )*};
    (@checks $host:literal: $($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            super::$check($host);
        }
    )*};
}

hosts!(
    claude_desktop: "claude-desktop",
    claude_code: "claude-code",
    cursor: "cursor",
    vscode: "vscode",
);

#[test]
fn an_unknown_host_or_option_is_refused() {
    let home = Home::new("cursor", true);
    home.run(&["install", "notepad"]).refused(&[
        "unknown host `notepad`",
        "claude-desktop, claude-code, cursor, vscode",
    ]);
    home.run(&["install", "cursor", "--http"])
        .refused(&["unknown option `--http`", "after `--`"]);
    assert!(!home.file().exists());
}

/// Installs into one file at once take turns: each succeeds, and every entry is in the file.
#[test]
fn installs_at_once_keep_every_entry() {
    let home = Home::new("cursor", true);
    let mut names = Vec::new();
    for round in 0..3 {
        let children: Vec<_> = (0..12)
            .map(|i| {
                let name = format!("s{round}-{i}");
                names.push(name.clone());
                Command::new(calc())
                    .args(["install", "cursor", "--name", &name])
                    .env("HOME", home.path())
                    .env("XDG_CONFIG_HOME", home.config())
                    .env_remove("APPDATA")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("the binary starts")
            })
            .collect();
        for mut child in children {
            let (status, out, err) = wait_bounded(&mut child, LIMIT).expect("it ends");
            Run { status, out, err }.succeeded();
        }
    }
    let file = json_of(&home.read());
    let servers = file[home.key()].as_object().expect("the servers");
    let missing: Vec<&String> = names.iter().filter(|n| !servers.contains_key(*n)).collect();
    assert!(missing.is_empty(), "lost {missing:?} of {}", names.len());
    assert_eq!(servers.len(), names.len());
    home.assert_no_leftovers();
}

// ---------------------------------------------------------------------------------------------
// inspect
// ---------------------------------------------------------------------------------------------

const INSPECTOR: &str = "@modelcontextprotocol/inspector";

const SETUP_HINT: &str = "install the interop clients with `bash interop/setup.sh` \
                          (.ci/run does it)";

/// The Inspector's version `interop/package.json` pins, checked against the installed copy
/// and against the one `inspect` runs (which `help` names), so that npx takes that copy.
fn pinned_inspector() -> String {
    let dir = interop_dir();
    let text = std::fs::read_to_string(dir.join("package.json")).expect("package.json");
    let pinned = json_of(&text)["dependencies"][INSPECTOR]
        .as_str()
        .unwrap_or_else(|| panic!("{INSPECTOR} is pinned in interop/package.json"))
        .to_owned();
    let manifest = dir
        .join("node_modules")
        .join(INSPECTOR)
        .join("package.json");
    let installed = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}: {SETUP_HINT}", manifest.display()));
    assert_eq!(
        json_of(&installed)["version"],
        pinned.as_str(),
        "{SETUP_HINT}"
    );
    let help = run_command(Command::new(calc()).arg("help")).succeeded();
    assert!(
        help.out.contains(&format!("{INSPECTOR}@{pinned}")),
        "`inspect` runs another Inspector than interop/package.json pins:\n{}",
        help.out
    );
    pinned
}

/// `calc inspect ARGS…` run in `interop/`, npm offline: npx must take the installed copy.
fn inspect(args: &[&str]) -> Run {
    run_command(
        Command::new(calc())
            .arg("inspect")
            .args(args)
            .current_dir(interop_dir())
            .env("npm_config_offline", "true")
            .env("npm_config_update_notifier", "false")
            .env("MCP_AUTO_OPEN_ENABLED", "false")
            .env_remove("MCP_CATALOG_PATH")
            .env_remove("RUST_LOG"),
    )
}

#[test]
fn inspect_lists_the_tools_through_the_mcp_inspector() {
    let pinned = pinned_inspector();
    let listed = inspect(&["--cli", "--method", "tools/list"]).succeeded();
    assert!(
        listed.err.contains(&format!("{INSPECTOR}@{pinned}")),
        "{}",
        listed.err
    );
    let result = json_of(&listed.out);
    let mut tools: Vec<&str> = result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {result}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    tools.sort_unstable();
    assert_eq!(tools, ["divide", "multiply"]);
}

#[test]
fn inspect_passes_the_servers_arguments_and_returns_the_inspectors_status() {
    pinned_inspector();
    // A tool's error result: the Inspector's CLI exits 5, and so does `inspect`.
    let divided = inspect(&[
        "--cli",
        "--method",
        "tools/call",
        "--tool-name",
        "divide",
        "--tool-arg",
        "a=1",
        "--tool-arg",
        "b=0",
        "--",
        "--task-store",
        "memory",
    ]);
    assert_eq!(
        divided.status.code(),
        Some(5),
        "{}\n{}",
        divided.out,
        divided.err
    );
    let result = json_of(&divided.out);
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.to_string().contains("DIVISION_BY_ZERO"), "{result}");
    // The server gets the arguments after `--`: one it does not know stops it.
    let refused = inspect(&["--cli", "--method", "tools/list", "--", "--no-such-flag"]);
    assert!(!refused.status.success(), "{}", refused.out);
    assert!(
        refused.err.contains("unknown option `--no-such-flag`"),
        "{}",
        refused.err
    );
}

#[test]
fn inspect_without_npx_names_nodejs() {
    let empty = TempDir::new("inspect-no-npx");
    run_command(
        Command::new(calc())
            .args(["inspect", "--cli", "--method", "tools/list"])
            .env("PATH", empty.path()),
    )
    .refused(&["`npx` was not found", "Node.js"]);
}
