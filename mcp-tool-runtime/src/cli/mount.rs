//! The gateway's command line (feature `client`): the remote servers of `--mount` files, and
//! the connection store `MCP_TOOL_CONNECTIONS` names.

use super::env;
use crate::gateway::read_mounts;
use crate::server::Server;
use crate::server::tasks::parse_duration;

/// The server with the connection store, the mounts' wait and the opening of sign-in pages
/// the environment names, if it names them.
pub(super) fn connection_store(mut server: Server) -> Result<Server, String> {
    if let Some(path) = std::env::var_os(env::CONNECTIONS) {
        server = server.connection_store(path);
    }
    if let Ok(text) = std::env::var(env::MOUNT_WAIT) {
        let wait = parse_duration(&text).ok_or_else(|| {
            format!(
                "{}: `{text}` is not a duration (such as `5s` or `500ms`)",
                env::MOUNT_WAIT
            )
        })?;
        server = server.mount_wait(wait);
    }
    if let Ok(text) = std::env::var(env::OPEN_BROWSER) {
        let open = match text.as_str() {
            "1" | "true" => true,
            "0" | "false" | "" => false,
            _ => {
                return Err(format!(
                    "{}: `{text}` is not `1`, `true`, `0` or `false`",
                    env::OPEN_BROWSER
                ));
            }
        };
        server = server.open_sign_in_browser(open);
    }
    Ok(server)
}

/// The server with the remote servers each file lists mounted.
pub(super) fn mount_files(mut server: Server, files: &[String]) -> Result<Server, String> {
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("--mount `{file}`: {e}"))?;
        let mounts = read_mounts(&text).map_err(|e| format!("--mount `{file}`: {e}"))?;
        for remote in mounts {
            server = server.mount(remote);
        }
    }
    Ok(server)
}
