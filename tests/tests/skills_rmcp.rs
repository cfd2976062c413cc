//! The skills extension read by a client nobody here wrote: rmcp 3.11's SEP-2640 client
//! (`list_all_skills`, `get_skill`, `read_resource_directory`, and `SkillResource::verify`, its
//! check of a file's bytes against the manifest), against the `files` example serving
//! `examples/skills` over stdio, after `initialize` (2025-11-25) and with `server/discover`
//! pinned to 2026-07-28. Every skill must pass rmcp's own validation of an entry, and every
//! file read back must have the digest and size the manifest promised.

use std::time::Duration;

use mcp_tool_tests::{TempDir, example_bin};
use rmcp::model::{
    GetSkillRequestParams, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceRequestParams, ResourceContents, SkillResources, validate_skills,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

/// The longest one whole client session may take.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

async fn exercise(stateless: bool) {
    let root = TempDir::new("skills-rmcp");
    let root_arg = root.path().to_str().expect("a UTF-8 folder").to_owned();
    let command = tokio::process::Command::new(example_bin("files")).configure(|cmd| {
        cmd.args(["--root", &root_arg, "--password", "pw"])
            .env_remove("RUST_LOG");
    });
    let transport = TokioChildProcess::new(command).expect("the server starts");
    let client = if stateless {
        let mode = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        ().serve_with_lifecycle(transport, mode).await
    } else {
        ().serve(transport).await
    }
    .expect("the handshake");
    let info = client.peer_info().expect("the server's info");
    assert!(
        info.capabilities.supports_skills(),
        "{:?}",
        info.capabilities
    );
    assert!(info.capabilities.supports_directory_read());

    let skills = client.list_all_skills().await.expect("skills/list");
    validate_skills(&skills).expect("entries rmcp accepts");
    let names: Vec<&str> = skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["review-changes", "tidy-folder"]);
    for skill in &skills {
        let got = client
            .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
            .await
            .expect("skills/get");
        assert_eq!(&got.skill, skill);
        if stateless {
            assert!(got.ttl_ms.is_some() && got.cache_scope.is_some(), "{got:?}");
        }
        let SkillResources::Files(files) = &skill.resources else {
            panic!("a manifest of files: {skill:?}");
        };
        for file in files {
            let read = client
                .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                .await
                .expect("resources/read");
            // The example's skills are Markdown, served as text.
            let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                panic!("{} as text: {read:?}", file.uri);
            };
            let bytes = text.as_bytes();
            file.verify(bytes).expect("the bytes the manifest promised");
        }
    }
    let dir = client
        .read_resource_directory(ReadResourceDirectoryRequestParams::new(
            "skill://tidy-folder",
        ))
        .await
        .expect("resources/directory/read");
    let children: Vec<(&str, bool)> = dir
        .resources
        .iter()
        .map(|r| (r.name.as_str(), r.is_directory()))
        .collect();
    assert_eq!(
        children,
        [
            ("SKILL.md", false),
            ("references", true),
            ("templates", true)
        ]
    );
    client.cancel().await.expect("the client stops");
}

#[tokio::test]
async fn rmcp_reads_and_verifies_the_skills_after_initialize() {
    tokio::time::timeout(SESSION_LIMIT, exercise(false))
        .await
        .expect("within the session limit");
}

#[tokio::test]
async fn rmcp_reads_and_verifies_the_skills_in_2026() {
    tokio::time::timeout(SESSION_LIMIT, exercise(true))
        .await
        .expect("within the session limit");
}
