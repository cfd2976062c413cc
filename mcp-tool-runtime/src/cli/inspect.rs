//! `inspect`: the official MCP Inspector on this server. It runs
//! `npx -y @modelcontextprotocol/inspector@VERSION [OPTIONS…] -- <this binary> [ARGS…]`, npx
//! installing the pinned Inspector from the npm registry on first use (or taking the copy of
//! the project it runs in). The Inspector's options come first (its mode flag, `--cli` or
//! `--tui`, moved to the front as it requires), the server's after `--`: one form every mode
//! of the Inspector reads. Stdio is inherited; the exit status is the Inspector's.

use std::process::{Command, ExitStatus};

use super::cli_error;
use super::install::server_binary;

/// The npm package of the MCP Inspector.
pub(super) const INSPECTOR: &str = "@modelcontextprotocol/inspector";

/// The version `inspect` runs.
pub(super) const INSPECTOR_VERSION: &str = "2.12.0";

/// The Inspector's mode flags: the first of its arguments, if any.
const MODES: [&str; 3] = ["--cli", "--tui", "--web"];

/// What `inspect` was asked for: the Inspector's options, and the server's arguments (after
/// `--`).
pub(super) struct InspectOptions {
    inspector: Vec<String>,
    server: Vec<String>,
}

/// Reads `inspect`'s arguments (after the word `inspect`).
pub(super) fn parse(args: &[String]) -> InspectOptions {
    match args.iter().position(|a| a == "--") {
        Some(at) => InspectOptions {
            inspector: args[..at].to_vec(),
            server: args[at + 1..].to_vec(),
        },
        None => InspectOptions {
            inspector: args.to_vec(),
            server: Vec::new(),
        },
    }
}

/// npx's arguments to run the Inspector on the server at `binary`.
fn npx_args(binary: &str, options: &InspectOptions) -> Vec<String> {
    let (modes, rest): (Vec<&String>, Vec<&String>) = options
        .inspector
        .iter()
        .partition(|a| MODES.contains(&a.as_str()));
    let mut args = vec!["-y".to_owned(), format!("{INSPECTOR}@{INSPECTOR_VERSION}")];
    args.extend(modes.into_iter().chain(rest).cloned());
    args.extend(["--".to_owned(), binary.to_owned()]);
    args.extend(options.server.iter().cloned());
    args
}

/// Runs `inspect`; returns the exit status (the Inspector's, or 2 when it cannot start).
pub(super) fn inspect(bin: &str, options: &InspectOptions) -> i32 {
    let binary = match server_binary() {
        Ok(binary) => binary,
        Err(message) => return cli_error(bin, &message),
    };
    let npx = if cfg!(windows) { "npx.cmd" } else { "npx" };
    let args = npx_args(&binary, options);
    // On stderr: the Inspector's CLI mode prints its results on stdout, for scripts.
    eprintln!("{bin}: running {npx} {}", args.join(" "));
    match Command::new(npx).args(&args).status() {
        Ok(status) => exit_code(status),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => cli_error(
            bin,
            &format!(
                "`{npx}` was not found: the MCP Inspector runs on Node.js; install Node.js \
                 (its npm brings npx), then run `{bin} inspect` again"
            ),
        ),
        Err(e) => cli_error(bin, &format!("cannot run `{npx}`: {e}")),
    }
}

/// The Inspector's exit status; killed by a signal, 128 and the signal's number, as shells say.
fn exit_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_inspectors_options_come_first_its_mode_at_the_front_and_the_server_after_dashes() {
        let pinned = format!("{INSPECTOR}@{INSPECTOR_VERSION}");
        let run = |line: &str| npx_args("/bin/calc", &parse(&words(line))).join(" ");
        assert_eq!(
            run("--method tools/list --cli"),
            format!("-y {pinned} --cli --method tools/list -- /bin/calc")
        );
        assert_eq!(
            run("--cli --method tools/list -- --task-store memory --"),
            format!("-y {pinned} --cli --method tools/list -- /bin/calc --task-store memory --")
        );
        assert_eq!(run(""), format!("-y {pinned} -- /bin/calc"));
        assert_eq!(run("-- --http"), format!("-y {pinned} -- /bin/calc --http"));
    }
}
