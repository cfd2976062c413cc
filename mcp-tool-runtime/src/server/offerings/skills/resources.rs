//! The skills (feature `skills`) as offerings: each `SKILL.md` a listed resource, the
//! other files read by their URIs.

use std::sync::Arc;

use serde_json::json;

use crate::protocol::{CacheHints, ResourceContents};
use crate::server::offerings::Offerings;
use crate::server::offerings::resource::Resource;
use crate::server::offerings::skills::SKILLS_EXTENSION;
use crate::server::offerings::skills::load::{FILE_TTL, Skills};

impl Offerings {
    /// Whether the server serves skills (`Server::skills`).
    pub(crate) fn has_skills(&self) -> bool {
        self.skills.is_some()
    }

    /// Loads the skills of `folder` and offers them: each `SKILL.md` as a listed resource
    /// (named and described by its frontmatter), the other files by their URIs.
    pub(crate) fn add_skills(&mut self, folder: &std::path::Path) -> Result<(), Vec<String>> {
        let skills = Arc::new(Skills::load(folder)?);
        for skill in &skills.skills {
            let field = |k: &str| skill.frontmatter.get(k).and_then(|v| v.as_str());
            let size = skill
                .resources
                .iter()
                .find(|r| r.uri == skill.uri)
                .map(|r| r.size);
            let from = skills.clone();
            let mut resource = Resource::new(
                skill.uri.clone(),
                field("name").unwrap_or_default(),
                move |request| from.clone().read(request.uri().to_owned()),
            )
            .mime_type("text/markdown")
            .cache(CacheHints::public(FILE_TTL));
            resource.size = size;
            if let Some(description) = field("description") {
                resource = resource.description(description);
            }
            self.resources.push(resource);
        }
        self.skills = Some(skills);
        Ok(())
    }

    /// The capability settings of the extension: directories can be read.
    pub(crate) fn skills_settings(&self) -> Option<(&'static str, serde_json::Value)> {
        self.skills
            .as_ref()
            .map(|_| (SKILLS_EXTENSION, json!({ "directoryRead": true })))
    }

    /// The reader of a skill file that is not a listed resource, and how long its
    /// contents may be kept.
    pub(crate) fn skill_file(
        &self,
        uri: &str,
    ) -> Option<(crate::server::offerings::resource::Reader, CacheHints)> {
        let skills = self.skills.as_ref().filter(|s| s.has_file(uri))?.clone();
        let read: crate::server::offerings::resource::Reader = Arc::new(move |request| {
            let read: crate::server::offerings::resource::HandlerFuture<Vec<ResourceContents>> =
                Box::pin(skills.clone().read(request.uri().to_owned()));
            Ok(read)
        });
        Some((read, CacheHints::public(FILE_TTL)))
    }
}
