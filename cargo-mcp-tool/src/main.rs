//! `cargo mcp-tool new PATH`: a new MCP server project written with mcp-tool — one `#[tool]`,
//! a test through `mcp_tool::testing`, and a README with the commands to run, test and
//! install it into an MCP host.
//!
//! A Cargo subcommand rather than a `cargo generate` template: installing it builds no
//! dependencies (the template's files are compiled in), it works offline, and the version of
//! mcp-tool it writes is always the one it was released with.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The version of mcp-tool a new project depends on: this crate's own, released together.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The template's files: where each goes in the new project, and its text. (The manifest is
/// `Cargo.toml.in`: a folder holding a `Cargo.toml` would be left out of this crate's package.)
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../template/Cargo.toml.in")),
    ("src/main.rs", include_str!("../template/main.rs")),
    ("src/tests.rs", include_str!("../template/tests.rs")),
    ("README.md", include_str!("../template/README.md")),
    (".gitignore", include_str!("../template/gitignore")),
];

fn usage() -> String {
    format!(
        "cargo-mcp-tool {VERSION}: new MCP server projects written with mcp-tool

usage:
  cargo mcp-tool new PATH [--name NAME] [--mcp-tool-path DIR]
                                          a new server project in the folder PATH (absent or
                                          empty); NAME (default: the folder's name) names
                                          the crate, its binary and the MCP server; DIR (a
                                          checkout of mcp-tool, or its `mcp-tool` folder)
                                          instead of the crate from crates.io
  cargo mcp-tool help                     show this message"
    )
}

/// What went wrong; printed after `error:`.
#[derive(Debug)]
enum Error {
    Usage(String),
    BadName(String, &'static str),
    NotACheckout(PathBuf),
    NotEmpty(PathBuf),
    Io(PathBuf, io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(message) => write!(f, "{message} (see `cargo mcp-tool help`)"),
            Error::BadName(name, why) => write!(
                f,
                "`{name}` cannot name a project: {why} (give another with `--name`)"
            ),
            Error::NotACheckout(path) => write!(
                f,
                "`{}` holds no `mcp-tool` crate (give a checkout of mcp-tool, or its `mcp-tool` folder)",
                path.display()
            ),
            Error::NotEmpty(path) => write!(
                f,
                "`{}` already exists and is not an empty folder: nothing was written",
                path.display()
            ),
            Error::Io(path, e) => write!(f, "cannot write `{}`: {e}", path.display()),
        }
    }
}

/// A command line's request.
#[derive(Debug, PartialEq)]
enum Command {
    New {
        path: PathBuf,
        name: Option<String>,
        local: Option<PathBuf>,
    },
    Help,
    Version,
}

/// Reads the arguments after the program's name. Run as `cargo mcp-tool …`, Cargo passes the
/// subcommand's own name first; it is skipped.
fn parse(args: &[String]) -> Result<Command, Error> {
    let args = match args.first().map(String::as_str) {
        Some("mcp-tool") => &args[1..],
        _ => args,
    };
    match args.first().map(String::as_str) {
        None | Some("help" | "-h" | "--help") => Ok(Command::Help),
        Some("-V" | "--version") => Ok(Command::Version),
        Some("new") => {
            let mut path = None;
            let mut name = None;
            let mut local = None;
            let mut rest = args[1..].iter();
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--name" => match rest.next() {
                        Some(value) if !value.starts_with('-') => name = Some(value.clone()),
                        _ => return Err(Error::Usage("`--name` needs a name".into())),
                    },
                    "--mcp-tool-path" => match rest.next() {
                        Some(value) if !value.starts_with('-') => {
                            local = Some(PathBuf::from(value));
                        }
                        _ => {
                            return Err(Error::Usage(
                                "`--mcp-tool-path` needs a checkout of mcp-tool".into(),
                            ));
                        }
                    },
                    flag if flag.starts_with('-') => {
                        return Err(Error::Usage(format!("unknown option `{flag}`")));
                    }
                    _ if path.is_some() => {
                        return Err(Error::Usage("`new` takes one folder".into()));
                    }
                    word => path = Some(PathBuf::from(word)),
                }
            }
            let path = path.ok_or_else(|| Error::Usage("`new` needs a folder".into()))?;
            Ok(Command::New { path, name, local })
        }
        Some(other) => Err(Error::Usage(format!("unknown command `{other}`"))),
    }
}

