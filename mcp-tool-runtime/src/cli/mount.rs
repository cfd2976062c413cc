//! The gateway's command line (feature `client`): the remote servers of `--mount` files, and
//! the connection store `MCP_TOOL_CONNECTIONS` names.

use super::env;
use crate::server::Server;
use crate::server::mount::read_mounts;

/// The server with the connection store the environment names, if it names one.
pub(super) fn connection_store(server: Server) -> Server {
    match std::env::var_os(env::CONNECTIONS) {
        Some(path) => server.connection_store(path),
        None => server,
    }
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
