//! The skills extension (`io.modelcontextprotocol/skills`) as the `files` example serves it
//! from `examples/skills`, over real stdio in both versions: declared in the capabilities
//! (`initialize`, `server/discover`), `skills/list` and `skills/get` giving each skill's
//! frontmatter as written and a manifest whose digests and sizes are those of the files on
//! disk, every file read back by its URI, directories listed, and every bad request or bad
//! skill folder refused with an error that names it.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use common::stateless::{Version, VersionClient, assert_cache_hints};
use common::{CALC, Proc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The `files` example server.
const FILES: &str = env!("CARGO_BIN_EXE_files");

/// The skills folder the example ships.
const SKILLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");

const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// A temporary folder, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn new(name: &str) -> Temp {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcp-skills-{name}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create a temporary folder");
        Temp(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary folder")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `files` serving the skills of `skills` over stdio in `version`, and the capabilities it
/// declared (`initialize` or `server/discover`).
fn start(version: Version, root: &Temp, skills: &str) -> (VersionClient, Value) {
    let args = [
        "--root",
        root.path(),
        "--password",
        "pw",
        "--skills",
        skills,
    ];
    match version {
        Version::V2025_11_25 => {
            let mut p = Proc::spawn_args(FILES, &args);
            let init = p.result(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": { "name": "skills-test", "version": "1" }
                }),
            );
            p.notify("notifications/initialized", json!({}));
            let client = VersionClient {
                p,
                version,
                capabilities: json!({}),
            };
            (client, init["capabilities"].clone())
        }
        Version::V2026_07_28 => {
            let mut client = VersionClient::start(FILES, &args, version, json!({}));
            let discover = client.result("server/discover", json!({}));
            (client, discover["capabilities"].clone())
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Every file below `dir` (no hidden ones), relative, `/`-separated, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let path = rel.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                todo.push(path);
            } else {
                out.push(path.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

fn both_versions(test: impl Fn(Version)) {
    for version in [Version::V2025_11_25, Version::V2026_07_28] {
        test(version);
    }
}

#[test]
fn the_extension_is_declared_with_resources_in_both_versions() {
    both_versions(|version| {
        let root = Temp::new("declared");
        let (_client, capabilities) = start(version, &root, SKILLS);
        assert_eq!(
            capabilities["extensions"][EXTENSION],
            json!({ "directoryRead": true }),
            "{version:?}: {capabilities}"
        );
        assert!(
            capabilities["resources"].is_object(),
            "{version:?}: {capabilities}"
        );
    });
}

#[test]
fn skills_list_gives_frontmatter_as_written_and_a_manifest_of_the_files_on_disk() {
    both_versions(|version| {
        let root = Temp::new("list");
        let (mut client, _) = start(version, &root, SKILLS);
        let list = client.result("skills/list", json!({}));
        if version == Version::V2026_07_28 {
            assert_cache_hints(&list);
        }
        assert!(list.get("nextCursor").is_none(), "{list}");
        let skills = list["skills"].as_array().expect("skills");
        let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            [
                "skill://review-changes/SKILL.md",
                "skill://tidy-folder/SKILL.md"
            ]
        );
        let tidy = &skills[1];
        assert_eq!(tidy["frontmatter"]["name"], "tidy-folder");
        assert_eq!(tidy["frontmatter"]["license"], "MIT");
        assert_eq!(
            tidy["frontmatter"]["metadata"],
            json!({ "author": "mcp-tool examples", "version": "1.0" })
        );
        for skill in skills {
            let name = skill["frontmatter"]["name"].as_str().unwrap();
            let dir = Path::new(SKILLS).join(name);
            let manifest = skill["resources"].as_array().expect("a manifest");
            let listed: Vec<&str> = manifest
                .iter()
                .map(|r| r["uri"].as_str().unwrap())
                .collect();
            let expected: Vec<String> = files_below(&dir)
                .iter()
                .map(|rel| format!("skill://{name}/{rel}"))
                .collect();
            assert_eq!(listed, expected, "every file once, in order");
            for entry in manifest {
                let rel =
                    entry["uri"].as_str().unwrap()[format!("skill://{name}/").len()..].to_owned();
                let bytes = fs::read(dir.join(&rel)).unwrap();
                assert_eq!(entry["digest"], sha256(&bytes), "{entry}");
                assert_eq!(entry["size"], bytes.len(), "{entry}");
            }
        }
    });
}

#[test]
fn every_file_reads_back_as_its_manifest_says_and_skill_md_is_listed() {
    both_versions(|version| {
        let root = Temp::new("read");
        let (mut client, _) = start(version, &root, SKILLS);
        let got = client.result(
            "skills/get",
            json!({ "uri": "skill://tidy-folder/SKILL.md" }),
        );
        if version == Version::V2026_07_28 {
            assert_cache_hints(&got);
        }
        assert!(got.get("nextCursor").is_none(), "{got}");
        let skill = &got["skill"];
        let list = client.result("skills/list", json!({}));
        assert_eq!(
            skill, &list["skills"][1],
            "skills/get gives the listed entry"
        );
        for entry in skill["resources"].as_array().unwrap() {
            let uri = entry["uri"].as_str().unwrap();
            let read = client.result("resources/read", json!({ "uri": uri }));
            let contents = &read["contents"][0];
            assert_eq!(contents["uri"], uri);
            assert_eq!(contents["mimeType"], "text/markdown", "{read}");
            let text = contents["text"].as_str().expect("Markdown is text");
            assert_eq!(sha256(text.as_bytes()), entry["digest"], "{uri}");
        }
        let resources = client.result("resources/list", json!({}));
        let listed = resources["resources"].as_array().unwrap();
        let tidy = listed
            .iter()
            .find(|r| r["uri"] == "skill://tidy-folder/SKILL.md")
            .expect("each SKILL.md is a listed resource");
        assert_eq!(tidy["name"], "tidy-folder");
        assert_eq!(tidy["description"], skill["frontmatter"]["description"]);
        assert_eq!(tidy["mimeType"], "text/markdown");
        assert!(
            listed
                .iter()
                .all(|r| r["uri"].as_str().unwrap().ends_with("/SKILL.md")),
            "only the SKILL.md files are listed; the others are read by URI: {resources}"
        );
    });
}

#[test]
fn directories_list_their_children() {
    both_versions(|version| {
        let root = Temp::new("dirs");
        let (mut client, _) = start(version, &root, SKILLS);
        let top = client.result(
            "resources/directory/read",
            json!({ "uri": "skill://tidy-folder" }),
        );
        assert_eq!(
            top["resources"],
            json!([
                { "uri": "skill://tidy-folder/SKILL.md", "name": "SKILL.md",
                  "mimeType": "text/markdown",
                  "size": fs::metadata(format!("{SKILLS}/tidy-folder/SKILL.md")).unwrap().len() },
                { "uri": "skill://tidy-folder/references", "name": "references",
                  "mimeType": "inode/directory" },
                { "uri": "skill://tidy-folder/templates", "name": "templates",
                  "mimeType": "inode/directory" },
            ]),
            "{version:?}"
        );
        let refs = client.result(
            "resources/directory/read",
            json!({ "uri": "skill://tidy-folder/references" }),
        );
        assert_eq!(
            refs["resources"][0]["uri"],
            "skill://tidy-folder/references/naming.md"
        );
        let e = client.error(
            "resources/directory/read",
            json!({ "uri": "skill://tidy-folder/SKILL.md" }),
        );
        assert_eq!(e["code"], -32602, "a file is no directory: {e}");
        assert!(
            e["message"].as_str().unwrap().contains("not a directory"),
            "{e}"
        );
    });
}

#[test]
fn bad_requests_are_refused_naming_what_is_wrong() {
    both_versions(|version| {
        let root = Temp::new("bad");
        let (mut client, _) = start(version, &root, SKILLS);
        for uri in [
            "skill://nope/SKILL.md",
            "skill://tidy-folder/../review-changes/SKILL.md",
            "skill://tidy-folder/references/naming.md",
        ] {
            let e = client.error("skills/get", json!({ "uri": uri }));
            assert_eq!(e["code"], -32602, "{e}");
            assert_eq!(e["data"]["uri"], uri, "{e}");
            assert!(
                e["message"].as_str().unwrap().contains("Unknown skill"),
                "{e}"
            );
        }
        let e = client.error("skills/get", json!({}));
        assert_eq!(e["code"], -32602);
        assert!(
            e["message"].as_str().unwrap().contains("needs a `uri`"),
            "{e}"
        );
        let e = client.error("skills/list", json!({ "cursor": "7" }));
        assert_eq!(e["code"], -32602, "{e}");
        // A path that climbs out of a skill names no file: nothing is read.
        let e = client.error(
            "resources/read",
            json!({ "uri": "skill://tidy-folder/../../../etc/passwd" }),
        );
        let code = if version == Version::V2025_11_25 {
            -32002
        } else {
            -32602
        };
        assert_eq!(e["code"], code, "{e}");
    });
}

#[test]
fn a_server_without_skills_has_no_skills_methods() {
    let mut p = Proc::initialized(CALC);
    let e = p.rpc_error("skills/list", json!({}));
    assert_eq!(e["code"], -32601, "{e}");
    assert!(e["message"].as_str().unwrap().contains("skills"), "{e}");
}

#[test]
fn a_file_changed_after_start_is_refused_not_served_against_its_digest() {
    let root = Temp::new("changed-root");
    let skills = Temp::new("changed");
    skills.write(
        "notes/SKILL.md",
        "---\nname: notes\ndescription: Take notes.\n---\nSee [the guide](guide.md).\n",
    );
    skills.write("notes/guide.md", "# Guide\n");
    let (mut client, _) = start(Version::V2026_07_28, &root, skills.path());
    let read = client.result("resources/read", json!({ "uri": "skill://notes/guide.md" }));
    assert_eq!(read["contents"][0]["text"], "# Guide\n");
    skills.write("notes/guide.md", "# Guide, edited\n");
    let e = client.error("resources/read", json!({ "uri": "skill://notes/guide.md" }));
    assert!(
        e["message"].as_str().unwrap().contains("changed on disk"),
        "{e}"
    );
}

#[test]
fn a_bad_skills_folder_stops_the_start_naming_every_problem() {
    let root = Temp::new("bad-folder-root");
    let skills = Temp::new("bad-folder");
    skills.write(
        "Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: x\n---\n",
    );
    skills.write(
        "other/SKILL.md",
        "---\nname: another\ndescription: x\n---\n",
    );
    skills.write("terse/SKILL.md", "---\nname: terse\n---\n");
    skills.write("empty/notes.md", "no SKILL.md here\n");
    skills.write(
        "fine/SKILL.md",
        "---\nname: fine\ndescription: Fine.\n---\n",
    );
    std::os::unix::fs::symlink("/etc", skills.0.join("fine/etc")).unwrap();
    let out = Command::new(FILES)
        .args([
            "--root",
            root.path(),
            "--password",
            "pw",
            "--skills",
            skills.path(),
            "list",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for problem in [
        "skill `Bad_Name`",
        "is not a valid skill name",
        "names the skill `another`, but its directory is `other`",
        "skill `terse`",
        "no `description`",
        "skill `empty`",
        "has no `SKILL.md`",
        "`etc` is a symbolic link",
    ] {
        assert!(stderr.contains(problem), "`{problem}` in: {stderr}");
    }
    let out = Command::new(FILES)
        .args([
            "--root",
            root.path(),
            "--password",
            "pw",
            "--skills",
            "/nonexistent-skills",
            "list",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skills folder `/nonexistent-skills`"),
        "{stderr}"
    );
}