/// Checks a project's name: a crate name Cargo takes, a binary name every shell and host
/// configuration takes as it is, and an MCP server name.
fn check_name(name: &str) -> Result<(), Error> {
    let bad = |why| Err(Error::BadName(name.to_owned(), why));
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > 64 {
        return bad("it is longer than 64 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return bad("it must start with an ASCII letter");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return bad("only ASCII letters, digits, `-` and `_` are allowed");
    }
    // Names Cargo refuses for a package, or that would shadow the standard crates.
    const RESERVED: &[&str] = &[
        "test",
        "std",
        "core",
        "alloc",
        "proc_macro",
        "self",
        "crate",
    ];
    if RESERVED.contains(&name) {
        return bad("Cargo keeps it for itself");
    }
    Ok(())
}

/// The template's text with the project's name and its dependency on mcp-tool filled in.
fn render(text: &str, name: &str, dependency: &str) -> String {
    text.replace("{{crate}}", name)
        .replace("{{name}}", name)
        .replace("{{mcp-tool}}", dependency)
}

/// The dependency on mcp-tool as the manifest writes it: this release from crates.io, or the
/// `mcp-tool` crate of a local checkout (the checkout's root or the crate's own folder), by
/// its absolute path.
fn dependency(local: Option<&Path>) -> Result<String, Error> {
    let Some(local) = local else {
        return Ok(format!("\"{VERSION}\""));
    };
    let not_one = || Error::NotACheckout(local.to_owned());
    let is_crate = |dir: &Path| {
        fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|m| m.lines().any(|l| l.trim() == "name = \"mcp-tool\""))
    };
    let folder = [local.join("mcp-tool"), local.to_owned()]
        .into_iter()
        .find(|d| is_crate(d))
        .ok_or_else(not_one)?;
    let absolute = fs::canonicalize(&folder).map_err(|e| Error::Io(folder.clone(), e))?;
    // A TOML literal string: any character but `'` and line breaks, as it is.
    match absolute.to_str() {
        Some(text) if !text.contains(['\'', '\n', '\r']) => Ok(format!("{{ path = '{text}' }}")),
        _ => Err(not_one()),
    }
}

/// Writes a new project into `path` (absent or an empty folder), depending on mcp-tool from
/// crates.io or from the checkout `local`; returns its name.
fn new_project(path: &Path, name: Option<&str>, local: Option<&Path>) -> Result<String, Error> {
    let name = match name {
        Some(name) => name.to_owned(),
        None => match path.file_name().and_then(|n| n.to_str()) {
            Some(n) => n.to_owned(),
            None => {
                return Err(Error::Usage(format!(
                    "`{}` ends in no folder name: give the project one with `--name`",
                    path.display()
                )));
            }
        },
    };
    check_name(&name)?;
    let dependency = dependency(local)?;
    match fs::read_dir(path) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(Error::NotEmpty(path.to_owned()));
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(Error::NotEmpty(path.to_owned()));
        }
        Err(e) => return Err(Error::Io(path.to_owned(), e)),
    }
    for (file, text) in FILES {
        let target = path.join(file);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::Io(parent.to_owned(), e))?;
        }
        fs::write(&target, render(text, &name, &dependency))
            .map_err(|e| Error::Io(target.clone(), e))?;
    }
    Ok(name)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = parse(&args).and_then(|command| match command {
        Command::Help => {
            println!("{}", usage());
            Ok(())
        }
        Command::Version => {
            println!("cargo-mcp-tool {VERSION}");
            Ok(())
        }
        Command::New { path, name, local } => {
            let name = new_project(&path, name.as_deref(), local.as_deref())?;
            let shown = path.display();
            println!(
                "Created the MCP server `{name}` in `{shown}` (mcp-tool {VERSION}).

  cd {shown}
  cargo run -q -- call greet '{{\"name\":\"Ada\"}}'   call its tool
  cargo test                                       test it
  cargo build --release && ./target/release/{name} install claude-desktop
                                                   put it in an MCP host"
            );
            Ok(())
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    /// A folder of its own under the system's temporary folder, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(label: &str) -> Scratch {
            let path = std::env::temp_dir().join(format!(
                "cargo-mcp-tool-{label}-{}-{:?}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos()
            ));
            fs::create_dir_all(&path).unwrap();
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_command_line_is_read_as_cargo_passes_it_and_as_typed() {
        let expected = Command::New {
            path: "x/my-server".into(),
            name: None,
            local: None,
        };
        assert_eq!(
            parse(&args(&["mcp-tool", "new", "x/my-server"])).unwrap(),
            expected
        );
        assert_eq!(parse(&args(&["new", "x/my-server"])).unwrap(), expected);
        assert_eq!(
            parse(&args(&["new", "dir", "--name", "weather"])).unwrap(),
            Command::New {
                path: "dir".into(),
                name: Some("weather".into()),
                local: None,
            }
        );
        assert_eq!(parse(&args(&["mcp-tool"])).unwrap(), Command::Help);
        for (bad, says) in [
            (&["new"][..], "needs a folder"),
            (&["new", "a", "b"], "one folder"),
            (&["new", "a", "--name"], "`--name` needs a name"),
            (&["new", "a", "--force"], "unknown option `--force`"),
            (&["init"], "unknown command `init`"),
        ] {
            let message = parse(&args(bad)).unwrap_err().to_string();
            assert!(message.contains(says), "{bad:?}: {message}");
        }
    }

    #[test]
    fn names_a_crate_a_binary_and_a_server_can_share_are_taken_others_refused() {
        for good in ["weather", "my-server", "Tools_2"] {
            check_name(good).unwrap();
        }
        for (bad, says) in [
            ("", "empty"),
            ("2fast", "start with an ASCII letter"),
            ("-x", "start with an ASCII letter"),
            ("my server", "only ASCII letters"),
            ("naïve", "only ASCII letters"),
            ("a/b", "only ASCII letters"),
            ("test", "Cargo keeps it"),
        ] {
            let message = check_name(bad).unwrap_err().to_string();
            assert!(message.contains(says), "{bad:?}: {message}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn a_new_project_has_every_file_filled_in() {
        let scratch = Scratch::new("fill");
        let path = scratch.0.join("weather");
        assert_eq!(new_project(&path, None, None).unwrap(), "weather");
        for (file, _) in FILES {
            let text = fs::read_to_string(path.join(file)).unwrap();
            assert!(!text.contains("{{"), "{file} keeps a placeholder:\n{text}");
        }
        let manifest = fs::read_to_string(path.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"weather\""), "{manifest}");
        assert!(
            manifest.contains(&format!("mcp-tool = \"{VERSION}\"")),
            "{manifest}"
        );
        let main = fs::read_to_string(path.join("src/main.rs")).unwrap();
        assert!(main.contains("Server::new(\"weather\""), "{main}");
        let readme = fs::read_to_string(path.join("README.md")).unwrap();
        assert!(
            readme.contains("./target/release/weather install"),
            "{readme}"
        );
    }

    #[test]
    fn an_empty_folder_is_used_and_a_full_one_or_a_file_left_alone() {
        let scratch = Scratch::new("full");
        let empty = scratch.0.join("empty");
        fs::create_dir(&empty).unwrap();
        new_project(&empty, Some("tools"), None).unwrap();
        assert!(empty.join("src/main.rs").exists());

        // The same folder again: full now, and nothing in it changes.
        fs::write(empty.join("src/main.rs"), "mine").unwrap();
        let error = new_project(&empty, Some("tools"), None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not an empty folder"), "{error}");
        assert_eq!(
            fs::read_to_string(empty.join("src/main.rs")).unwrap(),
            "mine"
        );

        let file = scratch.0.join("a-file");
        fs::write(&file, "x").unwrap();
        let error = new_project(&file, None, None).unwrap_err().to_string();
        assert!(error.contains("not an empty folder"), "{error}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn a_local_checkout_is_depended_on_by_its_absolute_path_and_a_wrong_one_refused() {
        // This crate's own workspace is a checkout of mcp-tool.
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let scratch = Scratch::new("local");
        for given in [checkout.clone(), checkout.join("mcp-tool")] {
            let path = scratch.0.join(format!("p{}", given.components().count()));
            new_project(&path, Some("p"), Some(&given)).unwrap();
            let manifest = fs::read_to_string(path.join("Cargo.toml")).unwrap();
            let crate_dir = fs::canonicalize(checkout.join("mcp-tool")).unwrap();
            let expected = format!("mcp-tool = {{ path = '{}' }}", crate_dir.display());
            assert!(manifest.contains(&expected), "{manifest}");
        }
        let wrong = scratch.0.join("not-a-checkout");
        fs::create_dir(&wrong).unwrap();
        let error = new_project(&scratch.0.join("q"), None, Some(&wrong)).unwrap_err();
        assert!(
            error.to_string().contains("holds no `mcp-tool` crate"),
            "{error}"
        );
        assert!(!scratch.0.join("q").exists());
    }

    #[test]
    fn a_bad_name_writes_nothing() {
        let scratch = Scratch::new("bad");
        let path = scratch.0.join("my server");
        let error = new_project(&path, None, None).unwrap_err().to_string();
        assert!(
            error.contains("`my server` cannot name a project"),
            "{error}"
        );
        assert!(!path.exists());
    }
}
